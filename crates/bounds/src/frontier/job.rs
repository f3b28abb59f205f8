//! One job's problem once slot capacities and the budget are priced: the exact cheapest
//! schedule, JCT plus priced GPU-seconds and budget.
//!
//! Within slot `t` a job running at average speed `ρ` (iterations/s, mixing configurations
//! and idle time) pays, per second of the slot, the lower convex hull of the points
//! `(0, 0)` and `(v_c, κ[c,t])`, `κ[c,t] = λ·P_c·b_t + μ_t·n_c` (`b_t` the budget per watt-second):
//! running a mix is never worse than what the hull says, and the hull is reached by mixing
//! two neighbours. So the cost of doing `w` iterations in a slot is convex piecewise linear in
//! `w`. A slot before the finishing slot also costs its whole length in JCT; the finishing
//! slot costs only the time actually run, so its hull uses `1 + κ[c,t]`. For a fixed
//! finishing slot the job's problem is a separable convex allocation of `W` over slots:
//! filling the cheapest segments first is optimal. Trying every finishing slot (stopping when
//! the time of the earlier slots alone exceeds the best cost) gives the exact optimum.

use super::hull::{run_times, segments, slot_hull, Corner, Segment};
use super::rates::{BudgetRates, Prices};
use super::{FrontierInstance, FrontierJob};

/// The cheapest schedule of one job at given prices.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSchedule {
    /// JCT + λ·budget used + Σ μ_t·GPU-seconds.
    pub cost: f64,
    pub jct_s: f64,
    pub budget_used: f64,
    /// GPU-seconds used per slot of the horizon, `(slot, gpu_seconds)`.
    pub gpu_seconds: Vec<(usize, f64)>,
}

/// Inserts `new` into `sorted` (by cost per iteration, then slot: a stable order).
fn merge_sorted(sorted: &mut Vec<Segment>, new: impl Iterator<Item = Segment>) {
    for segment in new {
        let at = sorted.partition_point(|s| {
            (s.cost_per_iteration, s.slot) <= (segment.cost_per_iteration, segment.slot)
        });
        sorted.insert(at, segment);
    }
}

/// Fills `work` iterations from the cheapest of two sorted segment lists; returns the cost
/// and the iterations taken per slot, or `None` when their capacity is short.
fn fill(work: f64, a: &[Segment], b: &[Segment], taken: &mut Vec<(usize, f64)>) -> Option<f64> {
    taken.clear();
    let (mut i, mut k, mut left, mut cost) = (0, 0, work, 0.0);
    while left > 1e-12 * work {
        let next = match (a.get(i), b.get(k)) {
            (Some(x), Some(y)) if x.cost_per_iteration <= y.cost_per_iteration => {
                i += 1;
                x
            }
            (Some(x), None) => {
                i += 1;
                x
            }
            (_, Some(y)) => {
                k += 1;
                y
            }
            (None, None) => return None,
        };
        let amount = next.capacity.min(left);
        cost += amount * next.cost_per_iteration;
        left -= amount;
        match taken.last_mut() {
            Some((slot, total)) if *slot == next.slot => *total += amount,
            _ => taken.push((next.slot, amount)),
        }
    }
    Some(cost)
}

/// The exact cheapest schedule of `job` at `prices`.
pub fn cheapest_schedule(
    instance: &FrontierInstance,
    job: &FrontierJob,
    prices: &Prices,
    rates: &BudgetRates,
) -> JobSchedule {
    let (arrival, finish) = cheapest_finish(instance, job, prices, rates, LINEAR_SEGMENTS);
    schedule_finishing_in(instance, job, prices, rates, arrival, finish)
}

