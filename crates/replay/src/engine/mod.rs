//! The one time-driven engine (spec time-and-budgets §6.1) for every time policy: tasks
//! arrive, wait when nothing fits, run at a speed set by their configuration and by who
//! shares their GPUs, and leave; every action of every policy lands on real devices of real
//! nodes, and power, energy and carbon are integrated exactly between events.
//!
//! Events, in time order; at equal times completions first (they free resources), then
//! observations, then arrivals (in arrival order), then rounds, then ticks:
//! - `Arrival`: a task that fits no node of the empty cluster fails with
//!   `never_fits:<resource>` (it would block a FIFO queue forever); any other joins the queue
//!   and is offered to the policy by the queue discipline ([`queue`]).
//! - `Completion`: predicted from the task's remaining work and rate; re-predicted (a new
//!   generation; stale ones are skipped) whenever its co-location set or configuration
//!   changes its rate.
//! - `Observation`: asked for by a placement (EaCO's one-epoch look); may undo it.
//! - `Round`: for policies that plan in rounds, a grid round every `round_period_s` from
//!   the first arrival while anything waits or runs, and an event round right after
//!   arrivals and completions at other instants ([`RoundKind`]).
//! - `Tick`: periodic sampling only.
//!
//! Budget rule: with a budget, a replay whose budget is spent while training jobs are
//! unfinished stops there and says so; a finished replay overshoots by at most what it
//! spent between its last two rounds.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use gapbench_model::frag::REFERENCE_POPULARITY_PCT;
use gapbench_model::rng::{seeded, shuffle, SimRng};
use gapbench_model::{
    Cluster, ClusterState, FailureReason, MetricsTracker, NodeId, Task, TypicalPods,
};

use crate::attributes::{derive_attributes, TaskAttributes};
use crate::budget::least_spend;
use crate::devices::DeviceTable;
use crate::energy::{node_power, Ledger, PowerSplit};
use crate::error::ReplayError;
use crate::events::{Event, EventKind};
use crate::jobs::JobTable;
pub use crate::options::{OnFull, QueueDiscipline, ReplayOptions};
use crate::policy::{Action, CapacityMode, Progress, ReplayView, RoundKind, TimePolicy};
use crate::results::{ReplayResult, Segment, TimelineRow};
use crate::timed_workload::{TimedTask, TimedWorkload};

mod check;
mod finish;
mod queue;
mod tasks;
mod waiting;

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
    reconfigurations: u32,
    /// Share of its node's power, as a weight (see [`Replay::weight`]).
    weight: u64,
    energy_index_at_start: f64,
    energy_j: f64,
    /// Job power of its current configuration (training model), milliwatts, and since when.
    job_mw: i64,
    job_since_s: f64,
    job_energy_j: f64,
    job_carbon_g: f64,
    segments: Vec<Segment>,
}

impl TaskRun {
    fn new() -> TaskRun {
        TaskRun {
            generation: 0,
            starts: 0,
            capacity: CapacityMode::Reserved,
            first_start_s: None,
            end_s: None,
            failure: None,
            undos: 0,
            reconfigurations: 0,
            weight: 0,
            energy_index_at_start: 0.0,
            energy_j: 0.0,
            job_mw: 0,
            job_since_s: 0.0,
            job_energy_j: 0.0,
            job_carbon_g: 0.0,
            segments: Vec::new(),
        }
    }
}

struct Replay<'a> {
    cluster: &'a Cluster,
    workload: &'a TimedWorkload,
    options: &'a ReplayOptions,
    attributes: Vec<TaskAttributes>,
    typical: TypicalPods,
    node_rank: Vec<u32>,
    jobs: JobTable,
    state: ClusterState,
    devices: DeviceTable,
    tracker: MetricsTracker,
    runs: Vec<TaskRun>,
    progress: Vec<Progress>,
    queue: waiting::WaitingQueue,
    /// Every node a task left, in order (the log a refused class is checked against:
    /// [`Replay::offer_member`]).
    released_nodes: Vec<NodeId>,
    /// Tasks that completed or failed so far.
    done_tasks: usize,
    running: BTreeSet<u32>,
    heap: BinaryHeap<Reverse<Event>>,
    seq: u64,
    now_s: f64,
    first_arrival_s: f64,
    /// The cluster's GPU capacity, milli-GPU (at least 1).
    gpu_capacity_milli: f64,
    /// Tasks `0..arrived` have arrived.
    arrived: usize,
    node_power: Vec<PowerSplit>,
    power: PowerSplit,
    /// Σ job power of running training jobs, milliwatts.
    job_power_mw: i64,
    ledger: Ledger,
    active_nodes: u32,
    active_node_seconds: f64,
    node_weight: Vec<u64>,
    node_energy_index: Vec<f64>,
    node_index_time: Vec<f64>,
    timeline: Vec<TimelineRow>,
    undo_count: u32,
    reconfigurations: u32,
    violations: Vec<String>,
    /// Rounds: period, how many ran, whether a grid round is scheduled, the live event
    /// round's generation, the spend (budget unit) at the last round and the most spent
    /// between two rounds.
    round_period_s: Option<f64>,
    rounds: u64,
    grid_round_scheduled: bool,
    round_generation: u32,
    spend_at_round: f64,
    max_round_spend: f64,
    /// Training jobs neither completed nor failed.
    unfinished_jobs: usize,
    exhausted: Option<ReplayError>,
    /// Why rounds stopped with tasks left, if they did.
    stalled: Option<String>,
}

