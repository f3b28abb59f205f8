//! One point of the ε-constraint front: `min F` subject to `P ≤ ε`, by column generation.
//!
//! The master is fragmentation's configuration LP (columns cost `F_c`, relative to the
//! idle node) with one more row, the power cap `Σ_c P_c·λ_c ≤ ε − P₀` (`P_c` a column's
//! watts above its idle node, `P₀` the idle cluster's: [`super::super::master::Master::
//! add_power_cap`]). With `π ≤ 0` that row's dual and `w = −π`, a column's reduced cost is
//! `F_c + w·P_c − Σ_s y_s·a_{s,c} − μ_τ`: pricing is the weighted pricing of `F + w·P`
//! ([`crate::node_value::NodeValue::plus`]) at a weight that changes every
//! round.
//!
//! The bound. For any shape prices `y` and any `w ≥ 0`, every placement `x` with
//! `P(x) ≤ ε` has
//!
//! `F(x) ≥ F(x) + w·(P(x) − ε) + Σ_s y_s·(count_s − a_s(x)) ≥ L_w(y) − w·ε`,
//!
//! where `L_w(y) = (F₀ + w·P₀) + Σ_s y_s·count_s + Σ_τ N_τ·min(0, ρ_τ(y, w))` is the
//! Lagrangian bound of the weighted problem `min F + w·P` ([`super::super::bound`]), `ρ_τ`
//! its pricing value. Each round prices at (Wentges-smoothed) `(y, w)` and records the line
//! `F + w·P ≥ L_w(y)`: valid for every placement, so every cap of the front uses every
//! line (`F ≥ max_k L_k − w_k·ε`).
//!
//! The integer phase ([`super::cap_integer`]) dives on the master with the cap row, so the
//! dive's λ respects the cap, rounds and repairs the dived and the LP solution, and keeps
//! only the placements whose measured power is within the cap.

use std::time::{Duration, Instant};

use gapbench_model::{DeviceSet, Placement};

use super::super::bound::{lagrangian_bound, Smoothing};
use super::super::column::{heuristic_columns, Column, ColumnPool, TypeCluster};
use super::super::generate::in_parallel;
use super::super::incumbent::finish_reserve_s;
use super::super::master::Master;
use super::super::pricing::PricingContext;
use super::super::ColumnCarry;
use super::cap_context::{
    add_capped_columns, greedy_columns, Capped, Line, Measured, NodesPerColumn, Priced,
};
use super::cap_integer::{integer_master_under_cap, integer_phase, CapTarget, IntegerUnderCap};
use crate::model::Demand;
use crate::snapshot::Snapshot;
use crate::solve::{Objective, SolveOptions};

/// The share of the time limit column generation may use; the integer phase has the rest.
const PRICING_SHARE: f64 = 0.6;
/// The least time left for which the integer master under the cap runs, and the share of
/// what is left it gets as HiGHS's limit.
const INTEGER_MASTER_MIN_S: f64 = 0.5;
const INTEGER_MASTER_SHARE: f64 = 0.8;
/// Greedy-priced rounds in a row before the exact pricing runs anyway.
const EXACT_EVERY: usize = 30;
/// Time one exact pricing call may take at first (doubled when a round stalls on it), and
/// the smallest type's share of it (as in [`super::super::generate`]).
const PRICING_TIME_LIMIT_S: f64 = 2.0;
const SMALLEST_TYPE_SHARE: f64 = 0.125;
/// Wentges smoothing weight of the best prices so far.
const SMOOTHING_ALPHA: f64 = 0.5;

/// What one capped solve found and proved.
pub(super) struct CapSolve {
    /// The placements its integer phase found within the cap (checked, measured).
    pub placements: Vec<Measured>,
    /// Every proven line `F + w·P ≥ L` it priced.
    pub lines: Vec<Line>,
    /// Pricing proved the capped master LP optimal.
    pub converged: bool,
    pub seconds: f64,
}

