//! The energy bound of a replay (`gapbench_bounds::replay_bound`) from what the replay did:
//! its tasks at their own start and end times, its power model, and what its policy may do
//! that lowers power (re-clock, oversubscribe, choose GPU counts). The ilp crate knows no
//! engine; this is where a `ReplayResult` becomes the bound's input.
//!
//! A bound is keyed by a hash of its whole input ([`bound_key`]): replays that ran the
//! same tasks at the same times under the same power model share one.

use std::path::Path;

use anyhow::{Context, Result};
use gapbench_bounds::replay_bound::{
    replay_energy_bound, BoundOptions, BoundPower, BoundTask, GpuPowerBound, IdleBound,
    ReplayBound, ReplayBoundInput,
};
use gapbench_model::{Cluster, TypicalPods};
use gapbench_replay::policies::power_levers;
use gapbench_replay::{
    ColocationModel, GpuPowerMode, IdlePolicy, PowerSettings, ReplayResult, TimedWorkload,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

mod mip_check;

pub use mip_check::{
    check_against_mip, check_runs, print_mip_check, MipCheck, MipCheckWindow, MAX_MIP_CHECK_NODES,
};

/// Default wall-clock limit of one replay's bound, seconds.
pub const DEFAULT_BOUND_TIME_LIMIT_S: f64 = 60.0;
/// Default most windows of one replay's bound.
pub const DEFAULT_BOUND_WINDOWS: usize = 48;
/// Default most exact pricing rounds per window of one replay's bound.
pub const DEFAULT_BOUND_PRICING_ROUNDS: usize = 60;
/// Default most branch-and-price tree nodes per window of one replay's bound.
pub const DEFAULT_BOUND_BRANCH_NODES: usize = 20;

/// The bound's options for a time limit, a window budget, a round cap per window (`None`:
/// the clock alone) and a tree-node cap per window (`None`: the LP's bound, no branching):
/// column generation may take up to a sixth of the limit per window, so the first windows
/// cannot take it all.
pub fn bound_options(
    time_limit_s: f64,
    max_windows: usize,
    max_pricing_rounds: Option<usize>,
    max_branch_nodes: Option<usize>,
) -> BoundOptions {
    BoundOptions {
        time_limit_s,
        max_windows,
        initial_windows: BoundOptions::default().initial_windows.min(max_windows),
        window_time_limit_s: time_limit_s / 6.0,
        max_pricing_rounds,
        max_branch_nodes,
    }
}

/// What the bound of one replay needs besides the replay itself.
pub struct BoundRequest<'a> {
    pub cluster: &'a Cluster,
    pub workload: &'a TimedWorkload,
    pub result: &'a ReplayResult,
    /// The policy's name as the engine knows it (no budget share).
    pub policy: &'a str,
    pub power: &'a PowerSettings,
    pub colocation: &'a ColocationModel,
    pub options: BoundOptions,
}

/// A bound as stored and reported: its energy, status and per-window power.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoundRecord {
    pub key: String,
    pub energy_kwh: f64,
    /// The same windows' configuration-LP bound, before branching: `energy_kwh` less
    /// what integer wake-ups and placements add.
    pub lp_energy_kwh: f64,
    /// `windows_integer`, `branch_limit`, `windows_converged`, `round_limit` or
    /// `time_limit` (`ReplayBoundStatus`).
    pub status: String,
    /// Tasks the bound counts, and those left out (undone or moved while running).
    pub tasks: usize,
    pub left_out: usize,
    pub seconds: f64,
    /// `(from_s, to_s, watts)` per window, in time order.
    pub windows: Vec<(f64, f64, f64)>,
}

impl BoundRecord {
    fn of(key: String, bound: &ReplayBound, tasks: usize, left_out: usize) -> Self {
        BoundRecord {
            key,
            energy_kwh: bound.energy_j / gapbench_replay::energy::JOULES_PER_KWH,
            lp_energy_kwh: bound.lp_energy_j / gapbench_replay::energy::JOULES_PER_KWH,
            status: bound.status.label().to_string(),
            tasks,
            left_out,
            seconds: bound.seconds,
            windows: bound
                .windows
                .iter()
                .map(|w| (w.from_s, w.to_s, w.watts))
                .collect(),
        }
    }

    /// The bound's power at `time_s` (the last window's at the span's end, where the
    /// replay's last state is; 0 outside the span).
    pub fn watts_at(&self, time_s: f64) -> f64 {
        let i = self.windows.partition_point(|w| w.1 <= time_s);
        match self.windows.get(i) {
            Some(w) if w.0 <= time_s => w.2,
            Some(_) => 0.0,
            None => self
                .windows
                .last()
                .filter(|w| w.1 == time_s)
                .map_or(0.0, |w| w.2),
        }
    }

