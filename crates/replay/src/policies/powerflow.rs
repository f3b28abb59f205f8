//! PowerFlow-style energy-budgeted allocation (time-and-budgets §3.4; PowerFlow's own
//! equations and constants were not available to us, so the loop is our port and every
//! choice below is [D]).
//!
//! Every round (every Δ and on each arrival or completion):
//! 1. **Admission** in SRTF order (remaining iterations at the frugal configuration, then
//!    job index): each job gets its least-energy configuration if its GPUs fit the buddy
//!    pool, else it waits. Admission is never refused for budget: the frugal configuration
//!    is the cheapest way to do the work, so delaying it saves nothing.
//! 2. **Greedy upgrades**: among single steps (raise the clock one level; double the GPU
//!    count, buddy sizes, at L1) the one with the largest `(ΔJCT/JCT) / (ΔE/E)` over the
//!    job's remaining work (`ΔE ≤ 0` ranks first; steps that do not shorten the job are
//!    never taken) is applied if its GPUs fit and the round's extra power over admission
//!    stays within the paced allowance; otherwise it is dropped and the next one tried.
//!
//! Budget semantics [D] (a paced variant of the spec's B2): of the budget `B`, the *excess*
//! is what is left after spending so far, the least energy the active jobs still need, and
//! an estimate of the least energy of jobs still to come (the least-energy arrival rate so
//! far × the time to the end of the arrival period `H`). The excess is spread over the
//! least energy still needed, in proportion: with markup `m = excess / reserve`, a round may
//! add at most `m ×` the power of its admitted jobs at their frugal configurations. So the
//! budget is paced by work rather than by wall time (a loaded hour gets more than an idle
//! one), and a replay that spends as predicted lands on the budget.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::budget::{Allocator, Budget, BudgetJob, Plan, Round};

/// How much extra power a round may add over its admitted jobs' frugal power.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Allowance {
    /// Extra watts per watt of admitted frugal power (∞ = unlimited).
    pub markup: f64,
}

/// PowerFlow-style allocation with an energy budget.
#[derive(Debug, Clone, Default)]
pub struct PowerFlowStyle;

impl Allocator for PowerFlowStyle {
    fn name(&self) -> String {
        "powerflow".into()
    }

    fn allocate(&mut self, round: &Round<'_>) -> Plan {
        let markup = match (round.budget, round.carbon) {
            (Budget::Unlimited, _) => f64::INFINITY,
            (Budget::EnergyKwh(_), _) => {
                let limit = round.budget.limit().expect("limited");
                markup(limit - round.spent, reserve_joules(round))
            }
            // With a carbon budget this allocator values its reserve at today's intensity
            // (GreenFlow-style does better).
            (Budget::CarbonKg(_), series) => {
                let limit = round.budget.limit().expect("limited");
                let g_per_j = series.map_or(0.0, |s| s.at(round.now_s)) / 3.6e6;
                markup(limit - round.spent, reserve_joules(round) * g_per_j)
            }
        };
        greedy_plan(round, Allowance { markup })
    }
}

/// `excess / reserve`, where the excess is what is left beyond the reserve; 0 when nothing
/// is left beyond it.
pub fn markup(left: f64, reserve: f64) -> f64 {
    let excess = left - reserve;
    if excess <= 0.0 {
        0.0
    } else if reserve <= 0.0 {
        f64::INFINITY
    } else {
        excess / reserve
    }
}

/// Energy (J) held back: what the active jobs need at least, and an estimate of what jobs
/// still to come will need: the least-energy arrival rate since the first arrival × the
/// time to the end of the arrival period. (A trailing one-day rate was tried and ran out
/// of budget on the openb default trace, whose arrivals grow towards its end.)
pub fn reserve_joules(round: &Round<'_>) -> f64 {
    let elapsed = (round.now_s - round.first_arrival_s).max(round.round_s);
    let to_horizon = (round.horizon_end_s - round.now_s).max(0.0);
    round.least_remaining_j + round.least_arrived_j / elapsed * to_horizon
}

/// A candidate step: job position in `round.active`, from option, to option.
#[derive(Debug, Clone, Copy)]
struct Step {
    ratio: f64,
    slot: usize,
    from: usize,
    to: usize,
}

