//! A proven lower bound on the energy of a replay: the least energy any placement of the
//! same tasks, at the replay's own start and end times, could use (spec time-and-budgets
//! §6.2 a, migration relaxed).
//!
//! **Windows.** Power only grows with what a node holds. For a window `W = [a, b)`, the
//! tasks `S_W` that run throughout it (start ≤ a, end ≥ b in the replay) are all placed at
//! every instant of `W`, whatever else runs, so every placement draws at least `P*(S_W)`
//! there, the least power of `S_W` alone. Windows partition the replay's span, and
//! `E ≥ Σ_W |W|·P*_LB(S_W)`, with `P*_LB` the Lagrangian (Farley) bound of the
//! configuration LP of the min-power snapshot problem
//! ([`gapbench_ilp::Session::power_bound`]), valid at every column-generation iteration. A
//! task may sit on different nodes in different windows (migration is relaxed), which is
//! why this is a bound and not a schedule. The times are the replay's: a policy that
//! delayed a start or stretched a run (queueing, co-location slowdown) gets the bound of
//! its own schedule, not of the trace's.
//!
//! **Integer wake-ups** (`max_branch_nodes`). The configuration LP may wake a fraction of
//! a node (sleep-when-empty) or keep a fraction of a CPU socket at work (always-on); every
//! placement wakes whole nodes and sockets. Branch and price on the window's LP
//! ([`gapbench_ilp::Session::power_bound`] with `SolveOptions::max_branch_nodes`), best
//! first under work limits, raises `P*_LB` towards the least power of integer placements;
//! each window keeps its LP part (`lp_watts`) beside it, so a replay's gap splits into the
//! LP's integrality gap and the policy's share.
//!
//! **Choosing windows.** A few windows first (cut at quantiles of the start/end times),
//! then the window where the replay's own energy exceeds its bound the most is cut at its
//! median start/end time, until `max_windows`. Each window's column generation stops when
//! it converges or after `max_pricing_rounds` exact pricing rounds (each exact pricing call
//! then ends at its budgets of search nodes and pattern scans, not at a clock share). The
//! wall-clock limits (the whole bound's and each window's) are a safety net: when neither
//! is hit the bound is a function of its input alone, the same on every run (status
//! `windows_converged`, or `round_limit` when the round cap stopped a window); a hit is the
//! status `time_limit` (still a valid bound). A sub-window's task set contains its
//! parent's, so it keeps the parent's bound as a floor. Consecutive solves share columns
//! (one [`Session`]). A window's tasks are placed first fit so column generation starts
//! feasible; tasks that fit nowhere by first fit are left out of its bound (still valid:
//! fewer tasks never need more power).
//!
//! **The power model** is the replay's (`gapbench_replay::energy::node_power`), lowered
//! where it must be for the bound to hold for the policy:
//! - *Reservation* GPU power: a device with any tenant at full power, exactly the model
//!   crate's node power column generation prices. A policy that may re-clock
//!   ([`BoundPower::reclocks`]) only lowers dynamic power, at most to `φ_min = 0.6^κ` (the
//!   lowest of `FREQUENCY_LEVELS`): its bound charges that.
//! - *Utilisation* GPU power: a device draws `dyn·φ·min(1, η_k·ΣU)`. With
//!   `η_min = min_k η_k` and shares `m_i` summing to ≤ 1000 milli per device,
//!   `min(1, η_k·ΣU) ≥ min(1, η_min·ΣU) ≥ Σ_i min(η_min·U_i, m_i/1000)` (if
//!   `η_min·ΣU ≤ 1` it is `Σ η_min·U_i`, else 1 ≥ `Σ m_i/1000`). So each task adds at
//!   least `g_i · min_M dyn_M·φ·min(η_min·U_i, m_i/1000)` over the GPU models it may use
//!   (`η_1` in place of `η_min` for a task holding whole reserved devices: it is alone),
//!   wherever it runs, and column generation bounds the rest (CPU and GPU idle power)
//!   with the GPUs' busy power taken out.
//! - *Sleep-when-empty*: an empty node draws `sleep_fraction × idle`; column generation
//!   charges that to empty nodes ([`gapbench_ilp::Session::power_bound`]'s `sleep_watts`).
//! - *Oversubscribed devices* (EaCO-O): tenants' GPU memory, not reservations, must fit a
//!   device, so a task's share is cut to `min(m_i, memory_i)` ([`BoundPower::oversubscribed`]).
//! - *Policies that choose GPU counts* (PowerFlow/GreenFlow-style): a job holds at least
//!   one GPU of its request's per-device share ([`BoundPower::chooses_gpu_count`]).
//!
//! **Its own tightness** ([`window_mip`]): the per-node MIP of one window's very problem
//! (same lowered power model, tasks and floors), practical on a few nodes, proves the exact
//! windowed bound that column generation's Lagrangian bound approaches from below.
//!
//! Tasks undone or moved while running are the caller's to leave out (their
//! `[start, end)` is not one stay on one request); leaving tasks out keeps the bound valid.

