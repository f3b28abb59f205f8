//! The column-generation loop: solve the restricted master, price every node type (greedy
//! first, exact when the greedy finds nothing), add the improving columns, and keep the
//! best Lagrangian bound, until pricing proves the LP optimal, the bound meets the LP or
//! the heuristic, `max_pricing_rounds` exact rounds are done, or its deadline runs out (first
//! [`super::incumbent::pricing_share`] of the time limit; after the integer phase,
//! whatever it left).

use std::time::{Duration, Instant};

use super::bound::{lagrangian_bound, project, Smoothing};
use super::column::{Added, Column, ColumnPool};
use super::master::Master;
use super::{CgStats, Problem};
use crate::solve::relative_gap;

/// Greedy-priced iterations in a row before the exact pricing runs anyway.
const EXACT_EVERY: usize = 30;
/// Columns of a type the local search starts from, besides the greedy fills.
pub(super) const SEEDS_PER_TYPE: usize = 3;
/// Time one exact pricing call may take at first (doubled whenever a round stalls on it): its
/// bound still counts when it stops. A type gets between [`SMALLEST_TYPE_SHARE`] of it and
/// all of it, by its node count: the bound loses `N_τ` times its pricing gap.
const PRICING_TIME_LIMIT_S: f64 = 2.0;
const SMALLEST_TYPE_SHARE: f64 = 0.125;
/// Patterns one exact pricing call may look at at first under a round cap
/// (`max_pricing_rounds`), in place of its clock share (doubled, like it, whenever a round
/// stalls): the same work, hence the same bound, on every run.
/// Measured on the paper bench's replay bounds: 200,000 left PWR's always-on bound 0.05 %
/// lower after more rounds; 20,000,000 took EaCO-O's 2.5 times as long for the same bound.
const CAPPED_PRICING_SCANS: u64 = 2_000_000;

/// Wentges smoothing weight of the best prices so far.
const SMOOTHING_ALPHA: f64 = 0.5;

/// What column generation leaves for the integer phase.
pub(super) struct Generated {
    /// The last master LP solution, as `(pool index, λ)`.
    pub last_lambda: Vec<(usize, f64)>,
    /// The last master LP's duals `(y, μ)` (`y` projected onto the bound's sign), for
    /// reduced costs.
    pub last_duals: Option<(Vec<f64>, Vec<f64>)>,
    /// The best Lagrangian bound (minimisation inside: allocation's is `−allocated`).
    pub bound: f64,
}