impl PartialEq for Step {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Step {}
impl PartialOrd for Step {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Step {
    /// Largest ratio first; ties: earlier slot, then smaller target option.
    fn cmp(&self, other: &Self) -> Ordering {
        self.ratio
            .total_cmp(&other.ratio)
            .then(other.slot.cmp(&self.slot))
            .then(other.to.cmp(&self.to))
    }
}

/// The single-step upgrades of `job` from option `from`: the next clock level at the same
/// GPU count, and twice the GPUs at the same clock.
fn upgrades(job: &BudgetJob, from: usize) -> impl Iterator<Item = usize> + '_ {
    let current = job.options[from].config;
    let faster_clock = job
        .options
        .iter()
        .enumerate()
        .filter(|(_, o)| o.config.gpus == current.gpus && o.config.frequency > current.frequency)
        .min_by(|a, b| a.1.config.frequency.total_cmp(&b.1.config.frequency))
        .map(|(k, _)| k);
    let more_gpus = job
        .options
        .iter()
        .position(|o| o.config.gpus == current.gpus * 2 && o.config.frequency == current.frequency);
    faster_clock.into_iter().chain(more_gpus)
}

/// `(ΔJCT/JCT)/(ΔE/E)` of moving `remaining` iterations from `from` to `to`; `None` when it
/// does not shorten the job.
fn ratio(job: &BudgetJob, remaining: f64, from: usize, to: usize) -> Option<f64> {
    let (a, b) = (&job.options[from], &job.options[to]);
    let (t_from, t_to) = (
        remaining / a.iterations_per_s,
        remaining / b.iterations_per_s,
    );
    if t_to >= t_from {
        return None;
    }
    let (e_from, e_to) = (
        remaining * a.joules_per_iteration(),
        remaining * b.joules_per_iteration(),
    );
    if e_to <= e_from {
        return Some(f64::INFINITY);
    }
    Some(((t_from - t_to) / t_from) / ((e_to - e_from) / e_from))
}

/// Admission then greedy upgrades within `allowance` (shared by the GreenFlow-style
/// allocator, which only changes the allowance).
pub fn greedy_plan(round: &Round<'_>, allowance: Allowance) -> Plan {
    let jobs = round.jobs;
    let active = round.active;
    let mut order: Vec<usize> = (0..active.len()).collect();
    let solo_s = |slot: usize| {
        let job = &jobs[active[slot].job as usize];
        active[slot].remaining_iterations / job.options[job.frugal_option].iterations_per_s
    };
    order.sort_by(|&a, &b| {
        solo_s(a)
            .total_cmp(&solo_s(b))
            .then(active[a].job.cmp(&active[b].job))
    });
    let mut pool = round.pool.clone();
    let mut plan: Vec<Option<usize>> = vec![None; active.len()];
    for &slot in &order {
        let job = &jobs[active[slot].job as usize];
        if pool.take(job.options[job.frugal_option].gpu_milli) {
            plan[slot] = Some(job.frugal_option);
        }
    }
    let mut heap = BinaryHeap::new();
    let push = |heap: &mut BinaryHeap<Step>, slot: usize, from: usize| {
        let job = &jobs[active[slot].job as usize];
        for to in upgrades(job, from) {
            if let Some(ratio) = ratio(job, active[slot].remaining_iterations, from, to) {
                heap.push(Step {
                    ratio,
                    slot,
                    from,
                    to,
                });
            }
        }
    };
    for (slot, option) in plan.iter().enumerate() {
        if let Some(from) = option {
            push(&mut heap, slot, *from);
        }
    }
    let frugal_watts: f64 = plan
        .iter()
        .zip(active)
        .filter_map(|(o, a)| o.map(|o| jobs[a.job as usize].options[o].watts))
        .sum();
    let cap_watts = allowance.markup * frugal_watts;
    let mut extra_watts = 0.0;
    while let Some(step) = heap.pop() {
        if plan[step.slot] != Some(step.from) {
            continue;
        }
        let job = &jobs[active[step.slot].job as usize];
        let (from, to) = (&job.options[step.from], &job.options[step.to]);
        let added = to.watts - from.watts;
        if extra_watts + added > cap_watts {
            continue;
        }
        if to.gpu_milli != from.gpu_milli {
            pool.release_whole(from.gpu_milli);
            if !pool.take(to.gpu_milli) {
                assert!(pool.take(from.gpu_milli), "a released block is free again");
                continue;
            }
        }
        extra_watts += added;
        plan[step.slot] = Some(step.to);
        push(&mut heap, step.slot, step.to);
    }
    Plan {
        options: plan,
        pool,
    }
}
