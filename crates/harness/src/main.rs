//! `gapbench`: how far online GPU-datacenter schedulers are from exact optima.

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use gapbench::out_dir::OutDir;
use gapbench::run::{run_to_folder, RunSettings, RunTotals};
use gapbench::summary::Sample;
use gapbench::workload::Workload;
use gapbench_model::{CpuPowerProfile, FailureReason, InputRules, NodeOrder, TaskOrder};
use gapbench_online::PolicySpec;

mod replay_command;

#[derive(Parser)]
#[command(
    name = "gapbench",
    version,
    about = "How far online GPU-datacenter scheduling heuristics are from exact optima, in power and GPU fragmentation"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one policy on one workload (an arrival sweep) and write its curves.
    ///
    /// Without --nodes/--tasks it uses the embedded openb-like default: the 1,213-node
    /// openb GPU cluster and the task shapes of the openb `default` trace.
    Run(RunArgs),
    /// Run an experiment matrix (workloads/*.toml): traces × policies × seeds, exact-gap
    /// studies and time-mode replays (`[replay]`), in parallel, resumable, and aggregate it
    /// into tidy CSVs, figures and REPORT.md.
    Bench(BenchArgs),
    /// Join the results folders of `bench --shard` runs and aggregate them.
    Merge(MergeArgs),
    /// Heuristic vs exact on the same snapshots: at each checkpoint of the policy's arrival
    /// sweep, solve power, allocation and fragmentation exactly (HiGHS) and report each gap
    /// with its status and proven bound.
    ///
    /// Statuses: `optimal` (incumbent = proven bound); `gap_limit` (within the requested
    /// --mip-gap); `lp_bound` (column generation converged: the bound is at least the
    /// configuration LP's proven optimum, and branching in the time left did not close the
    /// integer gap between it and the incumbent); `time_limit` (the clock stopped the solve; the bound
    /// could still rise); `relaxation_bound` (a by-node-type relaxation bounds the
    /// heuristic's own placement). Every gap is an interval [vs incumbent, vs bound].
    Gap(GapArgs),
    /// Time mode: tasks arrive at their trace times, wait when nothing fits, run for their
    /// durations (slowed when co-located) and leave; energy (kWh), JCT, waits, deadline misses.
    ///
    /// Without --nodes/--tasks it replays the embedded openb-like default (durations,
    /// arrivals and QoS drawn per seed from statistics of the real default trace).
    #[command(after_long_help = gapbench_replay::TIME_RULES)]
    Replay(replay_command::ReplayArgs),
    /// The exact JCT–energy (or JCT–carbon) lower envelope of a budgeted replay's jobs:
    /// frontier.csv (budget, bound on mean JCT, status), optionally the MIP on small
    /// instances and the budgeted policies' points against it.
    Frontier(gapbench::frontier::FrontierArgs),
    /// Redraw the figures and REPORT.md of a results folder from its CSVs (no re-run).
    Figures {
        /// The results folder (holds matrix.json, mean_grid.csv, …).
        dir: PathBuf,
    },
}

