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

/// Line numbers of CSV records, counted from their byte offsets.
///
/// The csv crate takes a record's line number before it skips the line ends in front of the
/// record, so on every row of a CRLF file (Python's csv module writes CRLF by default), and
/// after every blank line, it is one short. Counting the bytes gives LF, CRLF and CR files the
/// same, correct numbers. Ask for records in file order: the count goes forward only.
#[derive(Debug, Clone)]
pub struct LineCounter<'a> {
    text: &'a [u8],
    /// Bytes before `pos` are counted.
    pos: usize,
    /// The line `pos` is on (1-based).
    line: u64,
}

impl<'a> LineCounter<'a> {
    pub fn new(text: &'a [u8]) -> Self {
        LineCounter {
            text,
            pos: 0,
            line: 1,
        }
    }

    /// The 1-based line of the record the csv crate placed at `byte` (its
    /// `Position::byte`): the first line at or after `byte` that is not a bare line end.
    pub fn line_of(&mut self, byte: u64) -> u64 {
        let text = self.text;
        let mut start = usize::try_from(byte).map_or(text.len(), |b| b.min(text.len()));
        while start < text.len() && matches!(text[start], b'\r' | b'\n') {
            start += 1;
        }
        while self.pos < start {
            let counts = match text[self.pos] {
                b'\n' => true,
                // A CR alone ends a line; in CRLF the LF does.
                b'\r' => text.get(self.pos + 1) != Some(&b'\n'),
                _ => false,
            };
            self.line += u64::from(counts);
            self.pos += 1;
        }
        self.line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lf_crlf_and_cr_files_number_their_records_alike() {
        for end in ["\n", "\r\n", "\r"] {
            let text = ["h,i", "a,1", "b,2", "", "c,\"two", "lines\"", "d,4", ""].join(end);
            let mut reader = csv::ReaderBuilder::new().from_reader(text.as_bytes());
            let mut lines = LineCounter::new(text.as_bytes());
            let numbers: Vec<u64> = reader
                .records()
                .map(|r| lines.line_of(r.unwrap().position().unwrap().byte()))
                .collect();
            assert_eq!(numbers, [2, 3, 5, 7], "line ends {end:?}");
        }
    }
}
