//! Exact pricing for power and allocation by branch and bound over one node.
//!
//! A node's power depends on two integers only: its active CPU sockets `a` and its busy
//! devices `b` (spec §6). For each *level* `(a, b)`, cheapest first, pricing is a knapsack:
//!
//! `max Σ_s p_s·n_s` s.t. `Σ_s cpu_s·n_s ≤ CPU(a)`, `Σ_s mem_s·n_s ≤ MEM`,
//! whole tasks and shared devices on at most `b` devices, `0 ≤ n_s ≤ u_s`,
//!
//! with `p_s` the shape's profit (its price; plus its GPU milli for allocation, whose cost
//! is folded into the profit and has one level of cost 0) and `CPU(a)` the most CPU that
//! keeps `a` sockets active. Then `ρ_τ = min_level cost(a, b) − max profit`: a
//! configuration with exactly `a` sockets and `b` busy devices is feasible at its own level,
//! which costs what it costs, and anything found at a level costs at most the level's cost.
//!
//! The search is depth-first over shapes (counts high to low). Its bound is Dantzig's
//! fractional knapsack on the surrogate row `λ_cpu·cpu + λ_gpu·gpu_milli ≤ λ·capacity`, with
//! `λ` the optimal multipliers of the level's LP relaxation (so the root bound is the LP
//! bound) and each shape capped by what still fits of it. Device packing is exact: a
//! candidate counts only once its sharing tasks are packed onto real devices.
//!
//! When the node budget or the caller's deadline runs out, a level not searched to the end
//! contributes `cost − root bound` to the lower bound, which stays valid.

use std::time::Instant;

use gapbench_model::{DeviceSet, NodeType, MILLI_GPU_PER_GPU};

use super::column::TypeCluster;
use super::devices::{device_weight, pack, Packing, HALF_DEVICE_MILLI};
use crate::shapes::{ShapeKind, Shapes};
use crate::solve::Objective;

/// Search nodes one level may take, and one pricing call in all. Past them (or past the
/// caller's deadline, whichever comes first) the caller falls back to the MIP.
const LEVEL_BUDGET: u64 = 20_000;
const NODE_BUDGET: u64 = 200_000;
/// Golden-section steps of the GPU multiplier (the CPU one is exact for each).
const MULTIPLIER_STEPS: usize = 48;

/// One shape as the search sees it.
#[derive(Debug, Clone)]
struct Item {
    shape: usize,
    profit: f64,
    cpu_milli: u64,
    memory_mib: u64,
    /// Whole devices one task takes (0 for sharing and CPU-only tasks).
    whole_devices: u32,
    /// The share of one device a sharing task takes (0 otherwise).
    share_milli: u32,
    /// At most this many on one node (of the level).
    most: u32,
    /// The devices one task uses, in milli, through the level's dual-feasible function
    /// (see [`device_weight`]).
    device_weight: u64,
    /// `λ_cpu·cpu + λ_gpu·device_weight` at the level's multipliers.
    surrogate: f64,
}

/// How many items of `each` fit in `capacity` (no limit when `each` is 0).
fn fits(capacity: u64, each: u64) -> u32 {
    capacity
        .checked_div(each)
        .map_or(u32::MAX, |n| n.min(u64::from(u32::MAX)) as u32)
}

impl Item {
    /// The same item capped by a level's CPU and devices; `None` if none fits.
    fn at_level(&self, level: &Level) -> Option<Item> {
        let per_device = MILLI_GPU_PER_GPU
            .checked_div(self.share_milli)
            .map_or(u32::MAX, |per| level.devices * per);
        let most = self
            .most
            .min(fits(level.cpu_milli, self.cpu_milli))
            .min(fits(level.devices.into(), self.whole_devices.into()))
            .min(per_device);
        (most > 0).then(|| Item {
            most,
            ..self.clone()
        })
    }

