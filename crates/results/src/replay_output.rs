//! The per-event files of `gapbench replay`: `timeline.csv` (the cluster after every event)
//! and `tasks.csv` (every task's fate). The replay engine builds these rows; the numbers
//! are spelled shortest-exact (as serde's CSV writer, which wrote them first).

use serde::Serialize;

use crate::declare_row;

/// The last column of `timeline.csv`, left out (header and fields) without a bound.
const BOUND_COLUMN: &str = "bound_power_watts";

declare_row! {
    /// The cluster after one event. Power is constant until the next row, so energy over
    /// any interval is read off as power × time.
    #[derive(Debug, Clone, PartialEq, Serialize)]
    pub struct TimelineRow in "timeline.csv" {
        /// Seconds on the trace's clock.
        time_s: f64 [Shortest, "s"],
        /// `arrival`, `completion`, `observation`, `round`, `tick`, or `until` for the last
        /// row of a replay `until_s` stopped (the cluster then, energy integrated up to it).
        event: &'static str [Text, ""],
        /// Cluster power (nodes by the power model, idle and sleep included).
        power_watts: f64 [Shortest, "W"],
        /// Σ of the running training jobs' power by the training model (what budgets
        /// limit).
        job_power_watts: f64 [Shortest, "W"],
        /// Cluster energy so far.
        energy_kwh: f64 [Shortest, "kWh"],
        /// Job energy so far.
        job_energy_kwh: f64 [Shortest, "kWh"],
        /// Carbon of cluster energy so far (0 without a carbon series).
        carbon_kg: f64 [Shortest, "kg CO2e"],
        /// Tasks running.
        running: u32 [Plain, ""],
        /// Reserved milli-GPU over capacity; above 100 only under oversubscription.
        allocated_gpu_pct: f64 [Shortest, "%"],
        /// FGD fragmentation (milli-GPU no typical task could use); not meaningful under
        /// oversubscription, where reservations are not tracked per device.
        frag_gpu_milli: f64 [Shortest, "milli-GPU"],
        /// Nodes with at least one task.
        active_nodes: u32 [Plain, ""],
        /// GPU devices with at least one task.
        active_gpus: u32 [Plain, ""],
        /// Tasks waiting.
        queue_length: u32 [Plain, ""],
        /// A proven lower bound on any placement's power then (the harness's `--bound`;
        /// the column is absent without it).
        #[serde(skip_serializing_if = "Option::is_none")]
        bound_power_watts: Option<f64> [Shortest, "W"],
    }
}

/// `timeline.csv`'s text: nothing for no rows; the bound column only when the first row
/// has a bound (the replay's `--bound` fills every row or none).
pub fn timeline_csv(rows: &[TimelineRow]) -> Vec<u8> {
    let Some(first) = rows.first() else {
        return Vec::new();
    };
    if first.bound_power_watts.is_some() {
        return TimelineRow::csv(rows).into_bytes();
    }
    let header = TimelineRow::csv_header();
    let suffix = format!(",{BOUND_COLUMN}");
    let mut out = header
        .strip_suffix(&suffix)
        .expect("the bound is the last column")
        .to_string();
    out.push('\n');
    for row in rows {
        let line = row.csv_line();
        out.push_str(line.strip_suffix(',').unwrap_or(&line));
        out.push('\n');
    }
    out.into_bytes()
}

