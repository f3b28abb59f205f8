//! EaCO's exact counterpart (spec time-and-budgets §6.2 b): a proven lower bound on the
//! cluster energy of ANY co-allocation of a set of training jobs that finishes every job
//! inside its window, on identical nodes whose power and slowdown depend only on which
//! jobs share a node.
//!
//! Inputs are plain numbers (the harness builds them from the replay's own accounting):
//! - job `j`: class `c_j`, release `a_j`, due time `d_j`, work `W_j` (seconds at speed 1);
//! - pattern `p` (a multiset of classes one node can hold, `m_{c,p}` jobs of class `c`): its
//!   slowdown `s_p ≥ 1` (every tenant progresses at `1/s_p`) and its extra power
//!   `ΔP_p = P_p − b` over the base power `b` of a node that holds nothing (its sleep power
//!   under sleep-when-empty, its idle power when always on);
//! - `N` nodes.
//!
//! Energy decomposes exactly: with `H` the replay's span (first arrival to last completion)
//! and `Y_p` the node-seconds spent in pattern `p`, `E = N·b·H + Σ_p ΔP_p·Y_p`. No job ends
//! before `a_j + W_j` (speed ≤ 1), so `H ≥ H₀ = max_j (a_j + W_j) − min_j a_j`, and
//! `E ≥ N·b·H₀ + min Σ_p ΔP_p·Y_p` over what any schedule can do. Two relaxations bound the
//! minimum; the bound is the larger of the two:
//!
//! 1. **Closed form, per job** (no solver). Split a node's extra power equally among its
//!    tenants: job `j` spending `t_p` seconds in pattern `p` pays `ΔP_p/k_p` per second and
//!    does `t_p/s_p` work, with `Σ_p t_p/s_p = W_j` and `Σ_p t_p ≤ d_j − a_j`. Per unit of
//!    work that is the 2-row LP `min Σ x_p e_p` s.t. `Σ x_p = 1`, `Σ x_p s_p ≤ ρ_j` with
//!    `e_p = ΔP_p·s_p/k_p` and `ρ_j = (d_j − a_j)/W_j`: the lower convex envelope of the
//!    points `(s_p, e_p)` of the patterns holding `c_j`, at `ρ_j` (at most two patterns mix).
//!    `E ≥ N·b·H₀ + Σ_j W_j·f_{c_j}(ρ_j)`.
//! 2. **Time-indexed pattern LP** on slots of length `Δ` from `min_j a_j` to `max_j d_j`
//!    (the "window size" reported). Variables: `y_{p,t}` node-seconds of pattern `p` in
//!    slot `t`; `r_{j,t}` seconds job `j` runs in slot `t`, `w_{j,t}` work it does there,
//!    both at most `|[a_j, d_j] ∩ slot t|`. Rows, for every class `c` and slot `t`:
//!    time `Σ_{j∈c} r_{j,t} = Σ_p m_{c,p} y_{p,t}`; work `Σ_{j∈c} w_{j,t} ≤ Σ_p m_{c,p}
//!    y_{p,t}/s_p`; per job and slot `w_{j,t} ≤ r_{j,t}`; per job `Σ_t w_{j,t} ≥ W_j`; per
//!    slot `Σ_p y_{p,t} ≤ N·Δ`; `y_{p,t} = 0` when `p` holds more jobs of a class than
//!    may run in slot `t` (a job is one tenant). Objective `min Σ ΔP_p y_{p,t}`.
//!    Any schedule gives a feasible
//!    point (measure each quantity in each slot), so its optimum bounds the true minimum;
//!    it knows which jobs can meet (both present in a slot) and the cluster's size, which
//!    the closed form does not. What it relaxes: who shares with whom inside one slot, and
//!    which job of a class takes the slower patterns of a slot.
//!    The LP value is certified by weak duality, not taken from the solver: with HiGHS's
//!    row duals `π` (sign-clipped: `≥ 0` on `≥` rows, `≤ 0` on `≤` rows), every column
//!    bounded, `LB = Σ_r π_r·rhs_r + Σ_x min(rc_x·lo_x, rc_x·hi_x)`, `rc = cost − Aᵀπ`, is a
//!    valid bound for any `π`, so solver tolerances or a time limit cannot make it invalid.
//!
//! Valid for: every schedule in the engine's model (a job on one node, all of a node's
//! tenants at the same rate `1/s_p`, preemption and migration allowed, any queueing) that
//! ends every job by its due time; power only through the pattern a node holds.

