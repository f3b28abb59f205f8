//! The time-driven engine (spec time-and-budgets §6.1): tasks arrive, wait in a FIFO queue
//! when nothing fits, run at a speed set by who shares their GPUs, and leave.
//!
//! Events, in time order; at equal times completions first (they free resources), then
//! observations, then arrivals (in arrival order), then ticks:
//! - `Arrival`: the task joins the back of the queue; if it is alone there, the policy is
//!   asked to place it.
//! - `Completion`: predicted from the task's remaining work and speed; re-predicted (a new
//!   generation; stale ones are skipped) whenever its co-location set changes its speed.
//! - `Observation`: asked for by a placement (EaCO's one-epoch look); may undo it.
//! - `Tick`: periodic sampling only.
//!
//! The queue is strict FIFO by default: its head blocks the tasks behind it, and after every
//! completion and undo the engine offers the head to the policy until one does not fit. Under
//! [`QueueDiscipline::Backfill`] every waiting task is offered in arrival order and the ones
//! the policy cannot place are passed over. A task that fits no node of the empty cluster
//! fails at arrival with `never_fits:<resource>` (it would block a FIFO queue forever); with
//! [`OnFull::Fail`] a task that fits nowhere on arrival fails at once (the sweep's rule).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use gapbench_model::frag::REFERENCE_POPULARITY_PCT;
use gapbench_model::rng::{seeded, shuffle, SimRng};
use gapbench_model::{
    check_placements, Cluster, ClusterState, FailureReason, MetricsTracker, NodeId, Placement,
    Task, TypicalPods,
};

use crate::attributes::{derive_attributes, TaskAttributes};
use crate::devices::DeviceTable;
use crate::energy::{node_power, EnergyMeter, PowerSplit};
use crate::events::{Event, EventKind};
pub use crate::options::{OnFull, ReplayOptions};
use queue::FreeBounds;
pub use queue::QueueDiscipline;

mod queue;
use crate::policy::{Action, CapacityMode, Progress, ReplayView, TimePolicy};
use crate::results::{ReplayResult, TaskRecord, TimelineRow};
use crate::timed_workload::TimedWorkload;

/// Per-task bookkeeping of the engine.
#[derive(Debug, Clone)]
struct TaskRun {
    generation: u32,
    /// Number of starts so far (an observation is valid only for the start that asked).
    starts: u32,
    capacity: CapacityMode,
    first_start_s: Option<f64>,
    end_s: Option<f64>,
    failure: Option<FailureReason>,
    undos: u32,
    /// Share of its node's power, as a weight (see [`Replay::weight`]).
    weight: u64,
    energy_index_at_start: f64,
    energy_j: f64,
    segments: Vec<(f64, f64, f64)>,
}

struct Replay<'a> {
    cluster: &'a Cluster,
    workload: &'a TimedWorkload,
    options: &'a ReplayOptions,
    attributes: Vec<TaskAttributes>,
    typical: TypicalPods,
    node_rank: Vec<u32>,
    state: ClusterState,
    devices: DeviceTable,
    tracker: MetricsTracker,
    runs: Vec<TaskRun>,
    progress: Vec<Progress>,
    queue: VecDeque<u32>,
    heap: BinaryHeap<Reverse<Event>>,
    seq: u64,
    now_s: f64,
    node_power: Vec<PowerSplit>,
    power: PowerSplit,
    /// Tasks placed right now.
    running: u32,
    energy: EnergyMeter,
    active_nodes: u32,
    active_node_seconds: f64,
    node_weight: Vec<u64>,
    node_energy_index: Vec<f64>,
    node_index_time: Vec<f64>,
    timeline: Vec<TimelineRow>,
    undo_count: u32,
    violations: Vec<String>,
}

/// Replays `workload` on `cluster` with `policy`. Deterministic: the same inputs and
/// options give identical results.
pub fn run(
    cluster: &Cluster,
    workload: &TimedWorkload,
    policy: &mut dyn TimePolicy,
    options: &ReplayOptions,
) -> ReplayResult {
    let (mut replay, mut rng) = Replay::new(cluster, workload, options);
    replay.main_loop(policy, &mut rng);
    replay.finish(policy.name())
}

