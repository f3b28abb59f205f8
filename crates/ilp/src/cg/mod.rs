//! Exact gaps on the full cluster by column generation (Gilmore–Gomory configuration LP).
//!
//! Identical nodes are interchangeable, so a placement is, per node type `τ`, a multiset of
//! one-node configurations. The master ([`master`]) chooses how many nodes take each
//! configuration; pricing ([`pricing`]) finds the configuration of a type that improves the
//! master most, exactly (the per-node model on one node); the Lagrangian bound ([`bound`])
//! is valid at every iteration; the integer master over the generated columns
//! ([`integer`]) gives a real placement, checked by `check_placements`, reported through
//! the same [`SolveReport`] as every other solve.
//!
//! The column pool starts from the heuristic's own node configurations, so the master is
//! feasible from the first iteration and the integer master is never worse than the
//! heuristic.

mod bound;
mod carry;
mod column;
mod devices;
mod dive;
mod dominance;
mod greedy;
mod integer;
mod knapsack;
mod master;
mod pricing;

use std::time::{Duration, Instant};

use gapbench_model::Placement;

pub use self::carry::ColumnCarry;

use self::bound::{lagrangian_bound, project, Smoothing};
use self::column::{heuristic_columns, Added, ColumnPool, TypeCluster};
use self::dive::Dive;
use self::integer::{expand, round_and_repair, solution_cost, solve_integer_master, Repair};
use self::master::Master;
use self::pricing::PricingContext;
use crate::eval::{alloc_gpu_milli, frag_milli, power_watts, state_of};
use crate::model::Demand;
use crate::snapshot::{check_assignment, Snapshot};
use crate::solve::{relative_gap, Objective, SolveOptions, SolveReport, SolveStatus};

/// The share of the time limit column generation may use before the integer master runs.
const PRICING_SHARE: f64 = 0.85;
/// Greedy-priced iterations in a row before the exact pricing runs anyway.
const EXACT_EVERY: usize = 30;
/// Shares of the LP's node counts the rounding keeps, tried in turn until
/// [`ROUNDINGS_KEPT`] repairs work.
const ROUNDING_KEEP: [f64; 4] = [1.0, 0.9, 0.75, 0.5];
const ROUNDINGS_KEPT: usize = 2;
/// The share of the integer phase diving may use (the integer master gets the rest): when
/// plain rounding worked, and when it did not.
const DIVE_SHARE: f64 = 0.25;
const DIVE_SHARE_AFTER_FAILED_ROUNDING: f64 = 0.75;
/// Columns of a type the local search starts from, besides the greedy fills.
const SEEDS_PER_TYPE: usize = 3;
/// Time limit of one pricing MIP at first (doubled whenever a round stalls on it): its
/// dual bound still counts when it stops. A type gets between [`SMALLEST_TYPE_SHARE`] of
/// it and all of it, by its node count: the bound loses `N_τ` times its pricing gap.
const PRICING_TIME_LIMIT_S: f64 = 2.0;
const SMALLEST_TYPE_SHARE: f64 = 0.125;
/// The share of a pricing call's time the knapsack search may take: while it proves the
/// type, and once it did not.
const SEARCH_SHARE: f64 = 0.5;
const SEARCH_SHARE_AFTER_FAILING: f64 = 0.1;
/// How far from optimal a pricing MIP may stop, per node: its dual bound keeps the
/// Lagrangian bound valid whatever the gap, and the bound loses at most `N_τ` times the
/// gap to it. So the gap is a share of the bound's current distance from the LP, spread
/// over the cluster's nodes (`ΣN_τ·gap = share·(LP − L)`), divided by ten whenever a round
/// stalls, and never below a floor share of the LP per node. A relative gap would not do:
/// a pricing value is far from 0 (e.g. −1,848 W for an 8-GPU node) while what matters is
/// its distance to the convexity dual, a few watts near the end.
const PRICING_GAP_SHARE: f64 = 0.1;
const PRICING_GAP_FLOOR: f64 = 1e-5;
/// The per-node gap before any bound: a share of the LP per node.
const PRICING_GAP_FIRST: f64 = 1e-2;
/// Wentges smoothing weight of the best prices so far.
const SMOOTHING_ALPHA: f64 = 0.5;

