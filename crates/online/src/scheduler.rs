//! The online scheduler: filter → score → normalise → weight → pick node → pick GPUs
//! (reference-semantics §4).

use gapbench_model::rng::SimRng;
use gapbench_model::{Cluster, ClusterState, NodeId, Placement, Task};

use crate::memo::{ScoreMemo, ShapeIndex, StateIndex};
use crate::policy::{GpuSelection, NonFiniteScores, Normalization, Policy, ScoreContext};
use crate::selection::select_devices;
use crate::spec::{PolicyRef, PolicySpec};

struct WeightedPolicy {
    policy: Box<dyn Policy>,
    weight: i64,
    memo: Option<ScoreMemo>,
}

/// Places tasks one at a time with a weighted combination of policies. Holds reusable
/// buffers, so the per-task loop does not allocate once warm.
pub struct Scheduler {
    policies: Vec<WeightedPolicy>,
    selection: GpuSelection,
    states: Option<StateIndex>,
    shapes: ShapeIndex,
    feasible: Vec<NodeId>,
    raw: Vec<i64>,
    total: Vec<i64>,
    /// Node scores computed (feasible nodes × policies), for throughput figures.
    pub node_scores: u64,
}

impl Scheduler {
    pub fn new(spec: &PolicySpec, cluster: &Cluster, state: &ClusterState) -> Self {
        Self::with_memo(spec, cluster, state, true)
    }

    /// `memoize = false` scores every node from scratch (the reference's way; for tests and
    /// benchmarks that show what memoisation buys).
    pub fn with_memo(
        spec: &PolicySpec,
        cluster: &Cluster,
        state: &ClusterState,
        memoize: bool,
    ) -> Self {
        let policies: Vec<WeightedPolicy> = spec
            .terms
            .iter()
            .map(|(policy, weight)| {
                let policy = policy.new_policy();
                let memo = (memoize && policy.memoizable()).then(ScoreMemo::default);
                WeightedPolicy {
                    policy,
                    weight: i64::from(*weight),
                    memo,
                }
            })
            .collect();
        let states = policies
            .iter()
            .any(|p| p.memo.is_some())
            .then(|| StateIndex::new(cluster, state));
        Scheduler {
            selection: dominant_selection(spec),
            policies,
            states,
            shapes: ShapeIndex::default(),
            feasible: Vec::with_capacity(cluster.len()),
            raw: Vec::with_capacity(cluster.len()),
            total: Vec::with_capacity(cluster.len()),
            node_scores: 0,
        }
    }

    /// Each expression's scores so far that were NaN or ±∞, in spec order (empty when none).
    pub fn non_finite_scores(&self) -> Vec<NonFiniteScores> {
        self.policies
            .iter()
            .filter_map(|p| p.policy.non_finite_scores())
            .collect()
    }

    /// Must be called after every change of a node's state (bind or release).
    pub fn node_changed(&mut self, cluster: &Cluster, state: &ClusterState, node: NodeId) {
        if let Some(states) = &mut self.states {
            states.node_changed(cluster, state, node);
        }
    }

    /// Chooses a placement for `task`, or `None` when it fits nowhere. Ties between equal
    /// top totals go to the node with the lowest `node_rank`.
    pub fn choose(
        &mut self,
        ctx: &ScoreContext<'_>,
        task: &Task,
        node_rank: &[u32],
        rng: &mut SimRng,
    ) -> Option<Placement> {
        self.feasible.clear();
        for node in 0..ctx.cluster.len() as NodeId {
            if ctx.state.fits(ctx.cluster, node, task) {
                self.feasible.push(node);
            }
        }
        let node = match self.feasible.len() {
            0 => return None,
            1 => self.feasible[0],
            _ => self.best_node(ctx, task, node_rank, rng),
        };
        Some(Placement {
            node,
            devices: select_devices(self.selection, ctx, node, task, rng),
        })
    }