#[derive(Args)]
struct GapArgs {
    #[command(flatten)]
    workload: WorkloadArgs,
    /// Checkpoints: arrived GPU demand in % of the (sub-)cluster's GPU capacity.
    #[arg(
        long,
        value_name = "PCTS",
        value_delimiter = ',',
        default_value = "50,80,100,130"
    )]
    checkpoints: Vec<f64>,
    /// Objectives to solve: power (min total power), alloc (max allocated GPU), frag (min FGD fragmentation).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "power,alloc,frag"
    )]
    objectives: Vec<String>,
    /// Draw a sub-cluster of N nodes with the cluster's node-type mix (seeded) and run the policy on a proportionally scaled workload.
    #[arg(long, value_name = "N")]
    sample_nodes: Option<usize>,
    /// Time limit per solve, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    time_limit: f64,
    /// Stop a solve at this relative gap between incumbent and bound (0 = prove optimality;
    /// a solve that cannot says why in its status: `time_limit` or `lp_bound`).
    #[arg(long, value_name = "REL", default_value_t = 0.0)]
    mip_gap: f64,
    /// Points of the power–fragmentation front per checkpoint (0 = none): the two end
    /// points and K − 2 ε-constraint solves (column generation with the power cap as a
    /// master row, on every cluster size). Only distinct points are reported, at most K: a
    /// cap whose point another already shows gives way to a placement found between them
    /// (status `time_limit` unless its bound meets it: no solve of its own).
    #[arg(long, value_name = "K", default_value_t = 5)]
    pareto_points: usize,
    /// Time limit of each ε-constraint solve of the front (the end points are the
    /// objectives' own solves), in seconds (default: --time-limit).
    #[arg(long, value_name = "SECONDS")]
    front_time_limit: Option<f64>,
    /// HiGHS threads per solve (default: HiGHS's choice).
    #[arg(long, value_name = "N")]
    threads: Option<u32>,
    /// Largest cluster solved with the exact per-node model under `--method auto`; larger clusters get column generation.
    #[arg(long, value_name = "N", default_value_t = 128)]
    exact_max_nodes: usize,
    /// How to solve: `auto` (per-node up to --exact-max-nodes, else cg), `cg` (column generation), `per-node`, or `relaxation` (by-type bounds for power and alloc).
    #[arg(long, value_name = "METHOD", default_value = "auto")]
    method: String,
    /// Output folder (gaps.csv, fronts.csv, manifest.json).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Also write each snapshot as a self-contained instance file (node types, task shapes,
    /// power and fragment models, best placement, bound and status per objective) into DIR:
    /// `<policy>-seed<seed>[-n<nodes>]-chk<checkpoint>.json`, and rewrite DIR/index.csv (one
    /// row per instance and objective); format in workloads/instances/README.md.
    #[arg(long, value_name = "DIR")]
    export: Option<PathBuf>,
}

fn gap(args: GapArgs) -> Result<()> {
    use gapbench::export::Exporter;
    use gapbench::gap::{
        format_row, gap_study_observed, parse_objectives, write_gap_outputs, GapMethod,
        GapSettings, TABLE_HEADER,
    };
    let method = GapMethod::parse(&args.method)?;
    let run = args.workload.settings()?;
    let workload = args.workload.load()?;
    workload.require_gpus()?;
    gapbench::run::check_sweep_memory(&workload, &run, 1)?;
    let seeds = args.workload.seeds();
    let settings = GapSettings {
        checkpoints: args.checkpoints,
        objectives: parse_objectives(&args.objectives)?,
        sample_nodes: args.sample_nodes,
        time_limit_s: args.time_limit,
        mip_rel_gap: args.mip_gap,
        threads: args.threads,
        pareto_points: args.pareto_points,
        front_time_limit_s: args.front_time_limit,
        exact_max_nodes: args.exact_max_nodes,
    };
    settings.validate()?;
    if let Some(dir) = &args.export {
        gapbench::export::check_library(dir, &args.out)?;
    }
    let _held = OutDir::acquire(&args.out)?;
    println!(
        "gapbench gap: policy {} on {}",
        run.policy,
        workload.describe()
    );
    let (mut rows, mut pareto) = (Vec::new(), Vec::new());
    for &seed in &seeds {
        let cluster = gapbench::gap::study_cluster(&workload, &settings, seed)?;
        println!(
            "\nseed {seed}: {} nodes ({} GPUs){}",
            cluster.len(),
            cluster.gpu_count(),
            match method {
                GapMethod::Relaxation => " — relaxation bounds",
                GapMethod::ColumnGeneration => " — column generation",
                GapMethod::PerNode => " — per-node model",
                GapMethod::Auto if cluster.len() > settings.exact_max_nodes => {
                    " — column generation"
                }
                GapMethod::Auto => " — per-node model",
            }
        );
        println!("{TABLE_HEADER}");
        let exporter = args.export.as_deref().map(|dir| Exporter {
            dir,
            workload: &workload,
            run: &run,
            settings: &settings,
            seed,
        });
        let (seed_rows, seed_pareto) = gap_study_observed(
            &workload,
            &run,
            &settings,
            method,
            seed,
            &mut |row| println!("{}", format_row(row)),
            &mut |solved| {
                if let Some(exporter) = &exporter {
                    let path = exporter.write(&solved)?;
                    println!("instance {}", path.display());
                }
                Ok(())
            },
        )?;
        rows.extend(seed_rows);
        pareto.extend(seed_pareto);
    }
    write_gap_outputs(
        &args.out, &workload, &run, &settings, &seeds, &rows, &pareto,
    )?;
    println!("\npower and frag gaps: % of the optimum (total power incl. idle; whole Σ F(n)); alloc: percentage points of GPU capacity");
    println!("results in {}", args.out.display());
    Ok(())
}

