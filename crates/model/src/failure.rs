//! Why a task that fit nowhere failed: it would not fit even on the empty cluster (and which
//! resource no suitable node has enough of), or the cluster simply had no room left then.
//!
//! Users of a trace the cluster does not suit (an inference trace asking 120 GiB and a whole
//! GPU per instance, a GPU model the cluster lacks) need the first answer; users studying
//! fragmentation need the second. The feasibility rule is the filter of `ClusterState::fits`
//! applied to empty nodes, so the two never disagree.

use std::fmt;

use crate::cluster::{Cluster, NodeType};
use crate::task::Task;

/// The reason a placement attempt failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FailureReason {
    /// The task fits some node of the empty cluster, but no node had room at that moment.
    NoRoomNow,
    /// No node could take the task even if the whole cluster were empty.
    NeverFits(Shortfall),
}

/// What no node of the empty cluster offers, checked in this order: a GPU of an allowed
/// model, enough GPUs on one node, then CPU and memory on the nodes that pass the GPU test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Shortfall {
    /// The task needs a GPU model (or any GPU) that no node has.
    GpuModel,
    /// Nodes of an allowed model exist, but none has that many GPUs.
    GpuCount,
    /// Every GPU-suitable node has too little CPU.
    Cpu,
    /// Every GPU-suitable node has too little memory.
    Memory,
    /// Every GPU-suitable node has too little CPU and too little memory.
    CpuAndMemory,
    /// Some suitable node has enough CPU and another enough memory, but none has both.
    NoSingleNode,
}

impl FailureReason {
    /// Every reason, in the order summaries list them.
    pub const ALL: [FailureReason; 7] = [
        FailureReason::NoRoomNow,
        FailureReason::NeverFits(Shortfall::GpuModel),
        FailureReason::NeverFits(Shortfall::GpuCount),
        FailureReason::NeverFits(Shortfall::Cpu),
        FailureReason::NeverFits(Shortfall::Memory),
        FailureReason::NeverFits(Shortfall::CpuAndMemory),
        FailureReason::NeverFits(Shortfall::NoSingleNode),
    ];

    /// Why `task` failed on `cluster`, given that it fit no node at that moment.
    pub fn of(cluster: &Cluster, task: &Task) -> FailureReason {
        match shortfall_on_empty(&cluster.node_types, task) {
            None => FailureReason::NoRoomNow,
            Some(shortfall) => FailureReason::NeverFits(shortfall),
        }
    }

    /// The stable label written to CSV and JSON, e.g. `never_fits:memory`.
    pub fn label(self) -> &'static str {
        match self {
            FailureReason::NoRoomNow => "no_room",
            FailureReason::NeverFits(Shortfall::GpuModel) => "never_fits:gpu_model",
            FailureReason::NeverFits(Shortfall::GpuCount) => "never_fits:gpu_count",
            FailureReason::NeverFits(Shortfall::Cpu) => "never_fits:cpu",
            FailureReason::NeverFits(Shortfall::Memory) => "never_fits:memory",
            FailureReason::NeverFits(Shortfall::CpuAndMemory) => "never_fits:cpu+memory",
            FailureReason::NeverFits(Shortfall::NoSingleNode) => "never_fits:no_single_node",
        }
    }

    /// A phrase for terminals.
    pub fn describe(self) -> &'static str {
        match self {
            FailureReason::NoRoomNow => "no room left at that moment (fits the empty cluster)",
            FailureReason::NeverFits(Shortfall::GpuModel) => {
                "fits no node even when empty: no node has an allowed GPU model"
            }
            FailureReason::NeverFits(Shortfall::GpuCount) => {
                "fits no node even when empty: too many GPUs for any node of its model"
            }
            FailureReason::NeverFits(Shortfall::Cpu) => {
                "fits no node even when empty: more CPU than any suitable node has"
            }
            FailureReason::NeverFits(Shortfall::Memory) => {
                "fits no node even when empty: more memory than any suitable node has"
            }
            FailureReason::NeverFits(Shortfall::CpuAndMemory) => {
                "fits no node even when empty: more CPU and memory than any suitable node has"
            }
            FailureReason::NeverFits(Shortfall::NoSingleNode) => {
                "fits no node even when empty: no single node has both its CPU and its memory"
            }
        }
    }
}

impl fmt::Display for FailureReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Whether an empty node of type `node_type` passes the task's GPU test (the GPU part of
/// `ClusterState::fits` on an empty node): CPU-only tasks pass everywhere.
fn gpu_model_allowed(node_type: &NodeType, task: &Task) -> bool {
    task.gpu_milli == 0
        || node_type
            .gpu_model
            .is_some_and(|model| node_type.gpu_count >= 1 && task.gpu_models.allows(model))
}

fn gpu_count_suffices(node_type: &NodeType, task: &Task) -> bool {
    task.gpu_milli == 0 || node_type.gpu_count >= task.gpu_count
}

