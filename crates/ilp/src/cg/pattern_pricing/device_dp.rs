//! A bound on pattern pricing by dynamic programming over devices and CPU.
//!
//! The Lagrangian bound ([`super::dual`]) prices CPU at one rate, so it cannot see that a
//! node's CPU runs out in whole tasks: on an 8-GPU node with ~12 vCPU per whole-GPU task its
//! gap is worth most of a device (~100 W for power). This bound keeps CPU as a capacity, in
//! units of `u` milli with every task's CPU rounded *down* (`Σ ⌊cpu_i/u⌋ ≤ ⌊Σ cpu_i/u⌋`, so
//! every configuration that fits stays feasible), and relaxes only memory (priced at a
//! multiplier `λ_mem ≥ 0`) and how many tasks of a shape the devices share:
//!
//! - `T[c][L]`: the most `Σ (π_s − λ_mem·mem_s)` of shares on one device using at most `c`
//!   CPU units and `L` load units (a bounded knapsack in two dimensions). A load unit is
//!   the gcd of the shares' milli, or, where that would make the table wide and a device's
//!   value never falls as it frees up (every objective priced today), a coarser one with
//!   every share's load rounded down like its CPU: every configuration stays feasible and
//!   is credited at least its free milli, so the bound holds (EaCO's shares have gcd 1:
//!   1,001 load columns were 60 % of a replay bound's branching);
//! - `f_l(c)`: one device at work using at most `c` units, `max_L T[c][L] + g_l(1000 − L)`,
//!   or one whole-GPU task (`g_l(0)`); `free_l`: a free device;
//! - `D_l[r][c]`: `r` slots using at most `c` units — a max-plus convolution of `f_l` (and
//!   free devices, when slots may stay free, and multi-GPU tasks over several slots);
//! - `K[c]`: CPU-only tasks in `c` units.
//!
//! The subproblem's bound is `constant_l + λ_mem·MEM + max_c K[c] + D_l[S][C_l − c]` plus
//! the free devices outside the slots; inside the search, `D_l[R][⌊CPU left / u⌋]` bounds
//! what the `R` slots left can still add.

use std::rc::Rc;

use gapbench_model::MILLI_GPU_PER_GPU;

use super::dual::{add_bounded, per_device, ItemKind, Relaxation, Slots};

/// CPU units a node's whole CPU is cut into (`u = ⌈C / units⌉`): the rounding loses at most
/// `u` per task.
const CPU_UNITS: u64 = 512;
/// Load units a device is cut into at most when loads may be rounded down (see the module
/// documentation): a unit of at least 10 milli, and never more than the smallest share.
const LOAD_UNITS: u32 = 100;

/// `T` for one node type and memory multiplier, shared by its levels.
pub(crate) struct ShareTable {
    /// CPU milli per unit.
    pub cpu_unit_milli: u64,
    cpu_units: usize,
    load_units: usize,
    unit_milli: u32,
    /// `T[c][L]`, row-major in `c`.
    table: Vec<f64>,
    /// `K[c]`.
    cpu_only: Vec<f64>,
    memory_multiplier: f64,
}

impl ShareTable {
    pub fn new(relaxation: &Relaxation, memory_multiplier: f64) -> ShareTable {
        let cpu_unit_milli = relaxation.cpu_milli.div_ceil(CPU_UNITS).max(1);
        let cpu_units = (relaxation.cpu_milli / cpu_unit_milli) as usize;
        let unit_milli = load_unit_milli(relaxation);
        let load_units = (MILLI_GPU_PER_GPU / unit_milli) as usize;
        let width = load_units + 1;
        let mut table = vec![0.0; (cpu_units + 1) * width];
        let mut cpu_only = vec![0.0; cpu_units + 1];
        let units_of = |cpu: u64| (cpu / cpu_unit_milli) as usize;
        for item in relaxation.items {
            let value = item.profit - memory_multiplier * item.memory_mib as f64;
            if value <= 0.0 {
                continue;
            }
            let cpu = units_of(item.cpu_milli);
            match item.kind {
                ItemKind::Share(milli) => {
                    let load = (milli / unit_milli) as usize;
                    // Binary splitting of the per-device count, each piece a 0/1 item.
                    let (mut left, mut piece) = (per_device(item), 1u32);
                    while left > 0 {
                        let take = piece.min(left);
                        left -= take;
                        piece *= 2;
                        let (dc, dl) = (cpu * take as usize, load * take as usize);
                        if dc > cpu_units || dl > load_units {
                            continue;
                        }
                        add_piece(&mut table, width, (dc, dl), value * f64::from(take));
                    }
                }
                ItemKind::CpuOnly => add_bounded(&mut cpu_only, cpu, value, item.most),
                ItemKind::Whole(_) => {}
            }
        }
        ShareTable {
            cpu_unit_milli,
            cpu_units,
            load_units,
            unit_milli,
            table,
            cpu_only,
            memory_multiplier,
        }
    }

