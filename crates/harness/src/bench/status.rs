//! `gapbench bench --status DIR…`: how far a bench — one folder or the folders of its shards —
//! has got, read from what the folders hold: cells done / total per kind, the slowest cells
//! and an estimate of the time left.
//!
//! A cell counts as done when some folder holds its finished record with the right key (the
//! same test as resume and merge). Cell records are deterministic, so they hold no times: the
//! bench writes each cell's wall time beside it, in `cell-times/<the cell's path>`, keyed like
//! the cell (the one file of a results folder that differs between identical runs; `merge`
//! does not carry it over).
//!
//! Time left = Σ over kinds of (cells left × mean seconds of that kind's timed cells), divided
//! by the pace so far: the timed cells' seconds over the wall time from the first one's start
//! to the last one's end, across all folders — the parallelism the shards actually got.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{bail, Context, Result};

pub use super::kind::{CellProgress, Kind};
use super::kinds::KINDS;
use super::matrix::Matrix;
pub use super::store::CELL_TIMES_DIR;

/// Every cell of the matrix with where (and in how long) it was done.
pub fn cell_progress(matrix: &Matrix, dirs: &[PathBuf]) -> Result<Vec<CellProgress>> {
    let mut cells = Vec::new();
    for kind in KINDS {
        cells.extend(kind.progress(matrix, dirs)?);
    }
    Ok(cells)
}

