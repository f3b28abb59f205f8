//! What a replay produced, as data, and its serializers: `timeline.csv` (one row per event),
//! `tasks.csv` (one row per task) and `summary.json`, each written to any `io::Write` (the
//! harness owns files, atomic writes and manifests).

use std::io;

use std::collections::BTreeMap;

use serde::Serialize;

use gapbench_model::{ClusterState, FailureReason};
use gapbench_results::replay_output::{timeline_csv, TaskRow};
use gapbench_results::row::rows_to_csv;

use crate::attributes::TaskAttributes;
use crate::budget::BudgetOutcome;
use crate::devices::DeviceTable;
use crate::energy::{Ledger, JOULES_PER_KWH};
use crate::options::QueueDiscipline;
use crate::timed_workload::{PodPhase, Qos};

/// The cluster after one event: a row of `timeline.csv`, declared with the other results
/// files.
pub use gapbench_results::replay_output::TimelineRow;

/// One task's fate.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRecord {
    pub name: String,
    pub qos: Qos,
    pub phase: PodPhase,
    pub gpu_count: u8,
    pub gpu_milli: u16,
    pub arrival_s: f64,
    pub duration_s: f64,
    /// Already there when the trace began (see `timed_workload`).
    pub left_censored: bool,
    /// Still running at the trace end: its duration is a lower bound.
    pub right_censored: bool,
    pub attributes: TaskAttributes,
    /// First start (an undone task keeps its first start).
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
    /// Why it failed at arrival: it fits no node of the empty cluster (`never_fits:…`), or,
    /// under `OnFull::Fail`, none had room then (`no_room`). Failed tasks never run.
    pub failure: Option<FailureReason>,
    pub undos: u32,
    /// Changes of placement or configuration while running (resize, re-clock, move).
    pub reconfigurations: u32,
    /// Work left when the replay stopped (0 for completed tasks).
    pub remaining_work_s: f64,
    /// The task's share of its nodes' energy while it ran.
    pub energy_kwh: f64,
    /// Its job energy by the training model (0 for tasks that are not training jobs), and
    /// that energy's carbon.
    pub job_energy_kwh: f64,
    pub job_carbon_kg: f64,
    /// Whether it is a training job (a GPU task of positive length).
    pub training_job: bool,
    /// Its history while running, kept only with `record_segments`.
    pub segments: Vec<Segment>,
}

/// A stretch of constant progress and power of one running task.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    pub from_s: f64,
    pub to_s: f64,
    /// Work done per second (its configuration's speed over the co-location slowdown).
    pub rate: f64,
    /// Its job power by the training model (0 for tasks that are not training jobs).
    pub job_watts: f64,
    /// The training job's configuration (an index into its options; `None` for tasks that
    /// are not training jobs).
    pub option: Option<usize>,
}

impl Segment {
    pub fn work_s(&self) -> f64 {
        (self.to_s - self.from_s) * self.rate
    }
}

impl TaskRecord {
    pub fn failed(&self) -> bool {
        self.failure.is_some()
    }

    pub fn wait_s(&self) -> Option<f64> {
        self.start_s.map(|s| s - self.arrival_s)
    }

    /// Job completion time: end − arrival.
    pub fn jct_s(&self) -> Option<f64> {
        self.end_s.map(|e| e - self.arrival_s)
    }

    /// Run time over solo duration (1 = never slowed); `None` until it completes.
    pub fn slowdown(&self) -> Option<f64> {
        match (self.start_s, self.end_s) {
            (Some(s), Some(e)) if self.duration_s > 0.0 => Some((e - s) / self.duration_s),
            (Some(_), Some(_)) => Some(1.0),
            _ => None,
        }
    }

    pub fn deadline_missed(&self) -> bool {
        self.end_s
            .is_some_and(|e| e > self.attributes.deadline_s * (1.0 + 1e-12))
    }
}