    /// How many more fit beside `used`: each capacity on its own.
    fn room(&self, used: &Resources, level: &Level) -> u32 {
        let free_devices = level.devices - used.whole_devices;
        // Whole tasks need devices no share uses.
        let shared = used.share_milli.div_ceil(u64::from(MILLI_GPU_PER_GPU)) as u32;
        let whole_free = free_devices.saturating_sub(shared.max(used.large_shares));
        let milli_free =
            u64::from(free_devices * MILLI_GPU_PER_GPU).saturating_sub(used.share_milli);
        let mut most = self
            .most
            .min(fits(used.cpu_left_milli, self.cpu_milli))
            .min(fits(used.memory_left_mib, self.memory_mib))
            .min(fits(whole_free.into(), self.whole_devices.into()))
            .min(fits(milli_free, self.share_milli.into()));
        if self.share_milli > HALF_DEVICE_MILLI {
            most = most.min(free_devices.saturating_sub(used.large_shares));
        }
        most
    }
}

/// A cost level: the most CPU and busy devices it allows, and what it costs (relative to
/// the empty node).
#[derive(Debug, Clone, Copy)]
struct Level {
    cost: f64,
    cpu_milli: u64,
    devices: u32,
}

/// The best configuration of one node type found by [`best_configuration`].
pub(crate) struct Searched {
    /// Slots `(shape, devices)` of the best configuration, empty for the empty node.
    pub slots: Vec<(usize, DeviceSet)>,
    /// A proven lower bound on `min_c cost(c) − Σ_s p_s·a_{s,c}` (at most 0).
    pub lower_bound: f64,
    /// Every level was searched to the end: the slots are optimal.
    pub proven: bool,
}

/// The exact best configuration of `kind` for per-shape profits `profit(s)` (only positive
/// profits matter: the cost never falls with load). `incumbent` is a known configuration's
/// value `cost − profit`, if any, to prune from the start.
pub(crate) fn best_configuration(
    kind: &TypeCluster,
    objective: Objective,
    shapes: &Shapes,
    profit: impl Fn(usize) -> f64,
    incumbent: Option<(Vec<(usize, DeviceSet)>, f64)>,
    deadline: Option<Instant>,
) -> Searched {
    let node_type = *kind.node_type();
    let items: Vec<Item> = shapes
        .shapes
        .iter()
        .enumerate()
        .filter_map(|(s, shape)| {
            let most = shape.max_per_node(&node_type);
            let p = profit(s);
            (most > 0 && p > 0.0).then(|| {
                let kind = shape.kind();
                Item {
                    shape: s,
                    profit: p,
                    cpu_milli: u64::from(shape.cpu_milli),
                    memory_mib: shape.memory_mib,
                    whole_devices: if kind == ShapeKind::Whole {
                        u32::from(shape.gpu_count)
                    } else {
                        0
                    },
                    share_milli: if kind == ShapeKind::Share {
                        u32::from(shape.gpu_milli)
                    } else {
                        0
                    },
                    most,
                    device_weight: 0,
                    surrogate: 0.0,
                }
            })
        })
        .collect();
    let (mut best_slots, mut best_value) = match incumbent {
        Some((slots, value)) if value < 0.0 => (slots, value),
        _ => (Vec::new(), 0.0),
    };
    let scale = items.iter().map(|i| i.profit).fold(1.0, f64::max);
    let tolerance = 1e-9 * scale;
    let mut lower_bound = f64::INFINITY;
    let mut budget = NODE_BUDGET;
    let mut proven = true;
    for level in levels(kind, objective, &node_type) {
        let fitting: Vec<Item> = items.iter().filter_map(|i| i.at_level(&level)).collect();
        let everything: f64 = fitting.iter().map(|i| f64::from(i.most) * i.profit).sum();
        if level.cost - everything >= best_value - tolerance {
            // Even every profitable task at once would not beat the incumbent here.
            continue;
        }
        let capacity = (
            level.cpu_milli as f64,
            f64::from(level.devices * MILLI_GPU_PER_GPU),
        );
        let empty = Resources {
            cpu_left_milli: level.cpu_milli,
            memory_left_mib: node_type.memory_mib,
            whole_devices: 0,
            share_milli: 0,
            large_shares: 0,
            device_weight: 0,
            profit: 0.0,
        };
        // Every ε gives a valid bound: keep the one whose root bound is least.
        let mut chosen: Option<(f64, Vec<Item>, (f64, f64))> = None;
        for epsilon in epsilons(&fitting) {
            let mut candidate = fitting.clone();
            for item in &mut candidate {
                item.device_weight = device_weight(item.whole_devices, item.share_milli, epsilon);
            }
            let prices = multipliers(&candidate, capacity);
            for item in &mut candidate {
                item.surrogate =
                    prices.0 * item.cpu_milli as f64 + prices.1 * item.device_weight as f64;
            }
            // Best profit per surrogate weight first (weightless items before all).
            let ratio = |i: &Item| {
                if i.surrogate > 0.0 {
                    i.profit / i.surrogate
                } else {
                    f64::INFINITY
                }
            };
            candidate.sort_by(|a, b| ratio(b).total_cmp(&ratio(a)).then(a.shape.cmp(&b.shape)));
            let root = surrogate_bound(&candidate, &level, prices, &empty);
            if chosen.as_ref().is_none_or(|(best, _, _)| root < *best) {
                chosen = Some((root, candidate, prices));
            }
        }
        let Some((root_bound, fitting, prices)) = chosen else {
            continue;
        };
        if level.cost - root_bound >= best_value - tolerance {
            continue;
        }
        let mut search = Search {
            items: &fitting,
            level,
            surrogate_prices: prices,
            counts: vec![0; fitting.len()],
            best_value,
            best_slots: None,
            tolerance,
            budget: budget.min(LEVEL_BUDGET),
            deadline,
            exhausted: false,
            undecided: f64::INFINITY,
        };
        let before = search.budget;
        search.descend(0, empty);
        budget -= before - search.budget;
        if search.undecided.is_finite() {
            proven = false;
            lower_bound = lower_bound.min(search.undecided);
        }
        if search.exhausted {
            proven = false;
            lower_bound = lower_bound.min(level.cost - root_bound);
        }
        if let Some(slots) = search.best_slots {
            best_slots = slots;
            best_value = search.best_value;
        }
    }
    Searched {
        slots: best_slots,
        lower_bound: lower_bound.min(best_value - tolerance).min(0.0),
        proven,
    }
}

