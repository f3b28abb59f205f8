//! The exact JCT–energy (or JCT–carbon) lower envelope of a budgeted replay's jobs
//! (`gapbench_bounds::frontier`) and the budgeted policies' points against it, for the
//! `frontier` command (`gapbench`'s `cli/frontier.rs`) and the budget study.
//!
//! The frontier is built from the replay's own jobs ([`BudgetSetup`]): the same training
//! jobs (class per task name, iterations, every configuration with the capacity it holds and
//! the same power), the same cluster's GPUs as capacity (GPU units are milli-GPU, so
//! GPU-sharing tasks hold their share, as online); jobs that fit no node are left out, as
//! the replay fails them at arrival. Placement, CPU and memory, co-location slowdown and
//! the replay's rounds are relaxed, so every replay's point lies on or above it.

use anyhow::{bail, Result};
use gapbench_bounds::frontier::slots::busy_base_slots;
use gapbench_bounds::frontier::{BudgetKind, Frontier, FrontierInstance, FrontierJob, Run, Slots};
use gapbench_model::Cluster;
use gapbench_replay::jobs::{first_arrival_s, trace_end_s};
use gapbench_replay::policies::{time_policy_with, BudgetTarget, PolicySettings, TimePolicyKind};
use gapbench_replay::{Budget, JobTable, ReplayOptions, ReplayResult, TimedWorkload, TimelineRow};
use serde::Serialize;

use crate::budget::BudgetArgs;
use crate::replay::{training_jobs, ReplayInputs};

/// Each training job's runs in a replay, in job order ([`BudgetSetup::job_runs`]).
pub type JobRuns = Vec<Vec<Run>>;

/// What a frontier's budget limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrontierKind {
    /// Mean JCT against job energy (kWh).
    Energy,
    /// Mean JCT against carbon (kg), with --carbon.
    Carbon,
}

/// A budgeted replay's cluster, workload, jobs and settings, shared by its policies'
/// replays and its frontier.
pub struct BudgetSetup {
    pub cluster: Cluster,
    pub workload: TimedWorkload,
    /// The training jobs that fit the cluster (the ones the frontier bounds).
    pub jobs: JobTable,
    /// Seed, fidelity and carbon series of every replay (the budget is set per replay).
    pub options: ReplayOptions,
    pub settings: PolicySettings,
}

impl BudgetSetup {
    pub fn new(inputs: &ReplayInputs, args: &BudgetArgs, seed: u64) -> Result<BudgetSetup> {
        BudgetSetup::of(inputs.cluster.clone(), inputs.workload(seed)?, args, seed)
    }

    /// The setup of `workload` (already selected and scaled) on `cluster`.
    pub fn of(
        cluster: Cluster,
        workload: TimedWorkload,
        args: &BudgetArgs,
        seed: u64,
    ) -> Result<BudgetSetup> {
        let settings = args.policy_settings()?.for_seed(seed);
        let last_end_s = workload
            .tasks
            .iter()
            .map(|t| t.arrival_s + t.duration_s)
            .fold(0.0, f64::max);
        let horizon = settings.horizon_end_s.unwrap_or(0.0).max(last_end_s);
        let options = ReplayOptions {
            seed,
            fidelity: args.fidelity(),
            carbon: args.carbon_series(horizon, seed)?,
            ..ReplayOptions::default()
        };
        let jobs = training_jobs(&cluster, &workload, &options, seed);
        if jobs.jobs().is_empty() {
            bail!("the workload has no GPU job the cluster can run");
        }
        Ok(BudgetSetup {
            cluster,
            workload,
            jobs,
            options,
            settings,
        })
    }

    /// Replays `policy` with `budget`.
    pub fn run(&self, policy: &str, budget: Budget) -> Result<ReplayResult> {
        let options = ReplayOptions {
            budget,
            ..self.options.clone()
        };
        gapbench_replay::budget::check_budget(self.jobs.jobs(), &budget, options.carbon.as_ref())?;
        let mut policy =
            time_policy_with(policy, &self.cluster, &self.settings).map_err(anyhow::Error::msg)?;
        let result = gapbench_replay::run(&self.cluster, &self.workload, policy.as_mut(), &options);
        match &result.stopped_early {
            Some(why) => bail!("{why}"),
            None => Ok(result),
        }
    }

