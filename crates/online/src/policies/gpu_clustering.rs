//! GpuClustering: keep GPU tasks of the same kind together (reference-semantics §5.4).
//!
//! `base = 25·(8000 − free)/8000` (integer); plus 75 when the node hosts only tasks of the
//! task's affinity (sharing, or whole k-GPU), 50 when it hosts that affinity among others,
//! 25 when it hosts no GPU task, 0 otherwise. CPU-only tasks score 0.

use gapbench_model::{NodeId, Task};

use crate::policy::{Policy, ScoreContext};

#[derive(Debug, Default)]
pub struct GpuClustering;

impl Policy for GpuClustering {
    fn score(&self, ctx: &ScoreContext<'_>, node: NodeId, task: &Task) -> i64 {
        let Some(affinity) = task.affinity() else {
            return 0;
        };
        let state = ctx.state.node(node);
        let free = i64::from(state.total_free_gpu_milli());
        let base = 25 * (8000 - free) / 8000;
        let hosted = &state.tasks_by_affinity;
        let kinds = hosted.iter().filter(|&&count| count > 0).count();
        let bonus = match (hosted[affinity] > 0, kinds) {
            (true, 1) => 75,
            (true, _) => 50,
            (false, 0) => 25,
            (false, _) => 0,
        };
        base + bonus
    }
}
