//! A results folder as a keyed store of cells: each finished cell is one JSON file at the
//! cell's own path, carrying a key (a hash of everything that determines it), written
//! atomically; a file whose key is not the cell's (older schema, other inputs, cut short)
//! is not finished and the cell runs again. Beside each cell, in `cell-times/<its path>`,
//! its wall time (cells stay deterministic, so they cannot hold it).

use std::path::Path;
use std::time::{Instant, SystemTime};

use anyhow::Result;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub(crate) use crate::io::read_keyed;
use crate::io::write_json;

/// Folder of the cells' wall times, beside the cells.
pub const CELL_TIMES_DIR: &str = "cell-times";

/// A short key: the first 8 bytes of the SHA-256 of `parts` and the input hashes, in hex.
pub(crate) fn short_hash<'a>(
    parts: impl IntoIterator<Item = &'a str>,
    input_hashes: impl IntoIterator<Item = &'a str>,
) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part);
    }
    for hash in input_hashes {
        hasher.update(hash);
    }
    crate::workload::hex(&hasher.finalize()[..8])
}

/// One cell's wall time, keyed like the cell so a time outlives no recomputation.
#[derive(Debug, Serialize, Deserialize)]
struct CellTime {
    key: String,
    seconds: f64,
}

/// Writes a finished cell's `record` at `relative` inside `out`, then its wall time since
/// `started` (keyed `key`) in `cell-times/`.
pub(crate) fn store_cell<R: Serialize>(
    out: &Path,
    relative: &Path,
    record: &R,
    key: &str,
    started: Instant,
) -> Result<()> {
    write_json(&out.join(relative), record)?;
    let time = CellTime {
        key: key.to_string(),
        seconds: started.elapsed().as_secs_f64(),
    };
    write_json(&out.join(CELL_TIMES_DIR).join(relative), &time)
}

/// A cell's time in `dir` and when it was written, if its time file has the cell's key.
pub(crate) fn cell_time(dir: &Path, relative: &Path, key: &str) -> Option<(f64, SystemTime)> {
    let path = dir.join(CELL_TIMES_DIR).join(relative);
    let time: CellTime = serde_json::from_str(&std::fs::read_to_string(&path).ok()?).ok()?;
    let written = std::fs::metadata(&path).ok()?.modified().ok()?;
    (time.key == key && time.seconds.is_finite() && time.seconds >= 0.0)
        .then_some((time.seconds, written))
}
