//! The integer phase: feasible placements near the master LP, the best of which (the
//! heuristic's own included) is the incumbent. The LP is rounded and repaired, dived
//! ([`super::dive`]) and rounded again; the integer master over every generated column
//! then starts from the cheapest of those and the heuristic's configurations. Every
//! solution is expanded to one placement per task and checked.

use std::time::{Duration, Instant};

use gapbench_model::Placement;

use super::bound::project;
use super::column::ColumnPool;
use super::dive::Dive;
use super::generate::SEEDS_PER_TYPE;
use super::integer::{round_and_repair, solution_cost, solve_integer_master, Repair};
use super::problem::{CgStats, Problem, Rounding};
use crate::solve::Objective;

/// Shares of the LP's node counts the rounding keeps, tried in turn until
/// [`ROUNDINGS_KEPT`] repairs work.
const ROUNDING_KEEP: [f64; 4] = [1.0, 0.9, 0.75, 0.5];
const ROUNDINGS_KEPT: usize = 2;
/// The share of the integer phase diving may use (the integer master gets the rest): when
/// plain rounding worked, when it did not, and when too little time is left for the
/// integer master to start (the rounding of the dive's solution follows).
const DIVE_SHARE: f64 = 0.6;
const DIVE_SHARE_AFTER_FAILED_ROUNDING: f64 = 0.8;
const DIVE_SHARE_WITHOUT_INTEGER_MASTER: f64 = 0.9;
/// The share of the time limit kept free at the end for what follows the last solve
/// (expanding, checking and evaluating placements), at most [`FINISH_RESERVE_S`]: HiGHS
/// stops a little after its own limit (up to a second on the full cluster).
const FINISH_RESERVE_SHARE: f64 = 0.025;
const FINISH_RESERVE_S: f64 = 1.5;
/// The least time the integer master is started with, and the share of the time left that
/// HiGHS is given as its own limit. HiGHS looks at its clock only between phases, and its
/// root cut loop on the full cluster's integer master takes 5–15 s whatever its limit
/// (fragmentation, 9 s per solve: a 4.4 s limit ended after 10 s, a 2.7 s one after 5.9 s,
/// and with 6 s to spare a solve still ended after 16 s), while on those solves it improved
/// the roundings by less than 0.001 %: so it runs only with the cut loop's worst case to
/// spare (solves of about 100 s and more), on the columns whose reduced cost is within
/// [`INTEGER_MASTER_GAP_SHARE`] of the incumbent's distance from the LP (a smaller model).
const INTEGER_MASTER_MIN_S: f64 = 15.0;
const INTEGER_MASTER_CLOCK_SHARE: f64 = 0.5;
const INTEGER_MASTER_GAP_SHARE: f64 = 0.1;
/// The time the roundings and the dive are counted to need when deciding whether the
/// integer master can run (on the full cluster they take 0.2–1 s).
const ROUNDING_S: f64 = 1.0;
/// The share of the time limit column generation may use when the rest leaves the integer
/// master its minimum.
const PRICING_SHARE: f64 = 0.85;
/// When it cannot: the roundings and the dive keep this much, and column generation at
/// least half the limit. A dive on a nearly full cluster takes 0.4–2 s, but the master LP
/// it starts from is solved afresh and HiGHS overruns its limits by up to a second: with
/// 1 s kept (10 s per solve) the dive often ended without an integer solution, and with
/// 2.5 s it still did now and then (the heuristic's placement stood: FGD at 100 % on
/// 1,213 nodes, 0.00–4.88 %). Those runs predate zeroing HiGHS's clocks before each
/// re-solve (`solver::set_time_limit`): the dive's master then saw its limit reached after
/// enough re-solves, so part of that was HiGHS's cumulative clock, not the dive's time;
/// with the clocks zeroed the dive takes 0.5–0.9 s there. What the dive leaves goes back to
/// column generation.
const DIVE_RESERVE_S: f64 = 3.5;
const PRICING_SHARE_AT_LEAST: f64 = 0.5;

/// The time at the end of a solve kept free for what follows the last solve.
pub(super) fn finish_reserve_s(time_limit_s: f64) -> f64 {
    (FINISH_RESERVE_SHARE * time_limit_s).min(FINISH_RESERVE_S)
}

/// The share of `time_limit_s` column generation may use before the integer phase:
/// [`PRICING_SHARE`] when the rest holds the integer master's minimum besides the
/// roundings; else what leaves the roundings and the dive [`DIVE_RESERVE_S`] (a short
/// limit goes to the bound rather than to an integer master that could not start).
pub(super) fn pricing_share(time_limit_s: f64) -> f64 {
    let integer_phase_s =
        (1.0 - PRICING_SHARE) * time_limit_s - finish_reserve_s(time_limit_s) - ROUNDING_S;
    if integer_phase_s >= INTEGER_MASTER_MIN_S {
        PRICING_SHARE
    } else {
        let pricing_s = time_limit_s - finish_reserve_s(time_limit_s) - DIVE_RESERVE_S;
        (pricing_s / time_limit_s).clamp(PRICING_SHARE_AT_LEAST, PRICING_SHARE)
    }
}

