//! Exact pricing by branch and bound over CPU levels and device patterns.
//!
//! Pricing a node type is `ρ = V(empty) − max_c Φ(c)`, with `Φ(c) = Σ_s π_s·n_s + V(c)`:
//! profits `π_s` (the shape's price, plus what it removes of a linear cost: its GPU milli
//! for allocation, `P·m_s` for fragmentation) and the node's own value `V` by CPU level and
//! device ([`crate::node_value`]: fragmentation, power, allocation, or a weighted sum). The search
//! splits by level `l` (CPU used at most `C_l`); the best over levels is the optimum, since
//! a configuration's own level prices it exactly and any other admissible one no higher.
//!
//! Per level, largest Lagrangian bound `L_l(λ)` first:
//! 1. `λ` minimising `L_l` ([`dual::Relaxation::minimise`]); a level whose bound does not
//!    beat the incumbent is done;
//! 2. the device patterns that can be part of a better configuration ([`patterns`]);
//! 3. depth first: CPU-only tasks, multi-GPU tasks, then one pattern per device in
//!    non-decreasing pattern order (devices are interchangeable; devices not given a
//!    pattern stay free). Every node of the search is itself a configuration (the rest
//!    free), valued exactly; a subtree is cut when `constant + λ·cap + Σ chosen ℓ + R·max ℓ`
//!    (its Lagrangian bound at the same `λ`) does not beat the incumbent.
//!
//! When a level runs out of patterns, search nodes or pattern scans (an optional budget on
//! the patterns the search looks at, the deterministic limit of a capped column
//! generation), or the deadline passes, its Lagrangian bound stands in for it: the
//! returned lower bound stays valid.

mod device_dp;
mod dual;
mod patterns;

use std::time::Instant;

use gapbench_model::{DeviceSet, NodeType, MILLI_GPU_PER_GPU};

use self::device_dp::{ShareTable, SlotTable};
use self::dual::{Evaluated, Item, ItemKind, Multipliers, Relaxation, Slots};
use self::patterns::Pattern;
use crate::node_value::NodeValue;
use crate::shapes::{ShapeKind, Shapes};

/// Search nodes one pricing call may take in all.
const NODE_BUDGET: u64 = 400_000;
/// Patterns one level may enumerate before the search gives up on it.
const PATTERN_LIMIT: usize = 20_000;

/// The best configuration of one node type found by [`best_configuration`].
pub(crate) struct Searched {
    /// Slots `(shape, devices)` of the best configuration, empty for the empty node.
    pub slots: Vec<(usize, DeviceSet)>,
    /// A proven lower bound on `min_c V(empty) − Φ(c)`, the pricing value (at most 0).
    pub lower_bound: f64,
    /// Every subproblem was searched to the end: the slots are optimal.
    pub proven: bool,
}

