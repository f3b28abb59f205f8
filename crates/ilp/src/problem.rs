//! The one entry point of snapshot solving: a [`Problem`] on owned data, an
//! [`Objective`], a [`Method`] and [`Options`] in, a [`SolveReport`] or a [`SolveError`]
//! out. The formulations (`min_power`, `max_alloc`, `min_frag`, `relaxation`, `cg`) are
//! this module's to choose between; they work on a borrowed view of the problem
//! ([`Snapshot`]) with a feasible start.

use gapbench_model::{Cluster, Placement, Task, TypicalPods};

use crate::cg::{
    column_generation_carrying, column_generation_front, power_bound_carrying, CgStats,
    ColumnCarry, PowerBound, PowerFragFront,
};
use crate::error::SolveError;
use crate::first_fit::first_fit;
use crate::max_alloc::max_alloc;
use crate::min_frag::{frag_with_power_cap, min_frag_by_both, min_frag_from};
use crate::min_power::{min_power, PowerMip};
use crate::pareto::pareto_front_from;
use crate::relaxation::{relaxed_max_alloc, relaxed_min_power};
use crate::snapshot::Snapshot;
use crate::solve::{Objective, SolveOptions, SolveReport, SolveStatus};

/// What to place, and where: a cluster, the FGD target workload its fragmentation is
/// measured against (spec §5.7), and the tasks. Power and fragmentation place every task
/// (the tasks a warm start places, when [`Options::warm_start`] leaves some out);
/// allocation chooses which tasks to place.
#[derive(Debug, Clone)]
pub struct Problem {
    pub cluster: Cluster,
    pub typical: TypicalPods,
    pub tasks: Vec<Task>,
}

impl Problem {
    pub fn new(cluster: Cluster, typical: TypicalPods, tasks: Vec<Task>) -> Problem {
        Problem {
            cluster,
            typical,
            tasks,
        }
    }
}

/// How to solve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// The per-node assignment MIP: exact on clusters of a few dozen nodes.
    PerNode,
    /// Column generation over one-node configurations (with branch and price in the time
    /// left): a proven bound and a real placement on the full cluster.
    ColumnGeneration,
    /// Fragmentation only: column generation first, then, unless that proves optimality,
    /// the per-node MIP from its placement for the rest of the time limit; the better
    /// placement and the better bound ([`SolveReport::pooled_min`]).
    Pooled,
    /// The by-node-type LP relaxation: a valid bound on the full cluster; the incumbent is
    /// the start's placement. Power and allocation only.
    Relaxation,
}

/// How hard to work, and where to start.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    /// Time limit, gaps, threads, symmetry breaking, pricing rounds.
    pub limits: SolveOptions,
    /// A placement of the problem's tasks to start from (checked); without one, a first-fit
    /// placement. For power and fragmentation its placed tasks are the ones to place.
    pub warm_start: Option<Vec<Option<Placement>>>,
    /// Fragmentation by [`Method::PerNode`] or [`Method::Pooled`]: more placements of the
    /// same tasks, the least fragmented of which (with the warm start) starts the MIP.
    pub other_starts: Vec<Vec<Option<Placement>>>,
    /// Fragmentation by [`Method::PerNode`] only: total power at most this many watts (an
    /// ε-constraint of the power–fragmentation front); the warm start must respect it.
    pub power_cap_watts: Option<f64>,
}

impl Options {
    /// `limits`, started from a first-fit placement.
    pub fn new(limits: SolveOptions) -> Options {
        Options {
            limits,
            ..Options::default()
        }
    }

    /// Starts from `placement` (one entry per task of the problem).
    pub fn warm_start(mut self, placement: Vec<Option<Placement>>) -> Options {
        self.warm_start = Some(placement);
        self
    }

    /// Adds starts for fragmentation's per-node MIP.
    pub fn other_starts(mut self, starts: Vec<Vec<Option<Placement>>>) -> Options {
        self.other_starts = starts;
        self
    }
}

impl Snapshot<'_> {
    /// The problem this checkpoint poses, and where to start: its cluster, typical pods
    /// and arrived tasks (copied), the heuristic's placement as the warm start (so power
    /// and fragmentation place the tasks it placed, and every report's placement is in
    /// arrival order).
    pub fn problem(&self, limits: &SolveOptions) -> (Problem, Options) {
        let problem = Problem::new(
            self.cluster.clone(),
            self.typical.clone(),
            self.tasks.to_vec(),
        );
        let options = Options::new(limits.clone()).warm_start(self.heuristic.clone());
        (problem, options)
    }
}

