//! One exact gap: a heuristic's value at a checkpoint, the solver's incumbent and bound,
//! and the interval the gap lies in.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::check::{column_error, finite, non_negative, optional_non_negative};
use crate::check::{CheckedRow, ColumnError};
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

/// The relative tolerance within which the solver calls bound and incumbent equal
/// (`ilp::cg`'s optimality test); the CSV's rounding to the objective's decimals adds half
/// a unit of its last decimal.
const OPTIMAL_REL_TOLERANCE: f64 = 1e-6;

impl GapRow {
    /// How far bound and incumbent of an `optimal` row may differ as read back.
    fn tolerance(&self, incumbent: f64) -> f64 {
        let last_decimal = 10f64.powi(-(self.objective.csv_decimals() as i32));
        OPTIMAL_REL_TOLERANCE * incumbent.abs().max(1.0) + 0.5 * last_decimal
    }

    /// The bound lies on the optimum's side of the incumbent (below it when minimising,
    /// above when maximising), and an `optimal` row's bound meets its incumbent.
    fn check_bound(&self) -> Result<(), ColumnError> {
        let (Some(incumbent), Some(bound)) = (self.incumbent, self.bound) else {
            if self.status == SolveStatus::Optimal {
                return Err(column_error(
                    "status",
                    "optimal needs both an incumbent and a bound",
                ));
            }
            return Ok(());
        };
        let tolerance = self.tolerance(incumbent);
        let (wrong_side, side, sense) = if self.objective.maximise() {
            (bound < incumbent - tolerance, "below", "maximised")
        } else {
            (bound > incumbent + tolerance, "above", "minimised")
        };
        if wrong_side {
            return Err(column_error(
                "bound",
                format_args!(
                    "{bound} is {side} the incumbent {incumbent}, which no bound of {} ({sense}) can be",
                    self.objective.name()
                ),
            ));
        }
        if self.status == SolveStatus::Optimal && (bound - incumbent).abs() > tolerance {
            return Err(column_error(
                "status",
                format_args!(
                    "optimal, but the bound {bound} differs from the incumbent {incumbent} by more than the solver's tolerance"
                ),
            ));
        }
        Ok(())
    }
}

impl CheckedRow for GapRow {
    fn check(&self) -> Result<(), ColumnError> {
        non_negative("checkpoint_pct", self.checkpoint_pct)?;
        non_negative("heuristic_value", self.heuristic_value)?;
        optional_non_negative("incumbent", self.incumbent)?;
        if let Some(bound) = self.bound {
            // A relaxation's bound on a minimum may be below 0 (fragmentation's LP).
            finite("bound", bound)?;
        }
        if let Some(low) = self.gap_low_pct {
            finite("gap_low_pct", low)?;
        }
        // +inf: no finite upper end (a bound of 0); NaN or −inf is no gap at all.
        if let Some(high) = self.gap_high_pct.filter(|h| *h != f64::INFINITY) {
            finite("gap_high_pct", high)?;
        }
        non_negative("solve_s", self.solve_s)?;
        self.check_bound()
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
    fn checks_refuse_a_bound_past_the_incumbent_and_a_loose_optimum() {
        let mut row = sample(SolveStatus::TimeLimitWithIncumbent);
        row.bound = Some(3000.0);
        assert!(row.check().is_ok());
        row.bound = Some(4200.0);
        assert_eq!(row.check().unwrap_err().column, "bound");
        // Maximising (allocation): the bound lies above the incumbent.
        row.objective = Objective::Alloc;
        assert!(row.check().is_ok());
        row.bound = Some(4000.0);
        assert_eq!(row.check().unwrap_err().column, "bound");
        // Optimal: bound = incumbent within the tolerance and the CSV's rounding.
        row.status = SolveStatus::Optimal;
        row.bound = Some(4100.4);
        assert!(row.check().is_ok());
        row.bound = Some(4102.0);
        assert_eq!(row.check().unwrap_err().column, "status");
        row.gap_low_pct = Some(f64::NAN);
        assert_eq!(row.check().unwrap_err().column, "gap_low_pct");
    }

    #[test]
    fn json_keeps_an_unbounded_gap() {
        let row = sample(SolveStatus::Optimal);
        let back: GapRow = serde_json::from_str(&serde_json::to_string(&row).unwrap()).unwrap();
        assert_eq!(back, row);
    }
}
