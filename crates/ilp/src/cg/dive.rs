//! Diving with pricing: the master LP driven to an integral solution by fixing nodes,
//! with new columns priced after every fixing.
//!
//! Flooring the LP's `λ` leaves one node's worth of tasks per fractional column to the
//! repair; on a nearly full cluster those leftovers may not fit the nodes left, and the
//! repair fails. The dive fixes instead of flooring. Each step requires `λ_c ≥ ⌊λ_c⌋` of
//! every column, then rounds up (`λ_c ≥ ⌈λ_c⌉`) the fractional columns from the largest
//! fraction down, as long as the nodes and tasks not yet fixed hold them (a batch: every
//! column at or above [`BATCH_FRACTION`], at least one, at most half the last batch that
//! failed), and re-solves the master from its
//! last basis. Fixings can leave tasks that no column in the pool covers any more, so
//! pricing runs after every re-solve (residual pricing: the fixed nodes are in the
//! master's rows, a new column is priced at the master's duals as usual), and each shape
//! has an artificial column that leaves one task unplaced at a prohibitive penalty: the
//! master always has a solution, and a fixing after which it still needs an artificial
//! task is undone — the batch is cut to its first column, then that column is rounded down
//! (`λ_c ≤ ⌊λ_c⌋`). When no fixing of a step keeps every task placed, the step tries them
//! again without its own floors, then the dive backtracks: the step before tries its next
//! fixing, with the later floors undone. The dive ends when
//! `λ` is integral (an integer solution, no repair needed), when it has nothing left to try
//! or has backtracked [`BACKTRACKS`] times, or at the deadline; it returns the deepest `λ`
//! that placed every task, for the rounding and repair like any LP solution.

use std::time::Instant;

use super::column::{Added, Column, ColumnPool};
use super::master::{Master, MasterColumn, MasterSolution};
use crate::model::Demand;

/// Fractional columns at or above this fraction are rounded up together in one step.
const BATCH_FRACTION: f64 = 0.5;
/// The artificial penalty per task, as a multiple of the dearest column in the pool: far
/// above anything a real placement costs, so the LP leaves a task unplaced only when the
/// fixings leave it nowhere to go.
const PENALTY_FACTOR: f64 = 1e3;
/// Pricing rounds after one fixing (each adds columns and re-solves).
const PRICING_ROUNDS: usize = 5;
/// What counts as fractional, and as an artificial task.
const TOLERANCE: f64 = 1e-6;
/// Steps undone per dive, at most, when no fixing of a step keeps every task placed.
const BACKTRACKS: usize = 8;

/// `⌊λ⌋`, an integral `λ` a little below its integer counted as that integer.
fn floor(lambda: f64) -> f64 {
    (lambda + TOLERANCE).floor()
}

/// New bounds `(at least, at most)` per master column.
type Fixing = Vec<(usize, (f64, f64))>;

/// A dive's step: the bounds it starts from, before and after its floors, and the fixings
/// it has not tried yet.
struct Step {
    bases: [Vec<(f64, f64)>; 2],
    /// `(base, fixing)`, the next one last.
    tries: Vec<(usize, Fixing)>,
    /// How many of `tries` come with the floors.
    tries_with_floors: usize,
}
/// Indices into [`Step::bases`].
const WITHOUT_FLOORS: usize = 0;
const WITH_FLOORS: usize = 1;

/// How a dive ended.
pub(crate) struct Dived {
    /// The deepest LP solution that placed every task, as `(pool index, λ)`.
    pub lambda: Vec<(usize, f64)>,
    /// `lambda` is integral: the dive reached an integer solution.
    pub integral: bool,
    /// Steps at which no fixing worked with the step's floors, which were then undone.
    pub floors_undone: usize,
    /// Steps undone because no fixing worked with or without their floors.
    pub backtracks: usize,
}

