//! GreenFlow-style carbon-budgeted allocation (time-and-budgets §4.2; GreenFlow's own
//! algorithm was not available to us: [D] throughout). The PowerFlow-style loop
//! ([`super::powerflow::greedy_plan`]) with two changes:
//! - the ranking `(ΔJCT/JCT)/(ΔC/C)` equals the energy one inside a round (the intensity
//!   cancels), so the greedy is unchanged and the intensity enters through the allowance;
//! - carbon pacing: the markup of the energy version (`m = excess / reserve`, now in grams,
//!   the reserve valued at the forecast mean intensity of the day ahead) is scaled by
//!   `w(now) / mean w` over the day ahead, `w = CI_forecast^(−θ)`
//!   ([`crate::budget::forecast::CarbonPacer`]): a clean hour spends more, a dirty one
//!   less. θ = 0 paces evenly; θ = 1 (default [D]). The myopic forecast sees a flat day,
//!   so it paces evenly whatever θ.

use crate::budget::forecast::CarbonPacer;
use crate::budget::{Allocator, Budget, Forecast, Plan, Round};
use crate::energy::JOULES_PER_KWH;

use super::powerflow::{greedy_plan, markup, reserve_joules, Allowance};

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

    fn allocate(&mut self, round: &Round<'_>) -> Plan {
        let (Budget::CarbonKg(_), Some(series)) = (round.budget, round.carbon) else {
            return greedy_plan(
                round,
                Allowance {
                    markup: f64::INFINITY,
                },
            );
        };
        let limit = round.budget.limit().expect("a carbon budget");
        let pacer = self.pacer.get_or_insert_with(|| {
            CarbonPacer::new(
                self.forecast,
                self.theta,
                round.first_arrival_s,
                round.horizon_end_s,
            )
        });
        let now = round.now_s;
        let reserve_g = reserve_joules(round) * pacer.mean_ahead(series, now) / JOULES_PER_KWH;
        let markup = markup(limit - round.spent, reserve_g) * pacer.relative_weight(series, now);
        greedy_plan(round, Allowance { markup })
    }
}
