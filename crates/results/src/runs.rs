//! The rows of the sweep CSVs a report reads: one run's final state (`runs.csv`) and the
//! means over seeds at one arrived percent (`mean_grid.csv`).

use serde::{Deserialize, Serialize};

use crate::check::{non_negative, percent, CheckedRow, ColumnError};
use crate::declare_row;

declare_row! {
    /// One row of `runs.csv`: a sweep run's counts and its cluster after the last event.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct RunRow in "runs.csv" {
        /// The trace the sweep ran.
        trace: String [Text, ""],
        /// The trace family (`default`, `gpushare`…): traces of a family share a figure.
        family: String [Text, ""],
        /// The placement policy.
        policy: String [Text, ""],
        /// The seed (task arrival order).
        seed: u64 [Plain, ""],
        /// Task events (arrivals) replayed.
        events: usize [Plain, ""],
        /// Events whose task was placed.
        placed: usize [Plain, ""],
        /// Events whose task fit nowhere.
        failed: usize [Plain, ""],
        /// Clones appended by tune-up (`--tune`: the workload scaled to a multiple of the
        /// cluster's GPU capacity).
        cloned_tasks: usize [Plain, ""],
        /// Tasks removed by tune-down.
        removed_tasks: usize [Plain, ""],
        /// Arrived GPU demand at the end, % of cluster GPU capacity.
        final_arrived_pct: f64 [Fixed(4), "%"],
        /// Allocated GPU at the end, % of cluster GPU capacity.
        final_alloc_pct: f64 [Fixed(4), "%"],
        /// Fragmented GPU at the end, % of the idle GPU.
        final_frag_ratio_pct: f64 [Fixed(4), "%"],
        /// Cluster power at the end (CPU and GPU, every node).
        final_power_total_w: f64 [Fixed(2), "W"],
    }
}

declare_row! {
    /// The cluster's values at one point of a sweep: the columns shared by `grid.csv`,
    /// `mean_grid.csv` and `mean_curve.csv`.
    #[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
    pub struct GridSample in "mean_curve.csv" {
        /// Arrived GPU demand, % of cluster GPU capacity (an integer on the grid).
        arrived_pct: f64 [Fixed(0), "%"],
        /// Allocated GPU, % of cluster GPU capacity.
        alloc_pct: f64 [Fixed(4), "%"],
        /// FGD fragmentation: idle GPU no typical task could use.
        frag_gpu_milli: f64 [Fixed(2), "milli-GPU"],
        /// Fragmented GPU, % of the idle GPU.
        frag_ratio_pct: f64 [Fixed(4), "%"],
        /// CPU power of every node.
        power_cpu_w: f64 [Fixed(2), "W"],
        /// GPU power of every node.
        power_gpu_w: f64 [Fixed(2), "W"],
        /// Cluster power: CPU and GPU.
        power_total_w: f64 [Fixed(2), "W"],
        /// Nodes holding at least one task.
        used_nodes: f64 [Fixed(2), ""],
        /// Tasks that failed to place so far.
        failed_tasks: f64 [Fixed(2), ""],
    }
}

impl GridSample {
    /// The fields in column order.
    pub fn fields(&self) -> [f64; 9] {
        [
            self.arrived_pct,
            self.alloc_pct,
            self.frag_gpu_milli,
            self.frag_ratio_pct,
            self.power_cpu_w,
            self.power_gpu_w,
            self.power_total_w,
            self.used_nodes,
            self.failed_tasks,
        ]
    }

    /// A sample from its fields in column order.
    pub fn from_fields(f: [f64; 9]) -> GridSample {
        GridSample {
            arrived_pct: f[0],
            alloc_pct: f[1],
            frag_gpu_milli: f[2],
            frag_ratio_pct: f[3],
            power_cpu_w: f[4],
            power_gpu_w: f[5],
            power_total_w: f[6],
            used_nodes: f[7],
            failed_tasks: f[8],
        }
    }
}

