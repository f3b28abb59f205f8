//! What PowerFlow-style and GreenFlow-style allocation share (time-and-budgets §3.4, every
//! choice [D]): a round's view of the active training jobs and the budget, and the round's
//! plan on real nodes — admission, then greedy upgrades within an allowance — turned into
//! the engine's actions.
//!
//! Every round (every Δ and right after arrivals and completions) re-plans every active
//! training job (waiting or running) from its frugal configuration:
//! 1. **Admission** in SRTF order (remaining iterations at the frugal configuration, then
//!    arrival): each job gets its least-energy configuration if the buddy rules
//!    ([`super::buddy`]) find it GPUs on a node, else it waits. A running job keeps its
//!    devices when it can. Admission is never refused for budget: the frugal configuration
//!    is the cheapest way to do the work, so delaying it saves nothing.
//! 2. **Greedy upgrades**: among single steps (raise the clock one level; double the GPU
//!    count at L1) the one with the largest `(ΔJCT/JCT) / (ΔE/E)` over the job's remaining
//!    work (`ΔE ≤ 0` ranks first; steps that do not shorten the job are never taken) is
//!    applied if its GPUs are found and the round's extra power over admission stays within
//!    the allowance; otherwise it is dropped and the next one tried.
//!
//! Tasks that are not training jobs (CPU-only, zero-length) are placed once, first in
//! queue order, and never moved. Changes become `Place`, `Undo` (a preemption, progress
//! kept), and `Reconfigure` (re-clock on the same GPUs, or resize / move).
//!
//! A round that provably repeats the last plan, which changed nothing, is not planned
//! again ([`memo`]): most periodic rounds of a long replay are such.

mod memo;
mod round;
#[cfg(test)]
mod tests;

use std::collections::BinaryHeap;

use gapbench_model::Placement;

use super::buddy::{Planner, Shape};
use crate::policy::{Action, CapacityMode, ReplayView};
use memo::{Candidate, RoundMemo, Trace};
use round::{admission_key, over_allowance, ratio, upgrades, Step};
pub use round::{ActiveJob, Allowance, Round};

/// The round machinery of a budgeted policy: its settings, planner and running sums.
#[derive(Debug, Clone)]
pub struct BudgetedRounds {
    /// Round period Δ, seconds [D: 300 s].
    pub round_s: f64,
    /// The end of the budget period's arrivals (`None`: the last training job's arrival).
    pub horizon_end_s: Option<f64>,
    planner: Planner,
    /// The default horizon, once known.
    last_job_arrival_s: Option<f64>,
    /// Jobs counted into `least_arrived_j` so far, and that sum.
    counted_jobs: usize,
    least_arrived_j: f64,
    /// Whether a round may be skipped when it provably repeats the last plan (always, but
    /// for the tests that compare with planning every round).
    pub skip_repeats: bool,
    /// The current plan's trace, and the last plan if it changed nothing.
    trace: Trace,
    memo: RoundMemo,
    memo_valid: bool,
    /// Rounds skipped as repeats so far.
    pub skipped_rounds: u64,
    /// Buffers reused from round to round.
    scratch: Scratch,
}

/// A round's working buffers, kept between rounds so that planning allocates nothing.
#[derive(Debug, Clone, Default)]
struct Scratch {
    active: Vec<ActiveJob<'static>>,
    /// Admission order: (total-order key of the solo time, task, slot).
    order: Vec<(u64, u32, usize)>,
    plan: Vec<Option<(usize, Placement)>>,
    heap: BinaryHeap<Step>,
}

impl BudgetedRounds {
    pub fn new(round_s: f64, horizon_end_s: Option<f64>) -> BudgetedRounds {
        BudgetedRounds {
            round_s,
            horizon_end_s,
            planner: Planner::default(),
            last_job_arrival_s: None,
            counted_jobs: 0,
            least_arrived_j: 0.0,
            skip_repeats: true,
            trace: Trace::default(),
            memo: RoundMemo::default(),
            memo_valid: false,
            skipped_rounds: 0,
            scratch: Scratch::default(),
        }
    }

