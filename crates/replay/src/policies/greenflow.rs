//! GreenFlow-style carbon-budgeted allocation (time-and-budgets §4.2; GreenFlow's own
//! algorithm was not available to us: [D] throughout). The PowerFlow-style rounds
//! ([`super::budgeted`]) with two changes:
//! - the ranking `(ΔJCT/JCT)/(ΔC/C)` equals the energy one inside a round (the intensity
//!   cancels), so the greedy is unchanged and the intensity enters through the allowance;
//! - carbon pacing: the markup of the energy version (`m = excess / reserve`, now in grams,
//!   the reserve valued at the forecast mean intensity of the day ahead) is scaled by
//!   `w(now) / mean w` over the day ahead, `w = CI_forecast^(−θ)`
//!   ([`crate::budget::forecast::CarbonPacer`]): a clean hour spends more, a dirty one
//!   less. θ = 0 paces evenly; θ = 1 (default [D]). The myopic forecast sees a flat day,
//!   so it paces evenly whatever θ. Without a carbon budget the markup is unlimited.

use gapbench_model::rng::SimRng;

use super::budgeted::{Allowance, BudgetedRounds};
use super::powerflow::{markup, reserve_joules, DEFAULT_ROUND_S};
use crate::budget::forecast::CarbonPacer;
use crate::budget::{Budget, Forecast};
use crate::energy::JOULES_PER_KWH;
use crate::policy::{Action, ReplayView, RoundKind, TimePolicy};

/// θ of the pacing weights when none is given [D].
pub const DEFAULT_THETA: f64 = 1.0;

/// GreenFlow-style allocation with a carbon budget.
#[derive(Debug, Clone)]
pub struct GreenFlowStyle {
    pub forecast: Forecast,
    pub theta: f64,
    pub(super) rounds: BudgetedRounds,
    pacer: Option<CarbonPacer>,
}

impl GreenFlowStyle {
    pub fn new(forecast: Forecast, theta: f64) -> GreenFlowStyle {
        GreenFlowStyle::with_rounds(forecast, theta, DEFAULT_ROUND_S, None)
    }

    /// Rounds every `round_s`; the budget period's arrivals end at `horizon_end_s` (`None`:
    /// the last training job's arrival).
    pub fn with_rounds(
        forecast: Forecast,
        theta: f64,
        round_s: f64,
        horizon_end_s: Option<f64>,
    ) -> GreenFlowStyle {
        GreenFlowStyle {
            forecast,
            theta,
            rounds: BudgetedRounds::new(round_s, horizon_end_s),
            pacer: None,
        }
    }
}

impl TimePolicy for GreenFlowStyle {
    fn name(&self) -> String {
        format!("greenflow-{}", self.forecast.label())
    }

    fn round_period_s(&self) -> Option<f64> {
        Some(self.rounds.round_s)
    }

    fn on_round(
        &mut self,
        view: &ReplayView<'_>,
        kind: RoundKind,
        _rng: &mut SimRng,
    ) -> Vec<Action> {
        let (forecast, theta, pacer) = (self.forecast, self.theta, &mut self.pacer);
        self.rounds.on_round(view, kind, |round| {
            let (Budget::CarbonKg(_), Some(series)) = (view.budget, view.carbon) else {
                return Allowance {
                    markup: f64::INFINITY,
                };
            };
            let limit = view.budget.limit().expect("a carbon budget");
            let pacer = pacer.get_or_insert_with(|| {
                CarbonPacer::new(forecast, theta, round.first_arrival_s, round.horizon_end_s)
            });
            let (mean_ahead, relative_weight) = pacer.pacing(series, view.now_s);
            let reserve_g = reserve_joules(round) * mean_ahead / JOULES_PER_KWH;
            Allowance {
                markup: markup(limit - round.spent, reserve_g) * relative_weight,
            }
        })
    }
}
