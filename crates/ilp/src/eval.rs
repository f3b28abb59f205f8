//! The three objectives evaluated on a concrete placement with the model crate's own power
//! model and fragmentation measure — the numbers every reported incumbent and heuristic
//! value come from, so solver and heuristic are measured by the same ruler.

use gapbench_model::{Cluster, ClusterState, Placement, Task, TypicalPods};

/// The cluster state after binding every placed task on an empty cluster.
pub fn state_of(
    cluster: &Cluster,
    tasks: &[Task],
    assignment: &[Option<Placement>],
) -> ClusterState {
    let mut state = ClusterState::empty(cluster);
    for (task, placement) in tasks.iter().zip(assignment) {
        if let Some(placement) = placement {
            state.bind(task, *placement);
        }
    }
    state
}

/// Total cluster power in watts (spec §6), idle nodes included: Σ_n P_cpu(n) + P_gpu(n).
pub fn power_watts(cluster: &Cluster, state: &ClusterState) -> i64 {
    (0..cluster.len())
        .map(|n| {
            let node = &state.nodes[n];
            cluster
                .power_model(n as u32)
                .node_power(node.cpu_left_milli, node.free_gpu_milli())
                .total_watts()
        })
        .sum()
}

/// Allocated GPU milli: Σ over placed tasks of gpu_count × gpu_milli.
pub fn alloc_gpu_milli(tasks: &[Task], assignment: &[Option<Placement>]) -> u64 {
    tasks
        .iter()
        .zip(assignment)
        .filter(|(_, p)| p.is_some())
        .map(|(t, _)| u64::from(t.total_gpu_milli()))
        .sum()
}

/// Cluster fragmentation Σ_n F(n) in milli-GPU (the FGD measure, spec §5.7), summed in
/// node order.
pub fn frag_milli(cluster: &Cluster, typical: &TypicalPods, state: &ClusterState) -> f64 {
    (0..cluster.len())
        .map(|n| {
            let node = &state.nodes[n];
            typical.node_fragment_milli(
                cluster.node_type(n as u32).gpu_model,
                node.cpu_left_milli,
                node.free_gpu_milli(),
            )
        })
        .sum()
}