    fn best_node(
        &mut self,
        ctx: &ScoreContext<'_>,
        task: &Task,
        node_rank: &[u32],
        rng: &mut SimRng,
    ) -> NodeId {
        let shape = self.shapes.shape_of(task);
        self.total.clear();
        self.total.resize(self.feasible.len(), 0);
        for weighted in &mut self.policies {
            weighted.policy.begin_task(&self.feasible, rng);
            self.raw.clear();
            let policy = &*weighted.policy;
            match (&mut weighted.memo, &self.states) {
                (Some(memo), Some(states)) => self.raw.extend(self.feasible.iter().map(|&node| {
                    memo.get_or_compute(states.state_of(node), shape, || {
                        policy.score(ctx, node, task)
                    })
                })),
                _ => self.raw.extend(
                    self.feasible
                        .iter()
                        .map(|&node| policy.score(ctx, node, task)),
                ),
            }
            normalize(policy.normalization(), &mut self.raw);
            for (total, &score) in self.total.iter_mut().zip(&self.raw) {
                debug_assert!(
                    (0..=100).contains(&score),
                    "normalised score {score} out of range"
                );
                *total += weighted.weight * score;
            }
            self.node_scores += self.feasible.len() as u64;
        }
        let mut best = 0;
        for i in 1..self.feasible.len() {
            let (score, top) = (self.total[i], self.total[best]);
            if score > top
                || score == top
                    && node_rank[self.feasible[i] as usize]
                        < node_rank[self.feasible[best] as usize]
            {
                best = i;
            }
        }
        self.feasible[best]
    }
}

/// Min-max normalisation with truncating integer division (reference-semantics §5.1).
fn normalize(normalization: Normalization, scores: &mut [i64]) {
    let equal_value = match normalization {
        Normalization::None => return,
        Normalization::MinMaxZeroWhenEqual => 0,
        Normalization::MinMaxHundredWhenEqual => 100,
    };
    let (Some(&min), Some(&max)) = (scores.iter().min(), scores.iter().max()) else {
        return;
    };
    for score in scores.iter_mut() {
        *score = if max == min {
            equal_value
        } else {
            (*score - min) * 100 / (max - min)
        };
    }
}

/// The GPU-selection method of a mix: that of the policy with the strictly largest weight,
/// the one with the smallest selection tie rank on a tie — the reference's plugin order for
/// the built-ins, so PWR+FGD 500/500 selects like FGD (reference-semantics §5.9).
pub fn dominant_selection(spec: &PolicySpec) -> GpuSelection {
    let mut terms: Vec<&(PolicyRef, u32)> = spec.terms.iter().collect();
    terms.sort_by_key(|(policy, _)| policy.selection_tie_rank());
    let mut dominant: Option<&(PolicyRef, u32)> = None;
    for term in terms {
        if dominant.is_none_or(|(_, top)| term.1 > *top) {
            dominant = Some(term);
        }
    }
    dominant.map_or(GpuSelection::Best, |(policy, _)| {
        policy.new_policy().gpu_selection()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_max_normalisation_truncates_and_handles_equal_scores() {
        let mut scores = vec![-120, -30, 0];
        normalize(Normalization::MinMaxHundredWhenEqual, &mut scores);
        assert_eq!(scores, vec![0, 75, 100]);
        let mut scores = vec![7, 8, 10];
        normalize(Normalization::MinMaxZeroWhenEqual, &mut scores);
        assert_eq!(scores, vec![0, 33, 100]);
        let mut equal = vec![-5, -5];
        normalize(Normalization::MinMaxHundredWhenEqual, &mut equal);
        assert_eq!(equal, vec![100, 100]);
        let mut equal = vec![3, 3];
        normalize(Normalization::MinMaxZeroWhenEqual, &mut equal);
        assert_eq!(equal, vec![0, 0]);
    }

    #[test]
    fn mixes_select_gpus_like_their_heaviest_policy() {
        let selection = |text: &str| dominant_selection(&text.parse().unwrap());
        assert_eq!(selection("pwr:200,fgd:800"), GpuSelection::Fgd);
        assert_eq!(selection("pwr:500,fgd:500"), GpuSelection::Fgd);
        assert_eq!(selection("fgd:100,pwr:900"), GpuSelection::Pwr);
        assert_eq!(selection("random"), GpuSelection::Random);
        assert_eq!(selection("bestfit"), GpuSelection::Best);
        // An expression selects best fit; it comes after every native policy on a tie.
        assert_eq!(selection("fgd:500,expr{idle_gpus}:500"), GpuSelection::Fgd);
        assert_eq!(selection("expr{idle_gpus}:501,fgd:500"), GpuSelection::Best);
    }
}
