//! PWR, power-aware scoring (Lettich et al., CCGrid'25; reference-semantics §5.8): place
//! where node power grows least.
//!
//! `raw = P(n) − P(n')` in whole watts (≤ 0), then PWR's min-max normalisation (all 100
//! when equal). For a sharing task the first fitting device with the smallest increase
//! wins: in effect the first partially used device that fits, else the first free one.

use gapbench_model::{NodeId, Task};

use crate::policy::{best_placement_on_node, GpuSelection, Normalization, Policy, ScoreContext};

#[derive(Debug, Default)]
pub struct Pwr;

/// (device for a sharing task, score) of the best placement on `node`.
fn best_placement(ctx: &ScoreContext<'_>, node: NodeId, task: &Task) -> (Option<usize>, i64) {
    let model = ctx.cluster.power_model(node);
    let state = ctx.state.node(node);
    let before = model
        .node_power(state.cpu_left_milli, state.free_gpu_milli())
        .total_watts();
    best_placement_on_node(state, task, |after| {
        before
            - model
                .node_power(after.cpu_left_milli, after.free_gpu_milli())
                .total_watts()
    })
}

/// The device PWR picks for a sharing task.
pub fn select_share_device(ctx: &ScoreContext<'_>, node: NodeId, task: &Task) -> Option<usize> {
    best_placement(ctx, node, task).0
}

impl Policy for Pwr {
    fn normalization(&self) -> Normalization {
        Normalization::MinMaxHundredWhenEqual
    }

    fn gpu_selection(&self) -> GpuSelection {
        GpuSelection::Pwr
    }

    fn memoizable(&self) -> bool {
        true
    }

    fn score(&self, ctx: &ScoreContext<'_>, node: NodeId, task: &Task) -> i64 {
        best_placement(ctx, node, task).1
    }
}
