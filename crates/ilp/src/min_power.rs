//! Minimum power: place exactly the tasks the heuristic placed, with the least total
//! cluster power (spec §6).
//!
//! `min P = Σ_n idle_cpu·sockets_n + Σ_{n,d} idle_gpu                      (constant)
//!        + Σ_n (full_cpu − idle_cpu)·active_n + Σ_{n,d} (full_gpu − idle_gpu)·working_{n,d}`
//! over the assignment model of [`crate::model`] with `Σ_n x[n,s] = count_s`. The constant
//! (idle power of every node, used or not) is part of the objective HiGHS sees (a column
//! fixed at 1), so incumbent, bound and every relative gap are relative to the **total**
//! cluster power.

use std::time::Instant;

use good_lp::Expression;

use crate::common::{solve, solver_candidate, start_from, Sense};
use crate::error::SolveError;
use crate::eval::{power_watts, state_of};
use crate::model::{Demand, PlacementModel};
use crate::snapshot::Snapshot;
use crate::solve::{interpret, Candidate, Objective, RawStatus, SolveOptions, SolveReport};

/// Solves min-power on the heuristic's placed task set, warm-started from its placement.
pub fn min_power(snapshot: &Snapshot, options: &SolveOptions) -> SolveReport {
    let clock = Instant::now();
    let fail = |message: String| {
        SolveReport::error(Objective::Power, message, clock.elapsed().as_secs_f64())
    };
    let shapes = match snapshot.checked_shapes(options, snapshot.placed_tasks()) {
        Ok(shapes) => shapes,
        Err(e) => return fail(e),
    };
    let mut model = PlacementModel::new(
        snapshot.cluster,
        &shapes,
        Demand::Exactly,
        options.node_symmetry,
    );
    let power = model.add_power();
    let one = model.constant_column();
    let objective = power.dynamic_watts.clone() + power.constant_watts * one;
    let start = match start_from(&model, &snapshot.heuristic, Some(&power), None, Some(one)) {
        Ok(start) => start,
        Err(e) => return fail(e),
    };
    let raw = solve(&mut model, Sense::Minimise, objective, &start, options);
    let evaluate = |placement: &[_]| {
        power_watts(
            snapshot.cluster,
            &state_of(snapshot.cluster, snapshot.tasks, placement),
        ) as f64
    };
    let solver = solver_candidate(&model, Sense::Minimise, &raw, snapshot, evaluate, evaluate);
    let fallback = Candidate {
        value: evaluate(&snapshot.heuristic),
        placement: snapshot.heuristic.clone(),
    };
    let mut report = interpret(Objective::Power, &raw, solver, Some(fallback));
    report.solve_seconds = clock.elapsed().as_secs_f64();
    report
}

/// What HiGHS proved of a least-power MIP, in its own terms (no placement decoded).
#[derive(Debug, Clone, PartialEq)]
pub struct PowerMip {
    /// The best placement's power, watts, if HiGHS found one.
    pub incumbent_watts: Option<f64>,
    /// HiGHS's proven bound on the least power, watts (its objective when it proved it
    /// optimal without reporting a bound).
    pub bound_watts: f64,
    /// HiGHS proved the optimum (within `mip_rel_gap`).
    pub optimal: bool,
}

/// The least power of placing exactly the tasks `snapshot`'s placement places, where a
/// node with no task may sleep: `sleep_watts` (one entry per node type, by type id) makes
/// a node that holds nothing draw that instead of its idle power. A binary `awake_n` per
/// node, every task on the node forces it (`x[n,s] ≤ max_s·awake_n`), and an empty node
/// costs `sleep_n + awake_n·(idle_n − sleep_n)` instead of `idle_n` — exactly column
/// generation's `wake_cost` ([`crate::Session::power_bound`]). Without the load-order
/// rows between identical nodes: on 4 nodes of one type they made HiGHS slower.
pub(crate) fn min_power_sleeping(
    snapshot: &Snapshot,
    sleep_watts: Option<&[f64]>,
    options: &SolveOptions,
) -> Result<PowerMip, SolveError> {
    let cluster = snapshot.cluster;
    let shapes = snapshot.checked_shapes(options, snapshot.placed_tasks())?;
    let mut model = PlacementModel::new(cluster, &shapes, Demand::Exactly, false);
    let terms = model.add_power();
    let one = model.constant_column();
    let mut objective: Expression = terms.dynamic_watts.clone() + terms.constant_watts * one;
    let mut awake = Vec::new();
    if let Some(sleep) = sleep_watts {
        for n in 0..cluster.len() {
            let node_type = cluster.node_type(n as gapbench_model::NodeId);
            let wake = idle_watts(cluster, n) - sleep[usize::from(cluster.nodes[n].type_id)];
            let on = model.cols.binary();
            for (shape, x) in shapes.shapes.iter().zip(&model.nodes[n].count) {
                if let Some(x) = *x {
                    let most = f64::from(shape.max_per_node(node_type));
                    model.rows.push((x - most * on).leq(0.0));
                }
            }
            objective += wake * on - wake * one;
            awake.push(on);
        }
    }
    let mut start = start_from(&model, &snapshot.heuristic, Some(&terms), None, Some(one))?;
    for (n, &on) in awake.iter().enumerate() {
        let holds = model.nodes[n]
            .count
            .iter()
            .flatten()
            .any(|&x| start[model.cols.col(x)] > 0.5);
        start[model.cols.col(on)] = f64::from(u8::from(holds));
    }
    let raw = solve(&mut model, Sense::Minimise, objective, &start, options);
    if let RawStatus::Error(message) = &raw.status {
        return Err(SolveError::Solver(format!("the window's MIP: {message}")));
    }
    let optimal = matches!(raw.status, RawStatus::Optimal);
    // An optimal status without a dual bound is its objective (gap 0).
    let bound_watts = raw
        .bound
        .or(raw.objective.filter(|_| optimal))
        .ok_or_else(|| SolveError::Solver("the window's MIP has no bound".into()))?;
    Ok(PowerMip {
        incumbent_watts: raw.objective,
        bound_watts,
        optimal,
    })
}

/// Node `n`'s power with nothing on it, awake.
fn idle_watts(cluster: &gapbench_model::Cluster, n: usize) -> f64 {
    let t = usize::from(cluster.nodes[n].type_id);
    let node_type = &cluster.node_types[t];
    let free = vec![1000u16; usize::from(node_type.gpu_count)];
    cluster.power_models[t]
        .node_power(node_type.cpu_milli, &free)
        .total_watts() as f64
}
