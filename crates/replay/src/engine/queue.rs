//! The waiting queue's discipline, and the cheap test that lets backfilling skip tasks that
//! cannot fit anywhere right now.

use gapbench_model::{Cluster, ClusterState, GpuModel, NodeId, Task};

use crate::policy::CapacityMode;

/// Which waiting tasks the policy is offered when resources free.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum QueueDiscipline {
    /// Strict FIFO (Gavel's): the oldest waiting task blocks the ones behind it.
    #[default]
    Fifo,
    /// The first waiting tasks that fit, in arrival order: a task the policy cannot place is
    /// passed over, not waited for.
    Backfill,
}

impl QueueDiscipline {
    pub fn label(self) -> &'static str {
        match self {
            QueueDiscipline::Fifo => "fifo",
            QueueDiscipline::Backfill => "backfill",
        }
    }
}

/// Upper bounds on what any one node offers now: a task above them fits nowhere, so a
/// backfilling scan need not ask the policy (the policy is asked about every other task).
/// Bounds on separate resources may come from separate nodes: this is a necessary test only.
#[derive(Debug, Clone)]
pub(crate) struct FreeBounds {
    cpu_milli: u32,
    memory_mib: u64,
    /// Per GPU model: the most fully free devices on one node, the most free milli-GPU on one
    /// device, and the most devices on one node (what an oversubscribing policy needs).
    whole_devices: [u8; GpuModel::ALL.len()],
    device_milli: [u16; GpuModel::ALL.len()],
    devices: [u8; GpuModel::ALL.len()],
}

impl FreeBounds {
    pub fn of(cluster: &Cluster, state: &ClusterState) -> FreeBounds {
        let mut bounds = FreeBounds {
            cpu_milli: 0,
            memory_mib: 0,
            whole_devices: [0; GpuModel::ALL.len()],
            device_milli: [0; GpuModel::ALL.len()],
            devices: [0; GpuModel::ALL.len()],
        };
        for node in 0..cluster.len() as NodeId {
            let free = state.node(node);
            if free.task_count >= gapbench_model::state::MAX_TASKS_PER_NODE {
                continue;
            }
            bounds.cpu_milli = bounds.cpu_milli.max(free.cpu_left_milli);
            bounds.memory_mib = bounds.memory_mib.max(free.memory_left_mib);
            if let Some(model) = cluster.node_type(node).gpu_model {
                let m = model as usize;
                bounds.whole_devices[m] = bounds.whole_devices[m].max(free.fully_free_gpus() as u8);
                let most = free.free_gpu_milli().iter().copied().max().unwrap_or(0);
                bounds.device_milli[m] = bounds.device_milli[m].max(most);
                bounds.devices[m] = bounds.devices[m].max(free.gpu_count);
            }
        }
        bounds
    }

    /// Whether `task` may fit some node now (false: it surely fits none).
    pub fn may_fit(&self, task: &Task, capacity: CapacityMode) -> bool {
        if task.cpu_milli > self.cpu_milli || task.memory_mib > self.memory_mib {
            return false;
        }
        if task.gpu_milli == 0 {
            return true;
        }
        GpuModel::ALL.into_iter().any(|model| {
            let m = model as usize;
            task.gpu_models.allows(model)
                && match capacity {
                    CapacityMode::Oversubscribed => self.devices[m] >= task.gpu_count,
                    CapacityMode::Reserved if task.gpu_count == 1 => {
                        self.device_milli[m] >= task.gpu_milli
                    }
                    CapacityMode::Reserved => self.whole_devices[m] >= task.gpu_count,
                }
        })
    }
}
