//! Input errors that name the file, line and column, so a user can fix their data: the
//! model crate's one error type (a cluster, GPU model list or carbon series built from
//! values rather than read from a file names no file).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;
use std::io::Read;
use std::path::PathBuf;
use std::rc::Rc;

/// A problem with user input, located as precisely as we can.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The file (or embedded table) the problem is in; `None` for values not read from one.
    pub file: Option<PathBuf>,
    /// 1-based line number, when the problem is on one line.
    pub line: Option<u64>,
    /// Column name, when the problem is in one field.
    pub column: Option<String>,
    pub message: String,
}

impl InputError {
    pub fn new(file: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self {
            file: Some(file.into()),
            ..Self::invalid(message)
        }
    }

    /// A problem with values not read from a file (a cluster or carbon series built in
    /// code, a GPU model list): it shows as its message alone.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self {
            file: None,
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
        let Some(file) = &self.file else {
            return f.write_str(&self.message);
        };
        write!(f, "{}", file.display())?;
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

/// [`LineCounter`]'s numbering for a streamed file: the reader ([`LineTracked`]) keeps the
/// bytes it has passed on and not yet counted, so memory stays at the csv reader's buffer
/// while lines are counted from byte offsets as for a file read whole. Ask in file order.
#[derive(Debug, Clone, Default)]
pub struct StreamLines(Rc<RefCell<StreamWindow>>);

#[derive(Debug, Default)]
struct StreamWindow {
    /// Bytes read but not yet counted; `window[0]` is at offset `base`.
    window: VecDeque<u8>,
    base: u64,
    /// Lines ended before `base`.
    ended: u64,
}

/// A reader that hands what it reads to a [`StreamLines`].
#[derive(Debug)]
pub struct LineTracked<R> {
    inner: R,
    lines: StreamLines,
}

impl<R: Read> Read for LineTracked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.lines.0.borrow_mut().window.extend(&buf[..n]);
        Ok(n)
    }
}

impl StreamLines {
    pub fn new() -> Self {
        Self::default()
    }

    /// Wraps `input` so the bytes it yields are counted by `lines`.
    pub fn track<R: Read>(input: R, lines: &StreamLines) -> LineTracked<R> {
        LineTracked {
            inner: input,
            lines: lines.clone(),
        }
    }

    /// The 1-based line of the record the csv crate placed at `byte`, as
    /// [`LineCounter::line_of`].
    pub fn line_of(&self, byte: u64) -> u64 {
        let mut state = self.0.borrow_mut();
        let StreamWindow {
            window,
            base,
            ended,
        } = &mut *state;
        let mut start = byte.max(*base);
        while let Some(b'\r' | b'\n') = window.get((start - *base) as usize) {
            start += 1;
        }
        while *base < start && !window.is_empty() {
            let byte = window.pop_front().unwrap_or_default();
            let counts = match byte {
                b'\n' => true,
                // A CR alone ends a line; in CRLF the LF does.
                b'\r' => window.front() != Some(&b'\n'),
                _ => false,
            };
            *ended += u64::from(counts);
            *base += 1;
        }
        *ended + 1
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
            let streamed = StreamLines::new();
            let mut reader = csv::ReaderBuilder::new()
                .from_reader(StreamLines::track(text.as_bytes(), &streamed));
            let numbers: Vec<u64> = reader
                .records()
                .map(|r| streamed.line_of(r.unwrap().position().unwrap().byte()))
                .collect();
            assert_eq!(numbers, [2, 3, 5, 7], "streamed, line ends {end:?}");
        }
    }
}
