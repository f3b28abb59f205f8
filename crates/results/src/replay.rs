//! The rows of the time-mode CSVs: one replay's totals (`replay_runs.csv`) and its
//! downsampled timeline (`replay_timeline.csv`), both keyed by the replay cell
//! (source, policy, seed, arrival scale, idle policy).

use serde::{Deserialize, Serialize};

use crate::check::{column_error, finite, non_negative, optional_non_negative, statistic};
use crate::check::{CheckedRow, ColumnError};

use crate::declare_row;

/// Bump when a replay row changes meaning: it is part of every replay cell's key, so cells
/// of an older schema are recomputed.
pub const REPLAY_SCHEMA_VERSION: u32 = 3;

/// Timeline samples per replay in `replay_timeline.csv` (plus the final state).
pub const TIMELINE_SAMPLES: usize = 200;

declare_row! {
    /// What identifies a replay: where its cluster and tasks came from and how it ran (the
    /// first columns of `replay_runs.csv` and `replay_timeline.csv`).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct ReplayKey in "replay_runs.csv" {
        /// `default` (an openb trace at its real times), `openb-like` (the embedded
        /// stand-in) or `eaco-<servers>` (EaCO's evaluation setup).
        source: String [Text, ""],
        /// Nodes of the source's cluster.
        nodes: usize [Plain, ""],
        /// The time-mode policy.
        policy: String [Text, ""],
        /// The seed.
        seed: u64 [Plain, ""],
        /// Inter-arrival times divided by this factor.
        arrival_scale: f64 [Fixed(3), ""],
        /// `always-on` or `sleep-when-empty`.
        idle: String [Text, ""],
    }
}

declare_row! {
    /// One replay's energy, job times and cluster use: one row of `replay_runs.csv`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct ReplayRunRow in "replay_runs.csv" {
        /// The replay.
        #[serde(flatten)]
        key: ReplayKey [Nested, ""],
        /// Tasks of the workload.
        tasks: usize [Plain, ""],
        /// Tasks that ran to their end.
        completed: usize [Plain, ""],
        /// Tasks that fit no node.
        failed: usize [Plain, ""],
        /// Still waiting or running when the replay stopped.
        unfinished: usize [Plain, ""],
        /// Cluster energy: every node by the power model, idle and sleep included.
        #[serde(with = "crate::float_text")]
        energy_kwh: f64 [Fixed(4), "kWh"],
        /// GPU energy of the busy GPUs.
        #[serde(with = "crate::float_text")]
        gpu_busy_kwh: f64 [Fixed(4), "kWh"],
        /// GPU energy of the idle GPUs of powered nodes.
        #[serde(with = "crate::float_text")]
        gpu_idle_kwh: f64 [Fixed(4), "kWh"],
        /// CPU energy.
        #[serde(with = "crate::float_text")]
        cpu_kwh: f64 [Fixed(4), "kWh"],
        /// Energy of nodes asleep (`sleep-when-empty`).
        #[serde(with = "crate::float_text")]
        sleep_kwh: f64 [Fixed(4), "kWh"],
        /// Cluster energy over the makespan.
        #[serde(with = "crate::float_text")]
        mean_power_w: f64 [Fixed(2), "W"],
        /// Mean job completion time (end − arrival) of completed tasks (`nan` when none
        /// completed, likewise the percentiles, waits and run times).
        #[serde(with = "crate::float_text")]
        mean_jct_s: f64 [Fixed(2), "s"],
        /// Median JCT of completed tasks.
        #[serde(with = "crate::float_text")]
        p50_jct_s: f64 [Fixed(2), "s"],
        /// 95th percentile of JCT.
        #[serde(with = "crate::float_text")]
        p95_jct_s: f64 [Fixed(2), "s"],
        /// 99th percentile of JCT.
        #[serde(with = "crate::float_text")]
        p99_jct_s: f64 [Fixed(2), "s"],
        /// Mean wait (first start − arrival) of started tasks.
        #[serde(with = "crate::float_text")]
        mean_wait_s: f64 [Fixed(2), "s"],
        /// Mean run time (end − first start) of completed tasks: EaCO's "runtime".
        #[serde(with = "crate::float_text")]
        mean_run_s: f64 [Fixed(2), "s"],
        /// From the first arrival to the last event.
        #[serde(with = "crate::float_text")]
        makespan_s: f64 [Fixed(2), "s"],
        /// Time-weighted mean of nodes with at least one task.
        #[serde(with = "crate::float_text")]
        mean_active_nodes: f64 [Fixed(4), ""],
        /// Placements a policy undid (the task went back to the queue).
        undos: u32 [Plain, ""],
        /// Completed tasks that ended after their deadline.
        deadline_misses: usize [Plain, ""],
        /// Job energy: what the training jobs drew by the training model (what budgets
        /// limit).
        #[serde(with = "crate::float_text")]
        job_energy_kwh: f64 [Fixed(4), "kWh"],
        /// Carbon of cluster energy (empty without a carbon series).
        carbon_kg: Option<f64> [Fixed(4), "kg CO2e"],
        /// Carbon of job energy (empty without a carbon series).
        job_carbon_kg: Option<f64> [Fixed(4), "kg CO2e"],
        /// Why the replay stopped before every task was done (a spent budget…); empty when
        /// not.
        stopped_early: String [Text, ""],
        /// A proven lower bound on the energy of any placement of the same tasks at this
        /// replay's own start and end times (`gapbench_bounds::replay_bound`); empty when not
        /// computed.
        bound_kwh: Option<f64> [Fixed(4), "kWh"],
        /// Of that, what the windows' configuration LPs proved before branch and price
        /// raised them towards integer wake-ups (equal to `bound_kwh` without branching):
        /// `bound_kwh − bound_lp_kwh` is the LP's integrality gap the bound closed.
        bound_lp_kwh: Option<f64> [Fixed(4), "kWh"],
        /// What the bound's windows proved (`ReplayBoundStatus`): `windows_integer` (every
        /// window's integer optimum), `branch_limit` (a window's tree stopped at its node
        /// cap or could not split further), `windows_converged` (every LP converged, no
        /// branching), `round_limit` (a window's column generation stopped at its round
        /// cap) — each the same on every run — or `time_limit` (still a bound, may differ
        /// between runs); empty without a bound.
        bound_status: String [Text, ""],
        /// `(energy − bound) / bound`: the replay is at most this far above the optimum.
        bound_gap: Option<f64> [Fixed(6), ""],
    }
}

