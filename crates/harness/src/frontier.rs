//! `gapbench frontier`: the exact JCT–energy (or JCT–carbon) lower envelope of a budgeted
//! replay's jobs (`gapbench_ilp::frontier`), written as `frontier.csv`; optionally the
//! time-indexed MIP on small instances, and the budgeted policies' own points against it
//! (`points.csv`: gap = (JCT_policy − JCT_bound)/JCT_bound at the policy's own spend).
//!
//! The frontier is built from the replay's own jobs ([`BudgetSetup`]): the same training
//! jobs (class per task name, iterations, every configuration with the capacity it holds and
//! the same power), the same cluster's GPUs as capacity (GPU units are milli-GPU, so
//! GPU-sharing tasks hold their share, as online); jobs that fit no node are left out, as
//! the replay fails them at arrival. Placement, CPU and memory, co-location slowdown and
//! the replay's rounds are relaxed, so every replay's point lies on or above it.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use gapbench_ilp::frontier::slots::busy_base_slots;
use gapbench_ilp::frontier::{
    ascent_frontier, column_generation_frontier, lagrangian_frontier, min_total_jct, AscentOptions,
    BudgetKind, ColumnGenerationOptions, Frontier, FrontierInstance, FrontierJob,
    LagrangianOptions, Slots,
};
use gapbench_ilp::SolveOptions;
use gapbench_model::{Cluster, CpuPowerProfile, InputRules};
use gapbench_replay::jobs::{first_arrival_s, trace_end_s};
use gapbench_replay::policies::{time_policy_with, PolicySettings};
use gapbench_replay::{Budget, JobTable, ReplayOptions, ReplayResult, TimedWorkload, TimelineRow};
use gapbench_results::csv_text::optional_number;
use gapbench_results::frontier_output::{ColgenRow, FrontierPointRow, FrontierRow};
use serde::Serialize;

use crate::budget::BudgetArgs;
use crate::io::{write_atomic, write_json};
use crate::manifest::Manifest;
use crate::replay::{training_jobs, ReplayInputs, Selection, TimedSource};

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum FrontierKind {
    /// Mean JCT against job energy (kWh).
    Energy,
    /// Mean JCT against carbon (kg), with --carbon.
    Carbon,
}

