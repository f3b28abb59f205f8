//! Pricing: the best configuration of one node type under shape prices `y`,
//!
//! `ρ_τ(y) = min_{c feasible on τ} cost(c) − cost(empty_τ) − Σ_s y_s·a_{s,c}`,
//!
//! first by an exact search — [`super::pattern_pricing`] for power and fragmentation (by
//! CPU level and device pattern), [`super::knapsack`] for allocation (by cost level) — and,
//! for the knapsack, when it runs out of nodes or time, as the per-node model of
//! [`crate::model`] on
//! a one-node cluster of type `τ` (`x[s]` tasks per shape, whole devices `w[d]`, sharing
//! slots `z[d,j]`, so device packing is exact), with the objective's own per-node piece:
//! - power: `P(n) = constant + dynamic` of `PlacementModel::add_power`;
//! - fragmentation: `F(n) = P_typ·(1000·G − Σ_s m_s·x_s) − Σ_t p_t·v_t` of
//!   `PlacementModel::add_frag` (`P_typ` the typical pods' total probability);
//! - allocation: `−Σ_s m_s·x_s` (maximised as a minimisation).
//!
//! The search's bound, and HiGHS's proven dual bound of the MIP, bound `ρ_τ` from below
//! even when they stop early, which keeps the Lagrangian bound valid (see
//! [`super::bound`]).

use std::time::{Duration, Instant};

use gapbench_model::{DeviceSet, Task, TypicalPods};
use good_lp::{Expression, SolverModel};

use super::column::{Column, TypeCluster};
use super::{knapsack, pattern_pricing};
use crate::common::start_from;
use crate::model::{Demand, PlacementModel};
use crate::shapes::Shapes;
use crate::solve::{run_highs, Objective, RawStatus, SolveOptions};

/// What pricing one node type found.
pub(crate) struct Priced {
    /// A proven lower bound on `ρ_τ(y)`, at most 0 (the empty node is a configuration).
    pub lower_bound: f64,
    /// The best configuration HiGHS found, with its exact reduced cost under `y`.
    pub best: Option<(Column, f64)>,
    /// HiGHS proved `best` optimal (within the pricing gap).
    pub proven: bool,
    /// The knapsack search alone proved it (no MIP ran).
    pub by_search: bool,
}

/// The read-only inputs every pricing call shares.
pub(crate) struct PricingContext<'a> {
    pub objective: Objective,
    pub shapes: &'a Shapes,
    pub tasks: &'a [Task],
    pub typical: &'a TypicalPods,
    pub types: &'a [TypeCluster],
    /// The shape of each task index (`None` outside the shape set).
    pub shape_of: Vec<Option<usize>>,
    /// `P_typ = Σ_t p_t` over the typical pods.
    pub typical_probability: f64,
}

