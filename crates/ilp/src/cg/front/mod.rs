//! The power–fragmentation front on the whole cluster, by ε-constraint column generation.
//!
//! Between the least-power and the least-fragmentation solves (power `P*` and `P_F` of
//! their placements), each interior point `k` solves `min F` subject to `P ≤ ε_k` by column
//! generation with the cap as a master row ([`capped`]: every column carries both its
//! fragmentation and its watts). Column generation rarely finds a placement just above
//! `P*` (on the whole cluster at 100 % and 130 % arrived, caps up to 25 kW above it found
//! only the least-power placement), so the front is filled by walks first: single-task
//! moves from the least-power placement toward less fragmentation and from the
//! least-fragmentation one toward less power ([`walk`]), and path relinking between them
//! ([`relink`]); after each capped solve the same from its placements. The caps rise, each
//! at the power of a placement found ([`next_cap`]), so its point is that placement or a
//! better one. Each capped solve proves lines `F + w·P ≥ L` (its Lagrangian bounds at the
//! cap row's prices `w`), valid for every placement, so every cap's bound is
//!
//! `F ≥ max(F_LB, max_k (L_k − w_k·ε))`,
//!
//! with `F_LB` the least-fragmentation bound; a walked placement never changes a bound. A
//! point is the least fragmentation of any checked placement found within its cap (so
//! fragmentation falls and power rises along the front), with that bound and its own
//! status.
//!
//! What is reported ([`reported_caps`]): the least-power end is the least power found (a
//! walk can go below the solve's `P*`); each solved cap whose point no end and no lower cap
//! shows (a cap solved early can be left dominated by what a later solve or walk found
//! below it); then, up to the points asked for, caps at placements found, each in the
//! middle of the longest step left (their status, and the least-power end's, `time_limit`
//! unless the lines prove them within the gap: no solve of their own asked for their
//! fragmentation). So a front shows as many distinct points as the
//! placements found allow, whatever the clock made of the caps solved.

mod cap_context;
mod cap_integer;
mod capped;
mod moves;
mod relink;
mod staircase;
mod walk;

#[cfg(test)]
mod tests;

use gapbench_model::Placement;

use self::cap_context::{Line, Measured};
use self::capped::solve_under_cap;
use self::staircase::{Staircase, FRAG_TOLERANCE_MILLI};
use self::walk::{relink_from, walk_from, Toward};
use super::ColumnCarry;
use crate::pareto::FrontPoint;
use crate::snapshot::Snapshot;
use crate::solve::{relative_gap, SolveOptions, SolveReport, SolveStatus};

/// Where in a step of the front a cap goes (share of its power span), in the order tried.
const GAP_SHARES: [f64; 4] = [0.5, 0.25, 0.75, 0.125];

/// The front, and the placements of its two ends (the walks and the capped solves can
/// improve on the end points' own solves: a placement of less power, or less fragmentation).
pub struct PowerFragFront {
    /// By power: `min_power`, the caps `eps_<k>`, `min_frag`.
    pub points: Vec<FrontPoint>,
    /// The least-power placement found (the least fragmentation of those), and the
    /// least-fragmentation one (the least power of those).
    pub least_power: Vec<Option<Placement>>,
    pub least_frag: Vec<Option<Placement>>,
}

/// A placement found, with where it came from.
struct Found {
    measured: Measured,
    /// The solve's status for the end points' own placements.
    status: Option<SolveStatus>,
}

