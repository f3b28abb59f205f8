//! `gapbench run`: one policy's arrival sweep over seeds, written as curves, and a summary
//! table of it.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use gapbench::out_dir::OutDir;
use gapbench::run::{run_to_folder, RunTotals};
use gapbench::summary::Sample;
use gapbench_model::FailureReason;

use crate::cli::workload_flags::WorkloadArgs;

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    workload: WorkloadArgs,
    /// Output folder. Default: `results/run-<policy>`.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// `gapbench run`.
pub fn run(args: RunArgs) -> Result<()> {
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

/// The table of a run's samples at a few arrived shares, and its failures by reason.
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
