//! The time-mode cells of a bench (`[replay]`): one replay each, per (source, arrival
//! scale, idle policy, policy, seed), stored as a JSON file keyed by a hash of everything
//! that determines it (the replay schema version included), and aggregated into
//! `replay_runs.csv` and `replay_timeline.csv`. Every time policy runs here in the one
//! engine, so they share one energy table: a budgeted policy is named with its budget as a
//! share of full-clock FIFO's spend on the same cell (`powerflow@1.0`: FIFO's job energy,
//! `greenflow@1.0`: FIFO's job carbon), which the cell replays first to know it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::bail;
use anyhow::{Context, Result};
use gapbench_model::{CpuPowerProfile, InputRules};
use gapbench_replay::policies::time_policy;
use gapbench_replay::{
    Budget, DeadlineFactors, IdlePolicy, PowerSettings, ReplayOptions, ReplayResult,
};
use gapbench_results::replay::TIMELINE_SAMPLES;
use gapbench_results::{
    ReplayKey, ReplayRunRow, ReplayTimelineRow, REPLAY_RUNS_CSV, REPLAY_SCHEMA_VERSION,
    REPLAY_TIMELINE_CSV,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::bench::{trace_file, Matrix};
use crate::bench_spec::{ReplaySpec, DEFAULT_EACO_DEADLINE_FACTOR};
use crate::io::write_atomic;
use crate::replay::{ReplayInputs, TimedSource};
use crate::replay_bound::{bound_options, replay_bound, BoundRecord, BoundRequest};
use crate::workload::InputFingerprint;

/// Where a replay's cluster and timed tasks come from, as resolved for a matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ReplaySource {
    /// An openb trace at its real times, on the spec's node list.
    Trace { name: String },
    /// The embedded openb-like workload with times drawn per seed (the real traces absent).
    OpenbLike,
    /// EaCO's evaluation setup on `servers` 8×V100 servers, Burstable deadlines at
    /// `deadline_factor` × the solo duration.
    Eaco {
        servers: usize,
        jobs: usize,
        jobs_per_hour: f64,
        #[serde(default = "default_deadline_factor")]
        deadline_factor: f64,
    },
}

impl ReplaySource {
    /// The name rows and folders use: the trace name, `openb-like`, `eaco-<servers>` (at
    /// the default deadline factor) or `eaco-<servers>-d<σ>`.
    pub fn name(&self) -> String {
        match self {
            ReplaySource::Trace { name } => name.clone(),
            ReplaySource::OpenbLike => crate::bench::STAND_IN_TRACE.to_string(),
            ReplaySource::Eaco {
                servers,
                deadline_factor,
                ..
            } => {
                if *deadline_factor == DEFAULT_EACO_DEADLINE_FACTOR {
                    format!("eaco-{servers}")
                } else {
                    format!("eaco-{servers}-d{deadline_factor}")
                }
            }
        }
    }

    /// The deadline factors a replay of this source runs with.
    pub fn deadline_factors(&self) -> DeadlineFactors {
        match self {
            ReplaySource::Eaco {
                deadline_factor, ..
            } => DeadlineFactors {
                burstable: *deadline_factor,
                ..DeadlineFactors::default()
            },
            _ => DeadlineFactors::default(),
        }
    }

    /// The sources of a replay spec: its traces (or the stand-in when `traces_dir` is
    /// `None`), then one EaCO setup per cluster size.
    pub(crate) fn of_spec(spec: &ReplaySpec, real_traces: bool) -> Vec<ReplaySource> {
        let mut sources: Vec<ReplaySource> = if real_traces {
            spec.traces
                .iter()
                .map(|name| ReplaySource::Trace { name: name.clone() })
                .collect()
        } else if spec.traces.is_empty() {
            Vec::new()
        } else {
            vec![ReplaySource::OpenbLike]
        };
        if let Some(eaco) = &spec.eaco {
            for &servers in &eaco.servers {
                sources.extend(eaco.deadline_factors.iter().map(|&deadline_factor| {
                    ReplaySource::Eaco {
                        servers,
                        jobs: eaco.jobs,
                        jobs_per_hour: eaco.jobs_per_hour,
                        deadline_factor,
                    }
                }));
            }
        }
        sources
    }

