//! Pricing: the best configuration of one node type under shape prices `y`,
//!
//! `ρ_τ(y) = min_{c feasible on τ} cost(c) − cost(empty_τ) − Σ_s y_s·a_{s,c}`,
//!
//! solved by the exact search of [`super::pattern_pricing`] (by CPU level and device
//! pattern), with the node's own part of the objective from
//! [`crate::node_value::NodeValue`]: power, fragmentation or nothing (allocation,
//! whose `−allocated` is in the profits). Its bound holds even when the search stops early
//! (nodes or time), which keeps the Lagrangian bound valid (see [`super::bound`]).

use std::time::Instant;

use gapbench_model::{DeviceSet, Task, TypicalPods};

use super::column::{Column, TypeCluster};
use super::pattern_pricing;
use crate::node_value::NodeValue;
use crate::shapes::Shapes;
use crate::solve::Objective;

/// What pricing one node type found.
pub(crate) struct Priced {
    /// A proven lower bound on `ρ_τ(y)`, at most 0 (the empty node is a configuration).
    pub lower_bound: f64,
    /// The best configuration found, with its exact reduced cost under `y`.
    pub best: Option<(Column, f64)>,
    /// The search proved `best` optimal.
    pub proven: bool,
}

/// The read-only inputs every pricing call shares.
pub(crate) struct PricingContext<'a> {
    pub objective: Objective,
    pub shapes: &'a Shapes,
    pub tasks: &'a [Task],
    pub typical: &'a TypicalPods,
    pub types: &'a [TypeCluster],
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

    /// Prices node type `type_index` under `prices` (one per shape) until `deadline`,
    /// warm-started from `start` (a column of this type, e.g. the heuristic pricing's best)
    /// when given.
    pub fn price(
        &self,
        type_index: usize,
        prices: &[f64],
        start: Option<&Column>,
        deadline: Instant,
    ) -> Result<Priced, String> {
        self.price_among(type_index, prices, start, deadline, None, false)
    }

    /// [`Self::price`] looking at `scans` patterns at most: the deterministic limit of a
    /// column generation under a round cap (`SolveOptions::max_pricing_rounds`).
    pub fn price_scanning(
        &self,
        type_index: usize,
        prices: &[f64],
        start: Option<&Column>,
        deadline: Instant,
        scans: u64,
    ) -> Result<Priced, String> {
        self.price_among(type_index, prices, start, deadline, Some(scans), false)
    }

    /// [`Self::price`] under a branch-and-price node's rows (see [`super::branch`]): over
    /// the non-empty configurations only when `non_empty` (rows on a type's node count
    /// charge every non-empty configuration, so `lower_bound` bounds `min_{c ≠ ∅}` and may
    /// be positive, see [`pattern_pricing::best_configuration`]); each socket at work
    /// worth `socket_dual` more (rows on a type's sockets); `scans` as in
    /// [`Self::price_scanning`]. The reduced cost returned leaves the rows' duals out.
    #[allow(clippy::too_many_arguments)]
    pub fn price_in_tree(
        &self,
        type_index: usize,
        prices: &[f64],
        start: Option<&Column>,
        deadline: Instant,
        scans: Option<u64>,
        non_empty: bool,
        socket_dual: f64,
    ) -> Result<Priced, String> {
        if socket_dual == 0.0 {
            return self.price_among(type_index, prices, start, deadline, scans, non_empty);
        }
        // The start's value would leave the socket dual out: the search starts bare.
        let value = self.types[type_index].value.with_socket_dual(socket_dual);
        self.search(type_index, prices, None, &value, deadline, scans, non_empty)
    }

    fn price_among(
        &self,
        type_index: usize,
        prices: &[f64],
        start: Option<&Column>,
        deadline: Instant,
        scans: Option<u64>,
        non_empty: bool,
    ) -> Result<Priced, String> {
        let kind = &self.types[type_index];
        self.search(
            type_index,
            prices,
            start,
            &kind.value,
            deadline,
            scans,
            non_empty,
        )
    }

    /// The pattern search on type `type_index` valued by `value`.
    #[allow(clippy::too_many_arguments)]
    fn search(
        &self,
        type_index: usize,
        prices: &[f64],
        start: Option<&Column>,
        value: &NodeValue,
        deadline: Instant,
        scans: Option<u64>,
        non_empty: bool,
    ) -> Result<Priced, String> {
        let incumbent = start
            .filter(|c| c.type_index == type_index)
            .map(|c| (c.slots.clone(), c.cost - c.priced(prices)));
        let kind = &self.types[type_index];
        let searched = pattern_pricing::best_configuration(
            kind.node_type(),
            value,
            self.shapes,
            |s| self.profit(s, prices),
            incumbent,
            Some(deadline),
            scans,
            non_empty,
        );
        let best = self.priced_column(type_index, searched.slots, prices)?;
        Ok(Priced {
            lower_bound: searched.lower_bound,
            best,
            proven: searched.proven,
        })
    }
}
