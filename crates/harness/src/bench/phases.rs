//! A bench's phases over the cells of one shard not yet finished: each cell stored with its
//! time as it finishes, with progress.
//!
//! The order of the phases is a matter of cores. Whole-cluster gap solves run one at a time
//! on every core with nothing beside them: next to another HiGHS solve they slowed down many
//! times over (measured), which their time limits cannot absorb. Sub-cluster studies (one
//! core per solve, 8 nodes) then run beside the replays: alone, a study left a core idle
//! while a checkpoint's single instance solved (146 % of 2 cores, paper bench).

use std::time::Instant;

use anyhow::{Context, Result};
use gapbench_replay::policies::{time_policy, TimePolicySpec};
use rayon::prelude::*;

use super::kind::CellKind;
use super::kinds::gap::{gap_settings, GapCell, GapStudies};
use super::kinds::replay::{ReplayCell, Replays};
use super::matrix::{Inputs, Matrix};
use crate::progress::Progress;

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
    /// progress bar named `label`; returns their wall time.
    pub(crate) fn side_by_side<K: CellKind>(
        &self,
        kind: &K,
        todo: &[K::Cell],
        label: &str,
    ) -> Result<f64> {
        let progress = Progress::new(self.progress && !todo.is_empty(), todo.len(), label);
        let start = Instant::now();
        self.pool.install(|| {
            todo.par_iter().try_for_each(|cell| -> Result<()> {
                kind.run_and_store(self.matrix, self.inputs, cell, 1, self.out)?;
                progress.inc(1);
                Ok(())
            })
        })?;
        progress.finish_and_clear();
        Ok(start.elapsed().as_secs_f64())
    }

    /// Runs the whole-cluster gap studies of `gaps`, one at a time on every core, then the
    /// sub-cluster ones beside the `replays`; returns the wall time of the gap studies (the
    /// whole-cluster ones, then the sub-cluster ones) and of the replays.
    pub(crate) fn gaps_beside_replays(
        &self,
        gaps: &[GapCell],
        replays: &[ReplayCell],
    ) -> Result<(f64, f64)> {
        let gap_progress =
            Progress::new(self.progress && !gaps.is_empty(), gaps.len(), "gap studies");
        let (whole, sampled): (Vec<&GapCell>, Vec<&GapCell>) =
            gaps.iter().partition(|cell| cell.full_cluster);
        let whole_start = Instant::now();
        let cores = self.pool.current_num_threads();
        for cell in whole {
            GapStudies.run_and_store(self.matrix, self.inputs, cell, cores, self.out)?;
            gap_progress.inc(1);
        }
        let whole_seconds = whole_start.elapsed().as_secs_f64();

        let replay_progress = Progress::new(
            self.progress && !replays.is_empty(),
            replays.len(),
            "replays",
        );
        let start = Instant::now();
        let seconds = || start.elapsed().as_secs_f64();
        let (sampled_seconds, replay_seconds) = self.pool.install(|| {
            rayon::join(
                || {
                    sampled.par_iter().try_for_each(|cell| -> Result<()> {
                        GapStudies.run_and_store(self.matrix, self.inputs, cell, 1, self.out)?;
                        gap_progress.inc(1);
                        Ok(())
                    })?;
                    Ok::<_, anyhow::Error>(seconds())
                },
                || {
                    replays.par_iter().try_for_each(|cell| -> Result<()> {
                        Replays.run_and_store(self.matrix, self.inputs, cell, 1, self.out)?;
                        replay_progress.inc(1);
                        Ok(())
                    })?;
                    Ok::<_, anyhow::Error>(seconds())
                },
            )
        });
        gap_progress.finish_and_clear();
        replay_progress.finish_and_clear();
        Ok((whole_seconds + sampled_seconds?, replay_seconds?))
    }
}