#[derive(Args)]
struct BenchArgs {
    /// The experiment spec. Default: workloads/paper.toml (workloads/quick.toml with --quick).
    #[arg(long, value_name = "FILE")]
    spec: Option<PathBuf>,
    /// Use workloads/quick.toml: default trace, 3 seeds, four policies, a small gap study, a few time-mode replays.
    #[arg(long, conflicts_with = "spec")]
    quick: bool,
    /// Folder of the openb CSVs; it must hold every trace the spec names. Default: $GAPBENCH_TRACES, else ../shared/traces/openb; with neither, the embedded openb-like workload stands in (and REPORT.md says so at its top).
    #[arg(long, value_name = "DIR")]
    traces: Option<PathBuf>,
    /// Run the embedded openb-like workload in place of every trace, even with traces at hand (REPORT.md says so at its top).
    #[arg(long)]
    stand_in: bool,
    /// Worker threads (default: all cores). Runs are parallel; each run is sequential and deterministic.
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Run only this share of the cells: `I/N` takes cells i with i mod N = I (0-based), e.g. a Slurm array index.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<(usize, usize)>,
    /// Results folder. Default: results/<spec name>-<UTC date>.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Run nothing: print how far the bench in these folders (one, or its shards') has got —
    /// cells done / total per kind, the slowest cells, an estimate of the time left.
    #[arg(long, value_name = "DIR", num_args = 1.., conflicts_with_all = ["spec", "quick", "shard", "out"])]
    status: Vec<PathBuf>,
}

#[derive(Args)]
struct MergeArgs {
    /// The merged results folder.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Results folders of the shards.
    #[arg(required = true, value_name = "SHARD_DIR")]
    shards: Vec<PathBuf>,
}

fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let (index, count) = text
        .split_once('/')
        .ok_or_else(|| format!("`{text}` is not I/N"))?;
    let (index, count): (usize, usize) = (
        index
            .trim()
            .parse()
            .map_err(|_| format!("`{index}` is not a number"))?,
        count
            .trim()
            .parse()
            .map_err(|_| format!("`{count}` is not a number"))?,
    );
    if count == 0 || index >= count {
        return Err(format!("shard {text}: need 0 <= I < N"));
    }
    Ok((index, count))
}

fn bench(args: BenchArgs) -> Result<()> {
    if !args.status.is_empty() {
        print!("{}", gapbench::status::Status::of(&args.status)?.render());
        return Ok(());
    }
    if let Some(traces) = args.traces.as_deref().filter(|t| t.exists() && !t.is_dir()) {
        bail!(
            "--traces {} is not a folder: give the folder that holds the openb CSVs",
            traces.display()
        );
    }
    let spec = args.spec.unwrap_or_else(|| {
        PathBuf::from(if args.quick {
            "workloads/quick.toml"
        } else {
            "workloads/paper.toml"
        })
    });
    let options = gapbench::bench::BenchOptions {
        spec,
        traces_dir: args.traces,
        stand_in: args.stand_in,
        out: args.out,
        jobs: args.jobs,
        shard: args.shard,
        progress: true,
        command: reproduce_command(),
    };
    let outcome = gapbench::bench::run_bench(&options)?;
    report_outcome(&outcome)
}

