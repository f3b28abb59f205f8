//! `gapbench replay`: its flags and the command — one engine for every time policy, the
//! budgeted ones included; a flag the chosen policy does not use is refused.

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};

use crate::{cpu_power, input_rules, parse_seed_range, CpuPowerArg, InputRulesArg};

#[derive(Args)]
pub(crate) struct ReplayArgs {
    /// Node list CSV (`sn,cpu_milli,memory_mib,gpu,model`). Default: the embedded openb-like cluster.
    #[arg(long, value_name = "FILE", conflicts_with = "eaco_servers")]
    nodes: Option<PathBuf>,
    /// openb task list with times (`creation_time, scheduled_time, deletion_time, pod_phase, qos` besides the resource columns). Default: the embedded openb-like workload with drawn times.
    #[arg(long, value_name = "FILE", conflicts_with = "eaco_servers")]
    tasks: Option<PathBuf>,
    /// Replay EaCO's evaluation setup instead: N servers of 8×V100 and its four-model job mix (AlexNet, ResNet-18, ResNet-50, VGG-16), Poisson arrivals.
    #[arg(long, value_name = "N")]
    eaco_servers: Option<usize>,
    /// Jobs of the EaCO setup.
    #[arg(
        long,
        value_name = "COUNT",
        default_value_t = 400,
        requires = "eaco_servers"
    )]
    eaco_jobs: usize,
    /// Arrival rate of the EaCO setup, jobs per hour.
    #[arg(
        long,
        value_name = "RATE",
        default_value_t = 2.0,
        requires = "eaco_servers"
    )]
    eaco_jobs_per_hour: f64,
    /// Policy: eaco-r, eaco-o, fifo, fifo-packed, gandiva (and -o variants that share whole-GPU reservations), or any sweep policy spec (fgd, pwr, pwr:200,fgd:800, bestfit, …); or a policy that runs the GPU tasks as training jobs in a configuration of its choice: powerflow (--budget-energy), greenflow (--budget-carbon), zeus, fifo-full-clock. All run on the same nodes with the same power model.
    #[arg(long, value_name = "SPEC", default_value = "fgd")]
    policy: String,
    /// The seed (node tie-break order, derived task attributes, generated workloads).
    #[arg(long, value_name = "N", default_value_t = 42, conflicts_with = "seeds")]
    seed: u64,
    /// Several seeds, e.g. `42..51` (inclusive), replayed in parallel; outputs per seed under seed-N/.
    #[arg(long, value_name = "A..B", value_parser = parse_seed_range)]
    seeds: Option<RangeInclusive<u64>>,
    /// Compress inter-arrival times by this factor (10 = arrivals ten times as dense), to study a loaded cluster; durations are unchanged.
    #[arg(long, value_name = "X", default_value_t = 1.0)]
    arrival_scale: f64,
    /// Nodes with nothing on them: `always-on` (idle power, how FGD and PWR are evaluated) or `sleep-when-empty` (sleep power, EaCO's lever).
    #[arg(long, value_enum, default_value_t = IdleArg::AlwaysOn)]
    idle: IdleArg,
    /// Sleep power of an empty node as a share of its idle power (with --idle sleep-when-empty).
    #[arg(long, value_name = "SHARE", default_value_t = 0.05)]
    sleep_fraction: f64,
    /// GPU power: `utilisation` (follows the tenants' actual utilisation, time-and-budgets §1) or `reservation` (any reservation draws full power, the reference simulator's model).
    #[arg(long, value_enum, default_value_t = GpuPowerArg::Utilisation)]
    gpu_power: GpuPowerArg,
    /// A task that fits nowhere on arrival: `queue` (waits; the default) or `fail` (dropped, as in the arrival sweep). A task that fits no node even of the empty cluster always fails at arrival (`never_fits:<resource>`). powerflow and greenflow decide for every waiting task at each round and take no --on-full.
    #[arg(long, value_enum)]
    on_full: Option<OnFullArg>,
    /// Queue discipline: `fifo` (strict, as Gavel's: the oldest waiting task blocks the ones behind it; the default) or `backfill` (the first waiting tasks that fit start; the others keep their places). powerflow and greenflow admit by shortest remaining time and take no --queue.
    #[arg(long, value_enum)]
    queue: Option<QueueArg>,
    /// Stop at this time (seconds since the trace start); energy is integrated exactly to it.
    #[arg(long, value_name = "SECONDS")]
    until: Option<f64>,
    /// Also sample the timeline every SECONDS (besides one row per event).
    #[arg(long, value_name = "SECONDS")]
    tick: Option<f64>,
    /// Seconds of work an undone task must redo (0: it resumes from its checkpoint).
    #[arg(long, value_name = "SECONDS", default_value_t = 0.0)]
    restart_overhead: f64,
    /// CPU power profile: `reference` or `by-gpu-model`.
    #[arg(long, value_enum, default_value_t = CpuPowerArg::Reference)]
    cpu_power: CpuPowerArg,
    /// Task values the reference simulator converts: `reference` converts and warns, `strict` rejects the row; `strict` also refuses empty creation and deletion times, which `reference` censors (see below).
    #[arg(long, value_enum, default_value_t = InputRulesArg::Reference)]
    input_rules: InputRulesArg,
    /// Output folder. Default: `results/replay-<policy>`.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Also prove a lower bound on the energy of any placement of the same tasks at this replay's own start and end times (column generation on windows, tasks free to move between windows): written to `bound.json`, as a `bound_power_watts` column of timeline.csv, and as the gap (E − LB)/LB in the table.
    #[arg(long)]
    bound: bool,
    /// Wall-clock limit of one replay's bound, seconds (the bound holds whenever it stops).
    #[arg(long, value_name = "SECONDS", default_value_t = gapbench::replay_bound::DEFAULT_BOUND_TIME_LIMIT_S, requires = "bound")]
    bound_time_limit: f64,
    /// Most windows a bound cuts the replay into (split where the replay's energy exceeds the bound most).
    #[arg(long, value_name = "N", default_value_t = gapbench::replay_bound::DEFAULT_BOUND_WINDOWS, requires = "bound")]
    bound_windows: usize,
    /// Most exact pricing rounds of each window's column generation: a window that does not converge stops there, at the same place on every run (status `round_limit`; the time limit is then a safety net).
    #[arg(long, value_name = "N", default_value_t = gapbench::replay_bound::DEFAULT_BOUND_PRICING_ROUNDS, requires = "bound")]
    bound_pricing_rounds: usize,
    /// Also solve each window of the bound exactly with the per-node MIP (same power model, same tasks, each MIP limited like one window's column generation) and print column generation's bound, the MIP's and the replay's own energy per window and in total: the bound's own tightness. Small clusters only (at most 16 nodes; take a slice with --gpus). Written to `bound_check_mip.json`.
    #[arg(long, requires = "bound")]
    bound_check_mip: bool,
    #[command(flatten, next_help_heading = "Which part of the cluster and workload")]
    selection: gapbench::replay::Selection,
    #[command(
        flatten,
        next_help_heading = "Budgeted policies (powerflow, greenflow, zeus, fifo-full-clock)"
    )]
    budget: gapbench::budget::BudgetArgs,
}

