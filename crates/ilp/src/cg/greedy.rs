//! Heuristic pricing: cheap configurations with negative reduced cost, so that most
//! iterations need no MIP. Exact pricing ([`super::pricing`]) still runs whenever the
//! heuristic finds nothing (and for the bound), so the result is unchanged; only the
//! number of MIP solves drops.
//!
//! Starts: greedy fills of one node for each order of the profitable shapes (by profit per
//! task, per GPU milli, per CPU; devices by best fit, the fullest device that still holds
//! the task, so fewer devices start working), keeping the prefix of additions with the
//! least reduced cost `cost(c) − Σ_s y_s·a_{s,c}` (a fixed cost such as a socket waking up
//! is paid back by later tasks); and the type's best columns so far. Each start is then
//! improved by local search (add a task, drop one, or swap one for another shape) while
//! the reduced cost falls.

use gapbench_model::{ClusterState, DeviceSet, NodeState, Placement, Task};

use super::column::Column;
use super::pricing::PricingContext;
use crate::shapes::ShapeKind;

impl PricingContext<'_> {
    /// Heuristic configurations of type `type_index` under `prices`, each with its reduced
    /// cost (convexity dual not included), from greedy fills and from `seeds` (earlier
    /// columns of the type), each improved by local search; possibly none. A
    /// configuration holds at most `tasks_left[s]` tasks of shape `s` (a dive prices
    /// within the tasks its fixings leave).
    pub fn heuristic(
        &self,
        type_index: usize,
        prices: &[f64],
        seeds: &[&Column],
        tasks_left: &[usize],
    ) -> Vec<(Column, f64)> {
        let kind = &self.types[type_index];
        let node_type = kind.node_type();
        let profit = |s: usize| self.profit(s, prices);
        let profitable: Vec<usize> = (0..self.shapes.shapes.len())
            .filter(|&s| {
                profit(s) > 0.0
                    && tasks_left[s] > 0
                    && self.shapes.shapes[s].max_per_node(node_type) > 0
            })
            .collect();
        if profitable.is_empty() {
            return Vec::new();
        }
        let per = |s: usize, denominator: f64| profit(s) / denominator.max(1.0);
        let orders: [Box<dyn Fn(usize) -> f64>; 3] = [
            Box::new(profit),
            Box::new(|s| per(s, f64::from(self.shapes.shapes[s].total_gpu_milli()))),
            Box::new(|s| per(s, f64::from(self.shapes.shapes[s].cpu_milli))),
        ];
        let mut starts: Vec<Vec<(usize, DeviceSet)>> = seeds
            .iter()
            .filter(|c| c.counts.iter().all(|&(s, n)| n as usize <= tasks_left[s]))
            .map(|c| c.slots.clone())
            .collect();
        for key in &orders {
            let mut order = profitable.clone();
            order.sort_by(|&a, &b| key(b).total_cmp(&key(a)).then(a.cmp(&b)));
            if let Some(slots) = self.fill(type_index, prices, &order, tasks_left) {
                starts.push(slots);
            }
        }
        let mut found: Vec<(Column, f64)> = Vec::new();
        for start in starts {
            let slots = self.improve(type_index, prices, &profitable, tasks_left, start);
            if slots.is_empty() {
                continue;
            }
            let Ok(column) = self.column(type_index, slots) else {
                continue;
            };
            if found.iter().any(|(c, _)| c.counts == column.counts) {
                continue;
            }
            let reduced = column.cost - column.priced(prices);
            found.push((column, reduced));
        }
        found
    }

    /// Local search from `slots`: the best of every add, drop and swap move while it lowers
    /// the reduced cost (at most `MOVES` moves).
    fn improve(
        &self,
        type_index: usize,
        prices: &[f64],
        profitable: &[usize],
        tasks_left: &[usize],
        slots: Vec<(usize, DeviceSet)>,
    ) -> Vec<(usize, DeviceSet)> {
        const MOVES: usize = 64;
        let mut search = LocalSearch::new(self, type_index, prices, slots);
        let mut current = search.reduced(search.allocated, search.priced);
        for _ in 0..MOVES {
            let Some((best, value)) = search.best_move(profitable, tasks_left, current) else {
                break;
            };
            search.apply(best);
            current = value;
        }
        search.slots
    }

    /// The best prefix of one greedy fill in `order`, or `None` if no prefix beats the
    /// empty node.
    fn fill(
        &self,
        type_index: usize,
        prices: &[f64],
        order: &[usize],
        tasks_left: &[usize],
    ) -> Option<Vec<(usize, DeviceSet)>> {
        let kind = &self.types[type_index];
        let mut state = ClusterState::empty(&kind.one_node);
        let mut slots: Vec<(usize, DeviceSet)> = Vec::new();
        let (mut allocated, mut priced) = (0u64, 0.0);
        let (mut best, mut best_len) = (0.0, 0);
        for &s in order {
            let shape = &self.shapes.shapes[s];
            let task = &self.tasks[shape.tasks[0]];
            let most = tasks_left[s];
            let mut placed = 0;
            while placed < most && state.fits(&kind.one_node, 0, task) {
                let Some(devices) = choose_devices(&state.nodes[0], shape.kind(), shape) else {
                    break;
                };
                state.bind(task, Placement { node: 0, devices });
                slots.push((s, devices));
                placed += 1;
                allocated += u64::from(shape.total_gpu_milli());
                priced += prices[s];
                let reduced =
                    kind.relative_cost(self.typical, self.objective, &state, allocated) - priced;
                if reduced < best {
                    best = reduced;
                    best_len = slots.len();
                }
            }
        }
        (best_len > 0).then(|| {
            slots.truncate(best_len);
            slots
        })
    }
}

