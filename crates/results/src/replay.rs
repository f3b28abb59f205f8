//! The rows of the time-mode CSVs: one replay's totals (`replay_runs.csv`) and its
//! downsampled timeline (`replay_timeline.csv`), both keyed by the replay cell
//! (source, policy, seed, arrival scale, idle policy).

use serde::{Deserialize, Serialize};

use crate::check::{column_error, finite, non_negative, optional_non_negative, statistic};
use crate::check::{CheckedRow, ColumnError};

use crate::csv_text::{field, number, optional_number};

/// Bump when a replay row changes meaning: it is part of every replay cell's key, so cells
/// of an older schema are recomputed.
pub const REPLAY_SCHEMA_VERSION: u32 = 3;

/// Timeline samples per replay in `replay_timeline.csv` (plus the final state).
pub const TIMELINE_SAMPLES: usize = 200;

/// What identifies a replay: where its cluster and tasks came from and how it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayKey {
    /// `default` (an openb trace at its real times), `openb-like` (the embedded stand-in)
    /// or `eaco-<servers>` (EaCO's evaluation setup).
    pub source: String,
    /// Nodes of the source's cluster.
    pub nodes: usize,
    pub policy: String,
    pub seed: u64,
    /// Inter-arrival times divided by this factor.
    pub arrival_scale: f64,
    /// `always-on` or `sleep-when-empty`.
    pub idle: String,
}

impl ReplayKey {
    pub const CSV_HEADER: &'static str = "source,nodes,policy,seed,arrival_scale,idle";

    fn csv_fields(&self) -> String {
        format!(
            "{},{},{},{},{},{}",
            field(&self.source),
            self.nodes,
            field(&self.policy),
            self.seed,
            number(self.arrival_scale, 3),
            field(&self.idle)
        )
    }
}

/// One row of `replay_runs.csv`: a replay's energy, job times and cluster use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayRunRow {
    #[serde(flatten)]
    pub key: ReplayKey,
    pub tasks: usize,
    pub completed: usize,
    pub failed: usize,
    /// Still waiting or running when the replay stopped.
    pub unfinished: usize,
    #[serde(with = "crate::float_text")]
    pub energy_kwh: f64,
    #[serde(with = "crate::float_text")]
    pub gpu_busy_kwh: f64,
    #[serde(with = "crate::float_text")]
    pub gpu_idle_kwh: f64,
    #[serde(with = "crate::float_text")]
    pub cpu_kwh: f64,
    #[serde(with = "crate::float_text")]
    pub sleep_kwh: f64,
    #[serde(with = "crate::float_text")]
    pub mean_power_w: f64,
    /// Job completion time (end − arrival) of completed tasks (`nan` when none completed,
    /// likewise the waits and run times).
    #[serde(with = "crate::float_text")]
    pub mean_jct_s: f64,
    #[serde(with = "crate::float_text")]
    pub p50_jct_s: f64,
    #[serde(with = "crate::float_text")]
    pub p95_jct_s: f64,
    #[serde(with = "crate::float_text")]
    pub p99_jct_s: f64,
    #[serde(with = "crate::float_text")]
    pub mean_wait_s: f64,
    /// Mean run time (end − first start) of completed tasks: EaCO's "runtime".
    #[serde(with = "crate::float_text")]
    pub mean_run_s: f64,
    #[serde(with = "crate::float_text")]
    pub makespan_s: f64,
    /// Time-weighted mean of nodes with at least one task.
    #[serde(with = "crate::float_text")]
    pub mean_active_nodes: f64,
    pub undos: u32,
    pub deadline_misses: usize,
    /// Job energy: what the training jobs drew by the training model (what budgets limit).
    #[serde(with = "crate::float_text")]
    pub job_energy_kwh: f64,
    /// Carbon of cluster and of job energy (empty without a carbon series).
    pub carbon_kg: Option<f64>,
    pub job_carbon_kg: Option<f64>,
    /// Why the replay stopped before every task was done (a spent budget…); empty when not.
    pub stopped_early: String,
    /// A proven lower bound on the energy of any placement of the same tasks at this
    /// replay's own start and end times (`gapbench_bounds::replay_bound`); empty when not
    /// computed.
    pub bound_kwh: Option<f64>,
    /// What the bound's windows proved: `windows_converged`, `round_limit` (a window's
    /// column generation stopped at its round cap: still a bound, the same on every run) or
    /// `time_limit` (still a bound, may differ between runs); empty without a bound.
    pub bound_status: String,
    /// `(energy − bound) / bound`: the replay is at most this far above the optimum.
    pub bound_gap: Option<f64>,
}

