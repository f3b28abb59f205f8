//! A bench's sweeps, gap studies and replays over the cells of one shard not yet finished:
//! each cell written atomically with its time as it finishes, with progress. (The budget
//! study runs after them, `budget_study::run_budget_cells`.)
//!
//! The order of the phases is a matter of cores. Whole-cluster gap solves run one at a time
//! on every core with nothing beside them: next to another HiGHS solve they slowed down many
//! times over (measured), which their time limits cannot absorb. Sub-cluster studies (one
//! core per solve, 8 nodes) then run beside the replays: alone, a study left a core idle
//! while a checkpoint's single instance solved (146 % of 2 cores, paper bench).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use gapbench_model::{NodeOrder, TaskOrder};
use gapbench_replay::policies::{time_policy, TimePolicySpec};
use rayon::prelude::*;

use crate::bench::Matrix;
use crate::cells::{cell_path, gap_cell_path, run_gap_cell, Cell, CellRecord, GapCell};
use crate::io::write_json;
use crate::progress::Progress;
use crate::replay_cells::{
    replay_bounds_dir, replay_cell_path, run_replay_cell, ReplayCell, ReplayWorkloads,
};
use crate::run::{run_seed, seed_summary, RunSettings};
use crate::status::record_cell_time;
use crate::workload::Workload;

/// Refuses, before any cell runs, what the spec asks of inputs that cannot give it: a
/// sub-cluster larger than a gap trace's cluster, a gap setting the study refuses, a time
/// policy that cannot run on a replay source's cluster. Found only when its cell came up,
/// each was refused after hours of sweeps.
pub(crate) fn check_against_inputs(
    matrix: &Matrix,
    workloads: &BTreeMap<String, Workload>,
    replay_workloads: &ReplayWorkloads,
) -> Result<()> {
    for cell in matrix.gap_cells()? {
        let settings = matrix.gap_settings(&cell, 1)?;
        settings.validate()?;
        let study = if cell.full_cluster {
            "[gaps.full_cluster]"
        } else {
            "[gaps]"
        };
        let workload = &workloads[&cell.trace];
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
        for ((source, _), inputs) in replay_workloads {
            time_policy(&base, &inputs.cluster).map_err(|e| {
                anyhow::anyhow!("[replay] policy `{policy}` on source `{source}`: {e}")
            })?;
        }
    }
    Ok(())
}

/// Runs the arrival sweeps `todo` side by side on `pool`; returns their wall time.
pub(crate) fn run_sweeps(
    matrix: &Matrix,
    workloads: &BTreeMap<String, Workload>,
    out: &Path,
    todo: &[&Cell],
    pool: &rayon::ThreadPool,
    progress: bool,
) -> Result<f64> {
    let progress = Progress::new(progress, todo.len(), "runs");
    let start = Instant::now();
    pool.install(|| {
        todo.par_iter().try_for_each(|cell| -> Result<()> {
            let started = Instant::now();
            let workload = &workloads[&cell.trace];
            let settings = RunSettings::new(
                cell.policy.clone(),
                Some(matrix.spec.tune),
                TaskOrder::Shuffled,
                NodeOrder::Random,
            );
            let run = run_seed(workload, &settings, cell.seed);
            let record = CellRecord {
                key: matrix.cell_key(cell),
                trace: cell.trace.clone(),
                policy: cell.policy.to_string(),
                summary: seed_summary(&workload.cluster, &run),
            };
            let path = cell_path(out, cell);
            write_json(&path, &record)?;
            record_cell_time(out, &path, &record.key, started)?;
            progress.inc(1);
            Ok(())
        })
    })?;
    progress.finish_and_clear();
    Ok(start.elapsed().as_secs_f64())
}

/// What [`run_gaps_and_replays`] runs and where.
pub(crate) struct GapsAndReplays<'a> {
    pub matrix: &'a Matrix,
    pub workloads: &'a BTreeMap<String, Workload>,
    pub replay_workloads: &'a ReplayWorkloads,
    pub out: &'a Path,
    pub pool: &'a rayon::ThreadPool,
    pub progress: bool,
}

impl GapsAndReplays<'_> {
    /// Runs the whole-cluster gap studies of `gaps`, one at a time on every core, then the
    /// sub-cluster ones beside the `replays`; returns the wall time of the gap studies (the
    /// whole-cluster ones, then the sub-cluster ones) and of the replays.
    pub(crate) fn run(&self, gaps: &[&GapCell], replays: &[&ReplayCell]) -> Result<(f64, f64)> {
        let gap_progress =
            Progress::new(self.progress && !gaps.is_empty(), gaps.len(), "gap studies");
        let (whole, sampled): (Vec<&GapCell>, Vec<&GapCell>) =
            gaps.iter().partition(|cell| cell.full_cluster);
        let whole_start = Instant::now();
        let cores = self.pool.current_num_threads();
        for cell in whole {
            self.run_gap(cell, cores)?;
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
                        self.run_gap(cell, 1)?;
                        gap_progress.inc(1);
                        Ok(())
                    })?;
                    Ok::<_, anyhow::Error>(seconds())
                },
                || {
                    replays.par_iter().try_for_each(|cell| -> Result<()> {
                        self.run_replay(cell)?;
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

    /// One gap study, its solves on `threads` cores (side by side on one core each when 1).
    fn run_gap(&self, cell: &GapCell, threads: usize) -> Result<()> {
        let started = Instant::now();
        let settings = self.matrix.gap_settings(cell, threads)?;
        let workload = &self.workloads[&cell.trace];
        let record = run_gap_cell(self.matrix, &settings, workload, cell, threads == 1)?;
        let path = gap_cell_path(self.out, cell);
        write_json(&path, &record)?;
        record_cell_time(self.out, &path, &record.key, started)
    }

    fn run_replay(&self, cell: &ReplayCell) -> Result<()> {
        let started = Instant::now();
        let bounds = replay_bounds_dir(self.out);
        let record = run_replay_cell(self.matrix, self.replay_workloads, cell, Some(&bounds))?;
        let path = replay_cell_path(self.out, cell);
        write_json(&path, &record)?;
        record_cell_time(self.out, &path, &record.key, started)
    }
}