/// The arrival slot and the finishing slot of the cheapest schedule, sorted lists up to
/// `linear_segments` earlier segments, then [`long_search`].
fn cheapest_finish(
    instance: &FrontierInstance,
    job: &FrontierJob,
    prices: &Prices,
    rates: &BudgetRates,
    linear_segments: usize,
) -> (usize, usize) {
    let horizon = instance.slots.count();
    let arrival = instance.arrival_slot(job).min(horizon);
    let floor = budget_floor(job, prices, rates);
    let mut before: Vec<Segment> = Vec::new();
    let mut waited_s = 0.0;
    let mut best: Option<(f64, usize)> = None;
    let mut taken = Vec::new();
    let (mut corners, mut finishing) = (Vec::new(), Vec::new());
    for finish in arrival..=horizon {
        if best.is_some_and(|(cost, _)| waited_s + floor >= cost) {
            break; // the earlier slots' time and the least budget cost already cost more
        }
        if before.len() > linear_segments {
            // A long job (or a long wait): the same search with the earlier slots'
            // segments in a Fenwick tree, O(log n) per finishing slot.
            best = long_search(
                instance,
                job,
                prices,
                rates,
                (arrival, finish),
                (waited_s, floor),
                best,
            );
            break;
        }
        let scratch = (&mut corners, &mut finishing);
        finishing_segments(instance, job, prices, rates, finish, scratch);
        if let Some(cost) = fill(job.iterations, &before, &finishing, &mut taken) {
            let cost = waited_s + cost;
            if best.is_none_or(|(b, _)| cost < b) {
                best = Some((cost, finish));
            }
        }
        if finish < horizon {
            let available = instance.available_s(job, finish);
            slot_hull(job, prices, rates, (finish, 0.0), &mut corners);
            merge_sorted(&mut before, segments(&corners, available, finish));
            waited_s += available;
        }
    }
    let (_, finish) = best.expect("the slot after the horizon always finishes the job");
    (arrival, finish)
}

/// A lower bound on what any schedule of `job` pays for its budget: its work at its most
/// frugal configuration (least watt-seconds per iteration) at the lowest rate, times `λ`
/// (capacity prices and time only add to it). With the time of the slots before a
/// finishing slot it bounds every schedule finishing there or later, so the search stops
/// once that passes the best cost found (the result is the same; with a large `λ` the
/// search would otherwise run to the horizon). Shaded by 1e-9 against rounding.
fn budget_floor(job: &FrontierJob, prices: &Prices, rates: &BudgetRates) -> f64 {
    let least_watt_s_per_iteration = job
        .configs
        .iter()
        .map(|c| c.watts / c.iterations_per_s)
        .fold(f64::INFINITY, f64::min);
    (prices.budget * rates.lowest * job.iterations * least_watt_s_per_iteration).max(0.0)
        * (1.0 - 1e-9)
}

/// Segments of earlier slots beyond which the finishing-slot search switches from sorted
/// lists (linear per finishing slot) to [`long_search`].
const LINEAR_SEGMENTS: usize = 256;

/// Sums of capacity and cost of the segments at or below each rank (a Fenwick tree).
struct RankSums {
    capacity: Vec<f64>,
    cost: Vec<f64>,
}

impl RankSums {
    fn new(n: usize) -> RankSums {
        RankSums {
            capacity: vec![0.0; n + 1],
            cost: vec![0.0; n + 1],
        }
    }

    /// Adds a segment at 0-based `rank`.
    fn add(&mut self, rank: usize, segment: &Segment) {
        let mut i = rank + 1;
        while i < self.capacity.len() {
            self.capacity[i] += segment.capacity;
            self.cost[i] += segment.capacity * segment.cost_per_iteration;
            i += i & i.wrapping_neg();
        }
    }

    /// (capacity, cost) of the segments of the first `count` ranks.
    fn prefix(&self, count: usize) -> (f64, f64) {
        let (mut i, mut capacity, mut cost) = (count, 0.0, 0.0);
        while i > 0 {
            capacity += self.capacity[i];
            cost += self.cost[i];
            i -= i & i.wrapping_neg();
        }
        (capacity, cost)
    }

    /// The fewest first ranks whose capacity reaches `target` (all ranks when none does).
    fn ranks_reaching(&self, target: f64) -> usize {
        let n = self.capacity.len() - 1;
        let (mut position, mut left) = (0, target);
        let mut step = n.next_power_of_two();
        while step > 0 {
            let next = position + step;
            if next <= n && self.capacity[next] < left {
                position = next;
                left -= self.capacity[next];
            }
            step >>= 1;
        }
        (position + 1).min(n)
    }
}