impl ReplayRunRow {
    pub const CSV_HEADER: &'static str = "source,nodes,policy,seed,arrival_scale,idle,tasks,completed,failed,unfinished,energy_kwh,gpu_busy_kwh,gpu_idle_kwh,cpu_kwh,sleep_kwh,mean_power_w,mean_jct_s,p50_jct_s,p95_jct_s,p99_jct_s,mean_wait_s,mean_run_s,makespan_s,mean_active_nodes,undos,deadline_misses,job_energy_kwh,carbon_kg,job_carbon_kg,stopped_early,bound_kwh,bound_status,bound_gap";

    pub fn csv_line(&self) -> String {
        format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            self.key.csv_fields(),
            self.tasks,
            self.completed,
            self.failed,
            self.unfinished,
            number(self.energy_kwh, 4),
            number(self.gpu_busy_kwh, 4),
            number(self.gpu_idle_kwh, 4),
            number(self.cpu_kwh, 4),
            number(self.sleep_kwh, 4),
            number(self.mean_power_w, 2),
            number(self.mean_jct_s, 2),
            number(self.p50_jct_s, 2),
            number(self.p95_jct_s, 2),
            number(self.p99_jct_s, 2),
            number(self.mean_wait_s, 2),
            number(self.mean_run_s, 2),
            number(self.makespan_s, 2),
            number(self.mean_active_nodes, 4),
            self.undos,
            self.deadline_misses,
            number(self.job_energy_kwh, 4),
            optional_number(self.carbon_kg, 4),
            optional_number(self.job_carbon_kg, 4),
            field(&self.stopped_early),
            optional_number(self.bound_kwh, 4),
            field(&self.bound_status),
            optional_number(self.bound_gap, 6)
        )
    }
}

/// One row of `replay_timeline.csv`: the cluster's state at one sample time of a replay
/// (the state after the last event at or before `time_s`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayTimelineRow {
    #[serde(flatten)]
    pub key: ReplayKey,
    /// Seconds since the replay's first arrival.
    pub time_s: f64,
    pub power_w: f64,
    pub active_nodes: u32,
    /// Reserved GPU over capacity, % (above 100 only under oversubscription).
    pub allocated_gpu_pct: f64,
    pub queue_length: u32,
    /// The energy bound's power then: no placement of the tasks running throughout its
    /// window draws less (empty without a bound).
    pub bound_power_w: Option<f64>,
}

impl ReplayTimelineRow {
    pub const CSV_HEADER: &'static str = "source,nodes,policy,seed,arrival_scale,idle,time_s,power_w,active_nodes,allocated_gpu_pct,queue_length,bound_power_w";

    pub fn csv_line(&self) -> String {
        format!(
            "{},{},{},{},{},{},{}",
            self.key.csv_fields(),
            number(self.time_s, 1),
            number(self.power_w, 1),
            self.active_nodes,
            number(self.allocated_gpu_pct, 3),
            self.queue_length,
            optional_number(self.bound_power_w, 1)
        )
    }
}

impl ReplayKey {
    /// An arrival scale that is not a positive number (which no replay has) is refused.
    fn check(&self) -> Result<(), ColumnError> {
        if self.arrival_scale.is_finite() && self.arrival_scale > 0.0 {
            Ok(())
        } else {
            Err(column_error(
                "arrival_scale",
                format_args!("{} is not a positive factor", self.arrival_scale),
            ))
        }
    }
}

