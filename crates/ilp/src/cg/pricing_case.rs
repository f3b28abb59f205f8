//! One node type's exact pricing, set up as column generation's first exact round meets
//! it: the master LP over the heuristic's own configurations, its duals as prices, the
//! node type with the most nodes. A benchmark case (`benches/benches/cg_solve.rs`): the
//! speed of pattern pricing is what separates the bound from the LP on the whole cluster.

use std::time::{Duration, Instant};

use super::bound::project;
use super::column::{heuristic_columns, ColumnPool, TypeCluster};
use super::master::Master;
use super::pricing::PricingContext;
use crate::error::SolveError;
use crate::model::Demand;
use crate::shapes::Shapes;
use crate::snapshot::Snapshot;
use crate::solve::{Objective, SolveOptions};

/// Everything one pricing call needs, built once.
pub struct PricingCase<'a> {
    snapshot: &'a Snapshot<'a>,
    objective: Objective,
    shapes: Shapes,
    types: Vec<TypeCluster>,
    prices: Vec<f64>,
    /// The priced node type (the one with the most nodes).
    type_index: usize,
}

/// What one pricing call proved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PricingOutcome {
    /// A lower bound on the type's least reduced cost (before its convexity dual).
    pub lower_bound: f64,
    /// The search proved its best column optimal.
    pub proven: bool,
}

impl<'a> PricingCase<'a> {
    /// The case for `objective` on `snapshot` (fragmentation or power: every placed task;
    /// allocation: every task).
    pub fn new(
        snapshot: &'a Snapshot<'a>,
        objective: Objective,
        options: &SolveOptions,
    ) -> Result<Self, SolveError> {
        let (indices, demand) = match objective {
            Objective::Power | Objective::Frag => (snapshot.placed_tasks(), Demand::Exactly),
            Objective::Alloc => ((0..snapshot.tasks.len()).collect(), Demand::AtMost),
        };
        let shapes = snapshot.checked_shapes(options, indices)?;
        let types = TypeCluster::of(snapshot.cluster, objective, snapshot.typical, 0.0)?;
        let mut pool = ColumnPool::default();
        heuristic_columns(snapshot, &types, &shapes, objective, &mut pool)?;
        let type_nodes: Vec<usize> = types.iter().map(|t| t.nodes).collect();
        let shape_counts: Vec<usize> = shapes.shapes.iter().map(|s| s.count()).collect();
        let mut master =
            Master::over_pool(&pool, &type_nodes, &shape_counts, demand, options.threads)?;
        let lp = master
            .solve(options.time_limit_s)?
            .ok_or("the master LP over the heuristic's configurations has no solution")?;
        let mut prices = lp.demand_duals;
        project(&mut prices, demand);
        let type_index = (0..types.len())
            .max_by_key(|&t| (types[t].nodes, std::cmp::Reverse(t)))
            .ok_or("no node type")?;
        Ok(PricingCase {
            snapshot,
            objective,
            shapes,
            types,
            prices,
            type_index,
        })
    }

    /// Prices the case's node type exactly (no deadline).
    pub fn price(&self) -> Result<PricingOutcome, SolveError> {
        let context = PricingContext {
            objective: self.objective,
            shapes: &self.shapes,
            tasks: self.snapshot.tasks,
            typical: self.snapshot.typical,
            types: &self.types,
            typical_probability: self
                .snapshot
                .typical
                .pods
                .iter()
                .map(|p| p.probability)
                .sum(),
        };
        let deadline = Instant::now() + Duration::from_secs(3600);
        let priced = context.price(self.type_index, &self.prices, None, deadline)?;
        Ok(PricingOutcome {
            lower_bound: priced.lower_bound,
            proven: priced.proven,
        })
    }

    /// The priced type's label and node count.
    pub fn node_type(&self) -> (String, usize) {
        let kind = &self.types[self.type_index];
        (kind.node_type().label(), kind.nodes)
    }
}