impl TaskRecord {
    /// Its row of `tasks.csv`, derived attributes included.
    fn row(&self) -> TaskRow {
        let deadline_s = self.attributes.deadline_s;
        TaskRow {
            name: self.name.clone(),
            qos: self.qos.name(),
            phase: self.phase.name(),
            gpu_count: self.gpu_count,
            gpu_milli: self.gpu_milli,
            arrival_s: self.arrival_s,
            duration_s: self.duration_s,
            left_censored: self.left_censored,
            right_censored: self.right_censored,
            util_permille: self.attributes.util_permille,
            gpu_memory_permille: self.attributes.gpu_memory_permille,
            epochs: self.attributes.epochs,
            deadline_s: deadline_s.is_finite().then_some(deadline_s),
            start_s: self.start_s,
            end_s: self.end_s,
            wait_s: self.wait_s(),
            jct_s: self.jct_s(),
            slowdown: self.slowdown(),
            failed: self.failed(),
            failure: self.failure.map_or("", FailureReason::label),
            undos: self.undos,
            deadline_missed: self.deadline_missed(),
            reconfigurations: self.reconfigurations,
            energy_kwh: self.energy_kwh,
            job_energy_kwh: self.job_energy_kwh,
            job_carbon_kg: self.job_carbon_kg,
        }
    }
}

/// Writes `bytes` whole and flushes.
fn write_all(mut out: impl io::Write, bytes: &[u8]) -> io::Result<()> {
    out.write_all(bytes)?;
    out.flush()
}

/// Statistics of a sample: mean and nearest-rank percentiles. An empty sample has none:
/// it is written as `"none: <why>"`, never as a mean of 0.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Distribution {
    pub count: usize,
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
    /// Why the sample is empty (`no task completed`), shown when it is.
    pub empty_because: &'static str,
}

impl Serialize for Distribution {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        if self.count == 0 {
            return serializer.serialize_str(&format!("none: {}", self.empty_because));
        }
        let mut out = serializer.serialize_struct("Distribution", 6)?;
        out.serialize_field("count", &self.count)?;
        for (name, value) in [
            ("mean", self.mean),
            ("p50", self.p50),
            ("p95", self.p95),
            ("p99", self.p99),
            ("max", self.max),
        ] {
            out.serialize_field(name, &Finite(value))?;
        }
        out.end()
    }
}

/// A number as JSON: itself when finite, else `"unbounded: …"` (±∞) or `"undefined: …"`
/// (NaN) with the likely cause, never `null`.
struct Finite(f64);

impl Serialize for Finite {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        finite(&self.0, serializer)
    }
}

/// Why a replay's number is not finite: times so large (or arrival scales so small) that
/// power × time overflows.
const NOT_FINITE_BECAUSE: &str =
    "the replay's times overflow double precision (check the trace's times and --arrival-scale)";

fn finite<S: serde::Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    if value.is_finite() {
        serializer.serialize_f64(*value)
    } else if value.is_nan() {
        serializer.serialize_str(&format!("undefined: {NOT_FINITE_BECAUSE}"))
    } else {
        serializer.serialize_str(&format!("unbounded: {NOT_FINITE_BECAUSE}"))
    }
}

fn finite_option<S: serde::Serializer>(
    value: &Option<f64>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => finite(v, serializer),
        None => serializer.serialize_none(),
    }
}

