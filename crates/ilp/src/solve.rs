//! Running HiGHS on a good_lp model, and what a solve reports.
//!
//! good_lp's own HiGHS wrapper reports neither the dual bound nor the achieved gap, so a
//! problem is turned into the underlying `highs::Model` (`HighsProblem::into_inner`), which
//! drops options and the initial solution set through good_lp: time limit, relative gap,
//! threads and the warm start are therefore set here, on the `highs::Model`.

use std::time::Instant;

use gapbench_model::Placement;
use good_lp::solvers::highs::HighsProblem;
use highs::HighsModelStatus;

use crate::error::SolveError;

/// How to solve.
#[derive(Debug, Clone, PartialEq)]
pub struct SolveOptions {
    /// Wall-clock limit per solve, in seconds (HiGHS `time_limit`).
    pub time_limit_s: f64,
    /// Stop once `(incumbent − bound)/|incumbent|` is at most this (HiGHS `mip_rel_gap`);
    /// 0 asks for a proof of optimality.
    pub mip_rel_gap: f64,
    /// Stop once `incumbent − bound` is at most this (HiGHS `mip_abs_gap`); `None` keeps
    /// HiGHS's default. Pricing needs it: its value is far from 0 while what matters is
    /// its distance to the convexity dual.
    pub mip_abs_gap: Option<f64>,
    /// HiGHS `threads`; `None` keeps HiGHS's default. HiGHS keeps one scheduler per calling
    /// thread, so every solve from one thread must use the same value.
    pub threads: Option<u32>,
    /// Sort identical nodes by a load key (symmetry breaking); devices are always sorted.
    pub node_symmetry: bool,
    /// Print HiGHS's log to the terminal.
    pub verbose: bool,
    /// Column generation only: most exact pricing rounds (a master solve whose greedy
    /// pricing found nothing, then every node type priced exactly: the rounds that move the
    /// bound and cost the time; greedy rounds in between are at most 30 each), a cap on work
    /// that does not depend on the clock. With it, an exact pricing call is stopped by its
    /// budgets of search nodes and pattern scans, not by a per-call clock share, so a solve
    /// the cap stops has the same bound on every run; `time_limit_s` is then a safety net.
    /// `None`: only the clock stops column generation.
    pub max_pricing_rounds: Option<usize>,
    /// Column generation's power bound only (`Session::power_bound`): after column
    /// generation, branch and price on node and task counts for at most this many tree
    /// nodes, best first, to close the configuration LP's integrality gap (a sleeping
    /// cluster's fractional wake-ups). With `max_pricing_rounds` as well, each tree node
    /// prices under the same caps, and the bound is the same on every run. `None`: the
    /// LP's bound.
    pub max_branch_nodes: Option<usize>,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            time_limit_s: 60.0,
            mip_rel_gap: 0.0,
            mip_abs_gap: None,
            threads: None,
            node_symmetry: true,
            verbose: false,
            max_pricing_rounds: None,
            max_branch_nodes: None,
        }
    }
}

