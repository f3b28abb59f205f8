//! PowerFlow-style energy-budgeted allocation (time-and-budgets §3.4; PowerFlow's own
//! equations and constants were not available to us, so the loop is our port and every
//! choice below is [D]). Each round plans admission and greedy upgrades on real nodes
//! ([`super::budgeted`]); this file decides how much extra power a round may add.
//!
//! Budget semantics [D] (a paced variant of the spec's B2): of the budget `B`, the *excess*
//! is what is left after spending so far, the least energy the active jobs still need, and
//! an estimate of the least energy of jobs still to come (the least-energy arrival rate so
//! far × the time to the end of the arrival period `H`). The excess is spread over the
//! least energy still needed, in proportion: with markup `m = excess / reserve`, a round may
//! add at most `m ×` the power of its admitted jobs at their frugal configurations. So the
//! budget is paced by work rather than by wall time (a loaded hour gets more than an idle
//! one), and a replay that spends as predicted lands on the budget. Without a budget the
//! markup is unlimited.

use gapbench_model::rng::SimRng;

use super::budgeted::{Allowance, BudgetedRounds, Round};
use crate::budget::Budget;
use crate::energy::JOULES_PER_KWH;
use crate::policy::{Action, ReplayView, RoundKind, TimePolicy};

/// Round period Δ when none is given [D: 300 s, time-and-budgets §3.4].
pub const DEFAULT_ROUND_S: f64 = 300.0;

/// PowerFlow-style allocation with an energy budget.
#[derive(Debug, Clone)]
pub struct PowerFlowStyle {
    pub(super) rounds: BudgetedRounds,
}

impl PowerFlowStyle {
    /// Rounds every `round_s`; the budget period's arrivals end at `horizon_end_s` (`None`:
    /// the last training job's arrival).
    pub fn new(round_s: f64, horizon_end_s: Option<f64>) -> PowerFlowStyle {
        PowerFlowStyle {
            rounds: BudgetedRounds::new(round_s, horizon_end_s),
        }
    }
}

impl Default for PowerFlowStyle {
    fn default() -> Self {
        PowerFlowStyle::new(DEFAULT_ROUND_S, None)
    }
}

impl TimePolicy for PowerFlowStyle {
    fn name(&self) -> String {
        "powerflow".into()
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
        self.rounds.on_round(view, kind, |round| Allowance {
            markup: energy_markup(view, round),
        })
    }
}

/// The markup of a grid round under the replay's budget (unlimited without one).
fn energy_markup(view: &ReplayView<'_>, round: &Round<'_, '_>) -> f64 {
    let left = |limit: f64| limit - round.spent;
    match (view.budget, view.carbon) {
        (Budget::Unlimited, _) => f64::INFINITY,
        (Budget::EnergyKwh(_), _) => {
            let limit = view.budget.limit().expect("limited");
            markup(left(limit), reserve_joules(round))
        }
        // With a carbon budget this allocator values its reserve at today's intensity
        // (GreenFlow-style does better).
        (Budget::CarbonKg(_), series) => {
            let limit = view.budget.limit().expect("limited");
            let g_per_j = series.map_or(0.0, |s| s.at(view.now_s)) / JOULES_PER_KWH;
            markup(left(limit), reserve_joules(round) * g_per_j)
        }
    }
}

/// `excess / reserve`, where the excess is what is left beyond the reserve; 0 when nothing
/// is left beyond it.
pub fn markup(left: f64, reserve: f64) -> f64 {
    let excess = left - reserve;
    if excess <= 0.0 {
        0.0
    } else if reserve <= 0.0 {
        f64::INFINITY
    } else {
        excess / reserve
    }
}

/// Energy (J) held back: what the active jobs need at least, and an estimate of what jobs
/// still to come will need: the least-energy arrival rate since the first arrival × the
/// time to the end of the arrival period. (A trailing one-day rate was tried and ran out
/// of budget on the openb default trace, whose arrivals grow towards its end.)
pub fn reserve_joules(round: &Round<'_, '_>) -> f64 {
    let now = round.view.now_s;
    let elapsed = (now - round.first_arrival_s).max(round.round_s);
    let to_horizon = (round.horizon_end_s - now).max(0.0);
    round.least_remaining_j + round.least_arrived_j / elapsed * to_horizon
}
