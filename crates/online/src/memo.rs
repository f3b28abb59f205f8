//! Scoring each distinct node state once per task shape.
//!
//! Most nodes of a large cluster are in one of few states (idle nodes of a type are all
//! alike), and a node keeps its state until a task lands on it. For a memoizable policy the
//! raw score depends only on (node type, free CPU, sorted free GPU milli) and the task's
//! (CPU, GPU count, GPU milli), so it is computed once per such pair and looked up after.

use std::collections::HashMap;

use gapbench_model::{Cluster, ClusterState, NodeId, NodeTypeId, Task, MAX_GPUS_PER_NODE};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct StateKey {
    type_id: NodeTypeId,
    cpu_left_milli: u32,
    free_gpu_milli_sorted: [u16; MAX_GPUS_PER_NODE],
}

/// Interns node states: every node has the id of its current state.
#[derive(Debug, Clone, Default)]
pub struct StateIndex {
    ids: HashMap<StateKey, u32>,
    state_of_node: Vec<u32>,
}

impl StateIndex {
    pub fn new(cluster: &Cluster, state: &ClusterState) -> Self {
        let mut index = StateIndex {
            ids: HashMap::new(),
            state_of_node: vec![0; cluster.len()],
        };
        for node in 0..cluster.len() as NodeId {
            index.node_changed(cluster, state, node);
        }
        index
    }

    pub fn node_changed(&mut self, cluster: &Cluster, state: &ClusterState, node: NodeId) {
        let node_state = state.node(node);
        let mut free = node_state.free_gpu_milli_by_device;
        free[..usize::from(node_state.gpu_count)].sort_unstable();
        let key = StateKey {
            type_id: cluster.nodes[node as usize].type_id,
            cpu_left_milli: node_state.cpu_left_milli,
            free_gpu_milli_sorted: free,
        };
        let next = self.ids.len() as u32;
        self.state_of_node[node as usize] = *self.ids.entry(key).or_insert(next);
    }

    pub fn state_of(&self, node: NodeId) -> usize {
        self.state_of_node[node as usize] as usize
    }

    /// Distinct states seen so far.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// Interns task shapes: what a memoizable score can depend on.
#[derive(Debug, Clone, Default)]
pub struct ShapeIndex {
    ids: HashMap<(u32, u8, u16), u32>,
}

impl ShapeIndex {
    pub fn shape_of(&mut self, task: &Task) -> usize {
        let next = self.ids.len() as u32;
        *self
            .ids
            .entry((task.scoring_cpu_milli(), task.gpu_count, task.gpu_milli))
            .or_insert(next) as usize
    }
}

/// Raw scores by (state id, shape id).
#[derive(Debug, Clone, Default)]
pub struct ScoreMemo {
    by_state: Vec<Vec<i64>>,
}

const UNKNOWN: i64 = i64::MIN;

impl ScoreMemo {
    pub fn get_or_compute(
        &mut self,
        state: usize,
        shape: usize,
        compute: impl FnOnce() -> i64,
    ) -> i64 {
        if state >= self.by_state.len() {
            self.by_state.resize_with(state + 1, Vec::new);
        }
        let row = &mut self.by_state[state];
        if shape >= row.len() {
            row.resize(shape + 1, UNKNOWN);
        }
        if row[shape] == UNKNOWN {
            row[shape] = compute();
        }
        row[shape]
    }
}
