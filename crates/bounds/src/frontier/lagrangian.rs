//! The Lagrangian lower envelope of total JCT over budgets.
//!
//! For prices `λ ≥ 0` (budget) and `μ_t ≥ 0` (GPU-seconds of slot `t`), weak duality gives,
//! for every schedule within budget `B`,
//! ```text
//! Σ_j JCT_j ≥ D(λ, μ) − λ·B,   D(λ, μ) = Σ_j min_schedule_j [JCT_j + λ·budget_j + Σ_t μ_t·gpu_s_jt] − Σ_t μ_t·G·Δ
//! ```
//! Each job's minimum is exact ([`super::job`]), so every evaluated `(λ, μ)` is a valid line,
//! and the frontier at `B` is the highest line there. For each `λ` of a geometric sweep
//! (starting at 0), projected subgradient steps on `μ` (step `θ·0.01·|D| / ‖g‖²` along
//! `g_t = Σ_j gpu_s_jt − G·Δ`, `θ` halved after five steps without progress) raise `D`;
//! `μ` is warm-started from the previous `λ`.

use std::time::Instant;

use rayon::prelude::*;

use super::job::{cheapest_schedule, JobSchedule};
use super::rates::{BudgetRates, Prices};
use super::FrontierInstance;
use crate::error::BoundError;

/// How hard to work on the envelope.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LagrangianOptions {
    /// Budget prices after λ = 0: a geometric sweep of this many values around the ratio of
    /// JCT to budget of the unconstrained schedules.
    pub budget_prices: usize,
    /// Subgradient steps on the capacity prices for each budget price.
    pub subgradient_steps: usize,
}

impl Default for LagrangianOptions {
    fn default() -> Self {
        LagrangianOptions {
            budget_prices: 32,
            subgradient_steps: 200,
        }
    }
}

/// One valid inequality: `Σ JCT ≥ intercept − budget_price · B` for every budget `B`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrontierLine {
    pub budget_price: f64,
    pub intercept: f64,
}

impl FrontierLine {
    /// The bound this line gives at `budget`: `intercept − budget_price · budget`.
    pub fn at(&self, budget: f64) -> f64 {
        self.intercept - self.budget_price * budget
    }
}

/// The lower envelope of total (and mean) JCT over budgets.
#[derive(Debug, Clone, PartialEq)]
pub struct Frontier {
    pub lines: Vec<FrontierLine>,
    pub jobs: usize,
    /// Below this budget no schedule exists (every job at its most frugal configuration).
    pub least_budget: f64,
    /// The budget the unconstrained (λ = 0) schedules used: beyond it the bound is flat.
    pub unconstrained_budget: f64,
}

impl Frontier {
    /// A lower bound on total JCT (seconds) of every schedule within `budget`; `None` when no
    /// schedule fits the budget at all.
    pub fn total_jct_bound(&self, budget: f64) -> Option<f64> {
        if budget < self.least_budget {
            return None;
        }
        let best = self
            .lines
            .iter()
            .map(|line| line.at(budget))
            .fold(0.0, f64::max);
        Some(best)
    }

    /// A lower bound on mean JCT (seconds) within `budget`.
    pub fn mean_jct_bound(&self, budget: f64) -> Option<f64> {
        self.total_jct_bound(budget)
            .map(|total| total / self.jobs.max(1) as f64)
    }
}

/// One evaluation of the dual function: `D(λ, μ)`, the slots' over-use `Σ_j gpu_s_jt − cap_t`
/// (a subgradient), and the priced schedules' JCT and budget.
#[derive(Clone)]
pub(super) struct Evaluation {
    pub dual: f64,
    pub subgradient: Vec<f64>,
    pub jct_s: f64,
    pub budget_used: f64,
}

/// Prices every job at `(λ, μ)` (in parallel, summed in job order).
pub(super) fn evaluate(
    instance: &FrontierInstance,
    rates: &BudgetRates,
    budget_price: f64,
    gpu_second: &[f64],
) -> Evaluation {
    evaluate_schedules(instance, rates, budget_price, gpu_second).0
}

/// The cheapest schedule of every job at `(λ, μ)`, in job order (priced in parallel).
pub(super) fn price_jobs(
    instance: &FrontierInstance,
    rates: &BudgetRates,
    budget_price: f64,
    gpu_second: &[f64],
) -> Vec<JobSchedule> {
    let prices = Prices {
        budget: budget_price,
        gpu_second,
    };
    instance
        .jobs
        .par_iter()
        .map(|job| cheapest_schedule(instance, job, &prices, rates))
        .collect()
}

