//! `gapbench replay`: its flags and the command — one engine for every time policy, the
//! budgeted ones included; a flag the chosen policy does not use is refused.

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use gapbench::budget::BudgetArgs;
use gapbench::replay::{
    run_replays, write_replay_outputs, ReplayInputs, ReplaySummary, SeedReplay, TimedSource,
};
use gapbench::replay_bound::bound_options;
use gapbench_bounds::replay_bound::BoundOptions;
use gapbench_replay::{
    GpuPowerMode, IdlePolicy, OnFull, PowerSettings, QueueDiscipline, ReplayOptions, TimedWorkload,
};

use crate::cli::budget_flags::{BudgetFlags, SelectionFlags};
use crate::cli::replay_table::{print_fates, print_table};
use crate::cli::workload_flags::{
    cpu_power, input_rules, parse_seed_range, CpuPowerArg, InputRulesArg,
};

#[derive(Args)]
pub struct ReplayArgs {
    /// Node list CSV: openb's `sn,cpu_milli,memory_mib,gpu,model`, or Alibaba's 2026 spot-GPU trace's `node_name,gpu_model,gpu_capacity_num,cpu_num`. Default: the embedded openb-like cluster.
    #[arg(long, value_name = "FILE", conflicts_with = "eaco_servers")]
    nodes: Option<PathBuf>,
    /// GPU-model file (CSV `model,idle_watts,full_watts[,memory_mib]`, docs/gpu-models.md): its models add to or override the built-in ones, so the node list may name them. Default: the built-in models.
    #[arg(long, value_name = "FILE", conflicts_with = "eaco_servers")]
    gpu_models: Option<PathBuf>,
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
    /// GPU power: `utilisation` (follows the tenants' actual utilisation; docs/semantics.md) or `reservation` (any reservation draws full power, the reference simulator's model).
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
    /// Most branch-and-price tree nodes of each window, best first: raises a window's bound from the configuration LP's towards the least power of integer wake-ups and placements (status `windows_integer` when every tree closes, `branch_limit` when this cap stopped one; the same on every run). 0: the LP's bound alone.
    #[arg(long, value_name = "N", default_value_t = gapbench::replay_bound::DEFAULT_BOUND_BRANCH_NODES, requires = "bound")]
    bound_branch_nodes: usize,
    /// Also solve each window of the bound exactly with the per-node MIP (same power model, same tasks, each MIP limited like one window's column generation) and print column generation's bound, the MIP's and the replay's own energy per window and in total: the bound's own tightness. Small clusters only (at most 16 nodes; take a slice with --gpus). Written to `bound_check_mip.json`.
    #[arg(long, requires = "bound")]
    bound_check_mip: bool,
    #[command(flatten, next_help_heading = "Which part of the cluster and workload")]
    selection: SelectionFlags,
    #[command(
        flatten,
        next_help_heading = "Budgeted policies (powerflow, greenflow, zeus, fifo-full-clock)"
    )]
    budget: BudgetFlags,
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