/// The cheapest way to do `work` iterations from the active ranked segments and the
/// finishing slot's `finishing` ones (cheapest first, earlier slots first on ties, as
/// [`fill`]); `None` when their capacity is short.
fn ranked_fill(
    sums: &RankSums,
    ranked: &[Segment],
    finishing: &[Segment],
    work: f64,
) -> Option<f64> {
    let (mut left, mut cost) = (work, 0.0);
    let (mut capacity_from, mut cost_from) = (0.0, 0.0);
    let take_ranked = |capacity_from: f64, cost_from: f64, left: f64| {
        let target = capacity_from + left;
        let ranks = sums.ranks_reaching(target);
        let (capacity_before, cost_before) = sums.prefix(ranks - 1);
        cost_before - cost_from
            + (target - capacity_before).max(0.0) * ranked[ranks - 1].cost_per_iteration
    };
    for segment in finishing {
        let upto = ranked.partition_point(|s| s.cost_per_iteration <= segment.cost_per_iteration);
        let (capacity_to, cost_to) = sums.prefix(upto);
        if capacity_to - capacity_from >= left {
            return Some(cost + take_ranked(capacity_from, cost_from, left));
        }
        left -= capacity_to - capacity_from;
        cost += cost_to - cost_from;
        (capacity_from, cost_from) = (capacity_to, cost_to);
        let amount = segment.capacity.min(left);
        cost += amount * segment.cost_per_iteration;
        left -= amount;
        if left <= 1e-12 * work {
            return Some(cost);
        }
    }
    let (capacity_all, _) = sums.prefix(ranked.len());
    if capacity_all - capacity_from < left * (1.0 - 1e-12) {
        return None;
    }
    Some(cost + take_ranked(capacity_from, cost_from, left))
}

/// The earlier slots' segments ranked by cost, over slots `[arrival, upto)`, those of
/// `[arrival, active)` counted in the sums.
struct RankedSlots {
    ranked: Vec<Segment>,
    sums: RankSums,
    /// Per slot from `arrival`: the ranks of its segments.
    ranks_of_slot: Vec<Vec<usize>>,
    arrival: usize,
    upto: usize,
}