impl<'a> Replay<'a> {
    /// An empty cluster at the first arrival, and the run's generator (after the node
    /// priority shuffle).
    fn new(
        cluster: &'a Cluster,
        workload: &'a TimedWorkload,
        options: &'a ReplayOptions,
    ) -> (Self, SimRng) {
        let mut by_name: Vec<Task> = workload.tasks.iter().map(|t| t.task.clone()).collect();
        by_name.sort_by(|a, b| a.name.cmp(&b.name));
        let typical = TypicalPods::from_tasks(&by_name, REFERENCE_POPULARITY_PCT);
        let mut rng = seeded(options.seed);
        let mut order: Vec<u32> = (0..cluster.len() as u32).collect();
        shuffle(&mut rng, &mut order);
        let mut node_rank = vec![0; cluster.len()];
        for (rank, &node) in order.iter().enumerate() {
            node_rank[node as usize] = rank as u32;
        }
        let state = ClusterState::empty(cluster);
        let devices = DeviceTable::new(cluster);
        let tracker = MetricsTracker::new(cluster, &state, &typical);
        let node_power: Vec<PowerSplit> = (0..cluster.len() as NodeId)
            .map(|n| {
                node_power(
                    cluster,
                    n,
                    state.node(n),
                    devices.node(n),
                    &options.power,
                    &options.colocation,
                )
            })
            .collect();
        let mut power = PowerSplit::default();
        for p in &node_power {
            power.add(*p, 1);
        }
        let progress: Vec<Progress> = workload
            .tasks
            .iter()
            .map(|t| Progress {
                remaining_work_s: t.duration_s,
                since_s: t.arrival_s,
                slowdown: 1.0,
                placement: None,
            })
            .collect();
        let first_arrival = workload.tasks.first().map_or(0.0, |t| t.arrival_s);
        let mut replay = Replay {
            cluster,
            workload,
            options,
            attributes: derive_attributes(&workload.tasks, options.seed, &options.deadlines),
            typical,
            node_rank,
            state,
            devices,
            tracker,
            runs: progress
                .iter()
                .map(|_| TaskRun {
                    generation: 0,
                    starts: 0,
                    capacity: CapacityMode::Reserved,
                    first_start_s: None,
                    end_s: None,
                    failure: None,
                    undos: 0,
                    weight: 0,
                    energy_index_at_start: 0.0,
                    energy_j: 0.0,
                    segments: Vec::new(),
                })
                .collect(),
            progress,
            queue: VecDeque::new(),
            heap: BinaryHeap::new(),
            seq: 0,
            now_s: first_arrival,
            node_power,
            power,
            running: 0,
            energy: EnergyMeter::default(),
            active_nodes: 0,
            active_node_seconds: 0.0,
            node_weight: vec![0; cluster.len()],
            node_energy_index: vec![0.0; cluster.len()],
            node_index_time: vec![first_arrival; cluster.len()],
            timeline: Vec::with_capacity(3 * workload.tasks.len()),
            undo_count: 0,
            violations: Vec::new(),
        };
        if let Some(tick) = options.tick_s.filter(|t| *t > 0.0) {
            replay.push(first_arrival + tick, EventKind::Tick);
        }
        (replay, rng)
    }

    fn push(&mut self, time_s: f64, kind: EventKind) {
        self.seq += 1;
        self.heap.push(Reverse(Event {
            time_s,
            kind,
            seq: self.seq,
        }));
    }

