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
//! and the cheapest schedules at each `(λ, μ)` of a short Lagrangian sweep.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::time::Instant;

use gapbench_results::{BudgetBoundStatus, ColgenStatus};
use rayon::prelude::*;

use super::job::{cheapest_schedule, JobSchedule};
use super::lagrangian::{lagrangian_sweep, Frontier, FrontierLine, LagrangianOptions, PricePair};
use super::master::{MasterDuals, ScheduleColumn, ScheduleMaster};
use super::rates::{BudgetRates, Prices};
use super::{FrontierInstance, FrontierJob};
use crate::error::BoundError;

/// How hard to work on the envelope.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColumnGenerationOptions {
    /// The Lagrangian sweep whose schedules start the master.
    pub warm_start: LagrangianOptions,
    /// Master solves (each followed by pricing every job) per budget, at most.
    pub rounds_per_budget: usize,
    /// Stop a budget once `(master LP − bound) ≤ tolerance · master LP`.
    pub tolerance: f64,
    /// Wall-clock limit on the whole frontier, seconds: the bound stays valid when it
    /// cuts a budget short (its status then says so).
    pub time_limit_s: f64,
    /// HiGHS threads for the master (pricing uses rayon's pool).
    pub threads: Option<u32>,
    /// One line per round on stderr.
    pub progress: bool,
}

impl Default for ColumnGenerationOptions {
    fn default() -> Self {
        ColumnGenerationOptions {
            warm_start: LagrangianOptions {
                budget_prices: 8,
                subgradient_steps: 10,
            },
            rounds_per_budget: 40,
            tolerance: 0.005,
            time_limit_s: 300.0,
            threads: Some(1),
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
    pub rounds: usize,
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
    pub seconds: f64,
}

/// The JCT–budget envelope of `instance`, tightened by column generation at each of
/// `budgets` (any order; kWh or kg as the instance's budget).
pub fn column_generation_frontier(
    instance: &FrontierInstance,
    budgets: &[f64],
    options: &ColumnGenerationOptions,
) -> Result<ColumnGenerationFrontier, BoundError> {
    let clock = Instant::now();
    if !(options.tolerance >= 0.0 && options.time_limit_s > 0.0) {
        return Err(BoundError::Input(
            "column generation needs a tolerance ≥ 0 and a positive time limit".into(),
        ));
    }
    // The warm start may use a third of the time.
    let warm_deadline = clock + std::time::Duration::from_secs_f64(options.time_limit_s / 3.0);
    let (mut frontier, warm) =
        lagrangian_sweep(instance, &options.warm_start, Some(warm_deadline))?;
    if options.progress {
        eprintln!(
            "frontier: Lagrangian warm start in {:.1} s ({} slots)",
            clock.elapsed().as_secs_f64(),
            instance.slots.count()
        );
    }
    let mut run = Tightening::new(instance, options, &frontier, &warm, clock)?;
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
        columns: run.master.columns,
        seconds: clock.elapsed().as_secs_f64(),
    })
}

impl BudgetBound {
    /// A budget column generation did not work on (below the least budget, or not finite).
    fn untouched(budget: f64) -> BudgetBound {
        BudgetBound {
            budget,
            total_jct_bound_s: None,
            master_total_jct_s: None,
            rounds: 0,
            converged: false,
            timed_out: false,
        }
    }
}

/// Column generation across the budgets: the master (kept warm from budget to budget) and
/// the columns it holds.
struct Tightening<'a> {
    instance: &'a FrontierInstance,
    options: &'a ColumnGenerationOptions,
    rates: BudgetRates,
    /// GPU-seconds of each slot.
    capacity: Vec<f64>,
    master: ScheduleMaster,
    pool: ColumnSet,
    clock: Instant,
}

impl<'a> Tightening<'a> {
    /// The master over every job's after-the-horizon schedule (so every budget above the
    /// least is feasible) and the Lagrangian warm start's schedules at its prices `warm`.
    fn new(
        instance: &'a FrontierInstance,
        options: &'a ColumnGenerationOptions,
        frontier: &Frontier,
        warm: &[PricePair],
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
        for (j, job) in instance.jobs.iter().enumerate() {
            pool.add(&mut master, after_horizon(instance, &rates, j, job))?;
        }
        for (budget_price, gpu_second) in warm {
            for (j, schedule) in price(instance, &rates, *budget_price, gpu_second)
                .into_iter()
                .enumerate()
            {
                pool.add(&mut master, column_of(j, schedule))?;
            }
        }
        Ok(Tightening {
            instance,
            options,
            rates,
            capacity,
            master,
            pool,
            clock,
        })
    }