impl RankedSlots {
    fn build(
        instance: &FrontierInstance,
        job: &FrontierJob,
        prices: &Prices,
        rates: &BudgetRates,
        (arrival, upto, active): (usize, usize, usize),
    ) -> RankedSlots {
        let (mut all, mut corners): (Vec<Segment>, Vec<Corner>) = (Vec::new(), Vec::new());
        for slot in arrival..upto {
            slot_hull(job, prices, rates, (slot, 0.0), &mut corners);
            all.extend(segments(&corners, instance.available_s(job, slot), slot));
        }
        let mut order: Vec<usize> = (0..all.len()).collect();
        order.sort_unstable_by(|&a, &b| {
            (all[a].cost_per_iteration, all[a].slot)
                .partial_cmp(&(all[b].cost_per_iteration, all[b].slot))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let mut ranks_of_slot = vec![Vec::new(); upto - arrival];
        for (rank, &index) in order.iter().enumerate() {
            ranks_of_slot[all[index].slot - arrival].push(rank);
        }
        let mut ranked = RankedSlots {
            ranked: order.iter().map(|&i| all[i]).collect(),
            sums: RankSums::new(all.len()),
            ranks_of_slot,
            arrival,
            upto,
        };
        for slot in arrival..active {
            ranked.activate(slot);
        }
        ranked
    }

    fn activate(&mut self, slot: usize) {
        for &rank in &self.ranks_of_slot[slot - self.arrival] {
            self.sums.add(rank, &self.ranked[rank]);
        }
    }
}

/// The finishing-slot search of [`cheapest_schedule`] from slot `from` on, the segments of
/// slots `[arrival, from)` already counted in `waited_s`: the earlier slots' segments
/// ranked once by cost (over a window of slots that doubles when the search reaches its
/// end), activated as the finishing slot moves past them.
fn long_search(
    instance: &FrontierInstance,
    job: &FrontierJob,
    prices: &Prices,
    rates: &BudgetRates,
    (arrival, from): (usize, usize),
    (mut waited_s, floor): (f64, f64),
    mut best: Option<(f64, usize)>,
) -> Option<(f64, usize)> {
    let horizon = instance.slots.count();
    let window = |active: usize| (active + (active - arrival).max(64)).min(horizon);
    let mut ranked =
        RankedSlots::build(instance, job, prices, rates, (arrival, window(from), from));
    let (mut corners, mut finishing) = (Vec::new(), Vec::new());
    for finish in from..=horizon {
        if best.is_some_and(|(cost, _)| waited_s + floor >= cost) {
            break;
        }
        let scratch = (&mut corners, &mut finishing);
        finishing_segments(instance, job, prices, rates, finish, scratch);
        if let Some(cost) = ranked_fill(&ranked.sums, &ranked.ranked, &finishing, job.iterations) {
            let cost = waited_s + cost;
            if best.is_none_or(|(b, _)| cost < b) {
                best = Some((cost, finish));
            }
        }
        if finish < horizon {
            if finish >= ranked.upto {
                let triple = (arrival, window(finish + 1), finish);
                ranked = RankedSlots::build(instance, job, prices, rates, triple);
            }
            ranked.activate(finish);
            waited_s += instance.available_s(job, finish);
        }
    }
    best
}

/// The finishing slot's segments (after the horizon: one unlimited segment at the best
/// cost per iteration, no capacity price), into `segments_out`, with the slot's hull in
/// `corners`.
fn finishing_segments(
    instance: &FrontierInstance,
    job: &FrontierJob,
    prices: &Prices,
    rates: &BudgetRates,
    finish: usize,
    (corners, segments_out): (&mut Vec<Corner>, &mut Vec<Segment>),
) {
    slot_hull(job, prices, rates, (finish, 1.0), corners);
    segments_out.clear();
    if finish >= instance.slots.count() {
        let best = corners
            .iter()
            .skip(1)
            .map(|c| c.cost_per_s / c.speed)
            .fold(f64::INFINITY, f64::min);
        segments_out.push(Segment {
            cost_per_iteration: best,
            capacity: f64::INFINITY,
            slot: finish,
        });
        return;
    }
    segments_out.extend(segments(corners, instance.available_s(job, finish), finish));
}

/// How long `job` runs each configuration (index, seconds) to do `work` iterations in
/// `slot`, whose hull is `corners`: the hull's mix at the slot's average speed; after the
/// horizon, the single best configuration for as long as it takes.
fn slot_run_times(
    instance: &FrontierInstance,
    job: &FrontierJob,
    corners: &[Corner],
    slot: usize,
    work: f64,
) -> Vec<(usize, f64)> {
    if slot >= instance.slots.count() {
        let (k, speed) = corners
            .iter()
            .skip(1)
            .min_by(|a, b| (a.cost_per_s / a.speed).total_cmp(&(b.cost_per_s / b.speed)))
            .map(|c| (c.config.expect("a configuration"), c.speed))
            .expect("a job has a configuration");
        vec![(k, work / speed)]
    } else {
        run_times(
            corners,
            work / instance.available_s(job, slot),
            instance.available_s(job, slot),
        )
    }
}

/// The schedule that finishes in slot `finish`, with the times it runs each configuration.
fn schedule_finishing_in(
    instance: &FrontierInstance,
    job: &FrontierJob,
    prices: &Prices,
    rates: &BudgetRates,
    arrival: usize,
    finish: usize,
) -> JobSchedule {
    let (mut before, mut corners, mut finishing) = (Vec::new(), Vec::new(), Vec::new());
    for slot in arrival..finish {
        slot_hull(job, prices, rates, (slot, 0.0), &mut corners);
        before.extend(segments(&corners, instance.available_s(job, slot), slot));
    }
    before.sort_by(|a, b| {
        (a.cost_per_iteration, a.slot)
            .partial_cmp(&(b.cost_per_iteration, b.slot))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    finishing_segments(
        instance,
        job,
        prices,
        rates,
        finish,
        (&mut corners, &mut finishing),
    );
    let mut taken = Vec::new();
    fill(job.iterations, &before, &finishing, &mut taken)
        .expect("this finishing slot was feasible");
    // A slot's segments may be taken apart (other slots' cheaper ones between them): one
    // total per slot, run as the hull's mix at that slot's average speed.
    taken.sort_by_key(|&(slot, _)| slot);
    taken.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            kept.1 += later.1;
        }
        same
    });
    let mut schedule = JobSchedule {
        cost: 0.0,
        jct_s: (arrival..finish)
            .map(|t| instance.available_s(job, t))
            .sum(),
        budget_used: 0.0,
        gpu_seconds: Vec::new(),
    };
    for &(slot, work) in &taken {
        let charge = if slot == finish { 1.0 } else { 0.0 };
        slot_hull(job, prices, rates, (slot, charge), &mut corners);
        let times = slot_run_times(instance, job, &corners, slot, work);
        let mut gpu_seconds = 0.0;
        for (k, seconds) in times {
            let config = job.configs[k];
            schedule.budget_used += config.watts * rates.at(slot) * seconds;
            gpu_seconds += f64::from(config.gpus) * seconds;
            if slot == finish {
                schedule.jct_s += seconds;
            }
        }
        if slot < instance.slots.count() {
            schedule.gpu_seconds.push((slot, gpu_seconds));
        }
    }
    let gpu_cost: f64 = schedule
        .gpu_seconds
        .iter()
        .map(|&(t, s)| prices.gpu_second[t] * s)
        .sum();
    schedule.cost = schedule.jct_s + prices.budget * schedule.budget_used + gpu_cost;
    schedule
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontier::{BudgetKind, JobConfig};

    fn instance(jobs: Vec<FrontierJob>) -> FrontierInstance {
        FrontierInstance {
            jobs,
            gpus: 4,
            slots: crate::frontier::Slots::uniform(100.0, 10),
            budget: BudgetKind::Energy,
        }
    }

    /// With no prices the job runs flat out from its arrival: JCT = work / fastest speed.
    #[test]
    fn unpriced_jobs_run_at_full_speed() {
        let job = FrontierJob {
            arrival_s: 30.0,
            iterations: 500.0,
            configs: vec![
                JobConfig {
                    gpus: 1,
                    iterations_per_s: 1.0,
                    watts: 100.0,
                },
                JobConfig {
                    gpus: 2,
                    iterations_per_s: 2.5,
                    watts: 300.0,
                },
            ],
        };
        let inst = instance(vec![job.clone()]);
        let mu = vec![0.0; 10];
        let prices = Prices {
            budget: 0.0,
            gpu_second: &mu,
        };
        let schedule = cheapest_schedule(&inst, &job, &prices, &BudgetRates::of(&inst));
        assert!((schedule.jct_s - 200.0).abs() < 1e-9, "{schedule:?}");
        assert!((schedule.cost - 200.0).abs() < 1e-9);
        // 70 s of slot 0 and 100 s of slot 1 at 2 GPUs, then 30 s of slot 2.
        assert_eq!(schedule.gpu_seconds.len(), 3);
        assert!((schedule.gpu_seconds[0].1 - 140.0).abs() < 1e-9);
        let kwh = 200.0 * 300.0 / 3.6e6;
        assert!((schedule.budget_used - kwh).abs() < 1e-12);
    }

    /// A high energy price makes the frugal configuration win, a high capacity price in a
    /// slot makes the job wait it out: both hand-computed.
    #[test]
    fn prices_move_the_schedule() {
        let job = FrontierJob {
            arrival_s: 0.0,
            iterations: 100.0,
            configs: vec![
                JobConfig {
                    gpus: 1,
                    iterations_per_s: 1.0,
                    watts: 100.0,
                },
                JobConfig {
                    gpus: 2,
                    iterations_per_s: 2.0,
                    watts: 400.0,
                },
            ],
        };
        let inst = instance(vec![job.clone()]);
        let rates = BudgetRates::of(&inst);
        let mu = vec![0.0; 10];
        // λ per kWh such that 1 s at 100 W costs 1 s: λ = 3.6e6 / 100 s/kWh.
        // Fast: 50 s × (1 + 4) = 250; slow: 100 s × (1 + 1) = 200 → slow wins.
        let expensive = Prices {
            budget: 3.6e4,
            gpu_second: &mu,
        };
        let schedule = cheapest_schedule(&inst, &job, &expensive, &rates);
        assert!((schedule.jct_s - 100.0).abs() < 1e-9, "{schedule:?}");
        assert!((schedule.cost - 200.0).abs() < 1e-9);
        // Slot 0 priced at 10 s per GPU-second: cheaper to wait for slot 1 (100 s of waiting
        // then 50 s at full speed = 150) than to run in slot 0 (≥ 100 × 1 × 10).
        let mut mu = vec![0.0; 10];
        mu[0] = 10.0;
        let congested = Prices {
            budget: 0.0,
            gpu_second: &mu,
        };
        let schedule = cheapest_schedule(&inst, &job, &congested, &rates);
        assert!((schedule.jct_s - 150.0).abs() < 1e-9, "{schedule:?}");
        assert_eq!(schedule.gpu_seconds, vec![(1, 100.0)]);
    }

    /// The ranked search for long jobs finds the same cheapest finishing slot and cost as the
    /// sorted lists, on random prices over many slots.
    #[test]
    fn the_long_search_agrees_with_the_sorted_lists() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for case in 0..20 {
            let job = FrontierJob {
                arrival_s: rng.random_range(0.0..500.0),
                iterations: rng.random_range(100.0..20000.0),
                configs: vec![
                    JobConfig {
                        gpus: 1,
                        iterations_per_s: 1.0,
                        watts: 100.0,
                    },
                    JobConfig {
                        gpus: 2,
                        iterations_per_s: 1.7,
                        watts: 230.0,
                    },
                    JobConfig {
                        gpus: 4,
                        iterations_per_s: 2.9,
                        watts: 520.0,
                    },
                ],
            };
            let inst = FrontierInstance {
                jobs: vec![job.clone()],
                gpus: 8,
                slots: crate::frontier::Slots::uniform(100.0, 300),
                budget: BudgetKind::Energy,
            };
            let mu: Vec<f64> = (0..300).map(|_| rng.random_range(0.0..0.6)).collect();
            let prices = Prices {
                budget: rng.random_range(0.0..5e4),
                gpu_second: &mu,
            };
            let rates = BudgetRates::of(&inst);
            let linear = cheapest_finish(&inst, &job, &prices, &rates, usize::MAX);
            let ranked = cheapest_finish(&inst, &job, &prices, &rates, 0);
            let cost = |(a, f)| schedule_finishing_in(&inst, &job, &prices, &rates, a, f).cost;
            let (c1, c2) = (cost(linear), cost(ranked));
            assert!(
                (c1 - c2).abs() <= 1e-9 * c1.abs().max(1.0),
                "case {case}: {c1} vs {c2}"
            );
        }
    }