/// The pool columns the integer master may use: those in `start`, and those whose reduced
/// cost at the last LP's duals is within `gap` (the incumbent's distance from the LP). A
/// solution using a column of larger reduced cost costs more than the incumbent unless
/// columns of negative reduced cost (generated after that LP) pay it back, so leaving
/// those columns out loses little and keeps HiGHS's presolve and root LP short (with the
/// whole pool, a 9 s solve ran to 24 s: HiGHS looks at its clock only after them).
fn columns_within_gap(
    pool: &ColumnPool,
    duals: Option<&(Vec<f64>, Vec<f64>)>,
    gap: f64,
    start: &[(usize, u32)],
) -> Vec<bool> {
    let mut allowed = match duals {
        Some((prices, convexity)) => pool
            .columns
            .iter()
            .map(|c| {
                c.cost - c.priced(prices) - convexity[c.type_index]
                    <= gap.max(0.0) * (1.0 + 1e-9) + 1e-9
            })
            .collect(),
        None => vec![true; pool.len()],
    };
    for &(c, _) in start {
        allowed[c] = true;
    }
    allowed
}

/// The best placement found.
pub(super) struct Incumbent {
    /// The objective's value of `placement`.
    pub value: f64,
    pub placement: Vec<Option<Placement>>,
    /// The pool columns the LP and the integer solutions used (for the next checkpoint).
    pub used_columns: Vec<usize>,
}

/// Finds the incumbent from column generation's pool and last LP (`last_lambda`), and
/// `start`, the heuristic's configurations as nodes per pool column.
pub(super) fn find_incumbent(
    problem: &Problem,
    pool: &mut ColumnPool,
    mut start: Vec<(usize, u32)>,
    last_lambda: Vec<(usize, f64)>,
    last_duals: Option<&(Vec<f64>, Vec<f64>)>,
    stats: &mut CgStats,
) -> Result<Incumbent, String> {
    let (options, clock) = (problem.options, &problem.clock);
    let integer_clock = Instant::now();
    let mut best = Best {
        problem,
        value: problem.heuristic_value,
        placement: problem.snapshot.heuristic.clone(),
    };
    let mut kept: Vec<usize> = last_lambda.iter().map(|&(c, _)| c).collect();
    // The LP is re-solved without exchange columns (a solution that uses them over-covers
    // some shapes; rounding wants configurations that place exactly the tasks), rounded,
    // then dived and rounded again. Diving rescues a nearly full cluster, where plain
    // rounding leaves leftovers no node takes; the integer master gets the time it leaves.
    let finish_s = options.time_limit_s - finish_reserve_s(options.time_limit_s);
    let left = finish_s - clock.elapsed().as_secs_f64();
    let mut dive = Dive::new(
        pool,
        &problem.type_nodes,
        &problem.shape_counts,
        problem.demand,
        options.threads,
        left * DIVE_SHARE,
    )?;
    let mut to_round = vec![(
        false,
        dive.as_ref().map_or(last_lambda, |d| d.start.clone()),
    )];
    let repair_deadline = *clock + Duration::from_secs_f64(finish_s);
    while let Some((dived, lambda)) = to_round.pop() {
        round_lp(
            &mut best,
            pool,
            &lambda,
            dived,
            repair_deadline,
            &mut start,
            stats,
        )?;
        if let Some(dive) = dive.take() {
            to_round.push((true, run_dive(problem, pool, dive, finish_s, stats)?));
        }
    }
    stats.columns = pool.len();
    let left = finish_s - clock.elapsed().as_secs_f64();
    if left >= INTEGER_MASTER_MIN_S {
        let gap = problem.constant + solution_cost(pool, &start) - stats.lp_value;
        let allowed = columns_within_gap(pool, last_duals, gap * INTEGER_MASTER_GAP_SHARE, &start);
        if let Some(integer) = solve_integer_master(
            pool,
            problem.context.types,
            &problem.shape_counts,
            problem.demand,
            &start,
            &allowed,
            options,
            left * INTEGER_MASTER_CLOCK_SHARE,
        )? {
            stats.integer_master_value = Some(best.consider(&integer.uses, pool)?);
            kept.extend(integer.uses.iter().map(|&(c, _)| c));
        }
    }
    stats.integer_seconds = integer_clock.elapsed().as_secs_f64();
    kept.extend(start.iter().map(|&(c, _)| c));
    kept.sort_unstable();
    kept.dedup();
    Ok(Incumbent {
        value: best.value,
        placement: best.placement,
        used_columns: kept,
    })
}

