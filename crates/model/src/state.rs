//! The mutable state of a cluster: what is still free on every node, with bind and release.

use crate::cluster::{Cluster, NodeId, NodeType};
use crate::task::Task;
use crate::MAX_GPUS_PER_NODE;

/// Kubernetes' pod capacity per node in the reference (`pods = 1001`).
pub const MAX_TASKS_PER_NODE: u32 = 1001;

/// A set of device indices on one node, as a bit mask (bit d = device d).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct DeviceSet(pub u8);

impl DeviceSet {
    pub const EMPTY: DeviceSet = DeviceSet(0);

    pub fn single(device: usize) -> Self {
        DeviceSet(1 << device)
    }

    pub fn with(self, device: usize) -> Self {
        DeviceSet(self.0 | (1 << device))
    }

    pub fn contains(self, device: usize) -> bool {
        self.0 & (1 << device) != 0
    }

    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn iter(self) -> impl Iterator<Item = usize> {
        (0..MAX_GPUS_PER_NODE).filter(move |&d| self.contains(d))
    }
}

/// Where a task was placed: a node and the devices it uses there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Placement {
    pub node: NodeId,
    pub devices: DeviceSet,
}

/// What is free on one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NodeState {
    pub cpu_left_milli: u32,
    pub memory_left_mib: u64,
    pub task_count: u32,
    pub gpu_count: u8,
    /// Free milli-GPU per device, index = device id; only the first `gpu_count` are used.
    pub free_gpu_milli_by_device: [u16; MAX_GPUS_PER_NODE],
    /// GPU tasks hosted, by GpuClustering affinity: `[0]` sharing, `[k]` whole k-GPU tasks.
    pub tasks_by_affinity: [u16; MAX_GPUS_PER_NODE + 1],
}

impl NodeState {
    pub fn empty(node_type: &NodeType) -> Self {
        let mut free = [0; MAX_GPUS_PER_NODE];
        free[..usize::from(node_type.gpu_count)].fill(1000);
        NodeState {
            cpu_left_milli: node_type.cpu_milli,
            memory_left_mib: node_type.memory_mib,
            task_count: 0,
            gpu_count: node_type.gpu_count,
            free_gpu_milli_by_device: free,
            tasks_by_affinity: [0; MAX_GPUS_PER_NODE + 1],
        }
    }

    /// Free milli-GPU of each existing device.
    pub fn free_gpu_milli(&self) -> &[u16] {
        &self.free_gpu_milli_by_device[..usize::from(self.gpu_count)]
    }

    pub fn total_free_gpu_milli(&self) -> u32 {
        self.free_gpu_milli()
            .iter()
            .map(|&left| u32::from(left))
            .sum()
    }

    pub fn fully_free_gpus(&self) -> u32 {
        self.free_gpu_milli()
            .iter()
            .filter(|&&left| left == 1000)
            .count() as u32
    }

    /// The GPU-capacity part of the filter (reference-semantics §2 item 4.3): a greedy scan
    /// over devices in index order. Ignores the GPU-model check.
    pub fn has_gpu_room_for(&self, gpu_count: u8, gpu_milli_per_gpu: u16) -> bool {
        if gpu_count == 0 || gpu_milli_per_gpu == 0 {
            return true;
        }
        let mut needed = gpu_count;
        for &left in self.free_gpu_milli() {
            let mut left = left;
            while needed > 0 && left >= gpu_milli_per_gpu {
                left -= gpu_milli_per_gpu;
                needed -= 1;
            }
            if needed == 0 {
                return true;
            }
        }
        false
    }
}

/// The free resources of every node of a cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterState {
    pub nodes: Vec<NodeState>,
}

impl ClusterState {
    pub fn empty(cluster: &Cluster) -> Self {
        ClusterState {
            nodes: cluster
                .nodes
                .iter()
                .map(|n| NodeState::empty(&cluster.node_types[usize::from(n.type_id)]))
                .collect(),
        }
    }

    pub fn node(&self, node: NodeId) -> &NodeState {
        &self.nodes[node as usize]
    }

    /// Whether `task` may be placed on `node` (reference-semantics §2): CPU, memory, task
    /// count, GPU model and GPU capacity. CPU-only tasks skip the GPU checks.
    pub fn fits(&self, cluster: &Cluster, node: NodeId, task: &Task) -> bool {
        let state = &self.nodes[node as usize];
        if task.cpu_milli > state.cpu_left_milli
            || task.memory_mib > state.memory_left_mib
            || state.task_count + 1 > MAX_TASKS_PER_NODE
        {
            return false;
        }
        if task.gpu_milli == 0 {
            return true;
        }
        let Some(model) = cluster.node_type(node).gpu_model else {
            return false;
        };
        state.gpu_count >= 1
            && task.gpu_models.allows(model)
            && state.has_gpu_room_for(task.gpu_count, task.gpu_milli)
    }

    /// Takes `task`'s resources on `placement.node`, using `task.gpu_milli` of each device in
    /// `placement.devices`. The caller chose a feasible placement; `check_placements` is the
    /// independent check of that.
    pub fn bind(&mut self, task: &Task, placement: Placement) {
        let state = &mut self.nodes[placement.node as usize];
        state.cpu_left_milli -= task.cpu_milli;
        state.memory_left_mib -= task.memory_mib;
        state.task_count += 1;
        for device in placement.devices.iter() {
            state.free_gpu_milli_by_device[device] -= task.gpu_milli;
        }
        if let Some(affinity) = task.affinity() {
            state.tasks_by_affinity[affinity] += 1;
        }
    }

    /// Gives back what `bind` took (a task that finishes, or an undone tentative placement).
    pub fn release(&mut self, task: &Task, placement: Placement) {
        let state = &mut self.nodes[placement.node as usize];
        state.cpu_left_milli += task.cpu_milli;
        state.memory_left_mib += task.memory_mib;
        state.task_count -= 1;
        for device in placement.devices.iter() {
            state.free_gpu_milli_by_device[device] += task.gpu_milli;
        }
        if let Some(affinity) = task.affinity() {
            state.tasks_by_affinity[affinity] -= 1;
        }
    }
}
