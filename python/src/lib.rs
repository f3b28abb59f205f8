//! `gapbench._native`: the gapbench crate's public API (`gapbench::api`) for Python. Each
//! function is one call into the API, with the GIL released while Rust runs, and returns the
//! rows as the CLI writes them (CSV text from the results crate's row declarations, JSON of
//! the same structs; a sweep's curve, the large one, as typed columns from its declaration,
//! `frame.rs`): the Python layer (`gapbench/__init__.py`) only turns them into pandas
//! DataFrames and dicts, so column names and units are the files'.

mod frame;
mod policy;
mod progress;
mod scorer;

use std::path::PathBuf;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use gapbench::api::{self, Cell, CsvRow, CurveRow};
use gapbench::replay_bound::bound_options;
use gapbench::{GapMethod, GapOptions, ReplayConfig, Selection};
use gapbench_replay::{IdlePolicy, PowerSettings, ReplayOptions};
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;

use crate::policy::Policy;
use crate::progress::{Counted, Ticker};
use crate::scorer::{Node, ScoreError, Scorer, Task};

pyo3::create_exception!(
    gapbench,
    GapbenchError,
    PyException,
    "gapbench refused its inputs or failed: the message is the CLI's."
);

/// An API error as a Python exception, with its chain of causes.
fn api_error(error: anyhow::Error) -> PyErr {
    GapbenchError::new_err(format!("{error:#}"))
}

/// Runs `call` without the GIL, then raises what a Python scorer of `policy` raised
/// (the run's result is then meaningless), then Ctrl-C pressed meanwhile.
fn run<T: Send>(
    py: Python<'_>,
    policy: &[&Policy],
    call: impl FnOnce() -> anyhow::Result<T> + Send,
) -> PyResult<T> {
    let result = py.allow_threads(call);
    for policy in policy {
        if let Some(error) = policy.take_error() {
            return Err(error);
        }
    }
    let value = result.map_err(api_error)?;
    py.check_signals()?;
    Ok(value)
}

/// [`run`] with a progress line `what` on stderr once the call lasts a few seconds
/// (`progress.rs`); none when `what` is `None`.
fn run_shown<T: Send>(
    py: Python<'_>,
    policy: &[&Policy],
    what: Option<String>,
    call: impl FnOnce() -> anyhow::Result<T> + Send,
) -> PyResult<T> {
    run(py, policy, || {
        let ticker = what.map(|what| Ticker::start(what, None));
        let result = call();
        if let Some(ticker) = ticker {
            ticker.finish();
        }
        result
    })
}

/// A cluster and its tasks (`gapbench.Workload`).
#[pyclass(frozen, module = "gapbench._native")]
struct Workload {
    workload: gapbench::Workload,
}

#[pymethods]
impl Workload {
    /// The embedded openb-like default: the 1,213-node openb GPU cluster and the task
    /// shapes of the openb `default` trace.
    #[staticmethod]
    fn embedded(py: Python<'_>) -> PyResult<Workload> {
        let workload = run(py, &[], gapbench::Workload::embedded)?;
        Ok(Workload { workload })
    }

    /// openb CSVs; a part left out is the embedded default's.
    #[staticmethod]
    #[pyo3(signature = (nodes = None, tasks = None))]
    fn openb(py: Python<'_>, nodes: Option<PathBuf>, tasks: Option<PathBuf>) -> PyResult<Workload> {
        let workload = run(py, &[], || {
            gapbench::Workload::openb(nodes.as_deref(), tasks.as_deref())
        })?;
        Ok(Workload { workload })
    }

    /// The cluster and arrived tasks of an instance file (`gapbench gap --export`).
    #[staticmethod]
    fn instance(py: Python<'_>, path: PathBuf) -> PyResult<Workload> {
        let workload = run(py, &[], || gapbench::Workload::instance(&path))?;
        Ok(Workload { workload })
    }

    /// Nodes, GPUs, tasks and sources in one line.
    fn describe(&self) -> String {
        self.workload.describe()
    }

    /// The values the loader converted, one line each.
    fn warnings(&self) -> Vec<String> {
        self.workload.warnings()
    }

    #[getter]
    fn nodes(&self) -> usize {
        self.workload.cluster().len()
    }

    #[getter]
    fn tasks(&self) -> usize {
        self.workload.tasks().len()
    }

    fn __repr__(&self) -> String {
        format!("Workload({})", self.workload.describe())
    }
}

