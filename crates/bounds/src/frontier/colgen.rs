//! Column generation over whole per-job schedules (time-and-budgets §6.2 c.3): the
//! configuration LP of the frontier problem, whose optimum is the best bound any `(λ, μ)`
//! of [`super::lagrangian`] can give, reached by LP re-solves rather than subgradient steps.
//!
//! The master ([`super::master`]) picks a convex combination of known schedules per job
//! (one convexity row per job) within every slot's GPU-seconds (one row per slot) and the
//! budget (one row). Its duals are prices `(π_j, μ_t, λ)`; pricing is the same exact per-job
//! problem the Lagrangian solves ([`super::job::cheapest_schedule`]) at `(λ, μ)`, and a
//! schedule cheaper than `π_j` is a new column. Every round's prices also give the
//! Lagrangian (Farley) bound
//! ```text
//! Σ JCT ≥ Σ_j min_schedule_j [JCT + λ·budget + Σ_t μ_t·gpu_s_t] − Σ_t μ_t·cap_t − λ·B
//! ```
//! valid for every budget `B`, whenever the loop stops, so each round adds a line to the
//! same envelope the Lagrangian builds ([`Frontier`]). The master LP value is never below
//! the best bound; their distance says how far the bound is from the LP's own optimum
//! (`converged` when within the tolerance).
//!
//! Warm start: every job's schedule after the horizon at its most frugal configuration
//! (uses no slot, so the master is feasible for every budget at or above the least one),
//! and either the cheapest schedules at each `(λ, μ)` of a short Lagrangian sweep, or the
//! distinct schedules a dual ascent ([`super::ascent`]) aimed at the budgets priced in the
//! last steps of each climb.
//!
//! Stabilisation (Wentges smoothing): a restricted master's duals swing far from the
//! optimal ones while it lacks columns, and pricing at them alone brings columns that are
//! never used (the tailing-off of a 6,000-job master). Each round therefore prices at
//! `α·(λ̂, μ̂) + (1 − α)·(λ, μ)`, between the prices of the best line at the budget so far
//! (the stability centre, from the warm start) and the master's; every priced point is a
//! valid line, and a better one becomes the centre. A schedule enters the master when its
//! reduced cost at the master's own duals is negative; when none does (a mis-price),
//! `α` shrinks towards 0, where pricing is at the master's duals and finding no column
//! proves the master optimal. The bound is the same Lagrangian envelope either way.

use std::time::Instant;

use gapbench_results::{BudgetBoundStatus, ColgenStatus};

use super::ascent::{ascend, AscentOptions};
use super::incumbent::integer_total_jct;
use super::job::JobSchedule;
use super::known::KnownSchedule;
use super::lagrangian::{
    evaluate_schedules, lagrangian_sweep, price_jobs, Frontier, FrontierLine, LagrangianOptions,
    PricePair,
};
use super::list_schedule::list_schedule;
use super::master::{ColumnSet, MasterDuals, ScheduleColumn, ScheduleMaster};
use super::rates::BudgetRates;
use super::FrontierInstance;
use crate::error::BoundError;

/// What starts the master and the stability centres.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WarmStart {
    /// A Lagrangian sweep of budget prices (bounded by a third of the time limit): the
    /// schedules at its prices.
    Sweep(LagrangianOptions),
    /// A dual ascent aimed at each budget (counted in steps): the distinct schedules of
    /// each climb's last steps, and its best prices at each budget as that budget's first
    /// centre.
    Ascent(AscentOptions),
}

/// How hard to work on the envelope.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColumnGenerationOptions {
    pub warm_start: WarmStart,
    /// Wentges smoothing `α` in `[0, 1)`: the centre's weight in the pricing point (0 =
    /// price at the master's duals only).
    pub smoothing: f64,
    /// Master solves (each followed by pricing every job) per budget, at most.
    pub rounds_per_budget: usize,
    /// Stop a budget once `(master LP − bound) ≤ tolerance · master LP`.
    pub tolerance: f64,
    /// Wall-clock limit on the whole frontier, seconds: the bound stays valid when it
    /// cuts a budget short (its status then says so).
    pub time_limit_s: f64,
    /// HiGHS threads for the master (pricing uses rayon's pool).
    pub threads: Option<u32>,
    /// After each budget, the best schedule found: a list schedule in the master LP's order
    /// (`list_schedule.rs`) or a known one, improved by a branch and bound over them and the
    /// master's columns within this many nodes (`incumbent.rs`; 0: none); `None`: no
    /// schedule is looked for.
    pub incumbent_nodes: Option<usize>,
    /// One line per round on stderr.
    pub progress: bool,
}

