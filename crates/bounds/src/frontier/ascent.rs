//! The Lagrangian bound at chosen budgets by a deterministic dual ascent on `(λ, μ)` together
//! (time-and-budgets §6.2 c.3): the trace-scale frontier without a master LP.
//!
//! For a target budget `B` the best bound of [`super::lagrangian`] is
//! `max_{λ≥0, μ≥0} L_B(λ, μ) = D(λ, μ) − λ·B`, a concave function whose subgradient is
//! `(Σ_j budget_j − B, Σ_j gpu_s_jt − cap_t)` at the per-job cheapest schedules
//! ([`super::job`]). Its maximum equals the column-generation master LP's optimum; reaching
//! it by steps instead of LP solves costs one pricing pass per step and no LP at all, which
//! is what a 6,000-job, 2,300-slot instance can afford. The steps:
//!
//! - slot prices in scaled coordinates `μ̃_t = μ_t·cap_t` (seconds of JCT for the whole
//!   slot), so a 15-minute slot and a 6-hour one move alike: the scaled subgradient is the
//!   relative over-use `(U_t − cap_t)/cap_t`;
//! - projected: a price at 0 whose slot is slack does not count in the step length;
//! - deflected (Volume-style): direction `d = 0.7·g + 0.3·d_prev`;
//! - Polyak length `θ·δ·|L_best| / ‖d‖²` (aiming `δ` above the best value so far), `θ`
//!   halved after `STALL` steps without progress (and the prices reset to the best found);
//! - the budget price by its own controller: `λ ← λ·e^{±h}` towards spending `B` (`λ`
//!   starts at the unconstrained JCT per unit of budget when the budget first binds, and
//!   after a restart at `λ = 0` at the lowest `λ` that underspent), `h` halved at every
//!   reversal — `λ` must range over orders of magnitude, which a common
//!   step length cannot serve.
//!
//! Budgets are taken from the loosest to the tightest, each warm-started from the prices the
//! previous one ended with. Every evaluation adds a line `Σ JCT ≥ D(λ, μ) − λ·B'`, valid for
//! every budget `B'`; the frontier is their upper envelope. Everything is counted in steps,
//! never in seconds, and summed in job order: the same instance gives the same lines on any
//! machine and any number of threads.

use super::lagrangian::{evaluate_schedules, Evaluation, Frontier, FrontierLine, PricePair};
use super::master::ColumnSet;
use super::rates::BudgetRates;
use super::FrontierInstance;
use crate::error::BoundError;

/// λ's own controller: a factor `e^h` towards the budget, `h` halved on every reversal.
struct PriceControl {
    h: f64,
    /// The previous step's direction (+1: overspent, λ went up).
    last_sign: f64,
    /// Where λ starts from 0 once overspent: the reference price at first, then the lowest
    /// λ that underspent. A climb whose best prices so far are at λ = 0 restarts there
    /// after a stall; starting again at the reference price each time would never get
    /// below it where the budget binds only a little (the loosest budgets).
    from_zero: f64,
}

impl PriceControl {
    /// The next λ from `lambda`, given the budget used minus the budget.
    fn step(&mut self, lambda: f64, overspent: f64) -> f64 {
        let sign = overspent.signum();
        if sign * self.last_sign < 0.0 {
            self.h *= 0.5;
        }
        self.last_sign = sign;
        if sign < 0.0 && lambda > 0.0 {
            self.from_zero = self.from_zero.min(lambda);
        }
        if lambda <= 0.0 {
            if sign > 0.0 {
                self.from_zero
            } else {
                0.0
            }
        } else {
            lambda * (sign * self.h).exp()
        }
    }
}

/// How many pricing passes to spend.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AscentOptions {
    /// Steps on `μ` at `λ = 0` (the unconstrained line) before the first budget.
    pub unconstrained_steps: usize,
    /// Steps on `(λ, μ)` per target budget.
    pub steps_per_budget: usize,
    /// One line per step on stderr.
    pub progress: bool,
}

impl Default for AscentOptions {
    fn default() -> Self {
        AscentOptions {
            unconstrained_steps: 20,
            steps_per_budget: 20,
            progress: false,
        }
    }
}

/// The envelope, and the best bound reached at each target budget.
#[derive(Debug, Clone, PartialEq)]
pub struct AscentFrontier {
    pub frontier: Frontier,
    /// Per target budget (in the order given): the bound on total JCT at it (`None` below
    /// the least budget).
    pub budgets: Vec<(f64, Option<f64>)>,
    /// Pricing passes (each prices every job once).
    pub evaluations: usize,
}

