//! A budget study's frontier as a cell stores it: how a cell computes it, the Lagrangian
//! lines and what column generation reached at the budgets it tightened, the status of a
//! point's bound against them, and where to tighten.

use anyhow::{Context, Result};
use gapbench_bounds::frontier::{
    ascent_frontier, bound_status_at, column_generation_frontier, lagrangian_frontier,
    AscentOptions, ColumnGenerationOptions, Frontier, FrontierInstance, FrontierLine,
    KnownSchedule, LagrangianOptions, WarmStart,
};
use gapbench_replay::Budget;
use gapbench_results::{BudgetBoundStatus, ColgenStatus};
use serde::{Deserialize, Serialize};

use crate::bench::spec::budget::{BudgetSetupSpec, BudgetStudySpec};
use crate::frontier::{
    frontier_instance, policy_points, BudgetSetup, FrontierKind, JobRuns, PolicyPoint,
};

/// A frontier as stored: its valid inequalities, and what column generation reached at
/// the budgets it tightened.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct StoredFrontier {
    pub(crate) jobs: usize,
    pub(crate) least_budget: f64,
    pub(crate) unconstrained_budget: f64,
    /// `(budget price, intercept)` of each line.
    pub(crate) lines: Vec<(f64, f64)>,
    /// What column generation reached at each budget it tightened, by budget.
    pub(crate) tightened: Vec<Tightened>,
    pub(crate) slots: usize,
}

/// Column generation at one budget.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct Tightened {
    pub(crate) budget: f64,
    /// The last master LP's total JCT, s.
    pub(crate) master_total_jct_s: Option<f64>,
    /// The best integer schedule's total JCT, s (with `incumbent_nodes`).
    pub(crate) incumbent_total_jct_s: Option<f64>,
    pub(crate) status: ColgenStatus,
}

impl StoredFrontier {
    /// The status of the bound `bound_mean_s` at `spent` and the most any bound of this
    /// relaxation could be there (mean JCT, s), from the master LP values at the tightened
    /// budgets ([`bound_status_at`]).
    pub(crate) fn status_at(
        &self,
        spent: f64,
        bound_mean_s: f64,
    ) -> (BudgetBoundStatus, Option<f64>) {
        let tightened: Vec<(f64, f64)> = self
            .tightened
            .iter()
            .filter_map(|t| {
                let lp = t.master_total_jct_s?;
                Some((t.budget, lp / self.jobs.max(1) as f64))
            })
            .collect();
        bound_status_at(&tightened, spent, bound_mean_s)
    }

    /// The least mean JCT (s) of an integer schedule found within `spent`: those found at
    /// budgets up to `spent` (a schedule within a budget is within every larger one).
    pub(crate) fn schedule_within(&self, spent: f64) -> Option<f64> {
        self.tightened
            .iter()
            .filter(|t| t.budget <= spent)
            .filter_map(|t| t.incumbent_total_jct_s)
            .min_by(f64::total_cmp)
            .map(|total| total / self.jobs.max(1) as f64)
    }

    pub(crate) fn frontier(&self) -> Frontier {
        Frontier {
            lines: self
                .lines
                .iter()
                .map(|&(budget_price, intercept)| FrontierLine {
                    budget_price,
                    intercept,
                })
                .collect(),
            jobs: self.jobs,
            least_budget: self.least_budget,
            unconstrained_budget: self.unconstrained_budget,
        }
    }
}

/// `count` budgets evenly from 0.9 × the least fraction of `base` (full-clock FIFO's
/// spend; no lower than just above `least`, the least any schedule needs) to `base`: where
/// the study's points spend (a budgeted replay spends at most its budget, and in practice
/// not much more than FIFO; above the largest budget the bound stays valid, only less
/// tight).
pub(crate) fn target_budgets(fractions: &[f64], base: f64, least: f64, count: usize) -> Vec<f64> {
    let low = (0.9 * fractions.iter().copied().fold(1.0, f64::min) * base).max(least * 1.005);
    let high = base.max(low);
    (0..count)
        .map(|k| low + (high - low) * k as f64 / (count.max(2) - 1) as f64)
        .collect()
}