mod exact;
mod power;

use std::time::Instant;

use gapbench_model::{Cluster, Task, TypicalPods};

use crate::error::BoundError;
use gapbench_ilp::SolveOptions;
use gapbench_ilp::{Options, Problem, Session};

pub use exact::{window_mip, WindowMip};

/// One task of the replay as the bound sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundTask {
    /// Its request (CPU, memory, GPUs, share, allowed models).
    pub task: Task,
    /// When it ran in the replay, in seconds (the end is the replay's end for a task still
    /// running then).
    pub start_s: f64,
    pub end_s: f64,
    /// Its actual GPU utilisation per device (utilisation mode).
    pub util_permille: u32,
    /// Its peak GPU memory per device (oversubscribed devices).
    pub gpu_memory_permille: u32,
}

/// How GPU power follows load, as the bound takes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GpuPowerBound {
    /// Any tenant puts a device at full power.
    Reservation,
    /// `dyn·min(1, η_k·ΣU)`; `eta_min` is the least co-location factor `η_k` over all
    /// tenant counts, `eta_alone` is `η_1`.
    Utilisation { eta_min: f64, eta_alone: f64 },
}

/// What an empty node draws.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum IdleBound {
    AlwaysOn,
    SleepWhenEmpty { sleep_fraction: f64 },
}

/// The replay's power model and what the policy may do that lowers power below it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoundPower {
    pub gpu: GpuPowerBound,
    pub idle: IdleBound,
    /// The policy may run devices below full clock.
    pub reclocks: bool,
    /// The policy shares devices beyond reservations (GPU memory must fit).
    pub oversubscribed: bool,
    /// The policy chooses each job's GPU count (at least one).
    pub chooses_gpu_count: bool,
}

/// How hard to work.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoundOptions {
    /// Wall-clock limit of the whole bound, seconds.
    pub time_limit_s: f64,
    /// Windows the span is cut into before splitting adaptively.
    pub initial_windows: usize,
    /// Stop splitting at this many windows (the deterministic budget).
    pub max_windows: usize,
    /// Column generation's limit per window, seconds.
    pub window_time_limit_s: f64,
    /// Most exact pricing rounds of a window's column generation
    /// (`SolveOptions::max_pricing_rounds`): the work cap that makes a window that does not
    /// converge stop at the same place on every run. `None`: only the clock stops it.
    pub max_pricing_rounds: Option<usize>,
    /// Most branch-and-price tree nodes per window (`SolveOptions::max_branch_nodes`): the
    /// integer bound of a window, the least power of integer wake-ups and placements,
    /// where the configuration LP wakes nodes fractionally. `None`: the LP's bound.
    pub max_branch_nodes: Option<usize>,
}

impl Default for BoundOptions {
    fn default() -> Self {
        BoundOptions {
            time_limit_s: 60.0,
            initial_windows: 8,
            max_windows: 48,
            window_time_limit_s: 10.0,
            max_pricing_rounds: None,
            max_branch_nodes: None,
        }
    }
}

