//! Exact gaps on the full cluster by column generation (Gilmore–Gomory configuration LP).
//!
//! Identical nodes are interchangeable, so a placement is, per node type `τ`, a multiset of
//! one-node configurations. The master ([`master`]) chooses how many nodes take each
//! configuration; pricing ([`pricing`]) finds the configuration of a type that improves the
//! master most, exactly (the per-node model on one node); the Lagrangian bound ([`bound`])
//! is valid at every iteration; the integer master over the generated columns
//! ([`integer`]) gives a real placement, checked by `check_placements`, reported through
//! the same [`SolveReport`] as every other solve. When the LP bound is proven and an
//! integer gap is left, branch and price ([`branch`]) spends the time that is left on it.
//!
//! The column pool starts from the heuristic's own node configurations, so the master is
//! feasible from the first iteration and the integer master is never worse than the
//! heuristic.

mod bound;
mod branch;
mod carry;
mod column;
mod dive;
mod dominance;
mod front;
mod generate;
mod greedy;
mod incumbent;
mod integer;
mod master;
mod pattern_pricing;
mod pricing;
mod pricing_case;
mod problem;

use std::time::Instant;

/// The least time left after the integer phase for which column generation resumes.
const RESUMED_PRICING_MIN_S: f64 = 0.5;
/// The least time left after a converged column generation for which branching starts.
const BRANCH_MIN_S: f64 = 0.2;

pub use self::carry::ColumnCarry;
pub use self::front::{column_generation_front, PowerFragFront};
pub use self::pricing_case::{PricingCase, PricingOutcome};
pub use self::problem::CgStats;
use self::problem::Problem;

use self::column::{heuristic_columns, ColumnPool, TypeCluster};
use self::generate::{add_columns, generate};
use self::incumbent::{find_incumbent, finish_reserve_s, pricing_share, Incumbent};
use self::master::Master;
use crate::eval::{power_watts, state_of};
use crate::frag_devices::device_bound;
use crate::model::Demand;
use crate::shapes::Shapes;
use crate::snapshot::Snapshot;
use crate::solve::{relative_gap, Objective, SolveOptions, SolveReport, SolveStatus};
use gapbench_results::best_known::meets;

/// Solves `objective` on `snapshot` by column generation (the report reads like any
/// other solve's: status, incumbent, bound, gap, placement), with the figures of the run,
/// for one checkpoint of a sweep: starts from the configurations `carry` holds from earlier checkpoints (those that fit) and leaves it the
/// ones this solve's LP and integer solution used.
pub fn column_generation_carrying(
    snapshot: &Snapshot,
    objective: Objective,
    options: &SolveOptions,
    carry: &mut ColumnCarry,
) -> (SolveReport, CgStats) {
    run(snapshot, objective, None, options, carry)
}

/// [`column_generation_carrying`] of fragmentation with its device bound given (`None`:
/// none), for solves of one task set from several starts, which share it.
pub(crate) fn frag_column_generation_with(
    snapshot: &Snapshot,
    device_bound: Option<f64>,
    options: &SolveOptions,
    carry: &mut ColumnCarry,
) -> SolveReport {
    let prior = Some(PriorBound(device_bound));
    run(snapshot, Objective::Frag, prior, options, carry).0
}

fn run(
    snapshot: &Snapshot,
    objective: Objective,
    prior: Option<PriorBound>,
    options: &SolveOptions,
    carry: &mut ColumnCarry,
) -> (SolveReport, CgStats) {
    let clock = Instant::now();
    let mut stats = CgStats::default();
    match solve(
        snapshot, objective, prior, options, &clock, &mut stats, carry,
    ) {
        Ok(report) => (report, stats),
        Err(message) => (
            SolveReport::error(objective, message, clock.elapsed().as_secs_f64()),
            stats,
        ),
    }
}

