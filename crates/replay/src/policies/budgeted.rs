//! What PowerFlow-style and GreenFlow-style allocation share (time-and-budgets §3.4, every
//! choice [D]): a round's view of the active training jobs and the budget, and the round's
//! plan on real nodes — admission, then greedy upgrades within an allowance — turned into
//! the engine's actions.
//!
//! Every grid round (every Δ from the first arrival) re-plans every active training job
//! (waiting or running) from its frugal configuration:
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
//! An event round (right after arrivals and completions, between grid rounds) moves no
//! running task [D]: it starts what waits on the resources free now, by the same rules —
//! other tasks in queue order, then jobs in SRTF order at their frugal configuration — and
//! gives the jobs it starts greedy upgrades within what the last grid round's allowance
//! leaves over the running jobs' extra power (before the first grid round: none). It walks
//! the waiting tasks in order from a [`waiting`] index kept between rounds and stops once
//! every waiting shape was refused, so it costs about what it starts, not the queue's
//! length: re-planning everything at every event made an overloaded replay of 5,000 tasks
//! take 85 s, growing as n^2.9.
//!
//! A grid round that provably repeats the last plan, which changed nothing, is not planned
//! again ([`memo`]): most grid rounds of a long replay are such.

mod memo;
mod round;
#[cfg(test)]
mod tests;
mod waiting;

use std::collections::BinaryHeap;

use gapbench_model::Placement;

use super::buddy::{Planner, Shape};
use crate::policy::{Action, CapacityMode, ReplayView, RoundKind};
use memo::{Candidate, RoundMemo, Trace};
use round::{admission_key, over_allowance, ratio, upgrades, Step};
pub use round::{ActiveJob, Allowance, Round};
use waiting::{admission_shape, WaitingIndex};

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
    /// The waiting tasks in event rounds' order.
    waiting: WaitingIndex,
    /// The last grid round's allowance, which the event rounds after it spend within.
    allowance: Option<Allowance>,
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
    /// An event round's started tasks: (walk key, task).
    taken: Vec<(u64, u32)>,
}