/// The cost levels of a node type, cheapest first. Power: every (active sockets, busy
/// devices) pair, with the most CPU that keeps `a` sockets active,
/// `CPU(a) = cap − 2000·max(0, real cores − a·cores per socket)`; allocation: one level,
/// the whole node at cost 0.
fn levels(kind: &TypeCluster, objective: Objective, node_type: &NodeType) -> Vec<Level> {
    let devices = u32::from(node_type.gpu_count);
    let cpu_cap = u64::from(node_type.cpu_milli);
    if objective != Objective::Power {
        return vec![Level {
            cost: 0.0,
            cpu_milli: cpu_cap,
            devices,
        }];
    }
    let power = kind.one_node.power_model(0);
    let mut cpu_steps: Vec<u64> = (0..=power.sockets)
        .filter_map(|active| {
            let idle_cores_needed = power
                .real_cores
                .saturating_sub(active * power.socket.cores_per_socket);
            cpu_cap.checked_sub(2000 * u64::from(idle_cores_needed))
        })
        .collect();
    cpu_steps.dedup();
    let mut levels: Vec<Level> = Vec::new();
    for &cpu_milli in &cpu_steps {
        let cpu_left = u32::try_from(cpu_cap - cpu_milli).unwrap_or(u32::MAX);
        for busy in 0..=devices {
            let watts = power.cpu_watts(cpu_left) + power.gpu_watts(devices - busy, devices);
            levels.push(Level {
                cost: watts as f64 - kind.empty_cost,
                cpu_milli,
                devices: busy,
            });
        }
    }
    levels.sort_by(|a, b| {
        a.cost
            .total_cmp(&b.cost)
            .then(a.cpu_milli.cmp(&b.cpu_milli))
            .then(a.devices.cmp(&b.devices))
    });
    levels
}