/// The exact best configuration of `node_type` under per-shape profits `profit(s)`, the node
/// valued by `value` (only positive profits can help: a task never raises `V`).
/// `incumbent` is a known configuration's value `V(empty) − Φ`, if any.
///
/// With `non_empty`, over the non-empty configurations only (branching rows on a type's
/// node count charge every non-empty configuration, so the empty node is no longer the
/// fallback; see [`crate::cg`]'s branching). The lower bound is then on
/// `min_{c ≠ ∅} V(empty) − Φ(c)` and may be positive, and shapes of non-positive profit are
/// searched too: the best non-empty configuration may need one when no shape has a
/// positive profit.
#[allow(clippy::too_many_arguments)]
pub(crate) fn best_configuration(
    node_type: &NodeType,
    value: &NodeValue,
    shapes: &Shapes,
    profit: impl Fn(usize) -> f64,
    incumbent: Option<(Vec<(usize, DeviceSet)>, f64)>,
    deadline: Option<Instant>,
    scans: Option<u64>,
    non_empty: bool,
) -> Searched {
    let items = pricing_items(node_type, shapes, profit, non_empty);
    let empty = value.empty();
    let scale = items
        .iter()
        .map(|i| i.profit)
        .fold(empty.abs().max(1.0), f64::max);
    let tolerance = 1e-9 * scale;
    let (best_slots, best_phi) = match incumbent {
        Some((slots, reduced)) if reduced < 0.0 || non_empty => (slots, empty - reduced),
        _ if non_empty => (Vec::new(), f64::NEG_INFINITY),
        _ => (Vec::new(), empty),
    };
    let relaxation = Relaxation::new(
        &items,
        value,
        u64::from(node_type.cpu_milli),
        node_type.memory_mib,
    );
    let devices = u32::from(node_type.gpu_count);
    let (lambda, tables, subproblems) = ordered_subproblems(&relaxation, devices);
    let mut search = SubproblemSearch {
        relaxation: &relaxation,
        tolerance,
        deadline,
        non_empty,
        lambda,
        best_slots,
        best_phi,
        unresolved: f64::NEG_INFINITY,
        budget: NODE_BUDGET,
        scans_left: scans,
    };
    for (level, slots, dp_bound) in subproblems {
        search.search(level, slots, dp_bound, &tables[level]);
    }
    let SubproblemSearch {
        best_slots,
        best_phi,
        unresolved,
        ..
    } = search;
    let upper = best_phi.max(unresolved);
    let lower_bound = (empty - upper).min(empty - best_phi - tolerance);
    Searched {
        slots: best_slots,
        lower_bound: if non_empty {
            lower_bound
        } else {
            lower_bound.min(0.0)
        },
        proven: unresolved == f64::NEG_INFINITY,
    }
}

/// The search's items: the shapes that fit a node of the type and can help (a positive
/// profit, or any profit when only non-empty configurations count).
fn pricing_items(
    node_type: &NodeType,
    shapes: &Shapes,
    profit: impl Fn(usize) -> f64,
    non_empty: bool,
) -> Vec<Item> {
    let devices = u32::from(node_type.gpu_count);
    shapes
        .shapes
        .iter()
        .enumerate()
        .filter_map(|(s, shape)| {
            let most = shape.max_per_node(node_type);
            let p = profit(s);
            (most > 0 && (p > 0.0 || non_empty)).then(|| Item {
                shape: s,
                profit: p,
                cpu_milli: u64::from(shape.cpu_milli),
                memory_mib: shape.memory_mib,
                kind: match shape.kind() {
                    ShapeKind::CpuOnly => ItemKind::CpuOnly,
                    ShapeKind::Share => ItemKind::Share(u32::from(shape.gpu_milli)),
                    ShapeKind::Whole => ItemKind::Whole(u32::from(shape.gpu_count)),
                },
                most,
                scarce: match shape.kind() {
                    ShapeKind::Share => {
                        most < devices * (MILLI_GPU_PER_GPU / u32::from(shape.gpu_milli))
                    }
                    ShapeKind::Whole => shape.gpu_count == 1 && most < devices,
                    ShapeKind::CpuOnly => false,
                },
            })
        })
        .collect()
}