#[derive(Clone, Copy, ValueEnum)]
enum IdleArg {
    AlwaysOn,
    SleepWhenEmpty,
}

#[derive(Clone, Copy, ValueEnum)]
enum GpuPowerArg {
    Utilisation,
    Reservation,
}

#[derive(Clone, Copy, ValueEnum)]
enum QueueArg {
    Fifo,
    Backfill,
}

#[derive(Clone, Copy, ValueEnum)]
enum OnFullArg {
    Queue,
    Fail,
}

pub(crate) fn replay(args: ReplayArgs) -> Result<()> {
    use gapbench::replay::{run_replays, write_replay_outputs, ReplayInputs, TimedSource};
    use gapbench_replay::{
        GpuPowerMode, IdlePolicy, OnFull, PowerSettings, QueueDiscipline, ReplayOptions,
    };
    let policy = args.policy.trim();
    args.budget.check_policy(policy)?;
    if gapbench_replay::policies::is_budgeted(policy) {
        for (flag, given) in [
            ("--queue", args.queue.is_some()),
            ("--on-full", args.on_full.is_some()),
        ] {
            if given {
                bail!("`{policy}` does not use {flag}: it decides for every waiting task at each round (shortest remaining time first); leave it out");
            }
        }
    }
    let source = match args.eaco_servers {
        Some(servers) => TimedSource::Eaco {
            servers,
            jobs: args.eaco_jobs,
            jobs_per_hour: args.eaco_jobs_per_hour,
        },
        None => TimedSource::Openb {
            nodes: args.nodes.clone(),
            tasks: args.tasks.clone(),
        },
    };
    if !(0.0..=1.0).contains(&args.sleep_fraction) {
        bail!(
            "--sleep-fraction takes a share between 0 and 1; got {}",
            args.sleep_fraction
        );
    }
    for (flag, value) in [("--until", args.until), ("--tick", args.tick)] {
        if value.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
            bail!("{flag} takes a positive number of seconds");
        }
    }
    if !(args.restart_overhead.is_finite() && args.restart_overhead >= 0.0) {
        bail!("--restart-overhead takes a non-negative number of seconds");
    }
    let seeds: Vec<u64> = match &args.seeds {
        Some(range) => range.clone().collect(),
        None => vec![args.seed],
    };
    if let Some(servers) = args.eaco_servers {
        let flags = ["--eaco-servers", "--eaco-jobs"];
        gapbench::limits::check_eaco_setup(servers, args.eaco_jobs, seeds.len(), flags)?;
    }
    let inputs = ReplayInputs::load(
        source,
        args.arrival_scale,
        args.selection,
        input_rules(args.input_rules),
        cpu_power(args.cpu_power),
    )?;
    for warning in inputs.warnings() {
        eprintln!("warning: {warning}");
    }
    let most_nodes = gapbench::replay_bound::MAX_MIP_CHECK_NODES;
    if args.bound_check_mip && inputs.cluster.len() > most_nodes {
        bail!(
            "--bound-check-mip takes at most {most_nodes} nodes (this cluster has {}): take a slice with --gpus",
            inputs.cluster.len()
        );
    }
    // Only the planners run rounds (check_policy refused --round for the others).
    let planner = gapbench_replay::policies::is_budgeted(policy);
    let round = planner.then_some(args.budget.round_s());
    gapbench::limits::check_replay(&inputs, &seeds, args.tick, round)?;
    let settings = args.budget.policy_settings()?;
    let first = inputs.workload(seeds[0])?;
    let last_end_s = first
        .tasks
        .iter()
        .map(|t| t.arrival_s + t.duration_s)
        .fold(0.0, f64::max);
    let options = ReplayOptions {
        on_full: match args.on_full.unwrap_or(OnFullArg::Queue) {
            OnFullArg::Queue => OnFull::Queue,
            OnFullArg::Fail => OnFull::Fail,
        },
        queue: match args.queue.unwrap_or(QueueArg::Fifo) {
            QueueArg::Fifo => QueueDiscipline::Fifo,
            QueueArg::Backfill => QueueDiscipline::Backfill,
        },
        power: PowerSettings {
            gpu_mode: match args.gpu_power {
                GpuPowerArg::Utilisation => GpuPowerMode::Utilisation,
                GpuPowerArg::Reservation => GpuPowerMode::Reservation,
            },
            idle: match args.idle {
                IdleArg::AlwaysOn => IdlePolicy::AlwaysOn,
                IdleArg::SleepWhenEmpty => IdlePolicy::SleepWhenEmpty,
            },
            sleep_fraction: args.sleep_fraction,
        },
        fidelity: args.budget.fidelity(),
        budget: args.budget.budget()?,
        carbon: args.budget.carbon_series(last_end_s, seeds[0])?,
        restart_overhead_s: args.restart_overhead,
        tick_s: args.tick,
        until_s: args.until,
        ..ReplayOptions::default()
    };
    for &seed in &seeds {
        gapbench::replay::check_budget(&inputs, &options, seed)?;
    }
    let slug: String = policy
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("results/replay-{slug}")));
    println!(
        "gapbench replay: policy {policy} on {} nodes ({} GPUs), {} seed(s)",
        inputs.cluster.len(),
        inputs.cluster.gpu_count(),
        seeds.len()
    );
    let _held = gapbench::out_dir::OutDir::acquire(&out)?;
    let start = Instant::now();
    let mut runs = run_replays(&inputs, policy, &settings, &options, &seeds)?;
    let bounds = if args.bound {
        if !(args.bound_time_limit.is_finite() && args.bound_time_limit >= 0.0) {
            bail!("--bound-time-limit takes a non-negative number of seconds");
        }
        if args.bound_windows == 0 {
            bail!("--bound-windows takes a positive count");
        }
        if args.bound_pricing_rounds == 0 {
            bail!("--bound-pricing-rounds takes a positive count");
        }
        let bound_options = gapbench::replay_bound::bound_options(
            args.bound_time_limit,
            args.bound_windows,
            Some(args.bound_pricing_rounds),
        );
        gapbench::replay_bound::bound_runs(&inputs, policy, &options, bound_options, &mut runs)?
    } else {
        Vec::new()
    };
    let run_settings = serde_json::json!({
        "policy": policy,
        "source": inputs.source,
        "selection": inputs.selection,
        "arrival_scale": args.arrival_scale,
        "idle": format!("{:?}", options.power.idle),
        "sleep_fraction": options.power.sleep_fraction,
        "gpu_power": format!("{:?}", options.power.gpu_mode),
        "on_full": format!("{:?}", options.on_full),
        "queue": options.queue.label(),
        "until_s": options.until_s,
        "tick_s": options.tick_s,
        "restart_overhead_s": options.restart_overhead_s,
        "fidelity": format!("{:?}", options.fidelity),
        "budget": format!("{:?}", options.budget),
        "carbon": args.budget.carbon,
        "policy_settings": format!("{settings:?}"),
        "time_rules": gapbench_replay::TIME_RULES,
    });
    let summary = write_replay_outputs(&out, &inputs, &run_settings, &runs, seeds.len() > 1)?;
    print_table(&summary);
    gapbench::replay_bound::write_bounds(&out, &runs, &bounds, seeds.len() > 1)?;
    if args.bound_check_mip {
        let bound_options = gapbench::replay_bound::bound_options(
            args.bound_time_limit,
            args.bound_windows,
            Some(args.bound_pricing_rounds),
        );
        gapbench::replay_bound::check_runs(
            &inputs,
            policy,
            &options,
            bound_options,
            &runs,
            &out,
            seeds.len() > 1,
        )?;
    }
    remove_stale_outputs(&out, &seeds, args.bound, args.bound_check_mip)?;
    print_fates(&summary);
    let per_run: f64 =
        runs.iter().map(|r| r.elapsed.as_secs_f64()).sum::<f64>() / runs.len() as f64;
    println!(
        "{} replay(s) in {:.2} s wall ({:.3} s per replay on average); results in {}",
        runs.len(),
        start.elapsed().as_secs_f64(),
        per_run,
        out.display()
    );
    if let Some(run) = summary
        .runs
        .iter()
        .find(|r| r.summary.stopped_early.is_some())
    {
        bail!(
            "seed {}: {} (outputs written to {})",
            run.seed,
            run.summary.stopped_early.as_deref().unwrap_or_default(),
            out.display()
        );
    }
    Ok(())
}

