//! Shared by the ilp tests: tiny clusters, heuristic placements from the real arrival-sweep
//! engine, and a brute-force enumeration of every placement.

#![allow(dead_code)]

use gapbench_ilp::eval::{alloc_gpu_milli, frag_milli, power_watts};
use gapbench_ilp::{
    CgStats, FrontPoint, Method, Objective, Session, Snapshot, SolveError, SolveOptions,
    SolveReport, SweepEvent,
};
use gapbench_model::{
    prepare, Cluster, ClusterState, CpuPowerProfile, DeviceSet, GpuModel, GpuModelSet, NodeOrder,
    NodeType, Placement, PreparedWorkload, Task, TaskOrder, TypicalPods,
};
use gapbench_online::{run_arrival_sweep, PolicySpec};
use proptest::prelude::*;

pub fn node_type(model: GpuModel, gpus: u8, vcpus: u32, memory_gib: u64) -> NodeType {
    NodeType {
        gpu_model: (gpus > 0).then_some(model),
        gpu_count: gpus,
        cpu_milli: vcpus * 1000,
        memory_mib: memory_gib * 1024,
    }
}

pub fn cluster(types: &[NodeType]) -> Cluster {
    Cluster::new(
        types.iter().enumerate().map(|(i, t)| (format!("n{i}"), *t)),
        CpuPowerProfile::Reference,
    )
    .expect("valid test cluster")
}

/// An arrival sweep in the listed order (no shuffle, no tuning, first node wins ties), as
/// the events a snapshot is cut from.
pub fn sweep(
    cluster: &Cluster,
    tasks: &[Task],
    policy: &str,
) -> (PreparedWorkload, Vec<SweepEvent>) {
    let prepared = prepare(
        tasks,
        cluster,
        TaskOrder::AsListed,
        None,
        NodeOrder::AsListed,
        7,
    );
    let spec: PolicySpec = policy.parse().expect("valid policy");
    let events = events_of(&run_arrival_sweep(cluster, &prepared, &spec));
    (prepared, events)
}

/// A sweep's records as the events a snapshot is cut from.
pub fn events_of(result: &gapbench_online::SweepResult) -> Vec<SweepEvent> {
    result.events()
}

/// Every way to put `task` on `cluster` ignoring other tasks: node × device subset.
fn placements_of(cluster: &Cluster, task: &Task) -> Vec<Placement> {
    let mut all = Vec::new();
    for node in 0..cluster.len() as u32 {
        let node_type = cluster.node_type(node);
        let devices = usize::from(node_type.gpu_count);
        if task.gpu_count == 0 {
            all.push(Placement {
                node,
                devices: DeviceSet::EMPTY,
            });
            continue;
        }
        if !node_type
            .gpu_model
            .is_some_and(|m| task.gpu_models.allows(m))
        {
            continue;
        }
        for mask in 0u16..(1 << devices) {
            if mask.count_ones() == u32::from(task.gpu_count) {
                all.push(Placement {
                    node,
                    devices: DeviceSet(mask as u8),
                });
            }
        }
    }
    all
}

fn fits(cluster: &Cluster, state: &ClusterState, task: &Task, p: Placement) -> bool {
    let node = &state.nodes[p.node as usize];
    let _ = cluster;
    task.cpu_milli <= node.cpu_left_milli
        && task.memory_mib <= node.memory_left_mib
        && p.devices
            .iter()
            .all(|d| node.free_gpu_milli_by_device[d] >= task.gpu_milli)
}

/// The optima found by trying every placement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BruteForce {
    /// Least total power placing every task of the set (None if impossible).
    pub min_power_watts: Option<i64>,
    /// Least Σ F(n) placing every task of the set.
    pub min_frag_milli: Option<f64>,
    /// Most allocated GPU milli placing any subset.
    pub max_alloc_milli: u64,
    /// Least power among placements reaching `max_alloc_milli`.
    pub min_power_at_max_alloc_watts: i64,
}