/// [`evaluate`], with the schedules it priced (in job order).
pub(super) fn evaluate_schedules(
    instance: &FrontierInstance,
    rates: &BudgetRates,
    budget_price: f64,
    gpu_second: &[f64],
) -> (Evaluation, Vec<JobSchedule>) {
    let schedules = price_jobs(instance, rates, budget_price, gpu_second);
    let mut subgradient: Vec<f64> = (0..instance.slots.count())
        .map(|t| -instance.capacity(t))
        .collect();
    let (mut dual, mut jct_s, mut budget_used) = (0.0, 0.0, 0.0);
    // Summed in job order: the same result on any number of threads.
    for schedule in &schedules {
        dual += schedule.cost;
        jct_s += schedule.jct_s;
        budget_used += schedule.budget_used;
        for &(slot, seconds) in &schedule.gpu_seconds {
            subgradient[slot] += seconds;
        }
    }
    dual -= gpu_second
        .iter()
        .enumerate()
        .map(|(t, price)| price * instance.capacity(t))
        .sum::<f64>();
    let evaluation = Evaluation {
        dual,
        subgradient,
        jct_s,
        budget_used,
    };
    (evaluation, schedules)
}

/// Raises `D(λ, ·)` from `gpu_second` by projected subgradient steps; returns the best
/// dual value, leaving the best prices in `gpu_second`, and the JCT and budget of the
/// schedules at the starting prices.
fn climb(
    instance: &FrontierInstance,
    rates: &BudgetRates,
    budget_price: f64,
    gpu_second: &mut [f64],
    steps: usize,
    deadline: Option<Instant>,
) -> (f64, (f64, f64)) {
    let mut current = evaluate(instance, rates, budget_price, gpu_second);
    let start = (current.jct_s, current.budget_used);
    let (mut best, mut best_prices) = (current.dual, gpu_second.to_vec());
    let (mut step_scale, mut stalled) = (1.0, 0);
    for _ in 0..steps {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break; // every line so far stays valid
        }
        let norm: f64 = current.subgradient.iter().map(|g| g * g).sum();
        if norm <= 1e-18 {
            break; // prices already balance every slot
        }
        let step = step_scale * 0.01 * current.dual.abs().max(1.0) / norm;
        for (price, g) in gpu_second.iter_mut().zip(&current.subgradient) {
            *price = (*price + step * g).max(0.0);
        }
        current = evaluate(instance, rates, budget_price, gpu_second);
        if current.dual > best * (1.0 + 1e-9) {
            best = current.dual;
            best_prices.copy_from_slice(gpu_second);
            stalled = 0;
        } else {
            stalled += 1;
            if stalled >= 5 {
                step_scale *= 0.5;
                stalled = 0;
            }
        }
    }
    gpu_second.copy_from_slice(&best_prices);
    (best, start)
}

/// The Lagrangian lower envelope of total JCT over budgets.
pub fn lagrangian_frontier(
    instance: &FrontierInstance,
    options: &LagrangianOptions,
) -> Result<Frontier, BoundError> {
    lagrangian_sweep(instance, options, None).map(|(frontier, _)| frontier)
}

/// A budget price `λ` and the capacity prices `μ_t` found for it.
pub(crate) type PricePair = (f64, Vec<f64>);

/// [`lagrangian_frontier`], with the best capacity prices found for each budget price
/// (`(λ, μ)` per line, in line order): where column generation starts. Past `deadline`
/// each budget price gets one evaluation, no more steps.
pub(crate) fn lagrangian_sweep(
    instance: &FrontierInstance,
    options: &LagrangianOptions,
    deadline: Option<Instant>,
) -> Result<(Frontier, Vec<PricePair>), BoundError> {
    instance.validate()?;
    let rates = BudgetRates::of(instance);
    let mut gpu_second = vec![0.0; instance.slots.count()];
    let (unconstrained, (start_jct_s, start_budget)) = climb(
        instance,
        &rates,
        0.0,
        &mut gpu_second,
        options.subgradient_steps,
        deadline,
    );
    let mut lines = vec![FrontierLine {
        budget_price: 0.0,
        intercept: unconstrained,
    }];
    let mut prices = vec![(0.0, gpu_second.clone())];
    // Prices around "a second of JCT per budget unit" at the unconstrained point, from
    // 2^-4 to 2^12 times it: enough to reach the frugal end of every instance we tried.
    if start_budget > 0.0 && options.budget_prices > 0 {
        let reference = start_jct_s / start_budget;
        let count = options.budget_prices;
        for k in 0..count {
            let exponent = -4.0 + 16.0 * k as f64 / (count.max(2) - 1) as f64;
            let budget_price = reference * exponent.exp2();
            let (dual, _) = climb(
                instance,
                &rates,
                budget_price,
                &mut gpu_second,
                options.subgradient_steps,
                deadline,
            );
            lines.push(FrontierLine {
                budget_price,
                intercept: dual,
            });
            prices.push((budget_price, gpu_second.clone()));
        }
    }
    let frontier = Frontier {
        lines,
        jobs: instance.jobs.len(),
        least_budget: instance.least_budget(),
        unconstrained_budget: start_budget,
    };
    Ok((frontier, prices))
}