/// This invocation as a command a user can paste in the project: `cargo xtask` forwards
/// its arguments to this binary unchanged.
fn reproduce_command() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    format!("cargo xtask {}", args.join(" "))
}

fn merge(args: MergeArgs) -> Result<()> {
    let outcome = gapbench::bench::merge(&args.out, &args.shards)?;
    report_outcome(&outcome)
}

fn report_outcome(outcome: &gapbench::bench::BenchOutcome) -> Result<()> {
    if outcome.matrix.stand_in {
        println!("note: the embedded openb-like workload stood in for every trace (no traces folder was given or found, or --stand-in was asked); REPORT.md says so at its top");
    }
    println!(
        "{} of {} runs done now ({} already finished) in {:.1} s; results in {}",
        outcome.cells_run,
        outcome.cells_total,
        outcome.cells_skipped,
        outcome.sweep_seconds,
        outcome.out.display()
    );
    if outcome.gap_studies_total > 0 {
        println!(
            "{} of {} exact-gap studies done now in {:.1} s",
            outcome.gap_studies_run, outcome.gap_studies_total, outcome.gap_seconds
        );
    }
    if outcome.replays_total > 0 {
        println!(
            "{} of {} time-mode replays done now in {:.1} s",
            outcome.replays_run, outcome.replays_total, outcome.replay_seconds
        );
    }
    if outcome.budget_cells_total > 0 {
        println!(
            "{} of {} budget-study cells (replays and frontiers) done now in {:.1} s",
            outcome.budget_replays, outcome.budget_cells_total, outcome.budget_seconds
        );
    }
    if !outcome.complete {
        println!("the matrix is not complete yet: run the other shards, then `gapbench merge`");
    }
    Ok(())
}

#[derive(Args)]
struct WorkloadArgs {
    /// Node list CSV in the openb format (sn,cpu_milli,memory_mib,gpu,model). Default: the embedded openb-like cluster.
    #[arg(long, value_name = "FILE")]
    nodes: Option<PathBuf>,
    /// Task list CSV in the openb format (name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,…]). Default: the embedded openb-like workload.
    #[arg(long, value_name = "FILE")]
    tasks: Option<PathBuf>,
    // The policy list is derived from the registration table of the online crate.
    #[arg(long, value_name = "SPEC", default_value = "fgd", help = gapbench_online::policy_help())]
    policy: String,
    /// Tune total GPU demand to RATIO × cluster GPU capacity (cloning or dropping random tasks); `none` keeps the workload as is.
    #[arg(long, value_name = "RATIO", default_value = "1.3")]
    tune: String,
    /// The seed of the run's random choices (arrival order, tuning, node tie-break order).
    #[arg(long, value_name = "N", default_value_t = 42, conflicts_with = "seeds")]
    seed: u64,
    /// Several seeds, e.g. `42..51` (inclusive): runs them in parallel and writes means too.
    #[arg(long, value_name = "A..B", value_parser = parse_seed_range)]
    seeds: Option<RangeInclusive<u64>>,
    /// Arrival order: `shuffled` (sort by name, seeded shuffle, then tune — the reference's) or `as-listed` (file order, no shuffle, no tuning).
    #[arg(long, value_enum, default_value_t = TaskOrderArg::Shuffled)]
    task_order: TaskOrderArg,
    /// Who wins a tie between equal top scores: `random` (a seeded node priority order — the reference's) or `as-listed` (the node listed first).
    #[arg(long, value_enum, default_value_t = NodeOrderArg::Random)]
    node_order: NodeOrderArg,
    /// CPU power profile: `reference` (every node a Xeon E5-2682 v4, as the reference) or `by-gpu-model` (CPU model guessed from the GPU model).
    #[arg(long, value_enum, default_value_t = CpuPowerArg::Reference)]
    cpu_power: CpuPowerArg,
    /// Task values the reference simulator converts (gpu_milli above 1000 → 1000; GPU fields of a task without GPU count or milli dropped): `reference` converts them as it does, counts each kind and prints a warning (also in manifest.json); `strict` rejects such a row with its file, line and column.
    #[arg(long, value_enum, default_value_t = InputRulesArg::Reference)]
    input_rules: InputRulesArg,
}

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    workload: WorkloadArgs,
    /// Output folder. Default: `results/run-<policy>`.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum TaskOrderArg {
    Shuffled,
    AsListed,
}

