//! Why a budgeted round may be skipped: a round whose plan changed nothing, and the proof,
//! checked at each later round, that planning again would change nothing either.
//!
//! A round's plan is a function of the cluster state, the queue, the active jobs with their
//! current configurations and placements, and, through the remaining work and the budget,
//! of three things only: the SRTF admission order, the order in which the greedy pops its
//! candidate steps (each step's ratio, ties by slot and target), and the outcome of each
//! allowance test `extra + added > cap`. Everything else — which GPUs the buddy rules find,
//! which popped steps are stale — follows from those along the way. So when the last plan
//! left everything as it was (no action) and since then nothing arrived, started, stopped or
//! moved, a new plan repeats it exactly if, at the new remaining work and cap,
//! - the recorded admission order is still strictly sorted by the same keys,
//! - every recorded candidate step still has a ratio (or still has none) and all of them
//!   still sort in the recorded order (a strict total order: adjacent pairs suffice),
//! - every allowance test still goes the same way (the largest passed value still passes,
//!   the smallest failed one still fails).
//!
//! Then the round's actions are the last plan's: none. Checking costs a pass over the
//! active jobs and the recorded steps; planning again costs the buddy search and the greedy.
//! The budgeted policies' tests replay with and without skipping and compare every output.

use gapbench_model::Placement;

use super::round::{admission_key, over_allowance, ratio, Allowance, Round, Step};

/// A candidate step the greedy computed: job slot, from and to options, and its ratio
/// (`None`: it would not shorten the job, so it was never pushed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Candidate {
    pub slot: usize,
    pub from: usize,
    pub to: usize,
    pub ratio: Option<f64>,
}

impl Candidate {
    fn step(&self, ratio: f64) -> Step {
        Step::new(ratio, self.slot, self.from, self.to)
    }
}

/// What one plan decided by, as it planned.
#[derive(Debug, Clone, Default)]
pub(super) struct Trace {
    /// Admission order (slots).
    pub order: Vec<usize>,
    /// Every candidate step, in the order the greedy computed them.
    pub candidates: Vec<Candidate>,
    /// Admitted jobs' frugal power, watts (the cap is `markup ×` it).
    pub frugal_watts: f64,
    /// The largest `extra + added` that passed the allowance test, and the smallest that
    /// failed it.
    pub largest_passed_watts: Option<f64>,
    pub smallest_failed_watts: Option<f64>,
}

impl Trace {
    pub fn clear(&mut self) {
        self.order.clear();
        self.candidates.clear();
        self.frugal_watts = 0.0;
        self.largest_passed_watts = None;
        self.smallest_failed_watts = None;
    }

    /// Records an allowance test of `needed_watts` and its outcome.
    pub fn allowance_test(&mut self, needed_watts: f64, passed: bool) {
        let (slot, keep_larger) = if passed {
            (&mut self.largest_passed_watts, true)
        } else {
            (&mut self.smallest_failed_watts, false)
        };
        *slot = Some(match *slot {
            Some(old) if (old >= needed_watts) == keep_larger => old,
            _ => needed_watts,
        });
    }
}

/// A plan that changed nothing, and what it saw.
#[derive(Debug, Clone, Default)]
pub(super) struct RoundMemo {
    /// The queue and the running tasks with their placements and configurations.
    queue: Vec<u32>,
    running: Vec<(u32, Option<Placement>, Option<usize>)>,
    trace: Trace,
    /// The candidates with a ratio as the greedy ranks them, best first, with their index
    /// (sorted when first needed: a memo that an event makes stale is never sorted).
    ranked: Vec<(Step, usize)>,
    ranked_ready: bool,
    /// Whether two recorded steps tie, so that their order could not be proven.
    tied: bool,
    /// Scratch: each candidate's step now.
    steps_now: Vec<Option<Step>>,
}

impl RoundMemo {
    /// Remembers `round`, whose plan gave no action, and takes over its trace (leaving
    /// an empty one in its place).
    pub fn remember(&mut self, round: &Round<'_, '_>, trace: &mut Trace) {
        let view = round.view;
        self.queue.clear();
        self.queue.extend(view.queue.iter().copied());
        self.running.clear();
        self.running.extend(view.running.iter().map(|&task| {
            let progress = &view.progress[task as usize];
            (task, progress.placement, progress.option)
        }));
        std::mem::swap(&mut self.trace, trace);
        trace.clear();
        self.ranked_ready = false;
    }

    /// Whether planning `round` with `allowance` again would give exactly the remembered
    /// plan (so no action).
    pub fn repeats(&mut self, round: &Round<'_, '_>, allowance: Allowance) -> bool {
        self.nothing_moved(round)
            && self.same_admission_order(round)
            && self.same_step_order(round)
            && self.same_allowance_tests(allowance)
    }

    /// Ranks the recorded steps as the greedy did.
    fn rank(&mut self) {
        if self.ranked_ready {
            return;
        }
        self.ranked.clear();
        self.ranked.extend(
            self.trace
                .candidates
                .iter()
                .enumerate()
                .filter_map(|(i, c)| c.ratio.map(|r| (c.step(r), i))),
        );
        self.ranked.sort_unstable_by(|a, b| b.cmp(a));
        self.tied = self.ranked.windows(2).any(|pair| pair[0].0 == pair[1].0);
        self.ranked_ready = true;
    }

    /// Same queue, same running tasks on the same devices in the same configurations: the
    /// same cluster state and the same active jobs in the same slots.
    fn nothing_moved(&self, round: &Round<'_, '_>) -> bool {
        let view = round.view;
        view.queue.iter().eq(self.queue.iter())
            && view.running.len() == self.running.len()
            && view
                .running
                .iter()
                .zip(&self.running)
                .all(|(&task, &(was, placement, option))| {
                    let progress = &view.progress[task as usize];
                    task == was && progress.placement == placement && progress.option == option
                })
    }

    fn same_admission_order(&self, round: &Round<'_, '_>) -> bool {
        let key = |slot: usize| admission_key(&round.active[slot]);
        self.trace
            .order
            .windows(2)
            .all(|pair| key(pair[0]) < key(pair[1]))
    }

    fn same_step_order(&mut self, round: &Round<'_, '_>) -> bool {
        self.rank();
        if self.tied {
            return false;
        }
        self.steps_now.clear();
        for c in &self.trace.candidates {
            let job = round.job(c.slot);
            let now = ratio(job, round.active[c.slot].remaining_iterations, c.from, c.to);
            if now.is_some() != c.ratio.is_some() {
                return false;
            }
            self.steps_now.push(now.map(|r| c.step(r)));
        }
        let now = &self.steps_now;
        self.ranked
            .windows(2)
            .all(|pair| now[pair[0].1] > now[pair[1].1])
    }

    /// Every allowance test goes as it went: the test is monotone in the needed watts, so
    /// the largest passed value and the smallest failed one decide for all of them.
    fn same_allowance_tests(&self, allowance: Allowance) -> bool {
        let cap_watts = allowance.markup * self.trace.frugal_watts;
        self.trace
            .largest_passed_watts
            .is_none_or(|needed| !over_allowance(needed, cap_watts))
            && self
                .trace
                .smallest_failed_watts
                .is_none_or(|needed| over_allowance(needed, cap_watts))
    }
}