/// Removes what an earlier replay into `out` wrote and this one did not (README: a reused
/// `--out` holds only this run's outputs): the other layout's files and folders, the
/// `seed-N/` folders of other seeds, and bound files this run did not compute.
fn remove_stale_outputs(
    out: &std::path::Path,
    seeds: &[u64],
    bound: bool,
    bound_check_mip: bool,
) -> Result<()> {
    let per_seed = seeds.len() > 1;
    gapbench::out_dir::remove_stale_seed_layout(
        out,
        per_seed,
        |seed| seeds.contains(&seed),
        &["timeline.csv", "tasks.csv", BOUND_FILE, BOUND_CHECK_FILE],
        &[],
    )?;
    let folders: Vec<PathBuf> = if per_seed {
        seeds
            .iter()
            .map(|seed| out.join(format!("seed-{seed}")))
            .collect()
    } else {
        vec![out.to_path_buf()]
    };
    for (name, written) in [(BOUND_FILE, bound), (BOUND_CHECK_FILE, bound_check_mip)] {
        for path in folders.iter().map(|f| f.join(name)) {
            if !written && path.is_file() {
                std::fs::remove_file(&path)
                    .with_context(|| format!("cannot remove {}", path.display()))?;
            }
        }
    }
    Ok(())
}

/// The files of `--bound` and `--bound-check-mip` (`replay_bound`), per replay folder.
const BOUND_FILE: &str = "bound.json";
const BOUND_CHECK_FILE: &str = "bound_check_mip.json";

