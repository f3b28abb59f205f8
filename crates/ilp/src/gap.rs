//! Optimality gaps of a heuristic against a solve, as an interval the true gap lies in.
//!
//! - Power and fragmentation (minimised, totals including their constant parts):
//!   `gap_low = (H − incumbent)/incumbent`, `gap_high = (H − bound)/bound`, in percent of
//!   the exact optimum's value — the true gap `(H − opt)/opt` lies in `[low, high]`
//!   because `bound ≤ opt ≤ incumbent`.
//! - Allocation (maximised): `gap_low = (incumbent − H)/capacity`,
//!   `gap_high = (bound − H)/capacity`, in percentage points of the cluster's GPU capacity.
//!
//! A proven optimum has bound = incumbent, so `low == high`. A zero denominator (a
//! fragmentation optimum of 0) gives 0 when the heuristic is also 0 and +∞ otherwise.

use crate::solve::{Objective, SolveReport};
use gapbench_results::best_known::relative_gap_pct;

/// The interval `[low_pct, high_pct]` the true gap lies in; `high_pct` is `None` when the
/// solve proved no bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GapInterval {
    pub low_pct: f64,
    pub high_pct: Option<f64>,
}

/// The gap of a heuristic value `heuristic` against `report`; `None` without an incumbent.
/// `gpu_capacity_milli` is the (sub-)cluster's, for allocation gaps.
pub fn gap_interval(
    report: &SolveReport,
    heuristic: f64,
    gpu_capacity_milli: u64,
) -> Option<GapInterval> {
    let incumbent = report.incumbent?;
    let gap = |reference: f64| -> f64 {
        match report.objective {
            Objective::Alloc if gpu_capacity_milli == 0 => 0.0,
            Objective::Alloc => 100.0 * (reference - heuristic) / gpu_capacity_milli as f64,
            Objective::Power | Objective::Frag => relative_gap_pct(heuristic, reference),
        }
    };
    Some(GapInterval {
        low_pct: gap(incumbent),
        high_pct: report.bound.map(gap),
    })
}

/// The heuristic's own value of `objective` on its snapshot, by the same ruler as every
/// incumbent: total power (W), allocated GPU milli, or Σ_n F(n) (milli-GPU).
pub fn heuristic_value(snapshot: &crate::Snapshot, objective: Objective) -> f64 {
    use crate::eval::{alloc_gpu_milli, frag_milli, power_watts, state_of};
    let state = state_of(snapshot.cluster, snapshot.tasks, &snapshot.heuristic);
    match objective {
        Objective::Power => power_watts(snapshot.cluster, &state) as f64,
        Objective::Alloc => alloc_gpu_milli(snapshot.tasks, &snapshot.heuristic) as f64,
        Objective::Frag => frag_milli(snapshot.cluster, snapshot.typical, &state),
    }
}