/// Arrival sweeps, one per seed: their `curve.csv` rows one after another, in seed order,
/// as typed columns (`seed` first; see `frame.rs`). Built-in
/// policies run their seeds side by side as `gapbench run` does; a policy with a Python
/// function runs them one after another, so that Ctrl-C is seen between calls.
#[pyfunction]
#[pyo3(signature = (workload, policy, seeds, progress = true))]
fn sweep(
    py: Python<'_>,
    workload: &Workload,
    policy: &Policy,
    seeds: Vec<u64>,
    progress: bool,
) -> PyResult<Vec<(&'static str, &'static str, PyObject)>> {
    let done = Arc::new(AtomicUsize::new(0));
    let ticker = progress.then(|| {
        let counted = Counted {
            done: Arc::clone(&done),
            total: seeds.len(),
            unit: "seeds",
        };
        Ticker::start(
            format!("gapbench.sweep({})", policy.policy.name()),
            Some(counted),
        )
    });
    let seed_done = |_| {
        done.fetch_add(1, Ordering::Relaxed);
    };
    let curves = if policy.scorers.is_empty() {
        run(py, &[policy], || {
            api::sweeps_observed(&workload.workload, &policy.policy, &seeds, true, &seed_done)
        })?
    } else {
        let mut curves = Vec::with_capacity(seeds.len());
        for &seed in &seeds {
            curves.push(run(py, &[policy], || {
                api::sweeps_observed(
                    &workload.workload,
                    &policy.policy,
                    &[seed],
                    false,
                    &seed_done,
                )
                .map(|mut one| one.remove(0))
            })?);
        }
        curves
    };
    if let Some(ticker) = ticker {
        py.allow_threads(|| ticker.finish());
    }
    let columns = py.allow_threads(|| {
        let mut columns: Vec<(&'static str, Vec<Cell>)> = vec![("seed", Vec::new())];
        for curve in &curves {
            let cells = <CurveRow as CsvRow>::cells(&curve.curve);
            let seed = i64::try_from(curve.seed).map_or(Cell::Missing, Cell::Int);
            columns[0]
                .1
                .extend(std::iter::repeat_n(seed, curve.curve.len()));
            if columns.len() == 1 {
                columns.extend(cells);
            } else {
                for (column, (_, values)) in columns[1..].iter_mut().zip(cells) {
                    column.1.extend(values);
                }
            }
        }
        columns
    });
    frame::to_python(py, columns)
}

/// A gap study: `gaps.csv`'s and `front.csv`'s text.
#[pyfunction]
#[pyo3(signature = (workload, policies, seed, checkpoints, objectives, time_limit, sample_nodes = None, mip_rel_gap = 0.0, threads = None, pareto_points = 0, method = "auto", progress = true))]
#[allow(clippy::too_many_arguments)]
fn gap(
    py: Python<'_>,
    workload: &Workload,
    policies: Vec<PyRef<'_, Policy>>,
    seed: u64,
    checkpoints: Vec<f64>,
    objectives: Vec<String>,
    time_limit: f64,
    sample_nodes: Option<usize>,
    mip_rel_gap: f64,
    threads: Option<u32>,
    pareto_points: usize,
    method: &str,
    progress: bool,
) -> PyResult<(String, String)> {
    let objectives = gapbench::gap::parse_objectives(&objectives).map_err(api_error)?;
    let options = GapOptions {
        sample_nodes,
        time_limit_s: time_limit,
        mip_rel_gap,
        threads,
        pareto_points,
        method: GapMethod::parse(method).map_err(api_error)?,
        ..GapOptions::default()
    };
    let refs: Vec<&Policy> = policies.iter().map(|p| &**p).collect();
    let owned: Vec<gapbench::Policy> = refs.iter().map(|p| p.policy.clone()).collect();
    let what = progress.then(|| {
        let names: Vec<&str> = owned.iter().map(|p| p.name()).collect();
        format!("gapbench.gap({})", names.join(", "))
    });
    let study = run_shown(py, &refs, what, || {
        gapbench::gap(
            &workload.workload,
            &owned,
            seed,
            &checkpoints,
            &objectives,
            &options,
        )
    })?;
    Ok((
        gapbench::api::GapRow::csv(&study.rows),
        gapbench::api::FrontRow::csv(&study.fronts),
    ))
}

/// How nodes with nothing on them draw power, as `--idle` spells it.
fn idle_policy(idle: &str) -> PyResult<IdlePolicy> {
    match idle {
        "always-on" => Ok(IdlePolicy::AlwaysOn),
        "sleep-when-empty" => Ok(IdlePolicy::SleepWhenEmpty),
        other => Err(PyValueError::new_err(format!(
            "idle `{other}`: always-on or sleep-when-empty"
        ))),
    }
}

/// A replay: `tasks.csv`'s and `timeline.csv`'s text, `summary.json`'s and `bound.json`'s.
#[pyfunction]
#[pyo3(signature = (workload, policy, seed, idle = "always-on", sleep_fraction = None, bound = false, bound_time_limit = None, gpus = None, first_jobs = None, progress = true))]
#[allow(clippy::too_many_arguments)]
fn replay(
    py: Python<'_>,
    workload: &Workload,
    policy: &str,
    seed: u64,
    idle: &str,
    sleep_fraction: Option<f64>,
    bound: bool,
    bound_time_limit: Option<f64>,
    gpus: Option<u64>,
    first_jobs: Option<usize>,
    progress: bool,
) -> PyResult<(String, String, String, Option<String>)> {
    let policy: gapbench::Policy = policy.parse().map_err(api_error)?;
    let defaults = ReplayOptions::default();
    let config = ReplayConfig {
        options: ReplayOptions {
            power: PowerSettings {
                idle: idle_policy(idle)?,
                sleep_fraction: sleep_fraction.unwrap_or(defaults.power.sleep_fraction),
                ..defaults.power
            },
            ..defaults
        },
        selection: Selection {
            gpus,
            first_jobs,
            ..Selection::default()
        },
        bound: bound.then(|| {
            bound_options(
                bound_time_limit.unwrap_or(gapbench::replay_bound::DEFAULT_BOUND_TIME_LIMIT_S),
                gapbench::replay_bound::DEFAULT_BOUND_WINDOWS,
                Some(gapbench::replay_bound::DEFAULT_BOUND_PRICING_ROUNDS),
                Some(gapbench::replay_bound::DEFAULT_BOUND_BRANCH_NODES),
            )
        }),
        ..ReplayConfig::default()
    };
    let what = progress.then(|| format!("gapbench.replay({})", policy.name()));
    let replay = run_shown(py, &[], what, || {
        gapbench::replay(&workload.workload, &policy, seed, &config)
    })?;
    let csv = |write: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>| -> PyResult<String> {
        let mut text = Vec::new();
        write(&mut text).map_err(|e| api_error(e.into()))?;
        String::from_utf8(text).map_err(|e| api_error(e.into()))
    };
    let tasks = csv(&|out| replay.result.write_tasks_csv(out))?;
    let timeline = csv(&|out| replay.result.write_timeline_csv(out))?;
    let json = |value: serde_json::Result<String>| value.map_err(|e| api_error(e.into()));
    let summary = json(serde_json::to_string(&replay.summary))?;
    let bound = match &replay.bound {
        Some(bound) => Some(json(serde_json::to_string(bound))?),
        None => None,
    };
    Ok((tasks, timeline, summary, bound))
}

/// Runs a bench spec (`gapbench bench`); returns its results folder.
#[pyfunction]
#[pyo3(name = "bench", signature = (spec, out = None, traces = None, stand_in = false, jobs = None, progress = true))]
fn run_bench(
    py: Python<'_>,
    spec: PathBuf,
    out: Option<PathBuf>,
    traces: Option<PathBuf>,
    stand_in: bool,
    jobs: Option<usize>,
    progress: bool,
) -> PyResult<PathBuf> {
    let command = format!(
        "gapbench.bench({:?}, out={:?})",
        spec.display().to_string(),
        out
    );
    let options = gapbench::api::BenchOptions {
        spec,
        traces_dir: traces,
        stand_in,
        out,
        jobs,
        shard: None,
        progress,
        command,
    };
    let outcome = run(py, &[], || gapbench::bench(&options))?;
    Ok(outcome.out)
}

/// The `expr:` features a score function reads, with their meanings.
#[pyfunction]
fn features() -> Vec<(&'static str, &'static str, bool)> {
    gapbench_online::expr::FEATURES
        .iter()
        .map(|f| (f.name, f.meaning, f.memoizable))
        .collect()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Workload>()?;
    m.add_class::<Policy>()?;
    m.add_class::<Scorer>()?;
    m.add_class::<Node>()?;
    m.add_class::<Task>()?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(gap, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    m.add_function(wrap_pyfunction!(features, m)?)?;
    m.add("GapbenchError", m.py().get_type::<GapbenchError>())?;
    m.add("ScoreError", m.py().get_type::<ScoreError>())?;
    Ok(())
}
