//! The one error of snapshot solving: a solve either reports what it proved (a
//! [`crate::SolveReport`], whose status is never an error) or says why it could not run.

/// Why a solve could not run or could not finish. The text is the message the bench
/// records (a gap row's `error: …` status), unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SolveError {
    /// Options HiGHS would reject (a negative time limit, zero threads, …).
    #[error("{0}")]
    Options(String),
    /// The problem does not hold together: a placement that fails the checker, a sweep of
    /// another workload, a task no shape can describe, …
    #[error("{0}")]
    Problem(String),
    /// The solver failed: HiGHS refused the model or the warm start, ended without an
    /// answer, or returned a placement that fails the checker.
    #[error("{0}")]
    Solver(String),
    /// An instance file does not hold together: a placement it stores breaks the rules, or
    /// a value it claims is not the one its placement has.
    #[error("{0}")]
    Instance(String),
    /// The method has no formulation of the objective (a by-type relaxation of
    /// fragmentation, a pooled solve of power, …).
    #[error("{0}")]
    Unsupported(String),
}

impl From<String> for SolveError {
    /// A message from the formulations' plumbing, which works in text: a solver failure.
    fn from(message: String) -> Self {
        SolveError::Solver(message)
    }
}

impl From<&str> for SolveError {
    fn from(message: &str) -> Self {
        SolveError::Solver(message.to_string())
    }
}

impl From<SolveError> for String {
    /// For the formulations' plumbing, which works in text.
    fn from(error: SolveError) -> Self {
        error.to_string()
    }
}
