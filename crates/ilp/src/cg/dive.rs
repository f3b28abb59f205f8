//! Diving: the master LP made nearly integral by fixing and re-solving.
//!
//! Flooring the LP's `λ` leaves one node's worth of tasks per fractional column to the
//! repair; on a nearly full cluster those leftovers may not fit the nodes left, and the
//! repair fails. Diving shrinks the leftover first. Each step requires `λ_c ≥ ⌊λ_c⌋` of
//! every column, then takes the column with the largest fraction and requires
//! `λ_c ≥ ⌈λ_c⌉` (round up) or, if the LP then has no solution, `λ_c ≤ ⌊λ_c⌋` (round
//! down), and re-solves the master over the same pool from its last basis. The dive stops
//! when the LP is integral, when neither rounding leaves a solution, or at the deadline; its
//! last `λ` goes to the rounding and repair like any LP solution.

use std::time::Instant;

use super::column::ColumnPool;
use super::master::Master;
use crate::model::Demand;

/// Dives from the master LP over `pool` (one node type per `type_nodes`, one shape per
/// `shape_counts`); returns `(pool index, λ)` of the last LP solution it reached (`None`
/// when the master had no solution in time).
pub(crate) fn dive(
    pool: &ColumnPool,
    type_nodes: &[usize],
    shape_counts: &[usize],
    demand: Demand,
    threads: Option<u32>,
    deadline: Instant,
) -> Result<Option<Vec<(usize, f64)>>, String> {
    let mut master = Master::new(type_nodes, shape_counts, demand, threads)?;
    for (i, column) in pool.columns.iter().enumerate() {
        master.add(column, i)?;
    }
    let time_left = || {
        deadline
            .saturating_duration_since(Instant::now())
            .as_secs_f64()
    };
    let Some(lp) = master.solve_if_feasible(time_left())? else {
        return Ok(None);
    };
    // Master column i is pool column i: every column was added once, in pool order.
    let mut lambda = master.used_pool_columns(&lp);
    let mut bounds = vec![(0.0, f64::INFINITY); pool.len()];
    let floor = |l: f64| (l + 1e-6).floor();
    while Instant::now() < deadline {
        for &(c, l) in &lambda {
            if floor(l) > bounds[c].0 {
                bounds[c].0 = floor(l);
                master.set_bounds(c, bounds[c].0, bounds[c].1);
            }
        }
        let Some(&(c, l)) = lambda
            .iter()
            .filter(|&&(_, l)| l - floor(l) > 1e-6)
            .max_by(|a, b| {
                (a.1 - floor(a.1))
                    .total_cmp(&(b.1 - floor(b.1)))
                    .then(b.0.cmp(&a.0))
            })
        else {
            break;
        };
        let was = bounds[c];
        let mut next = None;
        for rounded in [(floor(l) + 1.0, was.1), (was.0, floor(l))] {
            master.set_bounds(c, rounded.0, rounded.1);
            if let Some(lp) = master.solve_if_feasible(time_left())? {
                bounds[c] = rounded;
                next = Some(master.used_pool_columns(&lp));
                break;
            }
        }
        match next {
            Some(l) => lambda = l,
            None => {
                master.set_bounds(c, was.0, was.1);
                break;
            }
        }
    }
    Ok(Some(lambda))
}
