//! Device patterns: what one device of a node may hold, and which of them can be part of
//! a configuration better than the incumbent.
//!
//! A device is free, or holds one whole-GPU task, or a multiset of shares of at most 1000
//! milli. Under multipliers `λ` a pattern `p` is worth `ℓ_p = Σ_{s∈p} π'_s + g_l(1000 − L_p)`
//! at level `l` (free: `g_l(1000)` plus the multi-GPU credit at its largest). A configuration holding
//! `p` is worth at most `L_b(λ)` less what putting `p` on a device instead of the best
//! one-device use loses, so only patterns with `ℓ_p` above a threshold can beat the
//! incumbent: those are enumerated, depth first over the shares, pruned by a bounded
//! knapsack over the shares still to come.

use gapbench_model::MILLI_GPU_PER_GPU;

use super::dual::{add_bounded, per_device, Item, ItemKind, Multipliers, Relaxation};

/// What one device holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pattern {
    /// `(item, tasks)` of the pattern, items ascending.
    pub items: Vec<(usize, u32)>,
    pub load_milli: u32,
    pub profit: f64,
    pub cpu_milli: u64,
    pub memory_mib: u64,
    /// `ℓ_p` under the multipliers it was enumerated with.
    pub value: f64,
}

impl Pattern {
    fn free(value: f64) -> Pattern {
        Pattern {
            items: Vec::new(),
            load_milli: 0,
            profit: 0.0,
            cpu_milli: 0,
            memory_mib: 0,
            value,
        }
    }

    pub fn is_free(&self) -> bool {
        self.items.is_empty()
    }
}

/// The patterns worth more than `threshold` at `level` under `lambda`, best first (the
/// free device among them only if `free_allowed`); `None` when there are more than
/// `limit`.
pub(crate) fn enumerate(
    relaxation: &Relaxation,
    level: usize,
    free_allowed: bool,
    lambda: Multipliers,
    threshold: f64,
    limit: usize,
) -> Option<Vec<Pattern>> {
    let node = relaxation.value;
    let items = relaxation.items;
    let mut found = Vec::new();
    let free = node.free_device_at_most(level);
    if free_allowed && free > threshold {
        found.push(Pattern::free(free));
    }
    for (index, item) in items.iter().enumerate() {
        if item.kind == ItemKind::Whole(1) && item.most > 0 {
            let value = lambda.reduced(item) + node.device(level, 0);
            if value > threshold {
                found.push(Pattern {
                    items: vec![(index, 1)],
                    load_milli: MILLI_GPU_PER_GPU,
                    profit: item.profit,
                    cpu_milli: item.cpu_milli,
                    memory_mib: item.memory_mib,
                    value,
                });
            }
        }
    }
    // Shares, largest first; `rest[k][u]`: the best λ-profit of shares k.. in u units.
    let mut shares: Vec<usize> = (0..items.len())
        .filter(|&i| matches!(items[i].kind, ItemKind::Share(_)) && items[i].most > 0)
        .collect();
    shares.sort_by_key(|&i| (std::cmp::Reverse(share_milli(&items[i])), i));
    let units = (MILLI_GPU_PER_GPU / relaxation.unit_milli) as usize;
    let mut rest = vec![vec![0.0; units + 1]; shares.len() + 1];
    for k in (0..shares.len()).rev() {
        let mut table = rest[k + 1].clone();
        let item = &items[shares[k]];
        let value = lambda.reduced(item);
        if value > 0.0 {
            let weight = (share_milli(item) / relaxation.unit_milli) as usize;
            add_bounded(&mut table, weight, value, per_device(item));
        }
        rest[k] = table;
    }
    let mut walk = Walk {
        relaxation,
        level,
        lambda,
        threshold,
        shares: &shares,
        rest: &rest,
        chosen: Vec::new(),
        found: &mut found,
        limit,
    };
    if !walk.descend(0, 0, 0.0) {
        return None;
    }
    found.sort_by(|a, b| {
        b.value
            .total_cmp(&a.value)
            .then_with(|| a.items.cmp(&b.items))
    });
    Some(found)
}

fn share_milli(item: &Item) -> u32 {
    match item.kind {
        ItemKind::Share(m) => m,
        _ => 0,
    }
}

struct Walk<'a> {
    relaxation: &'a Relaxation<'a>,
    level: usize,
    lambda: Multipliers,
    threshold: f64,
    shares: &'a [usize],
    rest: &'a [Vec<f64>],
    chosen: Vec<(usize, u32)>,
    found: &'a mut Vec<Pattern>,
    limit: usize,
}

impl Walk<'_> {
    /// Shares `k..` onto a device with `load` milli and `λ`-profit `value` so far; false
    /// when the limit was passed.
    fn descend(&mut self, k: usize, load: u32, value: f64) -> bool {
        let node = self.relaxation.value;
        let free = MILLI_GPU_PER_GPU - load;
        if k == self.shares.len() {
            return true;
        }
        let units_left = (free / self.relaxation.unit_milli) as usize;
        // No completion from here beats the threshold: adding shares only lowers g.
        if value + self.rest[k][units_left] + node.device(self.level, free) <= self.threshold {
            return true;
        }
        let index = self.shares[k];
        let item = &self.relaxation.items[index];
        let milli = share_milli(item);
        let most = per_device(item).min(free / milli);
        let each = self.lambda.reduced(item);
        for n in (0..=most).rev() {
            let load = load + n * milli;
            let value = value + f64::from(n) * each;
            if n > 0 {
                self.chosen.push((index, n));
                let worth = value + node.device(self.level, MILLI_GPU_PER_GPU - load);
                if worth > self.threshold {
                    if self.found.len() >= self.limit {
                        return false;
                    }
                    self.found.push(self.pattern(load, worth));
                }
            }
            let finished = self.descend(k + 1, load, value);
            if n > 0 {
                self.chosen.pop();
            }
            if !finished {
                return false;
            }
        }
        true
    }

    fn pattern(&self, load_milli: u32, value: f64) -> Pattern {
        let items = self.relaxation.items;
        let mut chosen = self.chosen.clone();
        chosen.sort_unstable();
        let (mut profit, mut cpu_milli, mut memory_mib) = (0.0, 0, 0);
        for &(i, n) in &chosen {
            profit += f64::from(n) * items[i].profit;
            cpu_milli += u64::from(n) * items[i].cpu_milli;
            memory_mib += u64::from(n) * items[i].memory_mib;
        }
        Pattern {
            items: chosen,
            load_milli,
            profit,
            cpu_milli,
            memory_mib,
            value,
        }
    }
}