/// New columns under the duals of a dive's master: `(pool, shape duals, convexity duals,
/// tasks left per shape)`, the columns whose reduced cost is negative and that hold no
/// more tasks of a shape than the fixings leave (possibly none).
pub(crate) type Price<'p> = dyn FnMut(&ColumnPool, &[f64], &[f64], &[usize]) -> Vec<Column> + 'p;

/// The exchange-free master over a pool, solved once, ready to dive.
pub(crate) struct Dive {
    master: Master,
    solution: MasterSolution,
    /// The LP solution before diving, as `(pool index, λ)`.
    pub start: Vec<(usize, f64)>,
    /// `(at least, at most)` per master column.
    bounds: Vec<(f64, f64)>,
    /// The most columns a step rounds up together: halved whenever a batch fails (late in
    /// a dive on a nearly full cluster, batches failed step after step, each failure as
    /// dear as a step, and the dive ran out of time one column per step).
    batch_cap: usize,
    /// Per pool column: its node type and shape counts, for the residual after fixings.
    type_nodes: Vec<usize>,
    shape_counts: Vec<usize>,
}

impl Dive {
    /// Solves the master over `pool` (one node type per `type_nodes`, one shape per
    /// `shape_counts`, an artificial column per shape when every task must be placed)
    /// within `time_limit_s`; `None` when it has no solution in time.
    pub fn new(
        pool: &ColumnPool,
        type_nodes: &[usize],
        shape_counts: &[usize],
        demand: Demand,
        threads: Option<u32>,
        time_limit_s: f64,
    ) -> Result<Option<Dive>, String> {
        Self::new_capped(
            pool,
            type_nodes,
            shape_counts,
            demand,
            threads,
            time_limit_s,
            None,
        )
    }

    /// [`Self::new`] under a power cap row (`Σ_c watts_c·λ_c ≤ watts_left`, see
    /// [`Master::add_power_cap`]) when given: every λ of the dive then respects it.
    pub fn new_capped(
        pool: &ColumnPool,
        type_nodes: &[usize],
        shape_counts: &[usize],
        demand: Demand,
        threads: Option<u32>,
        time_limit_s: f64,
        watts_left: Option<f64>,
    ) -> Result<Option<Dive>, String> {
        let mut master = Master::over_pool(pool, type_nodes, shape_counts, demand, threads)?;
        if let Some(watts_left) = watts_left {
            master.add_power_cap(pool, watts_left)?;
        }
        if demand == Demand::Exactly {
            let dearest = pool
                .columns
                .iter()
                .map(|c| c.cost.abs())
                .fold(1.0, f64::max);
            for shape in 0..shape_counts.len() {
                master.add_artificial(shape, PENALTY_FACTOR * dearest)?;
            }
        }
        let Some(solution) = master.solve_if_feasible(time_limit_s)? else {
            return Ok(None);
        };
        if master.artificial_tasks(&solution) > TOLERANCE {
            return Ok(None);
        }
        let start = master.used_pool_columns(&solution);
        Ok(Some(Dive {
            bounds: vec![(0.0, f64::INFINITY); master.len()],
            batch_cap: usize::MAX,
            master,
            solution,
            start,
            type_nodes: type_nodes.to_vec(),
            shape_counts: shape_counts.to_vec(),
        }))
    }