    /// CPU units of `cpu_milli` left (rounded down, as the tasks' CPU is).
    pub fn units(&self, cpu_milli: u64) -> usize {
        ((cpu_milli / self.cpu_unit_milli) as usize).min(self.cpu_units)
    }
}

/// The load unit of `T`: the shares' gcd, or where that cuts a device into more than
/// [`LOAD_UNITS`] and devices' values are non-decreasing in their free milli, the largest
/// unit of at most `1000 / LOAD_UNITS` milli (so loads round down by less than that) that
/// no share is below (so a device holding a share is at work in `T`).
fn load_unit_milli(relaxation: &Relaxation) -> u32 {
    let gcd = relaxation.unit_milli;
    if MILLI_GPU_PER_GPU / gcd <= LOAD_UNITS || !relaxation.value.devices_non_decreasing() {
        return gcd;
    }
    let smallest = relaxation
        .items
        .iter()
        .filter_map(|i| match i.kind {
            ItemKind::Share(milli) => Some(milli),
            _ => None,
        })
        .min()
        .unwrap_or(MILLI_GPU_PER_GPU);
    (MILLI_GPU_PER_GPU / LOAD_UNITS).min(smallest).max(gcd)
}

/// One 0/1 item of `(cpu, load)` units worth `value` into `T` (rows of `width` load units
/// by CPU units): `T[c][l] = max(T[c][l], T[c − cpu][l − load] + value)`, as if the rows
/// were visited from the last down (each item counted once). With `cpu > 0` a row reads
/// only a row below it, not yet changed by this item, so each row is one pass over two
/// slices without bounds checks or branches (a select, not a conditional store: the loop
/// this replaces took a fifth of a whole-cluster power solve); only `cpu = 0` reads its
/// own row, from the top load down.
fn add_piece(table: &mut [f64], width: usize, (cpu, load): (usize, usize), value: f64) {
    let rows = table.len() / width;
    for c in (cpu..rows).rev() {
        if cpu == 0 {
            let row = &mut table[c * width..(c + 1) * width];
            for l in (load..width).rev() {
                let candidate = row[l - load] + value;
                if candidate > row[l] {
                    row[l] = candidate;
                }
            }
        } else {
            let (below, above) = table.split_at_mut(c * width);
            let source = &below[(c - cpu) * width..(c - cpu) * width + width - load];
            let target = &mut above[load..width];
            for (to, &from) in target.iter_mut().zip(source) {
                let candidate = from + value;
                *to = if candidate > *to { candidate } else { *to };
            }
        }
    }
}

/// `D_l` for one level, every number of slots (see the module documentation).
pub(crate) struct SlotTable {
    /// `D[r][c]` for `r = 0..=G`, `c = 0..stride`, row-major in `r`: this level's own, or
    /// a level allowing more CPU whose devices are valued alike (`D[r][c]` is then the
    /// same for every `c` this level allows: power's levels differ only in their sockets).
    table: Rc<Vec<f64>>,
    /// Row length of `table`; this level reads columns `0..width`.
    stride: usize,
    cpu_unit_milli: u64,
    width: usize,
    /// `constant_l + λ_mem·MEM`.
    base: f64,
    /// What a free device is worth at most.
    free: f64,
    devices: u32,
    /// `K[c]`, cut to the level's units.
    cpu_only: Vec<f64>,
    pub memory_multiplier: f64,
}