/// The frontier of `setup`'s jobs as the `[budget]` study's setup `setup_name` asks for it:
/// the Lagrangian sweep, the dual ascent at the points' own spends (`ascent_steps`), the
/// ascent tightened there by column generation (`column_generation`), or the sweep
/// tightened by column generation at budgets around FIFO's spend (`frontier_budgets`).
pub(crate) fn compute(
    setup: &mut BudgetSetup,
    spec: &BudgetStudySpec,
    setup_name: &str,
    kind: FrontierKind,
) -> Result<StoredFrontier> {
    let setup_spec = spec
        .setups
        .iter()
        .find(|s| s.name == setup_name)
        .context("a frontier cell of a known setup")?;
    // The points' runs start the integer master.
    setup.options.record_segments = setup_spec.incumbent_nodes.is_some();
    let setup = &*setup;
    let slot_s = setup_spec.slot_s.unwrap_or(spec.slot_s);
    let quiet_slot_s = setup_spec.quiet_slot_s.unwrap_or(slot_s);
    let instance = frontier_instance(setup, kind, slot_s, quiet_slot_s)?;
    let warm_start = LagrangianOptions {
        budget_prices: spec.frontier_prices,
        subgradient_steps: spec.frontier_steps,
    };
    let (frontier, tightened) = if let Some(steps) = setup_spec.ascent_steps {
        at_point_spends(setup, spec, setup_spec, &instance, kind, steps)?
    } else if spec.frontier_budgets == 0 {
        let frontier = lagrangian_frontier(&instance, &warm_start).map_err(anyhow::Error::msg)?;
        (frontier, Vec::new())
    } else {
        // The points spend around FIFO's spend: tighten there.
        let fifo = setup.run("fifo-full-clock", Budget::Unlimited)?;
        let base = PolicyPoint::of(String::new(), None, None, Ok(fifo)).spend(kind);
        let targets = target_budgets(
            &spec.fractions,
            base,
            instance.least_budget(),
            spec.frontier_budgets,
        );
        let search = Search {
            warm_start: WarmStart::Sweep(warm_start),
            known: &[],
            incumbent_nodes: None,
        };
        tighten(&instance, &targets, search, spec)?
    };
    Ok(StoredFrontier {
        jobs: frontier.jobs,
        least_budget: frontier.least_budget,
        unconstrained_budget: frontier.unconstrained_budget,
        lines: frontier
            .lines
            .iter()
            .map(|l| (l.budget_price, l.intercept))
            .collect(),
        tightened,
        slots: instance.slots.count(),
    })
}

/// The dual ascent at every point's own spend (`steps` per spend), tightened there by
/// column generation when `setup_spec` asks, with the points' replays as schedules to
/// start the integer search from when it asks for that too.
fn at_point_spends(
    setup: &BudgetSetup,
    spec: &BudgetStudySpec,
    setup_spec: &BudgetSetupSpec,
    instance: &FrontierInstance,
    kind: FrontierKind,
    steps: usize,
) -> Result<(Frontier, Vec<Tightened>)> {
    let (targets, runs) = point_spends(setup, spec, kind)?;
    let options = AscentOptions {
        unconstrained_steps: steps,
        steps_per_budget: steps,
        progress: false,
    };
    if !setup_spec.column_generation {
        let result = ascent_frontier(instance, &targets, &options).map_err(anyhow::Error::msg)?;
        return Ok((result.frontier, Vec::new()));
    }
    let known = match setup_spec.incumbent_nodes {
        Some(_) => runs
            .iter()
            .map(|runs| KnownSchedule::of_runs(instance, runs))
            .collect::<Result<Vec<_>, _>>()
            .map_err(anyhow::Error::msg)?,
        None => Vec::new(),
    };
    let search = Search {
        warm_start: WarmStart::Ascent(options),
        known: &known,
        incumbent_nodes: setup_spec.incumbent_nodes,
    };
    tighten(instance, &targets, search, spec)
}

/// How column generation starts, and whether it looks for integer schedules.
struct Search<'a> {
    warm_start: WarmStart,
    known: &'a [KnownSchedule],
    incumbent_nodes: Option<usize>,
}

/// Column generation as `search` asks at `targets`: the envelope, and what it reached at
/// each target, by budget.
fn tighten(
    instance: &FrontierInstance,
    targets: &[f64],
    search: Search,
    spec: &BudgetStudySpec,
) -> Result<(Frontier, Vec<Tightened>)> {
    let options = ColumnGenerationOptions {
        warm_start: search.warm_start,
        rounds_per_budget: spec.frontier_rounds,
        time_limit_s: spec.frontier_seconds,
        incumbent_nodes: search.incumbent_nodes,
        ..ColumnGenerationOptions::default()
    };
    let result = column_generation_frontier(instance, targets, search.known, &options)
        .map_err(anyhow::Error::msg)?;
    let mut tightened: Vec<Tightened> = result
        .budgets
        .iter()
        .map(|b| Tightened {
            budget: b.budget,
            master_total_jct_s: b.master_total_jct_s,
            incumbent_total_jct_s: b.incumbent_total_jct_s,
            status: b.status(),
        })
        .collect();
    tightened.sort_by(|a, b| a.budget.total_cmp(&b.budget));
    Ok((result.frontier, tightened))
}

/// What the points of a (setup, seed, kind) spend: full-clock FIFO, Zeus and the budgeted
/// policy at each fraction of FIFO's spend ([`policy_points`]), replayed as their own cells
/// replay them (the same deterministic runs), sorted, near-equal spends (within 0.1 %)
/// once; and the jobs' runs of each replay that recorded them (`record_segments`). Failed
/// replays have no point and are left out.
fn point_spends(
    setup: &BudgetSetup,
    spec: &BudgetStudySpec,
    kind: FrontierKind,
) -> Result<(Vec<f64>, Vec<JobRuns>)> {
    let points = policy_points(setup, kind, None, &spec.fractions)?;
    let mut spends: Vec<f64> = points.iter().map(|p| p.spend(kind)).collect();
    spends.retain(|s| s.is_finite());
    spends.sort_by(f64::total_cmp);
    spends.dedup_by(|later, kept| *later <= *kept * 1.001);
    let runs = points.into_iter().filter_map(|p| p.runs).collect();
    Ok((spends, runs))
}
