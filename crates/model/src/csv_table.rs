//! CSV tables read row by row with every error located: file, line and column. Shared
//! by the node, task and GPU-model loaders.

use std::io::Read;
use std::num::IntErrorKind;
use std::path::{Path, PathBuf};

use crate::error::{InputError, LineTracked, StreamLines};

/// The latest time a trace may name, in seconds from its start: 100 years (the openb traces
/// span 150 days). Later times are typos or overflowed values, and would integrate idle
/// power over centuries into energies of 1e16 kWh.
pub const MAX_TIME_S: u64 = 3_155_760_000;

/// The header of a CSV table, and typed field access that reports file, line and column.
/// Rows are read one at a time ([`Table::each_row`]), so a loader holds only what it keeps
/// and stops at the first bad row, however large the file.
pub(crate) struct Table {
    file: PathBuf,
    headers: Vec<String>,
    /// Line numbers counted from the bytes the reader passes on (CRLF-correct).
    lines: StreamLines,
}

impl Table {
    /// Reads the header line of `input`; the rows follow from the returned reader.
    pub(crate) fn open<R: Read>(
        file: &Path,
        input: R,
    ) -> Result<(Table, csv::Reader<LineTracked<R>>), InputError> {
        Table::open_commented(file, input, None)
    }

    /// [`Table::open`], skipping lines that start with `comment` (a file people annotate,
    /// such as a GPU-model file citing its sources).
    pub(crate) fn open_commented<R: Read>(
        file: &Path,
        input: R,
        comment: Option<u8>,
    ) -> Result<(Table, csv::Reader<LineTracked<R>>), InputError> {
        let lines = StreamLines::new();
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .comment(comment)
            // Fields are trimmed where they are read (`text`): cheaper than trimming whole rows.
            .trim(csv::Trim::Headers)
            .from_reader(StreamLines::track(input, &lines));
        let headers: Vec<String> = reader
            .headers()
            .map_err(|e| malformed(file, &lines, e))?
            .iter()
            .map(str::to_string)
            .collect();
        if headers.iter().all(|h| h.is_empty()) {
            return Err(InputError::new(
                file,
                "empty file: expected a CSV header line",
            ));
        }
        Ok((
            Table {
                file: file.to_path_buf(),
                headers,
                lines,
            },
            reader,
        ))
    }

    /// Calls `visit` with the line and fields of every row that is not blank, in file
    /// order, reusing one record; the first error (malformed CSV or `visit`'s) ends it.
    pub(crate) fn each_row<R: Read>(
        &self,
        reader: &mut csv::Reader<R>,
        mut visit: impl FnMut(u64, &csv::StringRecord) -> Result<(), InputError>,
    ) -> Result<(), InputError> {
        let mut record = csv::StringRecord::new();
        while reader
            .read_record(&mut record)
            .map_err(|e| malformed(&self.file, &self.lines, e))?
        {
            if record.iter().all(|field| field.trim().is_empty()) {
                continue;
            }
            let line = record
                .position()
                .map_or(0, |p| self.lines.line_of(p.byte()));
            visit(line, &record)?;
        }
        Ok(())
    }

    pub(crate) fn column(&self, name: &str) -> Result<usize, InputError> {
        self.headers.iter().position(|h| h == name).ok_or_else(|| {
            InputError::new(
                &self.file,
                format!(
                    "missing column `{name}` (header: {})",
                    self.headers.join(",")
                ),
            )
            .at_line(1)
        })
    }

    /// The first header column not in `known`.
    pub(crate) fn unknown_column(&self, known: &[&str]) -> Option<usize> {
        self.headers
            .iter()
            .position(|h| !known.contains(&h.as_str()))
    }

    pub(crate) fn optional_column(&self, name: &str) -> Option<usize> {
        self.headers.iter().position(|h| h == name)
    }

    pub(crate) fn error(&self, line: u64, column: usize, message: impl Into<String>) -> InputError {
        InputError::new(&self.file, message)
            .at_line(line)
            .in_column(self.headers[column].clone())
    }