    /// Replays `policy` under `budget` (`budget_value` of it, `fraction` of FIFO's spend) as
    /// a point, with the jobs' runs when the options record segments.
    pub fn point(
        &self,
        policy: &str,
        fraction: Option<f64>,
        budget_value: Option<f64>,
        budget: Budget,
    ) -> PolicyPoint {
        let result = self.run(policy, budget);
        let runs = result.as_ref().ok().and_then(|r| self.job_runs(r));
        let mut point = PolicyPoint::of(policy.into(), fraction, budget_value, result);
        point.runs = runs;
        point
    }

    /// Each training job's runs in `result`, in job order, on the frontier problem's clock
    /// (seconds since the first arrival); `None` unless every job finished and its segments
    /// were recorded (`record_segments`).
    pub fn job_runs(&self, result: &ReplayResult) -> Option<JobRuns> {
        let origin_s = first_arrival_s(self.jobs.jobs());
        self.jobs
            .jobs()
            .iter()
            .map(|job| {
                let task = result.tasks.get(job.task as usize)?;
                task.end_s?;
                let runs: Option<Vec<Run>> = task
                    .segments
                    .iter()
                    .map(|segment| {
                        Some(Run {
                            from_s: segment.from_s - origin_s,
                            to_s: segment.to_s - origin_s,
                            config: segment.option?,
                        })
                    })
                    .collect();
                runs.filter(|r| !r.is_empty())
            })
            .collect()
    }
}

/// The frontier problem of a budgeted replay's jobs, in slots of `slot_s` where the trace
/// is busy and up to `quiet_slot_s` where it is quiet (`busy_base_slots`; a coarser slot
/// is a relaxation, so the bound stays valid: `gapbench_bounds::frontier::slots`).
pub fn frontier_instance(
    setup: &BudgetSetup,
    kind: FrontierKind,
    slot_s: f64,
    quiet_slot_s: f64,
) -> Result<FrontierInstance> {
    let jobs = setup.jobs.jobs();
    // The problem's clock starts at the first arrival (slots before it would be empty).
    let origin_s = first_arrival_s(jobs);
    let frontier_jobs = jobs
        .iter()
        .map(|job| {
            let mut frontier_job = FrontierJob::of_training(
                &job.training,
                job.arrival_s - origin_s,
                setup.options.fidelity,
            );
            assert_eq!(
                frontier_job.configs.len(),
                job.options.len(),
                "same configurations"
            );
            for (config, option) in frontier_job.configs.iter_mut().zip(&job.options) {
                config.gpus = option.gpu_milli;
                config.watts = option.watts;
            }
            frontier_job
        })
        .collect();
    let budget = match kind {
        FrontierKind::Energy => BudgetKind::Energy,
        FrontierKind::Carbon => match &setup.options.carbon {
            Some(series) => BudgetKind::Carbon(series.shifted(origin_s)),
            None => bail!("--kind carbon needs --carbon FILE|caiso-like|gb-like|caiso-2023"),
        },
    };
    let span_s = trace_end_s(jobs) - origin_s;
    let base_slots = (span_s / slot_s).ceil() + 1.0;
    crate::limits::ensure_fits(
        &format!("--slot {slot_s} cuts the {span_s:.0} s horizon into {base_slots:.3e} slots"),
        base_slots,
        crate::limits::FRONTIER_SLOT_BYTES,
        "slots",
    )?;
    let gpu_milli = setup.cluster.gpu_count() * 1000;
    let gpus = u32::try_from(gpu_milli)
        .map_err(|_| anyhow::anyhow!("too many GPUs for the frontier's milli-GPU units"))?;
    let horizon_s = base_slots * slot_s;
    let held = jobs.iter().map(|job| {
        let from = job.arrival_s - origin_s;
        let milli = f64::from(job.options[job.trace_option].gpu_milli);
        (from, from + job.trace_duration_s(), milli)
    });
    let busy = busy_base_slots(held, slot_s, base_slots as usize, gpu_milli as f64);
    Ok(FrontierInstance {
        jobs: frontier_jobs,
        gpus,
        slots: Slots::adaptive(slot_s, quiet_slot_s.max(slot_s), horizon_s, &busy),
        budget,
    })
}

