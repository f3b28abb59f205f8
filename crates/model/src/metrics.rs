//! Cluster-wide metrics (reference-semantics §7.1), cached per node and updated only when a
//! node changes, so sampling after every event costs O(1) instead of O(nodes).
//!
//! Fragment amounts are kept per node in fixed point (1e-6 milli-GPU), so cluster sums are
//! exact integers: incremental updates equal a from-scratch recomputation bit for bit, and
//! the result does not depend on summation order (the reference's is random).

use crate::cluster::{Cluster, NodeId};
use crate::frag::{FragAccumulators, TypicalPods, Q1, Q2, Q3, Q4};
use crate::power::NodePower;
use crate::state::{ClusterState, NodeState};

/// Fixed-point scale of fragment amounts: units of 1e-6 milli-GPU.
const FRAG_SCALE: f64 = 1e6;

/// A snapshot of the whole cluster's metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClusterMetrics {
    /// Allocated milli-GPU: Σ over nodes of `1000·gpus − Σ free`.
    pub used_gpu_milli: u64,
    /// Allocated milli-CPU on used nodes.
    pub used_cpu_milli: u64,
    /// Nodes with any allocation (a device not fully free, or CPU taken).
    pub used_nodes: u32,
    /// All devices of used nodes, even ones only their CPU is used on (as the reference).
    pub used_gpus: u32,
    pub power: NodePower,
    /// Class totals in fixed point (see [`FRAG_SCALE`]).
    frag_fixed: [i64; 7],
}

impl ClusterMetrics {
    /// FGD fragment amount: free milli-GPU no typical task could use.
    pub fn frag_gpu_milli(&self) -> f64 {
        self.fixed_sum(&[0, 1, 3, 4, 5, 6])
    }

    /// Σ of all classes: the free milli-GPU the measure saw.
    pub fn idle_gpu_milli(&self) -> f64 {
        self.fixed_sum(&[0, 1, 2, 3, 4, 5, 6])
    }

    pub fn q124_gpu_milli(&self) -> f64 {
        self.fixed_sum(&[Q1, Q2, Q4])
    }

    pub fn q3_gpu_milli(&self) -> f64 {
        self.fixed_sum(&[Q3])
    }

    /// `100 · frag / idle`, 0 for a cluster with no free GPU.
    pub fn frag_ratio_pct(&self) -> f64 {
        let idle = self.idle_gpu_milli();
        if idle > 0.0 {
            100.0 * self.frag_gpu_milli() / idle
        } else {
            0.0
        }
    }

    fn fixed_sum(&self, classes: &[usize]) -> f64 {
        classes.iter().map(|&k| self.frag_fixed[k]).sum::<i64>() as f64 / FRAG_SCALE
    }
}

/// Per-node cached metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct NodeMetrics {
    used: bool,
    used_gpu_milli: u64,
    used_cpu_milli: u64,
    gpus: u32,
    power: NodePower,
    frag_fixed: [i64; 7],
}

/// Keeps [`ClusterMetrics`] current as nodes change.
#[derive(Debug, Clone)]
pub struct MetricsTracker {
    per_node: Vec<NodeMetrics>,
    totals: ClusterMetrics,
}

impl MetricsTracker {
    /// Computes everything from scratch.
    pub fn new(cluster: &Cluster, state: &ClusterState, typical: &TypicalPods) -> Self {
        let mut tracker = MetricsTracker {
            per_node: vec![NodeMetrics::default(); cluster.len()],
            totals: ClusterMetrics::default(),
        };
        for node in 0..cluster.len() as NodeId {
            tracker.node_changed(cluster, state, typical, node);
        }
        tracker
    }

    pub fn totals(&self) -> ClusterMetrics {
        self.totals
    }

    /// Power of one node as last seen.
    pub fn node_power(&self, node: NodeId) -> NodePower {
        self.per_node[node as usize].power
    }

    /// Recomputes one node's metrics after it changed, and adjusts the totals.
    pub fn node_changed(
        &mut self,
        cluster: &Cluster,
        state: &ClusterState,
        typical: &TypicalPods,
        node: NodeId,
    ) {
        let new = node_metrics(cluster, state.node(node), typical, node);
        let old = std::mem::replace(&mut self.per_node[node as usize], new);
        let totals = &mut self.totals;
        totals.used_gpu_milli = totals.used_gpu_milli + new.used_gpu_milli - old.used_gpu_milli;
        totals.used_cpu_milli = totals.used_cpu_milli + new.used_cpu_milli - old.used_cpu_milli;
        totals.used_nodes = totals.used_nodes + u32::from(new.used) - u32::from(old.used);
        totals.used_gpus = totals.used_gpus + new.gpus - old.gpus;
        totals.power -= old.power;
        totals.power += new.power;
        for k in 0..7 {
            totals.frag_fixed[k] += new.frag_fixed[k] - old.frag_fixed[k];
        }
    }
}

fn node_metrics(
    cluster: &Cluster,
    state: &NodeState,
    typical: &TypicalPods,
    node: NodeId,
) -> NodeMetrics {
    let node_type = cluster.node_type(node);
    let free = state.free_gpu_milli();
    let used_gpu_milli = u64::from(node_type.gpu_milli()) - u64::from(state.total_free_gpu_milli());
    let used_cpu_milli = u64::from(node_type.cpu_milli - state.cpu_left_milli);
    let used = state.fully_free_gpus() < u32::from(state.gpu_count) || used_cpu_milli > 0;
    let FragAccumulators(acc) =
        typical.node_accumulators(node_type.gpu_model, state.cpu_left_milli, free);
    NodeMetrics {
        used,
        used_gpu_milli,
        used_cpu_milli: if used { used_cpu_milli } else { 0 },
        gpus: if used {
            u32::from(node_type.gpu_count)
        } else {
            0
        },
        power: cluster
            .power_model(node)
            .node_power(state.cpu_left_milli, free),
        frag_fixed: acc.map(|milli| (milli * FRAG_SCALE).round() as i64),
    }
}