/// Solves one after another that share what they learnt: column generation starts from
/// the configurations earlier solves used (those that fit), and leaves it its own. A chain
/// of growing snapshots of one sweep converges in fewer rounds in one session; solves in
/// different sessions are independent.
#[derive(Debug, Clone, Default)]
pub struct Session {
    carry: ColumnCarry,
    /// The fronts' configurations, kept apart: they would steer fragmentation's solves.
    front_carry: ColumnCarry,
    stats: CgStats,
}

impl Session {
    pub fn new() -> Session {
        Session::default()
    }

    /// Solves `objective` on `problem` by `method`: a report whose placement passes the
    /// checker and is at least as good as the start, with a proven bound, or why it could
    /// not run.
    pub fn solve(
        &mut self,
        problem: &Problem,
        objective: Objective,
        method: Method,
        options: &Options,
    ) -> Result<SolveReport, SolveError> {
        if options.power_cap_watts.is_some()
            && (method, objective) != (Method::PerNode, Objective::Frag)
        {
            return Err(SolveError::Unsupported(format!(
                "a power cap is fragmentation's by the per-node MIP, not {} by {method:?}",
                objective.name()
            )));
        }
        let view = view(problem, objective, options)?;
        let limits = &options.limits;
        let others: Vec<&[Option<Placement>]> =
            options.other_starts.iter().map(Vec::as_slice).collect();
        let report = match (method, objective) {
            (Method::PerNode, Objective::Power) => min_power(&view, limits),
            (Method::PerNode, Objective::Alloc) => max_alloc(&view, limits),
            (Method::PerNode, Objective::Frag) => match options.power_cap_watts {
                Some(cap) => frag_with_power_cap(&view, Some(cap), &view.heuristic, limits),
                None => min_frag_from(&view, &others, limits),
            },
            (Method::ColumnGeneration, _) => {
                let (report, stats) =
                    column_generation_carrying(&view, objective, limits, &mut self.carry);
                self.stats = stats;
                report
            }
            (Method::Pooled, Objective::Frag) => {
                min_frag_by_both(&view, &others, limits, &mut self.carry)
            }
            (Method::Relaxation, Objective::Power) => relaxed_min_power(&view, limits),
            (Method::Relaxation, Objective::Alloc) => relaxed_max_alloc(&view, limits),
            (Method::Pooled | Method::Relaxation, _) => {
                return Err(SolveError::Unsupported(format!(
                    "{method:?} does not solve {}",
                    objective.name()
                )))
            }
        };
        match report.status {
            SolveStatus::Error(message) => Err(SolveError::Solver(message)),
            _ => Ok(report),
        }
    }

    /// The power–fragmentation front of `problem` between its end points, solved on it
    /// (`least_power`, `least_frag`: its least power and least fragmentation, by any
    /// method): `points` points, by power — the two ends and `points − 2` power caps, each
    /// a solve of `options.limits.time_limit_s` by `method`: [`Method::ColumnGeneration`]
    /// (with walks between the placements found) or [`Method::PerNode`] (the ε-constraint
    /// MIP from the least-power placement, dominated points left out).
    pub fn front(
        &mut self,
        problem: &Problem,
        (least_power, least_frag): (&SolveReport, &SolveReport),
        points: usize,
        method: Method,
        options: &Options,
    ) -> Result<PowerFragFront, SolveError> {
        let view = view(problem, Objective::Power, options)?;
        let limits = &options.limits;
        match method {
            Method::ColumnGeneration => column_generation_front(
                &view,
                least_power,
                least_frag,
                points,
                limits,
                &mut self.front_carry,
            )
            .map_err(SolveError::Solver),
            Method::PerNode => Ok(PowerFragFront {
                points: pareto_front_from(&view, least_power, least_frag, points, limits)?,
                least_power: least_power.placement.clone(),
                least_frag: least_frag.placement.clone(),
            }),
            Method::Pooled | Method::Relaxation => Err(SolveError::Unsupported(format!(
                "no {method:?} front: use PerNode or ColumnGeneration"
            ))),
        }
    }

    /// A lower bound on the least power of `problem` (the tasks the warm start places: a
    /// task it leaves out is left out of the bound, which stays valid, only weaker) by
    /// column generation alone, no integer phase: the best Lagrangian bound within the time
    /// limit. `sleep_watts` (one entry per node type, by type id) makes empty nodes draw
    /// that instead of their idle power.
    pub fn power_bound(
        &mut self,
        problem: &Problem,
        options: &Options,
        sleep_watts: Option<&[f64]>,
    ) -> Result<PowerBound, SolveError> {
        let view = partial_view(problem, options)?;
        power_bound_carrying(&view, &options.limits, sleep_watts, &mut self.carry)
            .map_err(SolveError::Solver)
    }

