//! One exact gap: a heuristic's value at a checkpoint, the solver's incumbent and bound,
//! and the interval the gap lies in.

use serde::{Deserialize, Serialize};

use crate::check::{column_error, finite, non_negative, optional_non_negative};
use crate::check::{CheckedRow, ColumnError};
use crate::declare_row;
use crate::float_text;
use crate::{Objective, SolveStatus};

/// Bumped whenever [`GapRow`] or [`crate::FrontRow`] change shape or meaning: stored gap
/// cells carry it in their key, so cells of an older schema are recomputed, never reused.
pub const GAP_SCHEMA_VERSION: u32 = 4;

declare_row! {
    /// One exact gap: a policy's value at a checkpoint against the solver's incumbent and
    /// bound (one row of `gapbench gap`'s `gaps.csv`; a bench folder's has `trace` first).
    /// Fields added here (solve method, columns, iterations…) go to the end, and bump
    /// [`GAP_SCHEMA_VERSION`].
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct GapRow in "gaps.csv" {
        /// Arrived GPU demand, % of the (sub-)cluster's GPU capacity.
        #[serde(with = "float_text")]
        checkpoint_pct: f64 [Fixed(1), "%"],
        /// `power` (minimised), `alloc` (maximised) or `frag` (minimised).
        objective: Objective [Plain, ""],
        /// The heuristic placement policy.
        policy: String [Text, ""],
        /// The sweep's seed (task arrival order).
        seed: u64 [Plain, ""],
        /// Nodes of the (sub-)cluster.
        nodes: usize [Plain, ""],
        /// Tasks the solver decided about: the heuristic's placed tasks for power and
        /// fragmentation, every arrived task for allocation.
        tasks: usize [Plain, ""],
        /// The policy's value: watts (power), milli-GPU allocated (alloc) or Σ F(n) in
        /// milli-GPU (frag).
        #[serde(with = "float_text")]
        heuristic_value: f64 [FixedBy(decimals, DECIMALS), "W | milli-GPU"],
        /// The best placement the solver found, in the objective's unit (empty without one).
        #[serde(with = "float_text::option")]
        incumbent: Option<f64> [FixedBy(decimals, DECIMALS), "W | milli-GPU"],
        /// The solver's proven bound on the optimum (empty without one).
        #[serde(with = "float_text::option")]
        bound: Option<f64> [FixedBy(decimals, DECIMALS), "W | milli-GPU"],
        /// How the solve ended: `optimal`, `gap_limit`, `time_limit`, `lp_bound`,
        /// `infeasible`, `relaxation_bound`, `unsupported: <why>` or `error: <message>`.
        status: SolveStatus [Text, ""],
        /// The gap against the incumbent (empty without one).
        #[serde(with = "float_text::option")]
        gap_low_pct: Option<f64> [Fixed(4), "%"],
        /// The gap against the proven bound; `inf` when no finite one exists.
        #[serde(with = "float_text::option")]
        gap_high_pct: Option<f64> [Fixed(4), "%"],
        /// Wall-clock time of the solve.
        #[serde(with = "float_text")]
        solve_s: f64 [Fixed(3), "s"],
        /// A fingerprint of the instance solved (cluster, FGD target workload and the tasks
        /// the solver decided about), the same for every policy whose snapshot holds the
        /// same tasks: their solves bound one optimum. Empty in folders written before it
        /// existed.
        #[serde(default)]
        instance: String [Text, ""],
    }
}

/// A gap row's values have its objective's decimals.
fn decimals(row: &GapRow) -> usize {
    row.objective.csv_decimals()
}

/// How the documentation names [`decimals`].
const DECIMALS: &str = "0 decimals (power, alloc), 3 (frag)";

declare_row! {
    /// One row of a bench folder's `gaps.csv`: the trace, then a [`GapRow`].
    #[derive(Debug, Clone, PartialEq, Serialize)]
    pub struct TracedGapRow in "gaps.csv" {
        /// The trace the sweep ran.
        trace: String [Text, ""],
        /// The gap's columns.
        #[serde(flatten)]
        gap: GapRow [Nested, ""],
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
        assert_eq!(GapRow::csv_header().split(',').count(), 14);
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
