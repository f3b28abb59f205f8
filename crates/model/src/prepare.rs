//! Workload preparation for an arrival sweep (reference-semantics §3): sort, seeded shuffle,
//! tune to a multiple of cluster GPU capacity, and the random node priority order.

use crate::cluster::Cluster;
use crate::frag::{TypicalPods, REFERENCE_POPULARITY_PCT};
use crate::rng::{seeded, shuffle, uniform_index, SimRng};
use crate::task::Task;

/// In which order tasks arrive.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum TaskOrder {
    /// Sorted by name, shuffled with the seed, then tuned (the reference's method).
    #[default]
    Shuffled,
    /// Exactly the input order: no shuffle and no tuning.
    AsListed,
}

/// Which node wins a tie between equal top scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NodeOrder {
    /// A seeded uniformly random priority order (the reference's method).
    #[default]
    Random,
    /// The node listed first wins.
    AsListed,
}

/// One event of an arrival sweep, as much as the exact side needs of it (a snapshot at a
/// checkpoint): the engine produces these (`gapbench_online::SweepResult::events`), so the
/// exact side knows nothing of the engine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepEvent {
    /// Index of the task in `PreparedWorkload::events`.
    pub task: usize,
    /// Where the policy put it; `None` when it fit nowhere.
    pub placement: Option<crate::state::Placement>,
    /// Cumulative GPU demand of arrived tasks after this event, failed ones included.
    pub arrived_gpu_milli: u64,
}

/// Everything an arrival sweep needs besides the cluster and the policy.
#[derive(Debug, Clone)]
pub struct PreparedWorkload {
    /// Tasks in arrival order, tune-up clones last.
    pub events: Vec<Task>,
    /// The FGD target workload, from the original (untuned) tasks.
    pub typical: TypicalPods,
    /// Priority rank per node: on a tie the node with the lowest rank wins.
    pub node_rank: Vec<u32>,
    /// Clones appended by tune-up.
    pub cloned_tasks: usize,
    /// Tasks removed by tune-down.
    pub removed_tasks: usize,
    /// The run's generator, positioned after preparation (the Random policy continues it).
    pub rng: SimRng,
}

/// Prepares one run. `tune_ratio` (e.g. 1.3) is the target of total GPU demand as a multiple
/// of cluster GPU capacity; `None` keeps the workload as it is.
pub fn prepare(
    tasks: &[Task],
    cluster: &Cluster,
    task_order: TaskOrder,
    tune_ratio: Option<f64>,
    node_order: NodeOrder,
    seed: u64,
) -> PreparedWorkload {
    let mut by_name: Vec<Task> = tasks.to_vec();
    by_name.sort_by(|a, b| a.name.cmp(&b.name));
    let typical = TypicalPods::from_tasks(&by_name, REFERENCE_POPULARITY_PCT);
    let mut rng = seeded(seed);
    let (mut cloned_tasks, mut removed_tasks) = (0, 0);
    let events = match task_order {
        TaskOrder::AsListed => tasks.to_vec(),
        TaskOrder::Shuffled => {
            let mut events = by_name.clone();
            shuffle(&mut rng, &mut events);
            if let Some(ratio) = tune_ratio {
                let target = ratio * cluster.gpu_capacity_milli() as f64;
                (cloned_tasks, removed_tasks) = tune(&mut events, &by_name, target, &mut rng);
            }
            events
        }
    };
    let mut order: Vec<u32> = (0..cluster.len() as u32).collect();
    if node_order == NodeOrder::Random {
        shuffle(&mut rng, &mut order);
    }
    let mut node_rank = vec![0; cluster.len()];
    for (rank, &node) in order.iter().enumerate() {
        node_rank[node as usize] = rank as u32;
    }
    PreparedWorkload {
        events,
        typical,
        node_rank,
        cloned_tasks,
        removed_tasks,
        rng,
    }
}

/// Tunes total GPU demand towards `target_milli` (reference-semantics §3.2 step 6).
/// Returns (clones added, tasks removed).
///
/// Tune-down removes uniformly random tasks of the current list while demand exceeds the
/// target. Tune-up appends clones of uniformly random tasks of the name-sorted original list
/// and stops at the first draw that would overshoot — a reference quirk kept on purpose: the
/// overshoot test adds the draw's *per-GPU* milli, not its total.
fn tune(
    events: &mut Vec<Task>,
    by_name: &[Task],
    target_milli: f64,
    rng: &mut SimRng,
) -> (usize, usize) {
    let mut demand: i64 = events.iter().map(|t| i64::from(t.total_gpu_milli())).sum();
    let (mut cloned, mut removed) = (0, 0);
    if (demand as f64) > target_milli {
        while (demand as f64) > target_milli && !events.is_empty() {
            let k = uniform_index(rng, events.len());
            demand -= i64::from(events.remove(k).total_gpu_milli());
            removed += 1;
        }
    } else if (demand as f64) < target_milli && by_name.iter().any(|t| t.gpu_milli > 0) {
        loop {
            let candidate = &by_name[uniform_index(rng, by_name.len())];
            if (demand + i64::from(candidate.gpu_milli)) as f64 > target_milli {
                break;
            }
            demand += i64::from(candidate.total_gpu_milli());
            let mut clone = candidate.clone();
            clone.name = format!("{}-tuned-{cloned}", candidate.name);
            events.push(clone);
            cloned += 1;
        }
    }
    (cloned, removed)
}