impl SlotTable {
    /// The table of `level`, its slots free or not as `free_allowed` says.
    pub fn new(
        relaxation: &Relaxation,
        shares: &ShareTable,
        level: usize,
        free_allowed: bool,
    ) -> SlotTable {
        let node = relaxation.value;
        let at = &node.levels[level];
        let units = shares.units(at.cpu_used_at_most);
        let width = units + 1;
        let lambda = shares.memory_multiplier;
        let (one, multi) = one_device(relaxation, shares, level, units);
        // `one` is a step function of the CPU used, and every row of `D` is non-decreasing
        // in `c` ("at most `c` units"): a `used` where `one` does not rise adds no more than
        // `used − 1` does, so the convolution visits only where it rises (same maximum).
        let rises: Vec<(usize, f64)> = (0..width)
            .filter(|&u| one[u].is_finite() && (u == 0 || one[u] > one[u - 1]))
            .map(|u| (u, one[u]))
            .collect();
        let free = node.free_device_at_most(level);
        let free_value = free_allowed.then_some(free);
        let table = device_rows(node.devices as usize, width, free_value, &rises, &multi);
        SlotTable {
            table: Rc::new(table),
            stride: width,
            cpu_unit_milli: shares.cpu_unit_milli,
            width,
            base: at.constant + lambda * relaxation.memory_mib as f64,
            free,
            devices: node.devices,
            cpu_only: shares.cpu_only[..width].to_vec(),
            memory_multiplier: lambda,
        }
    }

    /// The table of `level`, whose devices `wider` (a level allowing at least as much CPU,
    /// slots as free) values alike (`NodeValue::same_devices`): `wider`'s `D` cut to the
    /// CPU `level` allows, with its own constant.
    pub fn sharing(
        wider: &SlotTable,
        relaxation: &Relaxation,
        shares: &ShareTable,
        level: usize,
    ) -> SlotTable {
        let at = &relaxation.value.levels[level];
        let width = shares.units(at.cpu_used_at_most).min(wider.width - 1) + 1;
        SlotTable {
            table: Rc::clone(&wider.table),
            stride: wider.stride,
            cpu_unit_milli: wider.cpu_unit_milli,
            width,
            base: at.constant + wider.memory_multiplier * relaxation.memory_mib as f64,
            free: wider.free,
            devices: wider.devices,
            cpu_only: wider.cpu_only[..width].to_vec(),
            memory_multiplier: wider.memory_multiplier,
        }
    }

    /// The bound of the subproblem filling `slots` (the other devices free).
    pub fn bound(&self, slots: Slots) -> f64 {
        let units = self.width - 1;
        let row = &self.table[slots.count as usize * self.stride..][..self.width];
        let slots_and_cpu_only = (0..self.width)
            .filter(|&c| row[units - c].is_finite())
            .map(|c| self.cpu_only[c] + row[units - c])
            .fold(f64::NEG_INFINITY, f64::max);
        self.base + slots_and_cpu_only + self.fixed_free(slots)
    }

    /// What the devices outside `slots` are worth at most (all free).
    pub fn fixed_free(&self, slots: Slots) -> f64 {
        f64::from(self.devices - slots.count) * self.free
    }

    /// `constant_l + λ_mem·MEM`.
    pub fn base(&self) -> f64 {
        self.base
    }

    /// CPU units of `cpu_milli` left (rounded down, as the tasks' CPU is).
    pub fn units(&self, cpu_milli: u64) -> usize {
        ((cpu_milli / self.cpu_unit_milli) as usize).min(self.width - 1)
    }

    /// `D[r][c]`: the most `r` slots can add with `c` CPU units.
    pub fn rest(&self, slots: u32, cpu_units: usize) -> f64 {
        self.table[slots as usize * self.stride + cpu_units.min(self.width - 1)]
    }
}

