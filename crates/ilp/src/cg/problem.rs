//! What one column-generation solve works on and reports: its fixed inputs (`Problem`),
//! its figures (`CgStats`) and the rounding it kept. A leaf the solve's phases share.

use std::time::Instant;

use gapbench_model::Placement;

use super::column::{ColumnPool, TypeCluster};
use super::integer::expand;
use super::pricing::PricingContext;
use crate::eval::{alloc_gpu_milli, frag_milli, power_watts, state_of};
use crate::model::Demand;
use crate::shapes::Shapes;
use crate::snapshot::{check_assignment, Snapshot};
use crate::solve::{Objective, SolveOptions};

/// How a column-generation solve went.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CgStats {
    /// Master solves (each followed by pricing every node type).
    pub iterations: usize,
    /// Of `iterations`: those whose greedy pricing found nothing, so every node type was
    /// priced exactly (what `SolveOptions::max_pricing_rounds` caps).
    pub exact_rounds: usize,
    /// Columns generated, the heuristic's configurations included.
    pub columns: usize,
    /// The heuristic's distinct configurations (the initial pool).
    pub initial_columns: usize,
    /// Configurations carried from an earlier checkpoint that fit this one.
    pub carried_columns: usize,
    /// The last restricted master LP value (constant included).
    pub lp_value: f64,
    /// The best Lagrangian bound (before rounding).
    pub lagrangian_bound: f64,
    /// Pricing proved the master LP optimal (no improving column).
    pub converged: bool,
    pub pricing_seconds: f64,
    /// Of `pricing_seconds`: master LP solves, greedy pricing, exact pricing rounds.
    pub master_seconds: f64,
    pub greedy_seconds: f64,
    pub exact_seconds: f64,
    pub integer_seconds: f64,
    /// Branch and price after a converged LP ([`branch`]): tree nodes solved, and time.
    pub branch_nodes: usize,
    pub branch_seconds: f64,
    /// Dive steps at which no fixing worked with the step's floors (then undone), and
    /// steps the dive undid because none worked without them either ([`dive`]).
    pub dive_floors_undone: usize,
    pub dive_backtracks: usize,
    /// The dive reached an integer solution (false also when it did not run).
    pub dive_integral: bool,
    /// The best rounding of the LP (`None`: every repair failed).
    pub rounding: Option<Rounding>,
    /// The objective's value of the integer master's solution, if it returned one.
    pub integer_master_value: Option<f64>,
}

/// A rounded and repaired LP solution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rounding {
    /// The share of the LP's nodes it kept.
    pub keep: f64,
    /// Rounded after diving, or straight from the LP.
    pub dived: bool,
    /// The objective's value of its placement.
    pub value: f64,
}

/// One solve's inputs, fixed for its whole run.
pub(crate) struct Problem<'a> {
    pub snapshot: &'a Snapshot<'a>,
    pub objective: Objective,
    pub options: &'a SolveOptions,
    /// Started with the solve: every deadline is measured from it.
    pub clock: Instant,
    /// `N_τ` per type and `count_s` per shape: the master's right-hand sides.
    pub type_nodes: Vec<usize>,
    pub shape_counts: Vec<usize>,
    pub demand: Demand,
    /// Minimisation inside: `−1` for allocation (the master minimises `−allocated`).
    pub sign: f64,
    /// `C₀`, the empty cluster's cost (columns cost relative to the empty node).
    pub constant: f64,
    /// For fragmentation, the weight of power in the cost `F + w·P` (see
    /// [`TypeCluster::watts_weight`]); 0 otherwise.
    pub watts_weight: f64,
    /// The objective's value of the heuristic's own placement.
    pub heuristic_value: f64,
    /// The node types and shapes live here, shared with pricing.
    pub context: PricingContext<'a>,
}

impl Problem<'_> {
    /// The placement the columns `uses` (column, nodes) make of the snapshot's tasks,
    /// checked from scratch, with its objective value; `source` names it in the error.
    pub(super) fn checked_placement(
        &self,
        pool: &ColumnPool,
        uses: &[(usize, u32)],
        source: &str,
    ) -> Result<(Vec<Option<Placement>>, f64), String> {
        let snapshot = self.snapshot;
        let placement = expand(
            snapshot.cluster,
            self.context.types,
            pool,
            self.context.shapes,
            uses,
            snapshot.tasks.len(),
        )?;
        check_assignment(snapshot.cluster, snapshot.tasks, &placement)
            .map_err(|e| format!("{source} fails the checker: {e}"))?;
        let value = self.evaluate(&placement);
        Ok((placement, value))
    }

    /// The objective's value of a full placement, by the model crate's ruler.
    pub(super) fn evaluate(&self, placement: &[Option<Placement>]) -> f64 {
        let snapshot = self.snapshot;
        let state = || state_of(snapshot.cluster, snapshot.tasks, placement);
        match self.objective {
            Objective::Power => power_watts(snapshot.cluster, &state()) as f64,
            Objective::Alloc => alloc_gpu_milli(snapshot.tasks, placement) as f64,
            Objective::Frag => {
                let state = state();
                let fragment = frag_milli(snapshot.cluster, snapshot.typical, &state);
                if self.watts_weight > 0.0 {
                    fragment + self.watts_weight * power_watts(snapshot.cluster, &state) as f64
                } else {
                    fragment
                }
            }
        }
    }
}

impl<'a> Problem<'a> {
    pub(super) fn new(
        snapshot: &'a Snapshot<'a>,
        objective: Objective,
        options: &'a SolveOptions,
        clock: &Instant,
        types: &'a [TypeCluster],
        shapes: &'a Shapes,
        demand: Demand,
    ) -> Self {
        let mut problem = Problem {
            snapshot,
            objective,
            options,
            clock: *clock,
            type_nodes: types.iter().map(|t| t.nodes).collect(),
            shape_counts: shapes.shapes.iter().map(|s| s.count()).collect(),
            demand,
            sign: if objective.maximise() { -1.0 } else { 1.0 },
            constant: types.iter().map(|t| t.nodes as f64 * t.empty_cost).sum(),
            watts_weight: types.first().map_or(0.0, |t| t.watts_weight),
            heuristic_value: 0.0,
            context: PricingContext {
                objective,
                shapes,
                tasks: snapshot.tasks,
                typical: snapshot.typical,
                types,
                typical_probability: snapshot.typical.pods.iter().map(|p| p.probability).sum(),
            },
        };
        problem.heuristic_value = problem.evaluate(&snapshot.heuristic);
        problem
    }
}
