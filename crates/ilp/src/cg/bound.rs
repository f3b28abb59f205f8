//! The Lagrangian (Farley) bound, valid at every iteration.
//!
//! Dualising the demand rows with prices `y` (free for `=` rows, `y ≤ 0` for `≤` rows of a
//! minimisation) leaves one independent problem per node: choose a configuration or stay
//! empty. Hence, for any such `y`,
//!
//! `z* ≥ L(y) = C₀ + Σ_s y_s·count_s + Σ_τ N_τ·min(0, ρ_τ(y))`,
//!
//! with `C₀ = Σ_τ N_τ·cost(empty_τ)` and `ρ_τ(y)` the pricing value of type `τ`. At the
//! master's duals `(y, μ)` this is `LP_master + Σ_τ N_τ·min(0, ρ_τ − μ_τ)` (Farley), since
//! `LP_master = C₀ + Σ_s y_s·count_s + Σ_τ N_τ·μ_τ`. Any lower bound on `ρ_τ` (HiGHS's dual
//! bound when pricing stops early) keeps `L` valid, and so do smoothed prices.

use crate::model::Demand;

/// `L(y)` from lower bounds `rho_lower[τ] ≤ ρ_τ(y)` (each ≤ 0).
pub(crate) fn lagrangian_bound(
    constant: f64,
    prices: &[f64],
    shape_counts: &[usize],
    type_nodes: &[usize],
    rho_lower: &[f64],
) -> f64 {
    let demand: f64 = prices
        .iter()
        .zip(shape_counts)
        .map(|(y, &count)| y * count as f64)
        .sum();
    let nodes: f64 = rho_lower
        .iter()
        .zip(type_nodes)
        .map(|(rho, &n)| n as f64 * rho.min(0.0))
        .sum();
    constant + demand + nodes
}

/// Prices at which the Lagrangian bound is valid: `≤` rows of a minimisation carry
/// non-positive prices.
pub(crate) fn project(prices: &mut [f64], demand: Demand) {
    if demand == Demand::AtMost {
        for y in prices {
            *y = y.min(0.0);
        }
    }
}

/// Wentges smoothing: price at `α·centre + (1 − α)·y_master`, the centre being the prices
/// of the best Lagrangian bound so far. Damps the dual oscillation that makes plain column
/// generation tail off; a mis-price (no improving column for the master) prices at the
/// master's own duals next time, so convergence is kept.
pub(crate) struct Smoothing {
    pub alpha: f64,
    centre: Option<Vec<f64>>,
    best: f64,
    mispriced: bool,
}

impl Smoothing {
    pub fn new(alpha: f64) -> Self {
        Smoothing {
            alpha,
            centre: None,
            best: f64::NEG_INFINITY,
            mispriced: false,
        }
    }

    /// The prices to price at this iteration.
    pub fn prices(&self, master: &[f64]) -> Vec<f64> {
        match (&self.centre, self.mispriced) {
            (Some(centre), false) if self.alpha > 0.0 => centre
                .iter()
                .zip(master)
                .map(|(c, y)| self.alpha * c + (1.0 - self.alpha) * y)
                .collect(),
            _ => master.to_vec(),
        }
    }

    /// Records the bound reached at `prices` and whether pricing improved the master.
    /// Returns whether `prices` were the master's own duals (then no improving column
    /// means the master LP is optimal).
    pub fn record(&mut self, prices: &[f64], bound: f64, improved: bool, master: &[f64]) -> bool {
        if bound > self.best {
            self.best = bound;
            self.centre = Some(prices.to_vec());
        }
        let at_master = prices == master;
        self.mispriced = !improved && !at_master;
        at_master
    }

    pub fn best_bound(&self) -> f64 {
        self.best
    }
}
