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
//! Budget semantics (B2, paced, with a reserve): of the budget `B`, what is left after
//! spending so far, the least energy the active jobs still need, and an estimate of the
//! least energy of jobs still to come (the least energy of arrivals so far per second,
//! times the time left to the horizon) is spread evenly over the time left:
//! `extra watts ≤ (B − spent − E_min,active − E_min,future) / max(H − now, Δ)`.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::budget::{Allocator, Budget, BudgetJob, Round};

/// The greedy's cost of one watt of extra power and the round's allowance in that unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Allowance {
    /// Extra watts over admission the round may add.
    pub extra_watts: f64,
}

/// PowerFlow-style allocation with an energy budget.
#[derive(Debug, Clone, Default)]
pub struct PowerFlowStyle;

impl Allocator for PowerFlowStyle {
    fn name(&self) -> String {
        "powerflow".into()
    }

    fn allocate(&mut self, round: &Round<'_>) -> Vec<Option<usize>> {
        let extra_watts = match round.budget {
            Budget::Unlimited => f64::INFINITY,
            Budget::EnergyKwh(_) | Budget::CarbonKg(_) => {
                let limit = round.budget.limit().expect("limited");
                let excess = match round.budget {
                    // A carbon budget with this allocator: spent is grams; convert the
                    // reserve at the current intensity.
                    Budget::CarbonKg(_) => {
                        let g_per_j = round.carbon.map_or(0.0, |s| s.at(round.now_s)) / 3.6e6;
                        (limit - round.spent) / g_per_j.max(1e-12) - reserve_joules(round)
                    }
                    _ => limit - round.spent - reserve_joules(round),
                };
                excess.max(0.0) / time_left(round)
            }
        };
        greedy_plan(round, Allowance { extra_watts })
    }
}

/// Seconds over which what is left is spread: to the horizon, at least one round.
pub fn time_left(round: &Round<'_>) -> f64 {
    (round.horizon_end_s - round.now_s).max(round.round_s)
}

/// Energy (J) held back: what the active jobs need at least, and an estimate of what jobs
/// still to come will need (the least-energy arrival rate so far × time to the horizon).
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
pub fn greedy_plan(round: &Round<'_>, allowance: Allowance) -> Vec<Option<usize>> {
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
    let mut extra_watts = 0.0;
    while let Some(step) = heap.pop() {
        if plan[step.slot] != Some(step.from) {
            continue;
        }
        let job = &jobs[active[step.slot].job as usize];
        let (from, to) = (&job.options[step.from], &job.options[step.to]);
        let added = to.watts - from.watts;
        if extra_watts + added > allowance.extra_watts {
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
    plan
}