impl Default for ColumnGenerationOptions {
    fn default() -> Self {
        ColumnGenerationOptions {
            warm_start: WarmStart::Sweep(LagrangianOptions {
                budget_prices: 8,
                subgradient_steps: 10,
            }),
            smoothing: 0.8,
            rounds_per_budget: 40,
            tolerance: 0.005,
            time_limit_s: 300.0,
            threads: Some(1),
            incumbent_nodes: None,
            progress: false,
        }
    }
}

/// What column generation proved at one budget.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetBound {
    pub budget: f64,
    /// The envelope at this budget (every line, of every budget): a lower bound on total
    /// JCT. `None` below the least budget (no schedule exists).
    pub total_jct_bound_s: Option<f64>,
    /// The last restricted master LP value: the bound cannot pass it.
    pub master_total_jct_s: Option<f64>,
    /// The total JCT of the best schedule found (when asked): the frontier problem's
    /// optimum is at most this.
    pub incumbent_total_jct_s: Option<f64>,
    pub rounds: usize,
    /// Pricing passes (every job priced once) at this budget, mis-prices included.
    pub pricing_passes: usize,
    /// The bound is within the tolerance of the master LP.
    pub converged: bool,
    /// The time limit cut this budget short.
    pub timed_out: bool,
}

impl BudgetBound {
    /// What column generation reached here: `converged` (the bound is within the tolerance
    /// of the master LP), `time limit` or `stopped` (out of rounds or of improving columns:
    /// the bound valid, the LP not reached), `infeasible` (below the least budget).
    pub fn status(&self) -> ColgenStatus {
        if self.total_jct_bound_s.is_none() {
            ColgenStatus::Infeasible
        } else if self.converged {
            ColgenStatus::Converged
        } else if self.timed_out {
            ColgenStatus::TimeLimit
        } else {
            ColgenStatus::Stopped
        }
    }
}

/// Within this share of the master LP's value, a point's bound counts as converged (column
/// generation's own tolerance).
const CONVERGED_WITHIN: f64 = 0.005;

/// The status of the mean-JCT bound `bound_mean_s` of a point that spent `spent`, and the
/// most any bound of this relaxation could be there (mean JCT, s): `tightened` holds the
/// master LP's mean-JCT values at the budgets column generation tightened, `(budget, mean
/// JCT s)` by budget, interpolated between them (the LP's value is convex in the budget).
pub fn bound_status_at(
    tightened: &[(f64, f64)],
    spent: f64,
    bound_mean_s: f64,
) -> (BudgetBoundStatus, Option<f64>) {
    if tightened.is_empty() {
        // No master LP solved: the lines are the Lagrangian warm start's (and any
        // pricing round's), valid but with no limit to measure them against.
        return (BudgetBoundStatus::Lagrangian, None);
    }
    let above = tightened.partition_point(|&(b, _)| b < spent);
    let limit = match (
        above.checked_sub(1).map(|k| tightened[k]),
        tightened.get(above),
    ) {
        (_, Some(&(b, lp))) if b == spent => Some(lp),
        (Some((b1, lp1)), Some(&(b2, lp2))) => {
            let share = (spent - b1) / (b2 - b1);
            Some(lp1 + (lp2 - lp1) * share)
        }
        // Above every tightened budget the LP's value can only be lower (it never
        // rises with the budget): the largest budget's value still caps it.
        (Some((_, lp)), None) => Some(lp),
        _ => None,
    };
    match limit {
        None => (BudgetBoundStatus::Outside, None),
        Some(limit) if limit - bound_mean_s <= CONVERGED_WITHIN * limit => {
            (BudgetBoundStatus::Converged, Some(limit))
        }
        Some(limit) => (BudgetBoundStatus::Open, Some(limit)),
    }
}

/// The envelope, and what each budget's column generation reached.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnGenerationFrontier {
    pub frontier: Frontier,
    pub budgets: Vec<BudgetBound>,
    pub columns: usize,
    /// Pricing passes of the warm start.
    pub warm_start_passes: usize,
    pub seconds: f64,
}

