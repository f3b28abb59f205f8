//! `gapbench frontier`: the exact JCT–energy (or JCT–carbon) lower envelope of a budgeted
//! replay's jobs (`gapbench::frontier`, `gapbench_bounds::frontier`), written as
//! `frontier.csv`; optionally the time-indexed MIP on small instances (`frontier.csv`'s
//! `mip_*` columns), column generation's per-budget record (`colgen.csv`), and the budgeted
//! policies' own points against it (`points.csv`: gap = (JCT_policy − JCT_bound)/JCT_bound
//! at the policy's own spend).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Result};
use clap::Args;
use gapbench::budget::BudgetArgs;
use gapbench::frontier::{
    frontier_instance, policy_points, BudgetSetup, FrontierKind, PolicyPoint,
};
use gapbench::io::{write_atomic, write_json};
use gapbench::manifest::Manifest;
use gapbench::replay::{ReplayInputs, Selection, TimedSource};
use gapbench_bounds::frontier::{
    ascent_frontier, column_generation_frontier, lagrangian_frontier, min_total_jct, AscentOptions,
    BudgetBound, ColumnGenerationOptions, Frontier, FrontierInstance, KnownSchedule,
    LagrangianOptions, WarmStart,
};
use gapbench_ilp::SolveOptions;
use gapbench_model::{CpuPowerProfile, InputRules};
use gapbench_results::csv_text::optional_number;
use gapbench_results::frontier_output::{ColgenRow, FrontierPointRow, FrontierRow};

use crate::cli::budget_flags::{BudgetFlags, FrontierKindArg, SelectionFlags};

#[derive(Args, Clone, Debug)]
pub struct FrontierArgs {
    /// Node list CSV. Default: the embedded openb-like cluster.
    #[arg(long, value_name = "FILE")]
    pub nodes: Option<PathBuf>,
    /// GPU-model file (CSV `model,idle_watts,full_watts[,memory_mib]`, docs/gpu-models.md): its models add to or override the built-in ones, so the node list may name them. Default: the built-in models.
    #[arg(long, value_name = "FILE")]
    pub gpu_models: Option<PathBuf>,
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
    pub selection: SelectionFlags,
    #[command(flatten)]
    pub budget: BudgetFlags,
    /// What the budget limits.
    #[arg(long, value_enum, default_value_t = FrontierKindArg::Energy)]
    pub kind: FrontierKindArg,
    /// Budgets to evaluate (kWh, or kg for --kind carbon), comma-separated. Default: an even sweep (see --sweep).
    #[arg(long, value_name = "B,…", value_delimiter = ',', value_parser = gapbench::flag_values::positive)]
    pub budgets: Vec<f64>,
    /// Points of the default sweep, from the least budget to the unconstrained schedules' budget.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub sweep: usize,
    /// Slot length of the frontier problem, seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0, value_parser = gapbench::flag_values::positive)]
    pub slot: f64,
    /// Merge runs of quiet base slots (where the trace-configuration load stays under half
    /// the GPUs and nothing would queue) into slots of up to this many seconds. Default: --slot (a uniform grid).
    #[arg(long, value_name = "SECONDS", value_parser = gapbench::flag_values::positive)]
    pub quiet_slot: Option<f64>,
    /// Tighten the envelope by column generation at each budget (and, with --policies, at each policy's own spend), warm-started from the Lagrangian sweep, or with --ascent from the dual ascent's schedules and prices; pricing is smoothed towards the best prices so far (--smoothing).
    #[arg(long)]
    pub colgen: bool,
    /// Push the Lagrangian envelope up at each of --budgets (and, with --policies, at each
    /// policy's own spend) by this many deterministic dual-ascent steps on the budget and
    /// capacity prices together, after --frontier-steps at the unconstrained end (no LP;
    /// with --colgen, its warm start).
    #[arg(long, value_name = "STEPS")]
    pub ascent: Option<usize>,
    /// Column generation's Wentges smoothing α in [0, 1): the weight of the best prices so
    /// far in each pricing point (0 = the master's duals alone).
    #[arg(long, value_name = "ALPHA", default_value_t = 0.8)]
    pub smoothing: f64,
    /// With --colgen: after each budget, the best schedule of the problem found (one
    /// schedule per job, within the slots and the budget): a list schedule in the master
    /// LP's order and, with --policies, the policies' replays, improved by a branch and bound
    /// over them and the master's columns within this many nodes (0: none); its mean JCT
    /// caps the frontier problem's optimum from above.
    #[arg(long, value_name = "NODES", requires = "colgen")]
    pub incumbent_nodes: Option<usize>,
    /// Budget prices and subgradient steps per price of the Lagrangian (with --colgen: of its warm start).
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub frontier_prices: usize,
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub frontier_steps: usize,
    /// Wall-clock limit of --colgen, seconds: the bound stays valid when it stops early.
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0, value_parser = gapbench::flag_values::positive)]
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
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0, value_parser = gapbench::flag_values::positive)]
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

