//! The column-generation loop: solve the restricted master, price every node type (greedy
//! first, exact when the greedy finds nothing), add the improving columns, and keep the
//! best Lagrangian bound, until pricing proves the LP optimal, the bound meets the LP or
//! the heuristic, `max_pricing_rounds` exact rounds are done, or its deadline runs out (first
//! the incumbent phase's `pricing_share` of the time limit; after the integer phase,
//! whatever it left).

use std::time::{Duration, Instant};

use super::bound::{lagrangian_bound, project, Smoothing};
use super::column::{Added, Column, ColumnPool};
use super::master::Master;
use super::problem::{CgStats, Problem};
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
pub(super) const CAPPED_PRICING_SCANS: u64 = 2_000_000;

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
    let (options, clock) = (problem.options, &problem.clock);
    let pricing_clock = Instant::now();
    let mut since_exact = 0;
    let mut exact = ExactPricing::new(problem, pricing_deadline, incumbent);
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
        stats.lp_value = problem.constant + lp.value;
        let mut duals = lp.demand_duals.clone();
        project(&mut duals, problem.demand);
        last_duals = Some((duals.clone(), lp.convexity_duals.clone()));
        let at = AtDuals {
            demand: &duals,
            convexity: &lp.convexity_duals,
            tolerance: 1e-9 * stats.lp_value.abs().max(1.0),
        };

        // Greedy pricing at the master's duals first; the MIP only when it finds nothing
        // (or every few rounds, to move the bound).
        let greedy_clock = Instant::now();
        let exact_due = since_exact >= EXACT_EVERY;
        let (improving, best_heuristic) =
            greedy_pricing(problem, pool, &at, pricing_deadline, exact_due);
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
        if let Some(converged) = exact.round(pool, master, stats, &at, &best_heuristic)? {
            stats.converged = converged;
            break;
        }
    }
    stats.pricing_seconds += pricing_clock.elapsed().as_secs_f64();
    stats.columns = pool.len();
    Ok(Generated {
        last_lambda,
        last_duals,
        bound: exact.smoothing.best_bound(),
    })
}

/// Whether column generation stops after an exact round, and if so whether it converged:
/// pricing proved the LP optimal (`proven_stall`) or the bound meets the LP; it also stops
/// when the bound proves the heuristic optimal or `incumbent` within the requested gap.
fn stops(
    problem: &Problem,
    stats: &CgStats,
    smoothing: &Smoothing,
    at: &AtDuals,
    incumbent: Option<f64>,
    proven_stall: bool,
) -> Option<bool> {
    let closed = stats.lp_value - smoothing.best_bound() <= at.tolerance.max(1e-6);
    let proves_heuristic =
        problem.sign * problem.heuristic_value - smoothing.best_bound() <= at.tolerance;
    let within_gap = incumbent.is_some_and(|value| {
        relative_gap(value, problem.sign * smoothing.best_bound()) <= problem.options.mip_rel_gap
    });
    (proven_stall || closed || proves_heuristic || within_gap).then_some(proven_stall || closed)
}

/// One master LP's duals (`y` projected onto the bound's sign, `μ` per type) and the
/// improvement test they define.
struct AtDuals<'d> {
    demand: &'d [f64],
    convexity: &'d [f64],
    /// Reduced costs above `−tolerance` do not improve (relative to the LP value).
    tolerance: f64,
}

impl AtDuals<'_> {
    /// `column` (of type `t`) has a negative reduced cost at these duals.
    fn improves(&self, t: usize, column: &Column) -> bool {
        column.cost - column.priced(self.demand) - self.convexity[t] < -self.tolerance
    }
}

/// Greedy pricing (local search from each type's best pool columns) at the master's
/// duals: the improving columns (none when `exact_due`, to move the bound) and each type's
/// best configuration with its reduced cost, the exact search's incumbent.
#[allow(clippy::type_complexity)]
fn greedy_pricing(
    problem: &Problem,
    pool: &ColumnPool,
    at: &AtDuals,
    pricing_deadline: f64,
    exact_due: bool,
) -> (Vec<Column>, Vec<Option<(Column, f64)>>) {
    let context = &problem.context;
    let mut improving: Vec<Column> = Vec::new();
    let mut best_heuristic: Vec<Option<(Column, f64)>> = vec![None; context.types.len()];
    for (t, best) in best_heuristic.iter_mut().enumerate() {
        // Local search on fragmentation is slow on the large types: the deadline holds.
        if problem.clock.elapsed().as_secs_f64() > pricing_deadline {
            break;
        }
        let seeds = pool.best_of_type(t, at.demand, SEEDS_PER_TYPE);
        for (column, reduced) in context.heuristic(t, at.demand, &seeds, &problem.shape_counts) {
            if best.as_ref().is_none_or(|(_, r)| reduced < *r) {
                *best = Some((column.clone(), reduced));
            }
            if at.improves(t, &column) && !exact_due {
                improving.push(column);
            }
        }
    }
    (improving, best_heuristic)
}

/// The exact pricing rounds: their schedule (which type is priced first, on how many
/// threads, the time or scan budget of one search, doubled whenever a round stalls) and
/// the smoothed prices they price at, with the best Lagrangian bound.
struct ExactPricing<'p, 'a> {
    problem: &'p Problem<'a>,
    pricing_deadline: f64,
    /// A known solution's value: the bound within the requested gap of it stops the rounds.
    incumbent: Option<f64>,
    smoothing: Smoothing,
    threads: usize,
    /// Type indices, most nodes first: they take the longest and weigh most in the bound.
    by_size: Vec<usize>,
    most_nodes: f64,
    time_limit_s: f64,
    scans: u64,
}

