//! Flags shared by `replay` and `frontier`: the budgeted policies' ([`BudgetFlags`]) and
//! which part of the cluster and workload a replay takes ([`SelectionFlags`]), each mapped
//! onto the library's plain struct.

use clap::{Args, ValueEnum};
use gapbench::budget::{BudgetArgs, FidelityArg, ForecastArg};
use gapbench::frontier::FrontierKind;
use gapbench::replay::Selection;

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum FidelityFlag {
    /// The clock only; GPU counts as in the trace.
    L0,
    /// Also the GPU count, buddy sizes n/2, n, 2n within 1–8.
    L1,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum ForecastFlag {
    /// The current carbon intensity persists.
    Myopic,
    /// The true future intensity.
    Oracle,
    /// The true intensity with an hourly AR(1) error (see --forecast-noise), seeded.
    Noisy,
}

/// Flags of the budgeted policies (and of `gapbench frontier`). Defaults are applied by the
/// accessors, so a flag given to a policy that does not use it can be refused.
#[derive(Args, Clone, Debug, Default)]
pub struct BudgetFlags {
    /// Energy budget of powerflow, kWh of job energy (what running training jobs draw by the training model: their GPUs' idle power plus their utilisation of the dynamic power at their clock, and a host share).
    #[arg(long, value_name = "KWH", conflicts_with = "budget_carbon")]
    pub budget_energy: Option<f64>,
    /// Carbon budget of greenflow (or powerflow), kgCO2e of job energy under --carbon.
    #[arg(long, value_name = "KG")]
    pub budget_carbon: Option<f64>,
    /// Grid carbon intensity: a CSV (`time_s,g_per_kwh` or an Electricity Maps export), `caiso-like`, `gb-like` (synthetic, seeded) or `caiso-2023` (shipped real hourly series). Needed with --budget-carbon; with it every policy's cluster and job carbon is reported.
    #[arg(long, value_name = "FILE|NAME")]
    pub carbon: Option<String>,
    /// What powerflow and greenflow may change: `l0` the clock only, `l1` also the GPU count (buddy sizes). Default l1.
    #[arg(long, value_enum)]
    pub fidelity: Option<FidelityFlag>,
    /// greenflow's view of future carbon intensity. Default oracle.
    #[arg(long, value_enum)]
    pub forecast: Option<ForecastFlag>,
    /// Standard deviation of greenflow's noisy forecast error, as a share of the intensity. Default 0.15.
    #[arg(long, value_name = "SHARE", value_parser = gapbench::flag_values::non_negative)]
    pub forecast_noise: Option<f64>,
    /// greenflow's pacing exponent θ: weights CI^(−θ) (0 = even pacing). Default 1.
    #[arg(long, value_name = "THETA", value_parser = gapbench::flag_values::non_negative)]
    pub theta: Option<f64>,
    /// zeus's η in η·Energy + (1 − η)·MaxPower·Time. Default 0.5.
    #[arg(long, value_name = "ETA", value_parser = gapbench::flag_values::share)]
    pub eta: Option<f64>,
    /// Round period Δ of powerflow and greenflow, seconds: a full re-plan every Δ (between them, rounds after arrivals and completions start waiting jobs on free devices and move nothing). Default 300.
    #[arg(long, value_name = "SECONDS")]
    pub round: Option<f64>,
    /// End of the budget period's arrivals, seconds since the trace start: powerflow and greenflow keep a reserve for jobs arriving until then. Default: the last training job's arrival.
    #[arg(long, value_name = "SECONDS", value_parser = gapbench::flag_values::positive)]
    pub horizon: Option<f64>,
}

impl From<BudgetFlags> for BudgetArgs {
    fn from(flags: BudgetFlags) -> BudgetArgs {
        BudgetArgs {
            budget_energy: flags.budget_energy,
            budget_carbon: flags.budget_carbon,
            carbon: flags.carbon,
            fidelity: flags.fidelity.map(|f| match f {
                FidelityFlag::L0 => FidelityArg::L0,
                FidelityFlag::L1 => FidelityArg::L1,
            }),
            forecast: flags.forecast.map(|f| match f {
                ForecastFlag::Myopic => ForecastArg::Myopic,
                ForecastFlag::Oracle => ForecastArg::Oracle,
                ForecastFlag::Noisy => ForecastArg::Noisy,
            }),
            forecast_noise: flags.forecast_noise,
            theta: flags.theta,
            eta: flags.eta,
            round: flags.round,
            horizon: flags.horizon,
        }
    }
}

/// Which part of a cluster and workload a replay takes, for every policy alike: small
/// instances for exact frontiers, contended slices where jobs queue.
#[derive(Args, Debug, Clone, Copy)]
pub struct SelectionFlags {
    /// Replay on N GPUs only: the first N/8 nodes (file order) of the cluster's most common 8-GPU node type, a contended slice where jobs queue (the setting the PowerFlow and GreenFlow papers evaluate). N is a multiple of 8.
    #[arg(long, value_name = "N")]
    pub gpus: Option<u64>,
    /// Keep only the first N GPU tasks (by arrival), and no CPU-only task: small instances of training jobs for exact frontiers and quick studies.
    #[arg(long, value_name = "N")]
    pub first_jobs: Option<usize>,
    /// Leave out tasks that run longer than this, seconds (before --first-jobs): the trace's months-long services dominate mean JCT and a frontier's horizon; budget studies of training jobs cap them [D].
    #[arg(long = "max-duration", value_name = "SECONDS")]
    pub max_duration_s: Option<f64>,
    /// Keep only the tasks that use GPUs (the training jobs of a budget study); --first-jobs implies it.
    #[arg(long)]
    pub gpu_tasks_only: bool,
}

impl From<SelectionFlags> for Selection {
    fn from(flags: SelectionFlags) -> Selection {
        Selection {
            gpus: flags.gpus,
            first_jobs: flags.first_jobs,
            max_duration_s: flags.max_duration_s,
            gpu_tasks_only: flags.gpu_tasks_only,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum FrontierKindArg {
    /// Mean JCT against job energy (kWh).
    Energy,
    /// Mean JCT against carbon (kg), with --carbon.
    Carbon,
}

impl From<FrontierKindArg> for FrontierKind {
    fn from(kind: FrontierKindArg) -> FrontierKind {
        match kind {
            FrontierKindArg::Energy => FrontierKind::Energy,
            FrontierKindArg::Carbon => FrontierKind::Carbon,
        }
    }
}
