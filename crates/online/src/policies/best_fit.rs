//! BestFit: the node left with the least free CPU and GPU (equally weighted) wins
//! (reference-semantics §5.6): `raw = trunc(100·(1 − [0.5·cpu_after/128000 +
//! 0.5·gpu_after/8000]))`, then generic min-max normalisation.

use gapbench_model::{NodeId, Task};

use crate::policies::dot_product::{MAX_NODE_CPU_MILLI, MAX_NODE_GPU_MILLI};
use crate::policy::{Normalization, Policy, ScoreContext};

#[derive(Debug, Default)]
pub struct BestFit;

impl Policy for BestFit {
    fn normalization(&self) -> Normalization {
        Normalization::MinMaxZeroWhenEqual
    }

    fn score(&self, ctx: &ScoreContext<'_>, node: NodeId, task: &Task) -> i64 {
        let state = ctx.state.node(node);
        let cpu_after = f64::from(state.cpu_left_milli) - f64::from(task.scoring_cpu_milli());
        let gpu_after = f64::from(state.total_free_gpu_milli()) - f64::from(task.total_gpu_milli());
        let mut left = 0.0;
        left += cpu_after / MAX_NODE_CPU_MILLI * 0.5;
        left += gpu_after / MAX_NODE_GPU_MILLI * 0.5;
        ((1.0 - left) * 100.0) as i64
    }
}