declare_row! {
    /// One row of `grid.csv`: a sweep run's cluster at one integer arrived percent (the
    /// state after the last event at or below it).
    #[derive(Debug, Clone, PartialEq, Serialize)]
    pub struct GridRow in "grid.csv" {
        /// The trace the sweep ran.
        trace: String [Text, ""],
        /// The trace family.
        family: String [Text, ""],
        /// The placement policy.
        policy: String [Text, ""],
        /// The seed.
        seed: u64 [Plain, ""],
        /// The cluster then.
        #[serde(flatten)]
        sample: GridSample [Nested, ""],
    }
}

declare_row! {
    /// One row of `mean_grid.csv`: the means over seeds of `grid.csv` at one integer
    /// arrived percent, over the percents every seed reached.
    #[derive(Debug, Clone, PartialEq, Serialize)]
    pub struct MeanGridLine in "mean_grid.csv" {
        /// The trace the sweep ran.
        trace: String [Text, ""],
        /// The trace family.
        family: String [Text, ""],
        /// The placement policy.
        policy: String [Text, ""],
        /// Seeds the means are over.
        seeds: u64 [Plain, ""],
        /// The means of the cluster's values.
        #[serde(flatten)]
        sample: GridSample [Nested, ""],
    }
}

/// The columns of `mean_grid.csv` ([`MeanGridLine`]) the figures and the report read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeanGridRow {
    pub trace: String,
    pub family: String,
    pub policy: String,
    /// Seeds the means are over.
    pub seeds: u64,
    /// Arrived GPU demand, % of cluster GPU capacity (integer grid).
    pub arrived_pct: f64,
    pub alloc_pct: f64,
    pub frag_ratio_pct: f64,
    pub power_total_w: f64,
}

impl CheckedRow for RunRow {
    fn check(&self) -> Result<(), ColumnError> {
        non_negative("final_arrived_pct", self.final_arrived_pct)?;
        percent("final_alloc_pct", self.final_alloc_pct)?;
        percent("final_frag_ratio_pct", self.final_frag_ratio_pct)?;
        non_negative("final_power_total_w", self.final_power_total_w)
    }
}

impl CheckedRow for MeanGridRow {
    fn check(&self) -> Result<(), ColumnError> {
        // Arrived demand runs past 100 % (the sweep goes to about 130 %).
        non_negative("arrived_pct", self.arrived_pct)?;
        percent("alloc_pct", self.alloc_pct)?;
        percent("frag_ratio_pct", self.frag_ratio_pct)?;
        non_negative("power_total_w", self.power_total_w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_rows_read_back() {
        let row = RunRow {
            trace: "default".into(),
            family: "default".into(),
            policy: "pwr:200,fgd:800".into(),
            seed: 42,
            events: 10_800,
            placed: 9_000,
            failed: 100,
            cloned_tasks: 3,
            removed_tasks: 0,
            final_arrived_pct: 130.0,
            final_alloc_pct: 95.25,
            final_frag_ratio_pct: 30.5,
            final_power_total_w: 1_234_567.25,
        };
        let text = RunRow::csv(std::slice::from_ref(&row));
        let back: Vec<RunRow> = csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, [row]);
    }

    /// What the report reads of `mean_grid.csv` is among the columns the runner writes.
    #[test]
    fn mean_grid_rows_read_declared_columns() {
        let line = MeanGridLine {
            trace: "default".into(),
            family: "default".into(),
            policy: "pwr:200,fgd:800".into(),
            seeds: 3,
            sample: GridSample::from_fields([90.0, 85.5, 1200.25, 30.5, 1e5, 2e5, 3e5, 40.0, 2.0]),
        };
        let text = MeanGridLine::csv(std::slice::from_ref(&line));
        let back: Vec<MeanGridRow> = csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            (back[0].seeds, back[0].alloc_pct, back[0].power_total_w),
            (3, 85.5, 3e5)
        );
        assert_eq!(back[0].policy, line.policy);
    }
}