#[derive(Args, Clone, Debug)]
pub struct FrontierArgs {
    /// Node list CSV. Default: the embedded openb-like cluster.
    #[arg(long, value_name = "FILE")]
    pub nodes: Option<PathBuf>,
    /// openb task list with times. Default: the embedded openb-like workload with drawn times.
    #[arg(long, value_name = "FILE")]
    pub tasks: Option<PathBuf>,
    /// Compress inter-arrival times by this factor.
    #[arg(long, value_name = "X", default_value_t = 1.0)]
    pub arrival_scale: f64,
    /// The seed (workload classes, generated workloads, forecast noise).
    #[arg(long, value_name = "N", default_value_t = 42)]
    pub seed: u64,
    #[command(flatten)]
    pub selection: Selection,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// What the budget limits.
    #[arg(long, value_enum, default_value_t = FrontierKind::Energy)]
    pub kind: FrontierKind,
    /// Budgets to evaluate (kWh, or kg for --kind carbon), comma-separated. Default: an even sweep (see --sweep).
    #[arg(long, value_name = "B,…", value_delimiter = ',', value_parser = crate::flag_values::positive)]
    pub budgets: Vec<f64>,
    /// Points of the default sweep, from the least budget to the unconstrained schedules' budget.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub sweep: usize,
    /// Slot length of the frontier problem, seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0, value_parser = crate::flag_values::positive)]
    pub slot: f64,
    /// Merge runs of quiet base slots (where the trace-configuration load stays under half
    /// the GPUs and nothing would queue) into slots of up to this many seconds. Default: --slot (a uniform grid).
    #[arg(long, value_name = "SECONDS", value_parser = crate::flag_values::positive)]
    pub quiet_slot: Option<f64>,
    /// Tighten the envelope by column generation at each budget (and, with --policies, at each policy's own spend), warm-started from the Lagrangian.
    #[arg(long)]
    pub colgen: bool,
    /// Push the Lagrangian envelope up at each of --budgets (and, with --policies, at each
    /// policy's own spend) by this many deterministic dual-ascent steps on the budget and
    /// capacity prices together, after --frontier-steps at the unconstrained end (no LP).
    #[arg(long, value_name = "STEPS", conflicts_with = "colgen")]
    pub ascent: Option<usize>,
    /// Budget prices and subgradient steps per price of the Lagrangian (with --colgen: of its warm start).
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub frontier_prices: usize,
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub frontier_steps: usize,
    /// Wall-clock limit of --colgen, seconds: the bound stays valid when it stops early.
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0, value_parser = crate::flag_values::positive)]
    pub colgen_time_limit: f64,
    /// Also solve the time-indexed MIP at each budget (HiGHS), when the instance is small enough.
    #[arg(long)]
    pub mip: bool,
    /// Largest instance the MIP is tried on: jobs.
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub mip_max_jobs: usize,
    /// Largest instance the MIP is tried on: GPUs.
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub mip_max_gpus: u64,
    /// Time limit per MIP solve, seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0, value_parser = crate::flag_values::positive)]
    pub mip_time_limit: f64,
    /// Also replay the budgeted policies (fifo-full-clock, zeus, and powerflow or greenflow at 0.7, 0.85 and 1.0 × FIFO's spend) and write their points and gaps to points.csv.
    #[arg(long)]
    pub policies: bool,
    /// Output folder.
    #[arg(long, value_name = "DIR", default_value = "results/frontier")]
    pub out: PathBuf,
}

/// Refuses a budget given twice (its row would be written twice) and a default sweep of
/// fewer than 2 points (its two ends are the least budget and the unconstrained one).
fn check_budget_flags(budgets: &[f64], sweep: usize) -> Result<()> {
    for (i, budget) in budgets.iter().enumerate() {
        if budgets[..i].contains(budget) {
            bail!("--budgets: budget {budget} is given twice (its row would be written twice)");
        }
    }
    if sweep < 2 {
        bail!("--sweep takes 2 or more points (the least budget and the unconstrained schedules' budget, then evenly between); got {sweep}");
    }
    Ok(())
}

/// Why the MIP is not tried on `jobs` jobs on `gpus` GPUs: the limits it exceeds, each with
/// the value compared; `None` when it is within both.
fn mip_too_big(jobs: usize, gpus: u64, max_jobs: usize, max_gpus: u64) -> Option<String> {
    let mut over = Vec::new();
    if jobs > max_jobs {
        over.push(format!("{jobs} jobs is above --mip-max-jobs {max_jobs}"));
    }
    if gpus > max_gpus {
        over.push(format!("{gpus} GPUs is above --mip-max-gpus {max_gpus}"));
    }
    (!over.is_empty()).then(|| over.join(", and "))
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
}

/// The frontier problem of a budgeted replay's jobs, in slots of `slot_s` where the trace
/// is busy and up to `quiet_slot_s` where it is quiet (`busy_base_slots`; a coarser slot
/// is a relaxation, so the bound stays valid: `gapbench_ilp::frontier::slots`).
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

/// What column generation reached at a budget: `converged` (the bound is within the
/// tolerance of the master LP), `time limit` or `stopped` (out of rounds or of improving
/// columns: the bound valid, the LP not reached), `infeasible` (below the least budget).
pub fn colgen_status(bound: &gapbench_ilp::frontier::BudgetBound) -> &'static str {
    if bound.total_jct_bound_s.is_none() {
        "infeasible"
    } else if bound.converged {
        "converged"
    } else if bound.timed_out {
        "time limit"
    } else {
        "stopped"
    }
}

