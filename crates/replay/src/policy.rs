//! The policy trait of time mode: what a policy sees and what it may do.
//!
//! The engine asks a policy to place the task at the head of the FIFO queue (on arrival and
//! whenever resources free), tells it when nodes change, when an observation it asked for is
//! due (EaCO) and when tasks complete. Today's actions are `Place`, `Queue` and `Undo`; the
//! budgeted allocators will add resize and frequency actions here (issue 9).

use gapbench_model::rng::SimRng;
use gapbench_model::{Cluster, ClusterState, NodeId, Placement, TypicalPods};

use crate::attributes::TaskAttributes;
use crate::colocation::ColocationModel;
use crate::devices::DeviceTable;
use crate::timed_workload::TimedTask;

/// How a placement uses GPU capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CapacityMode {
    /// Reservations (`gpu_milli`) never sum above 1000 per device, as FGD and PWR assume.
    Reserved,
    /// Devices may be shared beyond their reservations (EaCO-O, Gavel packing): only CPU
    /// and memory are reserved in `ClusterState`; the device table tracks GPU tenants.
    Oversubscribed,
}

/// What a policy decides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Action {
    /// Start (or restart) `task` on `placement`. `observe_after_s`: call
    /// [`TimePolicy::on_observation`] that many seconds later, if the task still runs there.
    Place {
        task: u32,
        placement: Placement,
        capacity: CapacityMode,
        observe_after_s: Option<f64>,
    },
    /// Leave `task` at the head of the queue (it blocks the tasks behind it: strict FIFO).
    Queue { task: u32 },
    /// Stop `task` at once, keep its progress (checkpoint at an epoch boundary, spec §2.3)
    /// and put it back at the head of the queue.
    Undo { task: u32 },
}

/// A running task's progress.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Work left (seconds at full speed) at `since_s`.
    pub remaining_work_s: f64,
    pub since_s: f64,
    /// Current slowdown `s ≥ 1`: the task progresses at `1/s`.
    pub slowdown: f64,
    pub placement: Option<Placement>,
}

impl Progress {
    /// Work left at `now_s` (a task that is not running makes no progress).
    pub fn remaining_at(&self, now_s: f64) -> f64 {
        if self.placement.is_none() {
            return self.remaining_work_s;
        }
        (self.remaining_work_s - (now_s - self.since_s) / self.slowdown).max(0.0)
    }
}

/// Everything a policy may look at.
#[derive(Clone, Copy)]
pub struct ReplayView<'a> {
    pub now_s: f64,
    pub cluster: &'a Cluster,
    /// Reservations (CPU, memory, milli-GPU unless oversubscribed).
    pub state: &'a ClusterState,
    pub devices: &'a DeviceTable,
    pub tasks: &'a [TimedTask],
    pub attributes: &'a [TaskAttributes],
    pub progress: &'a [Progress],
    pub typical: &'a TypicalPods,
    /// Node priority for ties (lower wins), seeded per run.
    pub node_rank: &'a [u32],
    pub colocation: &'a ColocationModel,
}

impl ReplayView<'_> {
    /// The slowdown the co-location model gives a device with these tenants.
    pub fn device_slowdown(&self, node: NodeId, device: usize) -> f64 {
        let load = self.devices.device(node, device);
        self.colocation
            .slowdown(load.tenants.len(), load.util_permille)
    }
}

/// A scheduling policy for time mode: one file per policy under `policies/`.
pub trait TimePolicy {
    /// A short name for files and tables, e.g. `fgd`, `eaco-r`.
    fn name(&self) -> String;

    /// Decide for `task`, a waiting task (the head of the queue under strict FIFO): an
    /// [`Action::Place`] for it or [`Action::Queue`].
    fn schedule(&mut self, view: &ReplayView<'_>, task: u32, rng: &mut SimRng) -> Action;

    /// How this policy's placements use GPU capacity (a backfilling queue skips tasks that
    /// fit no node under it without asking).
    fn capacity(&self) -> CapacityMode {
        CapacityMode::Reserved
    }

    /// Called after every change of a node (a task started or left it).
    fn node_changed(&mut self, _view: &ReplayView<'_>, _node: NodeId) {}

    /// An observation asked for by `observe_after_s` is due; may return `Undo` for `task`.
    fn on_observation(&mut self, _view: &ReplayView<'_>, _task: u32) -> Vec<Action> {
        Vec::new()
    }

    /// `task` completed (it is already gone from the view); may return `Undo`s (e.g. to
    /// unpack a shared device when space frees).
    fn on_completion(&mut self, _view: &ReplayView<'_>, _task: u32) -> Vec<Action> {
        Vec::new()
    }
}
