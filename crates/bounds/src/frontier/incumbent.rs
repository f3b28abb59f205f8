//! The best schedule found at a budget: the known schedules (a list schedule, the
//! policies' replays) and, within a node cap, HiGHS's branch and bound over them and the
//! master's columns (the restricted-master heuristic of price-and-branch): every job runs
//! exactly one of the schedules the master LP mixes, one of the known ones, or waits out
//! the horizon, within every slot's GPU-seconds and the budget.
//!
//! ```text
//! min  Σ_k jct_k·x_k
//! s.t. Σ_{k of job j} x_k = 1                ∀ j
//!      Σ_k gpu_s[k,t]·x_k ≤ cap_t             ∀ t
//!      Σ_k budget_k·x_k ≤ B
//!      x_k ∈ {0, 1},  k in the LP's support, using no slot, or of a known schedule
//! ```
//! Its schedule is a feasible point of the frontier problem, so its total JCT is at least
//! that problem's optimum: with the column-generation bound below it, the optimum lies in
//! `[bound, incumbent]`. The choice is checked again here, every slot and the budget up to
//! a relative [`FEASIBLE_WITHIN`] (HiGHS's own tolerance is 1e-7 on these rows scaled to
//! 1; a replay's spend and its schedule's charge here differ by about 1e-7 too, as the
//! replay counts power in whole milliwatts). A policy above the incumbent is above a
//! schedule of the same relaxed model (GPU-seconds pooled per slot, not a placement on
//! nodes). Work limits (branch-and-bound nodes) stop it, the clock only as a safety net,
//! so the same columns give the same schedule.

use highs::{ColProblem, HighsSolutionStatus, Sense};

use super::known::KnownSchedule;
use super::master::ScheduleColumn;
use crate::error::BoundError;

/// A column the LP uses at least this much is a candidate.
const IN_SUPPORT: f64 = 1e-6;
/// A schedule within `(1 + this)` of a slot's GPU-seconds or of the budget fits them.
const FEASIBLE_WITHIN: f64 = 1e-6;

/// Total JCT (s) of the best integer schedule found within `max_nodes` nodes over
/// `columns` (weighted `weights` by the LP; the slot-free ones always candidates) and the
/// `known` schedules' columns, with `capacity` GPU-seconds per slot and `budget`; the
/// best known schedule within them starts the search, so the result is never worse (with
/// `max_nodes = 0` it is the result: no search). `None` when no schedule is found within
/// the limits.
#[allow(clippy::too_many_arguments)]
pub(crate) fn integer_total_jct(
    jobs: usize,
    columns: &[ScheduleColumn],
    weights: &[f64],
    known: &[&KnownSchedule],
    capacity: &[f64],
    budget: f64,
    max_nodes: usize,
    time_limit_s: f64,
) -> Result<Option<f64>, BoundError> {
    let best_known = known
        .iter()
        .filter_map(|schedule| {
            let chosen: Vec<&ScheduleColumn> = schedule.columns.iter().collect();
            checked_total_jct(jobs, &chosen, capacity, budget).map(|total| (total, schedule))
        })
        .min_by(|a, b| a.0.total_cmp(&b.0));
    if max_nodes == 0 {
        // No search: the best of the known schedules.
        return Ok(best_known.map(|(total, _)| total));
    }
    let mut candidates: Vec<&ScheduleColumn> = columns
        .iter()
        .zip(weights.iter().chain(std::iter::repeat(&0.0)))
        .filter(|(column, &weight)| weight >= IN_SUPPORT || column.gpu_seconds.is_empty())
        .map(|(column, _)| column)
        .collect();
    let mut start = vec![0.0; candidates.len()];
    for schedule in known {
        let starts = best_known.is_some_and(|(_, best)| std::ptr::eq(*best, *schedule));
        for column in &schedule.columns {
            candidates.push(column);
            start.push(if starts { 1.0 } else { 0.0 });
        }
    }
    let mut model = integer_master(jobs, &candidates, capacity, budget)?;
    model.make_quiet();
    gapbench_ilp::solver::set_time_limit(&mut model, time_limit_s)?;
    for (option, value) in [("mip_max_nodes", max_nodes as i32), ("threads", 1)] {
        model
            .try_set_option(option, value)
            .map_err(|e| format!("HiGHS option {option}: {e:?}"))?;
    }
    if best_known.is_some() {
        model
            .try_set_solution(Some(&start), None, None, None)
            .map_err(|e| format!("HiGHS refused the starting schedule: {e:?}"))?;
    }
    let solved = model
        .try_solve()
        .map_err(|e| format!("HiGHS failed on the integer master: {e:?}"))?;
    let found = if solved.primal_solution_status() == HighsSolutionStatus::Feasible {
        let chosen: Vec<&ScheduleColumn> = candidates
            .iter()
            .zip(solved.get_solution().columns())
            .filter(|(_, &x)| x > 0.5)
            .map(|(column, _)| *column)
            .collect();
        checked_total_jct(jobs, &chosen, capacity, budget)
    } else {
        None
    };
    Ok(match (found, best_known) {
        (Some(found), Some((known, _))) => Some(found.min(known)),
        (found, known) => found.or(known.map(|(total, _)| total)),
    })
}

