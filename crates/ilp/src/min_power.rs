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

use crate::common::{solve, solver_candidate, start_from, Sense};
use crate::eval::{power_watts, state_of};
use crate::model::{Demand, PlacementModel};
use crate::snapshot::Snapshot;
use crate::solve::{interpret, Candidate, Objective, SolveOptions, SolveReport};

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
