//! Energy and carbon budgets (time-and-budgets §3.4, §4.2): what a budget limits, how spend
//! is counted, and the checks before and during a replay. The budgeted policies
//! (`policies::powerflow`, `policies::greenflow`) pace themselves to it; the engine keeps
//! the ledger and stops a replay whose budget is spent with jobs unfinished.
//!
//! The budget counts **job energy** (what running training jobs draw by the training
//! model of [`crate::jobs`]: GPUs at their clock plus a host share), or the carbon of it
//! under the grid's intensity: the quantity the exact frontier bounds. Cluster energy (idle
//! and sleeping nodes, CPU-only tasks) is accounted beside it for every policy, not limited.

pub mod forecast;

use gapbench_model::CarbonSeries;

use crate::energy::JOULES_PER_KWH;
use crate::error::ReplayError;
use crate::jobs::TrainingTask;

pub use forecast::Forecast;

/// What the budget limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Budget {
    /// No limit.
    Unlimited,
    /// Job energy over the replay, kWh.
    EnergyKwh(f64),
    /// Carbon of job energy over the replay, kgCO2e (needs a carbon series).
    CarbonKg(f64),
}

impl Budget {
    /// The limit in the unit the engine accounts in: joules or grams.
    pub fn limit(&self) -> Option<f64> {
        match self {
            Budget::Unlimited => None,
            Budget::EnergyKwh(kwh) => Some(kwh * JOULES_PER_KWH),
            Budget::CarbonKg(kg) => Some(kg * 1000.0),
        }
    }

    pub fn is_carbon(&self) -> bool {
        matches!(self, Budget::CarbonKg(_))
    }

    /// The unit users see (`kWh` or `kg`) and the factor from the engine's unit to it.
    pub fn unit(&self) -> (&'static str, f64) {
        if self.is_carbon() {
            ("kg", 1e-3)
        } else {
            ("kWh", 1.0 / JOULES_PER_KWH)
        }
    }
}

/// Least spend (engine unit: joules, or grams at the series' lowest intensity) to finish
/// `remaining` `(job, iterations)` at the jobs' frugal configurations.
pub fn least_spend<'a>(
    remaining: impl Iterator<Item = (&'a TrainingTask, f64)>,
    budget: &Budget,
    carbon: Option<&CarbonSeries>,
) -> f64 {
    let joules: f64 = remaining.map(|(job, r)| job.least_joules(r)).sum();
    let per_joule = match (budget.is_carbon(), carbon) {
        (true, Some(series)) => {
            series
                .g_per_kwh
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min)
                / JOULES_PER_KWH
        }
        _ => 1.0,
    };
    joules * per_joule
}

/// Checks a budget before a replay: a carbon budget has a series, and the budget holds the
/// least any schedule of `jobs` must spend.
pub fn check_budget(
    jobs: &[TrainingTask],
    budget: &Budget,
    carbon: Option<&CarbonSeries>,
) -> Result<(), ReplayError> {
    if budget.is_carbon() && carbon.is_none() {
        return Err(ReplayError::BudgetSettings(
            "a carbon budget needs a carbon-intensity series (--carbon)".into(),
        ));
    }
    let Some(limit) = budget.limit() else {
        return Ok(());
    };
    let least = least_spend(
        jobs.iter().map(|j| (j, j.training.iterations)),
        budget,
        carbon,
    );
    if least > limit {
        let (unit, to_unit) = budget.unit();
        return Err(ReplayError::BudgetTooSmall {
            budget: limit * to_unit,
            least: least * to_unit,
            unit,
        });
    }
    Ok(())
}

/// How a replay fared against its budget.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BudgetOutcome {
    /// The limit, in `unit`.
    pub limit: f64,
    /// What was spent, in `unit`.
    pub spent: f64,
    pub unit: &'static str,
    /// The most spent between two rounds, in `unit`: a finished replay overshoots its
    /// budget by at most this (the spend of its last interval).
    pub max_round_spend: f64,
    /// Set when the budget ran out with jobs unfinished (the replay stopped there).
    pub exhausted: Option<String>,
}
