//! DotProduct (Tetris-like alignment; `dimext merge`, `norm max`; reference-semantics §5.3).
//!
//! With node vector `n = [cpu_left/128000, gpu_free/8000]` and task vector
//! `q = [cpu/128000, gpu_total/8000]`: `score = trunc(100·(1 − n·q/2))`, 0 when the CPU
//! does not fit. Better alignment of free resources gives a *lower* score.

use gapbench_model::{NodeId, Task};

use crate::policy::{Policy, ScoreContext};

/// The largest node CPU and GPU of the openb cluster, the reference's fixed normalisers.
pub(crate) const MAX_NODE_CPU_MILLI: f64 = 128_000.0;
pub(crate) const MAX_NODE_GPU_MILLI: f64 = 8_000.0;

#[derive(Debug, Default)]
pub struct DotProduct;

impl Policy for DotProduct {
    fn score(&self, ctx: &ScoreContext<'_>, node: NodeId, task: &Task) -> i64 {
        let state = ctx.state.node(node);
        let task_cpu = task.scoring_cpu_milli();
        if state.cpu_left_milli < task_cpu {
            return 0;
        }
        let mut dot = 0.0;
        dot += f64::from(state.cpu_left_milli) / MAX_NODE_CPU_MILLI
            * (f64::from(task_cpu) / MAX_NODE_CPU_MILLI);
        dot += f64::from(state.total_free_gpu_milli()) / MAX_NODE_GPU_MILLI
            * (f64::from(task.total_gpu_milli()) / MAX_NODE_GPU_MILLI);
        (100.0 * (1.0 - dot / 2.0)) as i64
    }
}
