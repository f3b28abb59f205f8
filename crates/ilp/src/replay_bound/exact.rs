//! The bound's own tightness: one window's problem solved exactly by the per-node MIP
//! ([`crate::min_power`]'s assignment model), on the same lowered power model, the same
//! tasks (those running throughout, relaxed, the ones first fit placed) and the same
//! dynamic floors as column generation's bound of that window. Column generation's
//! Lagrangian bound is at most the configuration LP, which is at most this MIP's optimum
//! (the same integer problem), which is at most the power any placement of the replay
//! draws throughout the window; the MIP is only practical on a few nodes.
//!
//! *Sleep-when-empty* is added to the model here: a binary `awake_n` per node, every task
//! on the node forces it (`x[n,s] ≤ max_s·awake_n`), and an empty node costs
//! `sleep_n + awake_n·(idle_n − sleep_n)` instead of `idle_n` — exactly column generation's
//! `wake_cost` (a node with any task wakes).

use std::time::Instant;

use good_lp::Expression;

use super::{power, ReplayBoundInput};
use crate::common::{solve, start_from, Sense};
use crate::model::{Demand, PlacementModel};
use crate::snapshot::Snapshot;
use crate::solve::{RawStatus, SolveOptions};

/// One window's per-node MIP.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowMip {
    pub from_s: f64,
    pub to_s: f64,
    /// HiGHS's proven bound of the window's least power, plus the tasks' dynamic floors
    /// (the optimum when `optimal`), watts.
    pub bound_watts: f64,
    /// The best placement's power (same terms), watts, if HiGHS found one.
    pub incumbent_watts: Option<f64>,
    /// HiGHS proved the optimum (within `mip_rel_gap`).
    pub optimal: bool,
    /// Tasks running throughout, and those first fit placed (the ones both bounds count).
    pub tasks: usize,
    pub packed: usize,
    pub seconds: f64,
}

/// The per-node MIP of the window `[from_s, to_s)` of `input`, the same problem
/// column generation bounds for that window in [`super::replay_energy_bound`].
pub fn window_mip(
    input: &ReplayBoundInput,
    from_s: f64,
    to_s: f64,
    options: &SolveOptions,
) -> Result<WindowMip, String> {
    let clock = Instant::now();
    let lowered = power::static_cluster(input.cluster, &input.power);
    let sleep = power::sleep_watts(input.cluster, &input.power);
    let problem = super::WindowProblem::of(input, &lowered, from_s, to_s);
    let mut window = WindowMip {
        from_s,
        to_s,
        bound_watts: 0.0,
        incumbent_watts: None,
        optimal: false,
        tasks: problem.tasks.len(),
        packed: problem.packed(),
        seconds: 0.0,
    };
    let empty_watts = super::empty_cluster_watts(&lowered, sleep.as_deref());
    if window.packed == 0 {
        window.bound_watts = empty_watts + problem.dynamic_watts;
        window.incumbent_watts = Some(window.bound_watts);
        window.optimal = true;
        window.seconds = clock.elapsed().as_secs_f64();
        return Ok(window);
    }
    let snapshot = Snapshot::new(
        &lowered,
        input.typical,
        &problem.tasks,
        problem.placement.clone(),
        0.0,
    )?;
    let shapes = snapshot.checked_shapes(options, snapshot.placed_tasks())?;
    // Without the load-order rows between identical nodes: on 4 nodes of one type they
    // made HiGHS slower (some windows at a 10 s limit instead of all proven in 0.1–2 s).
    let mut model = PlacementModel::new(&lowered, &shapes, Demand::Exactly, false);
    let terms = model.add_power();
    let one = model.constant_column();
    let mut objective: Expression = terms.dynamic_watts.clone() + terms.constant_watts * one;
    let mut awake = Vec::new();
    if let Some(sleep) = &sleep {
        for n in 0..lowered.len() {
            let node_type = lowered.node_type(n as gapbench_model::NodeId);
            let idle = idle_watts(&lowered, n);
            let wake = idle - sleep[usize::from(lowered.nodes[n].type_id)];
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
        return Err(format!("the window's MIP: {message}"));
    }
    window.optimal = matches!(raw.status, RawStatus::Optimal);
    window.incumbent_watts = raw.objective.map(|v| v + problem.dynamic_watts);
    // An optimal status without a dual bound is its objective (gap 0).
    let bound = raw
        .bound
        .or(raw.objective.filter(|_| window.optimal))
        .ok_or("the window's MIP has no bound")?;
    window.bound_watts = bound + problem.dynamic_watts;
    window.seconds = clock.elapsed().as_secs_f64();
    Ok(window)
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
