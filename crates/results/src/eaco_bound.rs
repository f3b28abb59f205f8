//! The rows of `eaco_bounds.csv`: EaCO's exact counterpart (`gapbench_bounds::eaco_bound`), a
//! proven lower bound on the cluster energy of any co-allocation of an EaCO-setup replay's
//! jobs that ends every job inside its window, one row per (source, idle policy, seed,
//! window).

use serde::{Deserialize, Serialize};

use crate::check::{non_negative, non_negative_or_inf, CheckedRow, ColumnError};

use crate::csv_text::{field, number, optional_number};

/// The windows every job must end in: its deadline, or (for a policy that missed some)
/// the policy's own makespan, so that the bound holds for that policy's replay too.
pub const DEADLINE_WINDOWS: &str = "deadlines";

/// One bound: its instance, its value and how it was proven.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EacoBoundRow {
    /// `eaco-<servers>` (or `eaco-<servers>-d<σ>` in a deadline-factor sweep).
    pub source: String,
    pub nodes: usize,
    /// `always-on` or `sleep-when-empty`.
    pub idle: String,
    pub seed: u64,
    /// σ: deadline = arrival + σ · solo duration.
    pub deadline_factor: f64,
    /// [`DEADLINE_WINDOWS`], or `makespan:<policy>`: every job ends by that policy's
    /// makespan or its deadline, whichever is later.
    pub windows: String,
    /// The bound, kWh: the larger of the closed form and the certified LP (`inf` when no
    /// schedule meets the windows).
    #[serde(with = "crate::float_text")]
    pub bound_kwh: f64,
    /// Per-job closed form, kWh.
    #[serde(with = "crate::float_text")]
    pub closed_form_kwh: f64,
    /// Time-indexed pattern LP, certified by weak duality, kWh (empty when not run).
    pub lp_kwh: Option<f64>,
    /// `optimal`, `time-limit` (the value is still a valid bound), `infeasible`, `skipped`.
    pub lp_status: String,
    /// The LP's slot length (its window size), seconds, and its size.
    pub slot_s: Option<f64>,
    pub slots: usize,
    pub columns: usize,
    pub rows: usize,
    /// Co-location patterns a server can hold (multisets of job classes). (No solve time:
    /// the file is deterministic; `cell-times/` and the bench's log hold times.)
    pub patterns: usize,
}

impl EacoBoundRow {
    pub const CSV_HEADER: &'static str = "source,nodes,idle,seed,deadline_factor,windows,bound_kwh,closed_form_kwh,lp_kwh,lp_status,slot_s,slots,columns,rows,patterns";

    pub fn csv_line(&self) -> String {
        format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            field(&self.source),
            self.nodes,
            field(&self.idle),
            self.seed,
            number(self.deadline_factor, 4),
            field(&self.windows),
            number(self.bound_kwh, 4),
            number(self.closed_form_kwh, 4),
            optional_number(self.lp_kwh, 4),
            field(&self.lp_status),
            optional_number(self.slot_s, 1),
            self.slots,
            self.columns,
            self.rows,
            self.patterns
        )
    }

    /// The policy whose makespan set the windows, if any.
    pub fn makespan_policy(&self) -> Option<&str> {
        self.windows.strip_prefix("makespan:")
    }
}

impl CheckedRow for EacoBoundRow {
    fn check(&self) -> Result<(), ColumnError> {
        non_negative("deadline_factor", self.deadline_factor)?;
        non_negative_or_inf("bound_kwh", self.bound_kwh)?;
        non_negative_or_inf("closed_form_kwh", self.closed_form_kwh)?;
        self.lp_kwh
            .map_or(Ok(()), |lp| non_negative_or_inf("lp_kwh", lp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::read_rows;

    #[test]
    fn a_row_reads_back_as_written() {
        let row = EacoBoundRow {
            source: "eaco-28".into(),
            nodes: 28,
            idle: "sleep-when-empty".into(),
            seed: 42,
            deadline_factor: 1.2,
            windows: "makespan:fifo-o".into(),
            bound_kwh: 1234.5,
            closed_form_kwh: 1000.25,
            lp_kwh: Some(1234.5),
            lp_status: "optimal".into(),
            slot_s: Some(3600.0),
            slots: 250,
            columns: 40_000,
            rows: 12_000,
            patterns: 79,
        };
        let dir = std::env::temp_dir().join(format!("eaco-bound-row-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("eaco_bounds.csv");
        let text = format!("{}\n{}\n", EacoBoundRow::CSV_HEADER, row.csv_line());
        std::fs::write(&path, text).unwrap();
        let table = read_rows::<EacoBoundRow>(&path, &[]).unwrap().unwrap();
        assert_eq!(table.rows[0].value, row);
        assert_eq!(table.rows[0].value.makespan_policy(), Some("fifo-o"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
