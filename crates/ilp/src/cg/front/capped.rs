//! One point of the ε-constraint front: `min F` subject to `P ≤ ε`, by column generation.
//!
//! The master is fragmentation's configuration LP (columns cost `F_c`, relative to the
//! idle node) with one more row, the power cap `Σ_c P_c·λ_c ≤ ε − P₀` (`P_c` a column's
//! watts above its idle node, `P₀` the idle cluster's: [`super::super::master::Master::
//! add_power_cap`]). With `π ≤ 0` that row's dual and `w = −π`, a column's reduced cost is
//! `F_c + w·P_c − Σ_s y_s·a_{s,c} − μ_τ`: pricing is the weighted pricing of `F + w·P`
//! ([`super::super::pattern_pricing::NodeValue::plus`]) at a weight that changes every
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
//! The integer phase dives ([`super::super::dive`]) on the master with the cap row, so the
//! dive's λ respects the cap, rounds and repairs the dived and the LP solution, and keeps
//! only the placements whose measured power is within the cap.

use std::time::{Duration, Instant};

use gapbench_model::{DeviceSet, Placement};

use super::super::bound::{lagrangian_bound, Smoothing};
use super::super::column::Added;
use super::super::column::{heuristic_columns, Column, ColumnPool, TypeCluster};
use super::super::dive::Dive;
use super::super::generate::{in_parallel, SEEDS_PER_TYPE};
use super::super::incumbent::finish_reserve_s;
use super::super::integer::{expand, round_and_repair, solve_integer_master_capped, Repair};
use super::super::master::Master;
use super::super::pricing::PricingContext;
use super::super::ColumnCarry;
use super::Line;
use crate::eval::{frag_milli, power_watts, state_of};
use crate::model::Demand;
use crate::shapes::Shapes;
use crate::snapshot::{check_assignment, Snapshot};
use crate::solve::{Objective, SolveOptions};

/// The share of the time limit column generation may use; the integer phase has the rest.
const PRICING_SHARE: f64 = 0.6;
/// The share of the integer phase the dive may use (the roundings follow).
const DIVE_SHARE: f64 = 0.5;
/// Dives at most per capped solve, and how far below the cap the next one aims (times the
/// last repair's excess over the cap).
const DIVES: usize = 2;
const MARGIN_FACTOR: f64 = 2.0;
/// The heavier weight of power (milli-GPU per W) of the power-aware repairs, times the
/// LP's (at least 1: on the whole cluster the front's chord has a slope near 1).
const POWER_AWARE_WEIGHT_FACTOR: f64 = 8.0;
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

/// A checked placement with its measured power (W) and fragmentation (milli-GPU).
#[derive(Debug, Clone)]
pub(super) struct Measured {
    pub placement: Vec<Option<Placement>>,
    pub power_watts: f64,
    pub frag_milli: f64,
}

impl Measured {
    pub fn of(snapshot: &Snapshot, placement: Vec<Option<Placement>>) -> Measured {
        let state = state_of(snapshot.cluster, snapshot.tasks, &placement);
        Measured {
            power_watts: power_watts(snapshot.cluster, &state) as f64,
            frag_milli: frag_milli(snapshot.cluster, snapshot.typical, &state),
            placement,
        }
    }
}

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

/// The fixed inputs of one capped solve.
struct Capped<'a> {
    snapshot: &'a Snapshot<'a>,
    shapes: Shapes,
    type_nodes: Vec<usize>,
    shape_counts: Vec<usize>,
    typical_probability: f64,
}

