//! The integer phase of one capped solve (the `capped` module): dives on the master with
//! the cap row, so the dive's λ respects the cap, rounds and repairs the dived and the LP
//! solution (also where they add the least of `F + w·P`, waking few watts), and keeps only
//! the placements whose measured power is within the cap; and the integer master under
//! the cap row.

use std::time::{Duration, Instant};

use super::super::column::{Added, ColumnPool, TypeCluster};
use super::super::dive::Dive;
use super::super::incumbent::finish_reserve_s;
use super::super::integer::{round_and_repair, solve_integer_master_capped, Repair};
use super::super::pricing::PricingContext;
use super::cap_context::{greedy_columns, Capped, Measured, Priced};
use crate::model::Demand;
use crate::solve::SolveOptions;

/// The share of the integer phase the dive may use (the roundings follow).
const DIVE_SHARE: f64 = 0.5;

/// Dives at most per capped solve, and how far below the cap the next one aims (times the
/// last repair's excess over the cap).
const DIVES: usize = 2;
const MARGIN_FACTOR: f64 = 2.0;

/// The heavier weight of power (milli-GPU per W) of the power-aware repairs, times the
/// LP's (at least 1: on the whole cluster the front's chord has a slope near 1).
const POWER_AWARE_WEIGHT_FACTOR: f64 = 8.0;

/// An integer master under the cap: from `start` (within the cap), over the `allowed`
/// pool columns.
pub(super) struct IntegerUnderCap<'a> {
    pub start: &'a [(usize, u32)],
    pub allowed: &'a [usize],
    /// The cap less the idle cluster's watts, and the cap.
    pub watts_left: f64,
    pub cap_watts: f64,
    pub time_limit_s: f64,
}

/// The integer master under the cap row over the seeds' and the last LP's columns: it
/// finds placements near the least power that the dive's repairs push over the cap.
/// `None` when HiGHS returns none or its placement is above the cap.
pub(super) fn integer_master_under_cap(
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

/// The cap of a capped solve's integer phase, and where its column generation left off.
pub(super) struct CapTarget<'a> {
    /// The last master LP's solution, and its weight of power `w = −π`.
    pub last_lambda: &'a [(usize, f64)],
    pub last_weight: f64,
    /// The cap less the idle cluster's watts, and the cap.
    pub watts_left: f64,
    pub cap_watts: f64,
    /// The least power of a known placement, at most the cap.
    pub least_known_watts: f64,
}

/// The integer phase: dives on the master under the cap row (`cap.watts_left`: the cap
/// less the idle cluster's watts), rounds and repairs the LP's and the dive's λ, and keeps
/// the checked placements whose measured power is within `cap.cap_watts`. A dive that stops
/// with a few fractional columns leaves their repair above the cap by a few nodes' watts:
/// the dive is then run again under a cap lowered by [`MARGIN_FACTOR`] times that excess
/// (at most [`DIVES`] dives, while time is left), never below the middle of the cap and
/// `cap.least_known_watts`.
pub(super) fn integer_phase(
    capped: &Capped,
    frag: &PricingContext,
    pool: &mut ColumnPool,
    cap: CapTarget,
    options: &SolveOptions,
    clock: &Instant,
) -> Result<Vec<Measured>, String> {
    let elapsed = || clock.elapsed().as_secs_f64();
    let finish_s = options.time_limit_s - finish_reserve_s(options.time_limit_s);
    let finish = *clock + Duration::from_secs_f64(finish_s.max(0.0));
    let weight = cap.last_weight;
    let weighted = capped.weighted(weight)?;
    // The repairs that wake few watts: at the LP's weight of power, and at a heavier one.
    let power_aware = [
        weighted,
        capped.weighted(POWER_AWARE_WEIGHT_FACTOR * weight.max(1.0))?,
    ];
    let greedy = DivePricing {
        frag,
        weighted: capped.context(&power_aware[0]),
        weight,
    };
    let mut placements = Vec::new();
    let mut to_round = vec![cap.last_lambda.to_vec()];
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
            Some(cap.watts_left - margin_watts),
        )?;
        if let Some(dive) = dive {
            let dive_deadline = Instant::now()
                + Duration::from_secs_f64(((finish_s - elapsed()) * DIVE_SHARE).max(0.0));
            to_round.push(dive.start.clone());
            to_round.push(greedy.run(dive, pool, dive_deadline)?);
        }
        let least_excess = round_within_cap(
            capped,
            frag,
            pool,
            &power_aware,
            to_round.drain(..),
            (cap.cap_watts, finish),
            &mut placements,
        )?;
        if !placements.is_empty() || !least_excess.is_finite() {
            break;
        }
        // Never below the middle of the cap and the least power known.
        margin_watts = (margin_watts + MARGIN_FACTOR * least_excess.max(1.0))
            .min((cap.cap_watts - cap.least_known_watts) / 2.0);
    }
    Ok(placements)
}

/// A capped dive's pricing: greedy, at the last LP's weight of power.
struct DivePricing<'f, 'a> {
    frag: &'f PricingContext<'a>,
    /// The types priced at `F + weight·P`.
    weighted: PricingContext<'f>,
    weight: f64,
}

impl DivePricing<'_, '_> {
    /// Runs `dive` until `deadline`; returns its λ.
    fn run(
        &self,
        dive: Dive,
        pool: &mut ColumnPool,
        deadline: Instant,
    ) -> Result<Vec<(usize, f64)>, String> {
        let mut price =
            |pool: &ColumnPool, duals: &[f64], convexity: &[f64], tasks_left: &[usize]| {
                let priced = Priced {
                    duals,
                    convexity,
                    weight: self.weight,
                    tolerance: 1e-9,
                };
                greedy_columns(
                    self.frag,
                    &self.weighted,
                    pool,
                    &priced,
                    tasks_left,
                    deadline,
                )
            };
        Ok(dive.run(pool, &mut price, deadline)?.lambda)
    }
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
