//! EaCO's exact counterpart in a bench: the instance of `gapbench_bounds::eaco_bound` built
//! from a replay's own numbers, and `eaco_bounds.csv`.
//!
//! The replay crate's accounting gives every number, so the bound and the replays cannot
//! drift apart: job classes are the distinct (request, utilisation, GPU memory) of the
//! jobs; a pattern is a multiset of classes one server can hold (CPU, memory and task
//! count by `ClusterState::fits`, each device's summed peak memory ≤ 100 %, the checks the
//! engine applies to every policy, oversubscribing ones included); its power is
//! `energy::node_power` of a server holding it, its slowdown `ColocationModel::slowdown`; the
//! base power is `node_power` of an empty server under the run's idle policy. Jobs run at
//! their trace configuration (speed 1, the configuration every EaCO-study policy uses).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Context, Result};
use gapbench_bounds::eaco_bound::{
    eaco_energy_bound, CoPattern, EacoBound, EacoBoundInput, EacoBoundOptions, EacoJob,
};
use gapbench_model::{Cluster, ClusterState, DeviceSet, NodeId, Placement, Task};
use gapbench_replay::devices::DeviceTable;
use gapbench_replay::energy::node_power;
use gapbench_replay::{derive_attributes, ReplayOptions, TimedWorkload};
use gapbench_results::eaco_bound::DEADLINE_WINDOWS;
use gapbench_results::{EacoBoundRow, EACO_BOUNDS_CSV};
use rayon::prelude::*;

use super::replay_cell::{ReplayCell, ReplayRecord};
use crate::bench::matrix::Matrix;
use crate::bench::sources::ReplaySource;
use crate::bench::spec::power_settings;
use crate::io::write_atomic;

/// A job class: the request and the derived attributes that set power and slowdown.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Class {
    cpu_milli: u32,
    memory_mib: u64,
    gpu_count: u8,
    gpu_milli: u16,
    util_permille: u32,
    gpu_memory_permille: u32,
}

/// The bound's instance for `workload` replayed with `options` on `cluster`: every job due
/// at `due_s(deadline)` (its deadline, or a later time).
pub fn bound_input(
    cluster: &Cluster,
    workload: &TimedWorkload,
    options: &ReplayOptions,
    due_s: impl Fn(f64) -> f64,
) -> Result<EacoBoundInput> {
    if cluster.node_types.len() != 1 || cluster.is_empty() {
        bail!("the EaCO bound needs a cluster of identical servers");
    }
    let node_type = cluster.node_types[0];
    let attributes = derive_attributes(&workload.tasks, options.seed, &options.deadlines);
    let mut classes: Vec<Class> = Vec::new();
    let mut jobs = Vec::with_capacity(workload.tasks.len());
    for (timed, attr) in workload.tasks.iter().zip(&attributes) {
        let task = &timed.task;
        if task.gpu_count != node_type.gpu_count || task.gpu_milli == 0 {
            bail!(
                "the EaCO bound needs whole-server GPU jobs: {} asks for {} GPUs of a {}-GPU server",
                task.name,
                task.gpu_count,
                node_type.gpu_count
            );
        }
        let class = Class {
            cpu_milli: task.cpu_milli,
            memory_mib: task.memory_mib,
            gpu_count: task.gpu_count,
            gpu_milli: task.gpu_milli,
            util_permille: attr.util_permille,
            gpu_memory_permille: attr.gpu_memory_permille,
        };
        let index = match classes.iter().position(|c| *c == class) {
            Some(i) => i,
            None => {
                classes.push(class);
                classes.len() - 1
            }
        };
        jobs.push(EacoJob {
            class: index,
            release_s: timed.arrival_s,
            due_s: due_s(attr.deadline_s),
            work_s: timed.duration_s,
        });
    }
    let server = Server::new(cluster, options, &classes);
    let base_mw = server.power_mw(&[])?;
    let mut patterns = Vec::new();
    let mut counts = vec![0u32; classes.len()];
    server.enumerate(0, &mut counts, base_mw, &mut patterns)?;
    Ok(EacoBoundInput {
        jobs,
        patterns,
        nodes: cluster.len(),
        base_watts: base_mw as f64 / 1000.0,
    })
}

/// One server of the cluster, on which patterns are tried with the replay's own checks.
struct Server<'a> {
    cluster: &'a Cluster,
    options: &'a ReplayOptions,
    classes: &'a [Class],
}

impl<'a> Server<'a> {
    fn new(cluster: &'a Cluster, options: &'a ReplayOptions, classes: &'a [Class]) -> Self {
        Server {
            cluster,
            options,
            classes,
        }
    }

