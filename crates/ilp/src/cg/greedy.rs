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

use gapbench_model::{ClusterState, DeviceSet, NodeState, Placement};

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
        mut slots: Vec<(usize, DeviceSet)>,
    ) -> Vec<(usize, DeviceSet)> {
        const MOVES: usize = 64;
        let kind = &self.types[type_index];
        let task_of = |s: usize| &self.tasks[self.shapes.shapes[s].tasks[0]];
        let mut state = ClusterState::empty(&kind.one_node);
        let mut used = vec![0usize; self.shapes.shapes.len()];
        let (mut allocated, mut priced) = (0u64, 0.0);
        for &(s, devices) in &slots {
            state.bind(task_of(s), Placement { node: 0, devices });
            used[s] += 1;
            allocated += u64::from(self.shapes.shapes[s].total_gpu_milli());
            priced += prices[s];
        }
        let reduced = |state: &ClusterState, allocated: u64, priced: f64| {
            kind.relative_cost(self.typical, self.objective, state, allocated) - priced
        };
        let mut current = reduced(&state, allocated, priced);
        // A move: drop slot `i` (if any), then add one task of shape `s` (if any).
        type Move = (Option<usize>, Option<(usize, DeviceSet)>);
        for _ in 0..MOVES {
            let mut best: Option<(Move, f64)> = None;
            let mut consider = |m: Move, value: f64| {
                if value < current - 1e-9 && best.as_ref().is_none_or(|(_, b)| value < *b) {
                    best = Some((m, value));
                }
            };
            // Distinct slots only: dropping either of two equal slots is the same move.
            let mut drops: Vec<Option<usize>> = vec![None];
            for (i, slot) in slots.iter().enumerate() {
                if !slots[..i].contains(slot) {
                    drops.push(Some(i));
                }
            }
            for &drop in &drops {
                let (mut alloc, mut price) = (allocated, priced);
                if let Some(i) = drop {
                    let (s, devices) = slots[i];
                    state.release(task_of(s), Placement { node: 0, devices });
                    used[s] -= 1;
                    alloc -= u64::from(self.shapes.shapes[s].total_gpu_milli());
                    price -= prices[s];
                    consider((drop, None), reduced(&state, alloc, price));
                }
                for &s in profitable {
                    let shape = &self.shapes.shapes[s];
                    if drop.is_some_and(|i| slots[i].0 == s)
                        || used[s] >= tasks_left[s]
                        || !state.fits(&kind.one_node, 0, task_of(s))
                    {
                        continue;
                    }
                    let Some(devices) = choose_devices(&state.nodes[0], shape.kind(), shape) else {
                        continue;
                    };
                    let placement = Placement { node: 0, devices };
                    state.bind(task_of(s), placement);
                    let value = reduced(
                        &state,
                        alloc + u64::from(shape.total_gpu_milli()),
                        price + prices[s],
                    );
                    state.release(task_of(s), placement);
                    consider((drop, Some((s, devices))), value);
                }
                if let Some(i) = drop {
                    let (s, devices) = slots[i];
                    state.bind(task_of(s), Placement { node: 0, devices });
                    used[s] += 1;
                }
            }
            let Some(((drop, add), value)) = best else {
                break;
            };
            if let Some(i) = drop {
                let (s, devices) = slots.swap_remove(i);
                state.release(task_of(s), Placement { node: 0, devices });
                used[s] -= 1;
                allocated -= u64::from(self.shapes.shapes[s].total_gpu_milli());
                priced -= prices[s];
            }
            if let Some((s, devices)) = add {
                state.bind(task_of(s), Placement { node: 0, devices });
                slots.push((s, devices));
                used[s] += 1;
                allocated += u64::from(self.shapes.shapes[s].total_gpu_milli());
                priced += prices[s];
            }
            current = value;
        }
        slots
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