/// One window of the bound.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundWindow {
    pub from_s: f64,
    pub to_s: f64,
    /// The proven least power of any placement throughout the window.
    pub watts: f64,
    /// Of that, what the configuration LP (column generation) proved before branching:
    /// `watts` with `lp_watts` in place of the window's own bound.
    pub lp_watts: f64,
    /// Tasks running throughout it, and of those the ones column generation placed.
    pub tasks: usize,
    pub packed: usize,
    /// Its column generation converged (its LP bound is exact for these tasks), or its
    /// bound meets the first-fit placement's power (then it is the optimum).
    pub converged: bool,
    /// Its column generation ran (otherwise its bound is its parent's, or the empty
    /// cluster's power plus the tasks' dynamic floors).
    pub solved: bool,
    /// Its column generation did not converge and stopped at `max_pricing_rounds`, within
    /// its time limit: the bound is its Lagrangian bound there, the same on every run.
    pub round_limited: bool,
    /// Branch and price ran on the window and closed its tree: `watts` is the window's
    /// integer optimum (the least power of integer wake-ups and placements).
    pub integer: bool,
    /// Branch and price ran and did not close its tree (stopped at `max_branch_nodes`, or
    /// a tree node's aggregates were all integral with its LP not): its bound lies between
    /// the LP's and the integer optimum, the same on every run.
    pub branch_limited: bool,
    /// The clock stopped its branch and price (its bound holds, but may differ between
    /// runs).
    pub tree_out_of_time: bool,
}

/// What was proven: decided here (`status_of`), written with the results schema's labels
/// (`windows_integer`, `branch_limit`, `windows_converged`, `round_limit`, `time_limit`).
pub use gapbench_results::ReplayBoundStatus as BoundStatus;

/// The energy bound of one replay.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayBound {
    /// `Σ_W |W|·P*_LB(S_W)`, joules.
    pub energy_j: f64,
    /// The same sum over each window's configuration-LP bound (before branching): how
    /// much of `energy_j` the integer wake-ups add.
    pub lp_energy_j: f64,
    /// In time order, covering the span.
    pub windows: Vec<BoundWindow>,
    pub status: BoundStatus,
    pub seconds: f64,
}

/// Everything one bound needs, checked once.
pub struct ReplayBoundInput<'a> {
    pub cluster: &'a Cluster,
    /// Only for the snapshot's sake (power ignores it).
    pub typical: &'a TypicalPods,
    pub tasks: &'a [BoundTask],
    /// The replay's span, seconds.
    pub span_s: (f64, f64),
    pub power: BoundPower,
    /// The replay's own power as steps `(time_s, watts)` (power from each time on), to
    /// choose where to split.
    pub reference: &'a [(f64, f64)],
}

/// The energy bound of `input` within `options`.
pub fn replay_energy_bound(
    input: &ReplayBoundInput,
    options: &BoundOptions,
) -> Result<ReplayBound, BoundError> {
    let clock = Instant::now();
    check(input, options)?;
    let lowered = power::static_cluster(input.cluster, &input.power);
    let sleep = power::sleep_watts(input.cluster, &input.power);
    let empty_watts = empty_cluster_watts(&lowered, sleep.as_deref());
    let mut solver = WindowSolver {
        input,
        lowered: &lowered,
        sleep: sleep.as_deref(),
        empty_watts,
        session: Session::new(),
        clock,
        options,
    };
    let (from, to) = input.span_s;
    let cuts = initial_cuts(input, options.initial_windows);
    let mut windows: Vec<BoundWindow> = cuts
        .windows(2)
        .map(|c| solver.floor_window(c[0], c[1], None))
        .collect();
    if windows.is_empty() {
        windows.push(solver.floor_window(from, to, None));
    }
    for w in &mut windows {
        solver.solve(w)?;
    }
    // Splitting stops at `max_windows` (or when no window can be cut): the budget that
    // makes the bound a function of its input. The time limit is a safety net only, and
    // its hit is the status.
    let mut out_of_time = false;
    while windows.len() < options.max_windows {
        let Some((i, cut)) = worst_splittable(input, &windows) else {
            break;
        };
        if solver.time_left() <= 0.0 {
            out_of_time = true;
            break;
        }
        let parent = windows[i].clone();
        let mut left = solver.floor_window(parent.from_s, cut, Some(&parent));
        let mut right = solver.floor_window(cut, parent.to_s, Some(&parent));
        solver.solve(&mut left)?;
        solver.solve(&mut right)?;
        windows.splice(i..=i, [left, right]);
    }
    let energy_j = windows.iter().map(|w| (w.to_s - w.from_s) * w.watts).sum();
    let lp_energy_j = windows
        .iter()
        .map(|w| (w.to_s - w.from_s) * w.lp_watts)
        .sum();
    Ok(ReplayBound {
        energy_j,
        lp_energy_j,
        status: status_of(&windows, out_of_time, options),
        windows,
        seconds: clock.elapsed().as_secs_f64(),
    })
}

