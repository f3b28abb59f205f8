//! The Lagrangian bound of pattern pricing on one node type and CPU level.
//!
//! Pricing maximises `Φ(c) = Σ_s π_s·n_s + V(c)` ([`crate::node_value`]). At level `l`
//! (CPU used at most `C_l`, values `constant_l`, `g_l`), dualising CPU and memory with
//! `λ = (λ_cpu, λ_mem) ≥ 0` leaves independent devices:
//!
//! `Φ_l ≤ L_l(λ) = constant_l + λ_cpu·C_l + λ_mem·MEM + Σ_{s CPU-only} u_s·(π'_s)⁺ + best_l(G)`,
//!
//! with `π'_s = π_s − λ·r_s`, `u_s` the most of shape `s` a node takes, and `best_l(G)` the
//! best use of `G` devices: each either holds whole-GPU tasks (`π'` per task of `k`
//! devices), or one device's best mix of shares, `max_L KS(L) + g_l(1000 − L)` (a bounded
//! knapsack on device milli), or stays free (`g_l(1000)`, plus the multi-GPU credit at its
//! largest). Every `λ ≥ 0` gives a valid bound; [`Relaxation::minimise`] looks for the
//! least.
//!
//! Devices chosen independently may each take a *scarce* shape (fewer tasks of it than
//! devices could hold), which counts its profit `G` times: with a high price on a rare
//! shape the bound is useless. So `best_l` is also bounded by what devices without scarce
//! shapes are worth, `A` each, plus every scarce task at most once:
//! `best_l(d) ≤ d·A + Σ_{s scarce} u_s·(π'_s)⁺` (a device's value is at most its part
//! without scarce tasks, itself at most `A`, plus their profits: `g` only falls with load).

use gapbench_model::MILLI_GPU_PER_GPU;

use crate::node_value::NodeValue;

/// One shape as pattern pricing sees it (profitable shapes only).
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub shape: usize,
    pub profit: f64,
    pub cpu_milli: u64,
    pub memory_mib: u64,
    pub kind: ItemKind,
    /// The most tasks of the shape one node may take (node capacity and tasks left).
    pub most: u32,
    /// Fewer tasks than the node's devices could hold (see the module documentation).
    pub scarce: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ItemKind {
    CpuOnly,
    /// Part of one device, in milli (below 1000).
    Share(u32),
    /// This many whole devices.
    Whole(u32),
}

/// Which devices a subproblem fills: `count` slots, each a pattern (or free, when
/// `free_allowed`), the node's other devices free. Splitting by the number of devices at
/// work (`free_allowed = false`, every count) makes a device's fixed cost — a busy GPU's
/// watts, a free one's credit — part of the subproblem, where the Lagrangian bound, which
/// smooths fixed costs away, cannot lose it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slots {
    pub count: u32,
    pub free_allowed: bool,
}

/// Multipliers on CPU (per milli) and memory (per MiB).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Multipliers {
    pub cpu: f64,
    pub memory: f64,
}

impl Multipliers {
    pub fn reduced(&self, item: &Item) -> f64 {
        item.profit - self.cpu * item.cpu_milli as f64 - self.memory * item.memory_mib as f64
    }

    pub fn of(&self, cpu_milli: u64, memory_mib: u64) -> f64 {
        self.cpu * cpu_milli as f64 + self.memory * memory_mib as f64
    }
}

/// What a bound needs about one node type and its items, fixed for a pricing call.
pub(crate) struct Relaxation<'a> {
    pub items: &'a [Item],
    pub value: &'a NodeValue,
    pub cpu_milli: u64,
    pub memory_mib: u64,
    /// Device milli in units of `unit_milli` (the gcd of the shares and 1000).
    pub unit_milli: u32,
}

/// `L_l(λ)` and its parts, for the search's bounds.
#[derive(Debug, Clone)]
pub(crate) struct Evaluated {
    pub bound: f64,
    /// `best_l(d)` for `d = 0..=slots`: the best use of `d` slots under `λ`.
    pub devices: Vec<f64>,
    /// `Σ_{CPU-only} u_s·(π'_s)⁺`.
    pub cpu_only: f64,
    /// `A`: the most one slot is worth without scarce shapes.
    pub plain_device: f64,
    /// What the devices outside the slots, all free, are worth at most.
    pub fixed_free: f64,
}

