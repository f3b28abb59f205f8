//! The power–fragmentation front on the whole cluster, by column generation.
//!
//! Between the least-power and the least-fragmentation solves, each interior point solves
//! `min F + w·P` by column generation (every column carries both costs: pattern pricing of
//! the summed node value, [`super::pattern_pricing::NodeValue::plus`]), with weights `w`
//! spread geometrically around the slope of the chord between the two end points. Each
//! solve gives a real, checked placement `(P_k, F_k)` and a proven line: every placement
//! has `F + w_k·P ≥ L_k`. Those lines bound the ε-constraint front everywhere, by weak
//! duality: under a cap `P ≤ ε`,
//!
//! `F ≥ max(F_LB, max_k (L_k − w_k·ε))`,
//!
//! with `F_LB` the least-fragmentation bound. The front is then reported as ε-constraint
//! points at caps evenly spaced between the end points' powers: under each cap, the least
//! fragmentation of any placement found within it, and the proven bound at that cap.

use std::time::Instant;

use gapbench_model::Placement;

use super::{solve, CgStats, ColumnCarry};
use crate::eval::{frag_milli, power_watts, state_of};
use crate::pareto::ParetoPoint;
use crate::snapshot::Snapshot;
use crate::solve::{Objective, SolveOptions, SolveReport, SolveStatus};

/// The ratio between neighbouring weights (interior points spread over `ratio^±k` times
/// the chord's slope).
const WEIGHT_RATIO: f64 = 4.0;

/// One proven line `F + watts_weight·P ≥ bound` over every placement of the snapshot.
#[derive(Debug, Clone, Copy)]
struct Line {
    watts_weight: f64,
    bound: f64,
}

/// The front between the column-generation end points `least_power` and `least_frag`
/// (solved on the same snapshot): `points` points (the two ends and `points − 2` caps, with
/// as many weighted solves), by power. A cap's status is `optimal` where its bound meets its
/// placement, else the status of the solve that found the placement. `carry` passes
/// configurations from solve to solve (their costs are recomputed for each weight).
pub fn column_generation_front(
    snapshot: &Snapshot,
    least_power: &SolveReport,
    least_frag: &SolveReport,
    points: usize,
    options: &SolveOptions,
    carry: &mut ColumnCarry,
) -> Result<Vec<ParetoPoint>, String> {
    let measure = |placement: &[Option<Placement>]| -> (f64, f64) {
        let state = state_of(snapshot.cluster, snapshot.tasks, placement);
        (
            power_watts(snapshot.cluster, &state) as f64,
            frag_milli(snapshot.cluster, snapshot.typical, &state),
        )
    };
    for (report, name) in [(least_power, "min-power"), (least_frag, "min-frag")] {
        if report.incumbent.is_none() {
            return Err(format!("{name} end point: {}", report.status.label()));
        }
    }
    let (p_star, f_at_p_star) = measure(&least_power.placement);
    let (p_at_f_star, f_star) = measure(&least_frag.placement);
    let least_frag_bound = least_frag.bound.unwrap_or(0.0).max(0.0);
    let mut lines = vec![Line {
        watts_weight: 0.0,
        bound: least_frag_bound,
    }];
    let mut interior = Vec::new();
    let (span_watts, span_milli) = (p_at_f_star - p_star, f_at_p_star - f_star);
    if span_watts > 0.0 && span_milli > 0.0 {
        let slope = span_milli / span_watts;
        let count = points.saturating_sub(2);
        for k in 0..count {
            let exponent = k as f64 - (count as f64 - 1.0) / 2.0;
            let watts_weight = slope * WEIGHT_RATIO.powf(exponent);
            let clock = Instant::now();
            let mut stats = CgStats::default();
            let report = solve(
                snapshot,
                Objective::Frag,
                watts_weight,
                options,
                &clock,
                &mut stats,
                carry,
            )?;
            if let Some(bound) = report.bound {
                lines.push(Line {
                    watts_weight,
                    bound,
                });
            }
            interior.push(report);
        }
    }
    // The least fragmentation any placement within `cap_watts` can have.
    let frag_bound_at = |cap_watts: f64| {
        lines
            .iter()
            .map(|line| line.bound - line.watts_weight * cap_watts)
            .fold(0.0f64, f64::max)
    };
    // Every placement found, with the solve that found it.
    let found: Vec<(f64, f64, &SolveReport)> = std::iter::once(least_power)
        .chain(&interior)
        .chain(std::iter::once(least_frag))
        .map(|report| {
            let (power, frag) = measure(&report.placement);
            (power, frag, report)
        })
        .collect();
    // Under `cap_watts` (none: any power): the least fragmentation found within it, and
    // its bound.
    let point = |label: String, cap_watts: Option<f64>| -> Result<ParetoPoint, String> {
        let &(power, frag, report) = found
            .iter()
            .filter(|(power, _, _)| cap_watts.is_none_or(|cap| *power <= cap))
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.total_cmp(&b.0)))
            .ok_or_else(|| format!("{label}: no placement within {cap_watts:?} W"))?;
        let bound = cap_watts.map_or(least_frag_bound, frag_bound_at);
        let tolerance = 1e-6 * frag.abs().max(1.0);
        if bound > frag + tolerance {
            return Err(format!(
                "{label}: the fragmentation bound {bound} is above a placement's {frag}"
            ));
        }
        Ok(ParetoPoint {
            label,
            power_cap_watts: cap_watts,
            power_watts: power,
            frag_milli: frag,
            frag_bound_milli: Some(bound),
            status: if frag - bound <= tolerance {
                SolveStatus::Optimal
            } else {
                report.status.clone()
            },
            solve_seconds: report.solve_seconds,
        })
    };
    let least = point("min_frag".into(), None)?;
    let mut front = vec![point("min_power".into(), Some(p_star))?];
    let caps = points.saturating_sub(2);
    let span_watts = least.power_watts - p_star;
    if span_watts > 0.0 {
        for k in 1..=caps {
            let cap = (p_star + span_watts * k as f64 / (caps + 1) as f64).floor();
            front.push(point(format!("eps_{k}"), Some(cap))?);
        }
    }
    front.push(least);
    Ok(front)
}
