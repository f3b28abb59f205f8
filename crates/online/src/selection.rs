//! Picking the devices on the chosen node (reference-semantics §5.9).

use gapbench_model::rng::{uniform_index, SimRng};
use gapbench_model::{DeviceSet, NodeId, Task};

use crate::policies::{fgd, pwr};
use crate::policy::{fitting_devices, GpuSelection, ScoreContext};

/// The devices `task` uses on `node` (which it fits on). Sharing tasks follow `method`;
/// whole and multi-GPU tasks take the lowest-index devices that fit under every method.
pub fn select_devices(
    method: GpuSelection,
    ctx: &ScoreContext<'_>,
    node: NodeId,
    task: &Task,
    rng: &mut SimRng,
) -> DeviceSet {
    if task.gpu_milli == 0 {
        return DeviceSet::EMPTY;
    }
    let state = ctx.state.node(node);
    if !task.is_share() {
        return fitting_devices(state, task)
            .take(usize::from(task.gpu_count))
            .fold(DeviceSet::EMPTY, DeviceSet::with);
    }
    let device = match method {
        GpuSelection::Best => {
            fitting_devices(state, task).min_by_key(|&d| state.free_gpu_milli_by_device[d])
        }
        GpuSelection::Random => {
            let mut fitting = [0usize; gapbench_model::MAX_GPUS_PER_NODE];
            let mut count = 0;
            for device in fitting_devices(state, task) {
                fitting[count] = device;
                count += 1;
            }
            (count > 0).then(|| fitting[uniform_index(rng, count)])
        }
        GpuSelection::Fgd => fgd::select_share_device(ctx, node, task),
        GpuSelection::Pwr => pwr::select_share_device(ctx, node, task),
    };
    device.map_or(DeviceSet::EMPTY, DeviceSet::single)
}