impl Found {
    /// A placement of a capped solve or a walk (its point's status is its cap's).
    fn walked(measured: Measured) -> Found {
        Found {
            measured,
            status: None,
        }
    }
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
) -> Result<PowerFragFront, String> {
    for (report, name) in [(least_power, "min-power"), (least_frag, "min-frag")] {
        if report.incumbent.is_none() {
            return Err(format!("{name} end point: {}", report.status.label()));
        }
    }
    let mut found = end_points(snapshot, least_power, least_frag);
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
    if scale.0 > 0.0 && scale.1 > 0.0 && caps > 0 {
        found.extend(walks_between_ends(
            snapshot,
            least_power,
            least_frag,
            p_at_f_star,
        )?);
        let mut capped = Capped {
            snapshot,
            least_power,
            options,
            found: &mut found,
            lines: &mut lines,
            solved: &mut solved,
        };
        capped.solve_caps(caps, p_star, scale, carry)?;
    }
    solved.sort_by(|a, b| a.0.total_cmp(&b.0));
    let front = FrontPoints {
        found: &found,
        lines: &lines,
        least_frag_bound,
        mip_rel_gap: options.mip_rel_gap,
    };
    // The least-power end: the least power found (a walk may go below the solve's `P*`).
    let least_power_found = staircase_of(&found)
        .first()
        .map_or(p_star, |&i| found[i].measured.power_watts);
    // Its fragmentation under that cap is no solve's own question (the power solve's
    // status is about power): proven only where the lines meet it.
    let least_power_source = Source::Found {
        seconds: least_power.solve_seconds,
    };
    let mut points = vec![front.point(
        "min_power".into(),
        Some(least_power_found),
        least_power_source,
    )?];
    let reported = reported_caps(&found, &solved, least_power_found, caps);
    for (k, (cap, outcome)) in reported.into_iter().enumerate() {
        let source = outcome.map_or(Source::Found { seconds: 0.0 }, Source::Cap);
        points.push(front.point(format!("eps_{}", k + 1), Some(cap), source)?);
    }
    points.push(front.point("min_frag".into(), None, Source::LeastFrag(least_frag))?);
    let end_placement = |cap_watts: Option<f64>| {
        best_within(&found, cap_watts).map_or_else(Vec::new, |f| f.measured.placement.clone())
    };
    Ok(PowerFragFront {
        least_power: end_placement(Some(least_power_found)),
        least_frag: end_placement(None),
        points,
    })
}

/// The placements of the two end points' own solves (least power, then least
/// fragmentation), measured, with the solves' statuses.
fn end_points(
    snapshot: &Snapshot,
    least_power: &SolveReport,
    least_frag: &SolveReport,
) -> Vec<Found> {
    [least_power, least_frag]
        .into_iter()
        .map(|report| Found {
            measured: Measured::of(snapshot, report.placement.clone()),
            status: Some(report.status.clone()),
        })
        .collect()
}

/// The capped solves between the ends: what they found, the lines they proved and how
/// each cap's solve went.
struct Capped<'s, 'r> {
    snapshot: &'s Snapshot<'s>,
    least_power: &'r SolveReport,
    options: &'r SolveOptions,
    found: &'r mut Vec<Found>,
    lines: &'r mut Vec<Line>,
    solved: &'r mut Vec<(f64, CapOutcome)>,
}

impl Capped<'_, '_> {
    /// Solves up to `caps` caps, each where [`next_cap`] puts it given what is found (the
    /// least-power end `p_star` counts as a cap solved already), and walks from each
    /// capped solve's placements.
    fn solve_caps(
        &mut self,
        caps: usize,
        p_star: f64,
        scale: (f64, f64),
        carry: &mut ColumnCarry,
    ) -> Result<(), String> {
        for k in 0..caps {
            let tried: Vec<f64> = std::iter::once(p_star)
                .chain(self.solved.iter().map(|(cap, _)| *cap))
                .collect();
            let Some(cap) = next_cap(self.found, &tried, scale, caps - k) else {
                break;
            };
            let seeds: Vec<&[Option<Placement>]> = seeds_for(self.found, cap)
                .into_iter()
                .map(|f| f.measured.placement.as_slice())
                .collect();
            let solve = solve_under_cap(self.snapshot, cap, &seeds, self.options, carry)?;
            self.lines.extend(solve.lines);
            self.found.extend(walks_from_capped(
                self.snapshot,
                &self.least_power.placement,
                solve.placements,
                cap,
            )?);
            self.solved.push((
                cap,
                CapOutcome {
                    converged: solve.converged,
                    seconds: solve.seconds,
                },
            ));
        }
        Ok(())
    }
}

/// What the front's points are read from: the placements found and the lines proved.
struct FrontPoints<'f> {
    found: &'f [Found],
    lines: &'f [Line],
    least_frag_bound: f64,
    mip_rel_gap: f64,
}