/// Per CPU units `c` (up to `units`), the best value of one device at work using at most
/// `c` units (a share table's row, or one single-GPU task), non-decreasing in `c`; and the
/// multi-GPU items as `(devices, CPU units, value)`.
#[allow(clippy::type_complexity)]
fn one_device(
    relaxation: &Relaxation,
    shares: &ShareTable,
    level: usize,
    units: usize,
) -> (Vec<f64>, Vec<(usize, usize, f64)>) {
    let node = relaxation.value;
    let width = units + 1;
    let lambda = shares.memory_multiplier;
    let units_of = |cpu: u64| (cpu / shares.cpu_unit_milli) as usize;
    // f(c): one device at work using at most c units.
    let mut one = vec![f64::NEG_INFINITY; width];
    let load_width = shares.load_units + 1;
    for (c, best) in one.iter_mut().enumerate() {
        let row = &shares.table[c * load_width..(c + 1) * load_width];
        for (l, &value) in row.iter().enumerate().skip(1) {
            let free = MILLI_GPU_PER_GPU - l as u32 * shares.unit_milli;
            *best = best.max(value + node.device(level, free));
        }
    }
    let full = node.device(level, 0);
    let mut multi: Vec<(usize, usize, f64)> = Vec::new();
    for item in relaxation.items {
        let value = item.profit - lambda * item.memory_mib as f64;
        let cpu = units_of(item.cpu_milli);
        match item.kind {
            ItemKind::Whole(1) if cpu <= units => {
                for best in &mut one[cpu..] {
                    *best = best.max(value + full);
                }
            }
            ItemKind::Whole(k) if k >= 2 && cpu <= units => {
                multi.push((k as usize, cpu, value + f64::from(k) * full));
            }
            _ => {}
        }
    }
    for c in 1..width {
        one[c] = one[c].max(one[c - 1]);
    }
    (one, multi)
}

/// The dynamic program's table: row `r` (of `0..=count` devices), column `c` (CPU units
/// up to `width − 1`), the best value of `r` devices using at most `c` units: each device
/// free (worth `free`, when allowed), at work at one of `rises`, or `k` of them holding a
/// multi-GPU item.
fn device_rows(
    count: usize,
    width: usize,
    free: Option<f64>,
    rises: &[(usize, f64)],
    multi: &[(usize, usize, f64)],
) -> Vec<f64> {
    let mut table = vec![f64::NEG_INFINITY; (count + 1) * width];
    table[..width].fill(0.0);
    for r in 1..=count {
        let (done, row) = table.split_at_mut(r * width);
        let row = &mut row[..width];
        let previous = &done[(r - 1) * width..];
        for c in 0..width {
            let mut best = match free {
                Some(free) => previous[c] + free,
                None => f64::NEG_INFINITY,
            };
            for &(used, value) in rises.iter().take_while(|(used, _)| *used <= c) {
                if previous[c - used].is_finite() {
                    best = best.max(previous[c - used] + value);
                }
            }
            for &(k, cpu, value) in multi {
                if k <= r && cpu <= c {
                    let before = done[(r - k) * width + c - cpu];
                    if before.is_finite() {
                        best = best.max(before + value);
                    }
                }
            }
            row[c] = best;
        }
    }
    table
}

#[cfg(test)]
mod tests {
    use super::add_piece;
    use crate::cg::pattern_pricing::dual::add_bounded;

    /// A small deterministic sequence of table values (no RNG needed for the shapes here).
    fn values(n: usize, seed: u64) -> Vec<f64> {
        (0..n as u64)
            .map(|i| ((i * 7919 + seed * 104_729) % 97) as f64 / 4.0)
            .collect()
    }

    #[test]
    fn a_piece_is_counted_once_in_every_cell() {
        let (rows, width) = (9, 7);
        for (seed, cpu, load) in [(1, 0, 2), (2, 3, 0), (3, 2, 3), (4, 0, 0), (5, 8, 6)] {
            let before = values(rows * width, seed);
            let mut table = before.clone();
            add_piece(&mut table, width, (cpu, load), 2.5);
            for c in 0..rows {
                for l in 0..width {
                    let mut expected = before[c * width + l];
                    if c >= cpu && l >= load {
                        expected = expected.max(before[(c - cpu) * width + l - load] + 2.5);
                    }
                    assert_eq!(table[c * width + l], expected, "cell ({c}, {l})");
                }
            }
        }
    }

    #[test]
    fn bounded_copies_match_their_enumeration() {
        // Best value of at most `u` units: a base table plus up to `count` copies.
        for (weight, count) in [(0, 2), (1, 5), (2, 3), (3, 7), (4, 1)] {
            let base = values(13, weight as u64 + 11);
            let mut table = base.clone();
            add_bounded(&mut table, weight, 1.75, count);
            for (u, &got) in table.iter().enumerate() {
                let expected = (0..=count as usize)
                    .filter(|k| k * weight <= u)
                    .map(|k| base[u - k * weight] + 1.75 * k as f64)
                    .fold(f64::NEG_INFINITY, f64::max);
                assert_eq!(got, expected, "weight {weight}, count {count}, units {u}");
            }
        }
    }
}