/// A move of the local search: drop slot `i` (if any), then add one task of shape `s` on
/// the given devices (if any).
type Move = (Option<usize>, Option<(usize, DeviceSet)>);

/// The node a local search improves: its slots and state, tasks per shape, and the
/// running sums of allocated GPU milli and prices (kept move by move).
struct LocalSearch<'c, 'a> {
    context: &'c PricingContext<'a>,
    type_index: usize,
    prices: &'c [f64],
    slots: Vec<(usize, DeviceSet)>,
    state: ClusterState,
    used: Vec<usize>,
    allocated: u64,
    priced: f64,
}

impl<'c, 'a> LocalSearch<'c, 'a> {
    fn new(
        context: &'c PricingContext<'a>,
        type_index: usize,
        prices: &'c [f64],
        slots: Vec<(usize, DeviceSet)>,
    ) -> Self {
        let kind = &context.types[type_index];
        let mut search = LocalSearch {
            context,
            type_index,
            prices,
            slots: Vec::new(),
            state: ClusterState::empty(&kind.one_node),
            used: vec![0usize; context.shapes.shapes.len()],
            allocated: 0,
            priced: 0.0,
        };
        for &(s, devices) in &slots {
            search
                .state
                .bind(search.task_of(s), Placement { node: 0, devices });
            search.used[s] += 1;
            search.allocated += u64::from(context.shapes.shapes[s].total_gpu_milli());
            search.priced += prices[s];
        }
        search.slots = slots;
        search
    }

