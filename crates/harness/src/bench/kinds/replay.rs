//! The time-mode cells of a bench (`[replay]`): one replay each, per (source, arrival
//! scale, idle policy, policy, seed), stored as a JSON file keyed by a hash of everything
//! that determines it (the replay schema version included), and aggregated into
//! `replay_runs.csv` and `replay_timeline.csv`. Every time policy runs here in the one
//! engine, so they share one energy table: a budgeted policy is named with its budget as a
//! share of full-clock FIFO's spend on the same cell (`powerflow@1.0`: FIFO's job energy,
//! `greenflow@1.0`: FIFO's job carbon), which the cell replays first to know it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use gapbench_replay::policies::{time_policy, BudgetTarget, TimePolicyKind, TimePolicySpec};
use gapbench_replay::{ReplayOptions, ReplayResult, TimedWorkload};
use gapbench_results::replay::TIMELINE_SAMPLES;
use gapbench_results::{
    ReplayKey, ReplayRunRow, ReplayTimelineRow, EACO_BOUNDS_CSV, REPLAY_RUNS_CSV,
    REPLAY_SCHEMA_VERSION, REPLAY_TIMELINE_CSV,
};

use super::eaco_bounds::aggregate_eaco_bounds;
pub use super::replay_cell::ReplayCell;
use super::replay_cell::ReplayRecord;
use crate::bench::kind::CellKind;
use crate::bench::matrix::{Inputs, Matrix};
use crate::bench::sources::{scale_key, ReplayWorkloads};
use crate::bench::spec::lists::file_safe;
use crate::bench::spec::{power_settings, ReplaySpec};
use crate::bench::status::Kind;
use crate::bench::store::short_hash;
use crate::io::write_atomic;
use crate::replay_bound::{bound_options, replay_bound, BoundRecord, BoundRequest};

/// The time-mode replays of a bench.
pub(crate) struct Replays;

impl CellKind for Replays {
    type Cell = ReplayCell;
    type Record = ReplayRecord;
    const NAME: &'static str = "time-mode replays";
    const AGGREGATES: &'static [&'static str] =
        &[REPLAY_RUNS_CSV, REPLAY_TIMELINE_CSV, EACO_BOUNDS_CSV];

    /// In spec order: source, arrival scale, idle, policy, seed.
    fn cells(&self, matrix: &Matrix) -> Result<Vec<ReplayCell>> {
        let Some(spec) = &matrix.spec.replay else {
            return Ok(Vec::new());
        };
        let seeds = spec.seeds.expand()?;
        let mut cells = Vec::new();
        for source in &matrix.replay_sources {
            for &arrival_scale in &spec.arrival_scales {
                for idle in &spec.idle {
                    for policy in &spec.policies {
                        for &seed in &seeds {
                            cells.push(ReplayCell {
                                source: source.clone(),
                                arrival_scale,
                                idle: idle.clone(),
                                policy: policy.clone(),
                                seed,
                            });
                        }
                    }
                }
            }
        }
        Ok(cells)
    }

    /// Everything that determines a replay: schema version, tool version, the cell, the
    /// spec's replay settings and the source's input hashes.
    fn key(&self, matrix: &Matrix, cell: &ReplayCell) -> String {
        replay_key(matrix, cell, REPLAY_SCHEMA_VERSION)
    }

    fn record_key<'r>(&self, record: &'r ReplayRecord) -> &'r str {
        &record.key
    }

    fn path(&self, cell: &ReplayCell) -> PathBuf {
        PathBuf::from("replay-cells")
            .join(cell.source.name())
            .join(format!("x{}", cell.arrival_scale))
            .join(&cell.idle)
            .join(file_safe(&cell.policy))
            .join(format!("seed-{}.json", cell.seed))
    }

    fn status_kind(&self, _: &ReplayCell) -> Kind {
        Kind::Replay
    }

    fn in_spec(&self, matrix: &Matrix) -> bool {
        matrix.spec.replay.is_some()
    }

    /// One replay, and its energy bound when the spec asks (read from or stored in the
    /// folder's `replay-bounds/`, shared by replays of the same inputs).
    fn run(
        &self,
        matrix: &Matrix,
        inputs: &Inputs,
        cell: &ReplayCell,
        _: usize,
        out: &Path,
    ) -> Result<ReplayRecord> {
        run_replay_cell(matrix, &inputs.replays, cell, Some(&replay_bounds_dir(out)))
    }

    fn aggregate(&self, out: &Path, matrix: &Matrix, cells: &[ReplayCell]) -> Result<()> {
        aggregate_replays(out, matrix, cells)?;
        aggregate_eaco_bounds(out, matrix, cells, |cell| self.finished(out, matrix, cell))
    }
}

