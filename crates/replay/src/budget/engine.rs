//! The budgeted replay loop: rounds on every arrival and completion and every Δ; between
//! rounds each job runs its configuration at a constant speed and power, so progress,
//! energy and carbon (a step-function intensity) are integrated exactly, and the next
//! completion is re-predicted from the remaining iterations at every round.
//!
//! Budget rule: a replay whose budget is spent while jobs are unfinished stops with
//! [`BudgetError::Exhausted`]; so a finished replay never overshoots by more than what was
//! spent in its last interval between rounds (at most Δ long).

use serde::Serialize;

use gapbench_model::{CarbonSeries, Cluster};

use super::{budget_jobs, ActiveJob, Allocator, BuddyPool, BudgetJob, BudgetOptions, Round};
use crate::energy::JOULES_PER_KWH;
use crate::timed_workload::TimedWorkload;

/// Why a budgeted replay could not finish.
#[derive(Debug, Clone, PartialEq)]
pub enum BudgetError {
    /// The options are inconsistent (e.g. a carbon budget without a series).
    Settings(String),
    /// Even with every job at its most frugal configuration the budget is too small.
    TooSmall {
        budget: f64,
        least: f64,
        unit: &'static str,
    },
    /// The budget ran out at `at_s` with jobs unfinished.
    Exhausted {
        at_s: f64,
        unfinished: usize,
        least_more: f64,
        unit: &'static str,
    },
    /// A job fits the cluster in none of its configurations.
    Unplaceable { task: String, gpus: u8 },
    /// The policy returned a plan that does not fit the GPUs, or stalled.
    Policy(String),
}

impl std::fmt::Display for BudgetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BudgetError::Settings(text) | BudgetError::Policy(text) => f.write_str(text),
            BudgetError::TooSmall {
                budget,
                least,
                unit,
            } => write!(
                f,
                "budget {budget:.3} {unit} is too small: the jobs need at least {least:.3} {unit} \
                 even with every job at its most frugal configuration"
            ),
            BudgetError::Exhausted {
                at_s,
                unfinished,
                least_more,
                unit,
            } => write!(
                f,
                "budget exhausted at {at_s:.0} s with {unfinished} job(s) unfinished (they need at \
                 least {least_more:.3} {unit} more); give a larger budget"
            ),
            BudgetError::Unplaceable { task, gpus } => write!(
                f,
                "task {task} needs {gpus} GPU(s) in one node and the cluster has no such block"
            ),
        }
    }
}

impl std::error::Error for BudgetError {}

/// One job's fate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobOutcome {
    pub name: String,
    pub class: &'static str,
    pub trace_gpus: u8,
    pub gpu_milli: u16,
    pub arrival_s: f64,
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
    pub jct_s: Option<f64>,
    pub energy_kwh: f64,
    pub carbon_kg: f64,
    /// Rounds at which its configuration changed (resize, re-clock, preemption).
    pub reconfigurations: u32,
}

/// The cluster between two rounds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetTimelineRow {
    pub time_s: f64,
    pub job_watts: f64,
    pub g_per_kwh: f64,
    pub running: u32,
    pub waiting: u32,
    pub gpus_held: f64,
    pub spent: f64,
}

/// What a budgeted replay produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetResult {
    pub policy: String,
    pub jobs: Vec<JobOutcome>,
    /// What running jobs drew by the training model: the quantity the frontier bounds.
    pub job_energy_kwh: f64,
    /// Carbon of that energy (0 without a series).
    pub carbon_kg: f64,
    pub mean_jct_s: f64,
    pub makespan_s: f64,
    /// The budget in its unit (kWh or kg), if any.
    pub budget: Option<f64>,
    /// The most spent between two rounds, in the budget's unit (kWh or kg; kWh if none).
    pub max_interval_spend: f64,
    pub rounds: u64,
    #[serde(skip)]
    pub timeline: Vec<BudgetTimelineRow>,
}

/// The engine's view of one job.
#[derive(Debug, Clone, Copy)]
struct JobRun {
    remaining: f64,
    current: Option<usize>,
    start_s: Option<f64>,
    end_s: Option<f64>,
    energy_j: f64,
    carbon_g: f64,
    reconfigurations: u32,
}

/// Replays the GPU jobs of `workload` on `cluster`'s GPUs with `allocator`.
pub fn run_budgeted(
    cluster: &Cluster,
    workload: &TimedWorkload,
    allocator: &mut dyn Allocator,
    options: &BudgetOptions,
) -> Result<BudgetResult, BudgetError> {
    let jobs = budget_jobs(cluster, workload, options.seed, options.fidelity);
    run_jobs(
        &jobs,
        workload,
        BuddyPool::of_cluster(cluster),
        allocator,
        options,
    )
}

