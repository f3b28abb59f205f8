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
use std::time::{Instant, SystemTime};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::bench::Matrix;
use crate::budget_study::{budget_cell_path, finished_budget};
use crate::cells::{cell_path, finished, finished_gap, gap_cell_path};
use crate::io::write_json;
use crate::replay_cells::{finished_replay, replay_cell_path};

/// Folder of the cells' wall times, beside the cells.
pub const CELL_TIMES_DIR: &str = "cell-times";

/// One cell's wall time, keyed like the cell so a time outlives no recomputation.
#[derive(Debug, Serialize, Deserialize)]
struct CellTime {
    key: String,
    seconds: f64,
}

/// Records that the cell written at `cell_file` (below `out`), keyed `key`, took the time
/// since `started`.
pub(crate) fn record_cell_time(
    out: &Path,
    cell_file: &Path,
    key: &str,
    started: Instant,
) -> Result<()> {
    let relative = cell_file.strip_prefix(out).unwrap_or(cell_file);
    let time = CellTime {
        key: key.to_string(),
        seconds: started.elapsed().as_secs_f64(),
    };
    write_json(&out.join(CELL_TIMES_DIR).join(relative), &time)
}

/// A cell's time in `dir` and when it was written, if its time file has the cell's key.
fn cell_time(dir: &Path, relative: &Path, key: &str) -> Option<(f64, SystemTime)> {
    let path = dir.join(CELL_TIMES_DIR).join(relative);
    let time: CellTime = serde_json::from_str(&std::fs::read_to_string(&path).ok()?).ok()?;
    let written = std::fs::metadata(&path).ok()?.modified().ok()?;
    (time.key == key && time.seconds.is_finite() && time.seconds >= 0.0)
        .then_some((time.seconds, written))
}

/// The kinds of cell a bench has, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Sweep,
    Gap,
    WholeClusterGap,
    Replay,
    Budget,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::Sweep,
        Kind::Gap,
        Kind::WholeClusterGap,
        Kind::Replay,
        Kind::Budget,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Sweep => "sweeps",
            Kind::Gap => "gap (sub-cluster)",
            Kind::WholeClusterGap => "gap (whole cluster)",
            Kind::Replay => "replay",
            Kind::Budget => "budget",
        }
    }
}

/// One cell of the matrix as the folders have it.
#[derive(Debug, Clone)]
pub struct CellProgress {
    pub kind: Kind,
    /// Its path inside a results folder.
    pub path: PathBuf,
    /// The first folder holding it finished.
    pub done_in: Option<PathBuf>,
    /// Its wall time, when that folder recorded one.
    pub seconds: Option<f64>,
    /// When it finished (its time file's modification time).
    finished_at: Option<SystemTime>,
}

/// Every cell of the matrix with where (and in how long) it was done.
pub fn cell_progress(matrix: &Matrix, dirs: &[PathBuf]) -> Result<Vec<CellProgress>> {
    let mut cells = Vec::new();
    // The first folder that holds the cell finished, with its time there if recorded.
    let mut add = |kind, path: PathBuf, key: Option<String>, done: &dyn Fn(&Path) -> bool| {
        let done_in = dirs.iter().find(|dir| done(dir)).cloned();
        let time = done_in
            .as_deref()
            .zip(key)
            .and_then(|(dir, key)| cell_time(dir, &path, &key));
        cells.push(CellProgress {
            kind,
            path,
            done_in,
            seconds: time.map(|t| t.0),
            finished_at: time.map(|t| t.1),
        });
    };
    let root = Path::new("");
    for cell in matrix.cells()? {
        let done = |dir: &Path| finished(dir, matrix, &cell).is_some();
        add(
            Kind::Sweep,
            cell_path(root, &cell),
            Some(matrix.cell_key(&cell)),
            &done,
        );
    }
    for cell in matrix.gap_cells()? {
        let kind = if cell.full_cluster {
            Kind::WholeClusterGap
        } else {
            Kind::Gap
        };
        let done = |dir: &Path| finished_gap(dir, matrix, &cell).is_some();
        add(
            kind,
            gap_cell_path(root, &cell),
            Some(matrix.gap_key(&cell)),
            &done,
        );
    }
    for cell in matrix.replay_cells()? {
        let done = |dir: &Path| finished_replay(dir, matrix, &cell).is_some();
        add(
            Kind::Replay,
            replay_cell_path(root, &cell),
            Some(matrix.replay_key(&cell)),
            &done,
        );
    }
    for cell in matrix.budget_cells()? {
        let done = |dir: &Path| finished_budget(dir, matrix, &cell).is_some();
        add(
            Kind::Budget,
            budget_cell_path(root, &cell),
            Some(matrix.budget_key(&cell)),
            &done,
        );
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
