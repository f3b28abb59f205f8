//! `gapbench gap`: heuristic vs exact on the same snapshots of a policy's arrival sweep,
//! as a table per seed while it solves, and `gaps.csv`, `fronts.csv`, instance files.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;
use gapbench::export::Exporter;
use gapbench::gap::{
    format_row, gap_study_observed, parse_objectives, write_gap_outputs, FrontRow, GapMethod,
    GapRow, GapSettings, TABLE_HEADER,
};
use gapbench::out_dir::OutDir;
use gapbench::run::RunSettings;
use gapbench::workload::Workload;

use crate::cli::workload_flags::WorkloadArgs;

#[derive(Args)]
pub struct GapArgs {
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

impl GapArgs {
    /// The study's settings, validated.
    fn settings(&self) -> Result<GapSettings> {
        let settings = GapSettings {
            checkpoints: self.checkpoints.clone(),
            objectives: parse_objectives(&self.objectives)?,
            sample_nodes: self.sample_nodes,
            time_limit_s: self.time_limit,
            mip_rel_gap: self.mip_gap,
            threads: self.threads,
            pareto_points: self.pareto_points,
            front_time_limit_s: self.front_time_limit,
            exact_max_nodes: self.exact_max_nodes,
        };
        settings.validate()?;
        Ok(settings)
    }
}

/// `gapbench gap`.
pub fn gap(args: GapArgs) -> Result<()> {
    let method = GapMethod::parse(&args.method)?;
    let run = args.workload.settings()?;
    let workload = args.workload.load()?;
    workload.require_gpus()?;
    gapbench::run::check_sweep_memory(&workload, &run, 1)?;
    let seeds = args.workload.seeds();
    let settings = args.settings()?;
    if let Some(dir) = &args.export {
        gapbench::export::check_library(dir, &args.out)?;
    }
    let _held = OutDir::acquire(&args.out)?;
    println!(
        "gapbench gap: policy {} on {}",
        run.policy,
        workload.describe()
    );
    let study = Study {
        workload: &workload,
        run: &run,
        settings: &settings,
        method,
        export: args.export.as_deref(),
    };
    let (mut rows, mut pareto) = (Vec::new(), Vec::new());
    for &seed in &seeds {
        let (seed_rows, seed_pareto) = study.seed(seed)?;
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

/// One `gap` command's study, seed by seed.
struct Study<'a> {
    workload: &'a Workload,
    run: &'a RunSettings,
    settings: &'a GapSettings,
    method: GapMethod,
    export: Option<&'a Path>,
}

impl Study<'_> {
    /// Studies one seed, printing its rows as they are solved and exporting each solved
    /// snapshot when asked.
    fn seed(&self, seed: u64) -> Result<(Vec<GapRow>, Vec<FrontRow>)> {
        let cluster = gapbench::gap::study_cluster(self.workload, self.settings, seed)?;
        println!(
            "\nseed {seed}: {} nodes ({} GPUs){}",
            cluster.len(),
            cluster.gpu_count(),
            method_label(self.method, cluster.len(), self.settings.exact_max_nodes)
        );
        println!("{TABLE_HEADER}");
        let exporter = self.export.map(|dir| Exporter {
            dir,
            workload: self.workload,
            run: self.run,
            settings: self.settings,
            seed,
        });
        gap_study_observed(
            self.workload,
            self.run,
            self.settings,
            self.method,
            seed,
            &mut |row| println!("{}", format_row(row)),
            &mut |solved| {
                if let Some(exporter) = &exporter {
                    let path = exporter.write(&solved)?;
                    println!("instance {}", path.display());
                }
                Ok(())
            },
        )
    }
}

/// How a cluster of `nodes` nodes is solved, as the seed's header says it.
fn method_label(method: GapMethod, nodes: usize, exact_max_nodes: usize) -> &'static str {
    match method {
        GapMethod::Relaxation => " — relaxation bounds",
        GapMethod::ColumnGeneration => " — column generation",
        GapMethod::PerNode => " — per-node model",
        GapMethod::Auto if nodes > exact_max_nodes => " — column generation",
        GapMethod::Auto => " — per-node model",
    }
}
