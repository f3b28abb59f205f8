//! One exact gap: a heuristic's value at a checkpoint, the solver's incumbent and bound,
//! and the interval the gap lies in.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::csv_text::{field, number, optional_number};
use crate::float_text;
use crate::{Objective, SolveStatus};

/// Bumped whenever [`GapRow`] or [`crate::FrontRow`] change shape or meaning: stored gap
/// cells carry it in their key, so cells of an older schema are recomputed, never reused.
pub const GAP_SCHEMA_VERSION: u32 = 4;

/// One row of `gaps.csv` (after its `trace` column in a bench folder). Fields added here
/// (solve method, columns, iterations…) go to the end of [`GapRow::CSV_HEADER`] and
/// [`GapRow::csv_line`], and bump [`GAP_SCHEMA_VERSION`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GapRow {
    /// Arrived GPU demand, % of the (sub-)cluster's capacity.
    #[serde(with = "float_text")]
    pub checkpoint_pct: f64,
    pub objective: Objective,
    pub policy: String,
    pub seed: u64,
    /// Nodes of the (sub-)cluster.
    pub nodes: usize,
    /// Tasks the solver decided about: the heuristic's placed tasks for power and
    /// fragmentation, every arrived task for allocation.
    pub tasks: usize,
    /// Watts (power), milli-GPU allocated (alloc) or Σ F(n) in milli-GPU (frag).
    #[serde(with = "float_text")]
    pub heuristic_value: f64,
    #[serde(with = "float_text::option")]
    pub incumbent: Option<f64>,
    #[serde(with = "float_text::option")]
    pub bound: Option<f64>,
    pub status: SolveStatus,
    /// The gap against the incumbent (`None` without one).
    #[serde(with = "float_text::option")]
    pub gap_low_pct: Option<f64>,
    /// The gap against the proven bound; +infinity when no finite one exists.
    #[serde(with = "float_text::option")]
    pub gap_high_pct: Option<f64>,
    #[serde(with = "float_text")]
    pub solve_s: f64,
    /// A fingerprint of the instance solved (cluster, FGD target workload and the tasks the
    /// solver decided about), the same for every policy whose snapshot holds the same tasks:
    /// their solves bound one optimum ([`crate::best_known`]). Empty in folders written
    /// before it existed.
    #[serde(default)]
    pub instance: String,
}

impl GapRow {
    pub const CSV_HEADER: &'static str = "checkpoint_pct,objective,policy,seed,nodes,tasks,heuristic_value,incumbent,bound,status,gap_low_pct,gap_high_pct,solve_s,instance";

    /// The row as CSV, without line break: values in the objective's unit and decimals.
    pub fn csv_line(&self) -> String {
        let d = self.objective.csv_decimals();
        format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{:.3},{}",
            number(self.checkpoint_pct, 1),
            self.objective.name(),
            field(&self.policy),
            self.seed,
            self.nodes,
            self.tasks,
            number(self.heuristic_value, d),
            optional_number(self.incumbent, d),
            optional_number(self.bound, d),
            field(&self.status.label()),
            optional_number(self.gap_low_pct, 4),
            optional_number(self.gap_high_pct, 4),
            self.solve_s,
            field(&self.instance)
        )
    }

    /// A whole `gaps.csv` of a single study (header included).
    pub fn csv(rows: &[GapRow]) -> String {
        let mut out = format!("{}\n", Self::CSV_HEADER);
        for row in rows {
            writeln!(out, "{}", row.csv_line()).expect("writing to a String cannot fail");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample(status: SolveStatus) -> GapRow {
        GapRow {
            checkpoint_pct: 90.0,
            objective: Objective::Frag,
            policy: "pwr:200,fgd:800".into(),
            seed: 42,
            nodes: 20,
            tasks: 80,
            heuristic_value: 5200.125,
            incumbent: Some(4100.0),
            bound: None,
            status,
            gap_low_pct: Some(26.8293),
            gap_high_pct: Some(f64::INFINITY),
            solve_s: 3.0,
            instance: "3f2a9c0d1e4b5a67".into(),
        }
    }

    #[test]
    fn csv_reads_back_into_the_same_rows() {
        let rows = [
            sample(SolveStatus::TimeLimitWithIncumbent),
            sample(SolveStatus::Unsupported(
                "no bound, use --sample-nodes".into(),
            )),
            sample(SolveStatus::Error("HiGHS: \"bad\"\nmodel".into())),
        ];
        let text = GapRow::csv(&rows);
        let back: Vec<GapRow> = csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, rows);
        assert_eq!(GapRow::CSV_HEADER.split(',').count(), 14);
    }

    #[test]
    fn json_keeps_an_unbounded_gap() {
        let row = sample(SolveStatus::Optimal);
        let back: GapRow = serde_json::from_str(&serde_json::to_string(&row).unwrap()).unwrap();
        assert_eq!(back, row);
    }
}