/// Solves `min F` under `P ≤ cap_watts` within `options.time_limit_s`, its pool seeded with
/// the configurations of `seeds` (one of which must be within the cap for the master to
/// have a solution: the least-power placement is) and those `carry` holds.
pub(super) fn solve_under_cap(
    snapshot: &Snapshot,
    cap_watts: f64,
    seeds: &[&[Option<Placement>]],
    options: &SolveOptions,
    carry: &mut ColumnCarry,
) -> Result<CapSolve, String> {
    let clock = Instant::now();
    let elapsed = || clock.elapsed().as_secs_f64();
    let shapes = snapshot.checked_shapes(options, snapshot.placed_tasks())?;
    let frag_types = TypeCluster::of(snapshot.cluster, Objective::Frag, snapshot.typical, 0.0)?;
    let capped = Capped::new(snapshot, shapes, &frag_types);
    let frag = capped.context(&frag_types);
    let idle_watts = empty_cluster_cost(&TypeCluster::of(
        snapshot.cluster,
        Objective::Power,
        snapshot.typical,
        0.0,
    )?);
    let frag_constant = empty_cluster_cost(&frag_types);

    let (mut pool, seed_uses) = seeded_pool(&capped, &frag_types, seeds)?;
    let carried = carry.columns(Objective::Frag, &frag_types, &capped.shapes, |t, slots| {
        frag.column(t, slots)
    });
    let mut master = capped_master(&capped, &mut pool, carried, cap_watts - idle_watts, options)?;
    let known = SeedsUnderCap::of(snapshot, seeds, &seed_uses, cap_watts);
    let seed_columns: Vec<usize> = seed_uses.iter().flatten().map(|&(c, _)| c).collect();
    let generated = generate_capped(
        &capped,
        &frag,
        &mut pool,
        &mut master,
        Bounds {
            frag_constant,
            cap_watts,
            best_known: known.best_frag,
        },
        options,
        &clock,
    )?;

    let target = CapTarget {
        last_lambda: &generated.last_lambda,
        last_weight: generated.last_weight,
        watts_left: cap_watts - idle_watts,
        cap_watts,
        least_known_watts: known.least_watts,
    };
    let mut placements = integer_phase(&capped, &frag, &mut pool, target, options, &clock)?;
    let left = options.time_limit_s - finish_reserve_s(options.time_limit_s) - elapsed();
    if let (Some(start), true) = (known.start, left >= INTEGER_MASTER_MIN_S) {
        let allowed: Vec<usize> = seed_columns
            .into_iter()
            .chain(generated.last_lambda.iter().map(|&(c, _)| c))
            .collect();
        let under = IntegerUnderCap {
            start: &start,
            allowed: &allowed,
            watts_left: cap_watts - idle_watts,
            cap_watts,
            time_limit_s: left * INTEGER_MASTER_SHARE,
        };
        placements.extend(integer_master_under_cap(
            &capped,
            &frag_types,
            &pool,
            under,
            options,
        )?);
    }
    let used = generated.last_lambda.iter().map(|&(c, _)| c);
    carry.keep(Objective::Frag, &frag_types, &capped.shapes, &pool, used);
    Ok(CapSolve {
        placements,
        lines: generated.lines,
        converged: generated.converged,
        seconds: elapsed(),
    })
}

/// `Σ_τ N_τ·cost(empty_τ)`: the empty cluster's cost under `types`.
fn empty_cluster_cost(types: &[TypeCluster]) -> f64 {
    types.iter().map(|t| t.nodes as f64 * t.empty_cost).sum()
}

