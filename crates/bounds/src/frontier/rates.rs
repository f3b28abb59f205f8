//! What a job's problem is priced with: the prices of the dualised constraints and the
//! budget each watt-second costs per slot (shared by the per-job search, its slot hulls,
//! and every frontier method).

use super::FrontierInstance;

/// Prices of the dualised constraints.
#[derive(Debug, Clone, Copy)]
pub struct Prices<'a> {
    /// λ: JCT seconds per unit of budget (kWh or kg).
    pub budget: f64,
    /// μ_t: JCT seconds per GPU-second in each slot of the horizon.
    pub gpu_second: &'a [f64],
}

/// Budget per watt-second in each slot and after the horizon
/// ([`FrontierInstance::budget_per_watt_second`]), computed once per instance.
#[derive(Debug, Clone)]
pub struct BudgetRates {
    pub per_slot: Vec<f64>,
    pub after_horizon: f64,
    /// The lowest rate of any slot, or after the horizon.
    pub lowest: f64,
}

impl BudgetRates {
    pub fn of(instance: &FrontierInstance) -> BudgetRates {
        let (per_slot, after_horizon) = instance.budget_per_watt_second();
        let lowest = per_slot.iter().copied().fold(after_horizon, f64::min);
        BudgetRates {
            per_slot,
            after_horizon,
            lowest,
        }
    }

    pub(super) fn at(&self, slot: usize) -> f64 {
        self.per_slot
            .get(slot)
            .copied()
            .unwrap_or(self.after_horizon)
    }
}