    /// The figures of the last column-generation solve (rounds, columns, times).
    pub fn last_stats(&self) -> &CgStats {
        &self.stats
    }
}

/// Solves `objective` on `problem` by `method` in a session of its own.
///
/// Three nodes of two T4 GPUs each, two tasks that each want half a GPU. The least power
/// wakes as little as it can: both tasks on one device of one node (one working GPU on one
/// busy node); every other placement draws more. Both tasks fit, so the most
/// allocated GPU milli is all they ask for.
///
/// ```
/// use gapbench_ilp::{solve, Method, Objective, Options, Problem, SolveOptions, SolveStatus};
/// use gapbench_model::{Cluster, CpuPowerProfile, GpuModel, NodeType, Task, TypicalPods};
///
/// let t4 = NodeType {
///     gpu_model: Some(GpuModel::T4),
///     gpu_count: 2,
///     cpu_milli: 32_000,
///     memory_mib: 131_072,
/// };
/// let nodes = (0..3).map(|n| (format!("n{n}"), t4));
/// let cluster = Cluster::new(nodes, CpuPowerProfile::Reference).unwrap();
/// let tasks = vec![
///     Task::new("a", 4_000, 8_192, 1, 500),
///     Task::new("b", 4_000, 8_192, 1, 500),
/// ];
/// let problem = Problem::new(cluster, TypicalPods::default(), tasks);
/// let options = Options::new(SolveOptions::default());
///
/// let power = solve(&problem, Objective::Power, Method::PerNode, &options).unwrap();
/// assert_eq!(power.status, SolveStatus::Optimal);
/// let (a, b) = (power.placement[0].unwrap(), power.placement[1].unwrap());
/// assert_eq!((a.node, a.devices), (b.node, b.devices), "one device holds both");
///
/// let by_columns = Method::ColumnGeneration;
/// let same = solve(&problem, Objective::Power, by_columns, &options).unwrap();
/// assert_eq!(same.incumbent, power.incumbent);
///
/// let alloc = solve(&problem, Objective::Alloc, Method::PerNode, &options).unwrap();
/// assert_eq!(alloc.incumbent, Some(1_000.0));
/// ```
pub fn solve(
    problem: &Problem,
    objective: Objective,
    method: Method,
    options: &Options,
) -> Result<SolveReport, SolveError> {
    Session::new().solve(problem, objective, method, options)
}

/// The least power of `problem` (the tasks the warm start places, a first-fit placement's
/// without one) where an empty node may sleep, `sleep_watts` per node type, by the
/// per-node MIP with an `awake` binary per node; what HiGHS proved, in its own terms. The
/// exact counterpart of [`Session::power_bound`] on a few nodes.
pub fn min_power_sleeping(
    problem: &Problem,
    options: &Options,
    sleep_watts: Option<&[f64]>,
) -> Result<PowerMip, SolveError> {
    let view = partial_view(problem, options)?;
    crate::min_power::min_power_sleeping(&view, sleep_watts, &options.limits)
}

/// The formulations' view of `problem`, started from the warm start (checked) or a
/// first-fit placement, which must place every task where `objective` places them all.
fn view<'p>(
    problem: &'p Problem,
    objective: Objective,
    options: &Options,
) -> Result<Snapshot<'p>, SolveError> {
    let view = partial_view(problem, options)?;
    let placed = view.placed_tasks().len();
    if options.warm_start.is_none() && objective != Objective::Alloc && placed < problem.tasks.len()
    {
        return Err(SolveError::Problem(format!(
            "first fit placed {placed} of {} tasks, and {} places every task: give a warm start that places them",
            problem.tasks.len(),
            objective.name()
        )));
    }
    Ok(view)
}

/// The formulations' view of `problem`, started from the warm start (checked) or a
/// first-fit placement: the tasks it places are the ones power and fragmentation place.
fn partial_view<'p>(problem: &'p Problem, options: &Options) -> Result<Snapshot<'p>, SolveError> {
    let start = match &options.warm_start {
        Some(start) => start.clone(),
        None => first_fit(&problem.cluster, &problem.tasks),
    };
    Snapshot::new(
        &problem.cluster,
        &problem.typical,
        &problem.tasks,
        start,
        0.0,
    )
}