/// Steps without progress before the step length halves.
const STALL: usize = 3;
/// Weight of the current subgradient in the direction (the rest is the previous direction).
const DEFLECTION: f64 = 0.7;
/// First aim above the best value, as a share of it.
const FIRST_AIM: f64 = 0.02;
/// First log-step of the budget price.
const LAMBDA_FIRST_STEP: f64 = 0.5;

/// The ascent's state: prices, direction and step control.
struct Ascent<'a> {
    instance: &'a FrontierInstance,
    rates: BudgetRates,
    capacity: Vec<f64>,
    budget_price: f64,
    /// Where `λ` starts when a budget first binds: unconstrained JCT per unit of budget.
    reference_price: f64,
    gpu_second: Vec<f64>,
    lines: Vec<FrontierLine>,
    evaluations: usize,
    progress: bool,
    /// The distinct schedules priced in the last `keep_last_steps` steps of every climb,
    /// when kept (column generation's first columns).
    kept: Option<ColumnSet>,
    keep_last_steps: usize,
    /// Whether this evaluation's schedules are kept.
    keep_now: bool,
}

impl Ascent<'_> {
    /// Maximises `D(λ, μ) − λ·budget` for `steps` steps (`budget = None`: `λ` stays 0),
    /// leaving the best prices found; returns the best value.
    fn climb(&mut self, budget: Option<f64>, steps: usize) -> f64 {
        let slots = self.capacity.len();
        let value = |e: &Evaluation, lambda: f64| e.dual - lambda * budget.unwrap_or(0.0);
        self.keep_now = steps < self.keep_last_steps;
        let mut current = self.evaluate();
        let mut best = value(&current, self.budget_price);
        let (mut best_lambda, mut best_mu) = (self.budget_price, self.gpu_second.clone());
        let mut best_evaluation = current.clone();
        let mut direction = vec![0.0; slots];
        let (mut theta, mut stalled) = (1.0, 0);
        let mut control = PriceControl {
            h: LAMBDA_FIRST_STEP,
            last_sign: 0.0,
            from_zero: self.reference_price,
        };
        for step in 0..steps {
            let aim = theta * FIRST_AIM * best.abs().max(1.0);
            let norm = self.step_slot_prices(&current, &mut direction, step == 0, aim);
            if let Some(b) = budget {
                self.budget_price = control.step(self.budget_price, current.budget_used - b);
            } else if norm <= 1e-18 {
                break; // every slot balanced: these prices are optimal at λ = 0
            }
            self.keep_now = step + self.keep_last_steps >= steps;
            current = self.evaluate();
            let now = value(&current, self.budget_price);
            if self.progress {
                eprintln!(
                    "ascent: budget {:?}, step {}: λ {:.4e}, spent {:.3}, value {:.6e}, best {:.6e}, θ {theta}",
                    budget,
                    step + 1,
                    self.budget_price,
                    current.budget_used,
                    now,
                    best
                );
            }
            if now > best * (1.0 + 1e-9) {
                best = now;
                best_lambda = self.budget_price;
                best_mu.copy_from_slice(&self.gpu_second);
                best_evaluation = current.clone();
                stalled = 0;
            } else {
                stalled += 1;
                if stalled >= STALL {
                    theta *= 0.5;
                    stalled = 0;
                    // Restart from the best prices with a fresh direction.
                    self.budget_price = best_lambda;
                    self.gpu_second.copy_from_slice(&best_mu);
                    current = best_evaluation.clone();
                    direction.iter_mut().for_each(|d| *d = 0.0);
                    control.last_sign = 0.0; // a jump back is no reversal
                }
            }
        }
        self.budget_price = best_lambda;
        self.gpu_second = best_mu;
        best
    }

    /// One scaled, projected, deflected subgradient step on the slot prices from `current`
    /// (`first`: no earlier direction to deflect), of length `aim / ‖direction‖²`; returns
    /// `‖direction‖²` (0: every slot balanced, nothing moved).
    fn step_slot_prices(
        &mut self,
        current: &Evaluation,
        direction: &mut [f64],
        first: bool,
        aim: f64,
    ) -> f64 {
        let slot_state = current
            .subgradient
            .iter()
            .zip(&self.capacity)
            .zip(&self.gpu_second);
        for (d, ((over_s, cap), price)) in direction.iter_mut().zip(slot_state) {
            let over = over_s / cap;
            let g = if *price <= 0.0 && over < 0.0 {
                0.0
            } else {
                over
            };
            *d = if first {
                g
            } else {
                DEFLECTION * g + (1.0 - DEFLECTION) * *d
            };
        }
        let norm: f64 = direction.iter().map(|d| d * d).sum();
        if norm > 1e-18 {
            let length = aim / norm;
            let slot_state = self.gpu_second.iter_mut().zip(&self.capacity);
            for ((price, cap), d) in slot_state.zip(direction.iter()) {
                *price = (*price * cap + length * d).max(0.0) / cap;
            }
        }
        norm
    }

    /// Prices every job at the current prices and records the line (and the schedules,
    /// when kept).
    fn evaluate(&mut self) -> Evaluation {
        let (evaluation, schedules) = evaluate_schedules(
            self.instance,
            &self.rates,
            self.budget_price,
            &self.gpu_second,
        );
        if let (Some(kept), true) = (&mut self.kept, self.keep_now) {
            for (job, schedule) in schedules.into_iter().enumerate() {
                kept.insert(job, schedule);
            }
        }
        self.evaluations += 1;
        self.lines.push(FrontierLine {
            budget_price: self.budget_price,
            intercept: evaluation.dual,
        });
        evaluation
    }
}