/// What the windows proved, the weakest first: the clock stopped something
/// (`time_limit`), the round cap stopped a column generation (`round_limit`), the node
/// cap stopped a tree (`branch_limit`), every LP converged (`windows_converged`, the
/// status without branching), or every window's integer optimum (`windows_integer`).
fn status_of(windows: &[BoundWindow], out_of_time: bool, options: &BoundOptions) -> BoundStatus {
    let decided =
        |w: &BoundWindow| w.solved && !w.tree_out_of_time && (w.converged || w.round_limited);
    if out_of_time || !windows.iter().all(decided) {
        BoundStatus::TimeLimit
    } else if windows.iter().any(|w| w.round_limited) {
        BoundStatus::RoundLimit
    } else if windows.iter().any(|w| w.branch_limited) {
        BoundStatus::BranchLimit
    } else if options.max_branch_nodes.is_some() && windows.iter().all(|w| w.integer) {
        BoundStatus::Integer
    } else {
        BoundStatus::Converged
    }
}

fn check(input: &ReplayBoundInput, options: &BoundOptions) -> Result<(), BoundError> {
    let (from, to) = input.span_s;
    if !(from.is_finite() && to.is_finite() && from <= to) {
        return Err(BoundError::Input(format!(
            "the replay's span {from}..{to} s is not an interval"
        )));
    }
    if let Some(t) = input
        .tasks
        .iter()
        .find(|t| !(t.start_s.is_finite() && t.end_s.is_finite() && t.start_s <= t.end_s))
    {
        return Err(BoundError::Input(format!(
            "task {} runs {}..{} s: not an interval",
            t.task.name, t.start_s, t.end_s
        )));
    }
    if let GpuPowerBound::Utilisation { eta_min, eta_alone } = input.power.gpu {
        if !(eta_min > 0.0 && eta_min <= eta_alone && eta_alone.is_finite()) {
            return Err(BoundError::Input(format!(
                "co-location factors η_min {eta_min}, η_1 {eta_alone}: need 0 < η_min ≤ η_1"
            )));
        }
    }
    if let IdleBound::SleepWhenEmpty { sleep_fraction } = input.power.idle {
        if !(0.0..=1.0).contains(&sleep_fraction) {
            return Err(BoundError::Input(format!(
                "sleep fraction {sleep_fraction} is not in [0, 1]"
            )));
        }
    }
    if options.initial_windows == 0 || options.max_windows == 0 {
        return Err(BoundError::Input(
            "a bound needs at least one window".into(),
        ));
    }
    if options.max_pricing_rounds == Some(0) {
        return Err(BoundError::Input(
            "a window's column generation needs at least one exact pricing round".into(),
        ));
    }
    if !(options.time_limit_s >= 0.0 && options.window_time_limit_s >= 0.0) {
        return Err(BoundError::Input(
            "time limits must be non-negative seconds".into(),
        ));
    }
    Ok(())
}

/// Watts of the empty cluster: every node idle, or asleep.
fn empty_cluster_watts(lowered: &Cluster, sleep: Option<&[f64]>) -> f64 {
    lowered
        .nodes
        .iter()
        .map(|n| {
            let t = usize::from(n.type_id);
            match sleep {
                Some(sleep) => sleep[t],
                None => {
                    let node_type = &lowered.node_types[t];
                    let model = &lowered.power_models[t];
                    let free = vec![1000u16; usize::from(node_type.gpu_count)];
                    model.node_power(node_type.cpu_milli, &free).total_watts() as f64
                }
            }
        })
        .sum()
}