/// `gapbench replay`.
pub fn replay(args: ReplayArgs) -> Result<()> {
    let policy = args.policy.trim();
    let budget = BudgetArgs::from(args.budget.clone());
    args.check_flags(policy, &budget)?;
    let seeds: Vec<u64> = match &args.seeds {
        Some(range) => range.clone().collect(),
        None => vec![args.seed],
    };
    let inputs = args.load_inputs(&seeds)?;
    // Only the planners run rounds (check_policy refused --round for the others).
    let round = is_planner(policy).then_some(budget.round_s());
    let first = inputs.workload(seeds[0])?;
    gapbench::limits::check_replay(&first, seeds.len(), args.tick, round)?;
    let settings = budget.policy_settings()?;
    let options = args.options(&budget, &first, seeds[0])?;
    for &seed in &seeds {
        gapbench::replay::check_budget(&inputs, &options, seed)?;
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("results/replay-{}", slug(policy))));
    println!(
        "gapbench replay: policy {policy} on {} nodes ({} GPUs), {} seed(s)",
        inputs.cluster.len(),
        inputs.cluster.gpu_count(),
        seeds.len()
    );
    let _held = gapbench::out_dir::OutDir::acquire(&out)?;
    let start = Instant::now();
    let mut runs = run_replays(&inputs, policy, &settings, &options, &seeds)?;
    let bounds = match args.bound_options()? {
        Some(bound) => {
            gapbench::replay_bound::bound_runs(&inputs, policy, &options, bound, &mut runs)?
        }
        None => Vec::new(),
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
        "carbon": budget.carbon,
        "policy_settings": format!("{settings:?}"),
        "time_rules": gapbench_replay::TIME_RULES,
    });
    let per_seed = seeds.len() > 1;
    let summary = write_replay_outputs(&out, &inputs, &run_settings, &runs, per_seed)?;
    print_table(&summary);
    gapbench::replay_bound::write_bounds(&out, &runs, &bounds, per_seed)?;
    args.check_bounds_by_mip(&inputs, policy, &options, &runs, &out, per_seed)?;
    remove_stale_outputs(&out, &seeds, args.bound, args.bound_check_mip)?;
    print_fates(&summary);
    finish(&runs, start, &summary, &out)
}

/// Whether `policy` is a planner (a budgeted policy of the time-policy table): it decides
/// for every waiting task at each round, so it takes no --queue nor --on-full, and runs
/// rounds.
fn is_planner(policy: &str) -> bool {
    gapbench_replay::policies::is_budgeted(policy)
}