/// Enumerates every assignment of `tasks` (each placed on any node and device subset, or —
/// for allocation — left out) that the checker would accept.
pub fn brute_force(cluster: &Cluster, typical: &TypicalPods, tasks: &[Task]) -> BruteForce {
    let options: Vec<Vec<Placement>> = tasks.iter().map(|t| placements_of(cluster, t)).collect();
    let mut best = BruteForce {
        min_power_watts: None,
        min_frag_milli: None,
        max_alloc_milli: 0,
        min_power_at_max_alloc_watts: i64::MAX,
    };
    let mut assignment: Vec<Option<Placement>> = vec![None; tasks.len()];
    let mut state = ClusterState::empty(cluster);
    #[allow(clippy::too_many_arguments)]
    fn visit(
        i: usize,
        cluster: &Cluster,
        typical: &TypicalPods,
        tasks: &[Task],
        options: &[Vec<Placement>],
        state: &mut ClusterState,
        assignment: &mut Vec<Option<Placement>>,
        best: &mut BruteForce,
    ) {
        if i == tasks.len() {
            let power = power_watts(cluster, state);
            let alloc = alloc_gpu_milli(tasks, assignment);
            if assignment.iter().all(Option::is_some) {
                let frag = frag_milli(cluster, typical, state);
                best.min_power_watts = Some(best.min_power_watts.map_or(power, |p| p.min(power)));
                best.min_frag_milli = Some(best.min_frag_milli.map_or(frag, |f| f.min(frag)));
            }
            if alloc > best.max_alloc_milli {
                best.max_alloc_milli = alloc;
                best.min_power_at_max_alloc_watts = power;
            } else if alloc == best.max_alloc_milli {
                best.min_power_at_max_alloc_watts = best.min_power_at_max_alloc_watts.min(power);
            }
            return;
        }
        visit(
            i + 1,
            cluster,
            typical,
            tasks,
            options,
            state,
            assignment,
            best,
        );
        for &p in &options[i] {
            if fits(cluster, state, &tasks[i], p) {
                state.bind(&tasks[i], p);
                assignment[i] = Some(p);
                visit(
                    i + 1,
                    cluster,
                    typical,
                    tasks,
                    options,
                    state,
                    assignment,
                    best,
                );
                assignment[i] = None;
                state.release(&tasks[i], p);
            }
        }
    }
    visit(
        0,
        cluster,
        typical,
        tasks,
        &options,
        &mut state,
        &mut assignment,
        &mut best,
    );
    best
}

/// A small random task as `(cpu_milli, memory_mib, gpu_count, gpu_milli, constrained)`:
/// CPU-only, sharing, whole and two-GPU tasks; see [`tasks_of`].
pub fn small_task() -> impl Strategy<Value = (u32, u64, u8, u16, bool)> {
    let gpus = prop_oneof![
        2 => Just((0u8, 0u16)),
        4 => (1u16..1000).prop_map(|m| (1u8, m)),
        2 => Just((1u8, 1000u16)),
        1 => Just((2u8, 1000u16)),
    ];
    (1u32..=40, 0u64..=24, gpus, any::<bool>()).prop_map(
        |(vcpus, gib, (count, milli), constrained)| {
            (vcpus * 1000, gib * 1024, count, milli, constrained)
        },
    )
}

/// Tasks `t0, t1, …` from [`small_task`] draws; a constrained GPU task may run only on
/// `models`.
pub fn tasks_of(raw: Vec<(u32, u64, u8, u16, bool)>, models: &[GpuModel]) -> Vec<Task> {
    raw.into_iter()
        .enumerate()
        .map(|(i, (cpu, mem, count, milli, constrained))| {
            let mut task = Task::new(format!("t{i}"), cpu, mem, count, milli);
            if constrained && !task.is_cpu_only() {
                task.gpu_models = GpuModelSet::of(models);
            }
            task
        })
        .collect()
}

/// `objective` by `method` in `session` on the problem `snapshot` poses (its placement the
/// warm start).
pub fn try_solve_in(
    session: &mut Session,
    snapshot: &Snapshot,
    objective: Objective,
    method: Method,
    options: &SolveOptions,
) -> Result<SolveReport, SolveError> {
    let (problem, start) = snapshot.problem(options);
    session.solve(&problem, objective, method, &start)
}

/// [`try_solve_in`], which must run.
pub fn solve_in(
    session: &mut Session,
    snapshot: &Snapshot,
    objective: Objective,
    method: Method,
    options: &SolveOptions,
) -> SolveReport {
    try_solve_in(session, snapshot, objective, method, options)
        .unwrap_or_else(|e| panic!("{} by {method:?}: {e}", objective.name()))
}

/// [`solve_in`] in a session of its own.
pub fn solve_at(
    snapshot: &Snapshot,
    objective: Objective,
    method: Method,
    options: &SolveOptions,
) -> SolveReport {
    solve_in(&mut Session::new(), snapshot, objective, method, options)
}

/// Column generation in a session of its own, with the figures of the run.
pub fn cg_with_stats(
    snapshot: &Snapshot,
    objective: Objective,
    options: &SolveOptions,
) -> (SolveReport, CgStats) {
    let mut session = Session::new();
    let report = solve_in(
        &mut session,
        snapshot,
        objective,
        Method::ColumnGeneration,
        options,
    );
    (report, session.last_stats().clone())
}

/// The per-node ε-constraint front of `points` points: least power, then least
/// fragmentation from its placement, then the capped solves between them.
pub fn per_node_front(
    snapshot: &Snapshot,
    points: usize,
    options: &SolveOptions,
) -> Result<Vec<FrontPoint>, SolveError> {
    let (problem, start) = snapshot.problem(options);
    let mut session = Session::new();
    let least_power = session.solve(&problem, Objective::Power, Method::PerNode, &start)?;
    let from_power = start
        .clone()
        .other_starts(vec![least_power.placement.clone()]);
    let least_frag = session.solve(&problem, Objective::Frag, Method::PerNode, &from_power)?;
    let ends = (&least_power, &least_frag);
    Ok(session
        .front(&problem, ends, points, Method::PerNode, &start)?
        .points)
}