    /// Every pattern extending `counts` at classes `from..` (each multiset once), pushed
    /// with its slowdown and power above `base_mw`. Adding a job never makes an unfit set
    /// fit, so the search stops at the first unfit one.
    fn enumerate(
        &self,
        from: usize,
        counts: &mut Vec<u32>,
        base_mw: i64,
        out: &mut Vec<CoPattern>,
    ) -> Result<()> {
        for c in from..self.classes.len() {
            counts[c] += 1;
            let members: Vec<usize> = counts
                .iter()
                .enumerate()
                .flat_map(|(c, &m)| std::iter::repeat_n(c, m as usize))
                .collect();
            if let Some(power_mw) = self.fit_power_mw(&members)? {
                let util: u32 = members.iter().map(|&c| self.classes[c].util_permille).sum();
                out.push(CoPattern {
                    counts: counts.clone(),
                    slowdown: self.options.colocation.slowdown(members.len(), util),
                    extra_watts: (power_mw - base_mw) as f64 / 1000.0,
                });
                self.enumerate(c, counts, base_mw, out)?;
            }
            counts[c] -= 1;
        }
        Ok(())
    }

    /// The power of a server holding `members` (class indices), if they fit on it.
    fn fit_power_mw(&self, members: &[usize]) -> Result<Option<i64>> {
        let node: NodeId = 0;
        let gpus = self.cluster.node_type(node).gpu_count;
        let all_devices = (0..usize::from(gpus)).fold(DeviceSet::EMPTY, |s, d| s.with(d));
        let mut state = ClusterState::empty(self.cluster);
        let mut devices = DeviceTable::new(self.cluster);
        for (i, &c) in members.iter().enumerate() {
            let class = &self.classes[c];
            // GPU capacity is the devices' memory (checked below), as for oversubscribing
            // policies: the host keeps CPU, memory and task count.
            let host = Task::new(
                format!("pattern-{i}"),
                class.cpu_milli,
                class.memory_mib,
                0,
                0,
            );
            if !state.fits(self.cluster, node, &host) {
                return Ok(None);
            }
            state.bind(
                &host,
                Placement {
                    node,
                    devices: DeviceSet::EMPTY,
                },
            );
            for d in all_devices.iter() {
                devices.add(
                    node,
                    d,
                    i as u32,
                    class.util_permille,
                    class.gpu_memory_permille,
                    u32::from(class.gpu_milli),
                    1000,
                );
            }
        }
        if devices
            .node(node)
            .iter()
            .any(|load| load.memory_permille > 1000)
        {
            return Ok(None);
        }
        let power = node_power(
            self.cluster,
            node,
            state.node(node),
            devices.node(node),
            &self.options.power,
            &self.options.colocation,
        );
        Ok(Some(power.total_mw()))
    }

    fn power_mw(&self, members: &[usize]) -> Result<i64> {
        self.fit_power_mw(members)?
            .context("an empty server always fits")
    }
}

/// The LP's slot length for `input`: an hour, or coarser so that a job's window spans
/// about 24 slots on average (windows up to a late policy's makespan are long), in whole
/// hours. Coarser slots give a weaker but equally valid bound.
pub fn bound_slot_s(input: &EacoBoundInput) -> f64 {
    let mean_window_s = input
        .jobs
        .iter()
        .map(|j| j.due_s - j.release_s)
        .sum::<f64>()
        / input.jobs.len().max(1) as f64;
    (mean_window_s / 24.0 / 3600.0).ceil().max(1.0) * 3600.0
}

/// The bound of one instance with the bench's settings (slots of [`bound_slot_s`]).
pub fn solve_bound(input: &EacoBoundInput) -> Result<EacoBound> {
    eaco_energy_bound(
        input,
        &EacoBoundOptions {
            slot_s: Some(bound_slot_s(input)),
            time_limit_s: 300.0,
            threads: Some(1),
        },
    )
    .map_err(anyhow::Error::msg)
}

/// The replay options a cell of `source` runs with, as far as the bound needs them (seed,
/// power, co-location, deadlines); `run_replay_cell` sets the same.
fn bound_options(matrix: &Matrix, source: &ReplaySource, idle: &str, seed: u64) -> ReplayOptions {
    let sleep_fraction = matrix
        .spec
        .replay
        .as_ref()
        .map_or(0.05, |r| r.sleep_fraction);
    ReplayOptions {
        seed,
        power: power_settings(idle, sleep_fraction),
        deadlines: source.deadline_factors(),
        ..ReplayOptions::default()
    }
}

/// One bound to compute: its instance and the row's labels.
struct BoundJob {
    source: ReplaySource,
    servers: usize,
    idle: String,
    seed: u64,
    deadline_factor: f64,
    windows: String,
    input: EacoBoundInput,
}