/// The capped master over `pool` and then the `carried` columns (added to the pool): the
/// cap row `Σ_c P_c·λ_c ≤ watts_left` first, so every column added after it carries its
/// watts there.
fn capped_master(
    capped: &Capped,
    pool: &mut ColumnPool,
    carried: Vec<Column>,
    watts_left: f64,
    options: &SolveOptions,
) -> Result<Master, String> {
    let mut master = Master::new(
        &capped.type_nodes,
        &capped.shape_counts,
        Demand::Exactly,
        options.threads,
    )?;
    master.add_power_cap(&ColumnPool::default(), watts_left)?;
    for (i, column) in pool.columns.iter().enumerate() {
        master.add(column, i)?;
    }
    add_capped_columns(pool, &mut master, carried)?;
    Ok(master)
}

/// What the seeds tell a capped solve before it starts.
struct SeedsUnderCap {
    /// The least fragmentation of a seed within the cap (∞: none).
    best_frag: f64,
    /// The least power of a seed, at most the cap.
    least_watts: f64,
    /// The integer master's start: the seed of least fragmentation within the cap, as
    /// nodes per pool column.
    start: Option<NodesPerColumn>,
}

impl SeedsUnderCap {
    fn of(
        snapshot: &Snapshot,
        seeds: &[&[Option<Placement>]],
        seed_uses: &[NodesPerColumn],
        cap_watts: f64,
    ) -> SeedsUnderCap {
        let seeds_measured: Vec<Measured> = seeds
            .iter()
            .map(|seed| Measured::of(snapshot, seed.to_vec()))
            .collect();
        let best_frag = seeds_measured
            .iter()
            .filter(|m| m.power_watts <= cap_watts)
            .map(|m| m.frag_milli)
            .fold(f64::INFINITY, f64::min);
        let least_watts = seeds_measured
            .iter()
            .map(|m| m.power_watts)
            .fold(cap_watts, f64::min);
        let start = seeds_measured
            .iter()
            .zip(seed_uses)
            .filter(|(m, _)| m.power_watts <= cap_watts)
            .min_by(|a, b| a.0.frag_milli.total_cmp(&b.0.frag_milli))
            .map(|(_, uses)| uses.clone());
        SeedsUnderCap {
            best_frag,
            least_watts,
            start,
        }
    }
}

/// The pool of the seeds' configurations, and each seed's nodes per pool column.
fn seeded_pool(
    capped: &Capped,
    frag_types: &[TypeCluster],
    seeds: &[&[Option<Placement>]],
) -> Result<(ColumnPool, Vec<NodesPerColumn>), String> {
    let mut pool = ColumnPool::default();
    let mut seed_uses = Vec::new();
    for seed in seeds {
        let seeded = Snapshot {
            heuristic: seed.to_vec(),
            ..capped.snapshot.clone()
        };
        seed_uses.push(heuristic_columns(
            &seeded,
            frag_types,
            &capped.shapes,
            Objective::Frag,
            &mut pool,
        )?);
    }
    Ok((pool, seed_uses))
}

/// What the bound of a capped solve is measured against.
struct Bounds {
    /// `F₀`, the idle cluster's fragmentation.
    frag_constant: f64,
    cap_watts: f64,
    /// The least fragmentation of a known placement within the cap (∞: none).
    best_known: f64,
}

/// What column generation under the cap leaves.
#[derive(Default)]
struct GeneratedCapped {
    last_lambda: Vec<(usize, f64)>,
    /// `w = −π` of the last master LP.
    last_weight: f64,
    lines: Vec<Line>,
    converged: bool,
    iterations: usize,
}

