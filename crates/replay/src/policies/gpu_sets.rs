//! Feasibility pieces shared by the co-locating policies (EaCO and the Gavel baselines),
//! which decide on GPU tenants rather than on reservations alone.

use gapbench_model::state::MAX_TASKS_PER_NODE;
use gapbench_model::{DeviceSet, NodeId, Placement, Task};

use crate::policy::{CapacityMode, ReplayView};

/// Whether the node can host `task` apart from GPU capacity: CPU, memory, task count, GPU
/// model and enough devices.
pub fn host_fits(view: &ReplayView<'_>, node: NodeId, task: &Task) -> bool {
    let state = view.state.node(node);
    if task.cpu_milli > state.cpu_left_milli
        || task.memory_mib > state.memory_left_mib
        || state.task_count + 1 > MAX_TASKS_PER_NODE
    {
        return false;
    }
    if task.is_cpu_only() {
        return true;
    }
    let node_type = view.cluster.node_type(node);
    node_type
        .gpu_model
        .is_some_and(|model| task.gpu_models.allows(model))
        && node_type.gpu_count >= task.gpu_count
}

/// Whether `task` may join `device` of `node` as far as capacity goes: its reservation
/// fits (in `Reserved` mode) and the tenants' peak GPU memory stays within the device.
pub fn device_has_room(
    view: &ReplayView<'_>,
    node: NodeId,
    device: usize,
    task: u32,
    capacity: CapacityMode,
) -> bool {
    let load = view.devices.device(node, device);
    let timed = &view.tasks[task as usize].task;
    let memory = view.attributes[task as usize].gpu_memory_permille;
    let reserved_ok = match capacity {
        CapacityMode::Reserved => {
            view.state.node(node).free_gpu_milli_by_device[device] >= timed.gpu_milli
        }
        CapacityMode::Oversubscribed => true,
    };
    reserved_ok && load.memory_permille + memory <= 1000
}

/// The first node (lowest id) where `task` gets devices of its own; CPU-only tasks take the
/// first node they fit on.
pub fn first_exclusive(view: &ReplayView<'_>, task: u32) -> Option<Placement> {
    let timed = &view.tasks[task as usize].task;
    (0..view.cluster.len() as NodeId).find_map(|node| {
        if !host_fits(view, node, timed) {
            return None;
        }
        exclusive_devices(view, node, timed).map(|devices| Placement { node, devices })
    })
}

/// The lowest-index devices with no tenant, if there are enough.
pub fn exclusive_devices(view: &ReplayView<'_>, node: NodeId, task: &Task) -> Option<DeviceSet> {
    if task.is_cpu_only() {
        return Some(DeviceSet::EMPTY);
    }
    let free: DeviceSet = view
        .devices
        .node(node)
        .iter()
        .enumerate()
        .filter(|(_, load)| load.tenants.is_empty())
        .take(usize::from(task.gpu_count))
        .fold(DeviceSet::EMPTY, |set, (d, _)| set.with(d));
    (free.len() == usize::from(task.gpu_count)).then_some(free)
}
