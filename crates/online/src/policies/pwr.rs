//! PWR, power-aware scoring (Lettich et al., CCGrid'25; reference-semantics §5.8): place
//! where node power grows least.
//!
//! `raw = P(n) − P(n')` in whole watts (≤ 0), then PWR's min-max normalisation (all 100
//! when equal). For a sharing task the first fitting device with the smallest increase
//! wins: in effect the first partially used device that fits, else the first free one.

use gapbench_model::{NodeId, Task};

use crate::policies::fgd::first_max;
use crate::policy::{
    fitting_devices, GpuSelection, Hypothetical, Normalization, Policy, ScoreContext,
};

#[derive(Debug)]
pub struct Pwr;

fn power_delta(ctx: &ScoreContext<'_>, node: NodeId, after: &Hypothetical) -> i64 {
    let model = ctx.cluster.power_model(node);
    let state = ctx.state.node(node);
    let before = model
        .node_power(state.cpu_left_milli, state.free_gpu_milli())
        .total_watts();
    before
        - model
            .node_power(after.cpu_left_milli, after.free_gpu_milli())
            .total_watts()
}

fn share_device_scores<'a>(
    ctx: &'a ScoreContext<'a>,
    node: NodeId,
    task: &'a Task,
) -> impl Iterator<Item = (usize, i64)> + 'a {
    let state = ctx.state.node(node);
    fitting_devices(state, task).map(move |d| {
        (
            d,
            power_delta(ctx, node, &Hypothetical::share_on(state, task, d)),
        )
    })
}

/// The device PWR picks for a sharing task.
pub fn select_share_device(ctx: &ScoreContext<'_>, node: NodeId, task: &Task) -> Option<usize> {
    first_max(share_device_scores(ctx, node, task))
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
        if task.is_share() {
            return share_device_scores(ctx, node, task)
                .map(|(_, s)| s)
                .max()
                .unwrap_or(0);
        }
        power_delta(
            ctx,
            node,
            &Hypothetical::non_share(ctx.state.node(node), task),
        )
    }
}