impl Capped<'_> {
    /// The fragmentation pricing context over `types` (fragmentation alone, or weighted).
    fn context<'t>(&'t self, types: &'t [TypeCluster]) -> PricingContext<'t> {
        PricingContext {
            objective: Objective::Frag,
            shapes: &self.shapes,
            tasks: self.snapshot.tasks,
            typical: self.snapshot.typical,
            types,
            typical_probability: self.typical_probability,
        }
    }

    /// The checked placement of `uses` (nodes per pool column), measured.
    fn measured(
        &self,
        types: &[TypeCluster],
        pool: &ColumnPool,
        uses: &[(usize, u32)],
    ) -> Result<Measured, String> {
        let snapshot = self.snapshot;
        let placement = expand(
            snapshot.cluster,
            types,
            pool,
            &self.shapes,
            uses,
            snapshot.tasks.len(),
        )?;
        check_assignment(snapshot.cluster, snapshot.tasks, &placement)
            .map_err(|e| format!("a capped placement fails the checker: {e}"))?;
        Ok(Measured::of(snapshot, placement))
    }

    /// The node types priced at `F + watts_weight·P`.
    fn weighted(&self, watts_weight: f64) -> Result<Vec<TypeCluster>, String> {
        let snapshot = self.snapshot;
        TypeCluster::of(
            snapshot.cluster,
            Objective::Frag,
            snapshot.typical,
            watts_weight,
        )
    }
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
    let capped = Capped {
        snapshot,
        type_nodes: frag_types.iter().map(|t| t.nodes).collect(),
        shape_counts: shapes.shapes.iter().map(|s| s.count()).collect(),
        shapes,
        typical_probability: snapshot.typical.pods.iter().map(|p| p.probability).sum(),
    };
    let frag = capped.context(&frag_types);
    let idle_watts: f64 =
        TypeCluster::of(snapshot.cluster, Objective::Power, snapshot.typical, 0.0)?
            .iter()
            .map(|t| t.nodes as f64 * t.empty_cost)
            .sum();
    let frag_constant: f64 = frag_types
        .iter()
        .map(|t| t.nodes as f64 * t.empty_cost)
        .sum();

    let (mut pool, seed_uses) = seeded_pool(&capped, &frag_types, seeds)?;
    let carried = carry.columns(Objective::Frag, &frag_types, &capped.shapes, |t, slots| {
        frag.column(t, slots)
    });
    // The cap row first: every column added after it carries its watts there.
    let mut master = Master::new(
        &capped.type_nodes,
        &capped.shape_counts,
        Demand::Exactly,
        options.threads,
    )?;
    master.add_power_cap(&ColumnPool::default(), cap_watts - idle_watts)?;
    for (i, column) in pool.columns.iter().enumerate() {
        master.add(column, i)?;
    }
    add_capped_columns(&mut pool, &mut master, carried)?;

    let seeds_measured: Vec<Measured> = seeds
        .iter()
        .map(|seed| Measured::of(snapshot, seed.to_vec()))
        .collect();
    let best_seed_frag = seeds_measured
        .iter()
        .filter(|m| m.power_watts <= cap_watts)
        .map(|m| m.frag_milli)
        .fold(f64::INFINITY, f64::min);
    let least_known_watts = seeds_measured
        .iter()
        .map(|m| m.power_watts)
        .fold(cap_watts, f64::min);
    // The integer master's start: the seed of least fragmentation within the cap.
    let start = seeds_measured
        .iter()
        .zip(&seed_uses)
        .filter(|(m, _)| m.power_watts <= cap_watts)
        .min_by(|a, b| a.0.frag_milli.total_cmp(&b.0.frag_milli))
        .map(|(_, uses)| uses.clone());
    let seed_columns: Vec<usize> = seed_uses.iter().flatten().map(|&(c, _)| c).collect();
    let generated = generate_capped(
        &capped,
        &frag,
        &mut pool,
        &mut master,
        Bounds {
            frag_constant,
            cap_watts,
            best_known: best_seed_frag,
        },
        options,
        &clock,
    )?;

    let mut placements = integer_phase(
        &capped,
        &frag,
        &mut pool,
        &generated,
        cap_watts - idle_watts,
        cap_watts,
        least_known_watts,
        options,
        &clock,
    )?;
    let left = options.time_limit_s - finish_reserve_s(options.time_limit_s) - elapsed();
    if let (Some(start), true) = (start, left >= INTEGER_MASTER_MIN_S) {
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

/// A placement as nodes per pool column.
type NodesPerColumn = Vec<(usize, u32)>;

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

/// An integer master under the cap: from `start` (within the cap), over the `allowed`
/// pool columns.
struct IntegerUnderCap<'a> {
    start: &'a [(usize, u32)],
    allowed: &'a [usize],
    /// The cap less the idle cluster's watts, and the cap.
    watts_left: f64,
    cap_watts: f64,
    time_limit_s: f64,
}