/// `None` when some empty node of these types takes the task; otherwise what is short.
fn shortfall_on_empty(node_types: &[NodeType], task: &Task) -> Option<Shortfall> {
    let cpu_fits = |t: &NodeType| task.cpu_milli <= t.cpu_milli;
    let memory_fits = |t: &NodeType| task.memory_mib <= t.memory_mib;
    let model_ok: Vec<&NodeType> = node_types
        .iter()
        .filter(|t| gpu_model_allowed(t, task))
        .collect();
    if model_ok.is_empty() {
        return Some(Shortfall::GpuModel);
    }
    let suitable: Vec<&NodeType> = model_ok
        .into_iter()
        .filter(|t| gpu_count_suffices(t, task))
        .collect();
    if suitable.is_empty() {
        return Some(Shortfall::GpuCount);
    }
    if suitable.iter().any(|t| cpu_fits(t) && memory_fits(t)) {
        return None;
    }
    let some_cpu = suitable.iter().any(|t| cpu_fits(t));
    let some_memory = suitable.iter().any(|t| memory_fits(t));
    Some(match (some_cpu, some_memory) {
        (false, false) => Shortfall::CpuAndMemory,
        (false, true) => Shortfall::Cpu,
        (true, false) => Shortfall::Memory,
        (true, true) => Shortfall::NoSingleNode,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::{GpuModel, GpuModelSet};
    use crate::state::ClusterState;
    use crate::CpuPowerProfile;

    fn node(model: Option<GpuModel>, gpus: u8, cpu_milli: u32, memory_mib: u64) -> NodeType {
        NodeType {
            gpu_model: model,
            gpu_count: gpus,
            cpu_milli,
            memory_mib,
        }
    }

    fn cluster(types: &[NodeType]) -> Cluster {
        Cluster::new(
            types.iter().enumerate().map(|(i, t)| (format!("n{i}"), *t)),
            CpuPowerProfile::Reference,
        )
        .unwrap()
    }

    const GIB: u64 = 1024;

    #[test]
    fn each_shortfall_is_named() {
        let v100 = Some(GpuModel::parse("V100M16").unwrap());
        let t4 = Some(GpuModel::parse("T4").unwrap());
        let c = cluster(&[
            node(v100, 8, 96_000, 256 * GIB),
            node(t4, 2, 32_000, 512 * GIB),
        ]);
        let reason = |task: &Task| FailureReason::of(&c, task);

        assert_eq!(
            reason(&Task::new("fits", 8_000, 64 * GIB, 1, 500)),
            FailureReason::NoRoomNow
        );
        let mut a100_only = Task::new("a100", 8_000, 64 * GIB, 1, 1000);
        a100_only.gpu_models = GpuModelSet::parse("A100").unwrap();
        assert_eq!(
            reason(&a100_only),
            FailureReason::NeverFits(Shortfall::GpuModel)
        );
        let mut four_t4 = Task::new("4xT4", 8_000, 64 * GIB, 4, 1000);
        four_t4.gpu_models = GpuModelSet::parse("T4").unwrap();
        assert_eq!(
            reason(&four_t4),
            FailureReason::NeverFits(Shortfall::GpuCount)
        );
        assert_eq!(
            reason(&Task::new("cpu", 128_000, 64 * GIB, 1, 1000)),
            FailureReason::NeverFits(Shortfall::Cpu)
        );
        // 4 GPUs rule out the T4 node, whose 512 GiB would have held the memory.
        assert_eq!(
            reason(&Task::new("memory", 8_000, 300 * GIB, 4, 1000)),
            FailureReason::NeverFits(Shortfall::Memory)
        );
        assert_eq!(
            reason(&Task::new("both", 128_000, 600 * GIB, 1, 1000)),
            FailureReason::NeverFits(Shortfall::CpuAndMemory)
        );
        assert_eq!(
            reason(&Task::new("split", 64_000, 300 * GIB, 1, 1000)),
            FailureReason::NeverFits(Shortfall::NoSingleNode)
        );
    }

    #[test]
    fn cpu_only_cluster_has_no_gpu_model_for_gpu_tasks() {
        let c = cluster(&[node(None, 0, 96_000, 256 * GIB)]);
        assert_eq!(
            FailureReason::of(&c, &Task::new("g", 1_000, GIB, 1, 100)),
            FailureReason::NeverFits(Shortfall::GpuModel)
        );
        assert_eq!(
            FailureReason::of(&c, &Task::new("c", 1_000, GIB, 0, 0)),
            FailureReason::NoRoomNow
        );
    }

    /// The classification agrees with the feasibility filter on the empty cluster.
    #[test]
    fn agrees_with_fits_on_the_empty_cluster() {
        let v100 = Some(GpuModel::parse("V100M32").unwrap());
        let c = cluster(&[node(v100, 4, 32_000, 128 * GIB), node(None, 0, 64_000, GIB)]);
        let empty = ClusterState::empty(&c);
        for cpu in [1_000, 40_000, 70_000] {
            for memory in [GIB / 2, 100 * GIB, 200 * GIB] {
                for (gpus, milli) in [(0, 0), (1, 300), (1, 1000), (4, 1000), (8, 1000)] {
                    let task = Task::new("t", cpu, memory, gpus, milli);
                    let fits_somewhere = (0..c.len() as u32).any(|n| empty.fits(&c, n, &task));
                    assert_eq!(
                        FailureReason::of(&c, &task) == FailureReason::NoRoomNow,
                        fits_somewhere,
                        "{task:?}"
                    );
                }
            }
        }
    }
}