/// Column generation on the capped master until [`PRICING_SHARE`] of the time limit, the
/// LP's optimum proven, or the bound meeting the best known placement.
fn generate_capped(
    capped: &Capped,
    frag: &PricingContext,
    pool: &mut ColumnPool,
    master: &mut Master,
    bounds: Bounds,
    options: &SolveOptions,
    clock: &Instant,
) -> Result<GeneratedCapped, String> {
    let elapsed = || clock.elapsed().as_secs_f64();
    let deadline_s = PRICING_SHARE * options.time_limit_s;
    let mut schedule = PricingSchedule::new(capped, clock, deadline_s, options);
    let mut smoothing = Smoothing::new(SMOOTHING_ALPHA);
    let mut since_exact = 0;
    let mut out = GeneratedCapped::default();
    loop {
        let left = deadline_s - elapsed();
        if left <= 0.0 {
            break;
        }
        let Some(lp) = master.solve_if_feasible(left)? else {
            break;
        };
        out.iterations += 1;
        out.last_lambda = master.used_pool_columns(&lp);
        let lp_value = bounds.frag_constant + lp.value;
        let weight = (-lp.power_cap_dual).max(0.0);
        out.last_weight = weight;
        let (duals, convexity) = (&lp.demand_duals, &lp.convexity_duals);
        let tolerance = 1e-9 * lp_value.abs().max(1.0);
        let priced = Priced {
            duals,
            convexity,
            weight,
            tolerance,
        };
        if since_exact < EXACT_EVERY {
            let deadline = *clock + Duration::from_secs_f64(deadline_s);
            let improving = greedy_round(capped, frag, pool, &priced, deadline)?;
            if add_capped_columns(pool, master, improving)? > 0 {
                since_exact += 1;
                continue;
            }
        }
        since_exact = 0;
        if elapsed() > deadline_s {
            break;
        }
        // Exact pricing at smoothed `(y, w)`: the weight is the last price.
        let mut at_master = duals.clone();
        at_master.push(weight);
        let prices = smoothing.prices(&at_master);
        let (line, all_proven, improving) =
            exact_pricing(capped, frag, &priced, &prices, &schedule)?;
        out.lines.push(line);
        let cap_bound = line.bound - line.watts_weight * bounds.cap_watts;
        let improved = add_capped_columns(pool, master, improving)? > 0;
        let at_master = smoothing.record(&prices, cap_bound, improved, &at_master);
        let best = smoothing.best_bound();
        let closed = lp_value - best <= tolerance.max(1e-6);
        let stalled = !improved && at_master;
        if (stalled && all_proven) || closed {
            out.converged = true;
            break;
        }
        if bounds.best_known - best <= tolerance.max(1e-6) {
            break;
        }
        if stalled {
            schedule.time_limit_s *= 2.0;
        }
    }
    Ok(out)
}

/// When the exact searches of a capped solve's rounds must end.
struct PricingSchedule<'c> {
    clock: &'c Instant,
    /// Column generation's deadline, seconds on `clock`.
    deadline_s: f64,
    /// One search's limit (doubled when a round stalls), times its type's share.
    time_limit_s: f64,
    most_nodes: f64,
    threads: usize,
}

impl<'c> PricingSchedule<'c> {
    fn new(
        capped: &Capped,
        clock: &'c Instant,
        deadline_s: f64,
        options: &SolveOptions,
    ) -> PricingSchedule<'c> {
        PricingSchedule {
            clock,
            deadline_s,
            time_limit_s: PRICING_TIME_LIMIT_S,
            most_nodes: capped.type_nodes.iter().copied().max().unwrap_or(1).max(1) as f64,
            threads: options.threads.unwrap_or(1).max(1) as usize,
        }
    }

    /// Type `t`'s search ends at its share of the limit, by its node count, or at the
    /// deadline.
    fn deadline_of(&self, types: &[TypeCluster], t: usize) -> Instant {
        let share = SMALLEST_TYPE_SHARE.max(types[t].nodes as f64 / self.most_nodes);
        let left =
            (self.deadline_s - self.clock.elapsed().as_secs_f64()).min(self.time_limit_s * share);
        Instant::now() + Duration::from_secs_f64(left.max(0.01))
    }
}

