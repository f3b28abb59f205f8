//! GreenFlow-style carbon-budgeted allocation (time-and-budgets §4.2; GreenFlow's own
//! algorithm was not available to us: [D] throughout). The PowerFlow-style loop
//! ([`super::powerflow::greedy_plan`]) with two changes:
//! - the ranking `(ΔJCT/JCT)/(ΔC/C)` equals the energy one inside a round (the intensity
//!   cancels), so the greedy is unchanged and the intensity enters through the allowance;
//! - carbon pacing: of the carbon left after spending, the active jobs' least need and the
//!   estimated least need of jobs to come (valued at the forecast intensity), the round may
//!   spend `w(now) / Σ_{τ ≥ now} w(τ)·Δ` per second, `w = CI_forecast^(−θ)`
//!   ([`crate::budget::forecast::CarbonPacer`]); the allowance in grams per second becomes
//!   extra watts at the current intensity. θ = 0 paces evenly; θ = 1 (default [D]) spends
//!   more when the grid is clean.

use crate::budget::forecast::CarbonPacer;
use crate::budget::{Allocator, Budget, Forecast, Round};
use crate::energy::JOULES_PER_KWH;

use super::powerflow::{greedy_plan, reserve_joules, Allowance};

/// θ of the pacing weights when none is given [D].
pub const DEFAULT_THETA: f64 = 1.0;

/// GreenFlow-style allocation with a carbon budget.
#[derive(Debug, Clone)]
pub struct GreenFlowStyle {
    pub forecast: Forecast,
    pub theta: f64,
    pacer: Option<CarbonPacer>,
}

impl GreenFlowStyle {
    pub fn new(forecast: Forecast, theta: f64) -> GreenFlowStyle {
        GreenFlowStyle {
            forecast,
            theta,
            pacer: None,
        }
    }
}

impl Allocator for GreenFlowStyle {
    fn name(&self) -> String {
        format!("greenflow-{}", self.forecast.label())
    }

    fn allocate(&mut self, round: &Round<'_>) -> Vec<Option<usize>> {
        let (Budget::CarbonKg(_), Some(series)) = (round.budget, round.carbon) else {
            return greedy_plan(
                round,
                Allowance {
                    extra_watts: f64::INFINITY,
                },
            );
        };
        let limit = round.budget.limit().expect("a carbon budget");
        let pacer = self.pacer.get_or_insert_with(|| {
            CarbonPacer::new(
                series,
                self.forecast,
                self.theta,
                round.first_arrival_s,
                round.horizon_end_s,
                round.round_s,
            )
        });
        let now = round.now_s;
        let intensity_now = series.at(now).max(1e-9);
        let reserve_intensity = match self.forecast {
            Forecast::Myopic => intensity_now,
            Forecast::Oracle | Forecast::Noisy { .. } => {
                let end = round.horizon_end_s.max(now + round.round_s);
                let mean = series.mean(now, end);
                // The noisy forecast's view of that mean: its error at the horizon's midpoint.
                pacer.predicted(series, now, (now + end) / 2.0)
                    / series.at((now + end) / 2.0).max(1e-9)
                    * mean
            }
        };
        let reserve_g = reserve_joules(round) * reserve_intensity / JOULES_PER_KWH;
        let excess_g = (limit - round.spent - reserve_g).max(0.0);
        let grams_per_s = excess_g * pacer.share_per_s(series, now);
        let extra_watts = grams_per_s / (intensity_now / JOULES_PER_KWH);
        greedy_plan(round, Allowance { extra_watts })
    }
}
