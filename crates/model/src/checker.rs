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
    let n = cluster.len();
    let mut cpu = vec![0u64; n];
    let mut memory = vec![0u64; n];
    let mut tasks = vec![0u64; n];
    let mut gpu = vec![[0u64; crate::MAX_GPUS_PER_NODE]; n];
    let mut violations = Vec::new();
    for (task, placement) in placements {
        let node = placement.node;
        if node as usize >= n {
            violations.push(Violation::UnknownNode {
                task: task.name.clone(),
                node,
            });
            continue;
        }
        let node_type = cluster.node_type(node);
        let i = node as usize;
        cpu[i] += u64::from(task.cpu_milli);
        memory[i] += task.memory_mib;
        tasks[i] += 1;
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
            let allowed = node_type
                .gpu_model
                .is_some_and(|m| task.gpu_models.allows(m));
            if !allowed {
                violations.push(Violation::GpuModelNotAllowed {
                    task: task.name.clone(),
                    node,
                });
            }
        }
        for device in placement.devices.iter() {
            if device >= usize::from(node_type.gpu_count) {
                violations.push(Violation::NoSuchDevice {
                    task: task.name.clone(),
                    node,
                    device,
                });
            } else {
                gpu[i][device] += u64::from(task.gpu_milli);
            }
        }
    }
    for (i, node) in cluster.nodes.iter().enumerate() {
        let node_type = &cluster.node_types[usize::from(node.type_id)];
        let id = i as NodeId;
        if cpu[i] > u64::from(node_type.cpu_milli) {
            violations.push(Violation::CpuOvercommitted {
                node: id,
                requested_milli: cpu[i],
                capacity_milli: u64::from(node_type.cpu_milli),
            });
        }
        if memory[i] > node_type.memory_mib {
            violations.push(Violation::MemoryOvercommitted {
                node: id,
                requested_mib: memory[i],
                capacity_mib: node_type.memory_mib,
            });
        }
        if tasks[i] > u64::from(MAX_TASKS_PER_NODE) {
            violations.push(Violation::TooManyTasks {
                node: id,
                tasks: tasks[i],
            });
        }
        for (device, &used) in gpu[i].iter().enumerate() {
            if used > u64::from(MILLI_GPU_PER_GPU) {
                violations.push(Violation::GpuOvercommitted {
                    node: id,
                    device,
                    requested_milli: used,
                });
            }
        }
    }
    violations
}