/// `policy` as a folder name: anything but letters, digits and `-` becomes `_`.
fn slug(policy: &str) -> String {
    policy
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The closing line, and an error when a replay stopped early (its outputs are written).
fn finish(runs: &[SeedReplay], start: Instant, summary: &ReplaySummary, out: &Path) -> Result<()> {
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

impl ReplayArgs {
    /// Refuses flags the policy does not use and values no replay can take.
    fn check_flags(&self, policy: &str, budget: &BudgetArgs) -> Result<()> {
        budget.check_policy(policy)?;
        if is_planner(policy) {
            for (flag, given) in [
                ("--queue", self.queue.is_some()),
                ("--on-full", self.on_full.is_some()),
            ] {
                if given {
                    bail!("`{policy}` does not use {flag}: it decides for every waiting task at each round (shortest remaining time first); leave it out");
                }
            }
        }
        if !(0.0..=1.0).contains(&self.sleep_fraction) {
            bail!(
                "--sleep-fraction takes a share between 0 and 1; got {}",
                self.sleep_fraction
            );
        }
        for (flag, value) in [("--until", self.until), ("--tick", self.tick)] {
            if value.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
                bail!("{flag} takes a positive number of seconds");
            }
        }
        if !(self.restart_overhead.is_finite() && self.restart_overhead >= 0.0) {
            bail!("--restart-overhead takes a non-negative number of seconds");
        }
        Ok(())
    }

    /// The replay's cluster and task source, checked against what the machine can hold
    /// and what `--bound-check-mip` can solve; prints the loader's warnings.
    fn load_inputs(&self, seeds: &[u64]) -> Result<ReplayInputs> {
        let source = match self.eaco_servers {
            Some(servers) => TimedSource::Eaco {
                servers,
                jobs: self.eaco_jobs,
                jobs_per_hour: self.eaco_jobs_per_hour,
            },
            None => TimedSource::Openb {
                nodes: self.nodes.clone(),
                gpu_models: self.gpu_models.clone(),
                tasks: self.tasks.clone(),
            },
        };
        if let Some(servers) = self.eaco_servers {
            let flags = ["--eaco-servers", "--eaco-jobs"];
            gapbench::limits::check_eaco_setup(servers, self.eaco_jobs, seeds.len(), flags)?;
        }
        let inputs = ReplayInputs::load(
            source,
            self.arrival_scale,
            self.selection.into(),
            input_rules(self.input_rules),
            cpu_power(self.cpu_power),
        )?;
        for warning in inputs.warnings() {
            eprintln!("warning: {warning}");
        }
        let most_nodes = gapbench::replay_bound::MAX_MIP_CHECK_NODES;
        if self.bound_check_mip && inputs.cluster.len() > most_nodes {
            bail!(
                "--bound-check-mip takes at most {most_nodes} nodes (this cluster has {}): take a slice with --gpus",
                inputs.cluster.len()
            );
        }
        Ok(inputs)
    }

    /// The engine's options; `first` is the first seed's workload (a synthetic carbon
    /// series must cover its last end).
    fn options(
        &self,
        budget: &BudgetArgs,
        first: &TimedWorkload,
        seed: u64,
    ) -> Result<ReplayOptions> {
        let last_end_s = first
            .tasks
            .iter()
            .map(|t| t.arrival_s + t.duration_s)
            .fold(0.0, f64::max);
        Ok(ReplayOptions {
            on_full: match self.on_full.unwrap_or(OnFullArg::Queue) {
                OnFullArg::Queue => OnFull::Queue,
                OnFullArg::Fail => OnFull::Fail,
            },
            queue: match self.queue.unwrap_or(QueueArg::Fifo) {
                QueueArg::Fifo => QueueDiscipline::Fifo,
                QueueArg::Backfill => QueueDiscipline::Backfill,
            },
            power: PowerSettings {
                gpu_mode: match self.gpu_power {
                    GpuPowerArg::Utilisation => GpuPowerMode::Utilisation,
                    GpuPowerArg::Reservation => GpuPowerMode::Reservation,
                },
                idle: match self.idle {
                    IdleArg::AlwaysOn => IdlePolicy::AlwaysOn,
                    IdleArg::SleepWhenEmpty => IdlePolicy::SleepWhenEmpty,
                },
                sleep_fraction: self.sleep_fraction,
            },
            fidelity: budget.fidelity(),
            budget: budget.budget()?,
            carbon: budget.carbon_series(last_end_s, seed)?,
            restart_overhead_s: self.restart_overhead,
            tick_s: self.tick,
            until_s: self.until,
            ..ReplayOptions::default()
        })
    }

    /// The options of `--bound`, its flags checked; `None` without `--bound`.
    fn bound_options(&self) -> Result<Option<BoundOptions>> {
        if !self.bound {
            return Ok(None);
        }
        if !(self.bound_time_limit.is_finite() && self.bound_time_limit >= 0.0) {
            bail!("--bound-time-limit takes a non-negative number of seconds");
        }
        if self.bound_windows == 0 {
            bail!("--bound-windows takes a positive count");
        }
        if self.bound_pricing_rounds == 0 {
            bail!("--bound-pricing-rounds takes a positive count");
        }
        Ok(Some(bound_options(
            self.bound_time_limit,
            self.bound_windows,
            Some(self.bound_pricing_rounds),
            self.branch_nodes(),
        )))
    }

    /// `--bound-branch-nodes`, 0 for none.
    fn branch_nodes(&self) -> Option<usize> {
        (self.bound_branch_nodes > 0).then_some(self.bound_branch_nodes)
    }

    /// `--bound-check-mip`: each window of the bound solved by the per-node MIP too.
    fn check_bounds_by_mip(
        &self,
        inputs: &ReplayInputs,
        policy: &str,
        options: &ReplayOptions,
        runs: &[SeedReplay],
        out: &Path,
        per_seed: bool,
    ) -> Result<()> {
        if !self.bound_check_mip {
            return Ok(());
        }
        let bound = bound_options(
            self.bound_time_limit,
            self.bound_windows,
            Some(self.bound_pricing_rounds),
            self.branch_nodes(),
        );
        gapbench::replay_bound::check_runs(inputs, policy, options, bound, runs, out, per_seed)
    }
}

/// Removes what an earlier replay into `out` wrote and this one did not (docs/refusals.md: a reused
/// `--out` holds only this run's outputs): the other layout's files and folders, the
/// `seed-N/` folders of other seeds, and bound files this run did not compute.
fn remove_stale_outputs(
    out: &Path,
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
