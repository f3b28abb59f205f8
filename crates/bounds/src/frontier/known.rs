//! A schedule someone ran (a policy's replay), as the frontier problem sees it: per job, the
//! GPU-seconds it held in each slot, the budget its configurations used at the slots'
//! rates, and its JCT as the problem counts it (every slot from arrival to the finishing
//! one whole, the finishing slot by the time run in it; after the horizon, by the time run
//! there).
//!
//! A replay that finishes every job is a feasible point of the problem (module doc of
//! [`super`]): each job's runs do its work (the problem's speeds are the solo ones, so a
//! co-located run does at least its recorded work), its GPU-seconds fit each slot, and the
//! problem charges at most the budget the replay was charged and counts at most its JCT.
//! Its columns give the integer master ([`super::incumbent`]) a schedule to start from and
//! improve on: the incumbent is then never worse than the policy.

use super::master::ScheduleColumn;
use super::rates::BudgetRates;
use super::FrontierInstance;
use crate::error::BoundError;

/// One stretch of a job in one configuration, seconds on the instance's clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Run {
    pub from_s: f64,
    pub to_s: f64,
    /// Index into the job's configurations.
    pub config: usize,
}

/// Every job's schedule, one column each.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownSchedule {
    pub(crate) columns: Vec<ScheduleColumn>,
}

impl KnownSchedule {
    /// The schedule of `runs[j]`, job `j`'s stretches in time order, for every job of
    /// `instance`. Errors, naming the job, when a job never runs, runs before it arrives or
    /// in a configuration it does not have.
    pub fn of_runs(
        instance: &FrontierInstance,
        runs: &[Vec<Run>],
    ) -> Result<KnownSchedule, BoundError> {
        if runs.len() != instance.jobs.len() {
            return Err(BoundError::Input(format!(
                "a schedule of {} jobs for an instance of {}",
                runs.len(),
                instance.jobs.len()
            )));
        }
        let rates = BudgetRates::of(instance);
        let columns = runs
            .iter()
            .enumerate()
            .map(|(j, job_runs)| column_of_runs(instance, &rates, j, job_runs))
            .collect::<Result<_, _>>()?;
        Ok(KnownSchedule { columns })
    }

    /// Σ JCT as the problem counts it, seconds.
    pub fn total_jct_s(&self) -> f64 {
        self.columns.iter().map(|c| c.jct_s).sum()
    }

    /// The budget the problem charges it.
    pub fn budget_used(&self) -> f64 {
        self.columns.iter().map(|c| c.budget_used).sum()
    }
}

/// Job `j`'s runs as one column.
pub(super) fn column_of_runs(
    instance: &FrontierInstance,
    rates: &BudgetRates,
    j: usize,
    runs: &[Run],
) -> Result<ScheduleColumn, BoundError> {
    let job = &instance.jobs[j];
    let last = runs
        .last()
        .ok_or_else(|| BoundError::Input(format!("job {j} never runs")))?;
    let horizon = instance.slots.count();
    // The slot the job finishes in: the one holding the last instant it runs.
    let finish = instance
        .slots
        .slot_of(last.to_s - 1e-9 * last.to_s.abs().max(1.0));
    let mut column = ScheduleColumn {
        job: j,
        jct_s: (instance.arrival_slot(job)..finish.min(horizon))
            .map(|t| instance.available_s(job, t))
            .sum(),
        budget_used: 0.0,
        gpu_seconds: Vec::new(),
    };
    for run in runs {
        let config = job.configs.get(run.config).ok_or_else(|| {
            BoundError::Input(format!("job {j} runs in configuration {}", run.config))
        })?;
        if run.from_s < job.arrival_s - 1e-6 || run.to_s < run.from_s {
            return Err(BoundError::Input(format!(
                "job {j} runs [{}, {}] s but arrives at {} s",
                run.from_s, run.to_s, job.arrival_s
            )));
        }
        let mut from = run.from_s;
        while from < run.to_s {
            let t = instance.slots.slot_of(from);
            let to = if t < horizon {
                run.to_s.min(instance.slots.end_s(t))
            } else {
                run.to_s
            };
            let seconds = to - from;
            column.budget_used += seconds * config.watts * rates.at(t);
            if t == finish {
                column.jct_s += seconds;
            }
            if t < horizon {
                match column.gpu_seconds.last_mut() {
                    Some((slot, total)) if *slot == t => *total += seconds * f64::from(config.gpus),
                    _ => column
                        .gpu_seconds
                        .push((t, seconds * f64::from(config.gpus))),
                }
            }
            if to <= from {
                break; // rounding at a slot's end
            }
            from = to;
        }
    }
    Ok(column)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontier::{BudgetKind, FrontierJob, JobConfig, Slots};

    /// One job arriving at 50 s on three 100-s slots, 2 GPUs at 10 W.
    fn instance() -> FrontierInstance {
        FrontierInstance {
            jobs: vec![FrontierJob {
                arrival_s: 50.0,
                iterations: 1.0,
                configs: vec![JobConfig {
                    gpus: 2,
                    iterations_per_s: 1.0,
                    watts: 10.0,
                }],
            }],
            gpus: 8,
            slots: Slots::uniform(100.0, 3),
            budget: BudgetKind::Energy,
        }
    }

    /// Runs [60, 120] and [150, 170] finish in slot 1: JCT = 50 s of slot 0 (from the
    /// arrival) + the 40 s run in slot 1 = 90 s (the replay's own JCT is 120 s); 40 s in
    /// each slot at 2 GPUs; 80 s at 10 W.
    #[test]
    fn a_replays_runs_count_as_the_problem_counts_a_schedule() {
        let runs = vec![
            Run {
                from_s: 60.0,
                to_s: 120.0,
                config: 0,
            },
            Run {
                from_s: 150.0,
                to_s: 170.0,
                config: 0,
            },
        ];
        let schedule = KnownSchedule::of_runs(&instance(), &[runs]).unwrap();
        let column = &schedule.columns[0];
        assert!((column.jct_s - 90.0).abs() < 1e-9, "{column:?}");
        assert_eq!(column.gpu_seconds, vec![(0, 80.0), (1, 80.0)]);
        assert!((schedule.budget_used() - 800.0 / 3.6e6).abs() < 1e-15);
    }

    /// A run past the 300-s horizon: every slot from the arrival counts whole (250 s) and
    /// the 50 s run after the horizon — the replay's JCT of 300 s; no slot holds that part.
    #[test]
    fn a_run_past_the_horizon_counts_its_time_there() {
        let runs = vec![Run {
            from_s: 250.0,
            to_s: 350.0,
            config: 0,
        }];
        let schedule = KnownSchedule::of_runs(&instance(), &[runs]).unwrap();
        let column = &schedule.columns[0];
        assert!((column.jct_s - 300.0).abs() < 1e-9, "{column:?}");
        assert_eq!(column.gpu_seconds, vec![(2, 100.0)]);
    }

    #[test]
    fn a_job_that_never_runs_or_runs_before_it_arrives_is_refused() {
        let early = vec![Run {
            from_s: 0.0,
            to_s: 10.0,
            config: 0,
        }];
        for runs in [Vec::new(), early] {
            let error = KnownSchedule::of_runs(&instance(), &[runs]).unwrap_err();
            assert!(format!("{error}").contains("job 0"), "{error}");
        }
        let other = vec![Run {
            from_s: 60.0,
            to_s: 70.0,
            config: 3,
        }];
        assert!(KnownSchedule::of_runs(&instance(), &[other]).is_err());
    }
}
