//! A bench's phases over the cells of one shard not yet finished: each cell stored with its
//! time as it finishes, with progress.
//!
//! Every phase runs its cells side by side on the pool's cores, and the gap studies beside
//! the replays: a gap study solves its distinct instances side by side inside too, each
//! solve on one core (HiGHS `threads = 1`), so a machine with more cores is never left
//! waiting on one study's solves one after another. Each phase reports its wall time and
//! its [`Work`]: core-seconds and the critical path, what more cores could buy.

use std::time::Instant;

use anyhow::{Context, Result};
use gapbench_replay::policies::{time_policy, TimePolicySpec};
use rayon::prelude::*;

use super::kind::CellKind;
use super::kinds::gap::{gap_settings, GapCell, GapStudies};
use super::kinds::replay::{ReplayCell, Replays};
use super::matrix::{Inputs, Matrix};
use crate::progress::Progress;
use crate::work::Work;

/// Refuses, before any cell runs, what the spec asks of inputs that cannot give it: a
/// sub-cluster larger than a gap trace's cluster, a gap setting the study refuses, a time
/// policy that cannot run on a replay source's cluster. Found only when its cell came up,
/// each was refused after hours of sweeps.
pub(crate) fn check_against_inputs(matrix: &Matrix, inputs: &Inputs) -> Result<()> {
    for cell in GapStudies.cells(matrix)? {
        let settings = gap_settings(matrix, &cell, 1)?;
        settings.validate()?;
        let study = if cell.full_cluster {
            "[gaps.full_cluster]"
        } else {
            "[gaps]"
        };
        let workload = &inputs.workloads[&cell.trace];
        crate::gap::study_cluster(workload, &settings, cell.seed).with_context(|| {
            format!(
                "{study} on trace `{}` ({} nodes), seed {}",
                cell.trace,
                workload.cluster.len(),
                cell.seed
            )
        })?;
    }
    let policies = matrix.spec.replay.iter().flat_map(|r| &r.policies);
    for policy in policies {
        let base = policy.parse::<TimePolicySpec>()?.name;
        for ((source, _), replay_inputs) in &inputs.replays {
            time_policy(&base, &replay_inputs.cluster).map_err(|e| {
                anyhow::anyhow!("[replay] policy `{policy}` on source `{source}`: {e}")
            })?;
        }
    }
    Ok(())
}

/// Where the phases run.
pub(crate) struct Phases<'a> {
    pub matrix: &'a Matrix,
    pub inputs: &'a Inputs,
    pub out: &'a std::path::Path,
    pub pool: &'a rayon::ThreadPool,
    pub progress: bool,
}

impl Phases<'_> {
    /// Runs the cells `todo` of `kind` side by side on the pool, one core each, with a
    /// progress bar named `label`; returns their wall time and work.
    pub(crate) fn side_by_side<K: CellKind>(
        &self,
        kind: &K,
        todo: &[K::Cell],
        label: &str,
    ) -> Result<(f64, Work)> {
        let progress = Progress::new(self.progress && !todo.is_empty(), todo.len(), label);
        let start = Instant::now();
        let work = self.run_beside(kind, todo, &progress)?;
        progress.finish_and_clear();
        Ok((start.elapsed().as_secs_f64(), work))
    }

    /// Runs the gap studies of `gaps` beside the `replays`, every cell on the pool (a gap
    /// study's solves side by side inside it, one core each); returns the wall time and
    /// work of the gap studies, then of the replays.
    pub(crate) fn gaps_beside_replays(
        &self,
        gaps: &[GapCell],
        replays: &[ReplayCell],
    ) -> Result<((f64, Work), (f64, Work))> {
        let gap_progress =
            Progress::new(self.progress && !gaps.is_empty(), gaps.len(), "gap studies");
        let replay_progress = Progress::new(
            self.progress && !replays.is_empty(),
            replays.len(),
            "replays",
        );
        let start = Instant::now();
        let seconds = || start.elapsed().as_secs_f64();
        let (gap_phase, replay_phase) = rayon::join(
            || {
                let work = self.run_beside(&GapStudies, gaps, &gap_progress)?;
                Ok::<_, anyhow::Error>((seconds(), work))
            },
            || {
                let work = self.run_beside(&Replays, replays, &replay_progress)?;
                Ok::<_, anyhow::Error>((seconds(), work))
            },
        );
        gap_progress.finish_and_clear();
        replay_progress.finish_and_clear();
        Ok((gap_phase?, replay_phase?))
    }

    /// Runs `cells` of `kind` side by side on the pool (each told it has one core: a cell
    /// that works side by side inside does so on the same pool), counting each on
    /// `progress`; their work, free to run side by side.
    fn run_beside<K: CellKind>(
        &self,
        kind: &K,
        cells: &[K::Cell],
        progress: &Progress,
    ) -> Result<Work> {
        let works: Vec<Work> = self.pool.install(|| {
            cells
                .par_iter()
                .map(|cell| -> Result<Work> {
                    let work = kind.run_and_store(self.matrix, self.inputs, cell, 1, self.out)?;
                    progress.inc(1);
                    Ok(work)
                })
                .collect::<Result<_>>()
        })?;
        Ok(Work::all_beside(works))
    }
}
