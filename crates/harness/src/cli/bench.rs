//! `gapbench bench` (and `--status`) and `gapbench merge`: the experiment matrix, run by
//! the library's runner; here its flags and the lines that say what it did.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;

#[derive(Args)]
pub struct BenchArgs {
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
pub struct MergeArgs {
    /// The merged results folder.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Results folders of the shards.
    #[arg(required = true, value_name = "SHARD_DIR")]
    shards: Vec<PathBuf>,
}

/// Parses `--shard I/N`.
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

/// `gapbench bench`, and `bench --status`.
pub fn bench(args: BenchArgs) -> Result<()> {
    if !args.status.is_empty() {
        print!(
            "{}",
            gapbench::bench::status::Status::of(&args.status)?.render()
        );
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
    let outcome = gapbench::bench(&options)?;
    report_outcome(&outcome)
}

/// This invocation as a command a user can paste in the project: `cargo xtask` forwards
/// its arguments to this binary unchanged.
fn reproduce_command() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    format!("cargo xtask {}", args.join(" "))
}

/// `gapbench merge`.
pub fn merge(args: MergeArgs) -> Result<()> {
    let outcome = gapbench::bench::merge(&args.out, &args.shards)?;
    report_outcome(&outcome)
}

/// What a bench or merge did, in a few lines.
fn report_outcome(outcome: &gapbench::bench::BenchOutcome) -> Result<()> {
    if outcome.matrix.stand_in {
        println!("note: the embedded openb-like workload stood in for every trace (no traces folder was given or found, or --stand-in was asked); REPORT.md says so at its top");
    }
    for line in outcome.summary_lines() {
        println!("{line}");
    }
    if !outcome.complete {
        println!("the matrix is not complete yet: run the other shards, then `gapbench merge`");
    }
    Ok(())
}
