//! FGD, fragmentation gradient descent (Weng et al., USENIX ATC'23; reference-semantics
//! §5.7): place where the node's fragment amount F grows least.
//!
//! `score = trunc(100 · sigmoid((F(n) − F(n')) / 1000))`, where n' is the node after the
//! placement. A sharing task tries every fitting device and keeps the best (first index on
//! a tie); that device is also the one FGD's GPU selection picks. Scores are used raw.

use gapbench_model::{NodeId, Task};

use crate::policy::{best_placement_on_node, GpuSelection, Policy, ScoreContext};

#[derive(Debug, Default)]
pub struct Fgd;

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// (device for a sharing task, score) of the best placement on `node`.
fn best_placement(ctx: &ScoreContext<'_>, node: NodeId, task: &Task) -> (Option<usize>, i64) {
    let state = ctx.state.node(node);
    let model = ctx.cluster.node_type(node).gpu_model;
    let before =
        ctx.typical
            .node_fragment_milli(model, state.cpu_left_milli, state.free_gpu_milli());
    best_placement_on_node(state, task, |after| {
        let fragment_after =
            ctx.typical
                .node_fragment_milli(model, after.cpu_left_milli, after.free_gpu_milli());
        (sigmoid((before - fragment_after) / 1000.0) * 100.0) as i64
    })
}

/// The device FGD picks for a sharing task: the first with the highest score.
pub fn select_share_device(ctx: &ScoreContext<'_>, node: NodeId, task: &Task) -> Option<usize> {
    best_placement(ctx, node, task).0
}

impl Policy for Fgd {
    fn gpu_selection(&self) -> GpuSelection {
        GpuSelection::Fgd
    }

    fn memoizable(&self) -> bool {
        true
    }

    fn score(&self, ctx: &ScoreContext<'_>, node: NodeId, task: &Task) -> i64 {
        best_placement(ctx, node, task).1
    }
}