fn replay_key(matrix: &Matrix, cell: &ReplayCell, schema_version: u32) -> String {
    let head = format!(
        "gapbench-replay-v{schema_version}|{}|{}|{}|{}|{}|",
        env!("CARGO_PKG_VERSION"),
        cell.policy,
        cell.seed,
        cell.arrival_scale,
        cell.idle,
    );
    let settings = matrix.spec.replay.as_ref().map(|spec| {
        format!(
            "{}|{:?}|{:?}|{:?}|",
            spec.sleep_fraction, spec.until_s, spec.carbon, spec.bound
        )
    });
    let source = serde_json::to_string(&cell.source).unwrap_or_default();
    let inputs = matrix
        .replay_inputs
        .get(&cell.source.name())
        .into_iter()
        .flatten();
    short_hash(
        [
            head.as_str(),
            settings.as_deref().unwrap_or(""),
            source.as_str(),
        ],
        inputs.map(|i| i.sha256.as_str()),
    )
}

/// Where a bench keeps its replays' energy bounds, by the hash of their input (replays of
/// the same tasks at the same times under the same power model share one).
pub(crate) fn replay_bounds_dir(out: &Path) -> PathBuf {
    out.join("replay-bounds")
}

/// Runs one replay, and its energy bound when the spec asks (read from or stored in
/// `bounds_dir`), and keeps its rows.
pub(crate) fn run_replay_cell(
    matrix: &Matrix,
    workloads: &ReplayWorkloads,
    cell: &ReplayCell,
    bounds_dir: Option<&Path>,
) -> Result<ReplayRecord> {
    let spec = matrix
        .spec
        .replay
        .as_ref()
        .context("a replay cell without a [replay] spec")?;
    let inputs = &workloads[&(cell.source.name(), scale_key(cell.arrival_scale))];
    let workload = inputs.workload(cell.seed)?;
    let policy_spec: TimePolicySpec = cell.policy.parse()?;
    let policy_name = policy_spec.name.as_str();
    let mut options = cell_options(spec, cell, &workload)?;
    let replay = |name: &str, options: &ReplayOptions| -> Result<ReplayResult> {
        let mut policy = time_policy(name, &inputs.cluster).map_err(anyhow::Error::msg)?;
        Ok(gapbench_replay::run(
            &inputs.cluster,
            &workload,
            policy.as_mut(),
            options,
        ))
    };
    let budget_kind = policy_spec.kind().and_then(|kind| kind.budget());
    if let (Some(share), Some(budget_kind)) = (policy_spec.budget_share, budget_kind) {
        let fifo = replay(TimePolicyKind::FifoFullClock.name(), &options)?.summary();
        options.budget = budget_kind.budget(match budget_kind {
            BudgetTarget::Carbon => share * fifo.job_carbon_kg.unwrap_or(0.0),
            BudgetTarget::Energy => share * fifo.job_energy_kwh,
        });
        let jobs = crate::replay::training_jobs(&inputs.cluster, &workload, &options, cell.seed);
        gapbench_replay::budget::check_budget(
            jobs.jobs(),
            &options.budget,
            options.carbon.as_ref(),
        )
        .with_context(|| cell.describe("replay"))?;
    }
    let result = replay(policy_name, &options)?;
    let key = ReplayKey {
        source: cell.source.name(),
        nodes: inputs.cluster.len(),
        policy: cell.policy.clone(),
        seed: cell.seed,
        arrival_scale: cell.arrival_scale,
        idle: cell.idle.clone(),
    };
    let bound = match &spec.bound {
        Some(bound) => {
            let request = BoundRequest {
                cluster: &inputs.cluster,
                workload: &workload,
                result: &result,
                policy: policy_name,
                power: &options.power,
                colocation: &options.colocation,
                options: bound_options(
                    bound.time_limit_s,
                    bound.max_windows,
                    bound.max_pricing_rounds,
                    bound.branch_nodes(options.power.idle),
                ),
            };
            let record = replay_bound(&request, bounds_dir)
                .with_context(|| cell.describe("the energy bound of replay"))?;
            Some(record)
        }
        None => None,
    };
    Ok(ReplayRecord {
        key: Replays.key(matrix, cell),
        run: run_row(key.clone(), &result, bound.as_ref()),
        timeline: downsample(&key, &result, TIMELINE_SAMPLES, bound.as_ref()),
    })
}