impl Relaxation<'_> {
    pub fn new<'a>(
        items: &'a [Item],
        value: &'a NodeValue,
        cpu_milli: u64,
        memory_mib: u64,
    ) -> Relaxation<'a> {
        let unit_milli = items
            .iter()
            .filter_map(|i| match i.kind {
                ItemKind::Share(m) => Some(m),
                _ => None,
            })
            .fold(MILLI_GPU_PER_GPU, gcd);
        Relaxation {
            items,
            value,
            cpu_milli,
            memory_mib,
            unit_milli,
        }
    }

    fn units(&self) -> usize {
        (MILLI_GPU_PER_GPU / self.unit_milli) as usize
    }

    /// The best `λ`-profit of the shares `keep` accepts on one device with at most `u`
    /// units used, for every `u` (a bounded knapsack; items with `π' ≤ 0` never help).
    pub fn device_knapsack(&self, lambda: Multipliers, keep: impl Fn(&Item) -> bool) -> Vec<f64> {
        let mut best = vec![0.0; self.units() + 1];
        for item in self.items.iter().filter(|i| keep(i)) {
            let ItemKind::Share(milli) = item.kind else {
                continue;
            };
            let value = lambda.reduced(item);
            if value <= 0.0 {
                continue;
            }
            add_bounded(
                &mut best,
                (milli / self.unit_milli) as usize,
                value,
                per_device(item),
            );
        }
        best
    }

    /// `L_l(λ)` for a subproblem filling `slots` (see the module documentation).
    pub fn evaluate(&self, level: usize, slots: Slots, lambda: Multipliers) -> Evaluated {
        let node = self.value;
        let mut cpu_only = 0.0;
        let mut scarce = 0.0;
        let free = node.free_device_at_most(level);
        let floor = if slots.free_allowed {
            free
        } else {
            f64::NEG_INFINITY
        };
        let (mut one_device, mut plain_device) = (floor, floor);
        for item in self.items {
            let value = lambda.reduced(item);
            if value > 0.0 && item.scarce {
                scarce += f64::from(item.most) * value;
            }
            match item.kind {
                ItemKind::CpuOnly if value > 0.0 => cpu_only += f64::from(item.most) * value,
                ItemKind::Whole(1) => {
                    // The device is left with nothing free.
                    let worth = value + node.device(level, 0);
                    one_device = one_device.max(worth);
                    if !item.scarce {
                        plain_device = plain_device.max(worth);
                    }
                }
                _ => {}
            }
        }
        // Shares on a device at work: at least one unit of load.
        let best_shares = |shares: &[f64]| {
            shares
                .iter()
                .enumerate()
                .skip(1)
                .map(|(u, &value)| {
                    let load = u as u32 * self.unit_milli;
                    value + node.device(level, MILLI_GPU_PER_GPU - load)
                })
                .fold(f64::NEG_INFINITY, f64::max)
        };
        one_device = one_device.max(best_shares(&self.device_knapsack(lambda, |_| true)));
        plain_device = plain_device.max(best_shares(&self.device_knapsack(lambda, |i| !i.scarce)));
        let devices = self.device_uses(level, lambda, slots.count, |d| {
            if d == 0 {
                0.0
            } else {
                (d as f64 * one_device).min(d as f64 * plain_device + scarce)
            }
        });
        let fixed_free = f64::from(node.devices - slots.count) * free;
        let at = &node.levels[level];
        let bound = at.constant
            + lambda.of(at.cpu_used_at_most, self.memory_mib)
            + cpu_only
            + devices[slots.count as usize]
            + fixed_free;
        Evaluated {
            bound,
            devices,
            cpu_only,
            plain_device,
            fixed_free,
        }
    }

    /// `best(d)` for `d = 0..=slots`: multi-GPU tasks (bounded), and `single(k)` for the
    /// `k` slots left.
    pub fn device_uses(
        &self,
        level: usize,
        lambda: Multipliers,
        slots: u32,
        single: impl Fn(usize) -> f64,
    ) -> Vec<f64> {
        let devices = slots as usize;
        let full_device = self.value.device(level, 0);
        // Multi-GPU tasks first: the best value of exactly d devices' worth of them.
        let mut multi = vec![f64::NEG_INFINITY; devices + 1];
        multi[0] = 0.0;
        for item in self.items {
            let ItemKind::Whole(k) = item.kind else {
                continue;
            };
            // Its devices are left with nothing free. Kept even at a loss: slots that must
            // be at work may have nothing better.
            let value = lambda.reduced(item) + f64::from(k) * full_device;
            if k < 2 {
                continue;
            }
            let k = k as usize;
            for _ in 0..item.most.min((devices / k) as u32) {
                for d in (k..=devices).rev() {
                    if multi[d - k].is_finite() {
                        multi[d] = multi[d].max(multi[d - k] + value);
                    }
                }
            }
        }
        (0..=devices)
            .map(|d| {
                (0..=d)
                    .filter(|&used| multi[used].is_finite())
                    .map(|used| multi[used] + single(d - used))
                    .fold(f64::NEG_INFINITY, f64::max)
            })
            .collect()
    }

    /// Multipliers that make `L_l` small: golden-section search on each coordinate in turn
    /// (`L_l` is convex in `λ`), starting from `start`. Any result is a valid bound.
    pub fn minimise(&self, level: usize, slots: Slots, start: Multipliers) -> (Multipliers, f64) {
        let highest = |per: fn(&Item) -> u64| {
            self.items
                .iter()
                .filter(|i| per(i) > 0)
                .map(|i| i.profit / per(i) as f64)
                .fold(0.0, f64::max)
        };
        let cpu_high = highest(|i| i.cpu_milli);
        let memory_high = if self.memory_can_bind() {
            highest(|i| i.memory_mib)
        } else {
            0.0
        };
        let mut lambda = Multipliers {
            cpu: start.cpu.min(cpu_high),
            memory: start.memory.min(memory_high),
        };
        let value = |l: Multipliers| self.evaluate(level, slots, l).bound;
        let mut best = value(lambda);
        for pass in 0..PASSES {
            let (found, at) = golden(0.0, cpu_high, |c| value(Multipliers { cpu: c, ..lambda }));
            if at < best {
                best = at;
                lambda.cpu = found;
            }
            if memory_high == 0.0 {
                break;
            }
            let (found, at) = golden(0.0, memory_high, |m| {
                value(Multipliers {
                    memory: m,
                    ..lambda
                })
            });
            if at < best {
                best = at;
                lambda.memory = found;
            } else if pass > 0 {
                break;
            }
        }
        (lambda, best)
    }

    /// Whether memory can run out before CPU: some shape asks more memory per CPU than the
    /// node has, or asks memory without CPU.
    fn memory_can_bind(&self) -> bool {
        self.items.iter().any(|i| {
            i.memory_mib > 0
                && (i.cpu_milli == 0
                    || u128::from(i.memory_mib) * u128::from(self.cpu_milli)
                        > u128::from(self.memory_mib) * u128::from(i.cpu_milli))
        })
    }
}