/// Exact pricing at the smoothed `prices` (the shape prices, then the weight of power):
/// the round's proven line `F + w·P ≥ L_w(y)`, whether every search was proven, and the
/// configurations that improve the master at `priced`.
fn exact_pricing(
    capped: &Capped,
    frag: &PricingContext,
    priced: &Priced,
    prices: &[f64],
    schedule: &PricingSchedule,
) -> Result<(Line, bool, Vec<Column>), String> {
    let shape_count = capped.shape_counts.len();
    let (shape_prices, priced_weight) = (&prices[..shape_count], prices[shape_count].max(0.0));
    let type_deadline = |t: usize| schedule.deadline_of(frag.types, t);
    let round = exact_round(
        capped,
        shape_prices,
        priced_weight,
        &type_deadline,
        schedule.threads,
    )?;
    let all_proven = round.all_proven;
    let line = Line {
        watts_weight: priced_weight,
        bound: round.weighted_bound,
    };
    let improving = improving_columns(frag, priced, round.best)?;
    Ok((line, all_proven, improving))
}

/// The greedy pricing's improving columns at the master's `priced` weight of power.
fn greedy_round(
    capped: &Capped,
    frag: &PricingContext,
    pool: &ColumnPool,
    priced: &Priced,
    deadline: Instant,
) -> Result<Vec<Column>, String> {
    let weighted = capped.weighted(priced.weight)?;
    let context = capped.context(&weighted);
    Ok(greedy_columns(
        frag,
        &context,
        pool,
        priced,
        &capped.shape_counts,
        deadline,
    ))
}

/// The exact round's configurations, as fragmentation columns with their watts, that
/// improve the master at `priced`.
fn improving_columns(
    frag: &PricingContext,
    priced: &Priced,
    best: Vec<(usize, Vec<(usize, DeviceSet)>)>,
) -> Result<Vec<Column>, String> {
    let mut improving = Vec::new();
    for (t, slots) in best {
        let column = frag.column(t, slots)?;
        if priced.improves(&column) {
            improving.push(column);
        }
    }
    Ok(improving)
}

/// One exact pricing round at shape prices `y` and weight `w`.
struct ExactRound {
    /// `L_w(y)`: every placement has `F + w·P ≥` it.
    weighted_bound: f64,
    /// The best configuration found per type, as `(type, slots)`.
    best: Vec<(usize, Vec<(usize, DeviceSet)>)>,
    /// Every type's search proved its best optimal.
    all_proven: bool,
}

/// Prices every node type at `F + watts_weight·P − Σ_s y_s·a_s` (types by node count,
/// on `threads` threads, each until `deadline(type)`) and the Lagrangian bound `L_w(y)`.
fn exact_round(
    capped: &Capped,
    shape_prices: &[f64],
    watts_weight: f64,
    deadline: &(dyn Fn(usize) -> Instant + Sync),
    threads: usize,
) -> Result<ExactRound, String> {
    let weighted = capped.weighted(watts_weight)?;
    let context = capped.context(&weighted);
    let mut by_size: Vec<usize> = (0..weighted.len()).collect();
    by_size.sort_by_key(|&t| std::cmp::Reverse(weighted[t].nodes));
    let mut priced = in_parallel(weighted.len(), threads, |k| {
        let t = by_size[k];
        (t, context.price(t, shape_prices, None, deadline(t)))
    });
    priced.sort_by_key(|(t, _)| *t);
    let mut rho_lower = vec![0.0; weighted.len()];
    let mut round = ExactRound {
        weighted_bound: 0.0,
        best: Vec::new(),
        all_proven: true,
    };
    for (t, result) in priced {
        let result = result?;
        rho_lower[t] = result.lower_bound;
        round.all_proven &= result.proven;
        if let Some((column, _)) = result.best {
            round.best.push((t, column.slots));
        }
    }
    // `L_w(y)`, with `F₀ + w·P₀` the weighted types' idle cluster.
    let constant: f64 = weighted.iter().map(|t| t.nodes as f64 * t.empty_cost).sum();
    round.weighted_bound = lagrangian_bound(
        constant,
        shape_prices,
        &capped.shape_counts,
        &capped.type_nodes,
        &rho_lower,
    );
    Ok(round)
}
