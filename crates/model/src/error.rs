//! Input errors that name the file, line and column, so a user can fix their data.

use std::fmt;
use std::path::PathBuf;

/// A problem with user input, located as precisely as we can.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The file (or embedded table) the problem is in.
    pub file: PathBuf,
    /// 1-based line number, when the problem is on one line.
    pub line: Option<u64>,
    /// Column name, when the problem is in one field.
    pub column: Option<String>,
    pub message: String,
}

impl InputError {
    pub fn new(file: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            line: None,
            column: None,
            message: message.into(),
        }
    }

    pub fn at_line(mut self, line: u64) -> Self {
        self.line = Some(line);
        self
    }

    pub fn in_column(mut self, column: impl Into<String>) -> Self {
        self.column = Some(column.into());
        self
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(column) = &self.column {
            write!(f, " (column `{column}`)")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for InputError {}