/// The options a cell replays with: its seed, the spec's power, carbon series (over the
/// workload's span), end time and the source's deadlines.
fn cell_options(
    spec: &ReplaySpec,
    cell: &ReplayCell,
    workload: &TimedWorkload,
) -> Result<ReplayOptions> {
    let last_end_s = workload
        .tasks
        .iter()
        .map(|t| t.arrival_s + t.duration_s)
        .fold(0.0, f64::max);
    let carbon = crate::budget::BudgetArgs {
        carbon: spec.carbon.clone(),
        ..Default::default()
    }
    .carbon_series(last_end_s, cell.seed)?;
    Ok(ReplayOptions {
        seed: cell.seed,
        power: power_settings(&cell.idle, spec.sleep_fraction),
        carbon,
        until_s: spec.until_s,
        deadlines: cell.source.deadline_factors(),
        ..ReplayOptions::default()
    })
}

/// A replay's totals as a `replay_runs.csv` row, with its energy bound if it has one.
fn run_row(key: ReplayKey, result: &ReplayResult, bound: Option<&BoundRecord>) -> ReplayRunRow {
    let s = result.summary();
    let runs: Vec<f64> = result
        .tasks
        .iter()
        .filter_map(|t| Some(t.end_s? - t.start_s?))
        .collect();
    let mean_run_s = if runs.is_empty() {
        f64::NAN
    } else {
        runs.iter().sum::<f64>() / runs.len() as f64
    };
    ReplayRunRow {
        key,
        tasks: s.tasks,
        completed: s.completed,
        failed: s.failed,
        unfinished: s.unfinished,
        energy_kwh: s.total_energy_kwh,
        gpu_busy_kwh: s.gpu_busy_kwh,
        gpu_idle_kwh: s.gpu_idle_kwh,
        cpu_kwh: s.cpu_kwh,
        sleep_kwh: s.sleep_kwh,
        mean_power_w: s.mean_power_watts,
        // An empty sample has no statistics: `nan` in the CSV, "none" in the report.
        mean_jct_s: s.jct_s.mean().unwrap_or(f64::NAN),
        p50_jct_s: s.jct_s.mean().map_or(f64::NAN, |_| s.jct_s.p50),
        p95_jct_s: s.jct_s.mean().map_or(f64::NAN, |_| s.jct_s.p95),
        p99_jct_s: s.jct_s.mean().map_or(f64::NAN, |_| s.jct_s.p99),
        mean_wait_s: s.wait_s.mean().unwrap_or(f64::NAN),
        mean_run_s,
        makespan_s: s.makespan_s,
        mean_active_nodes: s.mean_active_nodes,
        undos: s.undo_count,
        deadline_misses: s.deadline_misses,
        job_energy_kwh: s.job_energy_kwh,
        carbon_kg: s.carbon_kg,
        job_carbon_kg: s.job_carbon_kg,
        stopped_early: s.stopped_early.clone().unwrap_or_default(),
        bound_kwh: bound.map(|b| b.energy_kwh),
        bound_lp_kwh: bound.map(|b| b.lp_energy_kwh),
        bound_status: bound.map_or_else(String::new, |b| b.status.clone()),
        bound_gap: bound.and_then(|b| b.gap(s.total_energy_kwh)),
    }
}

/// The state after the last event at or before each of `samples + 1` evenly spaced
/// instants from the first arrival to the last event (times relative to the first arrival).
fn downsample(
    key: &ReplayKey,
    result: &ReplayResult,
    samples: usize,
    bound: Option<&BoundRecord>,
) -> Vec<ReplayTimelineRow> {
    let (start, span) = (result.start_s, (result.end_s - result.start_s).max(0.0));
    let mut rows = Vec::with_capacity(samples + 1);
    let mut next = 0;
    for k in 0..=samples {
        let t = start + span * k as f64 / samples as f64;
        while next < result.timeline.len() && result.timeline[next].time_s <= t {
            next += 1;
        }
        let Some(state) = next.checked_sub(1).map(|i| &result.timeline[i]) else {
            continue;
        };
        rows.push(ReplayTimelineRow {
            key: key.clone(),
            time_s: t - start,
            power_w: state.power_watts,
            active_nodes: state.active_nodes,
            allocated_gpu_pct: state.allocated_gpu_pct,
            queue_length: state.queue_length,
            bound_power_w: bound.map(|b| b.watts_at(t)),
        });
    }
    rows
}

