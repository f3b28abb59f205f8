//! The power–fragmentation Pareto front of one task set, by the ε-constraint method.
//!
//! With `P*` the least power and `F*` the least fragmentation (power `P_F` at that
//! optimum), each interior point solves `min Σ_n F(n)` subject to `P ≤ ε_k` for `ε_k`
//! evenly spaced in `[P*, P_F]`, warm-started from the min-power placement (feasible for
//! every `ε ≥ P*`). Every point is a real, checked placement; its fragmentation bound is
//! proven for its own cap.

use crate::error::SolveError;
use crate::eval::{frag_milli, power_watts, state_of};
use crate::min_frag::frag_with_power_cap;
use crate::snapshot::Snapshot;
use crate::solve::{SolveOptions, SolveReport, SolveStatus};

/// One point of the front.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontPoint {
    /// `min_power`, `eps_<k>` (k-th ε-constraint point) or `min_frag`.
    pub label: String,
    /// The ε of this point: `None` for the least-fragmentation end (no cap), and for both
    /// ends of per-node fronts; column generation's least-power end is capped at its own power.
    pub power_cap_watts: Option<f64>,
    /// Total power of the point's placement.
    pub power_watts: f64,
    /// Σ_n F(n) of the point's placement.
    pub frag_milli: f64,
    /// Proven lower bound on fragmentation under this point's cap (None without one).
    pub frag_bound_milli: Option<f64>,
    /// What is proven of the point's fragmentation under its cap: the status of the solve
    /// that produced it (per-node fronts, [`pareto_front`]: for the min-power end point, of
    /// the power solve). Column generation's fronts (`cg::front`) say `optimal` or
    /// `gap_limit` where the bound meets the point, and otherwise the status of the solve
    /// that asked for it (`time_limit` for the least-power end and for points at placements
    /// found, which no solve of their own asked about).
    pub status: SolveStatus,
    pub solve_seconds: f64,
}

/// Up to `points` points of the front (the two end points and `points − 2` ε-constraint
/// points), without dominated ones, between end points already solved on the same
/// snapshot (`least_power`, `least_frag`). Errors when an end point has no placement.
pub(crate) fn pareto_front_from(
    snapshot: &Snapshot,
    least_power: &SolveReport,
    least_frag: &SolveReport,
    points: usize,
    options: &SolveOptions,
) -> Result<Vec<FrontPoint>, SolveError> {
    let measure = |report: &SolveReport| -> (f64, f64) {
        let state = state_of(snapshot.cluster, snapshot.tasks, &report.placement);
        (
            power_watts(snapshot.cluster, &state) as f64,
            frag_milli(snapshot.cluster, snapshot.typical, &state),
        )
    };
    if least_power.incumbent.is_none() {
        return Err(SolveError::Solver(format!(
            "min-power end point: {}",
            least_power.status.label()
        )));
    }
    if least_frag.incumbent.is_none() {
        return Err(SolveError::Solver(format!(
            "min-frag end point: {}",
            least_frag.status.label()
        )));
    }
    let (p_star, f_at_p_star) = measure(least_power);
    let (p_at_f_star, f_star) = measure(least_frag);
    let mut front = vec![FrontPoint {
        label: "min_power".into(),
        power_cap_watts: None,
        power_watts: p_star,
        frag_milli: f_at_p_star,
        frag_bound_milli: None,
        status: least_power.status.clone(),
        solve_seconds: least_power.solve_seconds,
    }];
    let interior = points.saturating_sub(2);
    if p_at_f_star > p_star {
        for k in 0..interior {
            // ε from P* (k = 0: the least fragmentation at least power) towards P_F.
            let cap = (p_star + (p_at_f_star - p_star) * k as f64 / (interior as f64)).floor();
            let report = frag_with_power_cap(snapshot, Some(cap), &least_power.placement, options);
            if report.incumbent.is_none() {
                return Err(SolveError::Solver(format!(
                    "ε-constraint point at {cap} W: {}",
                    report.status.label()
                )));
            }
            let (power, frag) = measure(&report);
            front.push(FrontPoint {
                label: format!("eps_{}", k + 1),
                power_cap_watts: Some(cap),
                power_watts: power,
                frag_milli: frag,
                frag_bound_milli: report.bound,
                status: report.status,
                solve_seconds: report.solve_seconds,
            });
        }
    }
    front.push(FrontPoint {
        label: "min_frag".into(),
        power_cap_watts: None,
        power_watts: p_at_f_star,
        frag_milli: f_star,
        frag_bound_milli: least_frag.bound,
        status: least_frag.status.clone(),
        solve_seconds: least_frag.solve_seconds,
    });
    Ok(non_dominated(front))
}

/// Drops points another point matches or beats in both power and fragmentation (e.g. the
/// unconstrained min-frag point when an ε-point reaches the same fragmentation with less
/// power); the first of equal points stays. Order (by power) is kept.
fn non_dominated(points: Vec<FrontPoint>) -> Vec<FrontPoint> {
    const TOLERANCE: f64 = 1e-9;
    let dominates = |a: &FrontPoint, b: &FrontPoint| {
        a.power_watts <= b.power_watts + TOLERANCE && a.frag_milli <= b.frag_milli + TOLERANCE
    };
    let mut kept: Vec<FrontPoint> = Vec::new();
    for (i, point) in points.iter().enumerate() {
        let beaten = points.iter().enumerate().any(|(j, other)| {
            j != i && dominates(other, point) && (!dominates(point, other) || j < i)
        });
        if !beaten {
            kept.push(point.clone());
        }
    }
    kept.sort_by(|a, b| a.power_watts.total_cmp(&b.power_watts));
    kept
}