    /// Rounds at `budget` until it converges, runs out of rounds or of improving columns,
    /// or passes `deadline` (seconds since the start; its first solve may use all the time
    /// left, the first cold one being the longest). Every round's duals add a line to
    /// `frontier`.
    fn tighten(
        &mut self,
        frontier: &mut Frontier,
        budget: f64,
        deadline: f64,
    ) -> Result<BudgetBound, BoundError> {
        let mut result = BudgetBound::untouched(budget);
        self.master.set_budget(budget);
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
            if !self.round(frontier, budget, &duals, &mut result)? {
                break;
            }
        }
        result.total_jct_bound_s = frontier.total_jct_bound(budget);
        Ok(result)
    }

    /// Prices every job at `duals`, adds the Lagrangian line they give to `frontier`, and
    /// the columns that improve the master to it. Whether to go on: not when the bound
    /// meets the master LP (`converged`) or no column improves it (the LP is as low as
    /// these columns go).
    fn round(
        &mut self,
        frontier: &mut Frontier,
        budget: f64,
        duals: &MasterDuals,
        result: &mut BudgetBound,
    ) -> Result<bool, BoundError> {
        let schedules = price(self.instance, &self.rates, duals.budget, &duals.gpu_second);
        let priced: f64 = schedules.iter().map(|s| s.cost).sum();
        let held: f64 = duals
            .gpu_second
            .iter()
            .zip(&self.capacity)
            .map(|(mu, cap)| mu * cap)
            .sum();
        frontier.lines.push(FrontierLine {
            budget_price: duals.budget,
            intercept: priced - held,
        });
        let bound = frontier.total_jct_bound(budget).unwrap_or(0.0);
        if self.options.progress {
            eprintln!(
                "frontier: budget {budget:.4}, round {}: master {:.0} s, bound {:.0} s, {} columns, {:.1} s",
                result.rounds,
                duals.total_jct_s,
                bound,
                self.master.columns,
                self.clock.elapsed().as_secs_f64()
            );
        }
        if duals.total_jct_s - bound <= self.options.tolerance * duals.total_jct_s {
            result.converged = true;
            return Ok(false);
        }
        let mut added = 0;
        for (j, schedule) in schedules.into_iter().enumerate() {
            let reduced = schedule.cost - duals.job[j];
            if reduced < -1e-9 * (1.0 + duals.job[j].abs()) {
                added += usize::from(self.pool.add(&mut self.master, column_of(j, schedule))?);
            }
        }
        Ok(added > 0)
    }
}

/// The cheapest schedule of every job at `(λ, μ)`, in job order.
fn price(
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

fn column_of(job: usize, schedule: JobSchedule) -> ScheduleColumn {
    ScheduleColumn {
        job,
        jct_s: schedule.jct_s,
        budget_used: schedule.budget_used,
        gpu_seconds: schedule.gpu_seconds,
    }
}

/// Job `j` waiting out the horizon, then running its most frugal configuration (no slot
/// capacity used).
fn after_horizon(
    instance: &FrontierInstance,
    rates: &BudgetRates,
    j: usize,
    job: &FrontierJob,
) -> ScheduleColumn {
    let waited_s = (instance.slots.horizon_s() - job.arrival_s).max(0.0);
    let rate = rates.after_horizon;
    let (run_s, budget_used) = job
        .configs
        .iter()
        .map(|c| {
            let run_s = job.iterations / c.iterations_per_s;
            (run_s, run_s * c.watts * rate)
        })
        .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.total_cmp(&b.0)))
        .expect("a validated job has a configuration");
    ScheduleColumn {
        job: j,
        jct_s: waited_s + run_s,
        budget_used,
        gpu_seconds: Vec::new(),
    }
}

/// The columns in the master, to add none twice.
#[derive(Default)]
struct ColumnSet {
    seen: HashSet<u64>,
}

impl ColumnSet {
    /// Adds `column` unless an identical one is in; true when added.
    fn add(
        &mut self,
        master: &mut ScheduleMaster,
        column: ScheduleColumn,
    ) -> Result<bool, BoundError> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        column.job.hash(&mut hasher);
        column.jct_s.to_bits().hash(&mut hasher);
        column.budget_used.to_bits().hash(&mut hasher);
        for &(slot, seconds) in &column.gpu_seconds {
            slot.hash(&mut hasher);
            seconds.to_bits().hash(&mut hasher);
        }
        if !self.seen.insert(hasher.finish()) {
            return Ok(false);
        }
        master.add(&column)?;
        Ok(true)
    }
}