    /// Makes the planner search every request anew instead of remembering the ones it found
    /// no place for (the tests compare the two).
    pub fn forget_refusals(&mut self) {
        self.planner.forget_refusals = true;
    }

    /// The round's view of the active jobs and the budget.
    pub fn round<'v, 'a>(&mut self, view: &'v ReplayView<'a>) -> Round<'v, 'a> {
        let jobs = view.jobs.jobs();
        while self.counted_jobs < jobs.len()
            && (jobs[self.counted_jobs].task as usize) < view.arrived
        {
            let job = &jobs[self.counted_jobs];
            self.least_arrived_j += job.least_joules(job.training.iterations);
            self.counted_jobs += 1;
        }
        let mut active = recycle(std::mem::take(&mut self.scratch.active));
        active.extend(
            view.queue
                .iter()
                .chain(view.running.iter())
                .filter_map(|&task| {
                    let job = view.jobs.of(task)?;
                    let progress = &view.progress[task as usize];
                    Some(ActiveJob {
                        task,
                        job,
                        remaining_iterations: job.iterations(progress.remaining_at(view.now_s)),
                        current: progress.option.zip(progress.placement),
                    })
                }),
        );
        if !active.is_sorted_by_key(|a| a.task) {
            active.sort_unstable_by_key(|a| a.task);
        }
        let least_remaining_j = active
            .iter()
            .map(|a| a.job.least_joules(a.remaining_iterations))
            .sum();
        Round {
            view,
            active,
            spent: view.ledger.job_spend(view.budget.is_carbon()),
            round_s: self.round_s,
            horizon_end_s: match self.horizon_end_s {
                Some(h) => h,
                None => *self
                    .last_job_arrival_s
                    .get_or_insert_with(|| crate::jobs::default_horizon_s(jobs)),
            },
            least_remaining_j,
            least_arrived_j: self.least_arrived_j,
            first_arrival_s: view.tasks.first().map_or(0.0, |t| t.arrival_s),
        }
    }

    /// Admission then greedy upgrades within `allowance`, as the engine's actions.
    pub fn plan(&mut self, round: Round<'_, '_>, allowance: Allowance) -> Vec<Action> {
        let actions =
            if self.skip_repeats && self.memo_valid && self.memo.repeats(&round, allowance) {
                self.skipped_rounds += 1;
                Vec::new()
            } else {
                self.trace.clear();
                let actions = self.plan_anew(&round, allowance);
                self.memo_valid = actions.is_empty();
                if self.memo_valid {
                    self.memo.remember(&round, &mut self.trace);
                }
                actions
            };
        self.scratch.active = recycle(round.active);
        actions
    }

    fn plan_anew(&mut self, round: &Round<'_, '_>, allowance: Allowance) -> Vec<Action> {
        let view = round.view;
        let active = &round.active;
        self.planner.begin(view);
        let mut actions = Vec::new();
        for &task in view.queue {
            if view.jobs.of(task).is_some() {
                continue;
            }
            let request = Shape::of(&view.tasks[task as usize].task);
            if let Some(placement) = self.planner.take(view, &request, None) {
                actions.push(place(task, placement, None));
            }
        }
        for (slot, a) in active.iter().enumerate() {
            if let Some((option, placement)) = a.current {
                self.planner
                    .release(view, &shape(round, slot, option), placement);
            }
        }
        // SRTF: solo time at the frugal configuration, then arrival (tasks are distinct, so
        // the order is total and an unstable sort gives it).
        let mut order = std::mem::take(&mut self.scratch.order);
        order.clear();
        order.extend(active.iter().enumerate().map(|(slot, a)| {
            let (solo, task) = admission_key(a);
            (solo, task, slot)
        }));
        order.sort_unstable();
        self.trace
            .order
            .extend(order.iter().map(|&(_, _, slot)| slot));
        let mut plan = std::mem::take(&mut self.scratch.plan);
        plan.clear();
        plan.resize(active.len(), None);
        for &(_, _, slot) in &order {
            let frugal = round.job(slot).frugal_option;
            let near = active[slot].current.map(|(_, p)| p);
            if let Some(p) = self.planner.take(view, &shape(round, slot, frugal), near) {
                plan[slot] = Some((frugal, p));
            }
        }
        self.upgrade(round, allowance, &mut plan);
        for (slot, a) in active.iter().enumerate() {
            match (a.current, plan[slot]) {
                (None, Some((option, placement))) => {
                    actions.push(place(a.task, placement, Some(option)))
                }
                (Some(_), None) => actions.push(Action::Undo { task: a.task }),
                (Some(now), Some(planned)) if now != planned => actions.push(Action::Reconfigure {
                    task: a.task,
                    placement: planned.1,
                    option: planned.0,
                }),
                _ => {}
            }
        }
        self.scratch.order = order;
        self.scratch.plan = plan;
        actions
    }

