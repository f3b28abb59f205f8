//! `gapbench replay --policy powerflow|greenflow|zeus|fifo-full-clock`: the budgeted replay
//! of `gapbench_replay::budget` — its flags, carbon series, allocators and files
//! (`summary.json`, `jobs.csv`, `timeline.csv`, `manifest.json`).

use std::path::Path;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use gapbench_model::training::Fidelity;
use gapbench_model::{caiso_2023, load_carbon_csv, CarbonSeries, Cluster, SyntheticGrid};
use gapbench_replay::budget::{
    budget_jobs, default_horizon_s, engine::run_jobs, trace_end_s, Allocator, BuddyPool, Budget,
    BudgetJob, BudgetOptions, BudgetResult, Forecast,
};
use gapbench_replay::policies::clock_fifo::DEFAULT_ZEUS_ETA;
use gapbench_replay::policies::{ClockFifo, ClockRule, GreenFlowStyle, PowerFlowStyle};
use gapbench_replay::TimedWorkload;

use gapbench_results::csv_text::{field, number, optional_number};

use crate::io::{write_atomic, write_json};

/// The budgeted policies `gapbench replay` knows.
pub const BUDGET_POLICIES: [&str; 4] = ["powerflow", "greenflow", "zeus", "fifo-full-clock"];

pub fn is_budget_policy(name: &str) -> bool {
    BUDGET_POLICIES.contains(&name.trim())
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum FidelityArg {
    /// The clock only; GPU counts as in the trace.
    L0,
    /// Also the GPU count, buddy sizes n/2, n, 2n within 1–8.
    L1,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum ForecastArg {
    /// The current carbon intensity persists.
    Myopic,
    /// The true future intensity.
    Oracle,
    /// The true intensity with an hourly AR(1) error (see --forecast-noise), seeded.
    Noisy,
}

/// Flags of the budgeted replay (and of `gapbench frontier`).
#[derive(Args, Clone, Debug)]
pub struct BudgetArgs {
    /// Energy budget of powerflow, kWh of job energy (what running jobs draw by the training model: GPUs at their clock plus a host share; idle GPUs are outside it).
    #[arg(long, value_name = "KWH", conflicts_with = "budget_carbon")]
    pub budget_energy: Option<f64>,
    /// Carbon budget of greenflow, kgCO2e of job energy under --carbon.
    #[arg(long, value_name = "KG")]
    pub budget_carbon: Option<f64>,
    /// Grid carbon intensity: a CSV (`time_s,g_per_kwh` or an Electricity Maps export), `caiso-like`, `gb-like` (synthetic, seeded) or `caiso-2023` (shipped real hourly series). Needed with --budget-carbon; with it carbon is reported for any policy.
    #[arg(long, value_name = "FILE|NAME")]
    pub carbon: Option<String>,
    /// What a budgeted policy may change: `l0` the clock only, `l1` also the GPU count (buddy sizes).
    #[arg(long, value_enum, default_value_t = FidelityArg::L1)]
    pub fidelity: FidelityArg,
    /// greenflow's view of future carbon intensity.
    #[arg(long, value_enum, default_value_t = ForecastArg::Oracle)]
    pub forecast: ForecastArg,
    /// Standard deviation of the noisy forecast's error, as a share of the intensity.
    #[arg(long, value_name = "SHARE", default_value_t = 0.15, value_parser = crate::flag_values::non_negative)]
    pub forecast_noise: f64,
    /// greenflow's pacing exponent θ: weights CI^(−θ) (0 = even pacing).
    #[arg(long, value_name = "THETA", default_value_t = gapbench_replay::policies::greenflow::DEFAULT_THETA, value_parser = crate::flag_values::non_negative)]
    pub theta: f64,
    /// zeus's η in η·Energy + (1 − η)·MaxPower·Time.
    #[arg(long, value_name = "ETA", default_value_t = DEFAULT_ZEUS_ETA, value_parser = crate::flag_values::share)]
    pub eta: f64,
    /// Round period Δ of the budgeted policies, seconds (rounds also run on arrivals and completions).
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0)]
    pub round: f64,
    /// End of the budget period's arrivals, seconds since the trace start: the budgeted policies keep a reserve for jobs arriving until then. Default: the last arrival.
    #[arg(long, value_name = "SECONDS", value_parser = crate::flag_values::positive)]
    pub horizon: Option<f64>,
    /// Keep only the first N GPU jobs (by arrival): small instances for exact frontiers and quick studies.
    #[arg(long, value_name = "N")]
    pub first_jobs: Option<usize>,
    /// Leave out jobs that run longer than this at their trace configuration, seconds: the trace's months-long services dominate mean JCT and the frontier's horizon; budget studies of training jobs cap them [D].
    #[arg(long, value_name = "SECONDS")]
    pub max_duration: Option<f64>,
    /// Replay on a pool of N GPUs (in 8-GPU nodes) instead of the cluster's: a contended slice where jobs queue, the setting the PowerFlow and GreenFlow papers evaluate.
    #[arg(long, value_name = "N")]
    pub gpus: Option<u64>,
}