declare_row! {
    /// One task's fate in a replay, derived attributes included (one row of `tasks.csv`).
    #[derive(Debug, Clone, PartialEq, Serialize)]
    pub struct TaskRow in "tasks.csv" {
        /// The task's name in the trace.
        name: String [Text, ""],
        /// Its QoS class (`LS`, `BE`…).
        qos: &'static str [Text, ""],
        /// Its phase in the trace (`Running`, `Succeeded`…).
        phase: &'static str [Text, ""],
        /// GPUs it asks for.
        gpu_count: u8 [Plain, ""],
        /// Share of each GPU it asks for.
        gpu_milli: u16 [Plain, "milli-GPU"],
        /// Arrival on the trace's clock.
        arrival_s: f64 [Shortest, "s"],
        /// Its solo duration.
        duration_s: f64 [Shortest, "s"],
        /// Already there when the trace began.
        left_censored: bool [Plain, ""],
        /// Still running at the trace end: its duration is a lower bound.
        right_censored: bool [Plain, ""],
        /// GPU utilisation while it runs.
        util_permille: u32 [Plain, "‰"],
        /// GPU memory it uses.
        gpu_memory_permille: u32 [Plain, "‰"],
        /// Training epochs.
        epochs: u32 [Plain, ""],
        /// Its deadline (empty when it has none).
        deadline_s: Option<f64> [Shortest, "s"],
        /// First start (an undone task keeps its first start); empty when it never started.
        start_s: Option<f64> [Shortest, "s"],
        /// End; empty when it did not end.
        end_s: Option<f64> [Shortest, "s"],
        /// First start − arrival.
        wait_s: Option<f64> [Shortest, "s"],
        /// End − arrival.
        jct_s: Option<f64> [Shortest, "s"],
        /// Run time over solo duration.
        slowdown: Option<f64> [Shortest, ""],
        /// It fit no node.
        failed: bool [Plain, ""],
        /// Why it failed (`never_fits:<resource>` or `no_room`), empty otherwise.
        failure: &'static str [Text, ""],
        /// Times its placement was undone.
        undos: u32 [Plain, ""],
        /// It ended after its deadline.
        deadline_missed: bool [Plain, ""],
        /// Changes of placement or configuration while running (resize, re-clock, move).
        reconfigurations: u32 [Plain, ""],
        /// The task's share of its nodes' energy while it ran.
        energy_kwh: f64 [Shortest, "kWh"],
        /// Its job energy by the training model (0 for tasks that are not training jobs).
        job_energy_kwh: f64 [Shortest, "kWh"],
        /// That job energy's carbon.
        job_carbon_kg: f64 [Shortest, "kg CO2e"],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::rows_to_csv;

    fn serde_csv<T: Serialize>(rows: &[T]) -> Vec<u8> {
        let mut writer = csv::Writer::from_writer(Vec::new());
        for row in rows {
            writer.serialize(row).unwrap();
        }
        writer.into_inner().unwrap()
    }

    fn timeline(bound: Option<f64>) -> Vec<TimelineRow> {
        (0..3)
            .map(|i| TimelineRow {
                time_s: 0.1 * f64::from(i),
                event: "arrival",
                power_watts: 1234.5,
                job_power_watts: 1e-7,
                energy_kwh: 1.0 / 3.0,
                job_energy_kwh: 0.0,
                carbon_kg: 2.5,
                running: i,
                allocated_gpu_pct: 100.0,
                frag_gpu_milli: 1e16,
                active_nodes: 2,
                active_gpus: 3,
                queue_length: 0,
                bound_power_watts: bound,
            })
            .collect()
    }

    /// The declared spelling is serde's CSV writer's, the bound column present or not.
    #[test]
    fn timeline_keeps_serde_csv_bytes() {
        for bound in [None, Some(1000.25)] {
            let rows = timeline(bound);
            assert_eq!(timeline_csv(&rows), serde_csv(&rows));
        }
        assert!(timeline_csv(&[]).is_empty());
    }

    #[test]
    fn tasks_keep_serde_csv_bytes() {
        let row = TaskRow {
            name: "pod,\"x\"".into(),
            qos: "LS",
            phase: "Running",
            gpu_count: 2,
            gpu_milli: 500,
            arrival_s: 12.0,
            duration_s: 3600.5,
            left_censored: false,
            right_censored: true,
            util_permille: 800,
            gpu_memory_permille: 300,
            epochs: 10,
            deadline_s: None,
            start_s: Some(13.0),
            end_s: None,
            wait_s: Some(1.0),
            jct_s: None,
            slowdown: Some(1.25),
            failed: false,
            failure: "",
            undos: 0,
            deadline_missed: false,
            reconfigurations: 1,
            energy_kwh: 0.1 + 0.2,
            job_energy_kwh: 0.0,
            job_carbon_kg: 0.0,
        };
        let rows = [row];
        assert_eq!(rows_to_csv(&rows), serde_csv(&rows));
    }
}