use std::time::Instant;

use crate::error::BoundError;
use highs::{ColProblem, HighsModelStatus, Sense};

/// One job: its class, window and work.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EacoJob {
    pub class: usize,
    pub release_s: f64,
    /// It must end by then (its deadline, or a later time the bound is asked for).
    pub due_s: f64,
    /// Seconds at speed 1.
    pub work_s: f64,
}

/// A set of jobs one node may hold at once.
#[derive(Debug, Clone, PartialEq)]
pub struct CoPattern {
    /// Jobs of each class.
    pub counts: Vec<u32>,
    /// `s_p ≥ 1`: every tenant progresses at `1/s_p`.
    pub slowdown: f64,
    /// `P_p − b`, watts.
    pub extra_watts: f64,
}

impl CoPattern {
    pub fn tenants(&self) -> u32 {
        self.counts.iter().sum()
    }
}

/// The instance: jobs, the patterns any node may hold, the nodes and their base power.
#[derive(Debug, Clone, PartialEq)]
pub struct EacoBoundInput {
    pub jobs: Vec<EacoJob>,
    pub patterns: Vec<CoPattern>,
    pub nodes: usize,
    /// `b`: what a node holding nothing draws, watts.
    pub base_watts: f64,
}

impl EacoBoundInput {
    /// Job classes: the longest pattern count vector.
    pub fn classes(&self) -> usize {
        self.patterns
            .iter()
            .map(|p| p.counts.len())
            .max()
            .unwrap_or(0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EacoBoundOptions {
    /// `Δ`, the LP's slot length; `None` = closed form only.
    pub slot_s: Option<f64>,
    pub time_limit_s: f64,
    pub threads: Option<u32>,
}

impl Default for EacoBoundOptions {
    /// One-hour slots, 120 s.
    fn default() -> Self {
        EacoBoundOptions {
            slot_s: Some(3600.0),
            time_limit_s: 120.0,
            threads: None,
        }
    }
}

/// What the LP proved (the results schema's labels: `optimal`, `time-limit`, …).
pub use gapbench_results::EacoLpStatus as LpStatus;

/// The bound and how it was obtained.
#[derive(Debug, Clone, PartialEq)]
pub struct EacoBound {
    /// `max(closed form, certified LP)`, kWh; infinite when no schedule meets the windows.
    pub lower_kwh: f64,
    /// `N·b·H₀`, kWh (in both bounds).
    pub base_kwh: f64,
    pub closed_form_kwh: f64,
    /// Certified LP bound (base included), kWh; `None` when skipped.
    pub lp_kwh: Option<f64>,
    pub lp_status: LpStatus,
    pub slot_s: Option<f64>,
    pub slots: usize,
    pub columns: usize,
    pub rows: usize,
    pub seconds: f64,
}

const SECONDS_PER_HOUR: f64 = 3600.0;

/// The bound of `input` (see the module doc). Errors name what is wrong with the input.
pub fn eaco_energy_bound(
    input: &EacoBoundInput,
    options: &EacoBoundOptions,
) -> Result<EacoBound, BoundError> {
    let started = Instant::now();
    validate(input)?;
    let classes = input.classes();
    let t0 = input
        .jobs
        .iter()
        .map(|j| j.release_s)
        .fold(f64::INFINITY, f64::min);
    let span_s = input
        .jobs
        .iter()
        .map(|j| j.release_s + j.work_s)
        .fold(t0, f64::max)
        - t0;
    let base_kwh = input.nodes as f64 * input.base_watts * span_s / SECONDS_PER_HOUR / 1000.0;
    let closed_form_kwh = base_kwh + closed_form_extra_kwh(input, classes);
    let mut bound = EacoBound {
        lower_kwh: closed_form_kwh,
        base_kwh,
        closed_form_kwh,
        lp_kwh: None,
        lp_status: LpStatus::Skipped,
        slot_s: options.slot_s,
        slots: 0,
        columns: 0,
        rows: 0,
        seconds: 0.0,
    };
    if let Some(slot_s) = options.slot_s {
        if !(slot_s.is_finite() && slot_s > 0.0) {
            return Err(BoundError::Input(format!(
                "the slot length must be positive, not {slot_s}"
            )));
        }
        let lp = TimeIndexedLp::build(input, classes, t0, slot_s);
        bound.slots = lp.slots;
        bound.columns = lp.columns.len();
        bound.rows = lp.rows.len();
        let (status, extra_kwh) = lp.solve(options)?;
        bound.lp_status = status;
        bound.lp_kwh = Some(base_kwh + extra_kwh);
        bound.lower_kwh = bound.lower_kwh.max(base_kwh + extra_kwh);
    }
    bound.seconds = started.elapsed().as_secs_f64();
    Ok(bound)
}

fn validate(input: &EacoBoundInput) -> Result<(), BoundError> {
    if input.jobs.is_empty() {
        return Err(BoundError::Input("no jobs".into()));
    }
    let classes = input.classes();
    for (i, p) in input.patterns.iter().enumerate() {
        if p.tenants() == 0 || !(p.slowdown >= 1.0 && p.slowdown.is_finite()) {
            return Err(BoundError::Input(format!(
                "pattern {i}: needs a tenant and a slowdown ≥ 1"
            )));
        }
        if !(p.extra_watts.is_finite() && p.extra_watts >= 0.0) {
            return Err(BoundError::Input(format!(
                "pattern {i}: extra power {} W",
                p.extra_watts
            )));
        }
    }
    for (i, j) in input.jobs.iter().enumerate() {
        let finite = j.release_s.is_finite() && j.due_s.is_finite() && j.work_s.is_finite();
        if !finite || j.work_s <= 0.0 || j.class >= classes {
            return Err(BoundError::Input(format!(
                "job {i}: class {} of {classes}, release {}, due {}, work {} s",
                j.class, j.release_s, j.due_s, j.work_s
            )));
        }
    }
    if !(input.base_watts.is_finite() && input.base_watts >= 0.0) || input.nodes == 0 {
        return Err(BoundError::Input(
            "needs at least one node and a base power ≥ 0".into(),
        ));
    }
    Ok(())
}

/// `Σ_j W_j·f_{c_j}(ρ_j)` in kWh (infinite when a job cannot meet its window at all).
fn closed_form_extra_kwh(input: &EacoBoundInput, classes: usize) -> f64 {
    let points: Vec<Vec<(f64, f64)>> = (0..classes)
        .map(|c| {
            input
                .patterns
                .iter()
                .filter(|p| p.counts.get(c).copied().unwrap_or(0) > 0)
                .map(|p| {
                    (
                        p.slowdown,
                        p.extra_watts * p.slowdown / f64::from(p.tenants()),
                    )
                })
                .collect()
        })
        .collect();
    input
        .jobs
        .iter()
        .map(|j| {
            let ratio = (j.due_s - j.release_s) / j.work_s;
            j.work_s * least_energy_per_work(&points[j.class], ratio)
        })
        .sum::<f64>()
        / SECONDS_PER_HOUR
        / 1000.0
}

/// `min Σ x_p e_p` over `x ≥ 0`, `Σ x_p = 1`, `Σ x_p s_p ≤ ratio`, for points `(s_p, e_p)`:
/// the best single point within the ratio, or the best mix of one point on each side.
pub fn least_energy_per_work(points: &[(f64, f64)], ratio: f64) -> f64 {
    let mut best = f64::INFINITY;
    for &(s, e) in points {
        if s <= ratio {
            best = best.min(e);
        }
    }
    for &(s_fast, e_fast) in points.iter().filter(|p| p.0 <= ratio) {
        for &(s_slow, e_slow) in points.iter().filter(|p| p.0 > ratio) {
            // Time-per-work exactly `ratio`: weight θ on the slow point.
            let theta = (ratio - s_fast) / (s_slow - s_fast);
            best = best.min((1.0 - theta) * e_fast + theta * e_slow);
        }
    }
    best
}

/// `(cost, upper bound, (row, coefficient) entries)` of one LP column.
type LpColumn = (f64, f64, Vec<(usize, f64)>);

/// The time-indexed LP in hours and kilowatts (so the objective is kWh), kept as plain
/// rows and columns so its dual can be checked here.
struct TimeIndexedLp {
    slots: usize,
    /// `(lower, upper)` of each row.
    rows: Vec<(f64, f64)>,
    /// Every column; every lower bound is 0.
    columns: Vec<LpColumn>,
}

/// Job `j`'s rows and columns: its demand row `Σ_t w_{j,t} ≥ W_j` (hours), and in every
/// slot `t` it may run in (`most[t]` > 0 hours of its window there) its time `r_{j,t}` and
/// work `w_{j,t}`, at most `most[t]` each, in its class's time and work rows
/// (`class_rows`: per class and slot), linked by `r − w ≥ 0`.
fn add_job(
    j: &EacoJob,
    most: &[f64],
    (time_row, work_row): (&[Vec<usize>], &[Vec<usize>]),
    rows: &mut Vec<(f64, f64)>,
    columns: &mut Vec<LpColumn>,
) {
    let demand_row = rows.len();
    rows.push((j.work_s / SECONDS_PER_HOUR, f64::INFINITY));
    for (t, &most) in most.iter().enumerate() {
        if most <= 0.0 {
            continue;
        }
        let link_row = rows.len();
        rows.push((0.0, f64::INFINITY)); // r − w ≥ 0
        columns.push((
            0.0,
            most,
            vec![(time_row[j.class][t], 1.0), (link_row, 1.0)],
        ));
        columns.push((
            0.0,
            most,
            vec![
                (work_row[j.class][t], 1.0),
                (link_row, -1.0),
                (demand_row, 1.0),
            ],
        ));
    }
}

impl TimeIndexedLp {
    fn build(input: &EacoBoundInput, classes: usize, t0: f64, slot_s: f64) -> Self {
        let h = |s: f64| s / SECONDS_PER_HOUR;
        let end = input.jobs.iter().map(|j| j.due_s).fold(t0, f64::max);
        let slots = (((end - t0) / slot_s).ceil() as usize).max(1);
        let slot_h = h(slot_s);
        let overlap = |j: &EacoJob, t: usize| {
            let (from, to) = (t0 + t as f64 * slot_s, t0 + (t + 1) as f64 * slot_s);
            h((j.due_s.min(to) - j.release_s.max(from)).max(0.0))
        };
        let mut rows: Vec<(f64, f64)> = Vec::new();
        let mut columns = Vec::new();
        // How many jobs of each class may run in each slot: a class with none has no rows
        // there, and no node can hold more of a class than that (each job is one tenant).
        let mut present = vec![vec![0u32; slots]; classes];
        for j in &input.jobs {
            for (t, here) in present[j.class].iter_mut().enumerate() {
                *here += u32::from(overlap(j, t) > 0.0);
            }
        }
        let mut time_row = vec![vec![usize::MAX; slots]; classes];
        let mut work_row = vec![vec![usize::MAX; slots]; classes];
        for c in 0..classes {
            for t in 0..slots {
                if present[c][t] > 0 {
                    time_row[c][t] = rows.len();
                    rows.push((0.0, 0.0));
                    work_row[c][t] = rows.len();
                    rows.push((f64::NEG_INFINITY, 0.0));
                }
            }
        }
        let capacity_row: Vec<usize> = (0..slots)
            .map(|_| {
                rows.push((f64::NEG_INFINITY, input.nodes as f64 * slot_h));
                rows.len() - 1
            })
            .collect();
        for t in 0..slots {
            for p in &input.patterns {
                let classes_of_p = p.counts.iter().enumerate().filter(|(_, &m)| m > 0);
                if classes_of_p.clone().any(|(c, &m)| m > present[c][t]) {
                    continue; // `y = 0`: fewer jobs of a class of `p` may run here
                }
                let mut entries = vec![(capacity_row[t], 1.0)];
                for (c, &m) in classes_of_p {
                    entries.push((time_row[c][t], -f64::from(m)));
                    entries.push((work_row[c][t], -f64::from(m) / p.slowdown));
                }
                let cost = p.extra_watts / 1000.0;
                columns.push((cost, input.nodes as f64 * slot_h, entries));
            }
        }
        let class_rows = (time_row.as_slice(), work_row.as_slice());
        for j in &input.jobs {
            let most: Vec<f64> = (0..slots).map(|t| overlap(j, t)).collect();
            add_job(j, &most, class_rows, &mut rows, &mut columns);
        }
        TimeIndexedLp {
            slots,
            rows,
            columns,
        }
    }

    /// `(status, certified extra kWh)`.
    fn solve(&self, options: &EacoBoundOptions) -> Result<(LpStatus, f64), BoundError> {
        let mut problem = ColProblem::default();
        let handles: Vec<_> = self
            .rows
            .iter()
            .map(|&(lo, hi)| match (lo.is_finite(), hi.is_finite()) {
                (true, true) => problem.add_row(lo..=hi),
                (true, false) => problem.add_row(lo..),
                (false, true) => problem.add_row(..=hi),
                (false, false) => problem.add_row::<f64, _>(..),
            })
            .collect();
        for (cost, upper, entries) in &self.columns {
            problem.add_column(
                *cost,
                0.0..=*upper,
                entries.iter().map(|&(r, a)| (handles[r], a)),
            );
        }
        let mut model = problem
            .try_optimise(Sense::Minimise)
            .map_err(|e| format!("HiGHS rejected the EaCO bound LP: {e:?}"))?;
        let set = |model: &mut highs::Model, name: &str, value: f64| {
            model
                .try_set_option(name, value)
                .map_err(|e| format!("HiGHS option {name}: {e:?}"))
        };
        set(&mut model, "time_limit", options.time_limit_s.max(0.01))?;
        model
            .try_set_option("output_flag", false)
            .map_err(|e| format!("HiGHS option output_flag: {e:?}"))?;
        if let Some(threads) = options.threads {
            model
                .try_set_option("threads", threads as i32)
                .map_err(|e| format!("HiGHS option threads: {e:?}"))?;
        }
        let solved = model
            .try_solve()
            .map_err(|e| format!("HiGHS failed on the EaCO bound LP: {e:?}"))?;
        let status = match solved.status() {
            HighsModelStatus::Optimal => LpStatus::Optimal,
            HighsModelStatus::ReachedTimeLimit => LpStatus::TimeLimit,
            // Every column is bounded and costs ≥ 0: "unbounded or infeasible" is infeasible.
            HighsModelStatus::Infeasible | HighsModelStatus::UnboundedOrInfeasible => {
                return Ok((LpStatus::Infeasible, f64::INFINITY))
            }
            other => {
                return Err(BoundError::Solver(format!(
                    "the EaCO bound LP ended with status {other:?}"
                )))
            }
        };
        let duals = solved.get_solution().dual_rows().to_vec();
        Ok((status, self.certified_value(&duals)))
    }

    /// Weak duality: the Lagrangian's minimum over the column box for multipliers `duals`,
    /// sign-clipped to the rows' senses. A valid lower bound for any `duals`.
    fn certified_value(&self, duals: &[f64]) -> f64 {
        let pi: Vec<f64> = self
            .rows
            .iter()
            .zip(duals)
            .map(|(&(lo, hi), &d)| match (lo.is_finite(), hi.is_finite()) {
                (true, true) if lo == hi => d,
                (true, false) => d.max(0.0),
                (false, true) => d.min(0.0),
                _ => 0.0, // a ranged or free row: multiplier 0 is always valid
            })
            .collect();
        let rows_part: f64 = self
            .rows
            .iter()
            .zip(&pi)
            .map(|(&(lo, hi), &p)| {
                if p > 0.0 {
                    p * lo
                } else if p < 0.0 {
                    p * hi
                } else {
                    0.0
                }
            })
            .sum();
        let columns_part: f64 = self
            .columns
            .iter()
            .map(|(cost, upper, entries)| {
                let reduced = cost - entries.iter().map(|&(r, a)| pi[r] * a).sum::<f64>();
                (reduced * upper).min(0.0)
            })
            .sum();
        rows_part + columns_part
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_energy_mixes_two_points_at_the_ratio() {
        // Alone: 1 s per work at 10; shared: 1.5 s per work at 4. Ratio 1.2 → θ = 0.4.
        let points = [(1.0, 10.0), (1.5, 4.0)];
        assert!((least_energy_per_work(&points, 1.2) - (0.6 * 10.0 + 0.4 * 4.0)).abs() < 1e-12);
        assert_eq!(least_energy_per_work(&points, 2.0), 4.0);
        assert_eq!(least_energy_per_work(&points, 0.9), f64::INFINITY);
    }
}
