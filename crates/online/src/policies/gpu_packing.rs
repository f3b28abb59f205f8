//! GpuPacking: prefer partially used GPUs, then partially used nodes, then idle nodes
//! (reference-semantics §5.5; integer arithmetic throughout).

use gapbench_model::{NodeId, Task, MAX_GPUS_PER_NODE};

use crate::policy::{Policy, ScoreContext};

#[derive(Debug, Default)]
pub struct GpuPacking;

impl Policy for GpuPacking {
    fn memoizable(&self) -> bool {
        true
    }

    fn score(&self, ctx: &ScoreContext<'_>, node: NodeId, task: &Task) -> i64 {
        if task.is_cpu_only() {
            return 0;
        }
        let state = ctx.state.node(node);
        let free = state.free_gpu_milli();
        let fully_free = i64::from(state.fully_free_gpus());
        if fully_free == i64::from(state.gpu_count) {
            return (33 - fully_free).max(fully_free);
        }
        let mut order: [usize; MAX_GPUS_PER_NODE] = std::array::from_fn(|d| d);
        let order = &mut order[..free.len()];
        order.sort_by_key(|&d| free[d]);
        let taken = order
            .iter()
            .map(|&d| free[d])
            .filter(|&left| left >= task.gpu_milli)
            .take(usize::from(task.gpu_count));
        let (mut taken_fully_free, mut percent_sum) = (0i64, 0i64);
        for left in taken {
            taken_fully_free += i64::from(left == 1000);
            percent_sum += i64::from(left) * 100 / 1000;
        }
        if taken_fully_free > 0 {
            (50 - taken_fully_free).max(33)
        } else {
            (100 - percent_sum / 10).max(50)
        }
    }
}