    /// `(energy − bound) / bound`; `None` for a zero bound.
    pub fn gap(&self, energy_kwh: f64) -> Option<f64> {
        (self.energy_kwh > 0.0).then(|| (energy_kwh - self.energy_kwh) / self.energy_kwh)
    }
}

/// The replay's tasks as the bound takes them: every task that started, from its first
/// start to its end (the replay's end if still running), on its trace request; tasks
/// undone or reconfigured while running are left out (their `[start, end)` is not one stay
/// on one request; leaving tasks out keeps the bound valid). Returns the left-out count.
pub fn bound_tasks(workload: &TimedWorkload, result: &ReplayResult) -> (Vec<BoundTask>, usize) {
    let mut left_out = 0;
    let mut tasks = Vec::new();
    for (timed, record) in workload.tasks.iter().zip(&result.tasks) {
        let Some(start_s) = record.start_s else {
            continue;
        };
        if record.undos > 0 || record.reconfigurations > 0 {
            left_out += 1;
            continue;
        }
        let end_s = record.end_s.unwrap_or(result.end_s).min(result.end_s);
        tasks.push(BoundTask {
            task: timed.task.clone(),
            start_s: start_s.max(result.start_s),
            end_s,
            util_permille: record.attributes.util_permille,
            gpu_memory_permille: record.attributes.gpu_memory_permille,
        });
    }
    (tasks, left_out)
}

/// The replay's power model with the policy's levers, as the bound takes it.
pub fn bound_power(
    policy: &str,
    power: &PowerSettings,
    colocation: &ColocationModel,
) -> BoundPower {
    let levers = power_levers(policy);
    BoundPower {
        gpu: match power.gpu_mode {
            GpuPowerMode::Reservation => GpuPowerBound::Reservation,
            GpuPowerMode::Utilisation => GpuPowerBound::Utilisation {
                eta_min: colocation
                    .power_eta
                    .iter()
                    .copied()
                    .fold(f64::INFINITY, f64::min),
                eta_alone: colocation.power_eta(1),
            },
        },
        idle: match power.idle {
            IdlePolicy::AlwaysOn => IdleBound::AlwaysOn,
            IdlePolicy::SleepWhenEmpty => IdleBound::SleepWhenEmpty {
                sleep_fraction: power.sleep_fraction,
            },
        },
        reclocks: levers.reclocks,
        oversubscribed: levers.oversubscribes,
        chooses_gpu_count: levers.chooses_gpu_count,
    }
}

/// A hash of everything a bound depends on: the cluster's node types and counts, the
/// tasks (request, start, end, utilisation, memory), the span, the power model and the
/// options.
pub fn bound_key(
    cluster: &Cluster,
    tasks: &[BoundTask],
    span_s: (f64, f64),
    power: &BoundPower,
    options: &BoundOptions,
) -> String {
    let mut hasher = Sha256::new();
    hasher.update(format!(
        "gapbench-replay-bound-v2|{}|{:?}|{:?}|{:?}|",
        env!("CARGO_PKG_VERSION"),
        span_s,
        power,
        options
    ));
    for node in &cluster.nodes {
        hasher.update(format!(
            "{:?}|",
            cluster.node_types[usize::from(node.type_id)]
        ));
    }
    for t in tasks {
        hasher.update(format!(
            "{:?}|{}|{}|{}|{}|",
            t.task,
            t.start_s.to_bits(),
            t.end_s.to_bits(),
            t.util_permille,
            t.gpu_memory_permille
        ));
    }
    crate::workload::hex(&hasher.finalize()[..8])
}

/// The bound's input parts of one replay: its tasks (and the left-out count), span,
/// power model and its own power steps.
struct BoundParts {
    tasks: Vec<BoundTask>,
    left_out: usize,
    span_s: (f64, f64),
    power: BoundPower,
    reference: Vec<(f64, f64)>,
}

impl BoundParts {
    fn of(request: &BoundRequest) -> Self {
        let result = request.result;
        let (tasks, left_out) = bound_tasks(request.workload, result);
        BoundParts {
            tasks,
            left_out,
            span_s: (result.start_s, result.end_s),
            power: bound_power(request.policy, request.power, request.colocation),
            reference: result
                .timeline
                .iter()
                .map(|row| (row.time_s, row.power_watts))
                .collect(),
        }
    }

    fn input<'a>(&'a self, cluster: &'a Cluster, typical: &'a TypicalPods) -> ReplayBoundInput<'a> {
        ReplayBoundInput {
            cluster,
            typical,
            tasks: &self.tasks,
            span_s: self.span_s,
            power: self.power,
            reference: &self.reference,
        }
    }
}

