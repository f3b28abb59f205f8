//! The one independent placement checker. Every placement any policy or solver produces is
//! checked here from scratch, without trusting `ClusterState`'s bookkeeping.

use std::fmt;

use crate::cluster::{Cluster, NodeId};
use crate::state::{Placement, MAX_TASKS_PER_NODE};
use crate::task::Task;
use crate::MILLI_GPU_PER_GPU;

/// A rule a set of placements breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    UnknownNode {
        task: String,
        node: NodeId,
    },
    WrongDeviceCount {
        task: String,
        node: NodeId,
        expected: usize,
        got: usize,
    },
    NoSuchDevice {
        task: String,
        node: NodeId,
        device: usize,
    },
    GpuModelNotAllowed {
        task: String,
        node: NodeId,
    },
    PartialMultiGpu {
        task: String,
    },
    CpuOvercommitted {
        node: NodeId,
        requested_milli: u64,
        capacity_milli: u64,
    },
    MemoryOvercommitted {
        node: NodeId,
        requested_mib: u64,
        capacity_mib: u64,
    },
    TooManyTasks {
        node: NodeId,
        tasks: u64,
    },
    GpuOvercommitted {
        node: NodeId,
        device: usize,
        requested_milli: u64,
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::UnknownNode { task, node } => {
                write!(f, "task {task} placed on unknown node {node}")
            }
            Violation::WrongDeviceCount {
                task,
                node,
                expected,
                got,
            } => {
                write!(
                    f,
                    "task {task} on node {node} uses {got} devices, needs {expected}"
                )
            }
            Violation::NoSuchDevice { task, node, device } => {
                write!(f, "task {task} uses device {device} node {node} lacks")
            }
            Violation::GpuModelNotAllowed { task, node } => {
                write!(f, "task {task} may not run on node {node}'s GPU model")
            }
            Violation::PartialMultiGpu { task } => write!(
                f,
                "task {task} asks for several partial GPUs, which is unsupported"
            ),
            Violation::CpuOvercommitted {
                node,
                requested_milli,
                capacity_milli,
            } => {
                write!(
                    f,
                    "node {node}: {requested_milli} milli-CPU placed, capacity {capacity_milli}"
                )
            }
            Violation::MemoryOvercommitted {
                node,
                requested_mib,
                capacity_mib,
            } => {
                write!(
                    f,
                    "node {node}: {requested_mib} MiB placed, capacity {capacity_mib}"
                )
            }
            Violation::TooManyTasks { node, tasks } => write!(
                f,
                "node {node}: {tasks} tasks, at most {MAX_TASKS_PER_NODE}"
            ),
            Violation::GpuOvercommitted {
                node,
                device,
                requested_milli,
            } => {
                write!(f, "node {node} device {device}: {requested_milli} milli-GPU placed, capacity {MILLI_GPU_PER_GPU}")
            }
        }
    }
}

impl std::error::Error for Violation {}

/// Checks that `placements` (task, placement) fit together on an initially empty `cluster`:
/// CPU, memory and task-count capacity per node, per-device GPU capacity, the right number
/// of distinct devices, and each task's allowed GPU models. Returns every violation found.
pub fn check_placements<'a>(
    cluster: &Cluster,
    placements: impl IntoIterator<Item = (&'a Task, Placement)>,
) -> Vec<Violation> {
    let mut totals = NodeTotals::new(cluster.len());
    let mut violations = Vec::new();
    for (task, placement) in placements {
        if placement.node as usize >= cluster.len() {
            violations.push(Violation::UnknownNode {
                task: task.name.clone(),
                node: placement.node,
            });
            continue;
        }
        check_request(cluster, task, &placement, &mut violations);
        totals.add(cluster, task, &placement, &mut violations);
    }
    totals.check_capacities(cluster, &mut violations);
    violations
}

/// The violations of one placement on a known node taken alone: a partial multi-GPU
/// request, the wrong number of devices, a GPU model the task does not allow.
fn check_request(
    cluster: &Cluster,
    task: &Task,
    placement: &Placement,
    violations: &mut Vec<Violation>,
) {
    let node = placement.node;
    let expected = if task.gpu_milli == 0 {
        0
    } else {
        usize::from(task.gpu_count)
    };
    if task.gpu_count > 1 && task.gpu_milli < 1000 {
        violations.push(Violation::PartialMultiGpu {
            task: task.name.clone(),
        });
    }
    if placement.devices.len() != expected {
        violations.push(Violation::WrongDeviceCount {
            task: task.name.clone(),
            node,
            expected,
            got: placement.devices.len(),
        });
    }
    if expected > 0 {
        let allowed = cluster
            .node_type(node)
            .gpu_model
            .is_some_and(|m| task.gpu_models.allows(m));
        if !allowed {
            violations.push(Violation::GpuModelNotAllowed {
                task: task.name.clone(),
                node,
            });
        }
    }
}

/// What the placements ask of each node, summed, to compare with its capacity.
struct NodeTotals {
    cpu_milli: Vec<u64>,
    memory_mib: Vec<u64>,
    tasks: Vec<u64>,
    gpu_milli: Vec<[u64; crate::MAX_GPUS_PER_NODE]>,
}

impl NodeTotals {
    fn new(nodes: usize) -> NodeTotals {
        NodeTotals {
            cpu_milli: vec![0; nodes],
            memory_mib: vec![0; nodes],
            tasks: vec![0; nodes],
            gpu_milli: vec![[0; crate::MAX_GPUS_PER_NODE]; nodes],
        }
    }

    /// Adds a placement on a known node; a device the node does not have is a violation.
    fn add(
        &mut self,
        cluster: &Cluster,
        task: &Task,
        placement: &Placement,
        violations: &mut Vec<Violation>,
    ) {
        let (node, i) = (placement.node, placement.node as usize);
        self.cpu_milli[i] += u64::from(task.cpu_milli);
        self.memory_mib[i] += task.memory_mib;
        self.tasks[i] += 1;
        for device in placement.devices.iter() {
            if device >= usize::from(cluster.node_type(node).gpu_count) {
                violations.push(Violation::NoSuchDevice {
                    task: task.name.clone(),
                    node,
                    device,
                });
            } else {
                self.gpu_milli[i][device] += u64::from(task.gpu_milli);
            }
        }
    }

    /// Every node whose totals exceed its CPU, memory, task count or a device.
    fn check_capacities(&self, cluster: &Cluster, violations: &mut Vec<Violation>) {
        for (i, node) in cluster.nodes.iter().enumerate() {
            let node_type = &cluster.node_types[usize::from(node.type_id)];
            let id = i as NodeId;
            if self.cpu_milli[i] > u64::from(node_type.cpu_milli) {
                violations.push(Violation::CpuOvercommitted {
                    node: id,
                    requested_milli: self.cpu_milli[i],
                    capacity_milli: u64::from(node_type.cpu_milli),
                });
            }
            if self.memory_mib[i] > node_type.memory_mib {
                violations.push(Violation::MemoryOvercommitted {
                    node: id,
                    requested_mib: self.memory_mib[i],
                    capacity_mib: node_type.memory_mib,
                });
            }
            if self.tasks[i] > u64::from(MAX_TASKS_PER_NODE) {
                violations.push(Violation::TooManyTasks {
                    node: id,
                    tasks: self.tasks[i],
                });
            }
            for (device, &used) in self.gpu_milli[i].iter().enumerate() {
                if used > u64::from(MILLI_GPU_PER_GPU) {
                    violations.push(Violation::GpuOvercommitted {
                        node: id,
                        device,
                        requested_milli: used,
                    });
                }
            }
        }
    }
}
