//! `gapbench replay`: its flags and the command (time mode; budgeted policies hand over to
//! `gapbench::budget`).

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Result};
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
    /// Policy: eaco-r, eaco-o, fifo, fifo-packed, gandiva (and -o variants that share whole-GPU reservations), or any sweep policy spec (fgd, pwr, pwr:200,fgd:800, bestfit, …); or a budgeted policy on the GPU jobs as training jobs: powerflow (--budget-energy), greenflow (--budget-carbon), zeus, fifo-full-clock.
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
    /// A task that fits nowhere on arrival: `queue` (waits, FIFO) or `fail` (dropped, as in the arrival sweep).
    #[arg(long, value_enum, default_value_t = OnFullArg::Queue)]
    on_full: OnFullArg,
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
    /// Task values the reference simulator converts: `reference` converts and warns, `strict` rejects the row.
    #[arg(long, value_enum, default_value_t = InputRulesArg::Reference)]
    input_rules: InputRulesArg,
    /// Output folder. Default: `results/replay-<policy>`.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
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
enum OnFullArg {
    Queue,
    Fail,
}

pub(crate) fn replay(args: ReplayArgs) -> Result<()> {
    use gapbench::replay::{run_replays, write_replay_outputs, ReplayInputs, TimedSource};
    use gapbench_replay::{GpuPowerMode, IdlePolicy, OnFull, PowerSettings, ReplayOptions};
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
        input_rules(args.input_rules),
        cpu_power(args.cpu_power),
    )?;
    for warning in inputs.warnings() {
        eprintln!("warning: {warning}");
    }
    let budgeted = gapbench::budget::is_budget_policy(&args.policy);
    let round = budgeted.then_some(args.budget.round);
    gapbench::limits::check_replay(&inputs, &seeds, args.tick, round)?;
    if budgeted {
        let out = args
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("results/replay-{}", args.policy.trim())));
        return gapbench::budget::run_budget_replays(
            &inputs,
            &args.policy,
            &args.budget,
            &seeds,
            &out,
        );
    }
    let options = ReplayOptions {
        on_full: match args.on_full {
            OnFullArg::Queue => OnFull::Queue,
            OnFullArg::Fail => OnFull::Fail,
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
        restart_overhead_s: args.restart_overhead,
        tick_s: args.tick,
        until_s: args.until,
        ..ReplayOptions::default()
    };
    let slug: String = args
        .policy
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
        "gapbench replay: policy {} on {} nodes ({} GPUs), {} seed(s)",
        args.policy,
        inputs.cluster.len(),
        inputs.cluster.gpu_count(),
        seeds.len()
    );
    let start = Instant::now();
    let runs = run_replays(&inputs, &args.policy, &options, &seeds)?;
    let settings = serde_json::json!({
        "policy": args.policy,
        "source": inputs.source,
        "arrival_scale": args.arrival_scale,
        "idle": format!("{:?}", options.power.idle),
        "sleep_fraction": options.power.sleep_fraction,
        "gpu_power": format!("{:?}", options.power.gpu_mode),
        "on_full": format!("{:?}", options.on_full),
        "until_s": options.until_s,
        "tick_s": options.tick_s,
        "restart_overhead_s": options.restart_overhead_s,
        "time_rules": gapbench_replay::TIME_RULES,
    });
    let summary = write_replay_outputs(&out, &inputs, &settings, &runs, seeds.len() > 1)?;
    println!(
        "\n{:>6} {:>7} {:>12} {:>11} {:>11} {:>11} {:>11} {:>6} {:>7} {:>10}",
        "seed",
        "tasks",
        "energy kWh",
        "mean JCT s",
        "p95 JCT s",
        "mean wait",
        "makespan h",
        "undos",
        "missed",
        "unfinished"
    );
    for run in &summary.runs {
        let s = &run.summary;
        println!(
            "{:>6} {:>7} {:>12.1} {:>11.0} {:>11.0} {:>11.1} {:>11.1} {:>6} {:>7} {:>10}",
            run.seed,
            s.tasks,
            s.total_energy_kwh,
            s.jct_s.mean,
            s.jct_s.p95,
            s.wait_s.mean,
            s.makespan_s / 3600.0,
            s.undo_count,
            s.deadline_misses,
            s.unfinished + s.failed,
        );
    }
    let per_run: f64 =
        runs.iter().map(|r| r.elapsed.as_secs_f64()).sum::<f64>() / runs.len() as f64;
    println!(
        "{} replay(s) in {:.2} s wall ({:.3} s per replay on average); results in {}",
        runs.len(),
        start.elapsed().as_secs_f64(),
        per_run,
        out.display()
    );
    Ok(())
}