/// The bound of one replay, read from `cache` (a folder of bounds by key) when there,
/// computed and stored there otherwise.
pub fn replay_bound(request: &BoundRequest, cache: Option<&Path>) -> Result<BoundRecord> {
    let parts = BoundParts::of(request);
    let key = bound_key(
        request.cluster,
        &parts.tasks,
        parts.span_s,
        &parts.power,
        &request.options,
    );
    let path = cache.map(|dir| dir.join(format!("{key}.json")));
    if let Some(path) = &path {
        if let Some(record) = crate::io::read_keyed(path, &key, |r: &BoundRecord| &r.key) {
            return Ok(record);
        }
    }
    let typical = TypicalPods::default();
    let input = parts.input(request.cluster, &typical);
    let bound = replay_energy_bound(&input, &request.options).map_err(anyhow::Error::msg)?;
    let record = BoundRecord::of(key, &bound, parts.tasks.len(), parts.left_out);
    if let Some(path) = &path {
        crate::io::write_json(path, &record)?;
    }
    Ok(record)
}

/// The bound request of one seed's replay.
fn seed_request<'a>(
    inputs: &'a crate::replay::ReplayInputs,
    workload: &'a TimedWorkload,
    result: &'a ReplayResult,
    policy: &'a str,
    options: &'a gapbench_replay::ReplayOptions,
    bound_options: BoundOptions,
) -> BoundRequest<'a> {
    BoundRequest {
        cluster: &inputs.cluster,
        workload,
        result,
        policy,
        power: &options.power,
        colocation: &options.colocation,
        options: bound_options,
    }
}

/// Where a seed's outputs go: `out/seed-N/` when `per_seed_folders`, else `out`.
fn seed_folder(out: &Path, seed: u64, per_seed_folders: bool) -> std::path::PathBuf {
    if per_seed_folders {
        out.join(format!("seed-{seed}"))
    } else {
        out.to_path_buf()
    }
}

/// The bound of every seed's replay of `policy` (in the runs' order, seeds in parallel),
/// each written into its replay's timeline as `bound_power_watts`.
pub fn bound_runs(
    inputs: &crate::replay::ReplayInputs,
    policy: &str,
    options: &gapbench_replay::ReplayOptions,
    bound_options: BoundOptions,
    runs: &mut [crate::replay::SeedReplay],
) -> Result<Vec<BoundRecord>> {
    runs.par_iter_mut()
        .map(|run| -> Result<BoundRecord> {
            let workload = inputs.workload(run.seed)?;
            let request = seed_request(
                inputs,
                &workload,
                &run.result,
                policy,
                options,
                bound_options,
            );
            let record = replay_bound(&request, None)
                .with_context(|| format!("the energy bound of seed {}", run.seed))?;
            for row in &mut run.result.timeline {
                row.bound_power_watts = Some(record.watts_at(row.time_s));
            }
            Ok(record)
        })
        .collect()
}

