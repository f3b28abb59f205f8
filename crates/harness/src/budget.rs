//! The budgeted policies' flag values (`gapbench replay`, `gapbench frontier`, the budget
//! study) and what they set: the budget, the carbon series, the policies' settings, and
//! which flag each policy takes (a flag a policy does not use is refused, naming both). The
//! CLI maps its clap flags onto [`BudgetArgs`]; the library knows no clap.

use std::path::Path;

use anyhow::{bail, Result};
use gapbench_model::training::Fidelity;
use gapbench_model::{caiso_2023, load_carbon_csv, CarbonSeries, SyntheticGrid};
use gapbench_replay::budget::Forecast;
use gapbench_replay::policies::clock_fifo::DEFAULT_ZEUS_ETA;
use gapbench_replay::policies::greenflow::DEFAULT_THETA;
use gapbench_replay::policies::powerflow::DEFAULT_ROUND_S;
use gapbench_replay::policies::{PolicySettings, TimePolicyKind};
use gapbench_replay::Budget;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FidelityArg {
    /// The clock only; GPU counts as in the trace.
    L0,
    /// Also the GPU count, buddy sizes n/2, n, 2n within 1–8.
    L1,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForecastArg {
    /// The current carbon intensity persists.
    Myopic,
    /// The true future intensity.
    Oracle,
    /// The true intensity with an hourly AR(1) error (see --forecast-noise), seeded.
    Noisy,
}

/// Default standard deviation of the noisy forecast's error.
const DEFAULT_FORECAST_NOISE: f64 = 0.15;

/// Flags of the budgeted policies (and of `gapbench frontier`). Defaults are applied by the
/// accessors, so a flag given to a policy that does not use it can be refused.
#[derive(Clone, Debug, Default)]
pub struct BudgetArgs {
    /// Energy budget of powerflow, kWh of job energy (what running training jobs draw by the training model: their GPUs' idle power plus their utilisation of the dynamic power at their clock, and a host share).
    pub budget_energy: Option<f64>,
    /// Carbon budget of greenflow (or powerflow), kgCO2e of job energy under --carbon.
    pub budget_carbon: Option<f64>,
    /// Grid carbon intensity: a CSV (`time_s,g_per_kwh` or an Electricity Maps export), `caiso-like`, `gb-like` (synthetic, seeded) or `caiso-2023` (shipped real hourly series). Needed with --budget-carbon; with it every policy's cluster and job carbon is reported.
    pub carbon: Option<String>,
    /// What powerflow and greenflow may change: `l0` the clock only, `l1` also the GPU count (buddy sizes). Default l1.
    pub fidelity: Option<FidelityArg>,
    /// greenflow's view of future carbon intensity. Default oracle.
    pub forecast: Option<ForecastArg>,
    /// Standard deviation of greenflow's noisy forecast error, as a share of the intensity. Default 0.15.
    pub forecast_noise: Option<f64>,
    /// greenflow's pacing exponent θ: weights CI^(−θ) (0 = even pacing). Default 1.
    pub theta: Option<f64>,
    /// zeus's η in η·Energy + (1 − η)·MaxPower·Time. Default 0.5.
    pub eta: Option<f64>,
    /// Round period Δ of powerflow and greenflow, seconds: a full re-plan every Δ (between them, rounds after arrivals and completions start waiting jobs on free devices and move nothing). Default 300.
    pub round: Option<f64>,
    /// End of the budget period's arrivals, seconds since the trace start: powerflow and greenflow keep a reserve for jobs arriving until then. Default: the last training job's arrival.
    pub horizon: Option<f64>,
}

impl BudgetArgs {
    pub fn fidelity(&self) -> Fidelity {
        match self.fidelity.unwrap_or(FidelityArg::L1) {
            FidelityArg::L0 => Fidelity::FrequencyOnly,
            FidelityArg::L1 => Fidelity::ElasticGpus,
        }
    }

    pub fn round_s(&self) -> f64 {
        self.round.unwrap_or(DEFAULT_ROUND_S)
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

    /// The budgeted policies' settings (a noisy forecast is seeded by the replay's seed).
    pub fn policy_settings(&self) -> Result<PolicySettings> {
        let round_s = self.round_s();
        if !(round_s.is_finite() && round_s > 0.0) {
            bail!("--round takes a positive number of seconds");
        }
        let noise = self.forecast_noise.unwrap_or(DEFAULT_FORECAST_NOISE);
        if !(noise.is_finite() && noise >= 0.0) {
            bail!("--forecast-noise takes a non-negative share such as 0.15");
        }
        Ok(PolicySettings {
            round_s,
            horizon_end_s: self.horizon,
            forecast: match self.forecast.unwrap_or(ForecastArg::Oracle) {
                ForecastArg::Myopic => Forecast::Myopic,
                ForecastArg::Oracle => Forecast::Oracle,
                ForecastArg::Noisy => Forecast::Noisy {
                    sigma: noise,
                    seed: 0,
                },
            },
            theta: self.theta.unwrap_or(DEFAULT_THETA),
            eta: self.eta.unwrap_or(DEFAULT_ZEUS_ETA),
        })
    }

    /// Refuses every flag `policy` does not use, and a budgeted policy without its budget.
    pub fn check_policy(&self, policy: &str) -> Result<()> {
        let policy = policy.trim();
        let kind = TimePolicyKind::parse(policy);
        let (planner, greenflow) = (
            kind.is_some_and(TimePolicyKind::is_budgeted),
            kind == Some(TimePolicyKind::GreenFlow),
        );
        let uses = [
            (
                "--budget-energy",
                self.budget_energy.is_some(),
                kind == Some(TimePolicyKind::PowerFlow),
            ),
            ("--budget-carbon", self.budget_carbon.is_some(), planner),
            ("--fidelity", self.fidelity.is_some(), planner),
            ("--round", self.round.is_some(), planner),
            ("--horizon", self.horizon.is_some(), planner),
            ("--forecast", self.forecast.is_some(), greenflow),
            ("--forecast-noise", self.forecast_noise.is_some(), greenflow),
            ("--theta", self.theta.is_some(), greenflow),
            (
                "--eta",
                self.eta.is_some(),
                kind == Some(TimePolicyKind::Zeus),
            ),
        ];
        for (flag, given, used) in uses {
            if given && !used {
                let users = match flag {
                    "--budget-energy" => "powerflow",
                    "--budget-carbon" | "--fidelity" | "--round" | "--horizon" => {
                        "powerflow and greenflow"
                    }
                    "--eta" => "zeus",
                    _ => "greenflow",
                };
                bail!("`{policy}` does not use {flag} (only {users} does); leave it out");
            }
        }
        if self.forecast_noise.is_some() && self.forecast != Some(ForecastArg::Noisy) {
            bail!("--forecast-noise applies to --forecast noisy only");
        }
        match kind {
            Some(TimePolicyKind::PowerFlow)
                if self.budget_energy.is_none() && self.budget_carbon.is_none() =>
            {
                bail!(
                    "powerflow plans to a budget: give --budget-energy KWH (or --budget-carbon KG \
                 with --carbon); run fifo-full-clock first to see what FIFO spends"
                )
            }
            Some(TimePolicyKind::GreenFlow) if self.budget_carbon.is_none() => {
                bail!("greenflow plans to a carbon budget: give --budget-carbon KG and --carbon")
            }
            _ => {}
        }
        if self.budget_carbon.is_some() && self.carbon.is_none() {
            bail!("--budget-carbon needs --carbon FILE|caiso-like|gb-like|caiso-2023");
        }
        Ok(())
    }
}