    /// Dives until `deadline`, adding the columns `price` finds to `pool`; returns the
    /// deepest LP solution that placed every task, as `(pool index, λ)` (integral unless the
    /// dive stopped early).
    ///
    /// A step tries its fixings with its floors, then without them: an integral `λ_c` of
    /// the LP need not be one of any integer solution's (the test
    /// `dive_undoes_a_floor_no_integer_solution_keeps`). When nothing works, the dive
    /// backtracks: the step before tries its next fixing (at most [`BACKTRACKS`] times per
    /// dive).
    pub fn run(
        mut self,
        pool: &mut ColumnPool,
        price: &mut Price<'_>,
        deadline: Instant,
    ) -> Result<Dived, String> {
        let mut steps: Vec<Step> = Vec::new();
        let mut deepest = (0, self.solution.clone());
        let (mut backtracks, mut floors_undone, mut integral) = (0, 0, false);
        'dive: while Instant::now() < deadline {
            let fractional = self.fractional();
            if fractional.is_empty() {
                deepest.1 = self.solution.clone();
                integral = true;
                break;
            }
            let without_floors = self.bounds.clone();
            self.fix_floors();
            let fixings = self.fixings(pool, &fractional);
            // Tried from the last: every fixing with this step's floors, then without.
            let tries = (fixings.iter().rev().cloned().map(|f| (WITHOUT_FLOORS, f)))
                .chain(fixings.iter().rev().cloned().map(|f| (WITH_FLOORS, f)))
                .collect();
            steps.push(Step {
                bases: [without_floors, self.bounds.clone()],
                tries_with_floors: fixings.len(),
                tries,
            });
            if steps.len() > deepest.0 {
                deepest = (steps.len(), self.solution.clone());
            }
            while let Some(step) = steps.last_mut() {
                let Some((base, fixing)) = step.tries.pop() else {
                    if backtracks == BACKTRACKS {
                        break 'dive;
                    }
                    backtracks += 1;
                    steps.pop();
                    continue;
                };
                if base == WITHOUT_FLOORS && step.tries.len() + 1 == step.tries_with_floors {
                    floors_undone += 1;
                }
                let bounds = step.bases[base].clone();
                self.restore(&bounds);
                for &(c, bounds) in &fixing {
                    self.set_bounds(c, bounds);
                }
                let batch = fixing.len();
                if let Some(solution) = self.solve_and_price(pool, price, deadline)? {
                    self.solution = solution;
                    continue 'dive;
                }
                if batch > 1 {
                    self.batch_cap = batch / 2;
                }
                if Instant::now() >= deadline {
                    break 'dive;
                }
            }
            break;
        }
        Ok(Dived {
            lambda: self.master.used_pool_columns(&deepest.1),
            integral,
            floors_undone,
            backtracks,
        })
    }

    /// The master columns whose `λ` is fractional, the largest fraction first.
    fn fractional(&self) -> Vec<usize> {
        let lambda = &self.solution.lambda;
        let fraction = |c: usize| lambda[c] - floor(lambda[c]);
        let mut fractional: Vec<usize> = (0..lambda.len())
            .filter(|&c| {
                matches!(self.master.kind_of[c], MasterColumn::Pool(_)) && fraction(c) > TOLERANCE
            })
            .collect();
        fractional.sort_by(|&a, &b| fraction(b).total_cmp(&fraction(a)).then(a.cmp(&b)));
        fractional
    }

    /// `λ_c ≥ ⌊λ_c⌋` for every column.
    fn fix_floors(&mut self) {
        for c in 0..self.solution.lambda.len() {
            let at_least = floor(self.solution.lambda[c]);
            if at_least > self.bounds[c].0 {
                self.set_bounds(c, (at_least, self.bounds[c].1));
            }
        }
    }

    /// A step's fixings, in the order they are tried, as new bounds per column: the batch
    /// rounded up, its first column alone rounded up, the largest fraction rounded down.
    fn fixings(&self, pool: &ColumnPool, fractional: &[usize]) -> Vec<Fixing> {
        let lambda = &self.solution.lambda;
        let batch = self.round_up_batch(pool, fractional, lambda);
        let up = |c: usize| (c, (floor(lambda[c]) + 1.0, self.bounds[c].1));
        let mut fixings: Vec<Fixing> = Vec::new();
        if !batch.is_empty() {
            fixings.push(batch.iter().map(|&c| up(c)).collect());
        }
        if batch.len() > 1 {
            fixings.push(vec![up(batch[0])]);
        }
        let top = fractional[0];
        fixings.push(vec![(top, (self.bounds[top].0, floor(lambda[top])))]);
        fixings
    }

    /// Sets every column's bounds to `bounds` (columns priced since: free).
    fn restore(&mut self, bounds: &[(f64, f64)]) {
        for c in 0..self.bounds.len() {
            let target = bounds.get(c).copied().unwrap_or((0.0, f64::INFINITY));
            if self.bounds[c] != target {
                self.set_bounds(c, target);
            }
        }
    }

    /// The fractional columns (largest fraction first) rounded up together: each whose
    /// next node the residual still holds — a node of its type not yet fixed, and its
    /// tasks among those not yet fixed — while its fraction is at least
    /// [`BATCH_FRACTION`] (the first one whatever its fraction), at most `batch_cap`.
    fn round_up_batch(
        &self,
        pool: &ColumnPool,
        fractional: &[usize],
        lambda: &[f64],
    ) -> Vec<usize> {
        let (mut nodes_left, mut tasks_left) = self.residual(pool);
        let column_of = |c: usize| match self.master.kind_of[c] {
            MasterColumn::Pool(p) => Some(&pool.columns[p]),
            _ => None,
        };
        let mut batch = Vec::new();
        for &c in fractional {
            if batch.len() == self.batch_cap {
                break;
            }
            let fraction = lambda[c] - floor(lambda[c]);
            if !batch.is_empty() && fraction < BATCH_FRACTION {
                break;
            }
            let Some(column) = column_of(c) else { continue };
            let fits = nodes_left[column.type_index] >= 1
                && column
                    .counts
                    .iter()
                    .all(|&(s, n)| tasks_left[s] >= n as usize);
            if fits {
                nodes_left[column.type_index] -= 1;
                for &(s, n) in &column.counts {
                    tasks_left[s] -= n as usize;
                }
                batch.push(c);
            }
        }
        batch
    }

    /// The nodes per type and tasks per shape the fixings (lower bounds) leave.
    fn residual(&self, pool: &ColumnPool) -> (Vec<usize>, Vec<usize>) {
        let mut nodes_left = self.type_nodes.clone();
        let mut tasks_left = self.shape_counts.clone();
        for (kind, &(at_least, _)) in self.master.kind_of.iter().zip(&self.bounds) {
            if let MasterColumn::Pool(p) = *kind {
                let column = &pool.columns[p];
                let nodes = at_least.round() as usize;
                nodes_left[column.type_index] = nodes_left[column.type_index].saturating_sub(nodes);
                for &(s, n) in &column.counts {
                    tasks_left[s] = tasks_left[s].saturating_sub(nodes * n as usize);
                }
            }
        }
        (nodes_left, tasks_left)
    }

    fn set_bounds(&mut self, c: usize, bounds: (f64, f64)) {
        self.bounds[c] = bounds;
        self.master.set_bounds(c, bounds.0, bounds.1);
    }

    /// Re-solves the master, pricing new columns after each solve (at most
    /// [`PRICING_ROUNDS`] times); `None` when it ends with a task left to an artificial
    /// column (or with no solution in time).
    fn solve_and_price(
        &mut self,
        pool: &mut ColumnPool,
        price: &mut Price<'_>,
        deadline: Instant,
    ) -> Result<Option<MasterSolution>, String> {
        let time_left = || {
            deadline
                .saturating_duration_since(Instant::now())
                .as_secs_f64()
        };
        for round in 0..=PRICING_ROUNDS {
            let Some(solution) = self.master.solve_if_feasible(time_left())? else {
                return Ok(None);
            };
            let placed_all = self.master.artificial_tasks(&solution) <= TOLERANCE;
            let mut added = false;
            if round < PRICING_ROUNDS && time_left() > 0.0 {
                let (_, tasks_left) = self.residual(pool);
                let duals = (&solution.demand_duals, &solution.convexity_duals);
                for column in price(pool, duals.0, duals.1, &tasks_left) {
                    if let Added::New(p) | Added::Cheaper(p) = pool.add(column) {
                        self.master.add(&pool.columns[p], p)?;
                        self.bounds.push((0.0, f64::INFINITY));
                        added = true;
                    }
                }
            }
            if !added {
                return Ok(placed_all.then_some(solution));
            }
        }
        unreachable!("the last round prices nothing")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(counts: &[usize], cost: f64) -> Column {
        Column {
            type_index: 0,
            counts: counts.iter().map(|&s| (s, 1)).collect(),
            slots: Vec::new(),
            cost,
            watts: 0.0,
            sockets: 0,
        }
    }

    fn triangle_pool(columns: &[(&[usize], f64)]) -> ColumnPool {
        let mut pool = ColumnPool::default();
        for &(counts, cost) in columns {
            pool.add(column(counts, cost));
        }
        pool
    }

    /// `(nodes, cost, tasks covered per shape)` of an integral `λ`.
    fn integral_solution(pool: &ColumnPool, lambda: &[(usize, f64)]) -> (f64, f64, Vec<f64>) {
        let shapes = pool
            .columns
            .iter()
            .flat_map(|c| &c.counts)
            .map(|&(s, _)| s + 1);
        let mut covered = vec![0.0; shapes.max().unwrap_or(0)];
        let (mut nodes, mut cost) = (0.0, 0.0);
        for &(c, l) in lambda {
            assert!((l - l.round()).abs() < 1e-6, "λ = {l} is fractional");
            for &(s, n) in &pool.columns[c].counts {
                covered[s] += l * f64::from(n);
            }
            nodes += l;
            cost += l * pool.columns[c].cost;
        }
        (nodes, cost, covered)
    }

    fn deadline() -> Instant {
        Instant::now() + std::time::Duration::from_secs(10)
    }

    /// Three tasks a, b, c on two nodes; pairs cost 1, singles 1.5. The LP takes every pair
    /// at ½ (1.5); the integer optimum is a pair and a single (2.5), which the dive reaches.
    #[test]
    fn dive_turns_a_fractional_triangle_into_the_integer_optimum() {
        let mut pool = triangle_pool(&[
            (&[0, 1], 1.0),
            (&[1, 2], 1.0),
            (&[0, 2], 1.0),
            (&[0], 1.5),
            (&[1], 1.5),
            (&[2], 1.5),
        ]);
        let dive = Dive::new(&pool, &[2], &[1, 1, 1], Demand::Exactly, None, 10.0)
            .unwrap()
            .expect("the master has a solution");
        assert!(
            dive.start.iter().all(|&(_, l)| (l - 0.5).abs() < 1e-6),
            "the LP takes every pair at ½: {:?}",
            dive.start
        );
        let lambda = dive
            .run(&mut pool, &mut |_, _, _, _| Vec::new(), deadline())
            .unwrap()
            .lambda;
        let (nodes, cost, covered) = integral_solution(&pool, &lambda);
        assert_eq!(covered, [1.0; 3]);
        assert!(nodes <= 2.0 + 1e-9);
        assert!((cost - 2.5).abs() < 1e-6, "cost {cost}");
    }

    /// The triangle with watts: pairs draw 10 W, singles 1 W. Under a cap of 5 W on three
    /// nodes only the three singles fit (4.5, where the uncapped optimum is 2.5), and the
    /// capped dive ends there.
    #[test]
    fn a_capped_dive_respects_the_power_cap() {
        let mut pool = triangle_pool(&[(&[0, 1], 1.0), (&[1, 2], 1.0), (&[0, 2], 1.0)]);
        for s in 0..3 {
            pool.add(Column {
                watts: 1.0,
                ..column(&[s], 1.5)
            });
        }
        for pair in 0..3 {
            pool.columns[pair].watts = 10.0;
        }
        let dive = Dive::new_capped(
            &pool,
            &[3],
            &[1, 1, 1],
            Demand::Exactly,
            None,
            10.0,
            Some(5.0),
        )
        .unwrap()
        .expect("the three singles are within the cap");
        let lambda = dive
            .run(&mut pool, &mut |_, _, _, _| Vec::new(), deadline())
            .unwrap()
            .lambda;
        let (nodes, cost, covered) = integral_solution(&pool, &lambda);
        let watts: f64 = lambda.iter().map(|&(c, l)| l * pool.columns[c].watts).sum();
        assert_eq!(covered, [1.0; 3]);
        assert!(
            nodes <= 3.0 + 1e-9 && watts <= 5.0 + 1e-9,
            "{nodes} nodes, {watts} W"
        );
        assert!((cost - 4.5).abs() < 1e-6, "cost {cost}");
    }

    /// The same triangle without single-task columns: once a pair is fixed, the third task
    /// has no column left, and only pricing (here: offering the singles) completes the dive.
    #[test]
    fn dive_prices_the_column_its_fixings_need() {
        let mut pool = triangle_pool(&[(&[0, 1], 1.0), (&[1, 2], 1.0), (&[0, 2], 1.0)]);
        let dive = Dive::new(&pool, &[2], &[1, 1, 1], Demand::Exactly, None, 10.0)
            .unwrap()
            .expect("the master has a solution");
        let mut offered = 0;
        let mut price = |pool: &ColumnPool, duals: &[f64], convexity: &[f64], _: &[usize]| {
            // The singles, those with a negative reduced cost at these duals.
            (0..3)
                .map(|s| column(&[s], 1.5))
                .filter(|c| {
                    !pool.columns.contains(c) && c.cost - c.priced(duals) - convexity[0] < -1e-9
                })
                .inspect(|_| offered += 1)
                .collect()
        };
        let lambda = dive.run(&mut pool, &mut price, deadline()).unwrap().lambda;
        assert!(offered > 0, "the dive priced");
        let (nodes, cost, covered) = integral_solution(&pool, &lambda);
        assert_eq!(covered, [1.0; 3]);
        assert!(nodes <= 2.0 + 1e-9);
        assert!((cost - 2.5).abs() < 1e-6, "cost {cost}");
    }

    /// Tasks a, b, c, d on three nodes: pairs ab, bc, ac and the single d cost 1, the pair
    /// cd costs 3. The LP takes d alone (λ = 1, integral) and every pair at ½ (2.5); but
    /// with d alone no integer solution covers a, b and c, so the floor on d must go: the
    /// dive reaches ab + cd (4), the only integer solution.
    #[test]
    fn dive_undoes_a_floor_no_integer_solution_keeps() {
        let mut pool = triangle_pool(&[
            (&[0, 1], 1.0),
            (&[1, 2], 1.0),
            (&[0, 2], 1.0),
            (&[3], 1.0),
            (&[2, 3], 3.0),
        ]);
        let dive = Dive::new(&pool, &[3], &[1, 1, 1, 1], Demand::Exactly, None, 10.0)
            .unwrap()
            .expect("the master has a solution");
        let near = |c: usize, value: f64| {
            (dive.start.iter()).any(|&(used, l)| used == c && (l - value).abs() < 1e-6)
        };
        assert!(
            near(3, 1.0) && (0..3).all(|pair| near(pair, 0.5)),
            "the LP takes d alone and every pair at ½: {:?}",
            dive.start
        );
        let dived = dive
            .run(&mut pool, &mut |_, _, _, _| Vec::new(), deadline())
            .unwrap();
        assert!(dived.integral && dived.floors_undone == 1 && dived.backtracks == 0);
        let (nodes, cost, covered) = integral_solution(&pool, &dived.lambda);
        assert_eq!(covered, [1.0; 4]);
        assert!(nodes <= 3.0 + 1e-9);
        assert!((cost - 4.0).abs() < 1e-6, "cost {cost}");
    }
}