/// The JCT–budget envelope of `instance`, tightened by column generation at each of
/// `budgets` (any order; kWh or kg as the instance's budget). The `known` schedules (a
/// policy's replays) only start and join the integer master of
/// [`ColumnGenerationOptions::incumbent_nodes`]; the bound does not depend on them.
pub fn column_generation_frontier(
    instance: &FrontierInstance,
    budgets: &[f64],
    known: &[KnownSchedule],
    options: &ColumnGenerationOptions,
) -> Result<ColumnGenerationFrontier, BoundError> {
    let clock = Instant::now();
    if !(options.tolerance >= 0.0
        && options.time_limit_s > 0.0
        && (0.0..1.0).contains(&options.smoothing))
    {
        return Err(BoundError::Input(
            "column generation needs a tolerance ≥ 0, a positive time limit and a smoothing in [0, 1)".into(),
        ));
    }
    let (mut frontier, start) = warm_start(instance, budgets, options, clock)?;
    if options.progress {
        eprintln!(
            "frontier: warm start in {:.1} s ({} pricing passes, {} slots, {} columns)",
            clock.elapsed().as_secs_f64(),
            start.passes,
            instance.slots.count(),
            start.columns.len()
        );
    }
    let warm_start_passes = start.passes;
    let mut run = Tightening::new(instance, known, options, &frontier, start, clock)?;
    let mut order: Vec<usize> = (0..budgets.len()).collect();
    order.sort_by(|&a, &b| budgets[b].total_cmp(&budgets[a]));
    let mut results: Vec<Option<BudgetBound>> = vec![None; budgets.len()];
    for (done, &k) in order.iter().enumerate() {
        let budget = budgets[k];
        results[k] = Some(if budget.is_finite() && budget >= frontier.least_budget {
            // This budget's share of the time left.
            let left = options.time_limit_s - clock.elapsed().as_secs_f64();
            let deadline = clock.elapsed().as_secs_f64() + left / (order.len() - done) as f64;
            run.tighten(&mut frontier, budget, deadline)?
        } else {
            BudgetBound::untouched(budget)
        });
    }
    Ok(ColumnGenerationFrontier {
        frontier,
        budgets: results
            .into_iter()
            .map(|r| r.expect("every budget"))
            .collect(),
        columns: run.master.columns.len(),
        warm_start_passes,
        seconds: clock.elapsed().as_secs_f64(),
    })
}

/// The ascent's schedules that start the master: those of each climb's last this many
/// steps. Earlier steps price far from the optimum and only make the master larger: on
/// `trace-64gpu-x3` (6,198 jobs) all 65 passes give 50,140 columns and a 72 s master
/// solve, the last 5 of each climb 28,358 columns and 22 s, converged as fast (the last 3
/// tail off: 6 rounds at the loosest budget).
const ASCENT_COLUMNS_FROM_LAST_STEPS: usize = 5;

/// A priced point: its line and the prices `(λ, μ)` that gave it (a stability centre).
type Centre = (FrontierLine, PricePair);

/// The warm start's envelope, first columns and centres.
struct Start {
    columns: ColumnSet,
    centres: Vec<Centre>,
    passes: usize,
}

/// Runs the warm start `options` asks for.
fn warm_start(
    instance: &FrontierInstance,
    budgets: &[f64],
    options: &ColumnGenerationOptions,
    clock: Instant,
) -> Result<(Frontier, Start), BoundError> {
    let rates = BudgetRates::of(instance);
    match options.warm_start {
        WarmStart::Sweep(sweep) => {
            // The sweep may use a third of the time.
            let deadline = clock + std::time::Duration::from_secs_f64(options.time_limit_s / 3.0);
            let (frontier, warm) = lagrangian_sweep(instance, &sweep, Some(deadline))?;
            let mut columns = ColumnSet::default();
            for (budget_price, gpu_second) in &warm {
                let schedules = price_jobs(instance, &rates, *budget_price, gpu_second);
                for (j, schedule) in schedules.into_iter().enumerate() {
                    columns.insert(j, schedule);
                }
            }
            let passes = warm.len();
            let centres = frontier.lines.iter().copied().zip(warm).collect();
            Ok((
                frontier,
                Start {
                    columns,
                    centres,
                    passes,
                },
            ))
        }
        WarmStart::Ascent(ascent) => {
            let (result, start) = ascend(
                instance,
                budgets,
                &ascent,
                Some(ASCENT_COLUMNS_FROM_LAST_STEPS),
            )?;
            Ok((
                result.frontier,
                Start {
                    columns: start.columns.unwrap_or_default(),
                    centres: start.centres.into_iter().flatten().collect(),
                    passes: result.evaluations,
                },
            ))
        }
    }
}