/// The budgeted policies' budgets as shares of full-clock FIFO's spend (`--policies`).
const POLICY_FRACTIONS: [f64; 3] = [0.7, 0.85, 1.0];

/// `gapbench frontier`.
pub fn frontier(args: FrontierArgs) -> Result<()> {
    gapbench::limits::ensure_fits(
        &format!("--sweep {} evaluates that many budgets", args.sweep),
        args.sweep as f64,
        gapbench::limits::FRONTIER_POINT_BYTES,
        "budgets",
    )?;
    check_budget_flags(&args.budgets, args.sweep)?;
    let run = Run::prepare(&args)?;
    println!(
        "gapbench frontier: {} jobs on {} GPUs, {} slots of {} to {} s, budget in {}",
        run.instance.jobs.len(),
        run.instance.gpus / 1000,
        run.instance.slots.count(),
        args.slot,
        run.instance.slots.longest_s(),
        run.unit
    );
    let clock = Instant::now();
    // With --colgen or --ascent the policies run first: their own spends are budgets to
    // tighten at.
    let targeted = args.colgen || args.ascent.is_some();
    let early_points = if args.policies && targeted {
        Some(policy_points(
            &run.setup,
            run.kind,
            None,
            &POLICY_FRACTIONS,
        )?)
    } else {
        None
    };
    let mut targets = args.budgets.clone();
    targets.extend(
        early_points
            .iter()
            .flatten()
            .filter(|p| p.error.is_none())
            .map(|p| p.spend(run.kind)),
    );
    if targeted && targets.is_empty() {
        bail!("--colgen and --ascent tighten the envelope at chosen budgets: give --budgets or --policies");
    }
    let known = early_points
        .iter()
        .flatten()
        .filter_map(|p| p.runs.as_ref())
        .map(|runs| KnownSchedule::of_runs(&run.instance, runs))
        .collect::<Result<Vec<_>, _>>()
        .map_err(anyhow::Error::msg)?;
    let (frontier, colgen_rows) = run.envelope(&args, &targets, &known, clock)?;
    println!(
        "envelope in {:.2} s: least budget {:.3} {unit}, flat beyond {:.3} {unit}",
        clock.elapsed().as_secs_f64(),
        frontier.least_budget,
        frontier.unconstrained_budget,
        unit = run.unit
    );
    let mip_allowed = run.write_frontier_csv(&args, &frontier)?;
    if args.colgen {
        run.write_colgen_csv(&args, &colgen_rows)?;
    }
    if args.policies {
        let points = match early_points {
            Some(mut points) => {
                for point in points.iter_mut().filter(|p| p.error.is_none()) {
                    point.measure(&frontier, run.kind);
                }
                points
            }
            None => policy_points(&run.setup, run.kind, Some(&frontier), &POLICY_FRACTIONS)?,
        };
        write_points(&args, &points)?;
    }
    run.write_manifest(&args, mip_allowed)?;
    println!("frontier.csv in {}", args.out.display());
    Ok(())
}

/// A frontier command's loaded inputs, jobs and problem.
struct Run {
    inputs: ReplayInputs,
    setup: BudgetSetup,
    instance: FrontierInstance,
    kind: FrontierKind,
    budget: BudgetArgs,
    selection: Selection,
    /// The budget's unit: `kWh` or `kg`.
    unit: &'static str,
}

impl Run {
    fn prepare(args: &FrontierArgs) -> Result<Run> {
        let (budget, selection) = (BudgetArgs::from(args.budget.clone()), args.selection.into());
        let kind = FrontierKind::from(args.kind);
        let inputs = ReplayInputs::load(
            TimedSource::Openb {
                nodes: args.nodes.clone(),
                gpu_models: args.gpu_models.clone(),
                tasks: args.tasks.clone(),
            },
            args.arrival_scale,
            selection,
            InputRules::Reference,
            CpuPowerProfile::Reference,
        )?;
        let mut setup = BudgetSetup::new(&inputs, &budget, args.seed)?;
        // The policies' runs start the integer master.
        setup.options.record_segments = args.incumbent_nodes.is_some();
        let quiet_slot = args.quiet_slot.unwrap_or(args.slot);
        let instance = frontier_instance(&setup, kind, args.slot, quiet_slot)?;
        let unit = match kind {
            FrontierKind::Energy => "kWh",
            FrontierKind::Carbon => "kg",
        };
        Ok(Run {
            inputs,
            setup,
            instance,
            kind,
            budget,
            selection,
            unit,
        })
    }