/// The Lagrangian envelope of `instance`, pushed up at each of `budgets` (any order; kWh or
/// kg as the instance's budget) by [`AscentOptions`] steps.
pub fn ascent_frontier(
    instance: &FrontierInstance,
    budgets: &[f64],
    options: &AscentOptions,
) -> Result<AscentFrontier, BoundError> {
    ascend(instance, budgets, options, None).map(|(frontier, _)| frontier)
}

/// What column generation starts from after an ascent: the best prices found at each
/// target budget and their line (in the order given; `None` where the ascent did not
/// climb), and the distinct schedules of every climb's last steps, when kept.
pub(crate) struct AscentStart {
    pub centres: Vec<Option<(FrontierLine, PricePair)>>,
    pub columns: Option<ColumnSet>,
}

/// [`ascent_frontier`], with what column generation starts from: with `keep_last_steps`,
/// the schedules priced in that many last steps of every climb.
pub(crate) fn ascend(
    instance: &FrontierInstance,
    budgets: &[f64],
    options: &AscentOptions,
    keep_last_steps: Option<usize>,
) -> Result<(AscentFrontier, AscentStart), BoundError> {
    instance.validate()?;
    let rates = BudgetRates::of(instance);
    let capacity: Vec<f64> = (0..instance.slots.count())
        .map(|t| instance.capacity(t))
        .collect();
    let least_budget = instance.least_budget();
    let mut ascent = Ascent {
        instance,
        rates,
        capacity,
        budget_price: 0.0,
        reference_price: 0.0,
        gpu_second: vec![0.0; instance.slots.count()],
        lines: Vec::new(),
        evaluations: 0,
        progress: options.progress,
        kept: keep_last_steps.map(|_| ColumnSet::default()),
        keep_last_steps: keep_last_steps.unwrap_or(0),
        keep_now: false,
    };
    // The unconstrained schedules' budget: where the envelope turns flat.
    let unconstrained = ascent.evaluate();
    let unconstrained_budget = unconstrained.budget_used;
    let unconstrained_total = ascent.climb(None, options.unconstrained_steps);
    ascent.reference_price = unconstrained_total / unconstrained_budget.max(1e-12);
    let mut order: Vec<usize> = (0..budgets.len())
        .filter(|&k| budgets[k].is_finite() && budgets[k] > least_budget)
        .collect();
    order.sort_by(|&a, &b| budgets[b].total_cmp(&budgets[a]));
    let mut centres = vec![None; budgets.len()];
    for &k in &order {
        if options.steps_per_budget > 0 {
            let best = ascent.climb(Some(budgets[k]), options.steps_per_budget);
            let line = FrontierLine {
                budget_price: ascent.budget_price,
                intercept: best + ascent.budget_price * budgets[k],
            };
            centres[k] = Some((line, (ascent.budget_price, ascent.gpu_second.clone())));
        }
    }
    let frontier = Frontier {
        lines: ascent.lines,
        jobs: instance.jobs.len(),
        least_budget,
        unconstrained_budget,
    };
    let start = AscentStart {
        centres,
        columns: ascent.kept.take(),
    };
    let result = AscentFrontier {
        budgets: budgets
            .iter()
            .map(|&b| (b, frontier.total_jct_bound(b)))
            .collect(),
        frontier,
        evaluations: ascent.evaluations,
    };
    Ok((result, start))
}