/// One line per seed: tasks, cluster and job energy, JCT, waits, makespan, what was left.
fn print_table(summary: &gapbench::replay::ReplaySummary) {
    let carbon = summary
        .runs
        .first()
        .is_some_and(|r| r.summary.carbon_kg.is_some());
    println!(
        "\n{:>6} {:>7} {:>12} {:>10} {:>11} {:>11} {:>11} {:>11} {:>6} {:>7} {:>10} {:>7}{}",
        "seed",
        "tasks",
        "energy kWh",
        "job kWh",
        "mean JCT s",
        "p95 JCT s",
        "mean wait",
        "makespan h",
        "undos",
        "missed",
        "unfinished",
        "failed",
        if carbon {
            "  carbon kg (cluster / job)"
        } else {
            ""
        }
    );
    // An empty sample has no mean: "none", never 0.
    let stat = |d: &gapbench_replay::Distribution, value: f64, decimals: usize| {
        if d.count == 0 {
            "none".to_string()
        } else {
            format!("{value:.decimals$}")
        }
    };
    for run in &summary.runs {
        let s = &run.summary;
        let carbon_kg = match (s.carbon_kg, s.job_carbon_kg) {
            (Some(cluster), Some(job)) => format!(" {cluster:>10.1} / {job:.1}"),
            _ => String::new(),
        };
        println!(
            "{:>6} {:>7} {:>12.1} {:>10.1} {:>11} {:>11} {:>11} {:>11.1} {:>6} {:>7} {:>10} {:>7}{carbon_kg}",
            run.seed,
            s.tasks,
            s.total_energy_kwh,
            s.job_energy_kwh,
            stat(&s.jct_s, s.jct_s.mean, 0),
            stat(&s.jct_s, s.jct_s.p95, 0),
            stat(&s.wait_s, s.wait_s.mean, 1),
            s.makespan_s / 3600.0,
            s.undo_count,
            s.deadline_misses,
            s.unfinished,
            s.failed,
        );
    }
}