/// One solve; `prior` is computed here when not given.
fn solve(
    snapshot: &Snapshot,
    objective: Objective,
    prior: Option<PriorBound>,
    options: &SolveOptions,
    clock: &Instant,
    stats: &mut CgStats,
    carry: &mut ColumnCarry,
) -> Result<SolveReport, String> {
    let (shapes, types, demand) = inputs(snapshot, objective, options)?;
    let prior = match prior {
        Some(prior) => prior,
        None => PriorBound::of(snapshot, objective, &shapes, options)?,
    };
    let problem = Problem::new(snapshot, objective, options, clock, &types, &shapes, demand);
    let (mut pool, mut master, start) = start_master(&problem, carry, stats)?;
    if prior.met_by(problem.heuristic_value) {
        // The heuristic's placement meets the bound: nothing to search.
        let incumbent = Incumbent {
            value: problem.heuristic_value,
            placement: snapshot.heuristic.clone(),
            used_columns: start.iter().map(|&(c, _)| c).collect(),
        };
        return finish(
            &problem,
            carry,
            &pool,
            incumbent,
            prior.raise(f64::NEG_INFINITY),
            false,
        );
    }

    let pricing_deadline = pricing_share(options.time_limit_s) * options.time_limit_s;
    let generated = generate(
        &problem,
        &mut pool,
        &mut master,
        stats,
        pricing_deadline,
        None,
    )?;
    let bound = generated.bound;
    let pool_before_incumbent = pool.len();
    let mut incumbent = find_incumbent(
        &problem,
        &mut pool,
        start,
        generated.last_lambda,
        generated.last_duals.as_ref(),
        stats,
    )?;
    let bound = close_the_gap(
        &problem,
        (&mut pool, &mut master, pool_before_incumbent),
        &mut incumbent,
        bound,
        prior,
        stats,
    )?;
    let converged = stats.converged;
    finish(
        &problem,
        carry,
        &pool,
        incumbent,
        prior.raise(bound),
        converged,
    )
}

/// What the time left after the integer phase buys: column generation resumed with the
/// integer phase's columns (the pool's from `pool_before_incumbent` on) where it had not
/// converged, then branch and price, unless the incumbent is already within the requested
/// gap of `bound` (`mip_gap` means stop there) or meets `prior`. Returns the bound.
fn close_the_gap(
    problem: &Problem,
    (pool, master, pool_before_incumbent): (&mut ColumnPool, &mut Master, usize),
    incumbent: &mut Incumbent,
    mut bound: f64,
    prior: PriorBound,
    stats: &mut CgStats,
) -> Result<f64, String> {
    let options = problem.options;
    let finish_s = options.time_limit_s - finish_reserve_s(options.time_limit_s);
    let within_gap = |bound: f64, value: f64| {
        prior.met_by(value) || relative_gap(value, problem.sign * bound) <= options.mip_rel_gap
    };
    let time_left = || finish_s - problem.clock.elapsed().as_secs_f64();
    if !stats.converged
        && !within_gap(bound, incumbent.value)
        && time_left() >= RESUMED_PRICING_MIN_S
    {
        for (i, column) in pool.columns.iter().enumerate().skip(pool_before_incumbent) {
            master.add(column, i)?;
        }
        let value = Some(incumbent.value);
        let resumed = generate(problem, pool, master, stats, finish_s, value)?;
        bound = bound.max(resumed.bound);
        stats.lagrangian_bound = bound;
    }
    // The LP bound is proven and an integer gap is left: branch on what time is left. The
    // prior bound holds in every tree node, so the tree ends once the incumbent meets it.
    if stats.converged && !within_gap(bound, incumbent.value) && time_left() >= BRANCH_MIN_S {
        let root = prior.raise(bound);
        let tree = branch::branch_and_price(problem, pool, incumbent, root, finish_s, stats)?;
        bound = bound.max(tree);
    }
    Ok(bound)
}

/// A bound known before column generation starts (minimisation inside): fragmentation's
/// device relaxation ([`crate::frag_devices`]), integral where the configuration LP is not,
/// on clusters small enough for it.
#[derive(Debug, Clone, Copy)]
struct PriorBound(Option<f64>);

impl PriorBound {
    fn of(
        snapshot: &Snapshot,
        objective: Objective,
        shapes: &Shapes,
        options: &SolveOptions,
    ) -> Result<PriorBound, String> {
        Ok(PriorBound(match objective {
            Objective::Frag => device_bound(snapshot.cluster, snapshot.typical, shapes, options)?,
            _ => None,
        }))
    }

    /// A placement of `value` meets the bound: it is optimal.
    fn met_by(self, value: f64) -> bool {
        self.0.is_some_and(|bound| meets(value, bound))
    }

    /// `bound`, or the prior bound where it is higher.
    fn raise(self, bound: f64) -> f64 {
        self.0.map_or(bound, |prior| prior.max(bound))
    }
}

/// Leaves `carry` the columns `incumbent` used, and reports it against `bound`
/// (minimisation inside).
fn finish(
    problem: &Problem,
    carry: &mut ColumnCarry,
    pool: &ColumnPool,
    incumbent: Incumbent,
    bound: f64,
    converged: bool,
) -> Result<SolveReport, String> {
    let context = &problem.context;
    let used = incumbent.used_columns.clone();
    carry.keep(problem.objective, context.types, context.shapes, pool, used);
    report(problem, incumbent, problem.sign * bound, converged)
}

