//! The rows of `eaco_bounds.csv`: EaCO's exact counterpart (`gapbench_bounds::eaco_bound`), a
//! proven lower bound on the cluster energy of any co-allocation of an EaCO-setup replay's
//! jobs that ends every job inside its window, one row per (source, idle policy, seed,
//! window).

use serde::{Deserialize, Serialize};

use crate::check::{non_negative, non_negative_or_inf, CheckedRow, ColumnError};

use crate::declare_row;

/// The windows every job must end in: its deadline, or (for a policy that missed some)
/// the policy's own makespan, so that the bound holds for that policy's replay too.
pub const DEADLINE_WINDOWS: &str = "deadlines";

declare_row! {
    /// One bound of `eaco_bounds.csv`: its instance, its value and how it was proven.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct EacoBoundRow in "eaco_bounds.csv" {
        /// `eaco-<servers>` (or `eaco-<servers>-d<σ>` in a deadline-factor sweep).
        source: String [Text, ""],
        /// Servers of the setup.
        nodes: usize [Plain, ""],
        /// `always-on` or `sleep-when-empty`.
        idle: String [Text, ""],
        /// The seed of the setup's jobs.
        seed: u64 [Plain, ""],
        /// σ: deadline = arrival + σ · solo duration.
        deadline_factor: f64 [Fixed(4), ""],
        /// `deadlines`, or `makespan:<policy>`: every job ends by that policy's makespan or
        /// its deadline, whichever is later.
        windows: String [Text, ""],
        /// The bound: the larger of the closed form and the certified LP (`inf` when no
        /// schedule meets the windows).
        #[serde(with = "crate::float_text")]
        bound_kwh: f64 [Fixed(4), "kWh"],
        /// The per-job closed form.
        #[serde(with = "crate::float_text")]
        closed_form_kwh: f64 [Fixed(4), "kWh"],
        /// The time-indexed pattern LP, certified by weak duality (empty when not run).
        lp_kwh: Option<f64> [Fixed(4), "kWh"],
        /// `optimal`, `time-limit` (the value is still a valid bound), `infeasible`,
        /// `skipped`.
        lp_status: String [Text, ""],
        /// The LP's slot length (its window size).
        slot_s: Option<f64> [Fixed(1), "s"],
        /// Time slots of the LP.
        slots: usize [Plain, ""],
        /// Columns of the LP.
        columns: usize [Plain, ""],
        /// Rows of the LP.
        rows: usize [Plain, ""],
        /// Co-location patterns a server can hold (multisets of job classes). (No solve
        /// time: the file is deterministic; `cell-times/` and the bench's log hold times.)
        patterns: usize [Plain, ""],
    }
}

impl EacoBoundRow {
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
        let text = EacoBoundRow::csv(std::slice::from_ref(&row));
        std::fs::write(&path, text).unwrap();
        let table = read_rows::<EacoBoundRow>(&path, &[]).unwrap().unwrap();
        assert_eq!(table.rows[0].value, row);
        assert_eq!(table.rows[0].value.makespan_policy(), Some("fifo-o"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