    /// A total JCT over the instance's jobs as a mean, in hours.
    fn mean_hours(&self, total_s: Option<f64>) -> String {
        let jobs = self.instance.jobs.len() as f64;
        optional_number(total_s.map(|t| t / 3600.0 / jobs), 3)
    }

    /// The envelope by dual ascent, column generation or the Lagrangian (the default),
    /// with column generation's per-budget record.
    fn envelope(
        &self,
        args: &FrontierArgs,
        targets: &[f64],
        known: &[KnownSchedule],
        clock: Instant,
    ) -> Result<(Frontier, Vec<BudgetBound>)> {
        if args.colgen {
            return self.column_generation(args, targets, known);
        }
        if let Some(steps) = args.ascent {
            return Ok((self.ascent(args, steps, targets, clock)?, Vec::new()));
        }
        let options = LagrangianOptions {
            budget_prices: args.frontier_prices,
            subgradient_steps: args.frontier_steps,
        };
        let frontier = lagrangian_frontier(&self.instance, &options).map_err(anyhow::Error::msg)?;
        Ok((frontier, Vec::new()))
    }

    fn ascent(
        &self,
        args: &FrontierArgs,
        steps: usize,
        targets: &[f64],
        clock: Instant,
    ) -> Result<Frontier> {
        let options = AscentOptions {
            unconstrained_steps: args.frontier_steps,
            steps_per_budget: steps,
            progress: true,
        };
        let result =
            ascent_frontier(&self.instance, targets, &options).map_err(anyhow::Error::msg)?;
        println!(
            "dual ascent in {:.2} s: {} pricing passes",
            clock.elapsed().as_secs_f64(),
            result.evaluations
        );
        for &(budget, bound) in &result.budgets {
            println!(
                "  budget {budget:.3} {}: bound {} h",
                self.unit,
                self.mean_hours(bound)
            );
        }
        Ok(result.frontier)
    }

    fn column_generation(
        &self,
        args: &FrontierArgs,
        targets: &[f64],
        known: &[KnownSchedule],
    ) -> Result<(Frontier, Vec<BudgetBound>)> {
        let warm_start = match args.ascent {
            Some(steps) => WarmStart::Ascent(AscentOptions {
                unconstrained_steps: args.frontier_steps,
                steps_per_budget: steps,
                progress: false,
            }),
            None => WarmStart::Sweep(LagrangianOptions {
                budget_prices: args.frontier_prices,
                subgradient_steps: args.frontier_steps,
            }),
        };
        let options = ColumnGenerationOptions {
            warm_start,
            smoothing: args.smoothing,
            time_limit_s: args.colgen_time_limit,
            incumbent_nodes: args.incumbent_nodes,
            progress: true,
            ..ColumnGenerationOptions::default()
        };
        let result = column_generation_frontier(&self.instance, targets, known, &options)
            .map_err(anyhow::Error::msg)?;
        println!(
            "column generation in {:.2} s: {} columns, {} warm-start pricing passes",
            result.seconds, result.columns, result.warm_start_passes
        );
        for b in &result.budgets {
            println!(
                "  budget {:.3} {}: bound {} h, master LP {} h, integer schedule {} h, {} rounds, {} pricing passes, {}",
                b.budget,
                self.unit,
                self.mean_hours(b.total_jct_bound_s),
                self.mean_hours(b.master_total_jct_s),
                self.mean_hours(b.incumbent_total_jct_s),
                b.rounds,
                b.pricing_passes,
                b.status()
            );
        }
        Ok((result.frontier, result.budgets))
    }

    /// The budgets `frontier.csv` evaluates: `--budgets`, or `--sweep` points evenly from
    /// the least budget to the unconstrained one.
    fn budgets(args: &FrontierArgs, frontier: &Frontier) -> Vec<f64> {
        if !args.budgets.is_empty() {
            return args.budgets.clone();
        }
        let n = args.sweep;
        (0..n)
            .map(|k| {
                frontier.least_budget
                    + (frontier.unconstrained_budget - frontier.least_budget) * k as f64
                        / (n - 1) as f64
            })
            .collect()
    }