/// Least spend (budget unit) to finish `jobs` from `remaining`, at their frugal
/// configurations, with the series' lowest intensity for carbon.
fn least_spend(
    jobs: &[BudgetJob],
    remaining: impl Iterator<Item = (usize, f64)>,
    carbon_g_per_j: Option<f64>,
) -> f64 {
    let joules: f64 = remaining.map(|(j, r)| jobs[j].least_joules(r)).sum();
    joules * carbon_g_per_j.unwrap_or(1.0)
}

/// [`run_budgeted`] on jobs already built (tests and the frontier use the same jobs).
pub fn run_jobs(
    jobs: &[BudgetJob],
    workload: &TimedWorkload,
    pool: BuddyPool,
    allocator: &mut dyn Allocator,
    options: &BudgetOptions,
) -> Result<BudgetResult, BudgetError> {
    use super::Budget;
    if !(options.round_s.is_finite() && options.round_s > 0.0) {
        return Err(BudgetError::Settings(
            "the round period must be positive".into(),
        ));
    }
    let carbon: Option<&CarbonSeries> = options.carbon.as_ref();
    let is_carbon = matches!(options.budget, Budget::CarbonKg(_));
    if is_carbon && carbon.is_none() {
        return Err(BudgetError::Settings(
            "a carbon budget needs a carbon-intensity series (--carbon)".into(),
        ));
    }
    let (unit, to_unit) = if is_carbon {
        ("kg", 1e-3)
    } else {
        ("kWh", 1.0 / JOULES_PER_KWH)
    };
    let limit = options.budget.limit();
    for job in jobs {
        let fits = job.options.iter().any(|o| pool.clone().take(o.gpu_milli));
        if !fits {
            return Err(BudgetError::Unplaceable {
                task: workload.tasks[job.task as usize].task.name.clone(),
                gpus: job.training.trace_gpus,
            });
        }
    }
    let min_g_per_j =
        carbon.map(|s| s.g_per_kwh.iter().copied().fold(f64::INFINITY, f64::min) / JOULES_PER_KWH);
    if let Some(limit) = limit {
        let per_j = if is_carbon { min_g_per_j } else { None };
        let least = least_spend(
            jobs,
            jobs.iter()
                .enumerate()
                .map(|(j, b)| (j, b.training.iterations)),
            per_j,
        );
        if least > limit {
            return Err(BudgetError::TooSmall {
                budget: limit * to_unit,
                least: least * to_unit,
                unit,
            });
        }
    }
    let mut runs: Vec<JobRun> = jobs
        .iter()
        .map(|j| JobRun {
            remaining: j.training.iterations,
            current: None,
            start_s: None,
            end_s: None,
            energy_j: 0.0,
            carbon_g: 0.0,
            reconfigurations: 0,
        })
        .collect();
    let first = jobs.first().map_or(0.0, |j| j.arrival_s);
    let mut now = first;
    let mut next_arrival = 0usize;
    let mut active: Vec<u32> = Vec::new();
    let mut energy_j = 0.0;
    let mut carbon_g = 0.0;
    let mut least_arrived_j = 0.0;
    let mut max_interval = 0.0f64;
    let mut rounds = 0u64;
    let mut timeline = Vec::new();
    let round_s = options.round_s;
    loop {
        while next_arrival < jobs.len() && jobs[next_arrival].arrival_s <= now {
            active.push(next_arrival as u32);
            least_arrived_j +=
                jobs[next_arrival].least_joules(jobs[next_arrival].training.iterations);
            next_arrival += 1;
        }
        if active.is_empty() {
            match jobs.get(next_arrival) {
                Some(job) => {
                    now = job.arrival_s;
                    continue;
                }
                None => break,
            }
        }
        let spent = if is_carbon { carbon_g } else { energy_j };
        let view: Vec<ActiveJob> = active
            .iter()
            .map(|&j| ActiveJob {
                job: j,
                remaining_iterations: runs[j as usize].remaining,
                current: runs[j as usize].current,
                started_s: runs[j as usize].start_s,
            })
            .collect();
        let least_remaining_j = active
            .iter()
            .map(|&j| jobs[j as usize].least_joules(runs[j as usize].remaining))
            .sum();
        let plan = allocator.allocate(&Round {
            now_s: now,
            jobs,
            active: &view,
            pool: &pool,
            budget: &options.budget,
            spent,
            carbon,
            round_s,
            horizon_end_s: options.horizon_end_s,
            least_remaining_j,
            least_arrived_j,
            first_arrival_s: first,
        });
        rounds += 1;
        if plan.options.len() != active.len() {
            return Err(BudgetError::Policy(format!(
                "{} planned {} jobs of {}",
                allocator.name(),
                plan.options.len(),
                active.len()
            )));
        }
        let planned_milli: u64 = plan
            .options
            .iter()
            .zip(&active)
            .filter_map(|(o, &j)| o.map(|o| u64::from(jobs[j as usize].options[o].gpu_milli)))
            .sum();
        if pool.free_milli() < plan.pool.free_milli()
            || pool.free_milli() - plan.pool.free_milli() != planned_milli
        {
            return Err(BudgetError::Policy(format!(
                "{} planned GPUs it did not take from the pool at {now} s",
                allocator.name()
            )));
        }
        let mut watts = 0.0;
        let mut gpus_held = 0.0;
        let mut next_end = f64::INFINITY;
        let mut running = 0u32;
        for (&option, &j) in plan.options.iter().zip(&active) {
            let run = &mut runs[j as usize];
            if option != run.current && run.current.is_some() {
                run.reconfigurations += 1;
            }
            run.current = option;
            if let Some(o) = option {
                let o = jobs[j as usize].options[o];
                run.start_s.get_or_insert(now);
                watts += o.watts;
                gpus_held += f64::from(o.gpu_milli) / 1000.0;
                next_end = next_end.min(now + run.remaining / o.iterations_per_s);
                running += 1;
            }
        }
        let next_tick = first + ((now - first) / round_s).floor() * round_s + round_s;
        let next_tick = if next_tick <= now {
            next_tick + round_s
        } else {
            next_tick
        };
        let arrival = jobs
            .get(next_arrival)
            .map_or(f64::INFINITY, |j| j.arrival_s);
        let until = next_end.min(next_tick).min(arrival);
        if running == 0 && arrival.is_infinite() && now > options.horizon_end_s + 1e4 * round_s {
            return Err(BudgetError::Policy(format!(
                "{} runs no job at {now} s with {} waiting and none to come",
                allocator.name(),
                active.len()
            )));
        }
        timeline.push(BudgetTimelineRow {
            time_s: now,
            job_watts: watts,
            g_per_kwh: carbon.map_or(0.0, |s| s.at(now)),
            running,
            waiting: active.len() as u32 - running,
            gpus_held,
            spent: spent * to_unit,
        });
        let dt = until - now;
        let g_per_watt = carbon.map_or(0.0, |s| s.grams(1.0, now, until));
        energy_j += watts * dt;
        carbon_g += watts * g_per_watt;
        max_interval = max_interval.max(if is_carbon {
            watts * g_per_watt
        } else {
            watts * dt
        });
        for &j in &active {
            let run = &mut runs[j as usize];
            if let Some(o) = run.current {
                let o = jobs[j as usize].options[o];
                run.energy_j += o.watts * dt;
                run.carbon_g += o.watts * g_per_watt;
                let predicted_end = now + run.remaining / o.iterations_per_s;
                if predicted_end <= until {
                    run.remaining = 0.0;
                    run.end_s = Some(until);
                } else {
                    run.remaining -= o.iterations_per_s * dt;
                }
            }
        }
        now = until;
        active.retain(|&j| runs[j as usize].end_s.is_none());
        if let Some(limit) = limit {
            let spent = if is_carbon { carbon_g } else { energy_j };
            if spent > limit && !(active.is_empty() && next_arrival == jobs.len()) {
                let unfinished = active.len() + jobs.len() - next_arrival;
                let per_j = if is_carbon { min_g_per_j } else { None };
                let more = least_spend(
                    jobs,
                    active
                        .iter()
                        .map(|&j| (j as usize, runs[j as usize].remaining))
                        .chain(
                            (next_arrival..jobs.len()).map(|j| (j, jobs[j].training.iterations)),
                        ),
                    per_j,
                );
                return Err(BudgetError::Exhausted {
                    at_s: now,
                    unfinished,
                    least_more: more * to_unit,
                    unit,
                });
            }
        }
    }
    let outcomes: Vec<JobOutcome> = jobs
        .iter()
        .zip(&runs)
        .map(|(job, run)| JobOutcome {
            name: workload.tasks[job.task as usize].task.name.clone(),
            class: job.training.class.label(),
            trace_gpus: job.training.trace_gpus,
            gpu_milli: job.gpu_milli,
            arrival_s: job.arrival_s,
            start_s: run.start_s,
            end_s: run.end_s,
            jct_s: run.end_s.map(|e| e - job.arrival_s),
            energy_kwh: run.energy_j / JOULES_PER_KWH,
            carbon_kg: run.carbon_g / 1000.0,
            reconfigurations: run.reconfigurations,
        })
        .collect();
    let finished: Vec<f64> = outcomes.iter().filter_map(|o| o.jct_s).collect();
    let mean_jct_s = finished.iter().sum::<f64>() / finished.len().max(1) as f64;
    Ok(BudgetResult {
        policy: allocator.name(),
        jobs: outcomes,
        job_energy_kwh: energy_j / JOULES_PER_KWH,
        carbon_kg: carbon_g / 1000.0,
        mean_jct_s,
        makespan_s: now - first,
        budget: limit.map(|l| l * to_unit),
        max_interval_spend: max_interval * to_unit,
        rounds,
        timeline,
    })
}