/// Subproblems `(level, slots, dynamic program's bound)`, largest bound first: every
/// level, and, where a device at work costs a fixed amount, every number of devices at
/// work (of `devices`). Also the top level's Lagrangian multipliers (where the search starts) and the
/// dynamic program's table per level.
#[allow(clippy::type_complexity)]
fn ordered_subproblems(
    relaxation: &Relaxation,
    devices: u32,
) -> (Multipliers, Vec<SlotTable>, Vec<(usize, Slots, f64)>) {
    let value = relaxation.value;
    let slot_choices: Vec<Slots> = if value.busy_is_fixed {
        (0..=devices)
            .map(|count| Slots {
                count,
                free_allowed: false,
            })
            .collect()
    } else {
        vec![Slots {
            count: devices,
            free_allowed: true,
        }]
    };
    // Memory's price for the dynamic program: the Lagrangian one of the whole node at its
    // top level (any price ≥ 0 keeps the bound valid).
    let top = value.levels.len() - 1;
    let whole = Slots {
        count: devices,
        free_allowed: !value.busy_is_fixed,
    };
    let (lambda, _) = relaxation.minimise(top, whole, Multipliers::default());
    let shares = ShareTable::new(relaxation, lambda.memory);
    // From the top level down, each level shares the table of the one above when their
    // devices are valued alike (the table's cost is its devices × CPU units × steps).
    let free_allowed = !value.busy_is_fixed;
    let mut tables: Vec<SlotTable> = Vec::with_capacity(value.levels.len());
    for level in (0..value.levels.len()).rev() {
        let table = match tables.last() {
            Some(wider) if value.same_devices(level, level + 1) => {
                SlotTable::sharing(wider, relaxation, &shares, level)
            }
            _ => SlotTable::new(relaxation, &shares, level, free_allowed),
        };
        tables.push(table);
    }
    tables.reverse();
    let mut subproblems: Vec<(usize, Slots, f64)> = (0..value.levels.len())
        .flat_map(|level| slot_choices.iter().map(move |&slots| (level, slots)))
        .map(|(level, slots)| (level, slots, tables[level].bound(slots)))
        .collect();
    subproblems.sort_by(|a, b| {
        b.2.total_cmp(&a.2)
            .then(a.0.cmp(&b.0))
            .then(a.1.count.cmp(&b.1.count))
    });
    (lambda, tables, subproblems)
}

/// The search over subproblems: the best configuration so far, and the budgets and
/// multipliers one subproblem hands to the next.
struct SubproblemSearch<'r> {
    relaxation: &'r Relaxation<'r>,
    tolerance: f64,
    deadline: Option<Instant>,
    non_empty: bool,
    /// Lagrangian multipliers, carried from one subproblem to the next.
    lambda: Multipliers,
    best_slots: Vec<(usize, DeviceSet)>,
    best_phi: f64,
    /// The largest bound of a subproblem not searched to its end.
    unresolved: f64,
    /// Search nodes left.
    budget: u64,
    /// Pattern scans left (`None`: no such limit).
    scans_left: Option<u64>,
}

impl SubproblemSearch<'_> {
    /// Searches one subproblem unless its bound (`dp_bound`, then the Lagrangian one) does
    /// not beat the incumbent.
    fn search(&mut self, level: usize, slots: Slots, dp_bound: f64, table: &SlotTable) {
        let relaxation = self.relaxation;
        if dp_bound <= self.best_phi + self.tolerance {
            return;
        }
        // The Lagrangian bound, for the search's pattern threshold.
        let (found, lagrangian) = relaxation.minimise(level, slots, self.lambda);
        self.lambda = found;
        let lambda = found;
        let bound = dp_bound.min(lagrangian);
        if bound <= self.best_phi + self.tolerance {
            return;
        }
        let evaluated = relaxation.evaluate(level, slots, lambda);
        let at = &relaxation.value.levels[level];
        // A pattern in one slot leaves the other slots their best.
        let others = at.constant
            + lambda.of(at.cpu_used_at_most, relaxation.memory_mib)
            + evaluated.cpu_only
            + evaluated.devices[slots.count.saturating_sub(1) as usize]
            + evaluated.fixed_free;
        let threshold = self.best_phi + self.tolerance - others;
        let Some(mut found) = patterns::enumerate(
            relaxation,
            level,
            slots.free_allowed,
            lambda,
            threshold,
            PATTERN_LIMIT,
        ) else {
            self.unresolved = self.unresolved.max(bound);
            return;
        };
        let free = found
            .iter()
            .position(Pattern::is_free)
            .map(|i| found.remove(i).value)
            .unwrap_or(f64::NEG_INFINITY);
        let mut search = Search::new(
            relaxation,
            level,
            slots,
            lambda,
            &evaluated,
            table,
            found,
            free,
            self.best_phi,
            self.tolerance,
            self.budget,
            self.deadline,
        );
        search.non_empty = self.non_empty;
        search.scans = self.scans_left;
        search.run();
        self.budget = search.budget;
        self.scans_left = search.scans;
        if search.exhausted {
            self.unresolved = self.unresolved.max(bound);
        }
        if let Some(best) = search.best.take() {
            self.best_phi = search.best_phi;
            self.best_slots = search.slots(&best);
        }
    }
}