impl FrontPoints<'_> {
    /// The least fragmentation any placement within `cap_watts` can have.
    fn frag_bound_at(&self, cap_watts: f64) -> f64 {
        self.lines
            .iter()
            .map(|line| line.bound - line.watts_weight * cap_watts)
            .fold(0.0f64, f64::max)
    }

    /// Under `cap_watts` (none: any power): the least fragmentation found within it, its
    /// bound, and its status by where the point comes from.
    fn point(
        &self,
        label: String,
        cap_watts: Option<f64>,
        source: Source,
    ) -> Result<FrontPoint, String> {
        let best = best_within(self.found, cap_watts)
            .ok_or_else(|| format!("{label}: no placement within {cap_watts:?} W"))?;
        let (power, frag) = (best.measured.power_watts, best.measured.frag_milli);
        let bound = cap_watts.map_or(self.least_frag_bound, |cap| self.frag_bound_at(cap));
        let tolerance = 1e-6 * frag.abs().max(1.0);
        if bound > frag + tolerance {
            return Err(format!(
                "{label}: the fragmentation bound {bound} is above a placement's {frag}"
            ));
        }
        let status = if frag - bound <= tolerance {
            SolveStatus::Optimal
        } else if relative_gap(frag, bound) <= self.mip_rel_gap {
            SolveStatus::GapLimit
        } else {
            match source {
                Source::Cap(o) if o.converged => SolveStatus::LpBound,
                Source::Cap(_) | Source::Found { .. } => SolveStatus::TimeLimitWithIncumbent,
                Source::LeastFrag(end) => best.status.clone().unwrap_or_else(|| end.status.clone()),
            }
        };
        let solve_seconds = match source {
            Source::Cap(o) => o.seconds,
            Source::LeastFrag(end) => end.solve_seconds,
            Source::Found { seconds } => seconds,
        };
        Ok(FrontPoint {
            label,
            power_cap_watts: cap_watts,
            power_watts: power,
            frag_milli: frag,
            frag_bound_milli: Some(bound),
            status,
            solve_seconds,
        })
    }
}

/// Where a point of the front comes from, which says what its status can claim: the
/// least-fragmentation solve, a cap's own solve, or a placement found (by a walk, a capped
/// solve or the power solve, `seconds` the latter's) whose power is the cap, which no solve
/// of its own asked about.
#[derive(Clone, Copy)]
enum Source<'a> {
    LeastFrag(&'a SolveReport),
    Cap(&'a CapOutcome),
    Found { seconds: f64 },
}

/// The caps between the ends the front reports, by power, at most `caps`: each solved cap
/// whose point (the least fragmentation found within it) no end and no lower cap shows —
/// caps rise during the solve, and a later solve or walk can find, within a lower cap, what
/// leaves a cap's own point dominated or an end's — then, while fewer than `caps`, the
/// power of a placement on the staircase of those found, in the middle of the longest step
/// between the points shown (power and fragmentation over the ends' spans): that point is
/// itself, and its bound is what the lines of every capped solve prove at its power.
fn reported_caps<'a>(
    found: &[Found],
    solved: &'a [(f64, CapOutcome)],
    least_power_watts: f64,
    caps: usize,
) -> Vec<(f64, Option<&'a CapOutcome>)> {
    let same = |a: &Found, b: &Found| {
        a.measured.power_watts == b.measured.power_watts
            && (a.measured.frag_milli - b.measured.frag_milli).abs() <= FRAG_TOLERANCE_MILLI
    };
    let (Some(low), Some(high)) = (
        best_within(found, Some(least_power_watts)),
        best_within(found, None),
    ) else {
        return Vec::new();
    };
    let mut shown: Vec<&Found> = vec![low, high];
    let mut reported = Vec::new();
    for (cap, outcome) in solved {
        if reported.len() == caps {
            break;
        }
        let Some(point) = best_within(found, Some(*cap)) else {
            continue;
        };
        if !shown.iter().any(|s| same(s, point)) {
            shown.push(point);
            reported.push((*cap, Some(outcome)));
        }
    }
    let (low, high) = (&low.measured, &high.measured);
    let power_span = (high.power_watts - low.power_watts).max(1.0);
    let frag_span = (low.frag_milli - high.frag_milli).max(1e-9);
    // Along the staircase, the length between two of its points.
    let length = |a: &Found, b: &Found| {
        (a.measured.power_watts - b.measured.power_watts).abs() / power_span
            + (a.measured.frag_milli - b.measured.frag_milli).abs() / frag_span
    };
    let mut candidates: Vec<&Found> = staircase_of(found)
        .into_iter()
        .map(|i| &found[i])
        .filter(|f| !shown.iter().any(|s| same(s, f)))
        .collect();
    while reported.len() < caps {
        shown.sort_by(|a, b| a.measured.power_watts.total_cmp(&b.measured.power_watts));
        // The longest step between points shown with a candidate inside, and in it the
        // candidate nearest its middle (the first by power of equally near ones).
        let mut best: Option<(f64, f64, usize)> = None;
        for pair in shown.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            let step = length(a, b);
            for (i, c) in candidates.iter().enumerate() {
                let power = c.measured.power_watts;
                if power <= a.measured.power_watts || power >= b.measured.power_watts {
                    continue;
                }
                let off_middle = (length(a, c) - length(c, b)).abs();
                if best.is_none_or(|(s, o, _)| step > s || (step == s && off_middle < o)) {
                    best = Some((step, off_middle, i));
                }
            }
        }
        let Some((_, _, at)) = best else {
            break;
        };
        let point = candidates.remove(at);
        shown.push(point);
        reported.push((point.measured.power_watts, None));
    }
    reported.sort_by(|a, b| a.0.total_cmp(&b.0));
    reported
}

