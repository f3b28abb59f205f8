//! The one error of the bounds: a bound either holds (with its status saying how tight it
//! is known to be) or says why it could not be computed.

use gapbench_ilp::SolveError;

/// Why a bound could not be computed. The text is what the bench records, unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BoundError {
    /// The input or the options do not hold together (a job without a configuration, a
    /// negative time limit, no window, …).
    #[error("{0}")]
    Input(String),
    /// A snapshot solve of a window failed (`gapbench_ilp`).
    #[error(transparent)]
    Solve(#[from] SolveError),
    /// HiGHS failed on a bound's own model, or ended without an answer.
    #[error("{0}")]
    Solver(String),
}

impl From<String> for BoundError {
    /// A message from the HiGHS plumbing, which works in text: a solver failure.
    fn from(message: String) -> Self {
        BoundError::Solver(message)
    }
}

impl From<&str> for BoundError {
    fn from(message: &str) -> Self {
        BoundError::Solver(message.to_string())
    }
}