/// The integer master over `candidates`, not yet solved.
fn integer_master(
    jobs: usize,
    candidates: &[&ScheduleColumn],
    capacity: &[f64],
    budget: f64,
) -> Result<highs::Model, BoundError> {
    let budget_scale = 1.0 / budget.max(1e-12);
    let mut problem = ColProblem::default();
    let convexity: Vec<_> = (0..jobs).map(|_| problem.add_row(1.0..=1.0)).collect();
    let slots: Vec<_> = capacity.iter().map(|_| problem.add_row(..=1.0)).collect();
    let budget_row = problem.add_row(..=1.0);
    for column in candidates {
        let mut factors = vec![(convexity[column.job], 1.0)];
        factors.extend(
            column
                .gpu_seconds
                .iter()
                .filter(|&&(_, seconds)| seconds > 0.0)
                .map(|&(t, seconds)| (slots[t], seconds / capacity[t])),
        );
        if column.budget_used > 0.0 {
            factors.push((budget_row, column.budget_used * budget_scale));
        }
        problem.add_integer_column(column.jct_s / 3600.0, 0.0..=1.0, factors);
    }
    problem
        .try_optimise(Sense::Minimise)
        .map_err(|e| BoundError::Solver(format!("HiGHS rejected the integer master: {e:?}")))
}

/// The total JCT of `chosen` when it is a schedule: every job exactly once, every slot and
/// the budget within their limits (up to [`FEASIBLE_WITHIN`]); `None` otherwise.
fn checked_total_jct(
    jobs: usize,
    chosen: &[&ScheduleColumn],
    capacity: &[f64],
    budget: f64,
) -> Option<f64> {
    let mut runs = vec![0usize; jobs];
    let mut used = vec![0.0; capacity.len()];
    let (mut spent, mut total_jct_s) = (0.0, 0.0);
    for column in chosen {
        runs[column.job] += 1;
        for &(t, seconds) in &column.gpu_seconds {
            used[t] += seconds;
        }
        spent += column.budget_used;
        total_jct_s += column.jct_s;
    }
    let fits = runs.iter().all(|&n| n == 1)
        && used
            .iter()
            .zip(capacity)
            .all(|(u, c)| *u <= c * (1.0 + FEASIBLE_WITHIN))
        && spent <= budget * (1.0 + FEASIBLE_WITHIN);
    fits.then_some(total_jct_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(job: usize, jct_s: f64, budget_used: f64, slot_s: &[(usize, f64)]) -> ScheduleColumn {
        ScheduleColumn {
            job,
            jct_s,
            budget_used,
            gpu_seconds: slot_s.to_vec(),
        }
    }

    /// Two jobs, one slot of 10 GPU-seconds: each has a fast schedule using 8 of them and a
    /// slow one using none. Both fast do not fit; the LP mixes them half and half (total
    /// JCT 15 + 15), the integer optimum runs one fast (10 + 30 = 40 > 30).
    #[test]
    fn the_integer_schedule_picks_one_column_per_job_within_the_slots() {
        let columns = vec![
            column(0, 10.0, 1.0, &[(0, 8.0)]),
            column(0, 30.0, 1.0, &[]),
            column(1, 10.0, 1.0, &[(0, 8.0)]),
            column(1, 30.0, 1.0, &[]),
        ];
        let weights = [0.5, 0.5, 0.5, 0.5];
        let total =
            integer_total_jct(2, &columns, &weights, &[], &[10.0], 10.0, 100, 60.0).unwrap();
        assert_eq!(total, Some(40.0));
        // Every schedule costs 1 of the budget: two jobs do not fit in 1.5.
        let none = integer_total_jct(2, &columns, &weights, &[], &[10.0], 1.5, 100, 60.0).unwrap();
        assert_eq!(none, None);
    }

    #[test]
    fn a_choice_over_a_slot_or_the_budget_is_no_schedule() {
        let fast = column(0, 10.0, 1.0, &[(0, 8.0)]);
        let other = column(1, 10.0, 1.0, &[(0, 8.0)]);
        assert_eq!(checked_total_jct(2, &[&fast, &other], &[10.0], 10.0), None);
        assert_eq!(checked_total_jct(1, &[&fast], &[10.0], 0.5), None);
        assert_eq!(checked_total_jct(2, &[&fast], &[10.0], 10.0), None);
        assert_eq!(checked_total_jct(1, &[&fast], &[10.0], 1.0), Some(10.0));
    }
}
