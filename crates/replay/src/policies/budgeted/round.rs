//! A budgeted round's vocabulary, shared by the round machinery and its memo: the jobs a
//! round sees, the allowance, the admission order and the upgrade steps with their ratios.

use gapbench_model::Placement;

use crate::jobs::TrainingTask;
use crate::policy::ReplayView;

/// How much extra power a round may add over its admitted jobs' frugal power.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Allowance {
    /// Extra watts per watt of admitted frugal power (∞ = unlimited).
    pub markup: f64,
}

/// One active (arrived, unfinished) training job at a round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ActiveJob<'a> {
    pub task: u32,
    pub job: &'a TrainingTask,
    pub remaining_iterations: f64,
    /// Its configuration and placement if it runs.
    pub current: Option<(usize, Placement)>,
}

impl<'a> ActiveJob<'a> {
    /// `task` as an active training job at `view`'s time (`None`: it is no training job).
    pub fn of(view: &ReplayView<'a>, task: u32) -> Option<ActiveJob<'a>> {
        let job = view.jobs.of(task)?;
        let progress = &view.progress[task as usize];
        Some(ActiveJob {
            task,
            job,
            remaining_iterations: job.iterations(progress.remaining_at(view.now_s)),
            current: progress.option.zip(progress.placement),
        })
    }
}

/// What a round sees.
pub struct Round<'v, 'a> {
    pub view: &'v ReplayView<'a>,
    /// Active training jobs, in arrival order.
    pub active: Vec<ActiveJob<'a>>,
    /// Spent so far, in the budget's unit (joules or grams).
    pub spent: f64,
    pub round_s: f64,
    pub horizon_end_s: f64,
    /// Least energy (J) the active jobs need to finish, at their frugal configurations.
    pub least_remaining_j: f64,
    /// Least energy (J) of every job arrived so far, at arrival.
    pub least_arrived_j: f64,
    /// When the first task arrived.
    pub first_arrival_s: f64,
}

impl<'a> Round<'_, 'a> {
    pub fn job(&self, slot: usize) -> &'a TrainingTask {
        self.active[slot].job
    }
}

/// A job's admission key: its solo time at the frugal configuration (as a total-order
/// key), then its task (arrival order).
pub(super) fn admission_key(a: &ActiveJob<'_>) -> (u64, u32) {
    let frugal = &a.job.options[a.job.frugal_option];
    let solo_s = a.remaining_iterations / frugal.iterations_per_s;
    (total_order_key(solo_s), a.task)
}

/// `f64::total_cmp`'s order as an unsigned integer's: negative values (sign bit set)
/// reversed below the positive ones.
pub(super) fn total_order_key(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// The allowance test: a step that would bring the round's extra power to `needed_watts`
/// is dropped when that exceeds the cap.
pub(super) fn over_allowance(needed_watts: f64, cap_watts: f64) -> bool {
    needed_watts > cap_watts
}

/// A candidate step, packed so that the heap compares one integer: the greatest step is
/// the one with the largest ratio (in `f64::total_cmp`'s order); ties: the earlier slot,
/// then the smaller target option. (The source option, in the lowest bits, never decides:
/// a job's steps in one round follow one path up, so no two steps share slot and target.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Step(u128);

/// A step unpacked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct StepFields {
    pub(super) slot: usize,
    pub(super) from: usize,
    pub(super) to: usize,
}

impl Step {
    pub(super) fn new(ratio: f64, slot: usize, from: usize, to: usize) -> Step {
        let slot = u32::try_from(slot).expect("fewer than 2^32 active jobs");
        let from = u16::try_from(from).expect("fewer than 2^16 options");
        let to = u16::try_from(to).expect("fewer than 2^16 options");
        Step(
            u128::from(total_order_key(ratio)) << 64
                | u128::from(u32::MAX - slot) << 32
                | u128::from(u16::MAX - to) << 16
                | u128::from(from),
        )
    }

    pub(super) fn unpack(self) -> StepFields {
        StepFields {
            slot: (u32::MAX - (self.0 >> 32) as u32) as usize,
            from: usize::from(self.0 as u16),
            to: usize::from(u16::MAX - (self.0 >> 16) as u16),
        }
    }
}

/// The single-step upgrades of `job` from option `from`: the next clock level at the same
/// GPU count, and twice the GPUs at the same clock.
pub(super) fn upgrades(job: &TrainingTask, from: usize) -> impl Iterator<Item = usize> + '_ {
    let steps = job.steps[from];
    steps.faster_clock.into_iter().chain(steps.more_gpus)
}

/// `(ΔJCT/JCT)/(ΔE/E)` of moving `remaining` iterations from `from` to `to`; `None` when it
/// does not shorten the job.
pub(super) fn ratio(job: &TrainingTask, remaining: f64, from: usize, to: usize) -> Option<f64> {
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