impl CheckedRow for ReplayRunRow {
    fn check(&self) -> Result<(), ColumnError> {
        self.key.check()?;
        let energies = [
            ("energy_kwh", self.energy_kwh),
            ("gpu_busy_kwh", self.gpu_busy_kwh),
            ("gpu_idle_kwh", self.gpu_idle_kwh),
            ("cpu_kwh", self.cpu_kwh),
            ("sleep_kwh", self.sleep_kwh),
            ("mean_power_w", self.mean_power_w),
            ("mean_active_nodes", self.mean_active_nodes),
            ("job_energy_kwh", self.job_energy_kwh),
        ];
        for (column, value) in energies {
            non_negative(column, value)?;
        }
        // Statistics of an empty sample (no task completed) are `nan`.
        let statistics = [
            ("mean_jct_s", self.mean_jct_s),
            ("p50_jct_s", self.p50_jct_s),
            ("p95_jct_s", self.p95_jct_s),
            ("p99_jct_s", self.p99_jct_s),
            ("mean_wait_s", self.mean_wait_s),
            ("mean_run_s", self.mean_run_s),
            ("makespan_s", self.makespan_s),
        ];
        for (column, value) in statistics {
            statistic(column, value)?;
        }
        optional_non_negative("carbon_kg", self.carbon_kg)?;
        optional_non_negative("job_carbon_kg", self.job_carbon_kg)?;
        optional_non_negative("bound_kwh", self.bound_kwh)?;
        self.bound_gap.map_or(Ok(()), |g| finite("bound_gap", g))
    }
}

impl CheckedRow for ReplayTimelineRow {
    fn check(&self) -> Result<(), ColumnError> {
        self.key.check()?;
        non_negative("time_s", self.time_s)?;
        non_negative("power_w", self.power_w)?;
        // Above 100 under oversubscription.
        non_negative("allocated_gpu_pct", self.allocated_gpu_pct)?;
        optional_non_negative("bound_power_w", self.bound_power_w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> ReplayKey {
        ReplayKey {
            source: "eaco-28".into(),
            nodes: 28,
            policy: "pwr:200,fgd:800".into(),
            seed: 43,
            arrival_scale: 2.5,
            idle: "sleep-when-empty".into(),
        }
    }

    #[test]
    fn headers_name_every_field_in_order() {
        assert!(ReplayRunRow::CSV_HEADER.starts_with(ReplayKey::CSV_HEADER));
        assert!(ReplayTimelineRow::CSV_HEADER.starts_with(ReplayKey::CSV_HEADER));
    }

    #[test]
    fn replay_rows_read_back() {
        let run = ReplayRunRow {
            key: key(),
            tasks: 400,
            completed: 399,
            failed: 0,
            unfinished: 1,
            energy_kwh: 1234.5678,
            gpu_busy_kwh: 800.25,
            gpu_idle_kwh: 200.5,
            cpu_kwh: 230.0,
            sleep_kwh: 3.8178,
            mean_power_w: 51_234.25,
            mean_jct_s: 7200.5,
            p50_jct_s: 6000.0,
            p95_jct_s: 12_000.25,
            p99_jct_s: 13_000.0,
            mean_wait_s: 12.5,
            mean_run_s: 7188.0,
            makespan_s: 720_000.0,
            mean_active_nodes: 12.3456,
            undos: 3,
            deadline_misses: 2,
            job_energy_kwh: 456.125,
            carbon_kg: Some(300.5),
            job_carbon_kg: None,
            stopped_early: "budget exhausted at 5 s, with 1 job left".into(),
            bound_kwh: Some(1000.125),
            bound_status: "time_limit".into(),
            bound_gap: Some(0.234_567),
        };
        let text = format!("{}\n{}\n", ReplayRunRow::CSV_HEADER, run.csv_line());
        let back: Vec<ReplayRunRow> = csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, [run]);

        let sample = ReplayTimelineRow {
            key: key(),
            time_s: 3600.5,
            power_w: 40_000.5,
            active_nodes: 7,
            allocated_gpu_pct: 87.125,
            queue_length: 2,
            bound_power_w: Some(35_000.5),
        };
        let text = format!("{}\n{}\n", ReplayTimelineRow::CSV_HEADER, sample.csv_line());
        let back: Vec<ReplayTimelineRow> = csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, [sample]);
    }
}