impl Distribution {
    /// The statistics of `values`; `empty_because` says why there are none when empty.
    pub fn of(mut values: Vec<f64>, empty_because: &'static str) -> Self {
        if values.is_empty() {
            return Distribution {
                empty_because,
                ..Distribution::default()
            };
        }
        values.sort_by(f64::total_cmp);
        let rank =
            |p: f64| values[((p * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1];
        Distribution {
            count: values.len(),
            mean: values.iter().sum::<f64>() / values.len() as f64,
            p50: rank(0.50),
            p95: rank(0.95),
            p99: rank(0.99),
            max: values[values.len() - 1],
            empty_because,
        }
    }

    /// The mean, `None` for an empty sample.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then_some(self.mean)
    }
}

/// The content of `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub policy: String,
    /// `fifo` (strict) or `backfill`.
    pub queue: &'static str,
    pub tasks: usize,
    pub completed: usize,
    pub failed: usize,
    /// Failed tasks by reason (`never_fits:<resource>`, `no_room`).
    pub failures: BTreeMap<&'static str, usize>,
    /// Still waiting or running when the replay stopped.
    pub unfinished: usize,
    /// Waiting in the queue when the replay stopped, and the longest of their waits since
    /// arrival (absent when none waits).
    pub still_waiting: usize,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "finite_option"
    )]
    pub longest_wait_s: Option<f64>,
    /// `Pending` pods of the trace, dropped before the replay (they never ran).
    pub dropped_pending: usize,
    /// Tasks already there when the trace began, and tasks still running at its end.
    pub left_censored: usize,
    pub right_censored: usize,
    /// Cluster energy: every node by the power model, idle and sleep included.
    #[serde(serialize_with = "finite")]
    pub total_energy_kwh: f64,
    #[serde(serialize_with = "finite")]
    pub gpu_busy_kwh: f64,
    #[serde(serialize_with = "finite")]
    pub gpu_idle_kwh: f64,
    #[serde(serialize_with = "finite")]
    pub cpu_kwh: f64,
    #[serde(serialize_with = "finite")]
    pub sleep_kwh: f64,
    #[serde(serialize_with = "finite")]
    pub mean_power_watts: f64,
    /// Time-weighted mean number of nodes with at least one task.
    #[serde(serialize_with = "finite")]
    pub mean_active_nodes: f64,
    pub jct_s: Distribution,
    pub wait_s: Distribution,
    /// Run time over solo duration, completed tasks.
    pub slowdown: Distribution,
    /// From the first arrival to the last event.
    #[serde(serialize_with = "finite")]
    pub makespan_s: f64,
    pub undo_count: u32,
    pub deadline_misses: usize,
    /// Job energy of the training jobs by the training model (what budgets limit).
    #[serde(serialize_with = "finite")]
    pub job_energy_kwh: f64,
    /// The grid series and the carbon of cluster and job energy under it (absent without a
    /// series).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub carbon_series: Option<String>,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "finite_option"
    )]
    pub carbon_kg: Option<f64>,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "finite_option"
    )]
    pub job_carbon_kg: Option<f64>,
    /// Training jobs (GPU tasks of positive length) and their JCT.
    pub training_jobs: usize,
    pub job_jct_s: Distribution,
    pub reconfigurations: u32,
    /// Rounds of a policy that plans in rounds (0 otherwise).
    pub rounds: u64,
    /// The budget, what was spent against it, and whether it ran out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetOutcome>,
    /// Why the replay stopped before every task was done, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<String>,
}

/// Everything one replay produced.
#[derive(Debug, Clone)]
pub struct ReplayResult {
    pub policy: String,
    pub queue: QueueDiscipline,
    /// The workload's dropped `Pending` pods (they never ran, so they are not in `tasks`).
    pub dropped_pending: usize,
    /// Tasks in the queue when the replay stopped, in queue order.
    pub waiting_at_end: Vec<u32>,
    /// In arrival order (the workload's order).
    pub tasks: Vec<TaskRecord>,
    pub timeline: Vec<TimelineRow>,
    /// Cluster and job energy and carbon.
    pub ledger: Ledger,
    /// The carbon series' name, if there was one.
    pub carbon_series: Option<String>,
    pub start_s: f64,
    pub end_s: f64,
    pub active_node_seconds: f64,
    pub undo_count: u32,
    pub reconfigurations: u32,
    pub rounds: u64,
    pub budget: Option<BudgetOutcome>,
    /// Why the replay stopped before every task was done (a spent budget, a policy that
    /// can never place what waits); `None` when it ran to the end or to `until_s`.
    pub stopped_early: Option<String>,
    /// Checker findings (only with `check_every_event`); empty when all placements held.
    pub violations: Vec<String>,
    pub final_state: ClusterState,
    pub final_devices: DeviceTable,
}