/// Writes each run's `bound.json` (under `seed-N/` when `per_seed_folders`; the
/// timelines were written with the bound's power) and prints one line per seed.
pub fn write_bounds(
    out: &Path,
    runs: &[crate::replay::SeedReplay],
    bounds: &[BoundRecord],
    per_seed_folders: bool,
) -> Result<()> {
    if bounds.is_empty() {
        return Ok(());
    }
    println!(
        "\nenergy bound (any placement of the same tasks at this replay's start and end times, tasks free to move between windows):"
    );
    println!(
        "{:>6} {:>12} {:>12} {:>9} {:>18} {:>8} {:>9} {:>9}",
        "seed", "energy kWh", "bound kWh", "gap", "status", "windows", "left out", "seconds"
    );
    for (run, bound) in runs.iter().zip(bounds) {
        let folder = seed_folder(out, run.seed, per_seed_folders);
        crate::io::write_json(&folder.join("bound.json"), bound)?;
        let energy = run.result.ledger.cluster.total_kwh();
        let gap = bound
            .gap(energy)
            .map_or("none".to_string(), |g| format!("{:.2} %", 100.0 * g));
        println!(
            "{:>6} {:>12.1} {:>12.1} {:>9} {:>18} {:>8} {:>9} {:>9.1}",
            run.seed,
            energy,
            bound.energy_kwh,
            gap,
            bound.status,
            bound.windows.len(),
            bound.left_out,
            bound.seconds
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use gapbench_model::testing::openb_traces_dir;
    use gapbench_replay::policies::time_policy;
    use gapbench_replay::{GpuPowerMode, IdlePolicy, PowerSettings, ReplayOptions};

    use super::*;
    use crate::bench::kind::CellKind;
    use crate::bench::kinds::replay::{run_replay_cell, Replays};
    use crate::bench::Matrix;
    use crate::replay::{ReplayInputs, Selection, TimedSource};

    /// Every policy of the paper bench's `[replay]` on the default trace at its real times,
    /// both idle policies, seed 42: the bound is at most the replay's energy.
    #[test]
    fn the_bound_is_at_most_every_paper_policys_energy() {
        let paper = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/paper.toml"),
        )
        .unwrap();
        let paper: toml::Value = toml::from_str(&paper).unwrap();
        let policies = paper["replay"]["policies"].as_array().unwrap();
        let policies: Vec<String> = policies
            .iter()
            .map(|p| format!("\"{}\"", p.as_str().unwrap()))
            .collect();
        let text = format!(
            "name = \"b\"\nnodes = \"openb_node_list_gpu_node.csv\"\n[replay]\ntraces = [\"default\"]\npolicies = [{}]\nseeds = [42]\nidle = [\"always-on\", \"sleep-when-empty\"]\ncarbon = \"caiso-2023\"\n[replay.bound]\ntime_limit_s = 1.5\nmax_windows = 8\n",
            policies.join(", ")
        );
        let spec: crate::bench::spec::BenchSpec = toml::from_str(&text).unwrap();
        let traces = openb_traces_dir();
        let (matrix, inputs) = Matrix::resolve(spec, Some(&traces)).unwrap();
        let workloads = inputs.replays;
        let cells = Replays.cells(&matrix).unwrap();
        assert_eq!(cells.len(), 2 * policies.len());
        for cell in &cells {
            let record = run_replay_cell(&matrix, &workloads, cell, None).unwrap();
            let run = &record.run;
            let bound = run.bound_kwh.expect("the spec asks for a bound");
            assert!(
                bound > 0.0 && bound <= run.energy_kwh * (1.0 + 1e-9),
                "{} {}: bound {bound} kWh above the replay's {} kWh",
                cell.policy,
                cell.idle,
                run.energy_kwh
            );
            assert!(run.bound_gap.is_some_and(|g| g >= -1e-9));
        }
    }

    /// The openb node list and default trace, `selection` of them, arrivals at `scale`.
    pub(super) fn openb_default(selection: Selection, scale: f64) -> ReplayInputs {
        let traces = openb_traces_dir();
        ReplayInputs::load(
            TimedSource::Openb {
                nodes: Some(traces.join("openb_node_list_gpu_node.csv")),
                gpu_models: None,
                tasks: Some(traces.join("openb_pod_list_default.csv")),
            },
            scale,
            selection,
            gapbench_model::InputRules::Reference,
            gapbench_model::CpuPowerProfile::Reference,
        )
        .unwrap()
    }

    /// Reservation-mode GPU power, with the levers that need a relaxation (devices
    /// shared beyond reservations, re-clocking) and a contended slice where starts wait:
    /// the bound holds for the replay's own times.
    #[test]
    fn the_bound_holds_in_reservation_mode_and_when_tasks_wait() {
        let selection = Selection {
            gpus: Some(8),
            first_jobs: Some(100),
            max_duration_s: Some(86_400.0),
            gpu_tasks_only: true,
        };
        let inputs = openb_default(selection, 4.0);
        let workload = inputs.workload(42).unwrap();
        let mut waited = 0;
        for policy in ["fgd", "eaco-o", "fifo-packed-o", "zeus", "gandiva"] {
            for idle in [IdlePolicy::AlwaysOn, IdlePolicy::SleepWhenEmpty] {
                let options = ReplayOptions {
                    power: PowerSettings {
                        gpu_mode: GpuPowerMode::Reservation,
                        idle,
                        sleep_fraction: 0.05,
                    },
                    ..ReplayOptions::default()
                };
                let mut engine_policy = time_policy(policy, &inputs.cluster).unwrap();
                let result = gapbench_replay::run(
                    &inputs.cluster,
                    &workload,
                    engine_policy.as_mut(),
                    &options,
                );
                waited += result
                    .tasks
                    .iter()
                    .filter(|t| t.wait_s().is_some_and(|w| w > 0.0))
                    .count();
                let request = BoundRequest {
                    cluster: &inputs.cluster,
                    workload: &workload,
                    result: &result,
                    policy,
                    power: &options.power,
                    colocation: &options.colocation,
                    options: bound_options(2.0, 16, None, None),
                };
                let bound = replay_bound(&request, None).unwrap();
                let energy = result.ledger.cluster.total_kwh();
                assert!(
                    bound.energy_kwh > 0.0 && bound.energy_kwh <= energy * (1.0 + 1e-9),
                    "{policy} {idle:?}: bound {} kWh above {energy} kWh",
                    bound.energy_kwh
                );
            }
        }
        assert!(waited > 0, "no task waited: the slice is not contended");
    }
}
