//! The power–fragmentation front on the whole cluster, by ε-constraint column generation.
//!
//! Between the least-power and the least-fragmentation solves (power `P*` and `P_F` of
//! their placements), each interior point `k` solves `min F` subject to `P ≤ ε_k` for caps
//! evenly spaced in `(P*, P_F)`, by column generation with the cap as a master row
//! ([`capped`]: every column carries both its fragmentation and its watts). Each cap
//! halves (in power) the widest step of the front found so far ([`next_cap`]): on the
//! whole cluster fragmentation falls almost all the way within the first tenth of the
//! power span above `P*`, where evenly spaced caps left one or two points. Each capped
//! solve proves lines `F + w·P ≥ L` (its Lagrangian bounds at the cap row's prices `w`),
//! valid for every placement, so every cap's bound is
//!
//! `F ≥ max(F_LB, max_k (L_k − w_k·ε))`,
//!
//! with `F_LB` the least-fragmentation bound. Each capped solve is seeded with every
//! placement found so far; a point is the least fragmentation of any
//! checked placement found within its cap (so fragmentation falls and power rises along
//! the front), with that bound and its own status.

mod capped;

use gapbench_model::Placement;

use self::capped::{solve_under_cap, Measured};
use super::ColumnCarry;
use crate::pareto::ParetoPoint;
use crate::snapshot::Snapshot;
use crate::solve::{relative_gap, SolveOptions, SolveReport, SolveStatus};

/// Where in a step of the front a cap goes (share of its power span), in the order tried.
const GAP_SHARES: [f64; 4] = [0.5, 0.25, 0.75, 0.125];

/// One proven line `F + watts_weight·P ≥ bound` over every placement of the snapshot.
#[derive(Debug, Clone, Copy)]
struct Line {
    watts_weight: f64,
    bound: f64,
}

/// A placement found, with where it came from.
struct Found {
    measured: Measured,
    /// The solve's status for the end points' own placements.
    status: Option<SolveStatus>,
}

/// How the solve of one cap went.
struct CapOutcome {
    converged: bool,
    seconds: f64,
}

