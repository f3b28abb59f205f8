//! A budget study's frontier as a cell stores it: the Lagrangian lines and what column
//! generation reached at the budgets it tightened, the status of a point's bound against
//! them, and where to tighten.

use gapbench_ilp::frontier::{Frontier, FrontierLine};
use serde::{Deserialize, Serialize};

/// A frontier as stored: its valid inequalities, and what column generation reached at
/// the budgets it tightened.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct StoredFrontier {
    pub(crate) jobs: usize,
    pub(crate) least_budget: f64,
    pub(crate) unconstrained_budget: f64,
    /// `(budget price, intercept)` of each line.
    pub(crate) lines: Vec<(f64, f64)>,
    /// Per tightened budget: `(budget, master LP total JCT s, status)`, by budget.
    pub(crate) tightened: Vec<(f64, Option<f64>, String)>,
    pub(crate) slots: usize,
}

/// Column generation's tolerance: within it, a point's bound counts as converged.
const CONVERGED_WITHIN: f64 = 0.005;

impl StoredFrontier {
    /// The status of the bound `bound_mean_s` at `spent` and the most any bound of this
    /// relaxation could be there (mean JCT, s): the master LP values at the tightened
    /// budgets around `spent`, interpolated (the LP's value is convex in the budget).
    pub(crate) fn status_at(&self, spent: f64, bound_mean_s: f64) -> (String, Option<f64>) {
        let tightened: Vec<(f64, f64)> = self
            .tightened
            .iter()
            .filter_map(|(b, lp, _)| lp.map(|lp| (*b, lp / self.jobs.max(1) as f64)))
            .collect();
        if tightened.is_empty() {
            // No master LP solved: the lines are the Lagrangian warm start's (and any
            // pricing round's), valid but with no limit to measure them against.
            return ("lagrangian".into(), None);
        }
        let above = tightened.partition_point(|&(b, _)| b < spent);
        let limit = match (
            above.checked_sub(1).map(|k| tightened[k]),
            tightened.get(above),
        ) {
            (_, Some(&(b, lp))) if b == spent => Some(lp),
            (Some((b1, lp1)), Some(&(b2, lp2))) => {
                let share = (spent - b1) / (b2 - b1);
                Some(lp1 + (lp2 - lp1) * share)
            }
            // Above every tightened budget the LP's value can only be lower (it never
            // rises with the budget): the largest budget's value still caps it.
            (Some((_, lp)), None) => Some(lp),
            _ => None,
        };
        match limit {
            None => ("outside".into(), None),
            Some(limit) if limit - bound_mean_s <= CONVERGED_WITHIN * limit => {
                ("converged".into(), Some(limit))
            }
            Some(limit) => ("open".into(), Some(limit)),
        }
    }

    pub(crate) fn frontier(&self) -> Frontier {
        Frontier {
            lines: self
                .lines
                .iter()
                .map(|&(budget_price, intercept)| FrontierLine {
                    budget_price,
                    intercept,
                })
                .collect(),
            jobs: self.jobs,
            least_budget: self.least_budget,
            unconstrained_budget: self.unconstrained_budget,
        }
    }
}

/// `count` budgets evenly from 0.9 × the least fraction of `base` (full-clock FIFO's
/// spend; no lower than just above `least`, the least any schedule needs) to `base`: where
/// the study's points spend (a budgeted replay spends at most its budget, and in practice
/// not much more than FIFO; above the largest budget the bound stays valid, only less
/// tight).
pub(crate) fn target_budgets(fractions: &[f64], base: f64, least: f64, count: usize) -> Vec<f64> {
    let low = (0.9 * fractions.iter().copied().fold(1.0, f64::min) * base).max(least * 1.005);
    let high = base.max(low);
    (0..count)
        .map(|k| low + (high - low) * k as f64 / (count.max(2) - 1) as f64)
        .collect()
}