impl PricingContext<'_> {
    /// What one task of shape `s` earns a configuration under `prices` before the rest of
    /// its effect on the node's cost: its price, plus the linear part of the cost it
    /// removes — its GPU milli for allocation (cost `−allocated`), `P_typ·m_s` for
    /// fragmentation (`F(n) = P_typ·L_n − Σ_t p_t·v_t` falls with the free milli `L_n`).
    pub fn profit(&self, s: usize, prices: &[f64]) -> f64 {
        let milli = f64::from(self.shapes.shapes[s].total_gpu_milli());
        match self.objective {
            Objective::Alloc => prices[s] + milli,
            Objective::Frag => prices[s] + self.typical_probability * milli,
            Objective::Power => prices[s],
        }
    }

    /// The column of type `type_index` holding `slots`, judged by the checker.
    pub fn column(
        &self,
        type_index: usize,
        slots: Vec<(usize, DeviceSet)>,
    ) -> Result<Column, String> {
        Column::new(
            type_index,
            self.types,
            self.shapes,
            self.tasks,
            self.typical,
            self.objective,
            slots,
        )
    }

    /// [`Self::column`] with its reduced cost under `prices` (`None` for no slots: the
    /// empty node is the convexity slack, not a column).
    fn priced_column(
        &self,
        type_index: usize,
        slots: Vec<(usize, DeviceSet)>,
        prices: &[f64],
    ) -> Result<Option<(Column, f64)>, String> {
        if slots.is_empty() {
            return Ok(None);
        }
        let column = self.column(type_index, slots)?;
        let reduced = column.cost - column.priced(prices);
        Ok(Some((column, reduced)))
    }

    /// A lower bound on `ρ_τ(y)` that needs no solve: the least a configuration can cost
    /// relative to the empty node (power only grows; allocation earns at most the node's
    /// GPUs; fragmentation falls at most to 0), less the most every positive price can
    /// earn on one node.
    fn crude_lower_bound(&self, type_index: usize, prices: &[f64]) -> f64 {
        let kind = &self.types[type_index];
        let node_type = kind.node_type();
        let least_cost = match self.objective {
            Objective::Power => 0.0,
            Objective::Alloc => -f64::from(node_type.gpu_milli()),
            Objective::Frag => -kind.empty_cost,
        };
        let earned: f64 = self
            .shapes
            .shapes
            .iter()
            .zip(prices)
            .map(|(shape, &y)| y.max(0.0) * f64::from(shape.max_per_node(node_type)))
            .sum();
        (least_cost - earned).min(0.0)
    }

    /// Whether a task never lowers a node's cost (power rises with load; allocation's
    /// `−allocated` is accounted in the profit): shapes without profit can then be left
    /// out of pricing without changing its optimum.
    fn monotone(&self) -> bool {
        self.objective != Objective::Frag
    }

    /// Prices node type `type_index` under `prices` (one per shape), warm-started from
    /// `start` (a column of this type, e.g. the heuristic pricing's best) when given. The
    /// knapsack search may take `search_share` of the time limit; the MIP, if the search did
    /// not prove its answer, what is left. Pattern pricing takes it all (no MIP follows).
    pub fn price(
        &self,
        type_index: usize,
        prices: &[f64],
        start: Option<&Column>,
        options: &SolveOptions,
        search_share: f64,
    ) -> Result<Priced, String> {
        let started = Instant::now();
        // Without a MIP to follow, pattern pricing takes the whole time.
        let search_share = if by_patterns(self.objective) {
            1.0
        } else {
            search_share
        };
        let search_deadline =
            started + Duration::from_secs_f64(options.time_limit_s * search_share);
        let searched = self.price_by_search(type_index, prices, start, search_deadline)?;
        // Pattern pricing's own bound beats what the MIP proves in the same time (measured
        // on the whole cluster: −364 against −576 on an 8×G2 node early on), so only the
        // knapsack falls back to the MIP.
        if searched.proven || by_patterns(self.objective) {
            return Ok(searched);
        }
        // The search ran out of nodes: the MIP decides, from the better start, and either
        // bound holds.
        let start = better(start, searched.best.as_ref().map(|(c, _)| c), prices);
        let options = SolveOptions {
            time_limit_s: (options.time_limit_s - started.elapsed().as_secs_f64()).max(0.01),
            ..options.clone()
        };
        let mip = self.price_by_mip(type_index, prices, start, &options)?;
        let best = match (searched.best, mip.best) {
            (Some(a), Some(b)) => Some(if b.1 < a.1 { b } else { a }),
            (a, b) => a.or(b),
        };
        Ok(Priced {
            lower_bound: searched.lower_bound.max(mip.lower_bound),
            best,
            proven: mip.proven,
            by_search: false,
        })
    }

    /// Pricing as the per-node MIP (see the module documentation).
    fn price_by_mip(
        &self,
        type_index: usize,
        prices: &[f64],
        start: Option<&Column>,
        options: &SolveOptions,
    ) -> Result<Priced, String> {
        let kind = &self.types[type_index];
        let node_type = *kind.node_type();
        let mut model = PlacementModel::new(&kind.one_node, self.shapes, Demand::AtMost, false);
        let mut objective = Expression::default();
        let mut offset = -kind.empty_cost;
        let mut milli_weight = 0.0;
        let (mut power_terms, mut frag_terms) = (None, None);
        match self.objective {
            Objective::Power => {
                let power = model.add_power();
                objective += power.dynamic_watts.clone();
                offset += power.constant_watts;
                power_terms = Some(power);
            }
            Objective::Frag => {
                let frag = model.add_frag(self.typical);
                objective -= frag.q3_weighted.clone();
                offset += self.typical_probability * f64::from(node_type.gpu_milli());
                milli_weight = self.typical_probability;
                frag_terms = Some(frag);
            }
            Objective::Alloc => milli_weight = 1.0,
        }
        let counts = model.nodes[0].count.clone();
        for (s, shape) in self.shapes.shapes.iter().enumerate() {
            let Some(x) = counts[s] else { continue };
            let coefficient = -prices[s] - milli_weight * f64::from(shape.total_gpu_milli());
            if coefficient != 0.0 {
                objective.add_mul(coefficient, x);
            }
            if self.monotone() && self.profit(s, prices) <= 0.0 {
                model.rows.push(Expression::from(x).leq(0.0));
            }
        }
        // The start must respect the rows above: only columns of profitable shapes.
        let start = start
            .filter(|c| c.type_index == type_index)
            .filter(|c| {
                !self.monotone() || c.counts.iter().all(|&(s, _)| self.profit(s, prices) > 0.0)
            })
            .map(|c| {
                let mut next = vec![0usize; self.shapes.shapes.len()];
                let mut placement = vec![None; self.tasks.len()];
                for &(s, devices) in &c.slots {
                    placement[self.shapes.shapes[s].tasks[next[s]]] =
                        Some(gapbench_model::Placement { node: 0, devices });
                    next[s] += 1;
                }
                start_from(
                    &model,
                    &placement,
                    power_terms.as_ref(),
                    frag_terms.as_ref(),
                    None,
                )
            })
            .transpose()?;
        let problem_vars = std::mem::take(&mut model.cols.vars);
        let mut problem = problem_vars.minimise(objective).using(good_lp::highs);
        for row in std::mem::take(&mut model.rows) {
            problem.add_constraint(row);
        }
        let raw = run_highs(problem, start.as_deref(), options);
        let bound = match &raw.status {
            RawStatus::Error(e) => return Err(format!("pricing {}: {e}", node_type.label())),
            RawStatus::Infeasible => {
                return Err(format!(
                    "pricing {} is infeasible although the empty node is a configuration",
                    node_type.label()
                ))
            }
            RawStatus::Optimal => raw.bound.or(raw.objective),
            RawStatus::Limit => raw.bound,
        };
        // Without a bound from HiGHS (stopped before its first LP), the crude one keeps the
        // round's Lagrangian bound finite.
        let lower_bound = bound.map_or_else(
            || self.crude_lower_bound(type_index, prices),
            |b| (b + offset).min(0.0),
        );
        let best = match &raw.columns {
            None => None,
            Some(values) => {
                let placement = model.decode(values, self.tasks.len())?;
                let slots: Vec<(usize, DeviceSet)> = placement
                    .iter()
                    .enumerate()
                    .filter_map(|(task, p)| Some((self.shape_of[task]?, p.as_ref()?.devices)))
                    .collect();
                self.priced_column(type_index, slots, prices)?
            }
        };
        // Optimal within the pricing gap is not yet a proof that no column improves: only
        // a bound that meets the best configuration is.
        let best_reduced = best.as_ref().map_or(0.0, |(_, reduced)| reduced.min(0.0));
        let proven = matches!(raw.status, RawStatus::Optimal)
            && best_reduced - lower_bound <= 1e-4 * best_reduced.abs().max(1.0);
        Ok(Priced {
            lower_bound,
            best,
            proven,
            by_search: false,
        })
    }
}

