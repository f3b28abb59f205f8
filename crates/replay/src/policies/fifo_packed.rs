//! Gavel's FIFO_packed as EaCO evaluates it: FIFO with exclusive GPUs while there are free
//! ones; otherwise the queue head joins devices that run exactly one other task, when the
//! pair's summed normalised throughput `2 / s(2, ΣU)` exceeds 1.5 (Gavel's threshold; our
//! co-location model gives the throughputs). Pairs only, lowest node and devices first.

use gapbench_model::rng::SimRng;
use gapbench_model::{DeviceSet, NodeId, Placement};

use crate::policies::gpu_sets::{device_has_room, first_exclusive, host_fits};
use crate::policy::{Action, CapacityMode, ReplayView, TimePolicy};

/// Gavel's packing threshold on summed normalised throughput.
pub const PACKING_THROUGHPUT: f64 = 1.5;

pub struct FifoPacked {
    pub capacity: CapacityMode,
}

/// Devices of `node` holding exactly one tenant that `task` may pair with (`accept` decides
/// on the pair's summed utilisation), lowest index first, if there are enough.
pub fn pair_devices(
    view: &ReplayView<'_>,
    node: NodeId,
    task: u32,
    capacity: CapacityMode,
    accept: impl Fn(u32) -> bool,
) -> Option<DeviceSet> {
    let timed = &view.tasks[task as usize].task;
    let util = view.attributes[task as usize].util_permille;
    let set = view
        .devices
        .node(node)
        .iter()
        .enumerate()
        .filter(|(d, load)| {
            load.tenants.len() == 1
                && accept(load.util_permille + util)
                && device_has_room(view, node, *d, task, capacity)
        })
        .take(usize::from(timed.gpu_count))
        .fold(DeviceSet::EMPTY, |set, (d, _)| set.with(d));
    (set.len() == usize::from(timed.gpu_count)).then_some(set)
}

impl TimePolicy for FifoPacked {
    fn name(&self) -> String {
        format!("fifo-packed{}", self.capacity.name_suffix())
    }

    fn capacity(&self) -> CapacityMode {
        self.capacity
    }

    fn schedule(&mut self, view: &ReplayView<'_>, task: u32, _rng: &mut SimRng) -> Action {
        let place = |placement| Action::Place {
            task,
            placement,
            capacity: self.capacity,
            observe_after_s: None,
            option: None,
        };
        if let Some(placement) = first_exclusive(view, task) {
            return place(placement);
        }
        let timed = &view.tasks[task as usize].task;
        if timed.is_cpu_only() {
            return Action::Queue { task };
        }
        let accept = |util_sum| 2.0 / view.colocation.slowdown(2, util_sum) > PACKING_THROUGHPUT;
        for node in 0..view.cluster.len() as NodeId {
            if !host_fits(view, node, timed) {
                continue;
            }
            if let Some(devices) = pair_devices(view, node, task, self.capacity, accept) {
                return place(Placement { node, devices });
            }
        }
        Action::Queue { task }
    }
}