/// Writes `eaco_bounds.csv` for the EaCO sources of the matrix: per (source, idle, seed)
/// the bound with every job due at its deadline, and, for each policy that missed a
/// deadline, the bound with every job due at that policy's makespan (or its deadline, if
/// later), which holds for that policy's replay too. Bounds are solved in parallel, rows
/// written in cell order.
pub(crate) fn aggregate_eaco_bounds(
    out: &Path,
    matrix: &Matrix,
    cells: &[ReplayCell],
    record_of: impl Fn(&ReplayCell) -> Option<ReplayRecord>,
) -> Result<()> {
    let mut jobs: Vec<BoundJob> = Vec::new();
    let mut done: Vec<(String, String, u64)> = Vec::new();
    for cell in cells {
        if !matches!(cell.source, ReplaySource::Eaco { .. }) {
            continue;
        }
        let instance = (cell.source.name(), cell.idle.clone(), cell.seed);
        let record = record_of(cell).with_context(|| {
            format!(
                "replay {} {} seed {} is missing",
                instance.0, cell.policy, cell.seed
            )
        })?;
        let first = !done.contains(&instance);
        // A replay with unfinished jobs has no makespan to bound it by.
        let late = record.run.deadline_misses > 0 && record.run.unfinished == 0;
        if !first && !late {
            continue;
        }
        let makespan_end = late.then_some(record.run.makespan_s);
        if first {
            done.push(instance.clone());
        }
        jobs.extend(cell_bound_jobs(
            matrix,
            cell,
            first,
            makespan_end,
            &cell.policy,
        )?);
    }
    let path = out.join(EACO_BOUNDS_CSV);
    if jobs.is_empty() {
        if path.exists() {
            std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
        }
        return Ok(());
    }
    let rows: Vec<Result<EacoBoundRow>> = jobs
        .par_iter()
        .map(|job| {
            let bound = solve_bound(&job.input).with_context(|| {
                format!(
                    "EaCO bound of {} {} seed {} ({})",
                    job.source.name(),
                    job.idle,
                    job.seed,
                    job.windows
                )
            })?;
            Ok(bound_row(job, &bound))
        })
        .collect();
    let mut text = format!("{}\n", EacoBoundRow::csv_header());
    for row in rows {
        writeln!(text, "{}", row?.csv_line())?;
    }
    write_atomic(&path, text.as_bytes())
}

/// The bounds a cell of an EaCO source asks for: the deadline bound when `first` of its
/// (source, idle, seed), and the bound up to its makespan (seconds after the first
/// arrival) when it missed deadlines.
fn cell_bound_jobs(
    matrix: &Matrix,
    cell: &ReplayCell,
    first: bool,
    makespan_s: Option<f64>,
    policy: &str,
) -> Result<Vec<BoundJob>> {
    let ReplaySource::Eaco {
        servers,
        jobs: job_count,
        jobs_per_hour,
        deadline_factor,
    } = &cell.source
    else {
        return Ok(Vec::new());
    };
    let cluster = gapbench_replay::eaco_setup::eaco_cluster(*servers);
    let workload = gapbench_replay::eaco_setup::eaco_jobs(*job_count, *jobs_per_hour, cell.seed);
    let options = bound_options(matrix, &cell.source, &cell.idle, cell.seed);
    let start = workload
        .tasks
        .iter()
        .map(|t| t.arrival_s)
        .fold(f64::INFINITY, f64::min);
    let mut windows: Vec<(String, Option<f64>)> = Vec::new();
    if first {
        windows.push((DEADLINE_WINDOWS.to_string(), None));
    }
    if let Some(makespan) = makespan_s {
        windows.push((format!("makespan:{policy}"), Some(start + makespan)));
    }
    let mut jobs = Vec::new();
    for (label, end) in windows {
        let input = bound_input(&cluster, &workload, &options, |deadline| {
            end.map_or(deadline, |end| end.max(deadline))
        })?;
        jobs.push(BoundJob {
            source: cell.source.clone(),
            servers: *servers,
            idle: cell.idle.clone(),
            seed: cell.seed,
            deadline_factor: *deadline_factor,
            windows: label,
            input,
        });
    }
    Ok(jobs)
}

fn bound_row(job: &BoundJob, bound: &EacoBound) -> EacoBoundRow {
    EacoBoundRow {
        source: job.source.name(),
        nodes: job.servers,
        idle: job.idle.clone(),
        seed: job.seed,
        deadline_factor: job.deadline_factor,
        windows: job.windows.clone(),
        bound_kwh: bound.lower_kwh,
        closed_form_kwh: bound.closed_form_kwh,
        lp_kwh: bound.lp_kwh,
        lp_status: bound.lp_status.label().to_string(),
        slot_s: bound.slot_s,
        slots: bound.slots,
        columns: bound.columns,
        rows: bound.rows,
        patterns: job.input.patterns.len(),
    }
}