impl ReplayResult {
    pub fn summary(&self) -> Summary {
        let completed: Vec<&TaskRecord> = self.tasks.iter().filter(|t| t.end_s.is_some()).collect();
        let mut failures = BTreeMap::new();
        for reason in self.tasks.iter().filter_map(|t| t.failure) {
            *failures.entry(reason.label()).or_insert(0) += 1;
        }
        let failed = failures.values().sum();
        let span = self.end_s - self.start_s;
        let energy = &self.ledger.cluster;
        let jobs = self.tasks.iter().filter(|t| t.training_job);
        let carbon = self.carbon_series.is_some();
        Summary {
            policy: self.policy.clone(),
            queue: self.queue.label(),
            tasks: self.tasks.len(),
            completed: completed.len(),
            failed,
            failures,
            unfinished: self.tasks.len() - completed.len() - failed,
            still_waiting: self.waiting_at_end.len(),
            longest_wait_s: self
                .waiting_at_end
                .iter()
                .map(|&t| self.end_s - self.tasks[t as usize].arrival_s)
                .reduce(f64::max),
            dropped_pending: self.dropped_pending,
            left_censored: self.tasks.iter().filter(|t| t.left_censored).count(),
            right_censored: self.tasks.iter().filter(|t| t.right_censored).count(),
            total_energy_kwh: energy.total_kwh(),
            gpu_busy_kwh: energy.gpu_busy_j / JOULES_PER_KWH,
            gpu_idle_kwh: energy.gpu_idle_j / JOULES_PER_KWH,
            cpu_kwh: energy.cpu_j / JOULES_PER_KWH,
            sleep_kwh: energy.sleep_j / JOULES_PER_KWH,
            mean_power_watts: if span > 0.0 {
                energy.total_j() / span
            } else {
                0.0
            },
            mean_active_nodes: if span > 0.0 {
                self.active_node_seconds / span
            } else {
                0.0
            },
            jct_s: Distribution::of(
                completed.iter().filter_map(|t| t.jct_s()).collect(),
                "no task completed",
            ),
            wait_s: Distribution::of(
                self.tasks.iter().filter_map(|t| t.wait_s()).collect(),
                "no task started",
            ),
            slowdown: Distribution::of(
                completed.iter().filter_map(|t| t.slowdown()).collect(),
                "no task completed",
            ),
            makespan_s: span,
            undo_count: self.undo_count,
            deadline_misses: completed.iter().filter(|t| t.deadline_missed()).count(),
            job_energy_kwh: self.ledger.job_energy_j / JOULES_PER_KWH,
            carbon_series: self.carbon_series.clone(),
            carbon_kg: carbon.then_some(self.ledger.cluster_carbon_g / 1000.0),
            job_carbon_kg: carbon.then_some(self.ledger.job_carbon_g / 1000.0),
            training_jobs: jobs.clone().count(),
            job_jct_s: Distribution::of(
                jobs.filter_map(|t| t.jct_s()).collect(),
                "no training job completed",
            ),
            reconfigurations: self.reconfigurations,
            rounds: self.rounds,
            budget: self.budget.clone(),
            stopped_early: self.stopped_early.clone(),
        }
    }

    /// `timeline.csv`: one row per event.
    pub fn write_timeline_csv(&self, out: impl io::Write) -> io::Result<()> {
        write_all(out, &timeline_csv(&self.timeline))
    }

    /// `tasks.csv`: one row per task, derived attributes included.
    pub fn write_tasks_csv(&self, out: impl io::Write) -> io::Result<()> {
        let rows: Vec<TaskRow> = self.tasks.iter().map(TaskRecord::row).collect();
        write_all(out, &rows_to_csv(&rows))
    }

    /// `summary.json`, pretty-printed, newline-terminated.
    pub fn write_summary_json(&self, mut out: impl io::Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut out, &self.summary()).map_err(io::Error::other)?;
        writeln!(out)
    }
}
