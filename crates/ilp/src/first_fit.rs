//! A first-fit placement: the start of a solve given no warm start, and of a replay
//! window's bound (`gapbench_bounds::replay_bound`: column generation starts from a
//! feasible master, and the tasks it leaves out are only left out of the bound).

use gapbench_model::{Cluster, ClusterState, DeviceSet, NodeId, Placement, Task};

/// Largest first (GPU milli, then CPU), each on the lowest-index node it fits, its devices
/// the fullest that still hold it (best fit, so fewer devices start working). `None` for
/// a task that fits nowhere.
pub fn first_fit(cluster: &Cluster, tasks: &[Task]) -> Vec<Option<Placement>> {
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_by_key(|&i| {
        let t = &tasks[i];
        (
            std::cmp::Reverse(t.total_gpu_milli()),
            std::cmp::Reverse(t.gpu_count),
            std::cmp::Reverse(t.cpu_milli),
            i,
        )
    });
    let mut state = ClusterState::empty(cluster);
    let mut placement = vec![None; tasks.len()];
    for i in order {
        let task = &tasks[i];
        let found = (0..cluster.len() as NodeId).find_map(|node| {
            if !state.fits(cluster, node, task) {
                return None;
            }
            best_fit_devices(&state, node, task).map(|devices| Placement { node, devices })
        });
        if let Some(p) = found {
            state.bind(task, p);
            placement[i] = Some(p);
        }
    }
    placement
}

/// `task.gpu_count` distinct devices of `node` with room for `task.gpu_milli`, the fullest
/// first; empty for CPU-only tasks.
fn best_fit_devices(state: &ClusterState, node: NodeId, task: &Task) -> Option<DeviceSet> {
    if task.gpu_count == 0 {
        return Some(DeviceSet::EMPTY);
    }
    let free = state.node(node).free_gpu_milli();
    let mut devices: Vec<usize> = (0..free.len())
        .filter(|&d| free[d] >= task.gpu_milli)
        .collect();
    if devices.len() < usize::from(task.gpu_count) {
        return None;
    }
    devices.sort_by_key(|&d| (free[d], d));
    Some(
        devices[..usize::from(task.gpu_count)]
            .iter()
            .fold(DeviceSet::EMPTY, |set, &d| set.with(d)),
    )
}