impl BudgetBound {
    /// A budget column generation did not work on (below the least budget, or not finite).
    fn untouched(budget: f64) -> BudgetBound {
        BudgetBound {
            budget,
            total_jct_bound_s: None,
            master_total_jct_s: None,
            incumbent_total_jct_s: None,
            rounds: 0,
            pricing_passes: 0,
            converged: false,
            timed_out: false,
        }
    }
}

/// Column generation across the budgets: the master (kept warm from budget to budget), the
/// columns it holds and the priced points that can serve as centres.
struct Tightening<'a> {
    instance: &'a FrontierInstance,
    /// Schedules the integer master starts from.
    known: &'a [KnownSchedule],
    options: &'a ColumnGenerationOptions,
    rates: BudgetRates,
    master: ScheduleMaster,
    pool: ColumnSet,
    centres: Vec<Centre>,
    /// GPU-seconds of each slot.
    capacity: Vec<f64>,
    clock: Instant,
}

impl<'a> Tightening<'a> {
    /// The master over every job's after-the-horizon schedule (so every budget above the
    /// least is feasible) and the warm start's schedules.
    fn new(
        instance: &'a FrontierInstance,
        known: &'a [KnownSchedule],
        options: &'a ColumnGenerationOptions,
        frontier: &Frontier,
        start: Start,
        clock: Instant,
    ) -> Result<Tightening<'a>, BoundError> {
        let rates = BudgetRates::of(instance);
        let capacity: Vec<f64> = (0..instance.slots.count())
            .map(|t| instance.capacity(t))
            .collect();
        let budget_scale = frontier
            .unconstrained_budget
            .max(frontier.least_budget)
            .max(1e-12);
        let mut master = ScheduleMaster::new(
            instance.jobs.len(),
            &capacity,
            budget_scale,
            options.threads,
        )?;
        let mut pool = ColumnSet::default();
        for j in 0..instance.jobs.len() {
            pool.insert_column(ScheduleColumn::after_horizon(instance, &rates, j));
        }
        pool.absorb(start.columns);
        pool.flush(&mut master)?;
        Ok(Tightening {
            instance,
            known,
            options,
            rates,
            master,
            pool,
            centres: start.centres,
            capacity,
            clock,
        })
    }

    /// Rounds at `budget` until it converges, runs out of rounds or of improving columns,
    /// or passes `deadline` (seconds since the start; its first solve may use all the time
    /// left, the first cold one being the longest). Every pricing pass adds a line to
    /// `frontier`.
    fn tighten(
        &mut self,
        frontier: &mut Frontier,
        budget: f64,
        deadline: f64,
    ) -> Result<BudgetBound, BoundError> {
        let mut result = BudgetBound::untouched(budget);
        let mut last_mix = None;
        self.master.set_budget(budget);
        let mut centre = self
            .centres
            .iter()
            .max_by(|a, b| a.0.at(budget).total_cmp(&b.0.at(budget)))
            .cloned();
        while result.rounds < self.options.rounds_per_budget {
            let elapsed = self.clock.elapsed().as_secs_f64();
            let left = if result.rounds == 0 {
                self.options.time_limit_s - elapsed
            } else {
                deadline - elapsed
            };
            if left <= 0.0 {
                result.timed_out = true;
                break;
            }
            let Some(duals) = self.master.solve(left)? else {
                result.timed_out = true;
                break;
            };
            result.rounds += 1;
            result.master_total_jct_s = Some(duals.total_jct_s);
            let go_on = self.round(frontier, budget, &duals, &mut centre, &mut result)?;
            last_mix = Some((duals.weights, duals.budget, duals.gpu_second));
            if !go_on {
                break;
            }
        }
        result.total_jct_bound_s = frontier.total_jct_bound(budget);
        if let (Some(max_nodes), Some((weights, budget_price, gpu_second_price))) =
            (self.options.incumbent_nodes, last_mix)
        {
            let left = self.options.time_limit_s - self.clock.elapsed().as_secs_f64();
            if left > 0.0 {
                let listed = list_schedule(
                    self.instance,
                    &self.master.columns,
                    &weights,
                    (budget_price, &gpu_second_price),
                    budget,
                );
                let known: Vec<&KnownSchedule> = self.known.iter().chain(&listed).collect();
                result.incumbent_total_jct_s = integer_total_jct(
                    self.instance.jobs.len(),
                    &self.master.columns,
                    &weights,
                    &known,
                    &self.capacity,
                    budget,
                    max_nodes,
                    left,
                )?;
                if self.options.progress {
                    eprintln!(
                        "frontier: budget {budget:.4}, integer schedule {:.0} s, {:.1} s",
                        result.incumbent_total_jct_s.unwrap_or(f64::NAN),
                        self.clock.elapsed().as_secs_f64()
                    );
                }
            }
        }
        Ok(result)
    }

    /// Prices every job between the centre and `duals` (smoothed), and at `duals` too on a
    /// round's first pass (their line is the classic column-generation bound and, as the
    /// master nears its optimum, often the better centre), adds the lines this gives to
    /// `frontier` (the best at `budget` becomes the centre), and the columns that improve
    /// the master at its own duals; on a mis-price it moves the pricing point towards
    /// `duals` and prices again. Whether to go on: not when the bound meets the master LP
    /// (`converged`) or no column improves it even at the master's own duals (the LP is as
    /// low as these columns go).
    fn round(
        &mut self,
        frontier: &mut Frontier,
        budget: f64,
        duals: &MasterDuals,
        centre: &mut Option<Centre>,
        result: &mut BudgetBound,
    ) -> Result<bool, BoundError> {
        let mut mispriced = 0;
        loop {
            let alpha = match centre {
                Some(_) => (1.0 - (mispriced + 1) as f64 * (1.0 - self.options.smoothing)).max(0.0),
                None => 0.0,
            };
            let mut points = vec![smoothed(centre.as_ref(), duals, alpha)];
            if alpha > 0.0 && mispriced == 0 {
                points.push(smoothed(None, duals, 0.0));
            }
            for point in points {
                let schedules = self.price_at(point, budget, frontier, centre);
                result.pricing_passes += 1;
                for (j, schedule) in schedules.into_iter().enumerate() {
                    if self.reduced_cost(duals, j, &schedule) < -1e-9 * (1.0 + duals.job[j].abs()) {
                        self.pool.insert(j, schedule);
                    }
                }
            }
            let bound = frontier.total_jct_bound(budget).unwrap_or(0.0);
            if self.options.progress {
                eprintln!(
                    "frontier: budget {budget:.4}, round {} (α {alpha:.2}): master {:.0} s, bound {:.0} s, {} columns, {:.1} s",
                    result.rounds,
                    duals.total_jct_s,
                    bound,
                    self.master.columns.len(),
                    self.clock.elapsed().as_secs_f64()
                );
            }
            if duals.total_jct_s - bound <= self.options.tolerance * duals.total_jct_s {
                result.converged = true;
                return Ok(false);
            }
            if self.pool.flush(&mut self.master)? > 0 {
                return Ok(true);
            }
            if alpha == 0.0 {
                return Ok(false);
            }
            mispriced += 1;
        }
    }

    /// Prices every job at `point`, adds its line to `frontier` and to the centres (the
    /// centre at `budget` when better there); the schedules, in job order.
    fn price_at(
        &mut self,
        point: PricePair,
        budget: f64,
        frontier: &mut Frontier,
        centre: &mut Option<Centre>,
    ) -> Vec<JobSchedule> {
        let (evaluation, schedules) =
            evaluate_schedules(self.instance, &self.rates, point.0, &point.1);
        let line = FrontierLine {
            budget_price: point.0,
            intercept: evaluation.dual,
        };
        frontier.lines.push(line);
        if centre
            .as_ref()
            .is_none_or(|c| line.at(budget) > c.0.at(budget))
        {
            *centre = Some((line, point.clone()));
        }
        self.centres.push((line, point));
        schedules
    }

    /// `schedule`'s reduced cost at the master's duals: JCT + λ·budget + Σ μ_t·GPU-s − π_j.
    fn reduced_cost(&self, duals: &MasterDuals, job: usize, schedule: &JobSchedule) -> f64 {
        let held: f64 = schedule
            .gpu_seconds
            .iter()
            .map(|&(t, seconds)| duals.gpu_second[t] * seconds)
            .sum();
        schedule.jct_s + duals.budget * schedule.budget_used + held - duals.job[job]
    }
}

/// The pricing point `α·centre + (1 − α)·duals` (the duals alone without a centre).
fn smoothed(centre: Option<&Centre>, duals: &MasterDuals, alpha: f64) -> PricePair {
    match centre {
        Some((_, (lambda, mu))) if alpha > 0.0 => (
            alpha * lambda + (1.0 - alpha) * duals.budget,
            mu.iter()
                .zip(&duals.gpu_second)
                .map(|(c, d)| alpha * c + (1.0 - alpha) * d)
                .collect(),
        ),
        _ => (duals.budget, duals.gpu_second.clone()),
    }
}