/// Per pattern, `Σ π'⁺` of its scarce tasks; and `Σ u_s·(π'_s)⁺` over the scarce items,
/// what they can add at most (reduced profits `π'` at `lambda`).
fn scarce_profits(items: &[Item], lambda: Multipliers, patterns: &[Pattern]) -> (Vec<f64>, f64) {
    let scarce_profit = |i: usize| {
        if items[i].scarce {
            lambda.reduced(&items[i]).max(0.0)
        } else {
            0.0
        }
    };
    let scarce_in = patterns
        .iter()
        .map(|p| {
            p.items
                .iter()
                .map(|&(i, n)| f64::from(n) * scarce_profit(i))
                .sum()
        })
        .collect();
    let scarce_left = (0..items.len())
        .map(|i| f64::from(items[i].most) * scarce_profit(i))
        .sum();
    (scarce_in, scarce_left)
}

/// `Σ u_s·(π'_s)⁺` over the CPU-only items `cpu_only[k..]`, for every `k`.
fn cpu_only_rest(items: &[Item], cpu_only: &[usize], lambda: Multipliers) -> Vec<f64> {
    let mut rest = vec![0.0; cpu_only.len() + 1];
    for k in (0..cpu_only.len()).rev() {
        let item = &items[cpu_only[k]];
        rest[k] = rest[k + 1] + f64::from(item.most) * lambda.reduced(item).max(0.0);
    }
    rest
}

/// A configuration the search found: tasks outside patterns and the patterns given to
/// devices.
#[derive(Debug, Clone)]
struct Found {
    /// `(item, tasks)` of CPU-only and multi-GPU items.
    loose: Vec<(usize, u32)>,
    /// Pattern indices, one per device holding one.
    patterns: Vec<usize>,
}

struct Search<'a> {
    items: &'a [Item],
    value: &'a NodeValue,
    /// The level's constant plus `λ·cap`: every bound's fixed part.
    level_base: f64,
    level: usize,
    /// The dynamic program's table of the level, for what the slots left can add.
    dp: &'a SlotTable,
    /// `D`'s fixed part: constant, `λ_mem·MEM`, the devices outside the slots.
    dp_base: f64,
    /// `Σ π − λ_mem·mem` of what is chosen, plus the chosen devices' values `g`.
    chosen_exact: f64,
    lambda: Multipliers,
    evaluated: &'a Evaluated,
    patterns: Vec<Pattern>,
    /// `max(ℓ of patterns i.., ℓ of a free device)`.
    suffix_best: Vec<f64>,
    /// Per pattern, `Σ π'⁺` of its scarce tasks.
    scarce_in: Vec<f64>,
    /// `Σ (u_s − used_s)·(π'_s)⁺` over scarce shapes: what they can still add.
    scarce_left: f64,
    /// CPU this level may use, and the node's memory.
    cpu_cap: u64,
    memory_cap: u64,
    cpu_only: Vec<usize>,
    multi: Vec<usize>,
    /// `Σ u_s·(π'_s)⁺` over CPU-only items `k..`.
    cpu_only_rest: Vec<f64>,
    // The state: tasks per item, resources, profit, `λ`-value of what is chosen.
    used: Vec<u32>,
    cpu_used: u64,
    memory_used: u64,
    profit: f64,
    chosen_value: f64,
    /// Slots not yet given a pattern (they stay free if none comes).
    devices_left: u32,
    /// Devices outside the slots: free.
    fixed_free: u32,
    chosen: Vec<usize>,
    best_phi: f64,
    best: Option<Found>,
    tolerance: f64,
    budget: u64,
    deadline: Option<Instant>,
    /// Patterns the search may still look at (`None`: no such limit).
    scans: Option<u64>,
    exhausted: bool,
    /// The empty configuration is not a candidate.
    non_empty: bool,
}

