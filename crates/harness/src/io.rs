//! Atomic file writes (their home is the results crate, shared with the report), and
//! keyed reads of what a run stored.

use std::path::Path;

pub use gapbench_results::io::{write_atomic, write_atomic_with, write_json};

/// The record in the cell file at `path` if it reads and carries `key` (an unreadable,
/// partly written or outdated file is not finished: the cell runs again).
pub(crate) fn read_keyed<R: serde::de::DeserializeOwned>(
    path: &Path,
    key: &str,
    key_of: impl Fn(&R) -> &str,
) -> Option<R> {
    let text = std::fs::read_to_string(path).ok()?;
    let record: R = serde_json::from_str(&text).ok()?;
    (key_of(&record) == key).then_some(record)
}
