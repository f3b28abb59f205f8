//! How sharing tasks use a node's devices, for the exact pricing ([`super::knapsack`]):
//! an exact packing onto real devices, and a dual-feasible weight that bounds how many
//! devices a set of shares needs.

use gapbench_model::MILLI_GPU_PER_GPU;

/// A sharing task of more than this takes a device no other such task can share.
pub(crate) const HALF_DEVICE_MILLI: u32 = MILLI_GPU_PER_GPU / 2;

/// A dual-feasible function of bin packing (Fekete and Schepers, 2001) on device milli:
/// shares above `1000 − ε` count as a whole device, shares below `ε` as nothing (for
/// `ε ≤ 500`). Whatever fits on one device weighs at most 1000 after it, so
/// `Σ device_weight ≤ 1000·devices` holds for every real packing, yet it is tighter than
/// milli: two 810-milli tasks weigh 2000, as they need two devices.
pub(crate) fn device_weight(whole_devices: u32, share_milli: u32, epsilon: u32) -> u64 {
    let share = if share_milli == 0 || share_milli < epsilon {
        0
    } else if share_milli > MILLI_GPU_PER_GPU - epsilon {
        MILLI_GPU_PER_GPU
    } else {
        share_milli
    };
    u64::from(whole_devices * MILLI_GPU_PER_GPU + share)
}

/// Steps one packing may take before it gives up.
const PACKING_BUDGET: u64 = 100_000;

/// Whether sharing tasks fit their devices.
pub(crate) enum Packing {
    /// The device of each task.
    Packed(Vec<usize>),
    Impossible,
    /// The packing budget ran out first.
    Unknown,
}

/// Packs sharing tasks `(shape, milli)` onto `devices` devices of 1000 milli each. Exact:
/// depth-first over tasks (largest first, so the first path is first-fit decreasing),
/// trying each distinct device fill once.
pub(crate) fn pack(tasks: &[(usize, u32)], devices: u32) -> Packing {
    if tasks.is_empty() {
        return Packing::Packed(Vec::new());
    }
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_by(|&a, &b| tasks[b].1.cmp(&tasks[a].1).then(a.cmp(&b)));
    let sizes: Vec<u32> = order.iter().map(|&i| tasks[i].1).collect();
    let total: u32 = sizes.iter().sum();
    if total > devices * MILLI_GPU_PER_GPU {
        return Packing::Impossible;
    }
    let mut packer = Packer {
        sizes,
        fill: vec![0; devices as usize],
        chosen: vec![0; tasks.len()],
        steps: PACKING_BUDGET,
    };
    match packer.place(0, total) {
        Some(true) => {
            let mut bins = vec![0usize; tasks.len()];
            for (position, &task) in order.iter().enumerate() {
                bins[task] = packer.chosen[position];
            }
            Packing::Packed(bins)
        }
        Some(false) => Packing::Impossible,
        None => Packing::Unknown,
    }
}

struct Packer {
    /// Task sizes, largest first.
    sizes: Vec<u32>,
    /// Milli used on each device.
    fill: Vec<u32>,
    /// The device of each task placed so far.
    chosen: Vec<usize>,
    steps: u64,
}

impl Packer {
    /// Places task `k` onwards (`left` milli in all): `None` when the budget ran out.
    fn place(&mut self, k: usize, left: u32) -> Option<bool> {
        if k == self.sizes.len() {
            return Some(true);
        }
        let free: u32 = self.fill.iter().map(|f| MILLI_GPU_PER_GPU - f).sum();
        if left > free {
            return Some(false);
        }
        for d in 0..self.fill.len() {
            let size = self.sizes[k];
            if self.fill[d] + size > MILLI_GPU_PER_GPU || self.fill[..d].contains(&self.fill[d]) {
                continue;
            }
            self.steps = self.steps.checked_sub(1)?;
            self.fill[d] += size;
            self.chosen[k] = d;
            if self.place(k + 1, left - size)? {
                return Some(true);
            }
            self.fill[d] -= size;
        }
        Some(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sharing_tasks_pack_exactly() {
        // First fit decreasing fails here (500+300, 400+300+250, then 250 is left over);
        // 500+250+250 and 400+300+300 fill two devices exactly.
        let tasks = [(0, 500), (1, 400), (2, 300), (3, 300), (4, 250), (5, 250)];
        match pack(&tasks, 2) {
            Packing::Packed(bins) => {
                let mut fill = [0u32; 2];
                for (&(_, milli), bin) in tasks.iter().zip(&bins) {
                    fill[*bin] += milli;
                }
                assert!(fill.iter().all(|&f| f <= 1000));
            }
            _ => panic!("500+250+250 and 400+300+300 fit on two devices"),
        }
        // Three tasks above half a device never fit on two.
        assert!(matches!(
            pack(&[(0, 510), (1, 510), (2, 510)], 2),
            Packing::Impossible
        ));
    }

    #[test]
    fn dual_feasible_weights_never_exceed_a_device_for_what_fits_on_one() {
        for epsilon in [0, 191, 350, 450] {
            for a in (0..=1000).step_by(10) {
                for b in (0..=1000 - a).step_by(10) {
                    for c in (0..=1000 - a - b).step_by(10) {
                        let weight = [a, b, c]
                            .iter()
                            .map(|&m| device_weight(0, m, epsilon))
                            .sum::<u64>();
                        assert!(weight <= 1000, "ε {epsilon}: {a}+{b}+{c} weighs {weight}");
                    }
                }
            }
        }
    }
}