/// Generates columns into `pool` and `master` until `pricing_deadline` (seconds on the
/// problem's clock), or until the bound is within the requested gap (`mip_rel_gap`) of
/// `incumbent`'s value when one is known; records iterations, LP value, bound and where the
/// time went in `stats` (added to what earlier calls recorded).
pub(super) fn generate(
    problem: &Problem,
    pool: &mut ColumnPool,
    master: &mut Master,
    stats: &mut CgStats,
    pricing_deadline: f64,
    incumbent: Option<f64>,
) -> Result<Generated, String> {
    let (options, clock, types, context) = (
        problem.options,
        &problem.clock,
        problem.context.types,
        &problem.context,
    );
    let (demand, sign, constant) = (problem.demand, problem.sign, problem.constant);
    let (type_nodes, shape_counts) = (&problem.type_nodes, &problem.shape_counts);
    let heuristic_value = problem.heuristic_value;
    let pricing_clock = Instant::now();
    let mut smoothing = Smoothing::new(SMOOTHING_ALPHA);
    let threads = options.threads.unwrap_or(1).max(1) as usize;
    let mut since_exact = 0;
    let mut pricing_time_limit_s = PRICING_TIME_LIMIT_S;
    let mut pricing_scans = CAPPED_PRICING_SCANS;
    // Big types first: they take the longest and weigh most in the bound.
    let mut by_size: Vec<usize> = (0..types.len()).collect();
    by_size.sort_by_key(|&t| std::cmp::Reverse(types[t].nodes));
    let most_nodes = type_nodes.iter().copied().max().unwrap_or(1).max(1) as f64;
    let mut last_lambda: Vec<(usize, f64)> = Vec::new();
    let mut last_duals = None;
    loop {
        // The round cap stops the work where the clock cannot move it (`max_pricing_rounds`).
        if options
            .max_pricing_rounds
            .is_some_and(|most| stats.exact_rounds >= most)
        {
            break;
        }
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
        last_duals = Some((duals.clone(), lp.convexity_duals.clone()));
        let tolerance = 1e-9 * stats.lp_value.abs().max(1.0);
        let improves = |t: usize, column: &Column| {
            column.cost - column.priced(&duals) - lp.convexity_duals[t] < -tolerance
        };

        // Greedy pricing at the master's duals first; the MIP only when it finds nothing
        // (or every few rounds, to move the bound).
        let greedy_clock = Instant::now();
        let mut improving: Vec<Column> = Vec::new();
        let mut best_heuristic: Vec<Option<(Column, f64)>> = vec![None; types.len()];
        for (t, best) in best_heuristic.iter_mut().enumerate() {
            // Local search on fragmentation is slow on the large types: the deadline holds.
            if clock.elapsed().as_secs_f64() > pricing_deadline {
                break;
            }
            let seeds = pool.best_of_type(t, &duals, SEEDS_PER_TYPE);
            for (column, reduced) in context.heuristic(t, &duals, &seeds, shape_counts) {
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
            add_columns(pool, master, improving)?;
            continue;
        }
        since_exact = 0;
        if clock.elapsed().as_secs_f64() > pricing_deadline {
            break;
        }
        let prices = smoothing.prices(&duals);
        // Each type's search gets what is left when it starts: the types share the
        // threads, so a limit fixed up front would let the round overrun the deadline.
        // Under a round cap each search ends at its node and scan budgets instead
        // (deterministic): only the whole deadline, a safety net, may cut it.
        let pricing_deadline_of = |t: usize| {
            let share = match options.max_pricing_rounds {
                Some(_) => f64::INFINITY,
                None => {
                    pricing_time_limit_s
                        * SMALLEST_TYPE_SHARE.max(types[t].nodes as f64 / most_nodes)
                }
            };
            let left = (pricing_deadline - clock.elapsed().as_secs_f64()).min(share);
            Instant::now() + Duration::from_secs_f64(left.max(0.01))
        };
        let exact_clock = Instant::now();
        let mut priced = in_parallel(types.len(), threads, |k| {
            let t = by_size[k];
            let start = best_heuristic[t].as_ref().map(|(c, _)| c);
            let deadline = pricing_deadline_of(t);
            let priced = match options.max_pricing_rounds {
                Some(_) => context.price_scanning(t, &prices, start, deadline, pricing_scans),
                None => context.price(t, &prices, start, deadline),
            };
            (t, priced)
        });
        priced.sort_by_key(|(t, _)| *t);
        let priced = priced.into_iter().map(|(_, result)| result);
        stats.exact_seconds += exact_clock.elapsed().as_secs_f64();
        stats.exact_rounds += 1;
        let mut rho_lower = vec![0.0; types.len()];
        let mut all_proven = true;
        for (t, result) in priced.enumerate() {
            let result = result?;
            // The search measures from the idle node: a sleeping type's configurations
            // cost `wake_cost` more (see `TypeCluster::asleep`).
            rho_lower[t] = result.lower_bound + types[t].wake_cost;
            all_proven &= result.proven;
            if let Some((column, _)) = result.best {
                if improves(t, &column) {
                    improving.push(column);
                }
            }
        }
        let bound = lagrangian_bound(constant, &prices, shape_counts, type_nodes, &rho_lower);
        let improved = !improving.is_empty();
        add_columns(pool, master, improving)?;
        let at_master = smoothing.record(&prices, bound, improved, &duals);
        stats.lagrangian_bound = smoothing.best_bound();
        let closed = stats.lp_value - smoothing.best_bound() <= tolerance.max(1e-6);
        let proves_heuristic = sign * heuristic_value - smoothing.best_bound() <= tolerance;
        let within_gap = incumbent.is_some_and(|value| {
            relative_gap(value, sign * smoothing.best_bound()) <= options.mip_rel_gap
        });
        // No improving column at the master's own duals ends column generation only when
        // every pricing MIP was solved; otherwise they get more time next round.
        let stalled = !improved && at_master;
        if (stalled && all_proven) || closed || proves_heuristic || within_gap {
            stats.converged = (stalled && all_proven) || closed;
            break;
        }
        if stalled {
            pricing_time_limit_s *= 2.0;
            pricing_scans = pricing_scans.saturating_mul(2);
        }
    }
    stats.pricing_seconds += pricing_clock.elapsed().as_secs_f64();
    stats.columns = pool.len();
    Ok(Generated {
        last_lambda,
        last_duals,
        bound: smoothing.best_bound(),
    })
}

/// Adds new (or cheaper) columns to the pool and the master.
pub(super) fn add_columns(
    pool: &mut ColumnPool,
    master: &mut Master,
    columns: Vec<Column>,
) -> Result<(), String> {
    for column in columns {
        match pool.add(column) {
            Added::New(i) | Added::Cheaper(i) => master.add(&pool.columns[i], i)?,
            Added::Known(_) => {}
        }
    }
    Ok(())
}

/// `work(0..n)` on `threads` scoped threads (in order of the index, whoever runs it).
///
/// Not a rayon pool: a solve may itself run on a rayon worker (the bench's gap cells), and
/// a worker blocked in another pool's `install` may run its own pool's jobs meanwhile — a
/// whole other gap study — so pricing could wait behind it.
pub(super) fn in_parallel<T: Send>(
    n: usize,
    threads: usize,
    work: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
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