/// The task start and end times strictly inside the span, sorted, distinct.
fn boundaries(input: &ReplayBoundInput, from: f64, to: f64) -> Vec<f64> {
    let mut times: Vec<f64> = input
        .tasks
        .iter()
        .flat_map(|t| [t.start_s, t.end_s])
        .filter(|&t| t > from && t < to)
        .collect();
    times.sort_by(f64::total_cmp);
    times.dedup();
    times
}

/// The span cut at `pieces` quantiles of its start and end times.
fn initial_cuts(input: &ReplayBoundInput, pieces: usize) -> Vec<f64> {
    let (from, to) = input.span_s;
    if from >= to {
        return Vec::new();
    }
    let inner = boundaries(input, from, to);
    let mut cuts = vec![from];
    for k in 1..pieces {
        if let Some(&t) = inner.get(k * inner.len() / pieces) {
            if t > *cuts.last().expect("starts with the span's start") {
                cuts.push(t);
            }
        }
    }
    cuts.push(to);
    cuts
}

/// The window whose reference energy exceeds its bound the most, among those with a start
/// or end time inside, and its median such time.
fn worst_splittable(input: &ReplayBoundInput, windows: &[BoundWindow]) -> Option<(usize, f64)> {
    let mut best: Option<(usize, f64, f64)> = None;
    for (i, w) in windows.iter().enumerate() {
        let inner = boundaries(input, w.from_s, w.to_s);
        let Some(&cut) = inner.get(inner.len() / 2) else {
            continue;
        };
        let loss =
            reference_energy(input.reference, w.from_s, w.to_s) - (w.to_s - w.from_s) * w.watts;
        if best.is_none_or(|(_, _, l)| loss > l) {
            best = Some((i, cut, loss));
        }
    }
    best.map(|(i, cut, _)| (i, cut))
}

/// Energy of the step function `steps` (`(time_s, watts)`, each from its time on) over
/// `[from, to)`, joules: a replay's own energy in a window.
pub fn reference_energy(steps: &[(f64, f64)], from: f64, to: f64) -> f64 {
    let mut energy = 0.0;
    for (k, &(t, watts)) in steps.iter().enumerate() {
        let next = steps.get(k + 1).map_or(f64::INFINITY, |s| s.0);
        let (a, b) = (t.max(from), next.min(to));
        if b > a {
            energy += (b - a) * watts;
        }
    }
    energy
}

/// Solves windows one after the other, carrying columns.
struct WindowSolver<'a> {
    input: &'a ReplayBoundInput<'a>,
    lowered: &'a Cluster,
    sleep: Option<&'a [f64]>,
    /// The empty cluster's watts: the floor of every window's static part.
    empty_watts: f64,
    session: Session,
    clock: Instant,
    options: &'a BoundOptions,
}

