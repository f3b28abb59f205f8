//! Reading a results CSV into typed rows, with errors that name the file and line.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use serde::de::DeserializeOwned;

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
}

/// Reads `path`; `None` when it is absent or holds no data row. `required` columns must be
/// in the header (beyond those `T` itself needs).
pub fn read_rows<T: DeserializeOwned>(path: &Path, required: &[&str]) -> Result<Option<Rows<T>>> {
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
