//! Single-task moves of a placement and what each changes in power and fragmentation.
//!
//! A move takes one task off its node (devices freed) and puts it on a node (the same one
//! on other devices, or another) with devices chosen among those that differ in free
//! milli-GPU (every device of equal free milli-GPU is equivalent for both costs). Only the
//! two nodes change, so a move's `ΔF` and `ΔP` are the differences of their own `F(n)`
//! (`TypicalPods::node_fragment_milli`) and `P(n)` (`PowerModel::node_power`): the same
//! rulers `crate::eval` sums over the cluster.

use std::collections::HashMap;

use gapbench_model::{
    Cluster, ClusterState, DeviceSet, NodeState, NodeTypeId, Placement, Task, TypicalPods,
};

/// `F(n)` (milli-GPU) and `P(n)` (W) of one node state.
#[derive(Debug, Clone, Copy)]
pub(super) struct NodeCost {
    pub frag_milli: f64,
    pub watts: i64,
}

/// One node's costs by state, memoised (nodes of one type in one state cost the same).
pub(super) struct NodeCosts<'a> {
    cluster: &'a Cluster,
    typical: &'a TypicalPods,
    memo: HashMap<(NodeTypeId, NodeState), NodeCost>,
}

impl<'a> NodeCosts<'a> {
    pub fn new(cluster: &'a Cluster, typical: &'a TypicalPods) -> Self {
        NodeCosts {
            cluster,
            typical,
            memo: HashMap::new(),
        }
    }

    /// The costs of `node` in `state`.
    pub fn of(&mut self, node: u32, state: &NodeState) -> NodeCost {
        let type_id = self.cluster.nodes[node as usize].type_id;
        let (cluster, typical) = (self.cluster, self.typical);
        *self.memo.entry((type_id, *state)).or_insert_with(|| {
            let model = cluster.node_type(node).gpu_model;
            NodeCost {
                frag_milli: typical.node_fragment_milli(
                    model,
                    state.cpu_left_milli,
                    state.free_gpu_milli(),
                ),
                watts: cluster
                    .power_model(node)
                    .node_power(state.cpu_left_milli, state.free_gpu_milli())
                    .total_watts(),
            }
        })
    }
}

/// The device sets `task` may use on a node in `state` (the feasibility filter passed),
/// one per distinct outcome: for a one-GPU task, the first device of each free milli-GPU
/// it fits in; for a whole-GPU task, the first `gpu_count` entirely free devices (partial
/// multi-GPU tasks are not placeable: `Shapes::group` rejects them).
pub(super) fn device_choices(state: &NodeState, task: &Task) -> Vec<DeviceSet> {
    if task.gpu_count == 0 || task.gpu_milli == 0 {
        return vec![DeviceSet::EMPTY];
    }
    let free = state.free_gpu_milli();
    if task.gpu_count == 1 {
        let mut seen: Vec<u16> = Vec::new();
        let mut choices = Vec::new();
        for (device, &left) in free.iter().enumerate() {
            if left >= task.gpu_milli && !seen.contains(&left) {
                seen.push(left);
                choices.push(DeviceSet::single(device));
            }
        }
        return choices;
    }
    let whole: Vec<usize> = (0..free.len())
        .filter(|&d| free[d] >= task.gpu_milli && free[d] == 1000)
        .take(usize::from(task.gpu_count))
        .collect();
    if whole.len() < usize::from(task.gpu_count) {
        return Vec::new();
    }
    vec![whole
        .into_iter()
        .fold(DeviceSet::EMPTY, |set, device| set.with(device))]
}

/// A change of both costs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Delta {
    pub frag_milli: f64,
    pub watts: i64,
}

/// Where one task can go from where it is, with what each choice changes: moves to other
/// nodes are `(task, its removal's delta)` × `(node, devices, the insertion's delta)`;
/// moves on its own node are evaluated whole.
pub(super) struct NodeMoves {
    /// One per task of a distinct (shape, devices) hosted: `(task, removal delta)`.
    pub removals: Vec<(usize, Delta)>,
    /// Per shape (index into the walk's shapes): the insertions of one of its tasks.
    pub insertions: Vec<Vec<(DeviceSet, Delta)>>,
    /// Moves of a hosted task to other devices of the same node: `(task, devices, delta)`.
    pub within: Vec<(usize, DeviceSet, Delta)>,
}

/// What a node's moves are computed from: the tasks, their placement and shapes.
pub(super) struct Placed<'p> {
    pub tasks: &'p [Task],
    pub placement: &'p [Option<Placement>],
    /// Each task's shape (index into the walk's shapes).
    pub shape_of: &'p [Option<usize>],
    /// One task per shape, to test insertions with.
    pub representatives: &'p [usize],
}

/// The moves of one node in `state`, which hosts the tasks `hosted`.
pub(super) fn node_moves(
    costs: &mut NodeCosts,
    node: u32,
    state: &ClusterState,
    placed: &Placed,
    hosted: &[usize],
) -> NodeMoves {
    let Placed {
        tasks,
        placement,
        shape_of,
        representatives,
    } = *placed;
    let cluster = costs.cluster;
    let here = state.node(node);
    let now = costs.of(node, here);
    let delta = |after: NodeCost| Delta {
        frag_milli: after.frag_milli - now.frag_milli,
        watts: after.watts - now.watts,
    };
    let insertions = representatives
        .iter()
        .map(|&t| {
            if !state.fits(cluster, node, &tasks[t]) {
                return Vec::new();
            }
            device_choices(here, &tasks[t])
                .into_iter()
                .map(|devices| {
                    let mut after = *here;
                    bind_on(&mut after, &tasks[t], devices);
                    (devices, delta(costs.of(node, &after)))
                })
                .collect()
        })
        .collect();
    let mut removals = Vec::new();
    let mut within = Vec::new();
    let mut seen: Vec<(Option<usize>, DeviceSet)> = Vec::new();
    for &t in hosted {
        let task = &tasks[t];
        let devices = placement[t].map_or(DeviceSet::EMPTY, |p| p.devices);
        let key = (shape_of[t], devices);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let mut without = *here;
        release_on(&mut without, task, devices);
        removals.push((t, delta(costs.of(node, &without))));
        for other in device_choices(&without, task) {
            if other == devices {
                continue;
            }
            let mut after = without;
            bind_on(&mut after, task, other);
            within.push((t, other, delta(costs.of(node, &after))));
        }
    }
    NodeMoves {
        removals,
        insertions,
        within,
    }
}

/// `ClusterState::bind` on one node's state.
fn bind_on(state: &mut NodeState, task: &Task, devices: DeviceSet) {
    let mut one = ClusterState {
        nodes: vec![*state],
    };
    one.bind(task, Placement { node: 0, devices });
    *state = one.nodes[0];
}

/// `ClusterState::release` on one node's state.
fn release_on(state: &mut NodeState, task: &Task, devices: DeviceSet) {
    let mut one = ClusterState {
        nodes: vec![*state],
    };
    one.release(task, Placement { node: 0, devices });
    *state = one.nodes[0];
}
