//! The bound's own tightness: one window's problem solved exactly by the per-node MIP
//! (`gapbench_ilp`'s per-node assignment model), on the same lowered power model, the same
//! tasks (those running throughout, relaxed, the ones first fit placed) and the same
//! dynamic floors as column generation's bound of that window. Column generation's
//! Lagrangian bound is at most the configuration LP, which is at most this MIP's optimum
//! (the same integer problem), which is at most the power any placement of the replay
//! draws throughout the window; the MIP is only practical on a few nodes.
//!
//! *Sleep-when-empty* is the MIP's own ([`min_power_sleeping`]): exactly column
//! generation's `wake_cost` (a node with any task wakes).

use std::time::Instant;

use gapbench_ilp::{min_power_sleeping, Options, Problem, SolveOptions};

use super::{power, ReplayBoundInput};
use crate::error::BoundError;

/// One window's per-node MIP.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowMip {
    pub from_s: f64,
    pub to_s: f64,
    /// HiGHS's proven bound of the window's least power, plus the tasks' dynamic floors
    /// (the optimum when `optimal`), watts.
    pub bound_watts: f64,
    /// The best placement's power (same terms), watts, if HiGHS found one.
    pub incumbent_watts: Option<f64>,
    /// HiGHS proved the optimum (within `mip_rel_gap`).
    pub optimal: bool,
    /// Tasks running throughout, and those first fit placed (the ones both bounds count).
    pub tasks: usize,
    pub packed: usize,
    pub seconds: f64,
}

/// The per-node MIP of the window `[from_s, to_s)` of `input`, the same problem
/// column generation bounds for that window in [`super::replay_energy_bound`].
pub fn window_mip(
    input: &ReplayBoundInput,
    from_s: f64,
    to_s: f64,
    options: &SolveOptions,
) -> Result<WindowMip, BoundError> {
    let clock = Instant::now();
    let lowered = power::static_cluster(input.cluster, &input.power);
    let sleep = power::sleep_watts(input.cluster, &input.power);
    let problem = super::WindowProblem::of(input, &lowered, from_s, to_s);
    let mut window = WindowMip {
        from_s,
        to_s,
        bound_watts: 0.0,
        incumbent_watts: None,
        optimal: false,
        tasks: problem.tasks.len(),
        packed: problem.packed(),
        seconds: 0.0,
    };
    let empty_watts = super::empty_cluster_watts(&lowered, sleep.as_deref());
    if window.packed == 0 {
        window.bound_watts = empty_watts + problem.dynamic_watts;
        window.incumbent_watts = Some(window.bound_watts);
        window.optimal = true;
        window.seconds = clock.elapsed().as_secs_f64();
        return Ok(window);
    }
    let tasks = Problem::new(lowered, input.typical.clone(), problem.tasks);
    let start = Options::new(options.clone()).warm_start(problem.placement);
    let mip = min_power_sleeping(&tasks, &start, sleep.as_deref())?;
    window.optimal = mip.optimal;
    window.incumbent_watts = mip.incumbent_watts.map(|v| v + problem.dynamic_watts);
    let bound = mip.bound_watts;
    window.bound_watts = bound + problem.dynamic_watts;
    window.seconds = clock.elapsed().as_secs_f64();
    Ok(window)
}