    /// Loads the source's cluster and tasks at `arrival_scale`.
    pub(crate) fn load(
        &self,
        traces_dir: Option<&Path>,
        nodes_file: &str,
        arrival_scale: f64,
    ) -> Result<ReplayInputs> {
        let source = match self {
            ReplaySource::Trace { name } => {
                let dir = traces_dir.context("a trace source needs the traces folder")?;
                TimedSource::Openb {
                    nodes: Some(dir.join(nodes_file)),
                    tasks: Some(dir.join(trace_file(name))),
                }
            }
            ReplaySource::OpenbLike => TimedSource::Openb {
                nodes: None,
                tasks: None,
            },
            ReplaySource::Eaco {
                servers,
                jobs,
                jobs_per_hour,
                ..
            } => TimedSource::Eaco {
                servers: *servers,
                jobs: *jobs,
                jobs_per_hour: *jobs_per_hour,
            },
        };
        ReplayInputs::load(
            source,
            arrival_scale,
            crate::replay::Selection::default(),
            InputRules::Reference,
            CpuPowerProfile::Reference,
        )
    }
}

fn default_deadline_factor() -> f64 {
    DEFAULT_EACO_DEADLINE_FACTOR
}

/// One replay of the matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayCell {
    pub source: ReplaySource,
    pub arrival_scale: f64,
    /// `always-on` or `sleep-when-empty`.
    pub idle: String,
    pub policy: String,
    pub seed: u64,
}

/// A finished replay: its totals and its downsampled timeline, as typed rows.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct ReplayRecord {
    pub(crate) key: String,
    pub(crate) run: ReplayRunRow,
    pub(crate) timeline: Vec<ReplayTimelineRow>,
}

/// The loaded inputs of every (source, arrival scale) of a matrix, shared by its cells.
pub(crate) type ReplayWorkloads = BTreeMap<(String, u64), ReplayInputs>;

fn scale_key(arrival_scale: f64) -> u64 {
    arrival_scale.to_bits()
}

/// Loads each (source, arrival scale) once.
pub(crate) fn load_replay_workloads(
    matrix: &Matrix,
    traces_dir: Option<&Path>,
) -> Result<ReplayWorkloads> {
    let mut workloads = ReplayWorkloads::new();
    let Some(spec) = &matrix.spec.replay else {
        return Ok(workloads);
    };
    for source in &matrix.replay_sources {
        for &scale in &spec.arrival_scales {
            let inputs = source.load(traces_dir, &matrix.spec.nodes, scale)?;
            workloads.insert((source.name(), scale_key(scale)), inputs);
        }
    }
    Ok(workloads)
}

/// The input fingerprints of every replay source (file hashes or generator descriptions).
pub(crate) fn replay_fingerprints(
    workloads: &ReplayWorkloads,
) -> BTreeMap<String, Vec<InputFingerprint>> {
    workloads
        .iter()
        .map(|((source, _), inputs)| (source.clone(), inputs.inputs.clone()))
        .collect()
}