    fn view(&self) -> ReplayView<'_> {
        ReplayView {
            now_s: self.now_s,
            cluster: self.cluster,
            state: &self.state,
            devices: &self.devices,
            tasks: &self.workload.tasks,
            attributes: &self.attributes,
            progress: &self.progress,
            typical: &self.typical,
            node_rank: &self.node_rank,
            colocation: &self.options.colocation,
        }
    }

    fn main_loop(&mut self, policy: &mut dyn TimePolicy, rng: &mut SimRng) {
        let until = self.options.until_s.unwrap_or(f64::INFINITY);
        let mut next_arrival = 0usize;
        let workload = self.workload;
        let tasks = &workload.tasks;
        loop {
            let arrival = tasks.get(next_arrival).map(|t| Event {
                time_s: t.arrival_s,
                kind: EventKind::Arrival {
                    task: next_arrival as u32,
                },
                seq: 0,
            });
            let from_heap = self.heap.peek().map(|Reverse(e)| *e);
            let event = match (arrival, from_heap) {
                (None, None) => break,
                (Some(a), None) => a,
                (None, Some(h)) => h,
                (Some(a), Some(h)) => {
                    if h < a {
                        h
                    } else {
                        a
                    }
                }
            };
            if event.time_s > until {
                self.advance(until);
                break;
            }
            if matches!(event.kind, EventKind::Arrival { .. }) {
                next_arrival += 1;
            } else {
                self.heap.pop();
            }
            if let EventKind::Tick = event.kind {
                let busy = next_arrival < tasks.len() || !self.queue.is_empty() || self.running > 0;
                if !busy {
                    continue;
                }
                let tick = self.options.tick_s.expect("ticks only with a period");
                self.push(event.time_s + tick, EventKind::Tick);
            }
            let stale = match event.kind {
                EventKind::Completion { task, generation } => {
                    self.runs[task as usize].generation != generation
                        || self.progress[task as usize].placement.is_none()
                }
                EventKind::Observation { task, start } => {
                    self.runs[task as usize].starts != start
                        || self.progress[task as usize].placement.is_none()
                }
                _ => false,
            };
            if stale {
                continue;
            }
            self.advance(event.time_s);
            self.handle(event.kind, policy, rng);
            if self.options.check_every_event {
                self.check();
            }
            self.record(event.kind.label());
        }
    }

    fn handle(&mut self, kind: EventKind, policy: &mut dyn TimePolicy, rng: &mut SimRng) {
        match kind {
            EventKind::Arrival { task } => {
                let timed = &self.workload.tasks[task as usize].task;
                let reason = FailureReason::of(self.cluster, timed);
                if reason != FailureReason::NoRoomNow {
                    self.runs[task as usize].failure = Some(reason);
                    return;
                }
                self.queue.push_back(task);
                self.drain(policy, rng, Some(task));
            }
            EventKind::Completion { task, .. } => {
                self.stop(task, policy);
                let run = &mut self.runs[task as usize];
                run.end_s = Some(self.now_s);
                self.progress[task as usize].remaining_work_s = 0.0;
                let actions = policy.on_completion(&self.view(), task);
                self.apply(actions, policy);
                self.drain(policy, rng, None);
            }
            EventKind::Observation { task, .. } => {
                let actions = policy.on_observation(&self.view(), task);
                self.apply(actions, policy);
                self.drain(policy, rng, None);
            }
            EventKind::Tick => {}
        }
    }

    /// Applies `Undo`s returned by a policy.
    fn apply(&mut self, actions: Vec<Action>, policy: &mut dyn TimePolicy) {
        let mut undone = Vec::new();
        for action in actions {
            match action {
                Action::Undo { task } if self.progress[task as usize].placement.is_some() => {
                    self.stop(task, policy);
                    let run = &mut self.runs[task as usize];
                    run.undos += 1;
                    self.progress[task as usize].remaining_work_s +=
                        self.options.restart_overhead_s;
                    self.undo_count += 1;
                    undone.push(task);
                }
                Action::Undo { .. } => {}
                other => panic!("policy returned {other:?} outside `schedule`"),
            }
        }
        // Undone tasks go back to the head of the queue, in the order they were undone.
        for task in undone.into_iter().rev() {
            self.queue.push_front(task);
        }
    }

    /// Offers waiting tasks to the policy by the queue discipline. `arrival`: this task just
    /// arrived and nothing freed since the last offer, so only it may newly fit (and under
    /// `OnFull::Fail` a refusal fails it).
    fn drain(&mut self, policy: &mut dyn TimePolicy, rng: &mut SimRng, arrival: Option<u32>) {
        if let Some(task) = arrival {
            let alone = self.queue.len() == 1;
            if alone || self.options.queue == QueueDiscipline::Backfill {
                let at = self.queue.len() - 1;
                if !self.offer(at, policy, rng) && self.options.on_full == OnFull::Fail {
                    self.queue.pop_back();
                    self.runs[task as usize].failure = Some(FailureReason::NoRoomNow);
                }
            } else if self.options.on_full == OnFull::Fail {
                self.queue.pop_back();
                self.runs[task as usize].failure = Some(FailureReason::NoRoomNow);
            }
            return;
        }
        match self.options.queue {
            QueueDiscipline::Fifo => while !self.queue.is_empty() && self.offer(0, policy, rng) {},
            QueueDiscipline::Backfill => {
                let bounds = FreeBounds::of(self.cluster, &self.state);
                let capacity = policy.capacity();
                let mut at = 0;
                while at < self.queue.len() {
                    let task = &self.workload.tasks[self.queue[at] as usize].task;
                    if !(bounds.may_fit(task, capacity) && self.offer(at, policy, rng)) {
                        at += 1;
                    }
                }
            }
        }
    }

    /// Offers the task at `at` in the queue to the policy; true when it started.
    fn offer(&mut self, at: usize, policy: &mut dyn TimePolicy, rng: &mut SimRng) -> bool {
        let task = self.queue[at];
        match policy.schedule(&self.view(), task, rng) {
            Action::Place {
                task: placed,
                placement,
                capacity,
                observe_after_s,
            } => {
                assert_eq!(placed, task, "a policy places the task it was asked about");
                self.queue.remove(at);
                self.start(task, placement, capacity, policy);
                if let Some(delay) = observe_after_s {
                    let start = self.runs[task as usize].starts;
                    self.push(self.now_s + delay, EventKind::Observation { task, start });
                }
                true
            }
            Action::Queue { .. } => false,
            Action::Undo { .. } => panic!("`schedule` returns Place or Queue"),
        }
    }

    /// Integrates power and node energy shares up to `time_s`.
    fn advance(&mut self, time_s: f64) {
        let dt = time_s - self.now_s;
        if dt > 0.0 {
            self.energy.accumulate(&self.power, dt);
            self.active_node_seconds += f64::from(self.active_nodes) * dt;
            self.now_s = time_s;
        }
    }

    /// Brings a node's energy-per-weight index to now, before the node changes.
    fn touch_node(&mut self, node: NodeId) {
        let n = node as usize;
        let dt = self.now_s - self.node_index_time[n];
        if self.node_weight[n] > 0 && dt > 0.0 {
            let watts = self.node_power[n].total_mw() as f64 / 1000.0;
            self.node_energy_index[n] += watts * dt / self.node_weight[n] as f64;
        }
        self.node_index_time[n] = self.now_s;
    }

    /// A task's share of its node, `cpu/C + gpu_milli/(1000·N)` for a node of `C` milli-CPU
    /// and `N` GPUs, as an integer numerator over the node's fixed denominator `C·1000·N`
    /// (so node sums are exact and an undo restores them); at least 1.
    fn weight(&self, task: &Task, node: NodeId) -> u64 {
        let node_type = self.cluster.node_type(node);
        let cpu = u64::from(task.cpu_milli);
        let weight = if node_type.gpu_count > 0 {
            cpu * 1000 * u64::from(node_type.gpu_count)
                + u64::from(task.total_gpu_milli()) * u64::from(node_type.cpu_milli)
        } else {
            cpu
        };
        weight.max(1)
    }

    /// What `ClusterState` reserves for the task: everything, or CPU and memory only.
    fn bound_task(&self, task: u32) -> Task {
        let timed = &self.workload.tasks[task as usize].task;
        match self.runs[task as usize].capacity {
            CapacityMode::Reserved => timed.clone(),
            CapacityMode::Oversubscribed => {
                let mut cpu_only = timed.clone();
                cpu_only.gpu_count = 0;
                cpu_only.gpu_milli = 0;
                cpu_only
            }
        }
    }

    fn node_updated(&mut self, node: NodeId, policy: &mut dyn TimePolicy) {
        let n = node as usize;
        self.tracker
            .node_changed(self.cluster, &self.state, &self.typical, node);
        let new = node_power(
            self.cluster,
            node,
            self.state.node(node),
            self.devices.node(node),
            &self.options.power,
            &self.options.colocation,
        );
        self.power.add(self.node_power[n], -1);
        self.power.add(new, 1);
        self.node_power[n] = new;
        policy.node_changed(&self.view(), node);
    }

    fn start(
        &mut self,
        task: u32,
        placement: Placement,
        capacity: CapacityMode,
        policy: &mut dyn TimePolicy,
    ) {
        let i = task as usize;
        self.runs[i].capacity = capacity;
        let bound = self.bound_task(task);
        let node = placement.node;
        if capacity == CapacityMode::Reserved {
            let free = &self.state.node(node).free_gpu_milli_by_device;
            assert!(
                self.state.fits(self.cluster, node, &bound)
                    && placement.devices.iter().all(|d| free[d] >= bound.gpu_milli),
                "policy placed {} where it does not fit",
                bound.name
            );
        }
        self.touch_node(node);
        if self.state.node(node).task_count == 0 {
            self.active_nodes += 1;
        }
        self.state.bind(&bound, placement);
        self.running += 1;
        let attributes = self.attributes[i];
        let timed = &self.workload.tasks[i].task;
        for device in placement.devices.iter() {
            self.devices.add(
                node,
                device,
                task,
                attributes.util_permille,
                attributes.gpu_memory_permille,
                u32::from(timed.gpu_milli),
            );
        }
        let weight = self.weight(timed, node);
        let run = &mut self.runs[i];
        run.weight = weight;
        run.energy_index_at_start = self.node_energy_index[node as usize];
        run.starts += 1;
        run.first_start_s.get_or_insert(self.now_s);
        self.node_weight[node as usize] += weight;
        let progress = &mut self.progress[i];
        progress.placement = Some(placement);
        progress.since_s = self.now_s;
        progress.slowdown = f64::NAN; // forces a prediction in `retime`
        self.node_updated(node, policy);
        self.retime(placement, Some(task));
    }

    /// Takes a running task off its node, keeping its progress.
    fn stop(&mut self, task: u32, policy: &mut dyn TimePolicy) {
        let i = task as usize;
        let placement = self.progress[i].placement.expect("only running tasks stop");
        let node = placement.node;
        self.touch_node(node);
        let now = self.now_s;
        let progress = &mut self.progress[i];
        let remaining = progress.remaining_at(now);
        if self.options.record_segments {
            self.runs[i]
                .segments
                .push((progress.since_s, now, progress.slowdown));
        }
        progress.remaining_work_s = remaining;
        progress.since_s = now;
        progress.placement = None;
        progress.slowdown = 1.0;
        let run = &mut self.runs[i];
        run.generation += 1;
        run.energy_j +=
            run.weight as f64 * (self.node_energy_index[node as usize] - run.energy_index_at_start);
        let weight = run.weight;
        let bound = self.bound_task(task);
        self.state.release(&bound, placement);
        self.running -= 1;
        if self.state.node(node).task_count == 0 {
            self.active_nodes -= 1;
        }
        self.node_weight[node as usize] -= weight;
        let attributes = self.attributes[i];
        let gpu_milli = u32::from(self.workload.tasks[i].task.gpu_milli);
        for device in placement.devices.iter() {
            self.devices.remove(
                node,
                device,
                task,
                attributes.util_permille,
                attributes.gpu_memory_permille,
                gpu_milli,
            );
        }
        self.node_updated(node, policy);
        self.retime(placement, None);
    }

    /// Re-predicts the completion of every task sharing a device of `placement` (and of
    /// `started`) whose speed changed.
    fn retime(&mut self, placement: Placement, started: Option<u32>) {
        let mut affected: Vec<u32> = started.into_iter().collect();
        for device in placement.devices.iter() {
            affected.extend(&self.devices.device(placement.node, device).tenants);
        }
        affected.sort_unstable();
        affected.dedup();
        let now = self.now_s;
        for task in affected {
            let i = task as usize;
            let Some(at) = self.progress[i].placement else {
                continue;
            };
            let slowdown = at
                .devices
                .iter()
                .map(|d| {
                    let load = self.devices.device(at.node, d);
                    self.options
                        .colocation
                        .slowdown(load.tenants.len(), load.util_permille)
                })
                .fold(1.0, f64::max);
            let progress = &mut self.progress[i];
            if progress.slowdown == slowdown {
                continue;
            }
            if !progress.slowdown.is_nan() {
                let remaining = progress.remaining_at(now);
                if self.options.record_segments {
                    self.runs[i]
                        .segments
                        .push((progress.since_s, now, progress.slowdown));
                }
                progress.remaining_work_s = remaining;
                progress.since_s = now;
            }
            progress.slowdown = slowdown;
            let end = now + progress.remaining_work_s * slowdown;
            let run = &mut self.runs[i];
            run.generation += 1;
            let generation = run.generation;
            self.push(end, EventKind::Completion { task, generation });
        }
    }

    fn record(&mut self, event: &'static str) {
        let metrics = self.tracker.totals();
        let capacity = self.cluster.gpu_capacity_milli().max(1) as f64;
        self.timeline.push(TimelineRow {
            time_s: self.now_s,
            event,
            power_watts: self.power.total_mw() as f64 / 1000.0,
            energy_kwh: self.energy.total_kwh(),
            allocated_gpu_pct: 100.0 * self.devices.reserved_milli_total as f64 / capacity,
            frag_gpu_milli: metrics.frag_gpu_milli(),
            active_nodes: self.active_nodes,
            active_gpus: self.devices.busy_devices,
            queue_length: self.queue.len() as u32,
        });
    }

    /// The independent checker on every running task's reservation. Oversubscribed tasks
    /// reserve CPU and memory only, so their GPU side is checked here: devices that exist,
    /// an allowed GPU model, and tenants' peak memory within each device.
    fn check(&mut self) {
        let mut running: Vec<(Task, Placement)> = Vec::new();
        for t in 0..self.runs.len() as u32 {
            let Some(placement) = self.progress[t as usize].placement else {
                continue;
            };
            match self.runs[t as usize].capacity {
                CapacityMode::Reserved => running.push((self.bound_task(t), placement)),
                CapacityMode::Oversubscribed => {
                    let node_type = self.cluster.node_type(placement.node);
                    let timed = &self.workload.tasks[t as usize].task;
                    let devices_ok = placement.devices.len() == usize::from(timed.gpu_count)
                        && placement
                            .devices
                            .iter()
                            .all(|d| d < usize::from(node_type.gpu_count));
                    let model_ok = timed.is_cpu_only()
                        || node_type
                            .gpu_model
                            .is_some_and(|m| timed.gpu_models.allows(m));
                    if !(devices_ok && model_ok) {
                        self.violations.push(format!(
                            "at {} s: task {} has a bad GPU set on node {}",
                            self.now_s, timed.name, placement.node
                        ));
                    }
                    let cpu_only = Placement {
                        node: placement.node,
                        devices: gapbench_model::DeviceSet::EMPTY,
                    };
                    running.push((self.bound_task(t), cpu_only));
                }
            }
        }
        for node in 0..self.cluster.len() as NodeId {
            for (device, load) in self.devices.node(node).iter().enumerate() {
                if load.memory_permille > 1000 {
                    self.violations.push(format!(
                        "at {} s: node {node} device {device} holds {} ‰ of its memory",
                        self.now_s, load.memory_permille
                    ));
                }
            }
        }
        for violation in check_placements(self.cluster, running.iter().map(|(t, p)| (t, *p))) {
            self.violations
                .push(format!("at {} s: {violation}", self.now_s));
        }
    }

    fn finish(mut self, policy: String) -> ReplayResult {
        let now = self.now_s;
        // Tasks still running at the end: charge their energy share so far.
        for t in 0..self.runs.len() {
            if let Some(p) = self.progress[t].placement {
                self.touch_node(p.node);
                let run = &mut self.runs[t];
                run.energy_j += run.weight as f64
                    * (self.node_energy_index[p.node as usize] - run.energy_index_at_start);
                run.energy_index_at_start = self.node_energy_index[p.node as usize];
                if self.options.record_segments {
                    let progress = &self.progress[t];
                    run.segments
                        .push((progress.since_s, now, progress.slowdown));
                }
            }
        }
        let tasks = self
            .workload
            .tasks
            .iter()
            .zip(&self.runs)
            .zip(&self.attributes)
            .zip(&self.progress)
            .map(|(((timed, run), attributes), progress)| TaskRecord {
                name: timed.task.name.clone(),
                qos: timed.qos,
                phase: timed.phase,
                gpu_count: timed.task.gpu_count,
                gpu_milli: timed.task.gpu_milli,
                arrival_s: timed.arrival_s,
                duration_s: timed.duration_s,
                left_censored: timed.left_censored,
                right_censored: timed.right_censored,
                attributes: *attributes,
                start_s: run.first_start_s,
                end_s: run.end_s,
                failure: run.failure,
                undos: run.undos,
                remaining_work_s: progress.remaining_at(now),
                energy_kwh: run.energy_j / crate::energy::JOULES_PER_KWH,
                segments: run.segments.clone(),
            })
            .collect();
        let first = self.workload.tasks.first().map_or(0.0, |t| t.arrival_s);
        ReplayResult {
            policy,
            queue: self.options.queue,
            dropped_pending: self.workload.dropped_pending,
            waiting_at_end: self.queue.iter().copied().collect(),
            tasks,
            timeline: self.timeline,
            energy: self.energy,
            start_s: first,
            end_s: now,
            active_node_seconds: self.active_node_seconds,
            undo_count: self.undo_count,
            violations: self.violations,
            final_state: self.state,
            final_devices: self.devices,
        }
    }
}

#[cfg(test)]
mod tests;