/// One budgeted replay's point, against the frontier when there is one.
#[derive(Debug, Clone, Serialize)]
pub struct PolicyPoint {
    pub policy: String,
    /// The budget as a share of full-clock FIFO's spend (budgeted policies).
    pub fraction: Option<f64>,
    pub budget: Option<f64>,
    /// Job energy (training model) and its carbon; cluster energy (every node, idle
    /// included); mean JCT of the training jobs. NaN when the replay has no point.
    pub job_energy_kwh: f64,
    pub carbon_kg: f64,
    pub cluster_energy_kwh: f64,
    pub mean_jct_s: f64,
    pub bound_mean_jct_s: Option<f64>,
    pub gap: Option<f64>,
    pub error: Option<String>,
    /// What the replay drew over time (empty when it failed).
    #[serde(skip)]
    pub timeline: Vec<TimelineRow>,
    /// Each job's runs, when the replay recorded them ([`BudgetSetup::job_runs`]).
    #[serde(skip)]
    pub runs: Option<JobRuns>,
}

impl PolicyPoint {
    /// The point of a replay (or of why it has none).
    pub fn of(
        policy: String,
        fraction: Option<f64>,
        budget: Option<f64>,
        result: Result<ReplayResult>,
    ) -> PolicyPoint {
        match result {
            Ok(r) => {
                let s = r.summary();
                PolicyPoint {
                    policy,
                    fraction,
                    budget,
                    job_energy_kwh: s.job_energy_kwh,
                    carbon_kg: s.job_carbon_kg.unwrap_or(0.0),
                    cluster_energy_kwh: s.total_energy_kwh,
                    mean_jct_s: s.job_jct_s.mean,
                    bound_mean_jct_s: None,
                    gap: None,
                    error: None,
                    timeline: r.timeline,
                    runs: None,
                }
            }
            Err(e) => PolicyPoint {
                policy,
                fraction,
                budget,
                job_energy_kwh: f64::NAN,
                carbon_kg: f64::NAN,
                cluster_energy_kwh: f64::NAN,
                mean_jct_s: f64::NAN,
                bound_mean_jct_s: None,
                gap: None,
                error: Some(format!("{e:#}")),
                timeline: Vec::new(),
                runs: None,
            },
        }
    }

    /// What the point spent in the unit of `kind`'s budget (kWh or kg).
    pub fn spend(&self, kind: FrontierKind) -> f64 {
        match kind {
            FrontierKind::Energy => self.job_energy_kwh,
            FrontierKind::Carbon => self.carbon_kg,
        }
    }

    /// Sets the bound at the point's own spend and the gap to it.
    pub fn measure(&mut self, frontier: &Frontier, kind: FrontierKind) {
        self.bound_mean_jct_s = frontier.mean_jct_bound(self.spend(kind));
        self.gap = self
            .bound_mean_jct_s
            .map(|b| (self.mean_jct_s - b) / b)
            .filter(|g| g.is_finite());
    }
}

/// The budgeted policy of a frontier kind: PowerFlow-style for energy, GreenFlow-style for
/// carbon.
pub fn budgeted_policy(kind: FrontierKind) -> &'static str {
    let budget = match kind {
        FrontierKind::Energy => BudgetTarget::Energy,
        FrontierKind::Carbon => BudgetTarget::Carbon,
    };
    TimePolicyKind::planning_to(budget).name()
}

/// The budget of `kind` worth `value` (kWh or kg).
pub fn budget_of(kind: FrontierKind, value: f64) -> Budget {
    match kind {
        FrontierKind::Energy => Budget::EnergyKwh(value),
        FrontierKind::Carbon => Budget::CarbonKg(value),
    }
}

/// Runs fifo-full-clock, zeus and the budgeted policy at `fractions` of FIFO's spend; each
/// point gets its gap to `frontier` when there is one.
pub fn policy_points(
    setup: &BudgetSetup,
    kind: FrontierKind,
    frontier: Option<&Frontier>,
    fractions: &[f64],
) -> Result<Vec<PolicyPoint>> {
    let fifo = setup.point("fifo-full-clock", None, None, Budget::Unlimited);
    if let Some(e) = &fifo.error {
        bail!("{e}");
    }
    let base = fifo.spend(kind);
    let mut points = vec![fifo, setup.point("zeus", None, None, Budget::Unlimited)];
    let budgeted = budgeted_policy(kind);
    for &fraction in fractions {
        let value = fraction * base;
        points.push(setup.point(
            budgeted,
            Some(fraction),
            Some(value),
            budget_of(kind, value),
        ));
    }
    if let Some(frontier) = frontier {
        for point in points.iter_mut().filter(|p| p.error.is_none()) {
            point.measure(frontier, kind);
        }
    }
    Ok(points)
}
