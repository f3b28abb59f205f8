//! The online crate's one error type: a policy spec or a score expression that does not
//! parse or compile. Messages name the fault and the choices, for the command line.

/// Why a policy spec or a score expression is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OnlineError {
    /// A policy spec that does not parse (unknown name, bad weight, a term twice, …).
    #[error("{0}")]
    Spec(String),
    /// A score expression that does not parse or compile; `column` is 1-based, in
    /// characters of the expression.
    #[error("column {column}: {message}")]
    Expr { column: usize, message: String },
}

impl OnlineError {
    /// The column of an expression's fault (`None` for a spec's).
    pub fn column(&self) -> Option<usize> {
        match self {
            OnlineError::Spec(_) => None,
            OnlineError::Expr { column, .. } => Some(*column),
        }
    }

    /// What is wrong, without the column.
    pub fn message(&self) -> &str {
        match self {
            OnlineError::Spec(message) | OnlineError::Expr { message, .. } => message,
        }
    }
}