declare_row! {
    /// The cluster's state at one sample time of a replay (the state after the last event
    /// at or before `time_s`): one row of `replay_timeline.csv`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct ReplayTimelineRow in "replay_timeline.csv" {
        /// The replay.
        #[serde(flatten)]
        key: ReplayKey [Nested, ""],
        /// Seconds since the replay's first arrival.
        time_s: f64 [Fixed(1), "s"],
        /// Cluster power.
        power_w: f64 [Fixed(1), "W"],
        /// Nodes with at least one task.
        active_nodes: u32 [Plain, ""],
        /// Reserved GPU over capacity (above 100 only under oversubscription).
        allocated_gpu_pct: f64 [Fixed(3), "%"],
        /// Tasks waiting.
        queue_length: u32 [Plain, ""],
        /// The energy bound's power then: no placement of the tasks running throughout its
        /// window draws less (empty without a bound).
        bound_power_w: Option<f64> [Fixed(1), "W"],
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
        optional_non_negative("bound_lp_kwh", self.bound_lp_kwh)?;
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
        let key = "source,nodes,policy,seed,arrival_scale,idle";
        assert!(ReplayRunRow::csv_header().starts_with(&format!("{key},tasks,")));
        assert!(ReplayTimelineRow::csv_header().starts_with(&format!("{key},time_s,")));
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
            bound_lp_kwh: Some(990.5),
            bound_status: "time_limit".into(),
            bound_gap: Some(0.234_567),
        };
        let text = ReplayRunRow::csv(std::slice::from_ref(&run));
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
        let text = ReplayTimelineRow::csv(std::slice::from_ref(&sample));
        let back: Vec<ReplayTimelineRow> = csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, [sample]);
    }
}
