//! Budget-free baselines of the budgeted replay: FIFO at the trace's GPU count, either at
//! full clock or at a Zeus-like clock (time-and-budgets §3.5). Non-preemptive, strict FIFO:
//! running jobs keep their configuration; the oldest waiting job blocks those behind it.
//!
//! Zeus-like [D]: per job, the clock minimising `η·E_it + (1 − η)·P_max·T_it` (per
//! iteration; `P_max` = the job's GPUs at full power plus host share), Zeus's cost without
//! its batch-size knob and online exploration; η = 0.5 by default [D].

use gapbench_model::training::HOST_WATTS_PER_GPU;

use crate::budget::{Allocator, BudgetJob, Plan, Round};

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
}

impl ClockFifo {
    /// The option `rule` picks for `job` at its trace GPU count.
    pub fn option(&self, job: &BudgetJob) -> usize {
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

impl Allocator for ClockFifo {
    fn name(&self) -> String {
        match self.rule {
            ClockRule::Full => "fifo-full-clock".into(),
            ClockRule::Zeus { .. } => "zeus".into(),
        }
    }

    fn allocate(&mut self, round: &Round<'_>) -> Plan {
        let mut pool = round.pool.clone();
        let mut plan: Vec<Option<usize>> = vec![None; round.active.len()];
        // Running jobs first, largest first (buddy packing of powers of two in decreasing
        // size is tight); a GPU-sharing job that no longer packs goes back to waiting.
        let mut running: Vec<usize> = (0..round.active.len())
            .filter(|&s| round.active[s].current.is_some())
            .collect();
        let milli = |s: usize| {
            let job = &round.jobs[round.active[s].job as usize];
            job.options[round.active[s].current.expect("running")].gpu_milli
        };
        running.sort_by(|&a, &b| milli(b).cmp(&milli(a)).then(a.cmp(&b)));
        for s in running {
            if pool.take(milli(s)) {
                plan[s] = round.active[s].current;
            }
        }
        for (s, active) in round.active.iter().enumerate() {
            if active.current.is_some() {
                continue;
            }
            let job = &round.jobs[active.job as usize];
            let option = self.option(job);
            if !pool.take(job.options[option].gpu_milli) {
                break;
            }
            plan[s] = Some(option);
        }
        Plan {
            options: plan,
            pool,
        }
    }
}