impl<'p, 'a> ExactPricing<'p, 'a> {
    fn new(problem: &'p Problem<'a>, pricing_deadline: f64, incumbent: Option<f64>) -> Self {
        let types = problem.context.types;
        let mut by_size: Vec<usize> = (0..types.len()).collect();
        by_size.sort_by_key(|&t| std::cmp::Reverse(types[t].nodes));
        let most_nodes = problem.type_nodes.iter().copied().max().unwrap_or(1).max(1) as f64;
        Self {
            problem,
            pricing_deadline,
            incumbent,
            smoothing: Smoothing::new(SMOOTHING_ALPHA),
            threads: problem.options.threads.unwrap_or(1).max(1) as usize,
            by_size,
            most_nodes,
            time_limit_s: PRICING_TIME_LIMIT_S,
            scans: CAPPED_PRICING_SCANS,
        }
    }

    /// One exact round at the smoothed duals: prices every type, adds the improving
    /// columns and records the Lagrangian bound; `Some(converged)` when column generation
    /// stops.
    fn round(
        &mut self,
        pool: &mut ColumnPool,
        master: &mut Master,
        stats: &mut CgStats,
        at: &AtDuals,
        best_heuristic: &[Option<(Column, f64)>],
    ) -> Result<Option<bool>, String> {
        let problem = self.problem;
        let prices = self.smoothing.prices(at.demand);
        let mut improving = Vec::new();
        let exact_clock = Instant::now();
        let rho_lower = self.price_every_type(&prices, best_heuristic, at, &mut improving);
        stats.exact_seconds += exact_clock.elapsed().as_secs_f64();
        stats.exact_rounds += 1;
        let (rho_lower, all_proven) = rho_lower?;
        let bound = lagrangian_bound(
            problem.constant,
            &prices,
            &problem.shape_counts,
            &problem.type_nodes,
            &rho_lower,
        );
        let improved = !improving.is_empty();
        add_columns(pool, master, improving)?;
        let at_master = self.smoothing.record(&prices, bound, improved, at.demand);
        stats.lagrangian_bound = self.smoothing.best_bound();
        // No improving column at the master's own duals ends column generation only when
        // every pricing MIP was solved; otherwise they get more time next round.
        let stalled = !improved && at_master;
        let stop = stops(
            problem,
            stats,
            &self.smoothing,
            at,
            self.incumbent,
            stalled && all_proven,
        );
        if stop.is_none() && stalled {
            // Every search gets twice the time (or scans) next round.
            self.time_limit_s *= 2.0;
            self.scans = self.scans.saturating_mul(2);
        }
        Ok(stop)
    }

    /// When type `t`'s search must end: what is left when it starts, at most its share of
    /// the time limit. The types share the threads, so a limit fixed up front would let
    /// the round overrun the deadline. Under a round cap each search ends at its node and
    /// scan budgets instead (deterministic): only the whole deadline, a safety net, may
    /// cut it.
    fn deadline_of(&self, t: usize) -> Instant {
        let problem = self.problem;
        let share = match problem.options.max_pricing_rounds {
            Some(_) => f64::INFINITY,
            None => {
                self.time_limit_s
                    * SMALLEST_TYPE_SHARE
                        .max(problem.context.types[t].nodes as f64 / self.most_nodes)
            }
        };
        let left = (self.pricing_deadline - problem.clock.elapsed().as_secs_f64()).min(share);
        Instant::now() + Duration::from_secs_f64(left.max(0.01))
    }

    /// Prices every type exactly at `prices`, each search starting from the greedy's best
    /// column: per type a lower bound on its reduced cost (a sleeping type's configurations
    /// cost `wake_cost` more than the idle node the search measures from, see
    /// `TypeCluster::asleep`), and whether every search was proven. Columns improving at
    /// the master's duals `at` go to `improving`.
    fn price_every_type(
        &self,
        prices: &[f64],
        best_heuristic: &[Option<(Column, f64)>],
        at: &AtDuals,
        improving: &mut Vec<Column>,
    ) -> Result<(Vec<f64>, bool), String> {
        let (context, options) = (&self.problem.context, self.problem.options);
        let types = context.types;
        let mut priced = in_parallel(types.len(), self.threads, |k| {
            let t = self.by_size[k];
            let start = best_heuristic[t].as_ref().map(|(c, _)| c);
            let deadline = self.deadline_of(t);
            let priced = match options.max_pricing_rounds {
                Some(_) => context.price_scanning(t, prices, start, deadline, self.scans),
                None => context.price(t, prices, start, deadline),
            };
            (t, priced)
        });
        priced.sort_by_key(|(t, _)| *t);
        let mut rho_lower = vec![0.0; types.len()];
        let mut all_proven = true;
        for (t, (_, result)) in priced.into_iter().enumerate() {
            let result = result?;
            rho_lower[t] = result.lower_bound + types[t].wake_cost;
            all_proven &= result.proven;
            if let Some((column, _)) = result.best {
                if at.improves(t, &column) {
                    improving.push(column);
                }
            }
        }
        Ok((rho_lower, all_proven))
    }
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
