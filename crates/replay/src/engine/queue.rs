//! The queue discipline: the offers of waiting tasks to a policy that places them one by
//! one, and the cheap tests that let backfilling skip tasks that cannot fit anywhere right
//! now (free-capacity bounds, and classes the policy refuses alike).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use gapbench_model::rng::SimRng;
use gapbench_model::{Cluster, ClusterState, FailureReason, NodeId, Task, MAX_GPU_MODELS};

use super::waiting::ClassId;
use super::{OnFull, Replay};
use crate::events::EventKind;
use crate::options::QueueDiscipline;
use crate::policy::{Action, CapacityMode, TimePolicy};

/// Upper bounds on what any one node offers now: a task above them fits nowhere, so a
/// backfilling scan need not ask the policy (the policy is asked about every other task).
/// Bounds on separate resources may come from separate nodes: this is a necessary test only.
#[derive(Debug, Clone)]
pub(crate) struct FreeBounds {
    cpu_milli: u32,
    memory_mib: u64,
    /// Per GPU model: the most fully free devices on one node, the most free milli-GPU on one
    /// device, and the most devices on one node (what an oversubscribing policy needs).
    whole_devices: [u8; MAX_GPU_MODELS],
    device_milli: [u16; MAX_GPU_MODELS],
    devices: [u8; MAX_GPU_MODELS],
    /// The models some node has (bit = model id): the only ones `may_fit` looks at.
    present: u64,
}

impl FreeBounds {
    /// The bounds over every node.
    pub fn of(cluster: &Cluster, state: &ClusterState) -> FreeBounds {
        let mut bounds = FreeBounds::none();
        for node in 0..cluster.len() as NodeId {
            bounds.widen(cluster, state, node);
        }
        bounds
    }

    /// The bounds over the `nodes` alone (what one node offers is exact, not a bound).
    pub fn of_nodes(
        cluster: &Cluster,
        state: &ClusterState,
        nodes: impl IntoIterator<Item = NodeId>,
    ) -> FreeBounds {
        let mut bounds = FreeBounds::none();
        for node in nodes {
            bounds.widen(cluster, state, node);
        }
        bounds
    }

    /// Bounds that nothing fits.
    fn none() -> FreeBounds {
        FreeBounds {
            cpu_milli: 0,
            memory_mib: 0,
            whole_devices: [0; MAX_GPU_MODELS],
            device_milli: [0; MAX_GPU_MODELS],
            devices: [0; MAX_GPU_MODELS],
            present: 0,
        }
    }

    /// Widens the bounds by what `node` offers now.
    fn widen(&mut self, cluster: &Cluster, state: &ClusterState, node: NodeId) {
        let free = state.node(node);
        if free.task_count >= gapbench_model::state::MAX_TASKS_PER_NODE {
            return;
        }
        self.cpu_milli = self.cpu_milli.max(free.cpu_left_milli);
        self.memory_mib = self.memory_mib.max(free.memory_left_mib);
        if let Some(model) = cluster.node_type(node).gpu_model {
            let m = model.index();
            self.present |= 1 << m;
            self.whole_devices[m] = self.whole_devices[m].max(free.fully_free_gpus() as u8);
            let most = free.free_gpu_milli().iter().copied().max().unwrap_or(0);
            self.device_milli[m] = self.device_milli[m].max(most);
            self.devices[m] = self.devices[m].max(free.gpu_count);
        }
    }

    /// Whether `task` may fit some node now (false: it surely fits none).
    pub fn may_fit(&self, task: &Task, capacity: CapacityMode) -> bool {
        if task.cpu_milli > self.cpu_milli || task.memory_mib > self.memory_mib {
            return false;
        }
        if task.gpu_milli == 0 {
            return true;
        }
        let allowed = match task.gpu_models.mask() {
            0 => u64::MAX,
            mask => mask,
        };
        let mut candidates = self.present & allowed;
        std::iter::from_fn(|| {
            let m = candidates.trailing_zeros() as usize;
            candidates &= candidates.wrapping_sub(1);
            (m < MAX_GPU_MODELS).then_some(m)
        })
        .any(|m| match capacity {
            CapacityMode::Oversubscribed => self.devices[m] >= task.gpu_count,
            CapacityMode::Reserved if task.gpu_count == 1 => self.device_milli[m] >= task.gpu_milli,
            CapacityMode::Reserved => self.whole_devices[m] >= task.gpu_count,
        })
    }
}