/// The multipliers `(λ_cpu, λ_gpu) ≥ 0` of the LP relaxation's dual,
/// `min Σ_i u_i·max(0, p_i − λ_cpu·cpu_i − λ_gpu·gpu_i) + λ_cpu·CPU + λ_gpu·GPU`:
/// golden-section search on `λ_gpu` (the dual minimised over `λ_cpu` is convex in it), the
/// best `λ_cpu` exact for each. Any multipliers give a valid bound; these make it tight.
fn multipliers(items: &[Item], capacity: (f64, f64)) -> (f64, f64) {
    let (cpu_cap, gpu_cap) = capacity;
    // The best λ_cpu for a given λ_gpu, and the dual's value there.
    let best_cpu_price = |gpu_price: f64| -> (f64, f64) {
        let mut constant = gpu_price * gpu_cap;
        let mut ratios: Vec<(f64, f64, f64)> = Vec::new();
        for item in items {
            let residual = item.profit - gpu_price * item.device_weight as f64;
            if residual <= 0.0 {
                continue;
            }
            let most = f64::from(item.most);
            if item.cpu_milli == 0 {
                constant += most * residual;
            } else {
                let cpu = item.cpu_milli as f64;
                ratios.push((residual / cpu, most * cpu, most * residual));
            }
        }
        ratios.sort_by(|a, b| b.0.total_cmp(&a.0));
        // The slope in λ_cpu is `CPU − Σ u_i·cpu_i` over the items still profitable: the
        // minimum is at the ratio where their CPU first exceeds the capacity.
        let mut weight = 0.0;
        let mut cpu_price = 0.0;
        for &(ratio, cpu, _) in &ratios {
            weight += cpu;
            if weight > cpu_cap {
                cpu_price = ratio;
                break;
            }
        }
        let value = constant
            + cpu_price * cpu_cap
            + ratios
                .iter()
                .map(|&(_, cpu, profit)| (profit - cpu_price * cpu).max(0.0))
                .sum::<f64>();
        (cpu_price, value)
    };
    let highest = items
        .iter()
        .filter(|i| i.device_weight > 0)
        .map(|i| i.profit / i.device_weight as f64)
        .fold(0.0, f64::max);
    let (mut low, mut high) = (0.0, highest);
    let golden = (5f64.sqrt() - 1.0) / 2.0;
    let mut a = high - golden * (high - low);
    let mut b = low + golden * (high - low);
    let (mut fa, mut fb) = (best_cpu_price(a).1, best_cpu_price(b).1);
    for _ in 0..MULTIPLIER_STEPS {
        if fa <= fb {
            high = b;
            b = a;
            fb = fa;
            a = high - golden * (high - low);
            fa = best_cpu_price(a).1;
        } else {
            low = a;
            a = b;
            fa = fb;
            b = low + golden * (high - low);
            fb = best_cpu_price(b).1;
        }
    }
    // The ends are candidates too (the minimum may sit at λ_gpu = 0 or beyond every GPU
    // item's ratio).
    [0.0, highest, (low + high) / 2.0]
        .into_iter()
        .map(|g| (g, best_cpu_price(g)))
        .min_by(|x, y| x.1 .1.total_cmp(&y.1 .1))
        .map(|(g, (c, _))| (c, g))
        .unwrap_or((0.0, 0.0))
}

/// The values of ε worth trying in [`device_weight`]: 0 (plain milli) and `1000 − m` for
/// every share `m` above half a device (so that `m` counts whole).
fn epsilons(items: &[Item]) -> Vec<u32> {
    let mut epsilons: Vec<u32> = items
        .iter()
        .filter(|i| i.share_milli > HALF_DEVICE_MILLI)
        .map(|i| MILLI_GPU_PER_GPU + 1 - i.share_milli)
        .chain([0])
        .collect();
    epsilons.sort_unstable();
    epsilons.dedup();
    epsilons
}

