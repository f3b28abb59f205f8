//! The [`Policy`] trait: one score plugin of the reference scheduler.

use gapbench_model::rng::SimRng;
use gapbench_model::{
    Cluster, ClusterState, NodeId, NodeState, Task, TypicalPods, MAX_GPUS_PER_NODE,
};

/// What a policy may look at when it scores.
#[derive(Clone, Copy)]
pub struct ScoreContext<'a> {
    pub cluster: &'a Cluster,
    pub state: &'a ClusterState,
    /// The FGD target workload.
    pub typical: &'a TypicalPods,
}

/// How raw scores are mapped to 0..=100 over the feasible nodes (reference-semantics §5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Normalization {
    /// Raw scores are already in 0..=100.
    None,
    /// `(s − min)·100 / (max − min)` with truncating integer division; all 0 when equal.
    MinMaxZeroWhenEqual,
    /// The same, but all 100 when equal (PWR's variant).
    MinMaxHundredWhenEqual,
}

/// How the GPUs of a sharing task are picked on the chosen node (whole-GPU tasks always
/// take the lowest-index fully free devices).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuSelection {
    /// The fitting device with the least free milli; lowest index on a tie.
    Best,
    /// A uniformly random fitting device.
    Random,
    /// The first device with the best FGD score.
    Fgd,
    /// The first device with the least power increase.
    Pwr,
}

/// One score plugin: it rates every feasible node for a task. The scheduler normalises,
/// weights, sums and breaks ties; policies only score.
pub trait Policy: Send {
    fn normalization(&self) -> Normalization {
        Normalization::None
    }

    fn gpu_selection(&self) -> GpuSelection {
        GpuSelection::Best
    }

    /// Whether the raw score is a function of the node's type, free CPU and multiset of
    /// free GPU milli, and of the task's CPU and GPU request only. The scheduler then
    /// memoises it per distinct (node state, task shape), which is where most of the speed
    /// of expensive policies (FGD) comes from.
    fn memoizable(&self) -> bool {
        false
    }

    /// Called once per task before scoring when there are at least two feasible nodes
    /// (the reference skips scoring for a single one).
    fn begin_task(&mut self, _feasible: &[NodeId], _rng: &mut SimRng) {}

    /// The raw score of a feasible node.
    fn score(&self, ctx: &ScoreContext<'_>, node: NodeId, task: &Task) -> i64;

    /// Scores that came out NaN or ±∞ so far (only score expressions can; `None` when none).
    fn non_finite_scores(&self) -> Option<NonFiniteScores> {
        None
    }
}

/// Scores of one policy that came out NaN or ±∞ (e.g. `expr:1 / idle_gpus` on a node with no
/// idle GPU), reported by the arrival sweep.
///
/// Counted and reported rather than an error: such a value is a property of one node for
/// one task, not of the spec (constant ones are refused when the spec is parsed), and
/// stopping a long sweep at the first would throw the run away. The score keeps its
/// documented value (NaN → 0, ±∞ → the ends of the scale) and the run says how often and
/// where first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonFiniteScores {
    /// Evaluations that were not finite (a memoised score is evaluated once).
    pub count: u64,
    /// The first, e.g. "expr:1 / idle_gpus gave inf for task `t-7` on node `n-3`".
    pub first: String,
}

/// A node state after a hypothetical placement: free CPU and free milli per device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hypothetical {
    pub cpu_left_milli: u32,
    pub free_gpu_milli_by_device: [u16; MAX_GPUS_PER_NODE],
    pub gpu_count: usize,
}

impl Hypothetical {
    pub fn free_gpu_milli(&self) -> &[u16] {
        &self.free_gpu_milli_by_device[..self.gpu_count]
    }

    /// A sharing task on device `device`.
    pub fn share_on(state: &NodeState, task: &Task, device: usize) -> Self {
        let mut after = Self::base(state, task);
        after.free_gpu_milli_by_device[device] -= task.gpu_milli;
        after
    }

    /// Any other task (CPU-only, whole or multi-GPU), as FGD and PWR model it: take its GPU
    /// milli from the first `gpu_count` fitting devices in ascending free-milli order.
    pub fn non_share(state: &NodeState, task: &Task) -> Self {
        let mut after = Self::base(state, task);
        let mut order: [usize; MAX_GPUS_PER_NODE] = std::array::from_fn(|d| d);
        let order = &mut order[..after.gpu_count];
        order.sort_by_key(|&d| after.free_gpu_milli_by_device[d]);
        let mut needed = usize::from(task.gpu_count);
        for &device in order.iter() {
            if needed == 0 {
                break;
            }
            if after.free_gpu_milli_by_device[device] >= task.gpu_milli {
                after.free_gpu_milli_by_device[device] -= task.gpu_milli;
                needed -= 1;
            }
        }
        after
    }

    fn base(state: &NodeState, task: &Task) -> Self {
        Hypothetical {
            cpu_left_milli: state
                .cpu_left_milli
                .saturating_sub(task.scoring_cpu_milli()),
            free_gpu_milli_by_device: state.free_gpu_milli_by_device,
            gpu_count: usize::from(state.gpu_count),
        }
    }
}

/// Devices of `state` a sharing task fits on, in index order.
pub fn fitting_devices<'s>(
    state: &'s NodeState,
    task: &'s Task,
) -> impl Iterator<Item = usize> + 's {
    state
        .free_gpu_milli()
        .iter()
        .enumerate()
        .filter(move |(_, &left)| left >= task.gpu_milli)
        .map(|(d, _)| d)
}

/// The best hypothetical placement of `task` on a node, for policies that score how a
/// node-level quantity changes (FGD: fragment amount; PWR: power). A sharing task is tried
/// on every fitting device and the highest score wins, the first device on a tie; any other
/// task has one hypothetical placement ([`Hypothetical::non_share`]) and no device choice.
#[inline]
pub fn best_placement_on_node(
    state: &NodeState,
    task: &Task,
    score_after: impl Fn(&Hypothetical) -> i64,
) -> (Option<usize>, i64) {
    if !task.is_share() {
        return (None, score_after(&Hypothetical::non_share(state, task)));
    }
    let mut best: Option<(usize, i64)> = None;
    for device in fitting_devices(state, task) {
        let score = score_after(&Hypothetical::share_on(state, task, device));
        if best.is_none_or(|(_, top)| score > top) {
            best = Some((device, score));
        }
    }
    best.map_or((None, 0), |(device, score)| (Some(device), score))
}