/// The shapes of the tasks an objective places, the node types and the demand sense.
fn inputs(
    snapshot: &Snapshot,
    objective: Objective,
    options: &SolveOptions,
) -> Result<(Shapes, Vec<TypeCluster>, Demand), String> {
    let (indices, demand) = match objective {
        Objective::Power | Objective::Frag => (snapshot.placed_tasks(), Demand::Exactly),
        Objective::Alloc => ((0..snapshot.tasks.len()).collect(), Demand::AtMost),
    };
    let shapes = snapshot.checked_shapes(options, indices)?;
    let types = TypeCluster::of(snapshot.cluster, objective, snapshot.typical, 0.0)?;
    Ok((shapes, types, demand))
}

/// The pool, the master over it and the heuristic's `(column, nodes)` uses.
type Started = (ColumnPool, Master, Vec<(usize, u32)>);

/// The heuristic's columns, the master over them (with power's exchange rows) and the
/// columns `carry` holds that fit: where every column generation starts.
fn start_master(
    problem: &Problem,
    carry: &ColumnCarry,
    stats: &mut CgStats,
) -> Result<Started, String> {
    let (objective, types, shapes) = (
        problem.objective,
        problem.context.types,
        problem.context.shapes,
    );
    let mut pool = ColumnPool::default();
    let start = heuristic_columns(problem.snapshot, types, shapes, objective, &mut pool)?;
    stats.initial_columns = pool.len();
    let mut master = Master::over_pool(
        &pool,
        &problem.type_nodes,
        &problem.shape_counts,
        problem.demand,
        problem.options.threads,
    )?;
    if objective == Objective::Power {
        for (large, small) in dominance::exchange_pairs(&shapes.shapes) {
            master.add_exchange(large, small)?;
        }
    }
    let carried = carry.columns(objective, types, shapes, |t, slots| {
        problem.context.column(t, slots)
    });
    stats.carried_columns = carried.len();
    add_columns(&mut pool, &mut master, carried)?;
    Ok((pool, master, start))
}

/// A lower bound on the least power of the snapshot's placed tasks, by column generation
/// (the best Lagrangian bound reached within the limits) and, when
/// `SolveOptions::max_branch_nodes` asks for it, branch and price on node and task counts
/// (no placement is built: the bound is all it gives).
#[derive(Debug, Clone, PartialEq)]
pub struct PowerBound {
    /// Watts; valid whatever `converged` and `tree` say (see [`bound`] and [`branch`]).
    pub watts: f64,
    /// Column generation's own bound, before branching (`watts` without a tree).
    pub lp_watts: f64,
    /// Pricing proved the master LP optimal: `lp_watts` is the configuration LP's optimum.
    pub converged: bool,
    /// What branching did, if it ran.
    pub tree: Option<PowerTree>,
    pub stats: CgStats,
}

/// The branch-and-price tree of a power bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerTree {
    /// Tree nodes solved.
    pub nodes: usize,
    /// The tree was closed: `watts` is the least power of an integer placement.
    pub closed: bool,
    /// The time limit stopped it (the bound holds, but may differ between runs).
    pub out_of_time: bool,
}

/// [`PowerBound`] of `snapshot` under the cluster's own power models, warm-started from
/// and leaving its LP's columns in `carry`. `sleep_watts` (one entry per node type of the
/// cluster, by type id) makes empty nodes draw that instead of their idle power: the
/// empty cluster then costs `Σ N_τ·sleep_τ` and every non-empty configuration `P(c) −
/// sleep_τ` (see `TypeCluster::asleep`).
pub fn power_bound_carrying(
    snapshot: &Snapshot,
    options: &SolveOptions,
    sleep_watts: Option<&[f64]>,
    carry: &mut ColumnCarry,
) -> Result<PowerBound, String> {
    let clock = Instant::now();
    let mut stats = CgStats::default();
    let (shapes, mut types, demand) = inputs(snapshot, Objective::Power, options)?;
    if let Some(sleep) = sleep_watts {
        if sleep.len() != snapshot.cluster.node_types.len() {
            return Err(format!(
                "{} sleep powers for {} node types",
                sleep.len(),
                snapshot.cluster.node_types.len()
            ));
        }
        for kind in &mut types {
            kind.asleep(sleep[kind.type_id]);
        }
    }
    let problem = Problem::new(
        snapshot,
        Objective::Power,
        options,
        &clock,
        &types,
        &shapes,
        demand,
    );
    let (mut pool, mut master, start) = start_master(&problem, carry, &mut stats)?;
    let generated = generate(
        &problem,
        &mut pool,
        &mut master,
        &mut stats,
        options.time_limit_s,
        None,
    )?;
    let used: Vec<usize> = generated.last_lambda.iter().map(|&(c, _)| c).collect();
    // Power only grows with what a node holds, so the empty cluster's power `C₀` is a
    // bound too (the only one when the time limit left no pricing round).
    let lp_watts = generated.bound.max(problem.constant);
    // The warm start's placement is an integer solution: its cost prunes the tree.
    let start_watts = problem.constant + integer::solution_cost(&pool, &start);
    let tree = match options.max_branch_nodes {
        Some(max_nodes) if lp_watts < start_watts * (1.0 - 1e-9) - 1e-6 => {
            let limits = branch::TreeLimits {
                max_nodes,
                rounds_per_node: options.max_pricing_rounds,
                scans: options
                    .max_pricing_rounds
                    .map(|_| generate::CAPPED_PRICING_SCANS),
                deadline_s: options.time_limit_s,
            };
            Some(branch::integer_bound(
                &problem,
                &mut pool,
                start_watts,
                lp_watts,
                &limits,
                &mut stats,
            )?)
        }
        _ => None,
    };
    carry.keep(Objective::Power, &types, &shapes, &pool, used);
    Ok(PowerBound {
        watts: tree.map_or(lp_watts, |(watts, _)| watts.max(lp_watts)),
        lp_watts,
        converged: stats.converged,
        tree: tree.map(|(_, tree)| tree),
        stats,
    })
}