/// How a column-generation solve went.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CgStats {
    /// Master solves (each followed by pricing every node type).
    pub iterations: usize,
    /// Columns generated, the heuristic's configurations included.
    pub columns: usize,
    /// The heuristic's distinct configurations (the initial pool).
    pub initial_columns: usize,
    /// Configurations carried from an earlier checkpoint that fit this one.
    pub carried_columns: usize,
    /// The last restricted master LP value (constant included).
    pub lp_value: f64,
    /// The best Lagrangian bound (before rounding).
    pub lagrangian_bound: f64,
    /// Pricing proved the master LP optimal (no improving column).
    pub converged: bool,
    pub pricing_seconds: f64,
    /// Of `pricing_seconds`: master LP solves, greedy pricing, exact pricing rounds.
    pub master_seconds: f64,
    pub greedy_seconds: f64,
    pub exact_seconds: f64,
    pub integer_seconds: f64,
    /// The best rounding of the LP (`None`: every repair failed).
    pub rounding: Option<Rounding>,
    /// The objective's value of the integer master's solution, if it returned one.
    pub integer_master_value: Option<f64>,
}

/// A rounded and repaired LP solution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rounding {
    /// The share of the LP's nodes it kept.
    pub keep: f64,
    /// Rounded after diving, or straight from the LP.
    pub dived: bool,
    /// The objective's value of its placement.
    pub value: f64,
}

/// Solves `objective` on `snapshot` by column generation; the report reads like any
/// other solve's (status, incumbent, bound, gap, placement).
pub fn column_generation(
    snapshot: &Snapshot,
    objective: Objective,
    options: &SolveOptions,
) -> SolveReport {
    column_generation_with_stats(snapshot, objective, options).0
}

/// [`column_generation`] with the figures of the run.
pub fn column_generation_with_stats(
    snapshot: &Snapshot,
    objective: Objective,
    options: &SolveOptions,
) -> (SolveReport, CgStats) {
    column_generation_carrying(snapshot, objective, options, &mut ColumnCarry::new())
}

/// [`column_generation_with_stats`] for one checkpoint of a sweep: starts from the
/// configurations `carry` holds from earlier checkpoints (those that fit) and leaves it the
/// ones this solve's LP and integer solution used.
pub fn column_generation_carrying(
    snapshot: &Snapshot,
    objective: Objective,
    options: &SolveOptions,
    carry: &mut ColumnCarry,
) -> (SolveReport, CgStats) {
    let clock = Instant::now();
    let mut stats = CgStats::default();
    match solve(snapshot, objective, options, &clock, &mut stats, carry) {
        Ok(report) => (report, stats),
        Err(message) => (
            SolveReport::error(objective, message, clock.elapsed().as_secs_f64()),
            stats,
        ),
    }
}