/// The front between the column-generation end points `least_power` and `least_frag`
/// (solved on the same snapshot): `points` points (the two ends and `points − 2` caps, one
/// capped solve of `options.time_limit_s` each), by power. A point's status is `optimal`
/// where its bound meets its placement, `gap_limit` within `options.mip_rel_gap`, `lp_bound`
/// where its cap's column generation converged, else `time_limit`. `carry` passes
/// configurations from solve to solve (and from checkpoint to checkpoint).
pub fn column_generation_front(
    snapshot: &Snapshot,
    least_power: &SolveReport,
    least_frag: &SolveReport,
    points: usize,
    options: &SolveOptions,
    carry: &mut ColumnCarry,
) -> Result<Vec<ParetoPoint>, String> {
    for (report, name) in [(least_power, "min-power"), (least_frag, "min-frag")] {
        if report.incumbent.is_none() {
            return Err(format!("{name} end point: {}", report.status.label()));
        }
    }
    let mut found: Vec<Found> = [least_power, least_frag]
        .into_iter()
        .map(|report| Found {
            measured: Measured::of(snapshot, report.placement.clone()),
            status: Some(report.status.clone()),
        })
        .collect();
    let (p_star, f_at_p_star) = (found[0].measured.power_watts, found[0].measured.frag_milli);
    let (p_at_f_star, f_star) = (found[1].measured.power_watts, found[1].measured.frag_milli);
    let least_frag_bound = least_frag.bound.unwrap_or(0.0).max(0.0);
    let mut lines = vec![Line {
        watts_weight: 0.0,
        bound: least_frag_bound,
    }];
    let caps = points.saturating_sub(2);
    let scale = (p_at_f_star - p_star, f_at_p_star - f_star);
    let mut solved: Vec<(f64, CapOutcome)> = Vec::new();
    if scale.0 > 0.0 && scale.1 > 0.0 {
        for _ in 0..caps {
            let tried: Vec<f64> = solved.iter().map(|(cap, _)| *cap).collect();
            let Some(cap) = next_cap(&found, &tried, scale) else {
                break;
            };
            let seeds: Vec<&[Option<Placement>]> = found
                .iter()
                .map(|f| f.measured.placement.as_slice())
                .collect();
            let solve = solve_under_cap(snapshot, cap, &seeds, options, carry)?;
            lines.extend(solve.lines);
            found.extend(solve.placements.into_iter().map(|measured| Found {
                measured,
                status: None,
            }));
            solved.push((
                cap,
                CapOutcome {
                    converged: solve.converged,
                    seconds: solve.seconds,
                },
            ));
        }
    }
    solved.sort_by(|a, b| a.0.total_cmp(&b.0));
    // The least fragmentation any placement within `cap_watts` can have.
    let frag_bound_at = |cap_watts: f64| {
        lines
            .iter()
            .map(|line| line.bound - line.watts_weight * cap_watts)
            .fold(0.0f64, f64::max)
    };
    // Under `cap_watts` (none: any power): the least fragmentation found within it, its
    // bound and status (`outcome`: the cap's own solve).
    let point = |label: String,
                 cap_watts: Option<f64>,
                 outcome: Option<&CapOutcome>,
                 end: &SolveReport|
     -> Result<ParetoPoint, String> {
        let best = found
            .iter()
            .filter(|f| cap_watts.is_none_or(|cap| f.measured.power_watts <= cap))
            .min_by(|a, b| {
                let (a, b) = (&a.measured, &b.measured);
                a.frag_milli
                    .total_cmp(&b.frag_milli)
                    .then(a.power_watts.total_cmp(&b.power_watts))
            })
            .ok_or_else(|| format!("{label}: no placement within {cap_watts:?} W"))?;
        let (power, frag) = (best.measured.power_watts, best.measured.frag_milli);
        let bound = cap_watts.map_or(least_frag_bound, frag_bound_at);
        let tolerance = 1e-6 * frag.abs().max(1.0);
        if bound > frag + tolerance {
            return Err(format!(
                "{label}: the fragmentation bound {bound} is above a placement's {frag}"
            ));
        }
        let status = if frag - bound <= tolerance {
            SolveStatus::Optimal
        } else if relative_gap(frag, bound) <= options.mip_rel_gap {
            SolveStatus::GapLimit
        } else {
            match outcome {
                Some(o) if o.converged => SolveStatus::LpBound,
                Some(_) => SolveStatus::TimeLimitWithIncumbent,
                None => best.status.clone().unwrap_or_else(|| end.status.clone()),
            }
        };
        Ok(ParetoPoint {
            label,
            power_cap_watts: cap_watts,
            power_watts: power,
            frag_milli: frag,
            frag_bound_milli: Some(bound),
            status,
            solve_seconds: outcome.map_or(end.solve_seconds, |o| o.seconds),
        })
    };
    let mut front = vec![point("min_power".into(), Some(p_star), None, least_power)?];
    for (k, (cap, outcome)) in solved.iter().enumerate() {
        front.push(point(
            format!("eps_{}", k + 1),
            Some(*cap),
            Some(outcome),
            least_frag,
        )?);
    }
    front.push(point("min_frag".into(), None, None, least_frag)?);
    Ok(front)
}

/// The next cap to solve: the middle (in power) of the two neighbouring points of the
/// front found so far (non-dominated placements) whose rectangle — power span times
/// fragmentation drop, each over the end points' (`scale`) — is largest, among those with
/// a cap of [`GAP_SHARES`] not `tried` yet. `None` when every step was tried.
fn next_cap(found: &[Found], tried: &[f64], scale: (f64, f64)) -> Option<f64> {
    let mut points: Vec<(f64, f64)> = found
        .iter()
        .map(|f| (f.measured.power_watts, f.measured.frag_milli))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut front: Vec<(f64, f64)> = Vec::new();
    for point in points {
        if front.last().is_none_or(|last| point.1 < last.1) {
            front.push(point);
        }
    }
    front
        .windows(2)
        .filter_map(|pair| {
            let (low, high) = (pair[0], pair[1]);
            let area = (high.0 - low.0) / scale.0 * (low.1 - high.1) / scale.1;
            // The middle first; where a solve there found nothing new, a quarter further.
            let cap = GAP_SHARES
                .iter()
                .map(|share| (low.0 + share * (high.0 - low.0)).floor())
                .find(|cap| *cap > low.0 && !tried.contains(cap))?;
            Some((cap, area))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.total_cmp(&a.0)))
        .map(|(cap, _)| cap)
}