impl<'a> Search<'a> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        relaxation: &'a Relaxation<'a>,
        level: usize,
        slots: Slots,
        lambda: Multipliers,
        evaluated: &'a Evaluated,
        dp: &'a SlotTable,
        patterns: Vec<Pattern>,
        free_value: f64,
        best_phi: f64,
        tolerance: f64,
        budget: u64,
        deadline: Option<Instant>,
    ) -> Search<'a> {
        let items = relaxation.items;
        let (scarce_in, scarce_left) = scarce_profits(items, lambda, &patterns);
        let mut suffix_best = vec![free_value; patterns.len() + 1];
        for i in (0..patterns.len()).rev() {
            suffix_best[i] = suffix_best[i + 1].max(patterns[i].value);
        }
        let cpu_only: Vec<usize> = (0..items.len())
            .filter(|&i| items[i].kind == ItemKind::CpuOnly)
            .collect();
        let multi: Vec<usize> = (0..items.len())
            .filter(|&i| matches!(items[i].kind, ItemKind::Whole(k) if k >= 2))
            .collect();
        let cpu_only_rest = cpu_only_rest(items, &cpu_only, lambda);
        let at = &relaxation.value.levels[level];
        let cpu_cap = at.cpu_used_at_most;
        Search {
            items,
            value: relaxation.value,
            level_base: at.constant + lambda.of(cpu_cap, relaxation.memory_mib),
            level,
            dp,
            dp_base: dp.base() + dp.fixed_free(slots),
            chosen_exact: 0.0,
            lambda,
            evaluated,
            patterns,
            suffix_best,
            scarce_in,
            scarce_left,
            cpu_cap,
            memory_cap: relaxation.memory_mib,
            cpu_only,
            multi,
            cpu_only_rest,
            used: vec![0; items.len()],
            cpu_used: 0,
            memory_used: 0,
            profit: 0.0,
            chosen_value: 0.0,
            devices_left: slots.count,
            fixed_free: relaxation.value.devices - slots.count,
            chosen: Vec::new(),
            best_phi,
            best: None,
            tolerance,
            budget,
            deadline,
            scans: None,
            exhausted: false,
            non_empty: false,
        }
    }

    fn run(&mut self) {
        self.descend_cpu_only(0);
    }

    /// `constant + λ·cap + Σ ℓ of what is chosen` and the free devices outside the slots:
    /// the part of every bound fixed by the choices so far (what is chosen already paid
    /// `λ` for what it uses).
    fn base(&self) -> f64 {
        self.level_base + self.chosen_value + self.evaluated.fixed_free
    }

    fn beats(&self, bound: f64) -> bool {
        bound > self.best_phi + self.tolerance
    }

    /// One more search node; false when the budget or the deadline ran out.
    fn step(&mut self) -> bool {
        if self.exhausted {
            return false;
        }
        let late = || self.deadline.is_some_and(|d| Instant::now() >= d);
        if self.budget == 0 || (self.budget.is_multiple_of(256) && late()) {
            self.budget = 0;
            self.exhausted = true;
            return false;
        }
        self.budget -= 1;
        true
    }

    /// One more pattern looked at; false when the scan budget ran out. A node may look at
    /// thousands of patterns, so the node budget alone does not bound the work.
    fn scan(&mut self) -> bool {
        match &mut self.scans {
            Some(0) => {
                self.exhausted = true;
                false
            }
            Some(left) => {
                *left -= 1;
                true
            }
            None => true,
        }
    }

    /// How many more tasks of `item` fit beside what is chosen (devices aside).
    fn room(&self, item: usize) -> u32 {
        let it = &self.items[item];
        let mut most = it.most - self.used[item];
        if let Some(n) = (self.cpu_cap - self.cpu_used).checked_div(it.cpu_milli) {
            most = most.min(n.min(u64::from(u32::MAX)) as u32);
        }
        if let Some(n) = (self.memory_cap - self.memory_used).checked_div(it.memory_mib) {
            most = most.min(n.min(u64::from(u32::MAX)) as u32);
        }
        most
    }

    fn take(&mut self, item: usize, n: u32, sign: i64) {
        let it = &self.items[item];
        let n64 = u64::from(n);
        if sign > 0 {
            self.used[item] += n;
            self.cpu_used += n64 * it.cpu_milli;
            self.memory_used += n64 * it.memory_mib;
        } else {
            self.used[item] -= n;
            self.cpu_used -= n64 * it.cpu_milli;
            self.memory_used -= n64 * it.memory_mib;
        }
        let s = sign as f64 * f64::from(n);
        // A multi-GPU task leaves its devices with nothing free.
        let credit = match it.kind {
            ItemKind::Whole(k) if k >= 2 => f64::from(k) * self.value.device(self.level, 0),
            _ => 0.0,
        };
        let reduced = self.lambda.reduced(it);
        self.profit += s * it.profit;
        self.chosen_value += s * (reduced + credit);
        self.chosen_exact +=
            s * (it.profit - self.dp.memory_multiplier * it.memory_mib as f64 + credit);
        if it.scarce {
            self.scarce_left -= s * reduced.max(0.0);
        }
    }

    fn descend_cpu_only(&mut self, k: usize) {
        if k == self.cpu_only.len() {
            self.descend_multi(0);
            return;
        }
        let item = self.cpu_only[k];
        for n in (0..=self.room(item)).rev() {
            if !self.step() {
                return;
            }
            self.take(item, n, 1);
            let devices = self.evaluated.devices[self.devices_left as usize];
            if self.beats(self.base() + self.cpu_only_rest[k + 1] + devices) {
                self.descend_cpu_only(k + 1);
            }
            self.take(item, n, -1);
        }
    }

    fn descend_multi(&mut self, k: usize) {
        if k == self.multi.len() {
            self.descend_patterns(0);
            return;
        }
        let item = self.multi[k];
        let ItemKind::Whole(width) = self.items[item].kind else {
            unreachable!("multi-GPU items are whole")
        };
        let most = self.room(item).min(self.devices_left / width);
        for n in (0..=most).rev() {
            if !self.step() {
                return;
            }
            self.take(item, n, 1);
            self.devices_left -= n * width;
            let devices = self.evaluated.devices[self.devices_left as usize];
            if self.beats(self.base() + devices) {
                self.descend_multi(k + 1);
            }
            self.devices_left += n * width;
            self.take(item, n, -1);
        }
    }

    /// Patterns `first..` for the devices left; the current state is valued first (the
    /// devices left free).
    fn descend_patterns(&mut self, first: usize) {
        self.consider();
        if self.devices_left == 0 {
            return;
        }
        let plain = self.evaluated.plain_device;
        for index in first..self.patterns.len() {
            if !self.scan() {
                return;
            }
            let pattern = &self.patterns[index];
            let others = f64::from(self.devices_left - 1);
            let rest = others * self.suffix_best[index];
            // Patterns are sorted by value: no later one passes either.
            if !self.beats(self.base() + pattern.value + rest) {
                break;
            }
            // The devices left, each worth `A` but for the scarce tasks still to place.
            let scarce_left = self.scarce_left - self.scarce_in[index];
            if !self.beats(self.base() + pattern.value + others * plain + scarce_left)
                || !self.fits(index)
            {
                continue;
            }
            // The slots left with the CPU left, by the dynamic program.
            let cpu_left = self.cpu_cap - self.cpu_used - pattern.cpu_milli;
            let rest = self.dp.rest(self.devices_left - 1, self.dp.units(cpu_left));
            if !self.beats(self.dp_base + self.chosen_exact + self.exact_value(index) + rest) {
                continue;
            }
            if !self.step() {
                return;
            }
            self.apply(index, 1);
            self.descend_patterns(index);
            self.apply(index, -1);
            if self.exhausted {
                return;
            }
        }
    }

    fn fits(&self, index: usize) -> bool {
        let pattern = &self.patterns[index];
        self.cpu_used + pattern.cpu_milli <= self.cpu_cap
            && self.memory_used + pattern.memory_mib <= self.memory_cap
            && pattern
                .items
                .iter()
                .all(|&(i, n)| self.used[i] + n <= self.items[i].most)
    }

    fn apply(&mut self, index: usize, sign: i64) {
        let pattern = &self.patterns[index];
        if sign > 0 {
            for &(i, n) in &pattern.items {
                self.used[i] += n;
            }
            self.cpu_used += pattern.cpu_milli;
            self.memory_used += pattern.memory_mib;
            self.devices_left -= 1;
            self.chosen.push(index);
        } else {
            for &(i, n) in &pattern.items {
                self.used[i] -= n;
            }
            self.cpu_used -= pattern.cpu_milli;
            self.memory_used -= pattern.memory_mib;
            self.devices_left += 1;
            self.chosen.pop();
        }
        let s = sign as f64;
        self.profit += s * pattern.profit;
        self.chosen_value += s * pattern.value;
        self.chosen_exact += s * self.exact_value(index);
        self.scarce_left -= s * self.scarce_in[index];
    }

    /// A pattern's `Σ π − λ_mem·mem` and its device's value `g`.
    fn exact_value(&self, index: usize) -> f64 {
        let pattern = &self.patterns[index];
        pattern.profit - self.dp.memory_multiplier * pattern.memory_mib as f64
            + self
                .value
                .device(self.level, MILLI_GPU_PER_GPU - pattern.load_milli)
    }

    /// Values the current state exactly (devices without a pattern free) and keeps it if
    /// it is the best so far.
    fn consider(&mut self) {
        if self.non_empty && self.chosen.is_empty() && self.used.iter().all(|&n| n == 0) {
            return;
        }
        let loads = self.chosen.iter().map(|&i| self.patterns[i].load_milli);
        let free_devices = self.devices_left + self.fixed_free;
        let multi_devices = self.value.devices - free_devices - self.chosen.len() as u32;
        let free = loads
            .map(|load| MILLI_GPU_PER_GPU - load)
            .chain(std::iter::repeat_n(0, multi_devices as usize))
            .chain(std::iter::repeat_n(
                MILLI_GPU_PER_GPU,
                free_devices as usize,
            ));
        let phi = self.profit + self.value.value(self.cpu_used, free);
        if phi > self.best_phi + self.tolerance {
            self.best_phi = phi;
            let loose = self
                .cpu_only
                .iter()
                .chain(&self.multi)
                .filter(|&&i| self.used[i] > 0)
                .map(|&i| (i, self.used[i]))
                .collect();
            self.best = Some(Found {
                loose,
                patterns: self.chosen.clone(),
            });
        }
    }

    /// The slots `(shape, devices)` of a found configuration: multi-GPU tasks on the first
    /// devices, then one device per pattern.
    fn slots(&self, found: &Found) -> Vec<(usize, DeviceSet)> {
        let mut slots = Vec::new();
        let mut next_device = 0usize;
        for &(i, n) in &found.loose {
            let item = &self.items[i];
            for _ in 0..n {
                match item.kind {
                    ItemKind::Whole(width) => {
                        let mut devices = DeviceSet::EMPTY;
                        for _ in 0..width {
                            devices = devices.with(next_device);
                            next_device += 1;
                        }
                        slots.push((item.shape, devices));
                    }
                    _ => slots.push((item.shape, DeviceSet::EMPTY)),
                }
            }
        }
        for &index in &found.patterns {
            for &(i, n) in &self.patterns[index].items {
                for _ in 0..n {
                    slots.push((self.items[i].shape, DeviceSet::single(next_device)));
                }
            }
            next_device += 1;
        }
        slots
    }
}

#[cfg(test)]
mod tests;