    /// The representative task of shape `s`.
    fn task_of(&self, s: usize) -> &'c Task {
        &self.context.tasks[self.context.shapes.shapes[s].tasks[0]]
    }

    /// The reduced cost of the node's current state with these sums.
    fn reduced(&self, allocated: u64, priced: f64) -> f64 {
        let context = self.context;
        let kind = &context.types[self.type_index];
        kind.relative_cost(context.typical, context.objective, &self.state, allocated) - priced
    }

    /// The move of least reduced cost below `current` (by more than 1e-9), with that cost:
    /// a drop, an add, or a swap (a drop, then an add of another shape).
    fn best_move(
        &mut self,
        profitable: &[usize],
        tasks_left: &[usize],
        current: f64,
    ) -> Option<(Move, f64)> {
        let mut best: Option<(Move, f64)> = None;
        let mut consider = |m: Move, value: f64| {
            if value < current - 1e-9 && best.as_ref().is_none_or(|(_, b)| value < *b) {
                best = Some((m, value));
            }
        };
        // Distinct slots only: dropping either of two equal slots is the same move.
        let mut drops: Vec<Option<usize>> = vec![None];
        for (i, slot) in self.slots.iter().enumerate() {
            if !self.slots[..i].contains(slot) {
                drops.push(Some(i));
            }
        }
        let shapes = &self.context.shapes.shapes;
        let one_node = &self.context.types[self.type_index].one_node;
        for &drop in &drops {
            let (mut alloc, mut price) = (self.allocated, self.priced);
            if let Some(i) = drop {
                let (s, devices) = self.slots[i];
                self.state
                    .release(self.task_of(s), Placement { node: 0, devices });
                self.used[s] -= 1;
                alloc -= u64::from(shapes[s].total_gpu_milli());
                price -= self.prices[s];
                consider((drop, None), self.reduced(alloc, price));
            }
            for &s in profitable {
                let shape = &shapes[s];
                if drop.is_some_and(|i| self.slots[i].0 == s)
                    || self.used[s] >= tasks_left[s]
                    || !self.state.fits(one_node, 0, self.task_of(s))
                {
                    continue;
                }
                let Some(devices) = choose_devices(&self.state.nodes[0], shape.kind(), shape)
                else {
                    continue;
                };
                let placement = Placement { node: 0, devices };
                self.state.bind(self.task_of(s), placement);
                let value = self.reduced(
                    alloc + u64::from(shape.total_gpu_milli()),
                    price + self.prices[s],
                );
                self.state.release(self.task_of(s), placement);
                consider((drop, Some((s, devices))), value);
            }
            if let Some(i) = drop {
                let (s, devices) = self.slots[i];
                self.state
                    .bind(self.task_of(s), Placement { node: 0, devices });
                self.used[s] += 1;
            }
        }
        best
    }

    /// Makes the move: the slot dropped, the task added, the sums updated.
    fn apply(&mut self, (drop, add): Move) {
        let shapes = &self.context.shapes.shapes;
        if let Some(i) = drop {
            let (s, devices) = self.slots.swap_remove(i);
            self.state
                .release(self.task_of(s), Placement { node: 0, devices });
            self.used[s] -= 1;
            self.allocated -= u64::from(shapes[s].total_gpu_milli());
            self.priced -= self.prices[s];
        }
        if let Some((s, devices)) = add {
            self.state
                .bind(self.task_of(s), Placement { node: 0, devices });
            self.slots.push((s, devices));
            self.used[s] += 1;
            self.allocated += u64::from(shapes[s].total_gpu_milli());
            self.priced += self.prices[s];
        }
    }
}

/// Devices for one task of `shape` on `node`: whole tasks take the lowest fully free
/// devices; a sharing task the fullest device that still holds it.
pub(super) fn choose_devices(
    node: &NodeState,
    kind: ShapeKind,
    shape: &crate::shapes::Shape,
) -> Option<DeviceSet> {
    let free = node.free_gpu_milli();
    match kind {
        ShapeKind::CpuOnly => Some(DeviceSet::EMPTY),
        ShapeKind::Whole => {
            let chosen: Vec<usize> = (0..free.len())
                .filter(|&d| free[d] == 1000)
                .take(usize::from(shape.gpu_count))
                .collect();
            (chosen.len() == usize::from(shape.gpu_count))
                .then(|| chosen.iter().fold(DeviceSet::EMPTY, |set, &d| set.with(d)))
        }
        ShapeKind::Share => (0..free.len())
            .filter(|&d| free[d] >= shape.gpu_milli)
            .min_by_key(|&d| (free[d], d))
            .map(DeviceSet::single),
    }
}