/// The best placement so far (at first the heuristic's), which every integer solution
/// found is checked and measured against.
struct Best<'p, 'a> {
    problem: &'p Problem<'a>,
    value: f64,
    placement: Vec<Option<Placement>>,
}

impl Best<'_, '_> {
    /// Expands, checks and evaluates a solution (nodes per pool column), keeps it if it
    /// beats the best; returns its value.
    fn consider(&mut self, uses: &[(usize, u32)], pool: &ColumnPool) -> Result<f64, String> {
        let problem = self.problem;
        let (placement, value) =
            problem.checked_placement(pool, uses, "the column-generation placement")?;
        if problem.sign * value < problem.sign * self.value {
            self.value = value;
            self.placement = placement;
        }
        Ok(value)
    }
}

/// Rounds and repairs one LP solution (`dived`: the dive's) at each share of
/// [`ROUNDING_KEEP`] until [`ROUNDINGS_KEPT`] repairs work: keeping fewer of the LP's
/// nodes leaves the repair more room (a repair fails when the leftover tasks do not fit
/// the leftover nodes), and sometimes finds a cheaper packing. Every repaired solution is
/// considered; the cheapest replaces `start` if cheaper, the best is `stats.rounding`.
fn round_lp(
    best: &mut Best,
    pool: &mut ColumnPool,
    lambda: &[(usize, f64)],
    dived: bool,
    repair_deadline: Instant,
    start: &mut Vec<(usize, u32)>,
    stats: &mut CgStats,
) -> Result<(), String> {
    let problem = best.problem;
    let sign = problem.sign;
    // For power the least-added repair first (its placements cost less), first fit if it
    // fails (it packs tighter); neither past the time limit.
    let repairs: &[Repair] = if problem.objective == Objective::Power {
        &[Repair::LeastAdded, Repair::FirstFit]
    } else {
        &[Repair::FirstFit]
    };
    let mut repaired = 0;
    for keep in ROUNDING_KEEP {
        if repaired == ROUNDINGS_KEPT {
            break;
        }
        let scaled: Vec<(usize, f64)> = lambda.iter().map(|&(c, l)| (c, keep * l)).collect();
        let rounded = repairs.iter().find_map(|&repair| {
            round_and_repair(
                &problem.context,
                pool,
                &scaled,
                problem.demand,
                repair,
                repair_deadline,
            )
        });
        if let Some(rounded) = rounded {
            let value = best.consider(&rounded, pool)?;
            if stats.rounding.is_none_or(|r| sign * value < sign * r.value) {
                stats.rounding = Some(Rounding { keep, dived, value });
            }
            if solution_cost(pool, &rounded) < solution_cost(pool, start) {
                *start = rounded;
            }
            repaired += 1;
        }
    }
    Ok(())
}

/// Runs the dive with its share of the time left before `finish_s` (more when rounding
/// failed, most when the integer master cannot run anyway), pricing greedily (the exact
/// pricing is too slow to run per fixing); returns the dive's LP solution to round.
fn run_dive(
    problem: &Problem,
    pool: &mut ColumnPool,
    dive: Dive,
    finish_s: f64,
    stats: &mut CgStats,
) -> Result<Vec<(usize, f64)>, String> {
    let left = finish_s - problem.clock.elapsed().as_secs_f64();
    let share = if left < INTEGER_MASTER_MIN_S + ROUNDING_S {
        DIVE_SHARE_WITHOUT_INTEGER_MASTER
    } else if stats.rounding.is_some() {
        DIVE_SHARE
    } else {
        DIVE_SHARE_AFTER_FAILED_ROUNDING
    };
    let deadline = Instant::now() + Duration::from_secs_f64((left * share).max(0.0));
    let (context, demand) = (&problem.context, problem.demand);
    let tolerance = 1e-9 * stats.lp_value.abs().max(1.0);
    let mut price = |pool: &ColumnPool, duals: &[f64], convexity: &[f64], tasks_left: &[usize]| {
        let mut duals = duals.to_vec();
        project(&mut duals, demand);
        let mut improving = Vec::new();
        for (t, &convexity_dual) in convexity.iter().enumerate() {
            if Instant::now() >= deadline {
                break;
            }
            let seeds = pool.best_of_type(t, &duals, SEEDS_PER_TYPE);
            improving.extend(
                context
                    .heuristic(t, &duals, &seeds, tasks_left)
                    .into_iter()
                    .filter(|(_, reduced)| reduced - convexity_dual < -tolerance)
                    .map(|(column, _)| column),
            );
        }
        improving
    };
    let dived = dive.run(pool, &mut price, deadline)?;
    stats.dive_floors_undone += dived.floors_undone;
    stats.dive_backtracks += dived.backtracks;
    stats.dive_integral = dived.integral;
    Ok(dived.lambda)
}
