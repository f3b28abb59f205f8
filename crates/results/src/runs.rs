//! The rows of the sweep CSVs a report reads: one run's final state (`runs.csv`) and the
//! means over seeds at one arrived percent (`mean_grid.csv`).

use serde::{Deserialize, Serialize};

use crate::check::{non_negative, percent, CheckedRow, ColumnError};
use crate::csv_text::field;

/// One row of `runs.csv`: a run's counts and its state after the last event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub trace: String,
    /// The trace family (`default`, `gpushare`…): traces of a family share a figure.
    pub family: String,
    pub policy: String,
    pub seed: u64,
    pub events: usize,
    pub placed: usize,
    pub failed: usize,
    pub cloned_tasks: usize,
    pub removed_tasks: usize,
    pub final_arrived_pct: f64,
    pub final_alloc_pct: f64,
    pub final_frag_ratio_pct: f64,
    pub final_power_total_w: f64,
}

impl RunRow {
    pub const CSV_HEADER: &'static str = "trace,family,policy,seed,events,placed,failed,cloned_tasks,removed_tasks,final_arrived_pct,final_alloc_pct,final_frag_ratio_pct,final_power_total_w";

    pub fn csv_line(&self) -> String {
        format!(
            "{},{},{},{},{},{},{},{},{},{:.4},{:.4},{:.4},{:.2}",
            field(&self.trace),
            field(&self.family),
            field(&self.policy),
            self.seed,
            self.events,
            self.placed,
            self.failed,
            self.cloned_tasks,
            self.removed_tasks,
            self.final_arrived_pct,
            self.final_alloc_pct,
            self.final_frag_ratio_pct,
            self.final_power_total_w
        )
    }
}

/// The columns of `mean_grid.csv` the figures and the report read (the runner writes more:
/// every column of a grid sample, after `trace,family,policy,seeds`).
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
        let text = format!("{}\n{}\n", RunRow::CSV_HEADER, row.csv_line());
        let back: Vec<RunRow> = csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, [row]);
    }
}
