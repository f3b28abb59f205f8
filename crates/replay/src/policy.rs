//! The one policy trait of time mode: what a policy sees and what it may do.
//!
//! A policy answers the engine's events: a waiting task to place (on arrival and whenever
//! resources free, by the queue discipline), a node that changed, an observation it asked
//! for (EaCO), a completion, and — when it asks for them — periodic rounds (`on_round`,
//! every `round_period_s`, and right after arrivals and completions). It acts with
//! `Place`, `Queue`, `Undo` (stop a task and keep its progress: EaCO's undo, a budgeted
//! policy's preemption) and `Reconfigure` (another GPU set or configuration: resize,
//! re-clock, move). The engine applies every action to real devices on real nodes and
//! refuses none silently: a placement that does not fit is a bug it stops on.

use std::collections::{BTreeSet, VecDeque};

use gapbench_model::rng::SimRng;
use gapbench_model::{CarbonSeries, Cluster, ClusterState, NodeId, Placement, Task, TypicalPods};

use crate::attributes::TaskAttributes;
use crate::budget::Budget;
use crate::colocation::ColocationModel;
use crate::devices::DeviceTable;
use crate::energy::Ledger;
use crate::jobs::JobTable;
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

impl CapacityMode {
    /// What a policy's name ends with in this mode: `-o` for policies that share whole-GPU
    /// reservations.
    pub fn name_suffix(self) -> &'static str {
        match self {
            CapacityMode::Reserved => "",
            CapacityMode::Oversubscribed => "-o",
        }
    }
}

/// Tasks that a policy refuses alike: the same request (CPU, memory, GPUs, milli-GPU per
/// GPU, allowed models). See [`TimePolicy::refusal_class`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RefusalClass {
    cpu_milli: u32,
    memory_mib: u64,
    gpu_count: u8,
    gpu_milli: u16,
    /// [`gapbench_model::GpuModelSet::mask`]: what feasibility reads of the allowed models.
    gpu_models_mask: u64,
}

impl RefusalClass {
    /// The class of everything a feasibility filter reads of a task.
    pub fn of_request(task: &Task) -> RefusalClass {
        RefusalClass {
            cpu_milli: task.cpu_milli,
            memory_mib: task.memory_mib,
            gpu_count: task.gpu_count,
            gpu_milli: task.gpu_milli,
            gpu_models_mask: task.gpu_models.mask(),
        }
    }
}

/// What a policy decides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Action {
    /// Start (or restart) `task` on `placement`. `observe_after_s`: call
    /// [`TimePolicy::on_observation`] that many seconds later, if the task still runs there.
    /// `option`: the training job's configuration (an index into its options in
    /// [`JobTable`]); `None` runs it as the trace did (its trace GPUs at full clock).
    Place {
        task: u32,
        placement: Placement,
        capacity: CapacityMode,
        observe_after_s: Option<f64>,
        option: Option<usize>,
    },
    /// Leave `task` waiting (under strict FIFO it blocks the tasks behind it).
    Queue { task: u32 },
    /// Stop `task` at once, keep its progress (checkpoint at an epoch boundary, spec §2.3)
    /// and put it back at the head of the queue.
    Undo { task: u32 },
    /// Run the running `task` in its job configuration `option` on `placement` (the same
    /// placement: a re-clock; another: a resize or move, progress kept).
    Reconfigure {
        task: u32,
        placement: Placement,
        option: usize,
    },
}

/// A running task's progress.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Work left (seconds of its trace configuration at full speed) at `since_s`.
    pub remaining_work_s: f64,
    pub since_s: f64,
    /// Current co-location slowdown `s ≥ 1`.
    pub slowdown: f64,
    /// Work per second of its configuration (1 in the trace configuration): the task
    /// progresses at `speed / s`.
    pub speed: f64,
    pub placement: Option<Placement>,
    /// Its job configuration while it runs, if it is a training job.
    pub option: Option<usize>,
}

impl Progress {
    /// Work left at `now_s` (a task that is not running makes no progress).
    pub fn remaining_at(&self, now_s: f64) -> f64 {
        if self.placement.is_none() {
            return self.remaining_work_s;
        }
        (self.remaining_work_s - (now_s - self.since_s) * self.speed / self.slowdown).max(0.0)
    }
}

/// Why a round runs [D, time-and-budgets §3.4].
///
/// A policy that re-plans every active job at every arrival and completion costs
/// O(active jobs) per event, which an overloaded queue turns into hours; so the full re-plan
/// runs on a fixed grid and the events only ask for what cannot wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RoundKind {
    /// On the grid of periods from the first arrival (every `round_period_s`), whatever
    /// else happened: the policy may move, resize and re-clock every task.
    Grid,
    /// Right after arrivals or completions between two grid rounds (at most one per
    /// instant, and none at a grid round's instant): the policy starts waiting tasks on the
    /// resources free now.
    Events,
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
    /// The training job of each GPU task, with its configurations.
    pub jobs: &'a JobTable,
    /// Waiting tasks, in queue order.
    pub queue: &'a VecDeque<u32>,
    /// Running tasks.
    pub running: &'a BTreeSet<u32>,
    /// Tasks `0..arrived` have arrived (tasks are in arrival order).
    pub arrived: usize,
    /// What was drawn so far.
    pub ledger: &'a Ledger,
    pub budget: &'a Budget,
    pub carbon: Option<&'a CarbonSeries>,
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
    /// [`Action::Place`] for it or [`Action::Queue`]. Policies that plan in rounds leave
    /// every task waiting here.
    fn schedule(&mut self, _view: &ReplayView<'_>, task: u32, _rng: &mut SimRng) -> Action {
        Action::Queue { task }
    }

    /// How this policy's placements use GPU capacity (a backfilling queue skips tasks that
    /// fit no node under it without asking).
    fn capacity(&self) -> CapacityMode {
        CapacityMode::Reserved
    }

    /// A promise that lets a backfilling queue stay cheap when long: if [`schedule`] queues a
    /// task of this class, it queues every task of the class until something is released
    /// (placements alone never make room), and a refusal changes nothing — no draw from the
    /// generator, no state of the policy. A backfilling pass then offers a class no more
    /// after its first refusal, which costs O(classes) per pass instead of O(waiting tasks)
    /// and gives exactly the placements of offering every task. `None` (the default): no
    /// promise, every waiting task is offered.
    ///
    /// [`schedule`]: Self::schedule
    fn refusal_class(&self, _task: &Task) -> Option<RefusalClass> {
        None
    }

    /// Called after every change of a node (a task started, left or changed there).
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

    /// The period of the [`RoundKind::Grid`] rounds of [`on_round`](Self::on_round),
    /// seconds, for policies that plan in rounds (between them, [`RoundKind::Events`]
    /// rounds run right after arrivals and completions).
    fn round_period_s(&self) -> Option<f64> {
        None
    }

    /// A round: any actions for waiting and running tasks. The engine applies first every
    /// `Undo` and the release half of every moving `Reconfigure`, then the placements, so a
    /// round may hand devices from one task to another.
    fn on_round(
        &mut self,
        _view: &ReplayView<'_>,
        _kind: RoundKind,
        _rng: &mut SimRng,
    ) -> Vec<Action> {
        Vec::new()
    }
}