impl Replay<'_> {
    /// Offers waiting tasks to the policy by the queue discipline. `arrival`: this task just
    /// arrived and nothing freed since the last offer, so only it may newly fit (and under
    /// `OnFull::Fail` a refusal fails it).
    pub(super) fn drain(
        &mut self,
        policy: &mut dyn TimePolicy,
        rng: &mut SimRng,
        arrival: Option<u32>,
    ) {
        if let Some(task) = arrival {
            let alone = self.queue.len() == 1;
            let offered = (alone || self.options.queue == QueueDiscipline::Backfill)
                && self.offer_member(task, policy, rng);
            if !offered && self.options.on_full == OnFull::Fail {
                self.queue.remove(task);
                self.fail(task, FailureReason::NoRoomNow);
            }
            return;
        }
        match self.options.queue {
            QueueDiscipline::Fifo => {
                while let Some(head) = self.queue.front() {
                    if !self.offer_member(head, policy, rng) {
                        break;
                    }
                }
            }
            QueueDiscipline::Backfill => self.backfill(policy, rng),
        }
    }

    /// One backfilling pass: every waiting task that fits starts, in queue order. A task
    /// without a refusal class that fits no node by [`FreeBounds`] is not offered; after a
    /// refusal, the rest of the task's refusal class is not offered either (the policy
    /// promised to refuse them too, [`TimePolicy::refusal_class`]). The pass walks the
    /// classes' heads in queue order through a heap, so it costs O(classes + starts) offers,
    /// not O(waiting tasks); and a class refused before is asked again only when a node
    /// released since could hold it ([`Replay::offer_member`]), so most passes ask nothing.
    fn backfill(&mut self, policy: &mut dyn TimePolicy, rng: &mut SimRng) {
        let capacity = policy.capacity();
        let mut heads: BinaryHeap<Reverse<(i64, u32, Option<ClassId>)>> =
            self.queue.class_heads().map(Reverse).collect();
        // A class's refusal costs about what the bounds cost (a look at every node), so
        // the bounds are only for the tasks without a class, which are each offered.
        let bounds = heads
            .iter()
            .any(|Reverse((_, _, class))| class.is_none())
            .then(|| FreeBounds::of(self.cluster, &self.state));
        while let Some(Reverse((rank, task, class))) = heads.pop() {
            let timed = &self.workload.tasks[task as usize].task;
            let started = match class {
                Some(_) => self.offer_member(task, policy, rng),
                None => {
                    bounds
                        .as_ref()
                        .is_some_and(|bounds| bounds.may_fit(timed, capacity))
                        && self.offer(task, policy, rng)
                }
            };
            // A refused class is done for this pass; tasks without a class are each offered.
            if started || class.is_none() {
                if let Some((next_rank, next)) = self.queue.next_of_class(class, rank) {
                    heads.push(Reverse((next_rank, next, class)));
                }
            }
        }
    }

    /// Offers the waiting `task` unless its refusal class is known to be refused still: the
    /// policy refused the class when the release log was `k` long, nothing of the class
    /// started since, and none of the nodes released since (`released_nodes[k..]`) could
    /// hold the request now. Every other node only lost room since that refusal (placements
    /// alone never make room), so the policy would refuse again: not asking it gives the
    /// same placements and costs O(nodes released), not a look at every node.
    fn offer_member(&mut self, task: u32, policy: &mut dyn TimePolicy, rng: &mut SimRng) -> bool {
        let Some(class) = self.queue.class_of(task) else {
            return self.offer(task, policy, rng);
        };
        let released_now = self.released_nodes.len();
        if let Some(since) = self.queue.refused_at(class) {
            let released = self.released_nodes[since..].iter().copied();
            let room = FreeBounds::of_nodes(self.cluster, &self.state, released);
            let timed = &self.workload.tasks[task as usize].task;
            if !room.may_fit(timed, policy.capacity()) {
                self.queue.set_refused_at(class, Some(released_now));
                return false;
            }
        }
        let started = self.offer(task, policy, rng);
        self.queue
            .set_refused_at(class, (!started).then_some(released_now));
        started
    }

    /// Offers the waiting `task` to the policy; true when it started.
    fn offer(&mut self, task: u32, policy: &mut dyn TimePolicy, rng: &mut SimRng) -> bool {
        match policy.schedule(&self.view(), task, rng) {
            Action::Place {
                task: placed,
                placement,
                capacity,
                observe_after_s,
                option,
            } => {
                assert_eq!(placed, task, "a policy places the task it was asked about");
                self.queue.remove(task);
                self.start(task, placement, capacity, option, policy);
                if let Some(delay) = observe_after_s {
                    let start = self.runs[task as usize].starts;
                    self.push(self.now_s + delay, EventKind::Observation { task, start });
                }
                true
            }
            Action::Queue { .. } => false,
            other => panic!("`schedule` returns Place or Queue, not {other:?}"),
        }
    }
}
