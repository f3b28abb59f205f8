//! A Python callable as a gapbench scorer: the online crate's external policy calls it with
//! the `expr:` features of one (node, task), as the attributes of a `Node` and a `Task`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use gapbench_online::expr::{Feature, FEATURES};
use gapbench_online::{ExprScale, ExternalScore, ExternalScorer, NodeTaskFeatures, ScoreStopped};
use pyo3::exceptions::{PyAttributeError, PyException};
use pyo3::prelude::*;

pyo3::create_exception!(
    gapbench,
    ScoreError,
    PyException,
    "A Python score function raised: the message names the task and the node, `__cause__` is the original exception."
);

/// The score calls between two checks for Ctrl-C (a check costs about as much as a call).
const SIGNAL_CHECK_EVERY: u64 = 256;

/// The Python side of an external scorer: the callable, and the first error it raised
/// (read and cleared after each run).
pub struct PyScorer {
    function: Py<PyAny>,
    label: String,
    error: Mutex<Option<PyErr>>,
    calls: AtomicU64,
}

impl PyScorer {
    /// The error of the last run, if the function raised (or Ctrl-C was pressed).
    pub fn take_error(&self) -> Option<PyErr> {
        self.error.lock().ok()?.take()
    }

    /// Score calls so far.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    fn stop(&self, error: PyErr) -> ScoreStopped {
        if let Ok(mut slot) = self.error.lock() {
            slot.get_or_insert(error);
        }
        ScoreStopped
    }

    fn call(&self, py: Python<'_>, features: &NodeTaskFeatures<'_>) -> PyResult<f64> {
        let node = Py::new(py, Node::of(features))?;
        let task = Py::new(py, Task::of(features))?;
        self.function.call1(py, (node, task))?.extract::<f64>(py)
    }
}

impl ExternalScore for PyScorer {
    fn score(&self, features: &NodeTaskFeatures<'_>) -> Result<f64, ScoreStopped> {
        Python::with_gil(|py| {
            let calls = self.calls.fetch_add(1, Ordering::Relaxed);
            if calls.is_multiple_of(SIGNAL_CHECK_EVERY) {
                if let Err(interrupt) = py.check_signals() {
                    return Err(self.stop(interrupt));
                }
            }
            self.call(py, features).map_err(|error| {
                if error.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
                    return self.stop(error);
                }
                let wrapped = ScoreError::new_err(format!(
                    "{} raised {error} for task `{}` on node `{}`",
                    self.label, features.task_name, features.node_name
                ));
                wrapped.set_cause(py, Some(error));
                self.stop(wrapped)
            })
        })
    }
}

/// `gapbench.Scorer(fn, name=None, raw=False, memoize=True)`: a Python function as a
/// policy term. `raw=False` normalises its values over the feasible nodes like `expr:`
/// (any range, higher is better); `raw=True` clamps them to 0–100 like `expr-raw:`.
/// `memoize=True` reuses a score per distinct node state and task shape, as the built-ins
/// do: the function must then depend on the features alone (memory features are refused).
#[pyclass(frozen, module = "gapbench._native")]
pub struct Scorer {
    pub scorer: Arc<PyScorer>,
    pub term: ExternalScorer,
}

#[pymethods]
impl Scorer {
    #[new]
    #[pyo3(signature = (function, name = None, raw = false, memoize = true))]
    pub fn create(
        py: Python<'_>,
        function: Py<PyAny>,
        name: Option<String>,
        raw: bool,
        memoize: bool,
    ) -> PyResult<Self> {
        if !function.bind(py).is_callable() {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "a score function takes (node, task) and returns a float",
            ));
        }
        let name = match name {
            Some(name) => name,
            None => function
                .bind(py)
                .getattr("__name__")
                .and_then(|n| n.extract::<String>())
                .unwrap_or_else(|_| "score".to_string()),
        };
        let label = format!("python:{name}");
        let scorer = Arc::new(PyScorer {
            function,
            label: label.clone(),
            error: Mutex::new(None),
            calls: AtomicU64::new(0),
        });
        let scale = if raw {
            ExprScale::Raw
        } else {
            ExprScale::MinMax
        };
        let term = ExternalScorer::new(&label, scale, memoize, scorer.clone());
        Ok(Scorer { scorer, term })
    }

    /// The name outputs give it (`python:<name>`).
    #[getter]
    fn label(&self) -> String {
        self.term.label().to_string()
    }

    /// Times the function was called so far (memoised scores are not calls).
    #[getter]
    fn calls(&self) -> u64 {
        self.scorer.calls()
    }
}

/// A feature as an attribute: its value, or why a memoised scorer cannot read it.
fn attribute(features: &[(Feature, Option<f64>)], name: &str, owner: &str) -> PyResult<f64> {
    match features.iter().find(|(f, _)| f.info().name == name) {
        Some((_, Some(value))) => Ok(*value),
        Some((_, None)) => Err(PyAttributeError::new_err(format!(
            "`{name}` is not memoised (node states and task shapes leave memory out): \
             wrap the function in gapbench.Scorer(fn, memoize=False) to read it"
        ))),
        None => Err(PyAttributeError::new_err(format!(
            "a {owner} has no feature `{name}` (features: {})",
            features
                .iter()
                .map(|(f, _)| f.info().name)
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The features whose name starts with `task_` (the task's) or not (the node's).
fn features_of(features: &NodeTaskFeatures<'_>, task: bool) -> Vec<(Feature, Option<f64>)> {
    FEATURES
        .iter()
        .filter(|info| info.name.starts_with("task_") == task)
        .map(|info| (info.feature, features.get(info.feature)))
        .collect()
}

/// A feasible node as a score function sees it: every `expr:` feature not about the task
/// (`cpu_free_milli`, `gpu_free_after_milli`, `frag_delta_milli`, …), `node_in_use` and
/// `name`.
#[pyclass(frozen, module = "gapbench._native")]
pub struct Node {
    features: Vec<(Feature, Option<f64>)>,
    #[pyo3(get)]
    node_in_use: bool,
    #[pyo3(get)]
    name: String,
}

impl Node {
    fn of(features: &NodeTaskFeatures<'_>) -> Self {
        Node {
            features: features_of(features, false),
            node_in_use: features.node_in_use,
            name: features.node_name.to_string(),
        }
    }
}

#[pymethods]
impl Node {
    fn __getattr__(&self, name: &str) -> PyResult<f64> {
        attribute(&self.features, name, "node")
    }

    fn __dir__(&self) -> Vec<&'static str> {
        let mut names: Vec<&str> = self.features.iter().map(|(f, _)| f.info().name).collect();
        names.extend(["node_in_use", "name"]);
        names
    }

    fn __repr__(&self) -> String {
        format!("Node({})", self.name)
    }
}

/// The task as a score function sees it: the `task_*` features of `expr:` and `name`.
#[pyclass(frozen, module = "gapbench._native")]
pub struct Task {
    features: Vec<(Feature, Option<f64>)>,
    #[pyo3(get)]
    name: String,
}

impl Task {
    fn of(features: &NodeTaskFeatures<'_>) -> Self {
        Task {
            features: features_of(features, true),
            name: features.task_name.to_string(),
        }
    }
}

#[pymethods]
impl Task {
    fn __getattr__(&self, name: &str) -> PyResult<f64> {
        attribute(&self.features, name, "task")
    }

    fn __dir__(&self) -> Vec<&'static str> {
        let mut names: Vec<&str> = self.features.iter().map(|(f, _)| f.info().name).collect();
        names.push("name");
        names
    }

    fn __repr__(&self) -> String {
        format!("Task({})", self.name)
    }
}