/// Power already committed when a round's upgrades begin: the frugal power and the extra
/// power of the running jobs an event round keeps as they are (none in a grid round).
#[derive(Debug, Clone, Copy, Default)]
struct CommittedWatts {
    frugal: f64,
    extra: f64,
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
            waiting: WaitingIndex::default(),
            allowance: None,
            scratch: Scratch::default(),
        }
    }

    /// Plans every round without a shortcut: no skipped repeat, every request searched anew
    /// instead of remembering the ones that found no place, the waiting tasks read from the
    /// whole queue at every round (the tests compare the two).
    pub fn without_shortcuts(&mut self) {
        self.skip_repeats = false;
        self.planner.forget_refusals = true;
        self.waiting.rebuild_every_round = true;
    }

    /// A round of a budgeted policy: a grid round plans every active job within the
    /// allowance that `allowance` sets from the round's view; an event round starts what
    /// waits within the last grid round's ([`admit`](Self::admit)).
    pub fn on_round(
        &mut self,
        view: &ReplayView<'_>,
        kind: RoundKind,
        allowance: impl FnOnce(&Round<'_, '_>) -> Allowance,
    ) -> Vec<Action> {
        match kind {
            RoundKind::Events => self.admit(view),
            RoundKind::Grid => {
                let round = self.round(view);
                let allowance = allowance(&round);
                self.plan(round, allowance)
            }
        }
    }

    /// A grid round's view of the active jobs and the budget.
    fn round<'v, 'a>(&mut self, view: &'v ReplayView<'a>) -> Round<'v, 'a> {
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
                .filter_map(|&task| ActiveJob::of(view, task)),
        );
        if !active.is_sorted_by_key(|a| a.task) {
            active.sort_unstable_by_key(|a| a.task);
        }
        let least_remaining_j = active
            .iter()
            .map(|a| a.job.least_joules(a.remaining_iterations))
            .sum();
        // Its undos and moves change the queue behind the waiting index's back.
        self.waiting.mark_stale();
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

    /// A grid round's admission then greedy upgrades within `allowance`, as the engine's
    /// actions. The event rounds until the next grid round spend within the same allowance.
    fn plan(&mut self, round: Round<'_, '_>, allowance: Allowance) -> Vec<Action> {
        self.allowance = Some(allowance);
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
                    .release(view, &shape(view, &active[slot], option), placement);
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
            if let Some(p) = self
                .planner
                .take(view, &shape(view, &active[slot], frugal), near)
            {
                plan[slot] = Some((frugal, p));
            }
        }
        self.upgrade(
            view,
            active,
            allowance,
            CommittedWatts::default(),
            &mut plan,
        );
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

    /// An event round: the waiting tasks that fit the resources free now start, and the
    /// jobs among them get greedy upgrades within the last grid round's allowance (none
    /// before the first); no running task moves.
    fn admit(&mut self, view: &ReplayView<'_>) -> Vec<Action> {
        let allowance = self.allowance.unwrap_or(Allowance { markup: 0.0 });
        self.waiting.sync(view);
        let mut started = recycle(std::mem::take(&mut self.scratch.active));
        self.trace.clear();
        self.memo_valid = false;
        self.planner.begin(view);
        let mut actions = Vec::new();
        let mut taken = std::mem::take(&mut self.scratch.taken);
        taken.clear();
        let (waiting, planner) = (&mut self.waiting, &mut self.planner);
        let shape_key = |task: u32| admission_shape(view, task).key();
        waiting.others.walk(
            shape_key,
            |task| match planner.take(view, &admission_shape(view, task), None) {
                Some(placement) => {
                    actions.push(place(task, placement, None));
                    true
                }
                None => false,
            },
            &mut taken,
        );
        let mut plan = std::mem::take(&mut self.scratch.plan);
        plan.clear();
        waiting.jobs.walk(
            shape_key,
            |task| match planner.take(view, &admission_shape(view, task), None) {
                Some(placement) => {
                    let job = ActiveJob::of(view, task).expect("a training job");
                    plan.push(Some((job.job.frugal_option, placement)));
                    started.push(job);
                    true
                }
                None => false,
            },
            &mut taken,
        );
        for &(key, task) in &taken {
            waiting.remove(view, key, task);
        }
        if !started.is_empty() {
            let committed = running_watts(view);
            self.upgrade(view, &started, allowance, committed, &mut plan);
        }
        for (a, planned) in started.iter().zip(&plan) {
            let (option, placement) = planned.expect("every started job is planned");
            actions.push(place(a.task, placement, Some(option)));
        }
        self.scratch.taken = taken;
        self.scratch.plan = plan;
        self.scratch.active = recycle(started);
        actions
    }

    /// Greedy upgrades of the admitted jobs within the allowance, over the power
    /// `committed` before them.
    fn upgrade(
        &mut self,
        view: &ReplayView<'_>,
        active: &[ActiveJob<'_>],
        allowance: Allowance,
        committed: CommittedWatts,
        plan: &mut [Option<(usize, Placement)>],
    ) {
        let mut heap = std::mem::take(&mut self.scratch.heap);
        heap.clear();
        let push = |heap: &mut BinaryHeap<Step>, trace: &mut Trace, slot: usize, from: usize| {
            let job = active[slot].job;
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
        let frugal_watts: f64 = committed.frugal
            + plan
                .iter()
                .enumerate()
                .filter_map(|(slot, o)| o.map(|(o, _)| active[slot].job.options[o].watts))
                .sum::<f64>();
        self.trace.frugal_watts = frugal_watts;
        let cap_watts = allowance.markup * frugal_watts;
        let mut extra_watts = committed.extra;
        while let Some(step) = heap.pop() {
            let step = step.unpack();
            let Some((from, placement)) = plan[step.slot].filter(|(o, _)| *o == step.from) else {
                continue;
            };
            let job = active[step.slot].job;
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
                let old = shape(view, &active[step.slot], from);
                let new = shape(view, &active[step.slot], step.to);
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

/// The running jobs' power at their frugal configurations, and what their configurations
/// draw beyond it.
fn running_watts(view: &ReplayView<'_>) -> CommittedWatts {
    view.running
        .iter()
        .filter_map(|&task| {
            let job = view.jobs.of(task)?;
            let option = view.progress[task as usize].option?;
            Some((
                job.options[job.frugal_option].watts,
                job.options[option].watts,
            ))
        })
        .fold(CommittedWatts::default(), |sum, (frugal, now)| {
            CommittedWatts {
                frugal: sum.frugal + frugal,
                extra: sum.extra + (now - frugal),
            }
        })
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

/// `a`'s task as it runs in `option`: its trace request with the option's GPUs.
fn shape<'a>(view: &ReplayView<'a>, a: &ActiveJob<'_>, option: usize) -> Shape<'a> {
    Shape::of(&view.tasks[a.task as usize].task).with_gpus(a.job.options[option].config.gpus)
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