    /// Greedy upgrades of the admitted jobs within the allowance.
    fn upgrade(
        &mut self,
        round: &Round<'_, '_>,
        allowance: Allowance,
        plan: &mut [Option<(usize, Placement)>],
    ) {
        let view = round.view;
        let active = &round.active;
        let mut heap = std::mem::take(&mut self.scratch.heap);
        heap.clear();
        let push = |heap: &mut BinaryHeap<Step>, trace: &mut Trace, slot: usize, from: usize| {
            let job = round.job(slot);
            for to in upgrades(job, from) {
                let ratio = ratio(job, active[slot].remaining_iterations, from, to);
                trace.candidates.push(Candidate {
                    slot,
                    from,
                    to,
                    ratio,
                });
                if let Some(ratio) = ratio {
                    heap.push(Step::new(ratio, slot, from, to));
                }
            }
        };
        for (slot, planned) in plan.iter().enumerate() {
            if let Some((from, _)) = planned {
                push(&mut heap, &mut self.trace, slot, *from);
            }
        }
        let frugal_watts: f64 = plan
            .iter()
            .enumerate()
            .filter_map(|(slot, o)| o.map(|(o, _)| round.job(slot).options[o].watts))
            .sum();
        self.trace.frugal_watts = frugal_watts;
        let cap_watts = allowance.markup * frugal_watts;
        let mut extra_watts = 0.0;
        while let Some(step) = heap.pop() {
            let step = step.unpack();
            let Some((from, placement)) = plan[step.slot].filter(|(o, _)| *o == step.from) else {
                continue;
            };
            let job = round.job(step.slot);
            let (a, b) = (&job.options[step.from], &job.options[step.to]);
            let added = b.watts - a.watts;
            let needed_watts = extra_watts + added;
            let over = over_allowance(needed_watts, cap_watts);
            self.trace.allowance_test(needed_watts, !over);
            if over {
                continue;
            }
            let placement = if a.config.gpus == b.config.gpus {
                placement
            } else {
                let old = shape(round, step.slot, from);
                let new = shape(round, step.slot, step.to);
                match self.planner.resize(view, &old, placement, &new) {
                    Some(p) => p,
                    None => continue,
                }
            };
            extra_watts += added;
            plan[step.slot] = Some((step.to, placement));
            push(&mut heap, &mut self.trace, step.slot, step.to);
        }
        self.scratch.heap = heap;
    }
}

/// An empty vector of active jobs that keeps the allocation of `active` (whose borrows of
/// one round's view end here).
fn recycle<'a>(mut active: Vec<ActiveJob<'_>>) -> Vec<ActiveJob<'a>> {
    active.clear();
    active
        .into_iter()
        .map(|_| unreachable!("cleared"))
        .collect()
}

/// The task of `slot` as it runs in `option`: its trace request with the option's GPUs.
fn shape<'a>(round: &Round<'_, 'a>, slot: usize, option: usize) -> Shape<'a> {
    let task = round.active[slot].task;
    Shape::of(&round.view.tasks[task as usize].task)
        .with_gpus(round.job(slot).options[option].config.gpus)
}

fn place(task: u32, placement: Placement, option: Option<usize>) -> Action {
    Action::Place {
        task,
        placement,
        capacity: CapacityMode::Reserved,
        observe_after_s: None,
        option,
    }
}