    /// A slot whose segments are taken apart still runs at most its length, and costs what
    /// the hull says for its total.
    #[test]
    fn a_slot_taken_in_pieces_runs_at_most_its_length() {
        let job = FrontierJob {
            arrival_s: 0.0,
            iterations: 5000.0,
            configs: vec![
                JobConfig {
                    gpus: 1,
                    iterations_per_s: 1.0,
                    watts: 100.0,
                },
                JobConfig {
                    gpus: 4,
                    iterations_per_s: 3.0,
                    watts: 600.0,
                },
            ],
        };
        let inst = instance(vec![job.clone()]);
        let mu: Vec<f64> = (0..10).map(|t| 0.05 * (t % 3) as f64).collect();
        let prices = Prices {
            budget: 2e4,
            gpu_second: &mu,
        };
        let schedule = cheapest_schedule(&inst, &job, &prices, &BudgetRates::of(&inst));
        let mut slots: Vec<usize> = schedule.gpu_seconds.iter().map(|&(t, _)| t).collect();
        slots.dedup();
        assert_eq!(slots.len(), schedule.gpu_seconds.len(), "{schedule:?}");
        for &(slot, gpu_s) in &schedule.gpu_seconds {
            // At most 4 GPUs for the whole slot.
            assert!(
                gpu_s <= 4.0 * inst.available_s(&job, slot) + 1e-9,
                "{schedule:?}"
            );
        }
    }

    /// A job that cannot finish within the horizon finishes after it, uncapacitated.
    #[test]
    fn the_slot_after_the_horizon_always_finishes() {
        let job = FrontierJob {
            arrival_s: 950.0,
            iterations: 1000.0,
            configs: vec![JobConfig {
                gpus: 1,
                iterations_per_s: 1.0,
                watts: 50.0,
            }],
        };
        let inst = instance(vec![job.clone()]);
        let mu = vec![0.0; 10];
        let prices = Prices {
            budget: 0.0,
            gpu_second: &mu,
        };
        let schedule = cheapest_schedule(&inst, &job, &prices, &BudgetRates::of(&inst));
        assert!((schedule.jct_s - 1000.0).abs() < 1e-9, "{schedule:?}");
        assert_eq!(schedule.gpu_seconds, vec![(9, 50.0)]);
    }
}