/// What became of the tasks that did not complete, and what the loading rules dropped or
/// flagged, per seed when seeds differ (nothing is left unsaid).
fn print_fates(summary: &gapbench::replay::ReplaySummary) {
    for run in summary.runs.iter().filter(|r| r.summary.jct_s.count == 0) {
        println!(
            "seed {}: mean JCT none — {} ({} of {} tasks unfinished, {} failed)",
            run.seed,
            run.summary.jct_s.empty_because,
            run.summary.unfinished,
            run.summary.tasks,
            run.summary.failed
        );
    }
    let Some(first) = summary.runs.first() else {
        return;
    };
    let s = &first.summary;
    if s.dropped_pending + s.left_censored + s.right_censored > 0 {
        println!(
            "workload: {} Pending pod(s) dropped (never ran); {} task(s) already there at the trace start, {} still running at its end (censored)",
            s.dropped_pending, s.left_censored, s.right_censored
        );
    }
    for run in &summary.runs {
        let s = &run.summary;
        let seed = if summary.runs.len() > 1 {
            format!("seed {}: ", run.seed)
        } else {
            String::new()
        };
        for (label, count) in &s.failures {
            let reason = gapbench_model::FailureReason::ALL
                .into_iter()
                .find(|r| r.label() == *label)
                .map_or("", |r| r.describe());
            println!("{seed}{count:>8} failed at arrival  {label:<26} {reason}");
        }
        if s.still_waiting > 0 {
            println!(
                "{seed}{} task(s) still waiting when the replay stopped ({} queue); the longest waited {:.1} h",
                s.still_waiting,
                s.queue,
                s.longest_wait_s.unwrap_or(0.0) / 3600.0
            );
        }
    }
}