/// The integer master under the cap row over the seeds' and the last LP's columns: it
/// finds placements near the least power that the dive's repairs push over the cap.
/// `None` when HiGHS returns none or its placement is above the cap.
fn integer_master_under_cap(
    capped: &Capped,
    frag_types: &[TypeCluster],
    pool: &ColumnPool,
    under: IntegerUnderCap,
    options: &SolveOptions,
) -> Result<Option<Measured>, String> {
    let mut allowed = vec![false; pool.len()];
    for &c in under.allowed {
        allowed[c] = true;
    }
    let integer = solve_integer_master_capped(
        pool,
        frag_types,
        &capped.shape_counts,
        Demand::Exactly,
        under.start,
        &allowed,
        options,
        under.time_limit_s,
        Some(under.watts_left),
    )?;
    let Some(integer) = integer else {
        return Ok(None);
    };
    let measured = capped.measured(frag_types, pool, &integer.uses)?;
    Ok((measured.power_watts <= under.cap_watts).then_some(measured))
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
    let threads = options.threads.unwrap_or(1).max(1) as usize;
    let types = frag.types;
    let shape_count = capped.shape_counts.len();
    let most_nodes = capped.type_nodes.iter().copied().max().unwrap_or(1).max(1) as f64;
    let mut smoothing = Smoothing::new(SMOOTHING_ALPHA);
    let mut pricing_time_limit_s = PRICING_TIME_LIMIT_S;
    let mut since_exact = 0;
    let mut out = GeneratedCapped {
        last_lambda: Vec::new(),
        last_weight: 0.0,
        lines: Vec::new(),
        converged: false,
        iterations: 0,
    };
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
        let (shape_prices, priced_weight) = (&prices[..shape_count], prices[shape_count].max(0.0));
        let type_deadline = |t: usize| {
            let share = SMALLEST_TYPE_SHARE.max(types[t].nodes as f64 / most_nodes);
            let left = (deadline_s - elapsed()).min(pricing_time_limit_s * share);
            Instant::now() + Duration::from_secs_f64(left.max(0.01))
        };
        let round = exact_round(capped, shape_prices, priced_weight, &type_deadline, threads)?;
        let (all_proven, weighted_bound) = (round.all_proven, round.weighted_bound);
        let improving = improving_columns(frag, &priced, round.best)?;
        out.lines.push(Line {
            watts_weight: priced_weight,
            bound: weighted_bound,
        });
        let cap_bound = weighted_bound - priced_weight * bounds.cap_watts;
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
            pricing_time_limit_s *= 2.0;
        }
    }
    Ok(out)
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

/// Master prices: a column's reduced cost is `F_c + weight·P_c − Σ_s y_s·a_s − μ_τ`.
struct Priced<'a> {
    duals: &'a [f64],
    convexity: &'a [f64],
    weight: f64,
    tolerance: f64,
}

impl Priced<'_> {
    fn improves(&self, column: &Column) -> bool {
        column.cost + self.weight * column.watts
            - column.priced(self.duals)
            - self.convexity[column.type_index]
            < -self.tolerance
    }
}

/// The greedy pricing's columns (of `weighted`, the types at `F + weight·P`) that improve
/// the master at `priced`, rebuilt as fragmentation columns with their watts; each holds at
/// most `tasks_left[s]` tasks of shape `s`. Types are priced until `deadline`.
fn greedy_columns(
    frag: &PricingContext,
    weighted: &PricingContext,
    pool: &ColumnPool,
    priced: &Priced,
    tasks_left: &[usize],
    deadline: Instant,
) -> Vec<Column> {
    let mut improving = Vec::new();
    for t in 0..frag.types.len() {
        if Instant::now() >= deadline {
            break;
        }
        let seeds = pool.best_of_type(t, priced.duals, SEEDS_PER_TYPE);
        for (column, _) in weighted.heuristic(t, priced.duals, &seeds, tasks_left) {
            // Built like any column (the checker judged it already under the weighted types).
            if let Ok(column) = frag.column(t, column.slots) {
                if priced.improves(&column) {
                    improving.push(column);
                }
            }
        }
    }
    improving
}

