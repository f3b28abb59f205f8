//! The one notion of a cell. Every study of a bench (arrival sweeps, exact-gap studies,
//! time-mode replays, the budget study) is a [`CellKind`]: how the matrix lists its cells,
//! what key and path each has, how one runs and how they aggregate. Everything that treats
//! cells alike — resume, shards, merge, `--status`, completeness, aggregation, removing an
//! earlier spec's aggregates — is written once, over `kinds::KINDS`; a new study is one file in
//! `kinds/` and one line there.

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use anyhow::{bail, Context, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::matrix::{Inputs, Matrix};
use super::store::{cell_time, read_keyed, store_cell};
use crate::io::write_atomic;
use crate::work::Work;

/// One kind of cell.
pub(crate) trait CellKind: Sync {
    type Cell: Sync;
    /// A finished cell, as stored (deterministic: no times, no paths).
    type Record: Serialize + DeserializeOwned;

    /// What the bench's summary calls these cells (`time-mode replays`).
    const NAME: &'static str;
    /// The aggregate files the kind writes (removed from a reused folder whose new spec
    /// has no such study).
    const AGGREGATES: &'static [&'static str];

    /// Every cell of `matrix`, in spec order (the order shards number them in).
    fn cells(&self, matrix: &Matrix) -> Result<Vec<Self::Cell>>;
    /// A hash of everything that determines the cell's record.
    fn key(&self, matrix: &Matrix, cell: &Self::Cell) -> String;
    fn record_key<'r>(&self, record: &'r Self::Record) -> &'r str;
    /// The cell's file inside a results folder.
    fn path(&self, cell: &Self::Cell) -> PathBuf;
    /// The group `--status` counts the cell in.
    fn status_kind(&self, cell: &Self::Cell) -> Kind;
    /// Whether the matrix has this study at all.
    fn in_spec(&self, matrix: &Matrix) -> bool;
    /// Computes one cell on `threads` cores (`out` holds what cells share, such as the
    /// replays' bounds).
    fn run(
        &self,
        matrix: &Matrix,
        inputs: &Inputs,
        cell: &Self::Cell,
        threads: usize,
        out: &Path,
    ) -> Result<Self::Record>;
    /// [`CellKind::run`], with the work it took when that is not its thread's CPU time (a
    /// cell that solves side by side inside): `None` for its thread's CPU time.
    fn run_with_work(
        &self,
        matrix: &Matrix,
        inputs: &Inputs,
        cell: &Self::Cell,
        threads: usize,
        out: &Path,
    ) -> Result<(Self::Record, Option<Work>)> {
        Ok((self.run(matrix, inputs, cell, threads, out)?, None))
    }
    /// Writes the kind's aggregates from its cells, every one finished in `out`.
    fn aggregate(&self, out: &Path, matrix: &Matrix, cells: &[Self::Cell]) -> Result<()>;

    /// The finished record of `cell` in `out`, if there is one with the right key.
    fn finished(&self, out: &Path, matrix: &Matrix, cell: &Self::Cell) -> Option<Self::Record> {
        read_keyed(
            &out.join(self.path(cell)),
            &self.key(matrix, cell),
            |r: &Self::Record| self.record_key(r),
        )
    }

    /// Runs `cell` and stores its record and wall time in `out`; the work it took.
    fn run_and_store(
        &self,
        matrix: &Matrix,
        inputs: &Inputs,
        cell: &Self::Cell,
        threads: usize,
        out: &Path,
    ) -> Result<Work> {
        let started = Instant::now();
        let cpu = cpu_time::ThreadTime::now();
        let (record, work) = self.run_with_work(matrix, inputs, cell, threads, out)?;
        let work = work.unwrap_or_else(|| Work::single(cpu.elapsed().as_secs_f64()));
        store_cell(
            out,
            &self.path(cell),
            &record,
            self.record_key(&record),
            started,
        )?;
        Ok(work)
    }

    /// The cells of shard `shard` (numbered from `first`) not finished in `out`, and how
    /// many of the shard's were finished already.
    fn todo(
        &self,
        matrix: &Matrix,
        out: &Path,
        first: usize,
        shard: Option<(usize, usize)>,
    ) -> Result<(Vec<Self::Cell>, usize)> {
        let mine = in_shard(self.cells(matrix)?, first, shard);
        let total = mine.len();
        let todo: Vec<Self::Cell> = mine
            .into_iter()
            .filter(|cell| self.finished(out, matrix, cell).is_none())
            .collect();
        let skipped = total - todo.len();
        Ok((todo, skipped))
    }
}