impl BudgetArgs {
    /// Every flag at its default, as `gapbench replay` takes them when none is given.
    pub fn defaults() -> BudgetArgs {
        #[derive(clap::Parser)]
        struct Defaults {
            #[command(flatten)]
            args: BudgetArgs,
        }
        <Defaults as clap::Parser>::parse_from(["gapbench"]).args
    }

    pub fn fidelity(&self) -> Fidelity {
        match self.fidelity {
            FidelityArg::L0 => Fidelity::FrequencyOnly,
            FidelityArg::L1 => Fidelity::ElasticGpus,
        }
    }

    pub fn budget(&self) -> Result<Budget> {
        for (flag, value) in [
            ("--budget-energy", self.budget_energy),
            ("--budget-carbon", self.budget_carbon),
        ] {
            if value.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
                bail!("{flag} takes a positive number");
            }
        }
        Ok(match (self.budget_energy, self.budget_carbon) {
            (Some(kwh), _) => Budget::EnergyKwh(kwh),
            (_, Some(kg)) => Budget::CarbonKg(kg),
            _ => Budget::Unlimited,
        })
    }

    /// The carbon series, long enough for `until_s` when synthetic.
    pub fn carbon_series(&self, until_s: f64, seed: u64) -> Result<Option<CarbonSeries>> {
        let Some(source) = self.carbon.as_deref() else {
            return Ok(None);
        };
        let hours = (until_s / 3600.0).ceil().max(24.0) as usize + 24;
        Ok(Some(match source {
            "caiso-like" => SyntheticGrid::CAISO_LIKE.generate("caiso-like", hours, seed),
            "gb-like" => SyntheticGrid::GB_LIKE.generate("gb-like", hours, seed),
            "caiso-2023" => caiso_2023(),
            path => load_carbon_csv(Path::new(path))?,
        }))
    }

    /// The budgeted allocator `policy` names.
    pub fn allocator(&self, policy: &str, seed: u64) -> Result<Box<dyn Allocator + Send>> {
        Ok(match policy.trim() {
            "powerflow" => Box::new(PowerFlowStyle),
            "greenflow" => {
                let forecast = match self.forecast {
                    ForecastArg::Myopic => Forecast::Myopic,
                    ForecastArg::Oracle => Forecast::Oracle,
                    ForecastArg::Noisy => Forecast::Noisy {
                        sigma: self.forecast_noise,
                        seed,
                    },
                };
                Box::new(GreenFlowStyle::new(forecast, self.theta))
            }
            "zeus" => Box::new(ClockFifo {
                rule: ClockRule::Zeus { eta: self.eta },
            }),
            "fifo-full-clock" => Box::new(ClockFifo {
                rule: ClockRule::Full,
            }),
            other => bail!(
                "`{other}` is not a budgeted policy; choose one of {}",
                BUDGET_POLICIES.join(", ")
            ),
        })
    }
}

/// The jobs, pool and options of a budgeted replay of `workload` on `cluster`.
pub struct BudgetSetup {
    pub jobs: Vec<BudgetJob>,
    pub pool: BuddyPool,
    pub options: BudgetOptions,
}

impl BudgetSetup {
    pub fn new(
        cluster: &Cluster,
        workload: &TimedWorkload,
        args: &BudgetArgs,
        seed: u64,
    ) -> Result<BudgetSetup> {
        let mut jobs = budget_jobs(cluster, workload, seed, args.fidelity());
        if let Some(limit_s) = args.max_duration {
            if !(limit_s.is_finite() && limit_s > 0.0) {
                bail!("--max-duration takes a positive number of seconds");
            }
            jobs.retain(|job| job.trace_duration_s() <= limit_s);
        }
        if let Some(n) = args.first_jobs {
            jobs.truncate(n);
        }
        if jobs.is_empty() {
            bail!("the workload has no GPU job to replay");
        }
        if !(args.round.is_finite() && args.round > 0.0) {
            bail!("--round takes a positive number of seconds");
        }
        if args.gpus == Some(0) {
            bail!("--gpus takes a positive number of GPUs");
        }
        let horizon_end_s = args.horizon.unwrap_or_else(|| default_horizon_s(&jobs));
        let carbon = args.carbon_series(trace_end_s(&jobs).max(horizon_end_s), seed)?;
        let budget = args.budget()?;
        if matches!(budget, Budget::CarbonKg(_)) && carbon.is_none() {
            bail!("--budget-carbon needs --carbon FILE|caiso-like|gb-like|caiso-2023");
        }
        Ok(BudgetSetup {
            jobs,
            pool: match args.gpus {
                Some(gpus) => BuddyPool::of_gpus(gpus),
                None => BuddyPool::of_cluster(cluster),
            },
            options: BudgetOptions {
                budget,
                carbon,
                fidelity: args.fidelity(),
                round_s: args.round,
                horizon_end_s,
                seed,
            },
        })
    }

