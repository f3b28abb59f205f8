//! The arrival-sweep engine (reference-semantics §4): tasks arrive one by one and never
//! leave; each is placed or fails; metrics are sampled after every event.

use gapbench_model::{
    Cluster, ClusterMetrics, ClusterState, MetricsTracker, Placement, PreparedWorkload, SweepEvent,
};

use crate::policy::{NonFiniteScores, ScoreContext};
use crate::scheduler::Scheduler;
use crate::spec::PolicySpec;

/// The state after one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventRecord {
    /// Index of the task in `PreparedWorkload::events`.
    pub task: u32,
    /// Where it went; `None` when it fit nowhere (it is dropped, never retried).
    pub placement: Option<Placement>,
    /// Cumulative GPU demand of arrived tasks, failed ones included.
    pub arrived_gpu_milli: u64,
    pub arrived_cpu_milli: u64,
    pub failed_tasks: u32,
    pub metrics: ClusterMetrics,
}

/// Everything an arrival sweep produced.
#[derive(Debug, Clone)]
pub struct SweepResult {
    pub records: Vec<EventRecord>,
    pub final_state: ClusterState,
    /// Node scores computed, for throughput figures.
    pub node_scores: u64,
    /// Scores of expressions that were NaN or ±∞, one entry per such expression (empty
    /// for native policies and well-behaved expressions).
    pub non_finite_scores: Vec<NonFiniteScores>,
}

impl SweepResult {
    /// Every event as the exact side cuts snapshots from it: task, placement, arrived GPU
    /// demand.
    pub fn events(&self) -> Vec<SweepEvent> {
        self.records
            .iter()
            .map(|r| SweepEvent {
                task: r.task as usize,
                placement: r.placement,
                arrived_gpu_milli: r.arrived_gpu_milli,
            })
            .collect()
    }

    /// The placed tasks among the first `events` events: (task index, placement).
    pub fn placements_until(&self, events: usize) -> impl Iterator<Item = (usize, Placement)> + '_ {
        self.records[..events]
            .iter()
            .filter_map(|r| r.placement.map(|p| (r.task as usize, p)))
    }
}

/// Runs one arrival sweep of `prepared` on an initially empty `cluster` with the policy
/// `spec`. Deterministic: the only randomness is `prepared.rng`, continued here.
pub fn run_arrival_sweep(
    cluster: &Cluster,
    prepared: &PreparedWorkload,
    spec: &PolicySpec,
) -> SweepResult {
    let scheduler = Scheduler::new(spec, cluster, &ClusterState::empty(cluster));
    run_arrival_sweep_with(cluster, prepared, scheduler)
}

/// [`run_arrival_sweep`] with a scheduler built by the caller (e.g. without memoisation).
/// The scheduler must be fresh: built for the empty state of `cluster`.
pub fn run_arrival_sweep_with(
    cluster: &Cluster,
    prepared: &PreparedWorkload,
    mut scheduler: Scheduler,
) -> SweepResult {
    let mut state = ClusterState::empty(cluster);
    let mut tracker = MetricsTracker::new(cluster, &state, &prepared.typical);
    let mut rng = prepared.rng.clone();
    let mut records = Vec::with_capacity(prepared.events.len());
    let (mut arrived_gpu_milli, mut arrived_cpu_milli, mut failed_tasks) = (0u64, 0u64, 0u32);
    for (index, task) in prepared.events.iter().enumerate() {
        arrived_gpu_milli += u64::from(task.total_gpu_milli());
        arrived_cpu_milli += u64::from(task.scoring_cpu_milli());
        let ctx = ScoreContext {
            cluster,
            state: &state,
            typical: &prepared.typical,
        };
        let placement = scheduler.choose(&ctx, task, &prepared.node_rank, &mut rng);
        match placement {
            Some(placement) => {
                state.bind(task, placement);
                tracker.node_changed(cluster, &state, &prepared.typical, placement.node);
                scheduler.node_changed(cluster, &state, placement.node);
            }
            None => failed_tasks += 1,
        }
        records.push(EventRecord {
            task: index as u32,
            placement,
            arrived_gpu_milli,
            arrived_cpu_milli,
            failed_tasks,
            metrics: tracker.totals(),
        });
    }
    SweepResult {
        records,
        final_state: state,
        node_scores: scheduler.node_scores,
        non_finite_scores: scheduler.non_finite_scores(),
    }
}
