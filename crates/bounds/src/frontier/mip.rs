//! The frontier problem as a time-indexed MIP, solved by HiGHS on small instances
//! (a few dozen jobs and slots) to measure how tight the Lagrangian envelope is.
//!
//! Variables, for job `j`, configuration `c` and slot `t ≥ a_j` of the horizon:
//! `s[j,c,t] ≥ 0` seconds run, `u[j,t] ∈ {0,1}` "unfinished at the end of `t`", and
//! `w[j,t] ≥ 0` the time run in the finishing slot.
//! ```text
//! min  Σ_{j,t} avail[j,t]·u[j,t] + w[j,t]                                  (Σ JCT)
//! s.t. Σ_c s[j,c,t] ≤ avail[j,t]
//!      Σ_{j,c} n_c·s[j,c,t] ≤ G·Δ                                           (GPU-seconds)
//!      Σ_{c,t} v_c·s[j,c,t] ≥ W_j                                           (work, by the horizon)
//!      W_j·u[j,t] + Σ_{c,t'≤t} v_c·s[j,c,t'] ≥ W_j                          (unfinished ⇒ u = 1)
//!      w[j,t] ≥ Σ_c s[j,c,t] − avail[j,t]·u[j,t]                            (time of the last slot)
//!      Σ_{j,c,t} P_c·b_t·s[j,c,t] ≤ B                                       (budget)
//! ```
//! Slots before the finishing one count whole (`u = 1`), the finishing slot counts the time
//! run in it; this is the problem [`super::lagrangian`] bounds, restricted to the horizon.

use good_lp::{variable, Expression, ProblemVariables, SolverModel, Variable};

use super::rates::BudgetRates;
use super::FrontierInstance;
use crate::error::BoundError;
use gapbench_ilp::solver::{run_highs, RawStatus};
use gapbench_ilp::{SolveOptions, SolveStatus};

/// The MIP's answer for one budget.
#[derive(Debug, Clone, PartialEq)]
pub struct MipFrontierPoint {
    pub budget: f64,
    pub status: SolveStatus,
    /// Least total JCT found (seconds), if any schedule was found.
    pub total_jct_s: Option<f64>,
    /// HiGHS's proven lower bound on the least total JCT.
    pub bound_s: Option<f64>,
    pub seconds: f64,
}

/// Solves the frontier problem for `budget` exactly (within `options`). Every job must be
/// able to arrive within the horizon.
pub fn min_total_jct(
    instance: &FrontierInstance,
    budget: f64,
    options: &SolveOptions,
) -> Result<MipFrontierPoint, BoundError> {
    instance.validate()?;
    options.validate()?;
    let horizon = instance.slots.count();
    if let Some(j) = instance
        .jobs
        .iter()
        .position(|job| instance.arrival_slot(job) >= horizon)
    {
        return Err(BoundError::Input(format!(
            "job {j} arrives after the horizon of {horizon} slots"
        )));
    }
    let rates = BudgetRates::of(instance);
    let mut vars = ProblemVariables::new();
    let mut rows = Vec::new();
    let mut objective = Expression::default();
    let mut budget_used = Expression::default();
    let mut gpu_seconds: Vec<Expression> = vec![Expression::default(); horizon];
    for job in &instance.jobs {
        let mut done = Expression::default();
        #[allow(clippy::needless_range_loop)] // the slot indexes several per-slot tables
        for slot in instance.arrival_slot(job)..horizon {
            let available = instance.available_s(job, slot);
            let run: Vec<Variable> = job
                .configs
                .iter()
                .map(|_| vars.add(variable().min(0.0).max(available)))
                .collect();
            let unfinished = vars.add(variable().binary());
            let last_slot_s = vars.add(variable().min(0.0));
            let mut slot_time = Expression::default();
            for (config, &seconds) in job.configs.iter().zip(&run) {
                slot_time += seconds;
                done += config.iterations_per_s * seconds;
                budget_used += config.watts * rates.per_slot[slot] * seconds;
                gpu_seconds[slot] += f64::from(config.gpus) * seconds; // slot < horizon
            }
            rows.push(slot_time.clone().leq(available));
            rows.push((job.iterations * unfinished + done.clone()).geq(job.iterations));
            rows.push((last_slot_s - slot_time + available * unfinished).geq(0.0));
            objective += available * unfinished + last_slot_s;
        }
        rows.push(done.geq(job.iterations));
    }
    for (slot, used) in gpu_seconds.into_iter().enumerate() {
        rows.push(used.leq(instance.capacity(slot)));
    }
    rows.push(budget_used.leq(budget));
    let mut problem = vars.minimise(objective).using(good_lp::highs);
    for row in rows {
        problem.add_constraint(row);
    }
    let raw = run_highs(problem, None, options);
    let status = match &raw.status {
        RawStatus::Optimal => SolveStatus::Optimal,
        RawStatus::Limit if raw.objective.is_some() => SolveStatus::TimeLimitWithIncumbent,
        RawStatus::Limit => SolveStatus::Error("stopped before finding a schedule".into()),
        RawStatus::Infeasible => SolveStatus::Infeasible,
        RawStatus::Error(message) => SolveStatus::Error(message.clone()),
    };
    let bound_s = match status {
        SolveStatus::Optimal => raw.objective,
        _ => raw.bound,
    };
    Ok(MipFrontierPoint {
        budget,
        status,
        total_jct_s: raw.objective,
        bound_s,
        seconds: raw.seconds,
    })
}
