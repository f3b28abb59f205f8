//! Reading a results CSV into typed rows, with errors that name the file and line.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use serde::de::DeserializeOwned;

use crate::check::CheckedRow;

/// One typed row and where it came from.
pub struct Row<T> {
    /// 1-based line of the record in the file.
    pub line: u64,
    pub record: csv::StringRecord,
    pub value: T,
}

/// A CSV file read whole into rows of `T` (matched by header name; extra columns are
/// allowed and stay readable through [`Rows::text`]).
pub struct Rows<T> {
    pub path: std::path::PathBuf,
    pub headers: csv::StringRecord,
    pub rows: Vec<Row<T>>,
}

impl<T> Rows<T> {
    /// An error at `line` of the file.
    pub fn error(&self, line: u64, message: impl std::fmt::Display) -> anyhow::Error {
        anyhow!("{}: line {line}: {message}", self.path.display())
    }

    /// The text of `column` in `row` ("" when the column is absent).
    pub fn text<'a>(&self, row: &'a Row<T>, column: &str) -> &'a str {
        self.headers
            .iter()
            .position(|h| h == column)
            .and_then(|i| row.record.get(i))
            .unwrap_or("")
    }

    /// Refuses a row (of those `applies` to) whose `column` holds a value outside `allowed`
    /// (e.g. a policy the matrix never ran); `what` names the list in the message. Values
    /// differing only in ASCII case or white space are the same (a spec's `PWR:200, fgd:800`
    /// is written `pwr:200,fgd:800`).
    pub fn check_column_in(
        &self,
        column: &str,
        allowed: &[String],
        what: &str,
        applies: impl Fn(&T) -> bool,
    ) -> Result<()> {
        for row in self.rows.iter().filter(|row| applies(&row.value)) {
            let value = self.text(row, column);
            if !allowed.iter().any(|a| same_spelling(a, value)) {
                return Err(self.error(
                    row.line,
                    format_args!(
                        "column `{column}`: {value:?} is not among {what} ({})",
                        allowed.join("; ")
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// `a` and `b` equal but for ASCII case and white space.
fn same_spelling(a: &str, b: &str) -> bool {
    let letters = |s: &str| {
        s.chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| c.to_ascii_lowercase())
            .collect::<Vec<_>>()
    };
    letters(a) == letters(b)
}

/// [`read_rows`] of a file the folder must hold with data (its `matrix.json` has the study
/// that writes it): a missing or header-only file is an error naming it, not a study
/// silently left out.
pub fn read_expected_rows<T: DeserializeOwned + CheckedRow>(
    path: &Path,
    required: &[&str],
) -> Result<Rows<T>> {
    match read_rows(path, required)? {
        Some(rows) => Ok(rows),
        None if path.exists() => bail!(
            "{}: holds no data row, but matrix.json has the study that writes it",
            path.display()
        ),
        None => bail!(
            "{}: missing, but matrix.json has the study that writes it",
            path.display()
        ),
    }
}

/// Reads `path`; `None` when it is absent or holds no data row. `required` columns must be
/// in the header (beyond those `T` itself needs). Every row is checked ([`CheckedRow`]):
/// an error names the file, the line (1-based, the header is line 1) and the column.
pub fn read_rows<T: DeserializeOwned + CheckedRow>(
    path: &Path,
    required: &[&str],
) -> Result<Option<Rows<T>>> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .from_reader(bytes.as_slice());
    let headers = reader
        .headers()
        .map_err(|e| anyhow!("{}: line 1: {e}", path.display()))?
        .clone();
    for name in required {
        if !headers.iter().any(|h| h == *name) {
            bail!("{}: line 1: missing column `{name}`", path.display());
        }
    }
    let mut rows = Vec::new();
    for result in reader.records() {
        let record = result.map_err(|e| {
            let line = e.position().map_or(0, csv::Position::line);
            anyhow!("{}: line {line}: {e}", path.display())
        })?;
        let line = record.position().map_or(0, csv::Position::line);
        let value = record.deserialize(Some(&headers)).map_err(|e| {
            anyhow!(
                "{}: line {line}: {}",
                path.display(),
                field_error(&e, &headers)
            )
        })?;
        T::check(&value).map_err(|e| anyhow!("{}: line {line}: {e}", path.display()))?;
        rows.push(Row {
            line,
            record,
            value,
        });
    }
    if rows.is_empty() {
        return Ok(None);
    }
    Ok(Some(Rows {
        path: path.to_path_buf(),
        headers,
        rows,
    }))
}

/// A deserialisation error naming the column, without the csv crate's record and byte
/// positions (the caller names the line).
fn field_error(error: &csv::Error, headers: &csv::StringRecord) -> String {
    match error.kind() {
        csv::ErrorKind::Deserialize { err, .. } => {
            match err.field().and_then(|i| headers.get(i as usize)) {
                Some(column) => format!("column `{column}`: {}", err.kind()),
                None => err.kind().to_string(),
            }
        }
        _ => error.to_string(),
    }
}