impl WindowSolver<'_> {
    fn time_left(&self) -> f64 {
        self.options.time_limit_s - self.clock.elapsed().as_secs_f64()
    }

    /// A window's bound before column generation: the empty cluster's power plus its
    /// tasks' dynamic floors, or its `parent`'s bound if higher (its LP bound likewise).
    fn floor_window(&self, from: f64, to: f64, parent: Option<&BoundWindow>) -> BoundWindow {
        let tasks = tasks_throughout(self.input, from, to);
        let floor = self.empty_watts + dynamic_floor(self.input, &tasks);
        BoundWindow {
            from_s: from,
            to_s: to,
            watts: parent.map_or(floor, |p| p.watts.max(floor)),
            lp_watts: parent.map_or(floor, |p| p.lp_watts.max(floor)),
            tasks: tasks.len(),
            packed: 0,
            converged: false,
            solved: false,
            round_limited: false,
            integer: false,
            branch_limited: false,
            tree_out_of_time: false,
        }
    }

    /// Column generation on the window's tasks, if time is left; keeps the higher bound.
    fn solve(&mut self, window: &mut BoundWindow) -> Result<(), BoundError> {
        let left = self.time_left();
        if left <= 0.0 || window.from_s >= window.to_s {
            window.solved = window.from_s >= window.to_s;
            window.converged = window.solved;
            window.integer = window.solved;
            return Ok(());
        }
        let problem = WindowProblem::of(self.input, self.lowered, window.from_s, window.to_s);
        let packed = problem.packed();
        let (static_watts, static_lp_watts) = if packed == 0 {
            window.converged = true;
            window.integer = true;
            (self.empty_watts, self.empty_watts)
        } else {
            let first_fit_watts = power::placement_watts(
                self.lowered,
                self.sleep,
                &problem.tasks,
                &problem.placement,
            );
            let options = SolveOptions {
                time_limit_s: self.options.window_time_limit_s.min(left),
                threads: Some(1),
                max_pricing_rounds: self.options.max_pricing_rounds,
                max_branch_nodes: self.options.max_branch_nodes,
                ..SolveOptions::default()
            };
            let tasks = Problem::new(
                self.lowered.clone(),
                self.input.typical.clone(),
                problem.tasks,
            );
            let start = Options::new(options.clone()).warm_start(problem.placement);
            let window_clock = Instant::now();
            let bound = self.session.power_bound(&tasks, &start, self.sleep)?;
            // Column generation also stops when its bound meets the first-fit placement:
            // then the bound is the window's optimum, more than the LP's.
            let meets_placement = |watts: f64| watts >= first_fit_watts * (1.0 - 1e-9) - 1e-6;
            window.converged = bound.converged || meets_placement(bound.lp_watts);
            let tree = bound.tree;
            window.integer = meets_placement(bound.watts) || tree.is_some_and(|t| t.closed);
            window.branch_limited = !window.integer && tree.is_some_and(|t| !t.out_of_time);
            // A window that ran to its time limit counts as stopped by the clock even if
            // its last round also reached the cap: its last pricing may have been cut.
            let within_time = window_clock.elapsed().as_secs_f64() < options.time_limit_s;
            window.round_limited = !window.converged
                && within_time
                && options
                    .max_pricing_rounds
                    .is_some_and(|most| bound.stats.exact_rounds >= most);
            window.tree_out_of_time = tree.is_some_and(|t| t.out_of_time);
            (bound.watts, bound.lp_watts)
        };
        window.packed = packed;
        window.solved = true;
        window.watts = window.watts.max(static_watts + problem.dynamic_watts);
        window.lp_watts = window.lp_watts.max(static_lp_watts + problem.dynamic_watts);
        Ok(())
    }
}

/// The tasks running throughout `[from, to)` (indices into the input), relaxed.
fn tasks_throughout(input: &ReplayBoundInput, from: f64, to: f64) -> Vec<(usize, Task)> {
    input
        .tasks
        .iter()
        .enumerate()
        .filter(|(_, t)| t.start_s <= from && t.end_s >= to && t.start_s < t.end_s)
        .map(|(i, t)| {
            let relaxed = power::relaxed_task(&t.task, t.gpu_memory_permille, &input.power);
            (i, relaxed)
        })
        .collect()
}

/// The tasks' placement-independent dynamic watts (utilisation mode).
fn dynamic_floor(input: &ReplayBoundInput, tasks: &[(usize, Task)]) -> f64 {
    tasks
        .iter()
        .map(|(i, relaxed)| {
            power::dynamic_floor_watts(
                input.cluster,
                relaxed,
                input.tasks[*i].util_permille,
                &input.power,
            )
        })
        .sum()
}

/// One window's snapshot problem, as column generation and the exact check
/// ([`exact::window_mip`]) both take it: the relaxed tasks running throughout, placed
/// first fit on the lowered cluster, and their dynamic floors.
struct WindowProblem {
    tasks: Vec<Task>,
    placement: Vec<Option<gapbench_model::Placement>>,
    dynamic_watts: f64,
}

impl WindowProblem {
    fn of(input: &ReplayBoundInput, lowered: &Cluster, from: f64, to: f64) -> Self {
        let tasks = tasks_throughout(input, from, to);
        let dynamic_watts = dynamic_floor(input, &tasks);
        let tasks: Vec<Task> = tasks.into_iter().map(|(_, t)| t).collect();
        let placement = gapbench_ilp::first_fit(lowered, &tasks);
        WindowProblem {
            tasks,
            placement,
            dynamic_watts,
        }
    }

    fn packed(&self) -> usize {
        self.placement.iter().filter(|p| p.is_some()).count()
    }
}

#[cfg(test)]
mod tests;