    /// Writes `frontier.csv`, solving the MIP at each budget when asked and the instance is
    /// small enough (else a warning); returns whether the MIP ran.
    fn write_frontier_csv(&self, args: &FrontierArgs, frontier: &Frontier) -> Result<bool> {
        let too_big = mip_too_big(
            self.instance.jobs.len(),
            u64::from(self.instance.gpus / 1000),
            args.mip_max_jobs,
            args.mip_max_gpus,
        );
        let mip_allowed = args.mip && too_big.is_none();
        if let Some(why) = too_big.filter(|_| args.mip) {
            eprintln!("warning: --mip skipped: {why}");
        }
        let mut csv = format!("{}\n", FrontierRow::csv_header());
        for budget in Run::budgets(args, frontier) {
            let mip = if mip_allowed {
                Some(self.mip_point(args, budget)?)
            } else {
                None
            };
            csv.push_str(&self.frontier_line(budget, frontier.mean_jct_bound(budget), mip));
        }
        write_atomic(&args.out.join("frontier.csv"), csv.as_bytes())?;
        Ok(mip_allowed)
    }

    /// The MIP's mean JCT, its bound, status and seconds at `budget`.
    fn mip_point(&self, args: &FrontierArgs, budget: f64) -> Result<MipPoint> {
        let options = SolveOptions {
            time_limit_s: args.mip_time_limit,
            threads: Some(1),
            ..SolveOptions::default()
        };
        let point = min_total_jct(&self.instance, budget, &options).map_err(anyhow::Error::msg)?;
        let jobs = self.instance.jobs.len() as f64;
        Ok(MipPoint {
            mean_jct_s: point.total_jct_s.map(|t| t / jobs),
            bound_mean_jct_s: point.bound_s.map(|t| t / jobs),
            status: point.status.label(),
            seconds: point.seconds,
        })
    }

    /// A row of `frontier.csv`.
    fn frontier_line(&self, budget: f64, bound: Option<f64>, mip: Option<MipPoint>) -> String {
        let status = if bound.is_some() {
            "bound"
        } else {
            "infeasible"
        };
        let (mip_mean, mip_bound, mip_status, mip_seconds) = match mip {
            Some(m) => (m.mean_jct_s, m.bound_mean_jct_s, m.status, Some(m.seconds)),
            None => (None, None, String::new(), None),
        };
        let row = FrontierRow {
            budget,
            unit: self.unit,
            mean_jct_bound_s: bound,
            status,
            mip_mean_jct_s: mip_mean,
            mip_bound_mean_jct_s: mip_bound,
            mip_status,
            mip_seconds,
        };
        format!("{}\n", row.csv_line())
    }

    /// Writes `colgen.csv`: column generation's bound, master LP, rounds and status per
    /// budget.
    fn write_colgen_csv(&self, args: &FrontierArgs, rows: &[BudgetBound]) -> Result<()> {
        let jobs = self.instance.jobs.len() as f64;
        let mut text = format!("{}\n", ColgenRow::csv_header());
        for b in rows {
            let row = ColgenRow {
                budget: b.budget,
                unit: self.unit,
                mean_jct_bound_s: b.total_jct_bound_s.map(|t| t / jobs),
                master_mean_jct_s: b.master_total_jct_s.map(|t| t / jobs),
                incumbent_mean_jct_s: b.incumbent_total_jct_s.map(|t| t / jobs),
                rounds: b.rounds,
                status: b.status().label(),
            };
            text.push_str(&row.csv_line());
            text.push('\n');
        }
        write_atomic(&args.out.join("colgen.csv"), text.as_bytes())
    }

    fn write_manifest(&self, args: &FrontierArgs, mip_allowed: bool) -> Result<()> {
        let settings = serde_json::json!({
            "kind": format!("{:?}", self.kind),
            "slot_s": args.slot,
            "fidelity": format!("{:?}", self.setup.options.fidelity),
            "horizon_end_s": self.setup.settings.horizon_end_s,
            "carbon": self.budget.carbon,
            "selection": self.selection,
            "arrival_scale": args.arrival_scale,
            "mip": mip_allowed,
            "quiet_slot_s": args.quiet_slot,
            "colgen": args.colgen.then_some(args.colgen_time_limit),
            "ascent_steps": args.ascent,
        });
        write_json(
            &args.out.join("manifest.json"),
            &Manifest::new(self.inputs.inputs.clone(), vec![args.seed], settings),
        )
    }
}

/// The MIP's point at one budget, means over the jobs.
struct MipPoint {
    mean_jct_s: Option<f64>,
    bound_mean_jct_s: Option<f64>,
    status: String,
    seconds: f64,
}

/// Writes `points.csv` and prints the same points as a table.
fn write_points(args: &FrontierArgs, points: &[PolicyPoint]) -> Result<()> {
    let mut text = format!("{}\n", FrontierPointRow::csv_header());
    println!(
        "\n{:<16} {:>12} {:>12} {:>10} {:>12} {:>12} {:>8}",
        "policy", "budget", "energy kWh", "carbon kg", "mean JCT s", "bound s", "gap"
    );
    for p in points {
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
    write_atomic(&args.out.join("points.csv"), text.as_bytes())
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