/// The budgeted policy of a frontier kind: PowerFlow-style for energy, GreenFlow-style for
/// carbon.
pub fn budgeted_policy(kind: FrontierKind) -> &'static str {
    match kind {
        FrontierKind::Energy => "powerflow",
        FrontierKind::Carbon => "greenflow",
    }
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
    let mut points = Vec::new();
    let fifo = setup.run("fifo-full-clock", Budget::Unlimited)?;
    points.push(PolicyPoint::of(
        "fifo-full-clock".into(),
        None,
        None,
        Ok(fifo),
    ));
    let base = points[0].spend(kind);
    let zeus = setup.run("zeus", Budget::Unlimited);
    points.push(PolicyPoint::of("zeus".into(), None, None, zeus));
    let budgeted = budgeted_policy(kind);
    for &fraction in fractions {
        let value = fraction * base;
        let result = setup.run(budgeted, budget_of(kind, value));
        points.push(PolicyPoint::of(
            budgeted.into(),
            Some(fraction),
            Some(value),
            result,
        ));
    }
    if let Some(frontier) = frontier {
        for point in points.iter_mut().filter(|p| p.error.is_none()) {
            point.measure(frontier, kind);
        }
    }
    Ok(points)
}

/// `gapbench frontier`.
pub fn frontier(args: &FrontierArgs) -> Result<()> {
    check_budget_flags(&args.budgets, args.sweep)?;
    let inputs = ReplayInputs::load(
        TimedSource::Openb {
            nodes: args.nodes.clone(),
            tasks: args.tasks.clone(),
        },
        args.arrival_scale,
        args.selection,
        InputRules::Reference,
        CpuPowerProfile::Reference,
    )?;
    let setup = BudgetSetup::new(&inputs, &args.budget, args.seed)?;
    let instance = frontier_instance(
        &setup,
        args.kind,
        args.slot,
        args.quiet_slot.unwrap_or(args.slot),
    )?;
    let unit = match args.kind {
        FrontierKind::Energy => "kWh",
        FrontierKind::Carbon => "kg",
    };
    println!(
        "gapbench frontier: {} jobs on {} GPUs, {} slots of {} to {} s, budget in {unit}",
        instance.jobs.len(),
        instance.gpus / 1000,
        instance.slots.count(),
        args.slot,
        instance.slots.longest_s()
    );
    let clock = std::time::Instant::now();
    let fractions = [0.7, 0.85, 1.0];
    // With --colgen the policies run first: their own spends are budgets to tighten at.
    let targeted = args.colgen || args.ascent.is_some();
    let mut points = if args.policies && targeted {
        Some(policy_points(&setup, args.kind, None, &fractions)?)
    } else {
        None
    };
    let mut colgen_rows = Vec::new();
    let mut targets = args.budgets.clone();
    targets.extend(
        points
            .iter()
            .flatten()
            .filter(|p| p.error.is_none())
            .map(|p| p.spend(args.kind)),
    );
    if targeted && targets.is_empty() {
        bail!("--colgen and --ascent tighten the envelope at chosen budgets: give --budgets or --policies");
    }
    let frontier = if let Some(steps) = args.ascent {
        let options = AscentOptions {
            unconstrained_steps: args.frontier_steps,
            steps_per_budget: steps,
            progress: true,
        };
        let result = ascent_frontier(&instance, &targets, &options).map_err(anyhow::Error::msg)?;
        println!(
            "dual ascent in {:.2} s: {} pricing passes",
            clock.elapsed().as_secs_f64(),
            result.evaluations
        );
        for &(budget, bound) in &result.budgets {
            println!(
                "  budget {budget:.3} {unit}: bound {} h",
                optional_number(bound.map(|t| t / 3600.0 / instance.jobs.len() as f64), 3)
            );
        }
        result.frontier
    } else if args.colgen {
        let options = ColumnGenerationOptions {
            warm_start: LagrangianOptions {
                budget_prices: args.frontier_prices,
                subgradient_steps: args.frontier_steps,
            },
            time_limit_s: args.colgen_time_limit,
            progress: true,
            ..ColumnGenerationOptions::default()
        };
        let result = column_generation_frontier(&instance, &targets, &options)
            .map_err(anyhow::Error::msg)?;
        println!(
            "column generation in {:.2} s: {} columns",
            result.seconds, result.columns
        );
        for b in &result.budgets {
            println!(
                "  budget {:.3} {unit}: bound {} h, master LP {} h, {} rounds, {}",
                b.budget,
                optional_number(
                    b.total_jct_bound_s
                        .map(|t| t / 3600.0 / instance.jobs.len() as f64),
                    3
                ),
                optional_number(
                    b.master_total_jct_s
                        .map(|t| t / 3600.0 / instance.jobs.len() as f64),
                    3
                ),
                b.rounds,
                colgen_status(b)
            );
        }
        colgen_rows = result.budgets;
        result.frontier
    } else {
        let options = LagrangianOptions {
            budget_prices: args.frontier_prices,
            subgradient_steps: args.frontier_steps,
        };
        lagrangian_frontier(&instance, &options).map_err(anyhow::Error::msg)?
    };
    println!(
        "envelope in {:.2} s: least budget {:.3} {unit}, flat beyond {:.3} {unit}",
        clock.elapsed().as_secs_f64(),
        frontier.least_budget,
        frontier.unconstrained_budget
    );
    let budgets: Vec<f64> = if args.budgets.is_empty() {
        let n = args.sweep;
        (0..n)
            .map(|k| {
                frontier.least_budget
                    + (frontier.unconstrained_budget - frontier.least_budget) * k as f64
                        / (n - 1) as f64
            })
            .collect()
    } else {
        args.budgets.clone()
    };
    let mip_too_big = mip_too_big(
        instance.jobs.len(),
        u64::from(instance.gpus / 1000),
        args.mip_max_jobs,
        args.mip_max_gpus,
    );
    let mip_allowed = args.mip && mip_too_big.is_none();
    if let Some(why) = mip_too_big.filter(|_| args.mip) {
        eprintln!("warning: --mip skipped: {why}");
    }
    let mut csv = format!("{}\n", FrontierRow::csv_header());
    let jobs = instance.jobs.len() as f64;
    for &budget in &budgets {
        let bound = frontier.mean_jct_bound(budget);
        let status = if bound.is_some() {
            "bound"
        } else {
            "infeasible"
        };
        let (mip_mean, mip_bound, mip_status, mip_seconds) = if mip_allowed {
            let options = SolveOptions {
                time_limit_s: args.mip_time_limit,
                threads: Some(1),
                ..SolveOptions::default()
            };
            let point = min_total_jct(&instance, budget, &options).map_err(anyhow::Error::msg)?;
            (
                point.total_jct_s.map(|t| t / jobs),
                point.bound_s.map(|t| t / jobs),
                point.status.label(),
                Some(point.seconds),
            )
        } else {
            (None, None, String::new(), None)
        };
        let row = FrontierRow {
            budget,
            unit,
            mean_jct_bound_s: bound,
            status,
            mip_mean_jct_s: mip_mean,
            mip_bound_mean_jct_s: mip_bound,
            mip_status,
            mip_seconds,
        };
        csv.push_str(&row.csv_line());
        csv.push('\n');
    }
    write_atomic(&args.out.join("frontier.csv"), csv.as_bytes())?;
    if args.colgen {
        let mut text = format!("{}\n", ColgenRow::csv_header());
        for b in &colgen_rows {
            let row = ColgenRow {
                budget: b.budget,
                unit,
                mean_jct_bound_s: b.total_jct_bound_s.map(|t| t / jobs),
                master_mean_jct_s: b.master_total_jct_s.map(|t| t / jobs),
                rounds: b.rounds,
                status: colgen_status(b),
            };
            text.push_str(&row.csv_line());
            text.push('\n');
        }
        write_atomic(&args.out.join("colgen.csv"), text.as_bytes())?;
    }
    if args.policies {
        let points = match points.take() {
            Some(mut points) => {
                for point in points.iter_mut().filter(|p| p.error.is_none()) {
                    point.measure(&frontier, args.kind);
                }
                points
            }
            None => policy_points(&setup, args.kind, Some(&frontier), &fractions)?,
        };
        let mut text = format!("{}\n", FrontierPointRow::csv_header());
        println!(
            "\n{:<16} {:>12} {:>12} {:>10} {:>12} {:>12} {:>8}",
            "policy", "budget", "energy kWh", "carbon kg", "mean JCT s", "bound s", "gap"
        );
        for p in &points {
            let row = FrontierPointRow {
                policy: p.policy.clone(),
                budget: p.budget,
                job_energy_kwh: p.job_energy_kwh,
                carbon_kg: p.carbon_kg,
                cluster_energy_kwh: p.cluster_energy_kwh,
                mean_jct_s: p.mean_jct_s,
                bound_mean_jct_s: p.bound_mean_jct_s,
                gap: p.gap,
                error: p.error.clone().unwrap_or_default(),
            };
            text.push_str(&row.csv_line());
            text.push('\n');
            println!(
                "{:<16} {:>12} {:>12.3} {:>10.3} {:>12.1} {:>12} {:>8} {}",
                p.policy,
                optional_number(p.budget, 3),
                p.job_energy_kwh,
                p.carbon_kg,
                p.mean_jct_s,
                optional_number(p.bound_mean_jct_s, 1),
                optional_number(p.gap, 3),
                p.error.as_deref().unwrap_or("")
            );
        }
        write_atomic(&args.out.join("points.csv"), text.as_bytes())?;
    }
    let settings = serde_json::json!({
        "kind": format!("{:?}", args.kind),
        "slot_s": args.slot,
        "fidelity": format!("{:?}", setup.options.fidelity),
        "horizon_end_s": setup.settings.horizon_end_s,
        "carbon": args.budget.carbon,
        "selection": args.selection,
        "arrival_scale": args.arrival_scale,
        "mip": mip_allowed,
        "quiet_slot_s": args.quiet_slot,
        "colgen": args.colgen.then_some(args.colgen_time_limit),
        "ascent_steps": args.ascent,
    });
    write_json(
        &args.out.join("manifest.json"),
        &Manifest::new(inputs.inputs.clone(), vec![args.seed], settings),
    )?;
    println!("frontier.csv in {}", args.out.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The skip message names the limit actually exceeded, with the value compared (it said
    /// "3 jobs … above --mip-max-jobs 50" when the GPUs were over their limit).
    #[test]
    fn the_mip_skip_names_the_limit_it_exceeds() {
        assert_eq!(mip_too_big(3, 32, 50, 32), None);
        assert_eq!(
            mip_too_big(3, 64, 50, 32).as_deref(),
            Some("64 GPUs is above --mip-max-gpus 32")
        );
        assert_eq!(
            mip_too_big(60, 8, 50, 32).as_deref(),
            Some("60 jobs is above --mip-max-jobs 50")
        );
        assert_eq!(
            mip_too_big(60, 64, 50, 32).as_deref(),
            Some("60 jobs is above --mip-max-jobs 50, and 64 GPUs is above --mip-max-gpus 32")
        );
    }

    #[test]
    fn repeated_budgets_and_a_sweep_below_two_points_are_refused() {
        assert!(check_budget_flags(&[1.0, 2.0], 20).is_ok());
        assert!(check_budget_flags(&[], 2).is_ok());
        let repeated = check_budget_flags(&[1.0, 2.0, 1.0], 20).unwrap_err();
        assert!(repeated.to_string().contains("budget 1 is given twice"));
        for sweep in [0, 1] {
            let error = check_budget_flags(&[], sweep).unwrap_err().to_string();
            assert!(error.contains("--sweep takes 2 or more"), "{error}");
        }
    }
}
