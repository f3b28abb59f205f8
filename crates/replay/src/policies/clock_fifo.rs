//! Budget-free baselines of the budgeted policies: FIFO at the trace's GPU count, at full
//! clock or at a Zeus-like clock (time-and-budgets §3.5), placed by the buddy rules
//! ([`super::buddy`]). Non-preemptive: a job keeps its GPUs and clock until it ends; the
//! engine's queue discipline orders the waiting ones (strict FIFO by default).
//!
//! Zeus-like [D]: per job, the clock minimising `η·E_it + (1 − η)·P_max·T_it` (per
//! iteration; `P_max` = the job's GPUs at full power plus host share), Zeus's cost without
//! its batch-size knob and online exploration; η = 0.5 by default [D].

use gapbench_model::rng::SimRng;
use gapbench_model::training::HOST_WATTS_PER_GPU;

use super::buddy::{Planner, Shape};
use crate::jobs::TrainingTask;
use crate::policy::{Action, CapacityMode, ReplayView, TimePolicy};

/// How a FIFO baseline picks the clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClockRule {
    Full,
    Zeus { eta: f64 },
}

/// η of the Zeus-like baseline when none is given [D].
pub const DEFAULT_ZEUS_ETA: f64 = 0.5;

#[derive(Debug, Clone)]
pub struct ClockFifo {
    pub rule: ClockRule,
    planner: Planner,
}

impl ClockFifo {
    pub fn new(rule: ClockRule) -> ClockFifo {
        ClockFifo {
            rule,
            planner: Planner::default(),
        }
    }

    /// The option `rule` picks for `job` at its trace GPU count.
    pub fn option(&self, job: &TrainingTask) -> usize {
        match self.rule {
            ClockRule::Full => job.trace_option,
            ClockRule::Zeus { eta } => {
                let gpus = job.options[job.trace_option].config.gpus;
                let share =
                    f64::from(job.options[job.trace_option].gpu_milli) / (1000.0 * f64::from(gpus));
                let max_watts =
                    share * f64::from(gpus) * (job.training.dvfs.max_watts + HOST_WATTS_PER_GPU);
                let cost = |k: usize| {
                    let o = &job.options[k];
                    eta * o.joules_per_iteration() + (1.0 - eta) * max_watts / o.iterations_per_s
                };
                (0..job.options.len())
                    .filter(|&k| job.options[k].config.gpus == gpus)
                    .min_by(|&a, &b| cost(a).total_cmp(&cost(b)).then(a.cmp(&b)))
                    .expect("the trace GPU count has options")
            }
        }
    }
}

impl TimePolicy for ClockFifo {
    fn name(&self) -> String {
        match self.rule {
            ClockRule::Full => "fifo-full-clock".into(),
            ClockRule::Zeus { .. } => "zeus".into(),
        }
    }

    fn schedule(&mut self, view: &ReplayView<'_>, task: u32, _rng: &mut SimRng) -> Action {
        let option = view.jobs.of(task).map(|job| self.option(job));
        self.planner.begin(view);
        let timed = &view.tasks[task as usize].task;
        let shape = match view.jobs.of(task).zip(option) {
            Some((job, o)) => Shape::of(timed).with_gpus(job.options[o].config.gpus),
            None => Shape::of(timed),
        };
        match self.planner.take(view, &shape, None) {
            Some(placement) => Action::Place {
                task,
                placement,
                capacity: CapacityMode::Reserved,
                observe_after_s: None,
                option,
            },
            None => Action::Queue { task },
        }
    }
}