    pub(crate) fn text<'r>(
        &self,
        line: u64,
        record: &'r csv::StringRecord,
        column: usize,
    ) -> Result<&'r str, InputError> {
        record.get(column).map(str::trim).ok_or_else(|| {
            self.error(
                line,
                column,
                format!(
                    "row has {} fields, expected {}",
                    record.len(),
                    self.headers.len()
                ),
            )
        })
    }

    pub(crate) fn integer(
        &self,
        line: u64,
        record: &csv::StringRecord,
        column: usize,
    ) -> Result<i64, InputError> {
        self.bounded(line, record, column, i64::MIN, i64::MAX)
    }

    pub(crate) fn bounded(
        &self,
        line: u64,
        record: &csv::StringRecord,
        column: usize,
        min: i64,
        max: i64,
    ) -> Result<i64, InputError> {
        let text = self.text(line, record, column)?;
        let out_of_range = || {
            self.error(
                line,
                column,
                format!("{text} is out of range {min}..={max}"),
            )
        };
        let value = text.parse::<i64>().map_err(|e| match e.kind() {
            // Digits, but more than 64 bits hold: out of range, not "not an integer".
            IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => out_of_range(),
            _ => self.error(line, column, format!("expected an integer, found `{text}`")),
        })?;
        if value < min || value > max {
            return Err(out_of_range());
        }
        Ok(value)
    }

    pub(crate) fn optional_time(
        &self,
        line: u64,
        record: &csv::StringRecord,
        column: Option<usize>,
    ) -> Result<Option<u64>, InputError> {
        match column {
            None => Ok(None),
            Some(c) if self.text(line, record, c)?.is_empty() => Ok(None),
            Some(c) => {
                let time = self.bounded(line, record, c, 0, i64::MAX)? as u64;
                if time > MAX_TIME_S {
                    return Err(self.error(line, c, format!("{time} s is over 100 years ({MAX_TIME_S} s): trace times are seconds from the trace start")));
                }
                Ok(Some(time))
            }
        }
    }
}

/// A CSV syntax error (or invalid UTF-8) at the line the csv reader stopped on.
pub(crate) fn malformed(file: &Path, lines: &StreamLines, error: csv::Error) -> InputError {
    let mut located = InputError::new(file, format!("malformed CSV: {error}"));
    located.line = error.position().map(|p| lines.line_of(p.byte()));
    located
}

pub(crate) fn open_file(path: &Path) -> Result<std::fs::File, InputError> {
    std::fs::File::open(path).map_err(|e| InputError::new(path, format!("cannot read: {e}")))
}

/// Finds rows that share a name, to refuse them: outputs (`curve.csv`, `tasks.csv`,
/// placements) name tasks and nodes, and two of one name would make them ambiguous. Keeps
/// a 64-bit hash and the line of each row (16 bytes a row, however long the names) and
/// sorts them once every row is read: sequential memory, where a hash set of millions of
/// rows would miss the cache on every row.
#[derive(Default)]
pub(crate) struct NameCheck {
    /// (hash of the name, row index), in row order until sorted.
    hashes: Vec<(u64, usize)>,
    /// Line of each row, by index.
    lines: Vec<u64>,
}

impl NameCheck {
    pub(crate) fn push(&mut self, name: &str, line: u64) {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        name.hash(&mut hasher);
        self.hashes.push((hasher.finish(), self.lines.len()));
        self.lines.push(line);
    }

    /// The repeated name whose second row comes first, with the lines of its first two
    /// rows; `name_of(i)` is row `i`'s name. Equal hashes of different names are told
    /// apart by comparing the names.
    pub(crate) fn first_duplicate<'a>(
        mut self,
        name_of: impl Fn(usize) -> &'a str,
    ) -> Option<(&'a str, u64, u64)> {
        self.hashes.sort_unstable();
        let mut found: Option<(usize, usize)> = None;
        for group in self
            .hashes
            .chunk_by(|a, b| a.0 == b.0)
            .filter(|g| g.len() > 1)
        {
            // Within a group rows are in index order: the first earlier row of the same
            // name makes each row a repeat.
            for (k, &(_, later)) in group.iter().enumerate().skip(1) {
                let name = name_of(later);
                if let Some(&(_, earlier)) = group[..k].iter().find(|(_, i)| name_of(*i) == name) {
                    if found.is_none_or(|(_, best)| later < best) {
                        found = Some((earlier, later));
                    }
                    break;
                }
            }
        }
        found.map(|(earlier, later)| (name_of(later), self.lines[earlier], self.lines[later]))
    }
}