/// Coordinate passes of [`Relaxation::minimise`].
const PASSES: usize = 3;
/// Golden-section steps on one coordinate.
const GOLDEN_STEPS: usize = 28;

/// The least of a convex `f` on `[low, high]` by golden-section search, with the ends as
/// candidates too: `(argument, value)`.
fn golden(mut low: f64, mut high: f64, f: impl Fn(f64) -> f64) -> (f64, f64) {
    let (first, last) = (low, high);
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    let mut a = high - ratio * (high - low);
    let mut b = low + ratio * (high - low);
    let (mut fa, mut fb) = (f(a), f(b));
    for _ in 0..GOLDEN_STEPS {
        if fa <= fb {
            high = b;
            b = a;
            fb = fa;
            a = high - ratio * (high - low);
            fa = f(a);
        } else {
            low = a;
            a = b;
            fa = fb;
            b = low + ratio * (high - low);
            fb = f(b);
        }
    }
    [(a, fa), (b, fb), (first, f(first)), (last, f(last))]
        .into_iter()
        .min_by(|x, y| x.1.total_cmp(&y.1))
        .expect("four candidates")
}

/// The most tasks of a sharing item one device holds.
pub(crate) fn per_device(item: &Item) -> u32 {
    match item.kind {
        ItemKind::Share(milli) => item.most.min(MILLI_GPU_PER_GPU / milli),
        _ => item.most,
    }
}

/// Adds up to `count` copies of an item of `weight` units and `value` to the knapsack
/// table `best` (best value with at most `u` units), by binary splitting.
pub(crate) fn add_bounded(best: &mut [f64], weight: usize, value: f64, count: u32) {
    let mut left = count;
    let mut piece = 1u32;
    // Each piece reads the table as it was before the piece (a 0/1 item): from a copy, so
    // the loop is one pass over two slices without bounds checks or branches.
    let mut before = Vec::with_capacity(best.len());
    while left > 0 {
        let take = piece.min(left);
        left -= take;
        piece *= 2;
        let (w, v) = (weight * take as usize, value * f64::from(take));
        if w >= best.len() {
            continue;
        }
        before.clear();
        before.extend_from_slice(&best[..best.len() - w]);
        for (to, &from) in best[w..].iter_mut().zip(&before) {
            let candidate = from + v;
            *to = if candidate > *to { candidate } else { *to };
        }
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
