//! Policies from Python values: a spec string (everything the CLI takes), a callable or a
//! `Scorer`, or a mix `[(term, weight), …]` of any of them.

use std::sync::Arc;

use gapbench_online::spec::SOLO_WEIGHT;
use gapbench_online::{PolicyRef, PolicySpec};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use crate::scorer::{PyScorer, Scorer};

/// A policy and the Python scorers in it, whose errors are read after each run.
#[pyclass(frozen, module = "gapbench._native")]
pub struct Policy {
    pub policy: gapbench::Policy,
    pub scorers: Vec<Arc<PyScorer>>,
}

impl Policy {
    /// The first error a Python scorer of the policy raised in the last run.
    pub fn take_error(&self) -> Option<PyErr> {
        self.scorers
            .iter()
            .filter_map(|s| s.take_error())
            .reduce(|first, _| first)
    }
}

#[pymethods]
impl Policy {
    /// `Policy(value)`: a spec string, a callable, a `Scorer`, or a list of (term, weight).
    #[new]
    fn new(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        policy_of(value)
    }

    /// The policy as outputs name it (its `policy` column).
    #[getter]
    fn name(&self) -> String {
        self.policy.name().to_string()
    }

    fn __repr__(&self) -> String {
        format!("Policy({:?})", self.policy.name())
    }
}

fn value_error(error: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(error.to_string())
}

/// One term of a mix (or a policy alone): its spec term and the scorer it brings.
fn term_of(value: &Bound<'_, PyAny>) -> PyResult<(PolicyRef, Option<Arc<PyScorer>>)> {
    if let Ok(text) = value.downcast::<PyString>() {
        let text = text.to_cow()?;
        let spec: PolicySpec = text.parse().map_err(value_error)?;
        return match <[_; 1]>::try_from(spec.terms) {
            Ok([(term, _)]) => Ok((term, None)),
            Err(_) => Err(value_error(format!(
                "`{text}` is a mix: a term of a mix is one policy"
            ))),
        };
    }
    let scorer = match value.downcast::<Scorer>() {
        Ok(scorer) => scorer.clone(),
        Err(_) if value.is_callable() => Bound::new(
            value.py(),
            Scorer::create(value.py(), value.clone().unbind(), None, false, true)?,
        )?,
        Err(_) => {
            return Err(PyTypeError::new_err(format!(
                "a policy is a spec string, a score function (node, task) -> float, a \
                 gapbench.Scorer or a list of (policy, weight); got {}",
                value.get_type().name()?
            )))
        }
    };
    let scorer = scorer.get();
    Ok((
        PolicyRef::External(scorer.term.clone()),
        Some(scorer.scorer.clone()),
    ))
}

/// A policy from any value [`Policy::new`] takes.
pub fn policy_of(value: &Bound<'_, PyAny>) -> PyResult<Policy> {
    if let Ok(policy) = value.downcast::<Policy>() {
        let policy = policy.get();
        return Ok(Policy {
            policy: policy.policy.clone(),
            scorers: policy.scorers.clone(),
        });
    }
    if let Ok(text) = value.downcast::<PyString>() {
        let policy = text.to_cow()?.parse().map_err(value_error)?;
        return Ok(Policy {
            policy,
            scorers: Vec::new(),
        });
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let mut terms = Vec::new();
        let mut scorers = Vec::new();
        for item in value.try_iter()? {
            let (term, weight): (Bound<'_, PyAny>, u32) = item?.extract().map_err(|_| {
                PyTypeError::new_err(
                    "a mix is a list of (policy, weight) pairs, weights whole and relative: \
                     [(my_score, 300), (\"fgd\", 700)]",
                )
            })?;
            let (term, scorer) = term_of(&term)?;
            terms.push((term, weight));
            scorers.extend(scorer);
        }
        let spec = PolicySpec::mix(terms).map_err(value_error)?;
        return Ok(Policy {
            policy: gapbench::Policy::from_spec(spec),
            scorers,
        });
    }
    let (term, scorer) = term_of(value)?;
    Ok(Policy {
        policy: gapbench::Policy::from_spec(PolicySpec {
            terms: vec![(term, SOLO_WEIGHT)],
        }),
        scorers: scorer.into_iter().collect(),
    })
}