    /// Runs `allocator` with `budget` (overriding the setup's).
    pub fn run(
        &self,
        workload: &TimedWorkload,
        allocator: &mut dyn Allocator,
        budget: Budget,
    ) -> Result<BudgetResult> {
        let options = BudgetOptions {
            budget,
            ..self.options.clone()
        };
        run_jobs(&self.jobs, workload, self.pool.clone(), allocator, &options)
            .map_err(anyhow::Error::msg)
    }
}

/// Writes `summary.json`, `jobs.csv` and `timeline.csv` of a budgeted replay to `out`.
pub fn write_budget_outputs(out: &Path, result: &BudgetResult) -> Result<()> {
    write_json(&out.join("summary.json"), result)?;
    let mut jobs = String::from(
        "name,class,trace_gpus,gpu_milli,arrival_s,start_s,end_s,jct_s,energy_kwh,carbon_kg,reconfigurations\n",
    );
    let opt = |v: Option<f64>| optional_number(v, 3);
    for j in &result.jobs {
        jobs.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{}\n",
            field(&j.name),
            j.class,
            j.trace_gpus,
            j.gpu_milli,
            number(j.arrival_s, 3),
            opt(j.start_s),
            opt(j.end_s),
            opt(j.jct_s),
            number(j.energy_kwh, 9),
            number(j.carbon_kg, 9),
            j.reconfigurations
        ));
    }
    write_atomic(&out.join("jobs.csv"), jobs.as_bytes())
        .with_context(|| format!("writing {}", out.display()))?;
    let mut timeline = String::from("time_s,job_watts,g_per_kwh,running,waiting,gpus_held,spent\n");
    for r in &result.timeline {
        timeline.push_str(&format!(
            "{},{},{},{},{},{},{}\n",
            number(r.time_s, 3),
            number(r.job_watts, 3),
            number(r.g_per_kwh, 3),
            r.running,
            r.waiting,
            number(r.gpus_held, 3),
            number(r.spent, 9)
        ));
    }
    write_atomic(&out.join("timeline.csv"), timeline.as_bytes())
}

/// `gapbench replay` with a budgeted policy: one replay per seed (per-seed folders when
/// several), each written by [`write_budget_outputs`], and a manifest.
pub fn run_budget_replays(
    inputs: &crate::replay::ReplayInputs,
    policy: &str,
    args: &BudgetArgs,
    seeds: &[u64],
    out: &Path,
) -> Result<()> {
    for &seed in seeds {
        let workload = inputs.workload(seed)?;
        let setup = BudgetSetup::new(&inputs.cluster, &workload, args, seed)?;
        let mut allocator = args.allocator(policy, seed)?;
        let clock = std::time::Instant::now();
        let result = setup
            .run(&workload, allocator.as_mut(), setup.options.budget.clone())
            .with_context(|| format!("{policy}, seed {seed}"))?;
        if seed == seeds[0] {
            println!(
                "{:>6} {:>6} {:>12} {:>10} {:>12} {:>11} {:>8}",
                "seed", "jobs", "energy kWh", "carbon kg", "mean JCT s", "makespan h", "rounds"
            );
        }
        let folder = if seeds.len() > 1 {
            out.join(format!("seed-{seed}"))
        } else {
            out.to_path_buf()
        };
        write_budget_outputs(&folder, &result)?;
        println!(
            "{:>6} {:>6} {:>12.3} {:>10.3} {:>12.1} {:>11.2} {:>8}   ({:.2} s)",
            seed,
            result.jobs.len(),
            result.job_energy_kwh,
            result.carbon_kg,
            result.mean_jct_s,
            result.makespan_s / 3600.0,
            result.rounds,
            clock.elapsed().as_secs_f64()
        );
    }
    let settings = serde_json::json!({
        "policy": policy,
        "source": inputs.source,
        "arrival_scale": inputs.arrival_scale,
        "budget_energy_kwh": args.budget_energy,
        "budget_carbon_kg": args.budget_carbon,
        "carbon": args.carbon,
        "fidelity": format!("{:?}", args.fidelity()),
        "forecast": format!("{:?}", args.forecast),
        "forecast_noise": args.forecast_noise,
        "theta": args.theta,
        "eta": args.eta,
        "round_s": args.round,
        "horizon_s": args.horizon,
        "first_jobs": args.first_jobs,
        "max_duration_s": args.max_duration,
        "gpus": args.gpus,
    });
    write_json(
        &out.join("manifest.json"),
        &crate::manifest::Manifest::new(inputs.inputs.clone(), seeds.to_vec(), settings),
    )?;
    println!("results in {}", out.display());
    Ok(())
}