/// The least fragmentation found within `cap_watts` (none: any power), to within rounding
/// ([`FRAG_TOLERANCE_MILLI`]), and of those the least power.
fn best_within(found: &[Found], cap_watts: Option<f64>) -> Option<&Found> {
    let within = || {
        found
            .iter()
            .filter(move |f| cap_watts.is_none_or(|cap| f.measured.power_watts <= cap))
    };
    let least_frag = within()
        .map(|f| f.measured.frag_milli)
        .fold(f64::INFINITY, f64::min);
    within()
        .filter(|f| f.measured.frag_milli <= least_frag + FRAG_TOLERANCE_MILLI)
        .min_by(|a, b| {
            let (a, b) = (&a.measured, &b.measured);
            a.power_watts
                .total_cmp(&b.power_watts)
                .then(a.frag_milli.total_cmp(&b.frag_milli))
        })
}

/// The walks between the ends: from the least power toward less fragmentation (never
/// above `p_at_f_star`, the least-fragmentation placement's power), from the least
/// fragmentation toward less power, and relinking the two both ways.
fn walks_between_ends(
    snapshot: &Snapshot,
    least_power: &SolveReport,
    least_frag: &SolveReport,
    p_at_f_star: f64,
) -> Result<Vec<Found>, String> {
    let (low, high) = (&least_power.placement, &least_frag.placement);
    let walked = [
        walk_from(snapshot, low, Toward::LessFrag, p_at_f_star)?,
        walk_from(snapshot, high, Toward::LessPower, f64::INFINITY)?,
        relink_from(snapshot, low, high)?,
        relink_from(snapshot, high, low)?,
    ];
    Ok(walked.into_iter().flatten().map(Found::walked).collect())
}

/// The `placements` of a capped solve under `cap_watts`, and from those none of them
/// dominates, walks toward less fragmentation under the cap and toward less power, and
/// relinking with the least-power placement `least_power` both ways (into the step below
/// the cap).
fn walks_from_capped(
    snapshot: &Snapshot,
    least_power: &[Option<Placement>],
    placements: Vec<Measured>,
    cap_watts: f64,
) -> Result<Vec<Found>, String> {
    let mut staircase = Staircase::default();
    for (i, m) in placements.iter().enumerate() {
        staircase.offer(m.power_watts as i64, m.frag_milli, i);
    }
    let mut found = Vec::new();
    for &(_, _, i) in staircase.points() {
        let placement = &placements[i].placement;
        let walked = [
            walk_from(snapshot, placement, Toward::LessFrag, cap_watts)?,
            walk_from(snapshot, placement, Toward::LessPower, f64::INFINITY)?,
            relink_from(snapshot, least_power, placement)?,
            relink_from(snapshot, placement, least_power)?,
        ];
        found.extend(walked.into_iter().flatten().map(Found::walked));
    }
    found.extend(placements.into_iter().map(Found::walked));
    Ok(found)
}

/// The indices of the non-dominated placements found, by power.
fn staircase_of(found: &[Found]) -> Vec<usize> {
    let mut staircase = Staircase::default();
    for (i, f) in found.iter().enumerate() {
        staircase.offer(f.measured.power_watts as i64, f.measured.frag_milli, i);
    }
    staircase.points().iter().map(|&(_, _, i)| i).collect()
}