/// The matrix the folders ran (they must all have run the same), and the folders that have
/// started (hold a `matrix.json`).
fn read_matrix(dirs: &[PathBuf]) -> Result<(Matrix, Vec<PathBuf>, Vec<PathBuf>)> {
    let (mut matrix, mut started, mut waiting): (Option<(Matrix, &Path)>, _, _) =
        (None, Vec::new(), Vec::new());
    for dir in dirs {
        let path = dir.join("matrix.json");
        if !path.exists() {
            waiting.push(dir.clone());
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        let this: Matrix = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a gapbench matrix", path.display()))?;
        match &matrix {
            Some((first, first_dir)) if !first.same_runs(&this) => bail!(
                "{} ran a different matrix than {}",
                dir.display(),
                first_dir.display()
            ),
            Some(_) => {}
            None => matrix = Some((this, dir)),
        }
        started.push(dir.clone());
    }
    let Some((matrix, _)) = matrix else {
        bail!(
            "none of {} holds a matrix.json: no bench has started there",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    Ok((matrix, started, waiting))
}

/// Cells done and left of one kind, with the seconds of its timed cells.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KindCount {
    pub done: usize,
    pub total: usize,
    pub timed: usize,
    pub timed_seconds: f64,
}

/// What `--status` found.
#[derive(Debug, Clone)]
pub struct Status {
    pub matrix: Matrix,
    pub started: Vec<PathBuf>,
    pub not_started: Vec<PathBuf>,
    pub cells: Vec<CellProgress>,
}

impl Status {
    pub fn of(dirs: &[PathBuf]) -> Result<Status> {
        let (matrix, started, not_started) = read_matrix(dirs)?;
        let cells = cell_progress(&matrix, &started)?;
        Ok(Status {
            matrix,
            started,
            not_started,
            cells,
        })
    }

    /// Done / total per kind present in the matrix, in run order.
    pub fn counts(&self) -> Vec<(Kind, KindCount)> {
        Kind::ALL
            .iter()
            .filter_map(|&kind| {
                let mut count = KindCount::default();
                for cell in self.cells.iter().filter(|c| c.kind == kind) {
                    count.total += 1;
                    count.done += usize::from(cell.done_in.is_some());
                    if let Some(seconds) = cell.seconds {
                        count.timed += 1;
                        count.timed_seconds += seconds;
                    }
                }
                (count.total > 0).then_some((kind, count))
            })
            .collect()
    }

    /// The `n` slowest timed cells, slowest first (ties by path, so the listing is stable).
    pub fn slowest(&self, n: usize) -> Vec<&CellProgress> {
        let mut timed: Vec<&CellProgress> =
            self.cells.iter().filter(|c| c.seconds.is_some()).collect();
        timed.sort_by(|a, b| {
            b.seconds
                .partial_cmp(&a.seconds)
                .expect("finite times")
                .then_with(|| a.path.cmp(&b.path))
        });
        timed.truncate(n);
        timed
    }

    /// Seconds of cell time left (cells left × their kind's mean), and the cells left of
    /// kinds with no timed cell yet (not in that sum).
    pub fn work_left(&self) -> (f64, usize) {
        let (mut seconds, mut untimed) = (0.0, 0);
        for (_, count) in self.counts() {
            let left = count.total - count.done;
            if count.timed > 0 {
                seconds += left as f64 * count.timed_seconds / count.timed as f64;
            } else {
                untimed += left;
            }
        }
        (seconds, untimed)
    }

    /// Cell-seconds done per wall second so far: the timed cells' seconds over the span from
    /// the first one's start to the last one's end. `None` before two cells are timed.
    pub fn pace(&self) -> Option<f64> {
        let timed: Vec<(f64, SystemTime)> = self
            .cells
            .iter()
            .filter_map(|c| Some((c.seconds?, c.finished_at?)))
            .collect();
        let last_end = timed.iter().map(|t| t.1).max()?;
        let first_start = timed
            .iter()
            .map(|&(seconds, end)| end - std::time::Duration::from_secs_f64(seconds))
            .min()?;
        let span = last_end.duration_since(first_start).ok()?.as_secs_f64();
        let busy: f64 = timed.iter().map(|t| t.0).sum();
        (timed.len() >= 2 && span > 0.0).then_some(busy / span)
    }

    /// The report `--status` prints.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let spec = &self.matrix.spec;
        let _ = writeln!(
            out,
            "bench `{}` ({}), {} folder(s) started",
            spec.name,
            spec.description,
            self.started.len()
        );
        for dir in &self.not_started {
            let _ = writeln!(out, "  {}: not started (no matrix.json yet)", dir.display());
        }
        let _ = writeln!(out, "\n{:<22} {:>7} {:>7}", "cells", "done", "total");
        let (mut done, mut total) = (0, 0);
        for (kind, count) in self.counts() {
            let _ = writeln!(
                out,
                "{:<22} {:>7} {:>7}",
                kind.name(),
                count.done,
                count.total
            );
            done += count.done;
            total += count.total;
        }
        let _ = writeln!(out, "{:<22} {:>7} {:>7}", "all", done, total);
        let slowest = self.slowest(5);
        if !slowest.is_empty() {
            let _ = writeln!(out, "\nslowest cells:");
            for cell in slowest {
                let _ = writeln!(
                    out,
                    "  {:>9}  {:<20} {} (in {})",
                    duration_text(cell.seconds.unwrap_or(0.0)),
                    cell.kind.name(),
                    cell.path.display(),
                    cell.done_in.as_deref().unwrap_or(Path::new("?")).display()
                );
            }
        }
        let (work, untimed) = self.work_left();
        let _ = write!(out, "\ntime left: ");
        let _ = match (done == total, self.pace()) {
            (true, _) => writeln!(out, "none, every cell is done"),
            (false, Some(pace)) => writeln!(
                out,
                "about {} ({} of cell time at the pace so far, {pace:.2} cell-seconds per second)",
                duration_text(work / pace),
                duration_text(work)
            ),
            (false, None) => writeln!(
                out,
                "unknown until two cells are timed ({} of cell time known)",
                duration_text(work)
            ),
        };
        if untimed > 0 && done < total {
            let _ = writeln!(
                out,
                "  (plus {untimed} cell(s) of kinds none of which has finished yet, not counted)"
            );
        }
        out
    }
}

/// Seconds as `1 h 02 min`, `3 min 05 s` or `4.2 s`.
fn duration_text(seconds: f64) -> String {
    let whole = seconds.round() as u64;
    if whole >= 3600 {
        format!("{} h {:02} min", whole / 3600, (whole % 3600) / 60)
    } else if whole >= 60 {
        format!("{} min {:02} s", whole / 60, whole % 60)
    } else {
        format!("{seconds:.1} s")
    }
}

#[cfg(test)]
mod tests {
    use super::duration_text;

    #[test]
    fn durations_read_in_their_largest_units() {
        assert_eq!(duration_text(4.24), "4.2 s");
        assert_eq!(duration_text(185.0), "3 min 05 s");
        assert_eq!(duration_text(3720.0), "1 h 02 min");
    }
}
