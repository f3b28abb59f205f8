//! Random: one uniformly random feasible node scores 100, the others 0
//! (reference-semantics §5.2). Feasible nodes are taken in ascending node index, where the
//! reference iterates a Go map; results therefore match it statistically, not per seed.

use gapbench_model::rng::{uniform_index, SimRng};
use gapbench_model::{NodeId, Task};

use crate::policy::{GpuSelection, Policy, ScoreContext};

#[derive(Debug, Default)]
pub struct RandomPolicy {
    chosen: Option<NodeId>,
}

impl Policy for RandomPolicy {
    fn gpu_selection(&self) -> GpuSelection {
        GpuSelection::Random
    }

    fn begin_task(&mut self, feasible: &[NodeId], rng: &mut SimRng) {
        self.chosen = Some(feasible[uniform_index(rng, feasible.len())]);
    }

    fn score(&self, _ctx: &ScoreContext<'_>, node: NodeId, _task: &Task) -> i64 {
        if self.chosen == Some(node) {
            100
        } else {
            0
        }
    }
}