/// An upper bound on the profit of any completion of `used` with `items` (in surrogate
/// ratio order): Dantzig's bound on the surrogate row
/// `λ_cpu·cpu + λ_gpu·device_weight ≤ λ_cpu·CPU left + λ_gpu·device weight left`, each item
/// capped by its own room.
fn surrogate_bound(items: &[Item], level: &Level, prices: (f64, f64), used: &Resources) -> f64 {
    let (cpu_price, gpu_price) = prices;
    let device_weight_left =
        f64::from(level.devices * MILLI_GPU_PER_GPU) - used.device_weight as f64;
    let mut capacity = cpu_price * used.cpu_left_milli as f64 + gpu_price * device_weight_left;
    let mut total = used.profit;
    for item in items {
        let room = f64::from(item.room(used, level));
        if room == 0.0 {
            continue;
        }
        if item.surrogate <= 0.0 {
            total += room * item.profit;
            continue;
        }
        let take = room.min(capacity.max(0.0) / item.surrogate);
        total += take * item.profit;
        capacity -= take * item.surrogate;
        if take < room {
            break;
        }
    }
    total
}

/// What the chosen tasks leave free and use so far.
#[derive(Debug, Clone, Copy)]
struct Resources {
    cpu_left_milli: u64,
    memory_left_mib: u64,
    whole_devices: u32,
    share_milli: u64,
    /// Sharing tasks of more than half a device: no two share one.
    large_shares: u32,
    /// `Σ device_weight` of the tasks (whole devices included).
    device_weight: u64,
    profit: f64,
}

struct Search<'a> {
    /// The level's items, best profit per surrogate weight first.
    items: &'a [Item],
    level: Level,
    surrogate_prices: (f64, f64),
    counts: Vec<u32>,
    best_value: f64,
    best_slots: Option<Vec<(usize, DeviceSet)>>,
    tolerance: f64,
    budget: u64,
    deadline: Option<Instant>,
    exhausted: bool,
    /// The least value of a candidate whose packing was left undecided.
    undecided: f64,
}