#[derive(Clone, Copy, ValueEnum)]
enum NodeOrderArg {
    Random,
    AsListed,
}

#[derive(Clone, Copy, ValueEnum)]
enum InputRulesArg {
    Reference,
    Strict,
}

#[derive(Clone, Copy, ValueEnum)]
enum CpuPowerArg {
    Reference,
    ByGpuModel,
}

fn parse_seed_range(text: &str) -> Result<RangeInclusive<u64>, String> {
    let (a, b) = text
        .split_once("..")
        .ok_or_else(|| format!("`{text}` is not a range like 42..51"))?;
    let parse = |s: &str| {
        s.trim()
            .trim_start_matches('=')
            .parse::<u64>()
            .map_err(|_| format!("`{s}` is not a seed"))
    };
    let (a, b) = (parse(a)?, parse(b)?);
    if a > b {
        return Err(format!("empty seed range {text}"));
    }
    gapbench_results::check_seed_range(a, b).map_err(|e| e.to_string())?;
    Ok(a..=b)
}

impl WorkloadArgs {
    fn seeds(&self) -> Vec<u64> {
        match &self.seeds {
            Some(range) => range.clone().collect(),
            None => vec![self.seed],
        }
    }

    fn settings(&self) -> Result<RunSettings> {
        let policy: PolicySpec = self.policy.parse().map_err(anyhow::Error::msg)?;
        let tune = match self.tune.trim() {
            "none" => None,
            text => match text.parse::<f64>() {
                Ok(ratio) if ratio.is_finite() && ratio > 0.0 => Some(ratio),
                _ => bail!("--tune takes a positive ratio such as 1.3, or `none`; got `{text}`"),
            },
        };
        let task_order = match self.task_order {
            TaskOrderArg::Shuffled => TaskOrder::Shuffled,
            TaskOrderArg::AsListed => TaskOrder::AsListed,
        };
        let node_order = match self.node_order {
            NodeOrderArg::Random => NodeOrder::Random,
            NodeOrderArg::AsListed => NodeOrder::AsListed,
        };
        Ok(RunSettings::new(policy, tune, task_order, node_order))
    }

    fn load(&self) -> Result<Workload> {
        let cpu_power = match self.cpu_power {
            CpuPowerArg::Reference => CpuPowerProfile::Reference,
            CpuPowerArg::ByGpuModel => CpuPowerProfile::ByGpuModel,
        };
        let rules = match self.input_rules {
            InputRulesArg::Reference => InputRules::Reference,
            InputRulesArg::Strict => InputRules::Strict,
        };
        let workload = Workload::load(
            self.nodes.as_deref(),
            self.tasks.as_deref(),
            cpu_power,
            rules,
        )?;
        for warning in workload.warnings() {
            eprintln!("warning: {warning}");
        }
        Ok(workload)
    }
}

fn cpu_power(arg: CpuPowerArg) -> CpuPowerProfile {
    match arg {
        CpuPowerArg::Reference => CpuPowerProfile::Reference,
        CpuPowerArg::ByGpuModel => CpuPowerProfile::ByGpuModel,
    }
}

fn input_rules(arg: InputRulesArg) -> InputRules {
    match arg {
        InputRulesArg::Reference => InputRules::Reference,
        InputRulesArg::Strict => InputRules::Strict,
    }
}