/// Writes `replay_runs.csv` and `replay_timeline.csv` from the replay cells, in spec order.
pub(crate) fn aggregate_replays(out: &Path, matrix: &Matrix, cells: &[ReplayCell]) -> Result<()> {
    if cells.is_empty() {
        return Ok(());
    }
    let mut runs = format!("{}\n", ReplayRunRow::csv_header());
    let mut timeline = format!("{}\n", ReplayTimelineRow::csv_header());
    for cell in cells {
        let record = Replays.finished(out, matrix, cell).with_context(|| {
            format!(
                "replay {} {} seed {} is missing",
                cell.source.name(),
                cell.policy,
                cell.seed
            )
        })?;
        writeln!(runs, "{}", record.run.csv_line())?;
        for row in &record.timeline {
            writeln!(timeline, "{}", row.csv_line())?;
        }
    }
    write_atomic(&out.join(REPLAY_RUNS_CSV), runs.as_bytes())?;
    write_atomic(&out.join(REPLAY_TIMELINE_CSV), timeline.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gapbench_replay::eaco_setup::{eaco_cluster, eaco_jobs};

    fn eaco_matrix() -> Matrix {
        let text = "name = \"e\"\n[replay]\npolicies = [\"fifo\"]\nseeds = [42]\n[replay.eaco]\nservers = [2]\njobs = 6\njobs_per_hour = 3.0\n";
        let spec: crate::bench::spec::BenchSpec = toml::from_str(text).unwrap();
        Matrix::resolve(spec, None).unwrap().0
    }

    #[test]
    fn a_stored_replay_is_reused_until_its_schema_or_settings_change() {
        let matrix = eaco_matrix();
        let cells = Replays.cells(&matrix).unwrap();
        assert_eq!(cells.len(), 2, "one per idle policy");
        let (cell, other) = (&cells[0], &cells[1]);
        assert_ne!(Replays.key(&matrix, cell), Replays.key(&matrix, other));
        assert_ne!(
            replay_key(&matrix, cell, REPLAY_SCHEMA_VERSION + 1),
            Replays.key(&matrix, cell)
        );
        let workloads = Matrix::resolve(matrix.spec.clone(), None)
            .unwrap()
            .1
            .replays;
        let record = run_replay_cell(&matrix, &workloads, cell, None).unwrap();
        assert_eq!(record.run.tasks, 6);
        assert_eq!(record.timeline.len(), TIMELINE_SAMPLES + 1);

        let out =
            std::env::temp_dir().join(format!("gapbench-replay-cells-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        crate::io::write_json(&out.join(Replays.path(cell)), &record).unwrap();
        // JSON keeps the numbers to the CSVs' precision (serde_json may differ in the last
        // bit), so a reused record is compared by what it writes.
        let written = |r: &ReplayRecord| {
            let lines: Vec<String> = r.timeline.iter().map(|t| t.csv_line()).collect();
            (r.key.clone(), r.run.csv_line(), lines)
        };
        let reused = Replays
            .finished(&out, &matrix, cell)
            .expect("the stored replay is reused");
        assert_eq!(written(&reused), written(&record));
        // Another sleep power is another replay: the stored one is not finished for it.
        let mut changed = matrix.clone();
        changed.spec.replay.as_mut().unwrap().sleep_fraction = 0.1;
        assert_eq!(Replays.finished(&out, &changed, cell), None);
        // A record of an older schema (other fields, same key) is not finished either.
        let mut stale = serde_json::to_value(&record).unwrap();
        stale["run"].as_object_mut().unwrap().remove("mean_run_s");
        crate::io::write_json(&out.join(Replays.path(cell)), &stale).unwrap();
        assert_eq!(Replays.finished(&out, &matrix, cell), None);
        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn a_downsampled_timeline_holds_the_state_at_each_instant() {
        let cluster = eaco_cluster(2);
        let workload = eaco_jobs(6, 3.0, 7);
        let mut policy = time_policy("fifo", &cluster).unwrap();
        let result =
            gapbench_replay::run(&cluster, &workload, policy.as_mut(), &Default::default());
        let key = ReplayKey {
            source: "eaco-2".into(),
            nodes: 2,
            policy: "fifo".into(),
            seed: 42,
            arrival_scale: 1.0,
            idle: "always-on".into(),
        };
        let rows = downsample(&key, &result, 10, None);
        assert_eq!(rows.len(), 11);
        assert_eq!(rows[0].time_s, 0.0);
        assert!((rows[10].time_s - (result.end_s - result.start_s)).abs() < 1e-6);
        let last = result.timeline.last().unwrap();
        assert_eq!(rows[10].power_w, last.power_watts);
        for row in &rows {
            let t = result.start_s + row.time_s;
            let state = result
                .timeline
                .iter()
                .rev()
                .find(|r| r.time_s <= t)
                .unwrap();
            assert_eq!(
                (row.power_w, row.active_nodes, row.queue_length),
                (state.power_watts, state.active_nodes, state.queue_length)
            );
        }
    }
}
