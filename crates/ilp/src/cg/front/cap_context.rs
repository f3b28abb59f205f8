//! What the parts of one capped solve (the `capped` module) share: its fixed inputs, the
//! checked and measured placements it finds, the master's prices with the power cap's
//! weight, and the greedy pricing at them.

use std::time::Instant;

use gapbench_model::Placement;

use super::super::column::{Added, Column, ColumnPool, TypeCluster};
use super::super::generate::SEEDS_PER_TYPE;
use super::super::integer::expand;
use super::super::master::Master;
use super::super::pricing::PricingContext;
use crate::eval::{frag_milli, power_watts, state_of};
use crate::shapes::Shapes;
use crate::snapshot::{check_assignment, Snapshot};
use crate::solve::Objective;

/// One proven line `F + watts_weight·P ≥ bound` over every placement of the snapshot.
#[derive(Debug, Clone, Copy)]
pub(super) struct Line {
    pub(super) watts_weight: f64,
    pub(super) bound: f64,
}

/// A checked placement with its measured power (W) and fragmentation (milli-GPU).
#[derive(Debug, Clone)]
pub(super) struct Measured {
    pub placement: Vec<Option<Placement>>,
    pub power_watts: f64,
    pub frag_milli: f64,
}

impl Measured {
    pub fn of(snapshot: &Snapshot, placement: Vec<Option<Placement>>) -> Measured {
        let state = state_of(snapshot.cluster, snapshot.tasks, &placement);
        Measured {
            power_watts: power_watts(snapshot.cluster, &state) as f64,
            frag_milli: frag_milli(snapshot.cluster, snapshot.typical, &state),
            placement,
        }
    }
}

/// The fixed inputs of one capped solve.
pub(super) struct Capped<'a> {
    pub snapshot: &'a Snapshot<'a>,
    pub shapes: Shapes,
    pub type_nodes: Vec<usize>,
    pub shape_counts: Vec<usize>,
    pub typical_probability: f64,
}

impl<'a> Capped<'a> {
    /// The inputs of a capped solve of the `shapes` placed in `snapshot`.
    pub fn new(snapshot: &'a Snapshot<'a>, shapes: Shapes, frag_types: &[TypeCluster]) -> Self {
        Capped {
            snapshot,
            type_nodes: frag_types.iter().map(|t| t.nodes).collect(),
            shape_counts: shapes.shapes.iter().map(|s| s.count()).collect(),
            shapes,
            typical_probability: snapshot.typical.pods.iter().map(|p| p.probability).sum(),
        }
    }

    /// The fragmentation pricing context over `types` (fragmentation alone, or weighted).
    pub fn context<'t>(&'t self, types: &'t [TypeCluster]) -> PricingContext<'t> {
        PricingContext {
            objective: Objective::Frag,
            shapes: &self.shapes,
            tasks: self.snapshot.tasks,
            typical: self.snapshot.typical,
            types,
            typical_probability: self.typical_probability,
        }
    }

    /// The checked placement of `uses` (nodes per pool column), measured.
    pub fn measured(
        &self,
        types: &[TypeCluster],
        pool: &ColumnPool,
        uses: &[(usize, u32)],
    ) -> Result<Measured, String> {
        let snapshot = self.snapshot;
        let placement = expand(
            snapshot.cluster,
            types,
            pool,
            &self.shapes,
            uses,
            snapshot.tasks.len(),
        )?;
        check_assignment(snapshot.cluster, snapshot.tasks, &placement)
            .map_err(|e| format!("a capped placement fails the checker: {e}"))?;
        Ok(Measured::of(snapshot, placement))
    }

    /// The node types priced at `F + watts_weight·P`.
    pub fn weighted(&self, watts_weight: f64) -> Result<Vec<TypeCluster>, String> {
        let snapshot = self.snapshot;
        TypeCluster::of(
            snapshot.cluster,
            Objective::Frag,
            snapshot.typical,
            watts_weight,
        )
    }
}

/// A placement as nodes per pool column.
pub(super) type NodesPerColumn = Vec<(usize, u32)>;

/// Master prices: a column's reduced cost is `F_c + weight·P_c − Σ_s y_s·a_s − μ_τ`.
pub(super) struct Priced<'a> {
    pub duals: &'a [f64],
    pub convexity: &'a [f64],
    pub weight: f64,
    pub tolerance: f64,
}

impl Priced<'_> {
    pub fn improves(&self, column: &Column) -> bool {
        column.cost + self.weight * column.watts
            - column.priced(self.duals)
            - self.convexity[column.type_index]
            < -self.tolerance
    }
}

/// The greedy pricing's columns (of `weighted`, the types at `F + weight·P`) that improve
/// the master at `priced`, rebuilt as fragmentation columns with their watts; each holds at
/// most `tasks_left[s]` tasks of shape `s`. Types are priced until `deadline`.
pub(super) fn greedy_columns(
    frag: &PricingContext,
    weighted: &PricingContext,
    pool: &ColumnPool,
    priced: &Priced,
    tasks_left: &[usize],
    deadline: Instant,
) -> Vec<Column> {
    let mut improving = Vec::new();
    for t in 0..frag.types.len() {
        if Instant::now() >= deadline {
            break;
        }
        let seeds = pool.best_of_type(t, priced.duals, SEEDS_PER_TYPE);
        for (column, _) in weighted.heuristic(t, priced.duals, &seeds, tasks_left) {
            // Built like any column (the checker judged it already under the weighted types).
            if let Ok(column) = frag.column(t, column.slots) {
                if priced.improves(&column) {
                    improving.push(column);
                }
            }
        }
    }
    improving
}

/// Adds the columns no pool column dominates in both costs to the pool and the master;
/// returns how many.
pub(super) fn add_capped_columns(
    pool: &mut ColumnPool,
    master: &mut Master,
    columns: Vec<Column>,
) -> Result<usize, String> {
    let mut added = 0;
    for column in columns {
        if let Added::New(i) | Added::Cheaper(i) = pool.add_unless_dominated(column) {
            master.add(&pool.columns[i], i)?;
            added += 1;
        }
    }
    Ok(added)
}