fn run(args: RunArgs) -> Result<()> {
    let settings = args.workload.settings()?;
    let workload = args.workload.load()?;
    workload.require_gpus()?;
    let seeds = args.workload.seeds();
    gapbench::run::check_sweep_memory(
        &workload,
        &settings,
        rayon::current_num_threads().min(seeds.len()),
    )?;
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from(format!("results/run-{}", settings.policy_spec.slug())));
    let _held = OutDir::acquire(&out)?;
    println!(
        "gapbench run: policy {} on {}",
        settings.policy,
        workload.describe()
    );
    let start = Instant::now();
    let totals = run_to_folder(
        &out,
        &workload,
        &settings,
        &seeds,
        args.workload.seeds.is_some(),
    )?;
    print_summary(&totals);
    println!(
        "{} run(s) in {:.2} s wall ({:.3} s per run on average); results in {}",
        totals.seeds,
        start.elapsed().as_secs_f64(),
        totals.run_seconds / totals.seeds as f64,
        out.display()
    );
    Ok(())
}

fn print_summary(totals: &RunTotals) {
    println!(
        "\n{}: values when arrived GPU demand reaches a share of cluster GPU capacity",
        totals.label
    );
    println!(
        "{:>10} {:>9} {:>11} {:>12} {:>8}",
        "arrived %", "alloc %", "frag ratio", "power kW", "failed"
    );
    let row = |s: &Sample| {
        println!(
            "{:>10.1} {:>9.2} {:>10.2}% {:>12.1} {:>8.0}",
            s.arrived_pct,
            s.alloc_pct,
            s.frag_ratio_pct,
            s.power_total_w / 1000.0,
            s.failed_tasks
        )
    };
    for a in [25, 50, 80, 100] {
        if let Some(sample) = totals.grid.get(a) {
            row(sample);
        }
    }
    row(&totals.final_sample);
    println!(
        "{} of {} task events failed (never retried)",
        totals.failed, totals.events
    );
    for reason in FailureReason::ALL {
        if let Some(count) = totals.failures.get(reason.label()).filter(|c| **c > 0) {
            println!("  {count:>8}  {:<26} {}", reason.label(), reason.describe());
        }
    }
    println!();
}

fn figures(dir: &std::path::Path) -> Result<()> {
    if !dir.join(gapbench_results::MATRIX_JSON).is_file() {
        bail!(
            "{}: not a results folder (no {})",
            dir.display(),
            gapbench_results::MATRIX_JSON
        );
    }
    let _held = OutDir::acquire(dir)?;
    let figures = gapbench_report::redraw(dir)?;
    println!(
        "{} figure files and REPORT.md written in {}",
        figures.len(),
        dir.display()
    );
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run(args),
        Command::Replay(args) => replay_command::replay(args),
        Command::Frontier(args) => gapbench::limits::ensure_fits(
            &format!("--sweep {} evaluates that many budgets", args.sweep),
            args.sweep as f64,
            gapbench::limits::FRONTIER_POINT_BYTES,
            "budgets",
        )
        .and_then(|()| gapbench::frontier::frontier(&args)),
        Command::Bench(args) => bench(args),
        Command::Merge(args) => merge(args),
        Command::Figures { dir } => figures(&dir),
        Command::Gap(args) => gap(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_policy_help_lists_every_registered_policy() {
        let mut cli = Cli::command();
        for command in ["run", "gap"] {
            let sub = cli.find_subcommand_mut(command).expect("a subcommand");
            let policy = sub
                .get_arguments()
                .find(|a| a.get_id() == "policy")
                .expect("a --policy flag");
            let help = policy.get_help().expect("help text").to_string();
            for kind in gapbench_online::PolicyKind::ALL {
                assert!(
                    help.contains(&format!("`{}`", kind.name())),
                    "`gapbench {command} --help` misses {}",
                    kind.name()
                );
            }
            assert!(help.contains("expr:"), "{help}");
        }
    }
}