/// The items of shard `index` of `count`: item `i` is cell number `first_number + i`, and
/// cell `k` belongs to shard `k mod count`. All items without sharding.
pub(crate) fn in_shard<T>(
    items: Vec<T>,
    first_number: usize,
    shard: Option<(usize, usize)>,
) -> Vec<T> {
    items
        .into_iter()
        .enumerate()
        .filter(|(i, _)| shard.is_none_or(|(index, count)| (first_number + i) % count == index))
        .map(|(_, item)| item)
        .collect()
}

/// What the runner does with any kind, whatever its cell and record types.
pub(crate) trait AnyKind: Sync {
    fn name(&self) -> &'static str;
    /// The Rust type of the kind (for the test that every kind is registered).
    #[cfg(test)]
    fn type_name(&self) -> &'static str;
    fn count(&self, matrix: &Matrix) -> Result<usize>;
    /// Whether every cell is finished in `out`.
    fn complete(&self, out: &Path, matrix: &Matrix) -> Result<bool>;
    /// Every cell with the first of `dirs` holding it finished, and its time there.
    fn progress(&self, matrix: &Matrix, dirs: &[PathBuf]) -> Result<Vec<CellProgress>>;
    /// Copies into `out` each cell's record from the first shard that has it, byte for
    /// byte (a JSON round trip may move a float by one ulp); returns the cells no shard
    /// has finished, as paths inside a results folder. A cell file a shard holds that is
    /// not a finished cell of this matrix (cut short, edited, of another run) is an error
    /// naming it: merged over, it would read as "not run yet" and the damage go unseen.
    fn gather(&self, out: &Path, shards: &[PathBuf], matrix: &Matrix) -> Result<Vec<PathBuf>>;
    /// Writes the aggregates (every cell finished), or removes an earlier spec's when the
    /// matrix has no such study.
    fn aggregate_all(&self, out: &Path, matrix: &Matrix) -> Result<()>;
}

impl<K: CellKind> AnyKind for K {
    fn name(&self) -> &'static str {
        K::NAME
    }

    #[cfg(test)]
    fn type_name(&self) -> &'static str {
        std::any::type_name::<K>()
    }

    fn count(&self, matrix: &Matrix) -> Result<usize> {
        Ok(self.cells(matrix)?.len())
    }

    fn complete(&self, out: &Path, matrix: &Matrix) -> Result<bool> {
        Ok(self
            .cells(matrix)?
            .iter()
            .all(|cell| self.finished(out, matrix, cell).is_some()))
    }

    fn progress(&self, matrix: &Matrix, dirs: &[PathBuf]) -> Result<Vec<CellProgress>> {
        let cells = self.cells(matrix)?;
        Ok(cells
            .iter()
            .map(|cell| {
                let done_in = dirs
                    .iter()
                    .find(|dir| self.finished(dir, matrix, cell).is_some())
                    .cloned();
                let path = self.path(cell);
                let time = done_in
                    .as_deref()
                    .and_then(|dir| cell_time(dir, &path, &self.key(matrix, cell)));
                CellProgress::new(self.status_kind(cell), path, done_in, time)
            })
            .collect())
    }

    fn gather(&self, out: &Path, shards: &[PathBuf], matrix: &Matrix) -> Result<Vec<PathBuf>> {
        let mut missing = Vec::new();
        for cell in self.cells(matrix)? {
            if self.finished(out, matrix, &cell).is_some() {
                continue;
            }
            let relative = self.path(&cell);
            let mut source = None;
            for shard in shards {
                let file = shard.join(&relative);
                if !file.exists() {
                    continue;
                }
                if self.finished(shard, matrix, &cell).is_none() {
                    bail!(
                        "{}: not a finished cell of this matrix (cut short, edited, or from another run): delete it and rerun its shard, then merge again",
                        file.display()
                    );
                }
                source.get_or_insert(file);
            }
            match source {
                Some(from) => {
                    let bytes = std::fs::read(&from)
                        .with_context(|| format!("{}: cannot read", from.display()))?;
                    write_atomic(&out.join(&relative), &bytes)?;
                }
                None => missing.push(relative),
            }
        }
        Ok(missing)
    }

    fn aggregate_all(&self, out: &Path, matrix: &Matrix) -> Result<()> {
        if self.in_spec(matrix) {
            return self.aggregate(out, matrix, &self.cells(matrix)?);
        }
        for name in K::AGGREGATES {
            let path = out.join(name);
            if path.is_file() {
                std::fs::remove_file(&path)
                    .with_context(|| format!("cannot remove {}", path.display()))?;
            }
        }
        Ok(())
    }
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
    pub(crate) finished_at: Option<SystemTime>,
}

impl CellProgress {
    pub(crate) fn new(
        kind: Kind,
        path: PathBuf,
        done_in: Option<PathBuf>,
        time: Option<(f64, SystemTime)>,
    ) -> CellProgress {
        CellProgress {
            kind,
            path,
            done_in,
            seconds: time.map(|t| t.0),
            finished_at: time.map(|t| t.1),
        }
    }
}