/// The `event` of the timeline's last row when `until_s` stopped the replay.
pub const UNTIL_ROW: &str = "until";

/// Replays `workload` on `cluster` with `policy`. Deterministic: the same inputs and
/// options give identical results.
pub fn run(
    cluster: &Cluster,
    workload: &TimedWorkload,
    policy: &mut dyn TimePolicy,
    options: &ReplayOptions,
) -> ReplayResult {
    run_observed(cluster, workload, policy, options, &mut |_| {})
}

/// How far a replay has come: what [`run_observed`] reports as it goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplayProgress {
    /// Tasks that completed or failed so far, of `tasks`.
    pub done_tasks: usize,
    pub tasks: usize,
    /// Tasks waiting in the queue now.
    pub waiting: usize,
    /// The replay's clock, seconds.
    pub now_s: f64,
}

/// Events between two reports of [`run_observed`]: often enough for a progress line to
/// move every fraction of a second, rarely enough to cost nothing.
const EVENTS_PER_REPORT: u64 = 4096;

/// [`run`], calling `on_progress` every few thousand events and once at the end (a
/// progress bar for long replays; the replay itself is the same).
pub fn run_observed(
    cluster: &Cluster,
    workload: &TimedWorkload,
    policy: &mut dyn TimePolicy,
    options: &ReplayOptions,
    on_progress: &mut dyn FnMut(ReplayProgress),
) -> ReplayResult {
    let (mut replay, mut rng) = Replay::new(cluster, workload, options);
    replay.round_period_s = policy
        .round_period_s()
        .filter(|p| p.is_finite() && *p > 0.0);
    replay.main_loop(policy, &mut rng, on_progress);
    on_progress(replay.progress_report());
    replay.finish(policy.name())
}

/// Each node's rank in the run's node priority order (a seeded shuffle: ties between
/// equally good nodes go to the lower rank).
fn node_priority_ranks(nodes: usize, rng: &mut SimRng) -> Vec<u32> {
    let mut order: Vec<u32> = (0..nodes as u32).collect();
    shuffle(rng, &mut order);
    let mut node_rank = vec![0; nodes];
    for (rank, &node) in order.iter().enumerate() {
        node_rank[node as usize] = rank as u32;
    }
    node_rank
}

/// A task's progress before it first starts: all its work left, at full speed alone.
fn arrival_progress(task: &TimedTask) -> Progress {
    Progress {
        remaining_work_s: task.duration_s,
        since_s: task.arrival_s,
        slowdown: 1.0,
        speed: 1.0,
        placement: None,
        option: None,
    }
}