impl Matrix {
    /// Every replay cell, in spec order (source, arrival scale, idle, policy, seed).
    pub fn replay_cells(&self) -> Result<Vec<ReplayCell>> {
        let Some(spec) = &self.spec.replay else {
            return Ok(Vec::new());
        };
        let seeds = spec.seeds.expand()?;
        let mut cells = Vec::new();
        for source in &self.replay_sources {
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

    /// A hash of everything that determines a replay: schema version, tool version, the
    /// cell, the spec's replay settings and the source's input hashes.
    pub(crate) fn replay_key(&self, cell: &ReplayCell) -> String {
        self.replay_key_of_schema(cell, REPLAY_SCHEMA_VERSION)
    }

    fn replay_key_of_schema(&self, cell: &ReplayCell, schema_version: u32) -> String {
        let mut hasher = Sha256::new();
        hasher.update(format!(
            "gapbench-replay-v{schema_version}|{}|{}|{}|{}|{}|",
            env!("CARGO_PKG_VERSION"),
            cell.policy,
            cell.seed,
            cell.arrival_scale,
            cell.idle,
        ));
        if let Some(spec) = &self.spec.replay {
            hasher.update(format!(
                "{}|{:?}|{:?}|{:?}|",
                spec.sleep_fraction, spec.until_s, spec.carbon, spec.bound
            ));
        }
        hasher.update(serde_json::to_string(&cell.source).unwrap_or_default());
        for input in self
            .replay_inputs
            .get(&cell.source.name())
            .into_iter()
            .flatten()
        {
            hasher.update(&input.sha256);
        }
        crate::workload::hex(&hasher.finalize()[..8])
    }
}

pub(crate) fn replay_cell_path(out: &Path, cell: &ReplayCell) -> PathBuf {
    out.join("replay-cells")
        .join(cell.source.name())
        .join(format!("x{}", cell.arrival_scale))
        .join(&cell.idle)
        .join(file_safe(&cell.policy))
        .join(format!("seed-{}.json", cell.seed))
}

/// A policy name as a folder name: letters, digits, `-`, `_` and `.`; anything else `_`.
pub(crate) fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The finished record of `cell` in `out`, if there is one with the right key.
pub(crate) fn finished_replay(
    out: &Path,
    matrix: &Matrix,
    cell: &ReplayCell,
) -> Option<ReplayRecord> {
    crate::cells::read_keyed(
        &replay_cell_path(out, cell),
        &matrix.replay_key(cell),
        |r: &ReplayRecord| &r.key,
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
    let (policy_name, share) = budgeted_share(&cell.policy)?;
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
    let mut options = ReplayOptions {
        seed: cell.seed,
        power: power_settings(&cell.idle, spec.sleep_fraction),
        carbon,
        until_s: spec.until_s,
        deadlines: cell.source.deadline_factors(),
        ..ReplayOptions::default()
    };
    let replay = |name: &str, options: &ReplayOptions| -> Result<ReplayResult> {
        let mut policy = time_policy(name, &inputs.cluster).map_err(anyhow::Error::msg)?;
        Ok(gapbench_replay::run(
            &inputs.cluster,
            &workload,
            policy.as_mut(),
            options,
        ))
    };
    if let Some(share) = share {
        let fifo = replay("fifo-full-clock", &options)?.summary();
        options.budget = match policy_name {
            "greenflow" => Budget::CarbonKg(share * fifo.job_carbon_kg.unwrap_or(0.0)),
            _ => Budget::EnergyKwh(share * fifo.job_energy_kwh),
        };
        let jobs = crate::replay::training_jobs(&inputs.cluster, &workload, &options, cell.seed);
        gapbench_replay::budget::check_budget(
            jobs.jobs(),
            &options.budget,
            options.carbon.as_ref(),
        )
        .with_context(|| {
            format!(
                "replay {} {} seed {}",
                cell.source.name(),
                cell.policy,
                cell.seed
            )
        })?;
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
                ),
            };
            let record = replay_bound(&request, bounds_dir).with_context(|| {
                format!(
                    "the energy bound of replay {} {} seed {}",
                    cell.source.name(),
                    cell.policy,
                    cell.seed
                )
            })?;
            Some(record)
        }
        None => None,
    };
    Ok(ReplayRecord {
        key: matrix.replay_key(cell),
        run: run_row(key.clone(), &result, bound.as_ref()),
        timeline: downsample(&key, &result, TIMELINE_SAMPLES, bound.as_ref()),
    })
}

