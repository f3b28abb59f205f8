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

/// The exchange-free master over a pool, solved once, ready to dive.
pub(crate) struct Dive {
    master: Master,
    /// The LP solution before diving, as `(pool index, λ)`.
    pub start: Vec<(usize, f64)>,
    pool_len: usize,
}

impl Dive {
    /// Solves the master over `pool` (one node type per `type_nodes`, one shape per
    /// `shape_counts`) within `time_limit_s`; `None` when it has no solution in time.
    pub fn new(
        pool: &ColumnPool,
        type_nodes: &[usize],
        shape_counts: &[usize],
        demand: Demand,
        threads: Option<u32>,
        time_limit_s: f64,
    ) -> Result<Option<Dive>, String> {
        let mut master = Master::over_pool(pool, type_nodes, shape_counts, demand, threads)?;
        let Some(lp) = master.solve_if_feasible(time_limit_s)? else {
            return Ok(None);
        };
        // Master column i is pool column i (`over_pool`).
        let start = master.used_pool_columns(&lp);
        Ok(Some(Dive {
            master,
            start,
            pool_len: pool.len(),
        }))
    }

    /// Dives until `deadline`; returns the last LP solution reached, as `(pool index, λ)`.
    pub fn run(mut self, deadline: Instant) -> Result<Vec<(usize, f64)>, String> {
        let master = &mut self.master;
        let time_left = || {
            deadline
                .saturating_duration_since(Instant::now())
                .as_secs_f64()
        };
        let mut lambda = self.start;
        let mut bounds = vec![(0.0, f64::INFINITY); self.pool_len];
        let floor = |l: f64| (l + 1e-6).floor();
        while Instant::now() < deadline {
            for &(c, l) in &lambda {
                if floor(l) > bounds[c].0 {
                    bounds[c].0 = floor(l);
                    master.set_bounds(c, bounds[c].0, bounds[c].1);
                }
            }
            let Some(&(c, l)) =
                lambda
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
        Ok(lambda)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cg::column::Column;

    fn column(counts: &[usize], cost: f64) -> Column {
        Column {
            type_index: 0,
            counts: counts.iter().map(|&s| (s, 1)).collect(),
            slots: Vec::new(),
            cost,
        }
    }

    /// Three tasks a, b, c on two nodes; pairs cost 1, singles 1.5. The LP takes every pair
    /// at ½ (1.5); the integer optimum is a pair and a single (2.5), which the dive reaches.
    #[test]
    fn dive_turns_a_fractional_triangle_into_the_integer_optimum() {
        let mut pool = ColumnPool::default();
        for (counts, cost) in [
            (&[0, 1][..], 1.0),
            (&[1, 2][..], 1.0),
            (&[0, 2][..], 1.0),
            (&[0][..], 1.5),
            (&[1][..], 1.5),
            (&[2][..], 1.5),
        ] {
            pool.add(column(counts, cost));
        }
        let dive = Dive::new(&pool, &[2], &[1, 1, 1], Demand::Exactly, None, 10.0)
            .unwrap()
            .expect("the master has a solution");
        assert!(
            dive.start.iter().all(|&(_, l)| (l - 0.5).abs() < 1e-6),
            "the LP takes every pair at ½: {:?}",
            dive.start
        );
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        let lambda = dive.run(deadline).unwrap();
        let mut covered = [0.0; 3];
        let (mut nodes, mut cost) = (0.0, 0.0);
        for &(c, l) in &lambda {
            assert!((l - l.round()).abs() < 1e-6, "λ = {l} is fractional");
            for &(s, n) in &pool.columns[c].counts {
                covered[s] += l * f64::from(n);
            }
            nodes += l;
            cost += l * pool.columns[c].cost;
        }
        assert_eq!(covered, [1.0; 3]);
        assert!(nodes <= 2.0 + 1e-9);
        assert!((cost - 2.5).abs() < 1e-6, "cost {cost}");
    }
}
