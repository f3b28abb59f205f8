//! FGD, fragmentation gradient descent (Weng et al., USENIX ATC'23; reference-semantics
//! §5.7): place where the node's fragment amount F grows least.
//!
//! `score = trunc(100 · sigmoid((F(n) − F(n')) / 1000))`, where n' is the node after the
//! placement. A sharing task tries every fitting device and keeps the best (first index on
//! a tie); that device is also the one FGD's GPU selection picks. Scores are used raw.

use gapbench_model::{NodeId, Task};

use crate::policy::{fitting_devices, GpuSelection, Hypothetical, Policy, ScoreContext};

#[derive(Debug)]
pub struct Fgd;

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn fragment_after(ctx: &ScoreContext<'_>, node: NodeId, after: &Hypothetical) -> f64 {
    let model = ctx.cluster.node_type(node).gpu_model;
    ctx.typical
        .node_fragment_milli(model, after.cpu_left_milli, after.free_gpu_milli())
}

fn score_of(fragment_before: f64, fragment_after: f64) -> i64 {
    (sigmoid((fragment_before - fragment_after) / 1000.0) * 100.0) as i64
}

/// FGD score of each fitting device for a sharing task, in device order.
fn share_device_scores<'a>(
    ctx: &'a ScoreContext<'a>,
    node: NodeId,
    task: &'a Task,
) -> impl Iterator<Item = (usize, i64)> + 'a {
    let state = ctx.state.node(node);
    let before = ctx.typical.node_fragment_milli(
        ctx.cluster.node_type(node).gpu_model,
        state.cpu_left_milli,
        state.free_gpu_milli(),
    );
    fitting_devices(state, task).map(move |d| {
        (
            d,
            score_of(
                before,
                fragment_after(ctx, node, &Hypothetical::share_on(state, task, d)),
            ),
        )
    })
}

/// The device FGD picks for a sharing task: the first with the highest score.
pub fn select_share_device(ctx: &ScoreContext<'_>, node: NodeId, task: &Task) -> Option<usize> {
    first_max(share_device_scores(ctx, node, task))
}

/// The first item with the highest value (a later item must be strictly greater to win).
pub(crate) fn first_max(items: impl Iterator<Item = (usize, i64)>) -> Option<usize> {
    let mut best: Option<(usize, i64)> = None;
    for (device, score) in items {
        if best.is_none_or(|(_, top)| score > top) {
            best = Some((device, score));
        }
    }
    best.map(|(device, _)| device)
}

impl Policy for Fgd {
    fn gpu_selection(&self) -> GpuSelection {
        GpuSelection::Fgd
    }

    fn memoizable(&self) -> bool {
        true
    }

    fn score(&self, ctx: &ScoreContext<'_>, node: NodeId, task: &Task) -> i64 {
        if task.is_share() {
            return share_device_scores(ctx, node, task)
                .map(|(_, s)| s)
                .max()
                .unwrap_or(0);
        }
        let state = ctx.state.node(node);
        let model = ctx.cluster.node_type(node).gpu_model;
        let before =
            ctx.typical
                .node_fragment_milli(model, state.cpu_left_milli, state.free_gpu_milli());
        score_of(
            before,
            fragment_after(ctx, node, &Hypothetical::non_share(state, task)),
        )
    }
}