/// Each node's power draw on the empty cluster, and their sum.
fn empty_cluster_power(
    cluster: &Cluster,
    state: &ClusterState,
    devices: &DeviceTable,
    options: &ReplayOptions,
) -> (Vec<PowerSplit>, PowerSplit) {
    let per_node: Vec<PowerSplit> = (0..cluster.len() as NodeId)
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
    let mut total = PowerSplit::default();
    for p in &per_node {
        total.add(*p, 1);
    }
    (per_node, total)
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
        let node_rank = node_priority_ranks(cluster.len(), &mut rng);
        let state = ClusterState::empty(cluster);
        let devices = DeviceTable::new(cluster);
        let tracker = MetricsTracker::new(cluster, &state, &typical);
        let (node_power, power) = empty_cluster_power(cluster, &state, &devices, options);
        let progress = workload.tasks.iter().map(arrival_progress).collect();
        let first_arrival = workload.tasks.first().map_or(0.0, |t| t.arrival_s);
        let attributes = derive_attributes(&workload.tasks, options.seed, &options.deadlines);
        let jobs = JobTable::new(
            cluster,
            workload,
            &attributes,
            options.seed,
            options.fidelity,
        );
        let unfinished_jobs = jobs.jobs().len();
        let mut replay = Replay {
            cluster,
            workload,
            options,
            attributes,
            typical,
            node_rank,
            jobs,
            state,
            devices,
            tracker,
            runs: vec![TaskRun::new(); workload.tasks.len()],
            progress,
            queue: waiting::WaitingQueue::new(workload.tasks.len()),
            released_nodes: Vec::new(),
            done_tasks: 0,
            running: BTreeSet::new(),
            heap: BinaryHeap::new(),
            seq: 0,
            now_s: first_arrival,
            first_arrival_s: first_arrival,
            gpu_capacity_milli: cluster.gpu_capacity_milli().max(1) as f64,
            arrived: 0,
            node_power,
            power,
            job_power_mw: 0,
            ledger: Ledger::default(),
            active_nodes: 0,
            active_node_seconds: 0.0,
            node_weight: vec![0; cluster.len()],
            node_energy_index: vec![0.0; cluster.len()],
            node_index_time: vec![first_arrival; cluster.len()],
            timeline: Vec::with_capacity(3 * workload.tasks.len()),
            undo_count: 0,
            reconfigurations: 0,
            violations: Vec::new(),
            round_period_s: None,
            rounds: 0,
            grid_round_scheduled: false,
            round_generation: 0,
            spend_at_round: 0.0,
            max_round_spend: 0.0,
            unfinished_jobs,
            exhausted: None,
            stalled: None,
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
            jobs: &self.jobs,
            queue: self.queue.tasks(),
            running: &self.running,
            arrived: self.arrived,
            ledger: &self.ledger,
            budget: &self.options.budget,
            carbon: self.options.carbon.as_ref(),
        }
    }

    /// Whether anything waits, runs or is still to come.
    fn busy(&self) -> bool {
        self.arrived < self.workload.tasks.len()
            || !self.queue.is_empty()
            || !self.running.is_empty()
    }

    fn main_loop(
        &mut self,
        policy: &mut dyn TimePolicy,
        rng: &mut SimRng,
        on_progress: &mut dyn FnMut(ReplayProgress),
    ) {
        let until = self.options.until_s.unwrap_or(f64::INFINITY);
        let mut events = 0u64;
        loop {
            events += 1;
            if events.is_multiple_of(EVENTS_PER_REPORT) {
                on_progress(self.progress_report());
            }
            let Some(event) = self.next_event() else {
                break;
            };
            if event.time_s > until {
                // The timeline ends where the ledger does: a row at `until` whose energy is
                // the summary's (the last event's row stops short of it).
                if until > self.now_s {
                    self.advance(until);
                    self.record(UNTIL_ROW);
                }
                break;
            }
            if matches!(event.kind, EventKind::Arrival { .. }) {
                self.arrived += 1;
            } else {
                self.heap.pop();
            }
            if let EventKind::Tick = event.kind {
                if !self.busy() {
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
                EventKind::Round {
                    kind: RoundKind::Events,
                    generation,
                } => generation != self.round_generation,
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
            if self.budget_spent() {
                break;
            }
        }
    }

    /// The next event: the next arrival or the heap's first, whichever comes first (an
    /// arrival before a heap event of the same time and sequence).
    fn next_event(&self) -> Option<Event> {
        let arrival = self.workload.tasks.get(self.arrived).map(|t| Event {
            time_s: t.arrival_s,
            kind: EventKind::Arrival {
                task: self.arrived as u32,
            },
            seq: 0,
        });
        let from_heap = self.heap.peek().map(|Reverse(e)| *e);
        match (arrival, from_heap) {
            (None, None) => None,
            (Some(a), None) => Some(a),
            (None, Some(h)) => Some(h),
            (Some(a), Some(h)) => Some(if h < a { h } else { a }),
        }
    }

    fn handle(&mut self, kind: EventKind, policy: &mut dyn TimePolicy, rng: &mut SimRng) {
        match kind {
            EventKind::Arrival { task } => {
                let timed = &self.workload.tasks[task as usize].task;
                let reason = FailureReason::of(self.cluster, timed);
                if reason != FailureReason::NoRoomNow {
                    self.fail(task, reason);
                    return;
                }
                self.queue.push_back(task, policy.refusal_class(timed));
                if self.round_period_s.is_some() {
                    self.round_now();
                } else {
                    self.drain(policy, rng, Some(task));
                }
            }
            EventKind::Completion { task, .. } => {
                self.done_tasks += 1;
                self.stop(task, policy);
                self.runs[task as usize].end_s = Some(self.now_s);
                self.progress[task as usize].remaining_work_s = 0.0;
                if self.jobs.of(task).is_some() {
                    self.unfinished_jobs -= 1;
                }
                let actions = policy.on_completion(&self.view(), task);
                self.apply(actions, policy);
                if self.round_period_s.is_some() {
                    self.round_now();
                } else {
                    self.drain(policy, rng, None);
                }
            }
            EventKind::Observation { task, .. } => {
                let actions = policy.on_observation(&self.view(), task);
                self.apply(actions, policy);
                self.drain(policy, rng, None);
            }
            EventKind::Round { kind, .. } => self.round(kind, policy, rng),
            EventKind::Tick => {}
        }
    }

    /// Where the replay stands, for [`run_observed`]'s reports.
    fn progress_report(&self) -> ReplayProgress {
        ReplayProgress {
            done_tasks: self.done_tasks,
            tasks: self.workload.tasks.len(),
            waiting: self.queue.len(),
            now_s: self.now_s,
        }
    }

    fn fail(&mut self, task: u32, reason: FailureReason) {
        self.done_tasks += 1;
        self.runs[task as usize].failure = Some(reason);
        if self.jobs.of(task).is_some() {
            self.unfinished_jobs -= 1;
        }
    }

    /// Asks for a round now (after every other event at this time): the grid round if this
    /// instant is on the grid and none is scheduled, else an event round (the latest request
    /// at an instant is the live one; a grid round at the same instant makes it stale).
    fn round_now(&mut self) {
        if !self.grid_round_scheduled && self.schedule_grid_round(true) == self.now_s {
            return;
        }
        self.round_generation += 1;
        let generation = self.round_generation;
        self.push(
            self.now_s,
            EventKind::Round {
                kind: RoundKind::Events,
                generation,
            },
        );
    }

    /// Schedules the next grid round, at `first arrival + k × period` after now (or at now
    /// itself when `now_allowed` and now is on the grid), and returns its time.
    fn schedule_grid_round(&mut self, now_allowed: bool) -> f64 {
        let period = self.round_period_s.expect("rounds only with a period");
        let on_grid = |k: f64| self.first_arrival_s + k * period;
        let mut k = ((self.now_s - self.first_arrival_s) / period).floor();
        while on_grid(k) < self.now_s || (on_grid(k) == self.now_s && !now_allowed) {
            k += 1.0;
        }
        let next = on_grid(k);
        self.grid_round_scheduled = true;
        self.push(
            next,
            EventKind::Round {
                kind: RoundKind::Grid,
                generation: 0,
            },
        );
        next
    }

    /// A policy's round: its actions, then the next grid round while anything waits or
    /// runs.
    fn round(&mut self, kind: RoundKind, policy: &mut dyn TimePolicy, rng: &mut SimRng) {
        if kind == RoundKind::Grid {
            self.grid_round_scheduled = false;
            // An event round asked for at this instant is this round.
            self.round_generation += 1;
        }
        self.rounds += 1;
        let spent = self.spend();
        self.max_round_spend = self.max_round_spend.max(spent - self.spend_at_round);
        self.spend_at_round = spent;
        let actions = policy.on_round(&self.view(), kind, rng);
        self.apply_round(actions, policy);
        if self.running.is_empty()
            && !self.queue.is_empty()
            && self.arrived == self.workload.tasks.len()
        {
            // Nothing runs and nothing will arrive: every later round sees this state.
            self.stalled = Some(format!(
                "{} placed none of the {} waiting task(s) with nothing running and nothing \
                 left to arrive: they can never start",
                policy.name(),
                self.queue.len()
            ));
            return;
        }
        if !self.grid_round_scheduled && (!self.queue.is_empty() || !self.running.is_empty()) {
            self.schedule_grid_round(false);
        }
    }

    /// Applies a round: undos and the release half of moves first, then placements, so
    /// devices may pass from one task to another within the round.
    fn apply_round(&mut self, actions: Vec<Action>, policy: &mut dyn TimePolicy) {
        let mut starts = Vec::new();
        for action in actions {
            match action {
                Action::Undo { task } => self.undo(task, policy),
                Action::Reconfigure {
                    task,
                    placement,
                    option,
                } => {
                    let current = self.progress[task as usize].placement;
                    assert!(current.is_some(), "only running tasks are reconfigured");
                    if current == Some(placement) {
                        self.reclock(task, option, policy);
                    } else {
                        let capacity = self.runs[task as usize].capacity;
                        self.stop(task, policy);
                        self.runs[task as usize].reconfigurations += 1;
                        self.reconfigurations += 1;
                        starts.push((task, placement, capacity, Some(option)));
                    }
                }
                Action::Place {
                    task,
                    placement,
                    capacity,
                    observe_after_s,
                    option,
                } => {
                    assert!(observe_after_s.is_none(), "rounds ask for no observations");
                    assert!(self.queue.remove(task), "a round places waiting tasks");
                    starts.push((task, placement, capacity, option));
                }
                Action::Queue { .. } => {}
            }
        }
        for (task, placement, capacity, option) in starts {
            self.start(task, placement, capacity, option, policy);
        }
    }

    /// Applies `Undo`s returned by a policy outside rounds.
    fn apply(&mut self, actions: Vec<Action>, policy: &mut dyn TimePolicy) {
        for action in actions {
            match action {
                Action::Undo { task } => self.undo(task, policy),
                other => panic!("policy returned {other:?} outside `schedule` and rounds"),
            }
        }
    }

    /// Stops a running task, keeps its progress and puts it back at the head of the queue.
    fn undo(&mut self, task: u32, policy: &mut dyn TimePolicy) {
        if self.progress[task as usize].placement.is_none() {
            return;
        }
        self.stop(task, policy);
        self.runs[task as usize].undos += 1;
        self.progress[task as usize].remaining_work_s += self.options.restart_overhead_s;
        self.undo_count += 1;
        let class = policy.refusal_class(&self.workload.tasks[task as usize].task);
        self.queue.push_front(task, class);
    }

    /// Spend so far in the budget's unit (joules or grams).
    fn spend(&self) -> f64 {
        self.ledger.job_spend(self.options.budget.is_carbon())
    }

    /// Whether the budget ran out with training jobs unfinished (then it says why).
    fn budget_spent(&mut self) -> bool {
        let Some(limit) = self.options.budget.limit() else {
            return false;
        };
        if self.spend() <= limit || self.unfinished_jobs == 0 {
            return false;
        }
        let carbon = self.options.carbon.as_ref();
        let remaining = self.jobs.jobs().iter().filter_map(|job| {
            let run = &self.runs[job.task as usize];
            (run.end_s.is_none() && run.failure.is_none()).then(|| {
                let work = self.progress[job.task as usize].remaining_at(self.now_s);
                (job, job.iterations(work))
            })
        });
        let more = least_spend(remaining, &self.options.budget, carbon);
        let (unit, to_unit) = self.options.budget.unit();
        self.exhausted = Some(ReplayError::BudgetExhausted {
            at_s: self.now_s,
            unfinished: self.unfinished_jobs,
            least_more: more * to_unit,
            unit,
        });
        true
    }

    /// Integrates power, job power and carbon up to `time_s`.
    fn advance(&mut self, time_s: f64) {
        let dt = time_s - self.now_s;
        if dt > 0.0 {
            self.ledger.cluster.accumulate(&self.power, dt);
            let job_watts = self.job_power_mw as f64 / 1000.0;
            self.ledger.job_energy_j += job_watts * dt;
            if let Some(series) = &self.options.carbon {
                let grams_per_watt = series.grams(1.0, self.now_s, time_s);
                self.ledger.cluster_carbon_g +=
                    self.power.total_mw() as f64 / 1000.0 * grams_per_watt;
                self.ledger.job_carbon_g += job_watts * grams_per_watt;
            }
            self.active_node_seconds += f64::from(self.active_nodes) * dt;
            self.now_s = time_s;
        }
    }

    /// Appends a timeline row of the cluster now; `event` names what happened.
    fn record(&mut self, event: &'static str) {
        let metrics = self.tracker.totals();
        let capacity = self.gpu_capacity_milli;
        self.timeline.push(TimelineRow {
            time_s: self.now_s,
            event,
            power_watts: self.power.total_mw() as f64 / 1000.0,
            job_power_watts: self.job_power_mw as f64 / 1000.0,
            energy_kwh: self.ledger.cluster.total_kwh(),
            job_energy_kwh: self.ledger.job_energy_j / crate::energy::JOULES_PER_KWH,
            carbon_kg: self.ledger.cluster_carbon_g / 1000.0,
            running: self.running.len() as u32,
            allocated_gpu_pct: 100.0 * self.devices.reserved_milli_total as f64 / capacity,
            frag_gpu_milli: metrics.frag_gpu_milli(),
            active_nodes: self.active_nodes,
            active_gpus: self.devices.busy_devices,
            queue_length: self.queue.len() as u32,
            bound_power_watts: None,
        });
    }
}

#[cfg(test)]
mod tests;
