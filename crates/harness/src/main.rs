//! `gapbench`: how far online GPU-datacenter schedulers are from exact optima.
//!
//! A thin dispatcher: each command's flags, the mapping onto the library's options and what
//! it prints live in `cli/<command>.rs`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

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
    Run(cli::run::RunArgs),
    /// Run an experiment matrix (workloads/*.toml): traces × policies × seeds, exact-gap
    /// studies and time-mode replays (`[replay]`), in parallel, resumable, and aggregate it
    /// into tidy CSVs, figures and REPORT.md.
    Bench(cli::bench::BenchArgs),
    /// Join the results folders of `bench --shard` runs and aggregate them.
    Merge(cli::bench::MergeArgs),
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
    Gap(cli::gap::GapArgs),
    /// Time mode: tasks arrive at their trace times, wait when nothing fits, run for their
    /// durations (slowed when co-located) and leave; energy (kWh), JCT, waits, deadline misses.
    ///
    /// Without --nodes/--tasks it replays the embedded openb-like default (durations,
    /// arrivals and QoS drawn per seed from statistics of the real default trace).
    #[command(after_long_help = gapbench_replay::TIME_RULES)]
    Replay(cli::replay::ReplayArgs),
    /// The exact JCT–energy (or JCT–carbon) lower envelope of a budgeted replay's jobs:
    /// frontier.csv (budget, bound on mean JCT, status), optionally the MIP on small
    /// instances and the budgeted policies' points against it.
    Frontier(cli::frontier::FrontierArgs),
    /// Redraw the figures (SVG, PDF, PNG), the LaTeX tables (tables/*.tex) and REPORT.md of a results folder from its CSVs (no re-run)
    Figures {
        /// The results folder (holds matrix.json, mean_grid.csv, …).
        dir: PathBuf,
        /// `paper`: 3.33 in / 7 in wide figures, 8–9 pt text, no titles (captions in `.txt` files beside them), the spread across seeds, the papers' policy names. Default: the spec's `[figures] style`, else `default`
        #[arg(long)]
        style: Option<String>,
        /// A policy's display name in figures and tables, `POLICY=NAME` (e.g. `expr:gpu_free_milli=MostFree`); repeatable
        #[arg(long = "name", value_name = "POLICY=NAME")]
        names: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => cli::run::run(args),
        Command::Replay(args) => cli::replay::replay(args),
        Command::Frontier(args) => cli::frontier::frontier(args),
        Command::Bench(args) => cli::bench::bench(args),
        Command::Merge(args) => cli::bench::merge(args),
        Command::Figures { dir, style, names } => {
            cli::figures::figures(&dir, style.as_deref(), &names)
        }
        Command::Gap(args) => cli::gap::gap(args),
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

    /// `docs/cli.md` is what the clap definitions print (`UPDATE_DOCS=1` rewrites it).
    #[test]
    fn cli_reference_matches_the_help() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/cli.md");
        let generated = cli::reference::markdown(Cli::command());
        if std::env::var_os("UPDATE_DOCS").is_some() {
            std::fs::write(&path, &generated).expect("docs/cli.md written");
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "docs/cli.md differs from `gapbench --help`: rerun with UPDATE_DOCS=1"
        );
    }

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