/// `raw_bound` within what the objective can reach at all: allocation never exceeds the
/// GPUs there are, nor what the tasks ask for, and fragmentation is never below 0 (early
/// in column generation the Lagrangian bound can be weaker than that).
fn within_natural_limits(problem: &Problem, raw_bound: f64) -> f64 {
    let (types, shapes) = (problem.context.types, problem.context.shapes);
    match problem.objective {
        Objective::Alloc => {
            let capacity: f64 = types
                .iter()
                .map(|t| t.nodes as f64 * f64::from(t.node_type().gpu_milli()))
                .sum();
            let asked: f64 = shapes
                .shapes
                .iter()
                .map(|s| s.count() as f64 * f64::from(s.total_gpu_milli()))
                .sum();
            raw_bound.min(capacity).min(asked)
        }
        Objective::Frag => raw_bound.max(0.0),
        Objective::Power => raw_bound,
    }
}

/// The report of a solve: the incumbent, and the bound (`raw_bound`, in the objective's own
/// sense) capped by what needs no solve and rounded for integral objectives. The status
/// says what was proven: `optimal` (they meet), `gap_limit` (within the requested
/// `mip_rel_gap`), `lp_bound` (column generation `converged` and branching ([`branch`])
/// did not close the rest: the bound is the LP's optimum, or the tree's where it rose
/// higher, and the integer gap is left) or `time_limit` (the bound could still rise).
fn report(
    problem: &Problem,
    best: Incumbent,
    raw_bound: f64,
    converged: bool,
) -> Result<SolveReport, String> {
    let (snapshot, objective) = (problem.snapshot, problem.objective);
    let incumbent = best.value;
    let raw_bound = within_natural_limits(problem, raw_bound);
    let bound = if raw_bound.is_finite() {
        let rounded = match (objective.integral(), objective.maximise()) {
            (true, false) => (raw_bound - 1e-6).ceil(),
            (true, true) => (raw_bound + 1e-6).floor(),
            (false, _) => raw_bound,
        };
        let beyond = if objective.maximise() {
            rounded < incumbent - 1e-6 * incumbent.abs().max(1.0)
        } else {
            rounded > incumbent + 1e-6 * incumbent.abs().max(1.0)
        };
        if beyond {
            return Err(format!(
                "the Lagrangian bound {rounded} is beyond the feasible value {incumbent}"
            ));
        }
        Some(if objective.maximise() {
            rounded.max(incumbent)
        } else {
            rounded.min(incumbent)
        })
    } else {
        None
    };
    let tolerance = 1e-6 * incumbent.abs().max(1.0);
    let requested = problem.options.mip_rel_gap;
    let status = match bound {
        Some(b) if (b - incumbent).abs() <= tolerance => SolveStatus::Optimal,
        Some(b) if relative_gap(incumbent, b) <= requested => SolveStatus::GapLimit,
        Some(_) if converged => SolveStatus::LpBound,
        _ => SolveStatus::TimeLimitWithIncumbent,
    };
    let bound = match status {
        SolveStatus::Optimal => Some(incumbent),
        _ => bound,
    };
    let secondary_power_watts = (objective == Objective::Alloc).then(|| {
        power_watts(
            snapshot.cluster,
            &state_of(snapshot.cluster, snapshot.tasks, &best.placement),
        ) as f64
    });
    Ok(SolveReport {
        objective,
        status,
        incumbent: Some(incumbent),
        bound,
        mip_gap: bound.map(|b| relative_gap(incumbent, b)),
        solve_seconds: problem.clock.elapsed().as_secs_f64(),
        placement: best.placement,
        secondary_power_watts,
    })
}