impl PricingContext<'_> {
    /// Exact pricing by search: [`pattern_pricing::best_configuration`] or
    /// [`knapsack::best_configuration`] (see [`by_patterns`]).
    fn price_by_search(
        &self,
        type_index: usize,
        prices: &[f64],
        start: Option<&Column>,
        deadline: Instant,
    ) -> Result<Priced, String> {
        let incumbent = start
            .filter(|c| c.type_index == type_index)
            .map(|c| (c.slots.clone(), c.cost - c.priced(prices)));
        let kind = &self.types[type_index];
        let profit = |s| self.profit(s, prices);
        let searched = if by_patterns(self.objective) {
            pattern_pricing::best_configuration(
                kind,
                &kind.value,
                self.shapes,
                profit,
                incumbent,
                Some(deadline),
            )
        } else {
            knapsack::best_configuration(
                kind,
                self.objective,
                self.shapes,
                profit,
                incumbent,
                Some(deadline),
            )
        };
        let best = self.priced_column(type_index, searched.slots, prices)?;
        Ok(Priced {
            lower_bound: searched.lower_bound,
            best,
            proven: searched.proven,
            by_search: searched.proven,
        })
    }
}

/// The column of the two with the lower reduced cost under `prices`.
fn better<'a>(a: Option<&'a Column>, b: Option<&'a Column>, prices: &[f64]) -> Option<&'a Column> {
    let reduced = |c: &Column| c.cost - c.priced(prices);
    match (a, b) {
        (Some(a), Some(b)) => Some(if reduced(b) < reduced(a) { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// Whether pattern pricing, rather than the knapsack over cost levels, searches the
/// objective: fragmentation's value depends on each device's load, which the knapsack does
/// not see; for power, pattern pricing with its dynamic-program bound converges faster on
/// the whole cluster (FGD at 50 %, 10 s: 0.8 % between bound and incumbent, against 4.5 %).
fn by_patterns(objective: Objective) -> bool {
    objective != Objective::Alloc
}