/// `work(0..n)` on `threads` scoped threads (in order of the index, whoever runs it).
///
/// Not a rayon pool: a solve may itself run on a rayon worker (the bench's gap cells), and
/// a worker blocked in another pool's `install` may run its own pool's jobs meanwhile — a
/// whole other gap study — so pricing could wait behind it.
fn in_parallel<T: Send>(n: usize, threads: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
    if threads <= 1 || n <= 1 {
        return (0..n).map(work).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<(usize, T)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.min(n))
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= n {
                            break done;
                        }
                        done.push((i, work(i)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| {
                w.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// The `k` columns of type `t` with the least reduced cost under `prices`.
fn best_columns<'a>(
    pool: &'a ColumnPool,
    t: usize,
    prices: &[f64],
    k: usize,
) -> Vec<&'a column::Column> {
    let mut of_type: Vec<(&column::Column, f64)> = pool
        .columns
        .iter()
        .filter(|c| c.type_index == t)
        .map(|c| (c, c.cost - c.priced(prices)))
        .collect();
    of_type.sort_by(|a, b| a.1.total_cmp(&b.1));
    of_type.into_iter().take(k).map(|(c, _)| c).collect()
}

/// Adds new (or cheaper) columns to the pool and the master.
fn add_columns(
    pool: &mut ColumnPool,
    master: &mut Master,
    columns: Vec<column::Column>,
) -> Result<(), String> {
    for column in columns {
        match pool.add(column) {
            Added::New(i) | Added::Cheaper(i) => master.add(&pool.columns[i], i)?,
            Added::Known(_) => {}
        }
    }
    Ok(())
}

/// The objective's value of a full placement, by the model crate's ruler.
fn evaluate(snapshot: &Snapshot, objective: Objective, placement: &[Option<Placement>]) -> f64 {
    let state = || state_of(snapshot.cluster, snapshot.tasks, placement);
    match objective {
        Objective::Power => power_watts(snapshot.cluster, &state()) as f64,
        Objective::Alloc => alloc_gpu_milli(snapshot.tasks, placement) as f64,
        Objective::Frag => frag_milli(snapshot.cluster, snapshot.typical, &state()),
    }
}

fn solve(
    snapshot: &Snapshot,
    objective: Objective,
    options: &SolveOptions,
    clock: &Instant,
    stats: &mut CgStats,
    carry: &mut ColumnCarry,
) -> Result<SolveReport, String> {
    let (indices, demand) = match objective {
        Objective::Power | Objective::Frag => (snapshot.placed_tasks(), Demand::Exactly),
        Objective::Alloc => ((0..snapshot.tasks.len()).collect(), Demand::AtMost),
    };
    let shapes = snapshot.checked_shapes(options, indices)?;
    let types = TypeCluster::of(snapshot.cluster, objective, snapshot.typical)?;
    let type_nodes: Vec<usize> = types.iter().map(|t| t.nodes).collect();
    let shape_counts: Vec<usize> = shapes.shapes.iter().map(|s| s.count()).collect();
    // Minimisation inside: allocation is `−allocated`.
    let sign = if objective.maximise() { -1.0 } else { 1.0 };
    let constant: f64 = types.iter().map(|t| t.nodes as f64 * t.empty_cost).sum();

    let mut pool = ColumnPool::default();
    let start = heuristic_columns(snapshot, &types, &shapes, objective, &mut pool)?;
    stats.initial_columns = pool.len();
    let mut master = Master::over_pool(&pool, &type_nodes, &shape_counts, demand, options.threads)?;
    let exchanges = if objective == Objective::Power {
        dominance::exchange_pairs(&shapes.shapes)
    } else {
        Vec::new()
    };
    for &(large, small) in &exchanges {
        master.add_exchange(large, small)?;
    }
    let heuristic_value = evaluate(snapshot, objective, &snapshot.heuristic);
    let context = PricingContext {
        objective,
        shapes: &shapes,
        tasks: snapshot.tasks,
        typical: snapshot.typical,
        types: &types,
        shape_of: shapes.shape_of_task(snapshot.tasks.len()),
        typical_probability: snapshot.typical.pods.iter().map(|p| p.probability).sum(),
    };

    let carried = carry.columns(objective, &types, &shapes, |t, slots| {
        context.column(t, slots)
    });
    stats.carried_columns = carried.len();
    add_columns(&mut pool, &mut master, carried)?;

    // Column generation.
    let pricing_clock = Instant::now();
    let pricing_deadline = PRICING_SHARE * options.time_limit_s;
    let mut smoothing = Smoothing::new(SMOOTHING_ALPHA);
    let threads = options.threads.unwrap_or(1).max(1) as usize;
    let mut since_exact = 0;
    let mut pricing_time_limit_s = PRICING_TIME_LIMIT_S;
    let mut pricing_gap_tightening = 1.0;
    let total_nodes: f64 = type_nodes.iter().sum::<usize>().max(1) as f64;
    // Big types first: they take the longest and weigh most in the bound.
    let mut by_size: Vec<usize> = (0..types.len()).collect();
    by_size.sort_by_key(|&t| std::cmp::Reverse(types[t].nodes));
    let most_nodes = type_nodes.iter().copied().max().unwrap_or(1).max(1) as f64;
    let mut search_proves = vec![true; types.len()];
    let mut last_lambda: Vec<(usize, f64)> = Vec::new();
    loop {
        let left = pricing_deadline - clock.elapsed().as_secs_f64();
        if left <= 0.0 {
            break;
        }
        let master_clock = Instant::now();
        let solved = master.solve(left)?;
        stats.master_seconds += master_clock.elapsed().as_secs_f64();
        let Some(lp) = solved else {
            break;
        };
        last_lambda = master.used_pool_columns(&lp);
        stats.iterations += 1;
        stats.lp_value = constant + lp.value;
        let mut duals = lp.demand_duals.clone();
        project(&mut duals, demand);
        let tolerance = 1e-9 * stats.lp_value.abs().max(1.0);
        let improves = |t: usize, column: &column::Column| {
            column.cost - column.priced(&duals) - lp.convexity_duals[t] < -tolerance
        };

        // Greedy pricing at the master's duals first; the MIP only when it finds nothing
        // (or every few rounds, to move the bound).
        let greedy_clock = Instant::now();
        let mut improving: Vec<column::Column> = Vec::new();
        let mut best_heuristic: Vec<Option<(column::Column, f64)>> = vec![None; types.len()];
        for (t, best) in best_heuristic.iter_mut().enumerate() {
            // Local search on fragmentation is slow on the large types: the deadline holds.
            if clock.elapsed().as_secs_f64() > pricing_deadline {
                break;
            }
            let seeds = best_columns(&pool, t, &duals, SEEDS_PER_TYPE);
            for (column, reduced) in context.heuristic(t, &duals, &seeds) {
                if best.as_ref().is_none_or(|(_, r)| reduced < *r) {
                    *best = Some((column.clone(), reduced));
                }
                if improves(t, &column) && since_exact < EXACT_EVERY {
                    improving.push(column);
                }
            }
        }
        stats.greedy_seconds += greedy_clock.elapsed().as_secs_f64();
        if !improving.is_empty() {
            since_exact += 1;
            add_columns(&mut pool, &mut master, improving)?;
            continue;
        }
        since_exact = 0;
        if clock.elapsed().as_secs_f64() > pricing_deadline {
            break;
        }
        let prices = smoothing.prices(&duals);
        // Each type's MIP gets what is left when it starts: the types share the threads,
        // so a limit fixed up front would let the round overrun the deadline.
        let lp_scale = stats.lp_value.abs().max(1.0);
        let bound_gap = stats.lp_value - smoothing.best_bound();
        let pricing_abs_gap = if bound_gap.is_finite() {
            (PRICING_GAP_SHARE * pricing_gap_tightening * bound_gap)
                .max(PRICING_GAP_FLOOR * lp_scale)
        } else {
            PRICING_GAP_FIRST * lp_scale
        } / total_nodes;
        let pricing_options = |t: usize| SolveOptions {
            time_limit_s: (pricing_deadline - clock.elapsed().as_secs_f64())
                .min(
                    pricing_time_limit_s
                        * SMALLEST_TYPE_SHARE.max(types[t].nodes as f64 / most_nodes),
                )
                .max(0.01),
            mip_rel_gap: 1e-9,
            mip_abs_gap: Some(pricing_abs_gap),
            threads: Some(1),
            ..options.clone()
        };
        let exact_clock = Instant::now();
        let mut priced = in_parallel(types.len(), threads, |k| {
            let t = by_size[k];
            let start = best_heuristic[t].as_ref().map(|(c, _)| c);
            let search_share = if search_proves[t] {
                SEARCH_SHARE
            } else {
                SEARCH_SHARE_AFTER_FAILING
            };
            let priced = context.price(t, &prices, start, &pricing_options(t), search_share);
            (t, priced)
        });
        priced.sort_by_key(|(t, _)| *t);
        let priced = priced.into_iter().map(|(_, result)| result);
        stats.exact_seconds += exact_clock.elapsed().as_secs_f64();
        let mut rho_lower = vec![0.0; types.len()];
        let mut all_proven = true;
        for (t, result) in priced.enumerate() {
            let result = result?;
            rho_lower[t] = result.lower_bound;
            search_proves[t] = result.by_search;
            all_proven &= result.proven;
            if let Some((column, _)) = result.best {
                if improves(t, &column) {
                    improving.push(column);
                }
            }
        }
        let bound = lagrangian_bound(constant, &prices, &shape_counts, &type_nodes, &rho_lower);
        let improved = !improving.is_empty();
        add_columns(&mut pool, &mut master, improving)?;
        let at_master = smoothing.record(&prices, bound, improved, &duals);
        stats.lagrangian_bound = smoothing.best_bound();
        let closed = stats.lp_value - smoothing.best_bound() <= tolerance.max(1e-6);
        let proves_heuristic = sign * heuristic_value - smoothing.best_bound() <= tolerance;
        // No improving column at the master's own duals ends column generation only when
        // every pricing MIP was solved; otherwise they get more time next round.
        let stalled = !improved && at_master;
        if (stalled && all_proven) || closed || proves_heuristic {
            stats.converged = (stalled && all_proven) || closed;
            break;
        }
        if stalled {
            pricing_time_limit_s *= 2.0;
            pricing_gap_tightening /= 10.0;
        }
    }
    stats.pricing_seconds = pricing_clock.elapsed().as_secs_f64();
    stats.columns = pool.len();
    // Integer solutions: the LP rounded and repaired, then the integer master from the
    // better of that and the heuristic; the best placement of all (the heuristic's
    // included) is the incumbent.
    let integer_clock = Instant::now();
    let mut timed_out = !stats.converged;
    let mut best = (heuristic_value, snapshot.heuristic.clone());
    // Checks and evaluates a solution, keeps it if it beats the best; returns its value.
    let mut consider = |uses: &[(usize, u32)], pool: &ColumnPool| -> Result<f64, String> {
        let placement = expand(
            snapshot.cluster,
            &types,
            pool,
            &shapes,
            uses,
            snapshot.tasks.len(),
        )?;
        check_assignment(snapshot.cluster, snapshot.tasks, &placement)
            .map_err(|e| format!("the column-generation placement fails the checker: {e}"))?;
        let value = evaluate(snapshot, objective, &placement);
        if sign * value < sign * best.0 {
            best = (value, placement);
        }
        Ok(value)
    };
    let mut start = start;
    let mut kept: Vec<usize> = last_lambda.iter().map(|&(c, _)| c).collect();
    // The LP is re-solved without exchange columns (a solution that uses them over-covers
    // some shapes; rounding wants configurations that place exactly the tasks), rounded,
    // then dived and rounded again. Diving rescues a nearly full cluster, where plain
    // rounding leaves leftovers no node takes; there it gets most of the time left, else a
    // little: the integer master gets the rest.
    let left = options.time_limit_s - clock.elapsed().as_secs_f64();
    let mut dive = Dive::new(
        &pool,
        &type_nodes,
        &shape_counts,
        demand,
        options.threads,
        left * DIVE_SHARE,
    )?;
    let mut to_round = vec![(
        false,
        dive.as_ref().map_or(last_lambda, |d| d.start.clone()),
    )];
    // For power the least-added repair first (its placements cost less), first fit if it
    // fails (it packs tighter); neither past the time limit.
    let repairs: &[Repair] = if objective == Objective::Power {
        &[Repair::LeastAdded, Repair::FirstFit]
    } else {
        &[Repair::FirstFit]
    };
    let repair_deadline = *clock + Duration::from_secs_f64(options.time_limit_s);
    while let Some((dived, lambda)) = to_round.pop() {
        // A repair can fail when the leftover tasks do not fit the leftover nodes; keeping
        // fewer of the LP's nodes leaves the repair more room, and sometimes finds a
        // cheaper packing: the first [`ROUNDINGS_KEPT`] repairs that work all count.
        let mut repaired = 0;
        for keep in ROUNDING_KEEP {
            if repaired == ROUNDINGS_KEPT {
                break;
            }
            let scaled: Vec<(usize, f64)> = lambda.iter().map(|&(c, l)| (c, keep * l)).collect();
            let rounded = repairs.iter().find_map(|&repair| {
                round_and_repair(
                    &context,
                    &mut pool,
                    &scaled,
                    demand,
                    repair,
                    repair_deadline,
                )
            });
            if let Some(rounded) = rounded {
                let value = consider(&rounded, &pool)?;
                if stats.rounding.is_none_or(|r| sign * value < sign * r.value) {
                    stats.rounding = Some(Rounding { keep, dived, value });
                }
                if solution_cost(&pool, &rounded) < solution_cost(&pool, &start) {
                    start = rounded;
                }
                repaired += 1;
            }
        }
        if let Some(dive) = dive.take() {
            let share = if stats.rounding.is_some() {
                DIVE_SHARE
            } else {
                DIVE_SHARE_AFTER_FAILED_ROUNDING
            };
            let left = options.time_limit_s - clock.elapsed().as_secs_f64();
            let deadline = Instant::now() + Duration::from_secs_f64((left * share).max(0.0));
            to_round.push((true, dive.run(deadline)?));
        }
    }
    stats.columns = pool.len();
    let left = options.time_limit_s - clock.elapsed().as_secs_f64();
    if left > 0.0 {
        if let Some(integer) =
            solve_integer_master(&pool, &types, &shape_counts, demand, &start, options, left)?
        {
            timed_out |= integer.timed_out;
            stats.integer_master_value = Some(consider(&integer.uses, &pool)?);
            kept.extend(integer.uses.iter().map(|&(c, _)| c));
        }
    } else {
        timed_out = true;
    }
    stats.integer_seconds = integer_clock.elapsed().as_secs_f64();
    kept.extend(start.iter().map(|&(c, _)| c));
    kept.sort_unstable();
    kept.dedup();
    carry.keep(objective, &types, &shapes, &pool, kept);

    let incumbent = best.0;
    let raw_bound = sign * smoothing.best_bound();
    // Allocation never exceeds the GPUs there are, nor what the tasks ask for, and
    // fragmentation is never below 0: early in column generation the Lagrangian bound can
    // be weaker than that.
    let raw_bound = if objective == Objective::Alloc {
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
    } else if objective == Objective::Frag {
        // Fragment amounts are never negative.
        raw_bound.max(0.0)
    } else {
        raw_bound
    };
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
    let status = match bound {
        Some(b) if (b - incumbent).abs() <= tolerance => SolveStatus::Optimal,
        _ if timed_out => SolveStatus::TimeLimitWithIncumbent,
        _ => SolveStatus::GapLimit,
    };
    let bound = match status {
        SolveStatus::Optimal => Some(incumbent),
        _ => bound,
    };
    let secondary_power_watts = (objective == Objective::Alloc).then(|| {
        power_watts(
            snapshot.cluster,
            &state_of(snapshot.cluster, snapshot.tasks, &best.1),
        ) as f64
    });
    Ok(SolveReport {
        objective,
        status,
        incumbent: Some(incumbent),
        bound,
        mip_gap: bound.map(|b| relative_gap(incumbent, b)),
        solve_seconds: clock.elapsed().as_secs_f64(),
        placement: best.1,
        secondary_power_watts,
    })
}