/// The power settings of a replay cell with idle policy `idle`.
pub(crate) fn power_settings(idle: &str, sleep_fraction: f64) -> PowerSettings {
    PowerSettings {
        idle: match idle {
            "sleep-when-empty" => IdlePolicy::SleepWhenEmpty,
            _ => IdlePolicy::AlwaysOn,
        },
        sleep_fraction,
        ..PowerSettings::default()
    }
}

/// A replay policy name and its budget as a share of full-clock FIFO's spend: `powerflow@0.9`
/// → (`powerflow`, 0.9). The budgeted policies need the share; no other policy takes one.
pub(crate) fn budgeted_share(name: &str) -> Result<(&str, Option<f64>)> {
    let (base, share) = match name.split_once('@') {
        Some((base, share)) => {
            let share: f64 = share.trim().parse().map_err(|_| {
                anyhow::anyhow!(
                    "`{name}`: the budget after `@` is a share of FIFO's spend such as 0.9"
                )
            })?;
            if !(share.is_finite() && share > 0.0) {
                bail!("`{name}`: the budget share must be positive");
            }
            (base.trim(), Some(share))
        }
        None => (name.trim(), None),
    };
    match (base, share) {
        ("powerflow" | "greenflow", None) => {
            bail!("`{name}` plans to a budget: write it as `{name}@1.0` (a share of FIFO's spend)")
        }
        ("powerflow" | "greenflow", Some(_)) | (_, None) => Ok((base, share)),
        (_, Some(_)) => bail!("`{name}`: only powerflow and greenflow take a budget share"),
    }
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
        let record = finished_replay(out, matrix, cell).with_context(|| {
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
        let spec: crate::bench_spec::BenchSpec = toml::from_str(text).unwrap();
        Matrix::resolve(spec, None).unwrap().0
    }

    #[test]
    fn a_stored_replay_is_reused_until_its_schema_or_settings_change() {
        let matrix = eaco_matrix();
        let cells = matrix.replay_cells().unwrap();
        assert_eq!(cells.len(), 2, "one per idle policy");
        let (cell, other) = (&cells[0], &cells[1]);
        assert_ne!(matrix.replay_key(cell), matrix.replay_key(other));
        assert_ne!(
            matrix.replay_key_of_schema(cell, REPLAY_SCHEMA_VERSION + 1),
            matrix.replay_key(cell)
        );
        let workloads = load_replay_workloads(&matrix, None).unwrap();
        let record = run_replay_cell(&matrix, &workloads, cell, None).unwrap();
        assert_eq!(record.run.tasks, 6);
        assert_eq!(record.timeline.len(), TIMELINE_SAMPLES + 1);

        let out =
            std::env::temp_dir().join(format!("gapbench-replay-cells-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        crate::io::write_json(&replay_cell_path(&out, cell), &record).unwrap();
        // JSON keeps the numbers to the CSVs' precision (serde_json may differ in the last
        // bit), so a reused record is compared by what it writes.
        let written = |r: &ReplayRecord| {
            let lines: Vec<String> = r.timeline.iter().map(|t| t.csv_line()).collect();
            (r.key.clone(), r.run.csv_line(), lines)
        };
        let reused = finished_replay(&out, &matrix, cell).expect("the stored replay is reused");
        assert_eq!(written(&reused), written(&record));
        // Another sleep power is another replay: the stored one is not finished for it.
        let mut changed = matrix.clone();
        changed.spec.replay.as_mut().unwrap().sleep_fraction = 0.1;
        assert_eq!(finished_replay(&out, &changed, cell), None);
        // A record of an older schema (other fields, same key) is not finished either.
        let mut stale = serde_json::to_value(&record).unwrap();
        stale["run"].as_object_mut().unwrap().remove("mean_run_s");
        crate::io::write_json(&replay_cell_path(&out, cell), &stale).unwrap();
        assert_eq!(finished_replay(&out, &matrix, cell), None);
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