impl SolveOptions {
    /// Errors on values HiGHS would reject.
    pub fn validate(&self) -> Result<(), SolveError> {
        if !(self.time_limit_s.is_finite() && self.time_limit_s >= 0.0) {
            return Err(SolveError::Options(format!(
                "time limit {} s is not a non-negative number of seconds",
                self.time_limit_s
            )));
        }
        if !(self.mip_rel_gap.is_finite() && self.mip_rel_gap >= 0.0) {
            return Err(SolveError::Options(format!(
                "relative MIP gap {} is not a non-negative number",
                self.mip_rel_gap
            )));
        }
        if self.threads == Some(0) {
            return Err(SolveError::Options("threads must be at least 1".into()));
        }
        if self.max_pricing_rounds == Some(0) {
            return Err(SolveError::Options(
                "most exact pricing rounds must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

// The objectives and status labels are the results schema's: one declaration for the
// solver, the rows it fills and the figures that read them.
pub use gapbench_results::{Objective, SolveStatus};

/// The result of one solve.
#[derive(Debug, Clone, PartialEq)]
pub struct SolveReport {
    pub objective: Objective,
    pub status: SolveStatus,
    /// The objective of `placement`, evaluated by the model crate (total value: power
    /// includes idle power; fragmentation is the whole Σ_n F(n)).
    pub incumbent: Option<f64>,
    /// A proven bound on the optimum in the same units: lower for power and
    /// fragmentation, upper for allocation.
    pub bound: Option<f64>,
    /// `|incumbent − bound| / |incumbent|` (0 when both are 0).
    pub mip_gap: Option<f64>,
    pub solve_seconds: f64,
    /// Per snapshot task: where the incumbent puts it. Passes `check_placements`.
    pub placement: Vec<Option<Placement>>,
    /// Allocation only: total power of `placement` (the lexicographic second objective).
    pub secondary_power_watts: Option<f64>,
}

impl SolveReport {
    pub(crate) fn error(objective: Objective, message: String, seconds: f64) -> Self {
        Self::without_solution(objective, SolveStatus::Error(message), seconds)
    }

    /// A report with `status` and nothing found: no incumbent, bound or placement.
    pub(crate) fn without_solution(
        objective: Objective,
        status: SolveStatus,
        seconds: f64,
    ) -> Self {
        SolveReport {
            objective,
            status,
            incumbent: None,
            bound: None,
            mip_gap: None,
            solve_seconds: seconds,
            placement: Vec::new(),
            secondary_power_watts: None,
        }
    }
}

impl SolveReport {
    /// Two solves of one minimisation (power, fragmentation) as one: the better placement,
    /// the higher proven bound, `optimal` when they meet (`results::best_known::meets`; the
    /// bound is then the incumbent), otherwise the status of the solve whose bound is kept;
    /// their times add up.
    pub fn pooled_min(self, other: SolveReport) -> SolveReport {
        let seconds = self.solve_seconds + other.solve_seconds;
        let better_bound = match (self.bound, other.bound) {
            (Some(a), Some(b)) if b > a => Some(&other),
            (None, Some(_)) => Some(&other),
            (Some(_), _) => Some(&self),
            (None, None) => None,
        };
        let (bound, bound_status) = match better_bound {
            Some(report) => (report.bound, report.status.clone()),
            None => (None, self.status.clone()),
        };
        let keep_self = match (self.incumbent, other.incumbent) {
            (Some(a), Some(b)) => a <= b,
            (a, _) => a.is_some(),
        };
        let best = if keep_self { self } else { other };
        let status = match (best.incumbent, bound) {
            (Some(incumbent), Some(bound))
                if gapbench_results::best_known::meets(incumbent, bound) =>
            {
                SolveStatus::Optimal
            }
            (Some(_), Some(_)) => bound_status,
            _ => best.status.clone(),
        };
        // Proven: the bound is the incumbent, as every solve reports it.
        let bound = match status {
            SolveStatus::Optimal => best.incumbent,
            _ => bound,
        };
        SolveReport {
            status,
            bound,
            mip_gap: best
                .incumbent
                .zip(bound)
                .map(|(incumbent, bound)| relative_gap(incumbent, bound)),
            solve_seconds: seconds,
            ..best
        }
    }
}

impl SolveReport {
    /// Takes `placement` (of the same tasks, checked; `value` its objective) as this
    /// minimisation's incumbent where that is better. The status then says what the new
    /// pair proves: `optimal` where it meets the bound, `gap_limit` within `mip_rel_gap`
    /// (when one was asked); otherwise it stays the solve's.
    pub fn improve_min(&mut self, placement: &[Option<Placement>], value: f64, mip_rel_gap: f64) {
        if self.incumbent.is_some_and(|incumbent| incumbent <= value) || placement.is_empty() {
            return;
        }
        self.incumbent = Some(value);
        self.placement = placement.to_vec();
        if let Some(bound) = self.bound {
            let gap = relative_gap(value, bound);
            self.mip_gap = Some(gap);
            if gapbench_results::best_known::meets(value, bound) {
                self.status = SolveStatus::Optimal;
            } else if mip_rel_gap > 0.0 && gap <= mip_rel_gap {
                self.status = SolveStatus::GapLimit;
            }
        }
    }
}

/// What HiGHS said, before interpretation.
#[derive(Debug, Clone)]
pub enum RawStatus {
    /// Proven within HiGHS's gap tolerances.
    Optimal,
    /// A limit (time, iterations, …) stopped the search.
    Limit,
    Infeasible,
    Error(String),
}

#[derive(Debug, Clone)]
pub struct RawSolve {
    pub status: RawStatus,
    /// HiGHS's objective of `columns` (constant column included).
    pub objective: Option<f64>,
    /// HiGHS's `mip_dual_bound`.
    pub bound: Option<f64>,
    /// Column values of the best solution HiGHS holds.
    pub columns: Option<Vec<f64>>,
    pub seconds: f64,
}

/// Solves `problem` with `options`, warm-started from `start` (one value per column).
pub fn run_highs(problem: HighsProblem, start: Option<&[f64]>, options: &SolveOptions) -> RawSolve {
    run(problem, start, options, None)
}

/// The work a HiGHS solve may do, where its answer must be the same on every run and the
/// clock is only a safety net.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HighsWork {
    /// Branch-and-bound nodes (`mip_max_nodes`).
    pub max_nodes: u32,
    /// HiGHS's presolve runs: off where its probing costs more than the search (the
    /// per-node device model: 24 of 28 s in presolve on one 8-node sub-cluster).
    pub presolve: bool,
}

impl HighsWork {
    /// At most `max_nodes` branch-and-bound nodes, after presolve.
    pub fn nodes(max_nodes: u32) -> HighsWork {
        HighsWork {
            max_nodes,
            presolve: true,
        }
    }
}

/// [`run_highs`] within `work`.
pub(crate) fn run_highs_within(
    problem: HighsProblem,
    start: Option<&[f64]>,
    options: &SolveOptions,
    work: HighsWork,
) -> RawSolve {
    run(problem, start, options, Some(work))
}

fn run(
    problem: HighsProblem,
    start: Option<&[f64]>,
    options: &SolveOptions,
    work: Option<HighsWork>,
) -> RawSolve {
    let clock = Instant::now();
    let fail = |message: String| RawSolve {
        status: RawStatus::Error(message),
        objective: None,
        bound: None,
        columns: None,
        seconds: clock.elapsed().as_secs_f64(),
    };
    let mut model = match problem.try_into_inner() {
        Ok(model) => model,
        Err(e) => return fail(format!("HiGHS rejected the model: {e}")),
    };
    if model.num_cols() == 0 {
        // Nothing to decide (e.g. no task fits anywhere): the empty solution is optimal,
        // with objective 0 (constants always live in a column).
        return RawSolve {
            status: RawStatus::Optimal,
            objective: Some(0.0),
            bound: Some(0.0),
            columns: Some(Vec::new()),
            seconds: clock.elapsed().as_secs_f64(),
        };
    }
    if let Err(message) = apply_options(&mut model, options, start) {
        return fail(message);
    }
    if let Some(work) = work {
        let nodes = i32::try_from(work.max_nodes).unwrap_or(i32::MAX);
        if let Err(e) = model.try_set_option("mip_max_nodes", nodes) {
            return fail(format!("HiGHS option mip_max_nodes: {e:?}"));
        }
        if !work.presolve {
            if let Err(e) = model.try_set_option("presolve", "off") {
                return fail(format!("HiGHS option presolve: {e:?}"));
            }
        }
    }
    let solved = match model.try_solve() {
        Ok(solved) => solved,
        Err(e) => return fail(format!("HiGHS failed: {e:?}")),
    };
    let status = raw_status(solved.status());
    let has_solution = solved.primal_solution_status() == highs::HighsSolutionStatus::Feasible;
    let bound = solved
        .double_info_value(c"mip_dual_bound")
        .ok()
        .filter(|b| b.is_finite());
    RawSolve {
        status,
        objective: has_solution.then(|| solved.objective_value()),
        bound,
        columns: has_solution.then(|| solved.get_solution().columns().to_vec()),
        seconds: clock.elapsed().as_secs_f64(),
    }
}

/// Sets `options` (time limit, gaps, threads, logging) on `model`, and the warm start
/// `start` (one value per column) when given.
fn apply_options(
    model: &mut highs::Model,
    options: &SolveOptions,
    start: Option<&[f64]>,
) -> Result<(), String> {
    let set = |name: &str, result: Result<(), highs::TrySetOptionError>| {
        result.map_err(|e| format!("HiGHS option {name}: {e:?}"))
    };
    set(
        "time_limit",
        model.try_set_option("time_limit", options.time_limit_s),
    )?;
    set(
        "mip_rel_gap",
        model.try_set_option("mip_rel_gap", options.mip_rel_gap),
    )?;
    if let Some(gap) = options.mip_abs_gap {
        set("mip_abs_gap", model.try_set_option("mip_abs_gap", gap))?;
    }
    if let Some(threads) = options.threads {
        set("threads", model.try_set_option("threads", threads as i32))?;
        if threads > 1 {
            // HiGHS searches the MIP tree with several workers only when asked.
            set("parallel", model.try_set_option("parallel", "on"))?;
        }
    }
    if options.verbose {
        set("output_flag", model.try_set_option("output_flag", true))?;
        set(
            "log_to_console",
            model.try_set_option("log_to_console", true),
        )?;
    }
    if let Some(start) = start {
        model
            .try_set_solution(Some(start), None, None, None)
            .map_err(|e| format!("HiGHS refused the warm start: {e:?}"))?;
    }
    Ok(())
}

/// What HiGHS's model status says of the solve: optimal, stopped at a limit, infeasible,
/// or an error.
fn raw_status(status: HighsModelStatus) -> RawStatus {
    match status {
        HighsModelStatus::Optimal => RawStatus::Optimal,
        HighsModelStatus::ReachedTimeLimit
        | HighsModelStatus::ReachedIterationLimit
        | HighsModelStatus::ReachedSolutionLimit
        | HighsModelStatus::ReachedInterrupt
        | HighsModelStatus::ReachedMemoryLimit
        | HighsModelStatus::ObjectiveBound
        | HighsModelStatus::ObjectiveTarget => RawStatus::Limit,
        HighsModelStatus::Infeasible | HighsModelStatus::UnboundedOrInfeasible => {
            RawStatus::Infeasible
        }
        other => RawStatus::Error(format!("HiGHS ended with status {other:?}")),
    }
}

/// A candidate incumbent: a checked placement and its evaluated objective.
pub(crate) struct Candidate {
    pub placement: Vec<Option<Placement>>,
    pub value: f64,
}

/// Turns HiGHS's answer into a report. `solver` is the decoded, checked and evaluated
/// solver placement (or why it could not be had); `fallback` is the heuristic's placement,
/// feasible by construction, used when it is better (or the solver has none).
///
/// The bound is HiGHS's `mip_dual_bound`, rounded towards the incumbent for integral
/// objectives and never allowed past the incumbent (a bound beyond a feasible value can
/// only be a tolerance artefact). Optimal means bound = incumbent after that.
pub(crate) fn interpret(
    objective: Objective,
    raw: &RawSolve,
    solver: Result<Option<Candidate>, String>,
    fallback: Option<Candidate>,
) -> SolveReport {
    let seconds = raw.seconds;
    let solver = match solver {
        Ok(candidate) => candidate,
        Err(message) => return SolveReport::error(objective, message, seconds),
    };
    match &raw.status {
        RawStatus::Error(message) => {
            return SolveReport::error(objective, message.clone(), seconds)
        }
        RawStatus::Infeasible => {
            return SolveReport::without_solution(objective, SolveStatus::Infeasible, seconds)
        }
        _ => {}
    }
    let better = |a: &Candidate, b: &Candidate| {
        if objective.maximise() {
            a.value > b.value
        } else {
            a.value < b.value
        }
    };
    let best = match (solver, fallback) {
        (Some(s), Some(f)) => Some(if better(&f, &s) { f } else { s }),
        (Some(s), None) => Some(s),
        (None, f) => f,
    };
    let Some(best) = best else {
        return SolveReport::error(
            objective,
            "HiGHS stopped without any solution".into(),
            seconds,
        );
    };
    let incumbent = best.value;
    let tolerance = 1e-6 * incumbent.abs().max(1.0);
    let bound = raw.bound.map(|b| {
        let b = match (objective.integral(), objective.maximise()) {
            (true, false) => (b - 1e-6).ceil(),
            (true, true) => (b + 1e-6).floor(),
            (false, _) => b,
        };
        if objective.maximise() {
            b.max(incumbent)
        } else {
            b.min(incumbent)
        }
    });
    let proven = matches!(raw.status, RawStatus::Optimal);
    let (status, bound) = match bound {
        Some(b) if (b - incumbent).abs() <= tolerance => (SolveStatus::Optimal, Some(incumbent)),
        Some(b) if proven => (SolveStatus::GapLimit, Some(b)),
        Some(b) => (SolveStatus::TimeLimitWithIncumbent, Some(b)),
        // HiGHS solved it in presolve without reporting a dual bound.
        None if proven => (SolveStatus::Optimal, Some(incumbent)),
        None => (SolveStatus::TimeLimitWithIncumbent, None),
    };
    SolveReport {
        objective,
        status,
        incumbent: Some(incumbent),
        bound,
        mip_gap: bound.map(|b| relative_gap(incumbent, b)),
        solve_seconds: seconds,
        placement: best.placement,
        secondary_power_watts: None,
    }
}

/// `|incumbent − bound| / |incumbent|`, 0 when both are 0, infinite when only the
/// incumbent is 0.
pub fn relative_gap(incumbent: f64, bound: f64) -> f64 {
    let difference = (incumbent - bound).abs();
    if difference == 0.0 {
        0.0
    } else if incumbent == 0.0 {
        f64::INFINITY
    } else {
        difference / incumbent.abs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(status: SolveStatus, incumbent: Option<f64>, bound: Option<f64>) -> SolveReport {
        SolveReport {
            objective: Objective::Frag,
            status,
            incumbent,
            bound,
            mip_gap: None,
            solve_seconds: 1.0,
            placement: Vec::new(),
            secondary_power_watts: None,
        }
    }

    #[test]
    fn a_better_placement_replaces_the_incumbent_and_says_what_it_proves() {
        let placement = vec![None];
        let mut worse = report(
            SolveStatus::TimeLimitWithIncumbent,
            Some(110.0),
            Some(100.0),
        );
        worse.improve_min(&placement, 120.0, 0.05);
        assert_eq!(
            (worse.incumbent, worse.placement.len()),
            (Some(110.0), 0),
            "a worse placement is no improvement"
        );
        worse.improve_min(&placement, 107.0, 0.05);
        assert_eq!(worse.incumbent, Some(107.0));
        assert_eq!(worse.placement, placement);
        assert_eq!(
            worse.status,
            SolveStatus::TimeLimitWithIncumbent,
            "7 % > 5 %"
        );
        worse.improve_min(&placement, 104.0, 0.05);
        assert_eq!(worse.status, SolveStatus::GapLimit);
        assert!((worse.mip_gap.unwrap() - 4.0 / 104.0).abs() < 1e-12);
        let mut lp = report(SolveStatus::LpBound, Some(110.0), Some(100.0));
        lp.improve_min(&placement, 104.0, 0.0);
        assert_eq!(lp.status, SolveStatus::LpBound, "no MIP gap was asked");
        lp.improve_min(&placement, 100.0, 0.0);
        assert_eq!(lp.status, SolveStatus::Optimal);
    }

    #[test]
    fn pooling_keeps_the_better_placement_and_the_higher_bound_with_its_status() {
        let by_columns = report(SolveStatus::LpBound, Some(110.0), Some(100.0));
        let per_node = report(SolveStatus::TimeLimitWithIncumbent, Some(105.0), Some(60.0));
        let pooled = per_node.pooled_min(by_columns);
        assert_eq!(pooled.incumbent, Some(105.0));
        assert_eq!(pooled.bound, Some(100.0));
        assert_eq!(pooled.status, SolveStatus::LpBound);
        assert!((pooled.mip_gap.unwrap() - 5.0 / 105.0).abs() < 1e-12);
        assert_eq!(pooled.solve_seconds, 2.0);
    }

    #[test]
    fn pooled_solves_that_meet_are_optimal_and_a_failed_one_adds_only_its_time() {
        let a = report(SolveStatus::LpBound, Some(100.0), Some(90.0));
        let b = report(
            SolveStatus::TimeLimitWithIncumbent,
            Some(120.0),
            Some(100.0),
        );
        assert_eq!(a.clone().pooled_min(b).status, SolveStatus::Optimal);
        let failed = report(SolveStatus::Error("HiGHS failed".into()), None, None);
        let pooled = failed.pooled_min(a.clone());
        assert_eq!(
            (pooled.incumbent, pooled.bound, pooled.status.clone()),
            (a.incumbent, a.bound, a.status)
        );
        assert_eq!(pooled.solve_seconds, 2.0);
    }
}