impl Search<'_> {
    /// The devices the sharing tasks may use.
    fn share_devices(&self, used: &Resources) -> u32 {
        self.level.devices - used.whole_devices
    }

    /// Whether the relaxed GPU rows hold: whole devices, and the sharing tasks' milli and
    /// large shares on the devices left.
    fn gpu_fits(&self, used: &Resources) -> bool {
        if used.whole_devices > self.level.devices {
            return false;
        }
        let left = self.share_devices(used);
        used.share_milli <= u64::from(left * MILLI_GPU_PER_GPU)
            && used.large_shares <= left
            && used.device_weight <= u64::from(self.level.devices * MILLI_GPU_PER_GPU)
    }

    fn bound(&self, k: usize, used: &Resources) -> f64 {
        surrogate_bound(&self.items[k..], &self.level, self.surrogate_prices, used)
    }

    /// Explores item `k` onwards from `used`.
    fn descend(&mut self, k: usize, used: Resources) {
        if k == self.items.len() {
            return;
        }
        let item = &self.items[k];
        for n in (0..=item.room(&used, &self.level)).rev() {
            // The clock is read every 256 nodes: reading it costs more than a node.
            let late = || self.deadline.is_some_and(|d| Instant::now() >= d);
            if self.budget == 0 || (self.budget.is_multiple_of(256) && late()) {
                self.budget = 0;
                self.exhausted = true;
                return;
            }
            self.budget -= 1;
            let next = Resources {
                cpu_left_milli: used.cpu_left_milli - u64::from(n) * item.cpu_milli,
                memory_left_mib: used.memory_left_mib - u64::from(n) * item.memory_mib,
                whole_devices: used.whole_devices + n * item.whole_devices,
                share_milli: used.share_milli + u64::from(n * item.share_milli),
                large_shares: used.large_shares
                    + if item.share_milli > HALF_DEVICE_MILLI {
                        n
                    } else {
                        0
                    },
                device_weight: used.device_weight + u64::from(n) * item.device_weight,
                profit: used.profit + f64::from(n) * item.profit,
            };
            if !self.gpu_fits(&next) {
                continue;
            }
            self.counts[k] = n;
            if n > 0 {
                self.consider(&next);
            }
            let bound = self.bound(k + 1, &next);
            if self.level.cost - bound < self.best_value - self.tolerance {
                self.descend(k + 1, next);
            }
            self.counts[k] = 0;
            if self.exhausted {
                return;
            }
        }
    }

    /// The current counts as a configuration, if they beat the incumbent and their
    /// sharing tasks pack onto the devices.
    fn consider(&mut self, used: &Resources) {
        let value = self.level.cost - used.profit;
        if value >= self.best_value - self.tolerance {
            return;
        }
        let shares: Vec<(usize, u32)> = self
            .items
            .iter()
            .zip(&self.counts)
            .filter(|(item, &n)| item.share_milli > 0 && n > 0)
            .flat_map(|(item, &n)| (0..n).map(move |_| (item.shape, item.share_milli)))
            .collect();
        let bins = match pack(&shares, self.share_devices(used)) {
            Packing::Packed(bins) => bins,
            Packing::Impossible => return,
            Packing::Unknown => {
                // Too hard to decide: not an incumbent, but it may exist, so it caps the
                // lower bound.
                self.undecided = self.undecided.min(value);
                return;
            }
        };
        let mut slots = Vec::new();
        let mut next_device = 0usize;
        for (item, &n) in self.items.iter().zip(&self.counts) {
            for _ in 0..n {
                if item.whole_devices > 0 {
                    let mut devices = DeviceSet::EMPTY;
                    for _ in 0..item.whole_devices {
                        devices = devices.with(next_device);
                        next_device += 1;
                    }
                    slots.push((item.shape, devices));
                } else if item.share_milli == 0 {
                    slots.push((item.shape, DeviceSet::EMPTY));
                }
            }
        }
        let first_share_device = used.whole_devices as usize;
        for (&(shape, _), bin) in shares.iter().zip(bins) {
            slots.push((shape, DeviceSet::single(first_share_device + bin)));
        }
        self.best_value = value;
        self.best_slots = Some(slots);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gapbench_model::{
        check_placements, Cluster, ClusterState, CpuPowerProfile, GpuModel, Placement, Task,
        TypicalPods,
    };
    use proptest::prelude::*;

    fn one_node(gpus: u8, vcpus: u32) -> Cluster {
        let node_type = NodeType {
            gpu_model: Some(GpuModel::G2),
            gpu_count: gpus,
            cpu_milli: vcpus * 1000,
            memory_mib: 64 * 1024,
        };
        Cluster::new([("n0".to_string(), node_type)], CpuPowerProfile::Reference).unwrap()
    }

    /// The least `cost − Σ profit` over every placement of every task subset on one node,
    /// judged by the model's checker and cost: whole devices by every combination, shares
    /// by every device.
    fn brute_force(
        kind: &TypeCluster,
        objective: Objective,
        tasks: &[Task],
        profit: &[f64],
        shapes: &Shapes,
    ) -> f64 {
        let devices = usize::from(kind.node_type().gpu_count);
        let choices = |task: &Task| -> Vec<Option<DeviceSet>> {
            let mut options = vec![None, Some(DeviceSet::EMPTY)];
            if task.gpu_count > 0 {
                options.truncate(1);
                for mask in 1u16..(1 << devices) {
                    if mask.count_ones() == u32::from(task.gpu_count) {
                        options.push(Some(DeviceSet(mask as u8)));
                    }
                }
            }
            options
        };
        let shape_of = shapes.shape_of_task(tasks.len());
        let mut best = 0.0f64;
        let mut chosen: Vec<Option<DeviceSet>> = vec![None; tasks.len()];
        fn walk(
            k: usize,
            tasks: &[Task],
            chosen: &mut Vec<Option<DeviceSet>>,
            visit: &mut dyn FnMut(&[Option<DeviceSet>]),
            choices: &dyn Fn(&Task) -> Vec<Option<DeviceSet>>,
        ) {
            if k == tasks.len() {
                visit(chosen);
                return;
            }
            for option in choices(&tasks[k]) {
                chosen[k] = option;
                walk(k + 1, tasks, chosen, visit, choices);
            }
        }
        let mut visit = |chosen: &[Option<DeviceSet>]| {
            let placed = || {
                chosen.iter().enumerate().filter_map(|(t, d)| {
                    Some((
                        &tasks[t],
                        Placement {
                            node: 0,
                            devices: (*d)?,
                        },
                    ))
                })
            };
            if !check_placements(&kind.one_node, placed()).is_empty() {
                return;
            }
            let mut state = ClusterState::empty(&kind.one_node);
            let (mut allocated, mut earned) = (0u64, 0.0);
            for (task, placement) in placed() {
                state.bind(task, placement);
                allocated += u64::from(task.gpu_count) * u64::from(task.gpu_milli);
            }
            for (t, d) in chosen.iter().enumerate() {
                if d.is_some() {
                    earned += profit[shape_of[t].unwrap()];
                }
            }
            let typical = TypicalPods::from_tasks(&[], 95.0);
            let mut cost = kind.relative_cost(&typical, objective, &state, allocated);
            if objective == Objective::Alloc {
                // Allocation's cost is folded into the profits.
                cost = 0.0;
            }
            best = best.min(cost - earned);
        };
        walk(0, tasks, &mut chosen, &mut visit, &choices);
        best
    }

    fn task_strategy() -> impl Strategy<Value = (u32, u8, u16)> {
        let gpus = prop_oneof![
            1 => Just((0u8, 0u16)),
            3 => prop::sample::select(vec![200u16, 300, 450, 550, 700, 810]).prop_map(|m| (1u8, m)),
            2 => Just((1u8, 1000u16)),
            1 => Just((2u8, 1000u16)),
        ];
        (1u32..=20, gpus).prop_map(|(vcpus, (count, milli))| (vcpus * 1000, count, milli))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(60))]
        /// The search's value is the brute-force optimum when it claims a proof, its lower
        /// bound never passes it, and its configuration passes the checker.
        #[test]
        fn the_search_finds_the_brute_force_optimum(
            raw in prop::collection::vec(task_strategy(), 1..=6),
            prices in prop::collection::vec(0.0f64..400.0, 6),
            gpus in 2u8..=3,
            vcpus in prop::sample::select(vec![32u32, 64]),
            power in any::<bool>(),
        ) {
            let cluster = one_node(gpus, vcpus);
            let objective = if power { Objective::Power } else { Objective::Alloc };
            let tasks: Vec<Task> = raw
                .iter()
                .enumerate()
                .map(|(i, &(cpu, count, milli))| Task::new(format!("t{i}"), cpu, 1024, count, milli))
                .collect();
            let shapes = Shapes::group(&tasks, 0..tasks.len()).unwrap();
            let typical = TypicalPods::from_tasks(&[], 95.0);
            let types = TypeCluster::of(&cluster, objective, &typical).unwrap();
            let milli = |s: usize| f64::from(shapes.shapes[s].total_gpu_milli());
            let profit: Vec<f64> = (0..shapes.shapes.len())
                .map(|s| match objective {
                    // Allocation: a non-positive price plus the shape's milli.
                    Objective::Alloc => milli(s) - prices[s] * milli(s) / 400.0,
                    _ => prices[s],
                })
                .collect();
            let searched = best_configuration(&types[0], objective, &shapes, |s| profit[s], None, None);
            let optimum = brute_force(&types[0], objective, &tasks, &profit, &shapes);
            prop_assert!(searched.lower_bound <= optimum + 1e-6, "{} > {optimum}", searched.lower_bound);
            let slots = &searched.slots;
            let placed = slots.iter().map(|&(s, devices)| {
                (&tasks[shapes.shapes[s].tasks[0]], Placement { node: 0, devices })
            });
            prop_assert!(check_placements(&types[0].one_node, placed).is_empty());
            if searched.proven {
                let column = super::super::column::Column::new(
                    0, &types, &shapes, &tasks, &typical, objective, slots.clone(),
                ).unwrap();
                let cost = if objective == Objective::Alloc { 0.0 } else { column.cost };
                let value = cost - column.counts.iter().map(|&(s, n)| f64::from(n) * profit[s]).sum::<f64>();
                prop_assert!((value - optimum).abs() <= 1e-6, "search {value} vs optimum {optimum}");
            }
        }
    }
}
