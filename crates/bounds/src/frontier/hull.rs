//! A slot's cost hull for one job at given prices: the lower convex hull of idle and the
//! job's configurations as `(speed, cost per second)` points, its pieces as work segments,
//! and the mix of configurations that runs a slot at a given average speed (the model is in
//! the `job` module's documentation).

use super::rates::{BudgetRates, Prices};
use super::FrontierJob;

/// A corner of a slot's cost hull: running speed and cost per second, and which
/// configuration it is (`None` for idle).
#[derive(Debug, Clone, Copy)]
pub(super) struct Corner {
    pub speed: f64,
    pub cost_per_s: f64,
    pub config: Option<usize>,
}

/// A piece of a slot's work-cost function: `capacity` iterations at `cost_per_iteration`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Segment {
    pub cost_per_iteration: f64,
    pub capacity: f64,
    pub slot: usize,
}

/// The lower convex hull of `points`, sorted by speed, in place: from idle to the fastest
/// configuration (monotone chain; collinear corners dropped; of points of one speed only
/// the first, the cheapest, can be on it).
fn hull(points: &mut Vec<Corner>) {
    let mut kept = 0; // points[..kept] is the hull so far; kept ≤ the point read
    for i in 0..points.len() {
        let p = points[i];
        if kept > 0 && points[kept - 1].speed == p.speed {
            continue; // same speed, higher cost: never on the lower hull
        }
        while kept >= 2 {
            let (a, b) = (points[kept - 2], points[kept - 1]);
            let cross = (b.speed - a.speed) * (p.cost_per_s - a.cost_per_s)
                - (b.cost_per_s - a.cost_per_s) * (p.speed - a.speed);
            if cross <= 0.0 {
                kept -= 1;
            } else {
                break;
            }
        }
        points[kept] = p;
        kept += 1;
    }
    points.truncate(kept);
}

/// What the job pays for running in `slot` (`time_charge` = 1 for the finishing slot), into
/// `corners`, a buffer reused from slot to slot: this runs for every slot of every job at
/// every price, and a new list per slot (twice over) took about a fifth of the budget
/// study's time in the allocator.
pub(super) fn slot_hull(
    job: &FrontierJob,
    prices: &Prices,
    rates: &BudgetRates,
    (slot, time_charge): (usize, f64),
    corners: &mut Vec<Corner>,
) {
    let gpu_price = prices.gpu_second.get(slot).copied().unwrap_or(0.0);
    let rate = rates.at(slot);
    corners.clear();
    corners.extend(job.configs.iter().enumerate().map(|(k, c)| Corner {
        speed: c.iterations_per_s,
        cost_per_s: time_charge + prices.budget * c.watts * rate + gpu_price * f64::from(c.gpus),
        config: Some(k),
    }));
    corners.push(Corner {
        speed: 0.0,
        cost_per_s: 0.0,
        config: None,
    });
    // By speed, then cost, then list order with idle last: a total order, so the sort
    // needs no stability (nor the buffer a stable sort allocates).
    corners.sort_unstable_by(|a, b| {
        let rank = |c: &Corner| c.config.unwrap_or(usize::MAX);
        a.speed
            .total_cmp(&b.speed)
            .then(a.cost_per_s.total_cmp(&b.cost_per_s))
            .then(rank(a).cmp(&rank(b)))
    });
    hull(corners);
}

/// The hull's pieces as work segments of a slot `available_s` long.
pub(super) fn segments(
    corners: &[Corner],
    available_s: f64,
    slot: usize,
) -> impl Iterator<Item = Segment> + '_ {
    corners.windows(2).map(move |w| Segment {
        cost_per_iteration: (w[1].cost_per_s - w[0].cost_per_s) / (w[1].speed - w[0].speed),
        capacity: (w[1].speed - w[0].speed) * available_s,
        slot,
    })
}

/// Seconds per configuration when a slot `available_s` long runs at average speed `speed`
/// on the hull: a mix of the two corners around it.
pub(super) fn run_times(corners: &[Corner], speed: f64, available_s: f64) -> Vec<(usize, f64)> {
    let at = corners
        .windows(2)
        .position(|w| speed <= w[1].speed * (1.0 + 1e-12))
        .unwrap_or(corners.len() - 2);
    let (low, high) = (corners[at], corners[at + 1]);
    let share_high = ((speed - low.speed) / (high.speed - low.speed)).clamp(0.0, 1.0);
    [(low, 1.0 - share_high), (high, share_high)]
        .into_iter()
        .filter_map(|(corner, share)| corner.config.map(|k| (k, share * available_s)))
        .filter(|&(_, seconds)| seconds > 0.0)
        .collect()
}