/// The placements a capped solve at `cap_watts` starts from: the two ends (`found`'s
/// first two), the least fragmentation found within the cap, and the least power found
/// above it with less fragmentation.
fn seeds_for(found: &[Found], cap_watts: f64) -> Vec<&Found> {
    let by_frag = |a: &&Found, b: &&Found| {
        (a.measured.frag_milli, a.measured.power_watts)
            .partial_cmp(&(b.measured.frag_milli, b.measured.power_watts))
            .unwrap_or(std::cmp::Ordering::Equal)
    };
    let within = found
        .iter()
        .filter(|f| f.measured.power_watts <= cap_watts)
        .min_by(by_frag);
    let above = within.and_then(|best| {
        found
            .iter()
            .filter(|f| {
                f.measured.power_watts > cap_watts
                    && f.measured.frag_milli < best.measured.frag_milli
            })
            .min_by(|a, b| {
                a.measured
                    .power_watts
                    .total_cmp(&b.measured.power_watts)
                    .then(a.measured.frag_milli.total_cmp(&b.measured.frag_milli))
            })
    });
    let mut seeds: Vec<&Found> = found.iter().take(2).collect();
    for f in within.into_iter().chain(above) {
        if !seeds.iter().any(|s| std::ptr::eq(*s, f)) {
            seeds.push(f);
        }
    }
    seeds
}

/// The next cap to solve, `caps_left` of them (this one included) left. Caps rise: while
/// the front found so far (non-dominated placements) has points between the highest cap
/// `tried` (the first: the least-power end's cap, below which no cap goes) and its
/// least-fragmentation end, the cap is the power of the one of them (its
/// point is then that placement or a better one) nearest to the first `1/(caps_left + 1)`
/// of the front's length from that cap on (power and fragmentation each over the end
/// points' span, `scale`). Solved from low to high, a cap's solve rarely finds a placement
/// that dominates a lower cap's point. Else [`cap_in_widest_step`].
fn next_cap(found: &[Found], tried: &[f64], scale: (f64, f64), caps_left: usize) -> Option<f64> {
    let front: Vec<(f64, f64)> = staircase_of(found)
        .into_iter()
        .map(|i| (found[i].measured.power_watts, found[i].measured.frag_milli))
        .collect();
    let last = front.len().saturating_sub(1);
    let highest = tried.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let from = front.partition_point(|p| p.0 <= highest).saturating_sub(1);
    let mut along = vec![0.0; front.len()];
    for i in from + 1..front.len() {
        let (low, high) = (front[i - 1], front[i]);
        along[i] = along[i - 1] + (high.0 - low.0) / scale.0 + (low.1 - high.1) / scale.1;
    }
    let target = along[last] / (caps_left + 1) as f64;
    let nearest = (from + 1..last)
        .filter(|&i| front[i].0 > highest && !tried.contains(&front[i].0))
        .min_by(|&a, &b| {
            (along[a] - target)
                .abs()
                .total_cmp(&(along[b] - target).abs())
        });
    match nearest {
        Some(i) => Some(front[i].0),
        None => cap_in_widest_step(&front, tried, scale),
    }
}

/// A cap in the step between two neighbouring points of the `front` whose rectangle —
/// power span times fragmentation drop, each over `scale` — is largest, among the caps
/// whose point (the least fragmentation found within it) no end point and no cap `tried`
/// has yet, before any other: its upper point's power unless that point is the least
/// fragmentation found, then the shares [`GAP_SHARES`] of the step; never at or below the
/// first cap `tried` (the least-power end's). `None` when every step was tried.
fn cap_in_widest_step(front: &[(f64, f64)], tried: &[f64], scale: (f64, f64)) -> Option<f64> {
    let last = front.len().saturating_sub(1);
    let floor = tried.first().copied().unwrap_or(f64::NEG_INFINITY);
    // The index of the front point that is the least fragmentation within `cap`.
    let point_within = |cap: f64| front.partition_point(|p| p.0 <= cap).checked_sub(1);
    let mut reported: Vec<Option<usize>> = tried.iter().map(|&cap| point_within(cap)).collect();
    reported.push(Some(0));
    reported.push(Some(last));
    front
        .windows(2)
        .enumerate()
        .filter_map(|(i, pair)| {
            let (low, high) = (pair[0], pair[1]);
            let area = (high.0 - low.0) / scale.0 * (low.1 - high.1) / scale.1;
            let at_upper = (i + 1 < last).then_some(high.0);
            let shares = GAP_SHARES
                .iter()
                .map(|share| (low.0 + share * (high.0 - low.0)).floor());
            let cap = at_upper
                .into_iter()
                .chain(shares)
                .find(|cap| *cap > low.0.max(floor) && !tried.contains(cap))?;
            let new_point = !reported.contains(&point_within(cap));
            Some((cap, new_point, area))
        })
        .max_by(|a, b| {
            a.1.cmp(&b.1)
                .then(a.2.total_cmp(&b.2))
                .then(b.0.total_cmp(&a.0))
        })
        .map(|(cap, _, _)| cap)
}