/// `lambda` (over `pool`) rounded, its leftovers repaired where they add the least of the
/// cost of `types` (`F + w·P`: a heavy `w` wakes few watts), on a pool of its own (the
/// costs are `types`'s); the placement checked and measured. `None` when the repair fails.
fn weighted_rounding(
    capped: &Capped,
    types: &[TypeCluster],
    pool: &ColumnPool,
    lambda: &[(usize, f64)],
    deadline: Instant,
) -> Result<Option<Measured>, String> {
    let context = capped.context(types);
    let mut own = ColumnPool::default();
    let mut mapped = Vec::new();
    for &(c, l) in lambda {
        let column = &pool.columns[c];
        let weighted = context.column(column.type_index, column.slots.clone())?;
        // A twin stands for it: the same tasks on a node of the same type.
        let i = match own.add_unless_dominated(weighted) {
            Added::New(i) | Added::Cheaper(i) | Added::Known(i) => i,
        };
        mapped.push((i, l));
    }
    let repaired = round_and_repair(
        &context,
        &mut own,
        &mapped,
        Demand::Exactly,
        Repair::LeastAdded,
        deadline,
    );
    repaired
        .map(|uses| capped.measured(types, &own, &uses))
        .transpose()
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

/// Adds the columns no pool column dominates in both costs to the pool and the master;
/// returns how many.
fn add_capped_columns(
    pool: &mut ColumnPool,
    master: &mut Master,
    columns: Vec<Column>,
) -> Result<usize, String> {
    let mut added = 0;
    for column in columns {
        if let Added::New(i) | Added::Cheaper(i) = pool.add_unless_dominated(column) {
            master.add(&pool.columns[i], i)?;
            added += 1;
        }
    }
    Ok(added)
}

/// The integer phase: dives on the master under the cap row (`watts_left`: the cap less
/// the idle cluster's watts), rounds and repairs the LP's and the dive's λ, and keeps the
/// checked placements whose measured power is within `cap_watts`. A dive that stops with a
/// few fractional columns leaves their repair above the cap by a few nodes' watts: the
/// dive is then run again under a cap lowered by [`MARGIN_FACTOR`] times that excess (at
/// most [`DIVES`] dives, while time is left), never below the middle of the cap and
/// `least_known_watts` (the least power of a known placement).
#[allow(clippy::too_many_arguments)]
fn integer_phase(
    capped: &Capped,
    frag: &PricingContext,
    pool: &mut ColumnPool,
    generated: &GeneratedCapped,
    watts_left: f64,
    cap_watts: f64,
    least_known_watts: f64,
    options: &SolveOptions,
    clock: &Instant,
) -> Result<Vec<Measured>, String> {
    let elapsed = || clock.elapsed().as_secs_f64();
    let finish_s = options.time_limit_s - finish_reserve_s(options.time_limit_s);
    let finish = *clock + Duration::from_secs_f64(finish_s.max(0.0));
    let weight = generated.last_weight;
    let weighted = capped.weighted(weight)?;
    // The repairs that wake few watts: at the LP's weight of power, and at a heavier one.
    let power_aware = [
        weighted,
        capped.weighted(POWER_AWARE_WEIGHT_FACTOR * weight.max(1.0))?,
    ];
    let weighted_context = capped.context(&power_aware[0]);
    let mut placements = Vec::new();
    let mut to_round = vec![generated.last_lambda.clone()];
    let mut margin_watts = 0.0;
    for _ in 0..DIVES {
        let left = finish_s - elapsed();
        if left <= 0.0 {
            break;
        }
        let dive = Dive::new_capped(
            pool,
            &capped.type_nodes,
            &capped.shape_counts,
            Demand::Exactly,
            options.threads,
            left * DIVE_SHARE,
            Some(watts_left - margin_watts),
        )?;
        if let Some(dive) = dive {
            let dive_deadline = Instant::now()
                + Duration::from_secs_f64(((finish_s - elapsed()) * DIVE_SHARE).max(0.0));
            // The dive prices greedily at the last LP's weight of power.
            let mut price =
                |pool: &ColumnPool, duals: &[f64], convexity: &[f64], tasks_left: &[usize]| {
                    let priced = Priced {
                        duals,
                        convexity,
                        weight,
                        tolerance: 1e-9,
                    };
                    greedy_columns(
                        frag,
                        &weighted_context,
                        pool,
                        &priced,
                        tasks_left,
                        dive_deadline,
                    )
                };
            let start = dive.start.clone();
            to_round.push(start);
            to_round.push(dive.run(pool, &mut price, dive_deadline)?.lambda);
        }
        let least_excess = round_within_cap(
            capped,
            frag,
            pool,
            &power_aware,
            to_round.drain(..),
            (cap_watts, finish),
            &mut placements,
        )?;
        if !placements.is_empty() || !least_excess.is_finite() {
            break;
        }
        // Never below the middle of the cap and the least power known.
        margin_watts = (margin_watts + MARGIN_FACTOR * least_excess.max(1.0))
            .min((cap_watts - least_known_watts) / 2.0);
    }
    Ok(placements)
}

/// Rounds and repairs each of `lambdas` (first fit, and the power-aware repairs at each of
/// `power_aware`'s weights), keeping in `placements` those within `cap_watts`; returns the
/// least excess over the cap of any placement (∞: none), for the next dive's margin.
fn round_within_cap(
    capped: &Capped,
    frag: &PricingContext,
    pool: &mut ColumnPool,
    power_aware: &[Vec<TypeCluster>],
    lambdas: impl Iterator<Item = Vec<(usize, f64)>>,
    (cap_watts, finish): (f64, Instant),
    placements: &mut Vec<Measured>,
) -> Result<f64, String> {
    let mut least_excess = f64::INFINITY;
    for lambda in lambdas {
        let Some(uses) = round_and_repair(
            frag,
            pool,
            &lambda,
            Demand::Exactly,
            Repair::FirstFit,
            finish,
        ) else {
            continue;
        };
        let mut candidates = vec![capped.measured(frag.types, pool, &uses)?];
        for types in power_aware {
            candidates.extend(weighted_rounding(capped, types, pool, &lambda, finish)?);
        }
        for measured in candidates {
            least_excess = least_excess.min(measured.power_watts - cap_watts);
            if measured.power_watts <= cap_watts {
                placements.push(measured);
            }
        }
    }
    Ok(least_excess)
}
