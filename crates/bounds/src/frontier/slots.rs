//! The frontier problem's time slots: consecutive intervals `[end_{t−1}, end_t)` from 0, of
//! any lengths, with capacity `G · |slot t|` GPU-seconds each.
//!
//! Why any lengths keep the bound valid. For a continuous-time schedule of a job, let
//! `s[c,t]` be the time it runs configuration `c` inside slot `t` and `f` the slot it
//! completes in. Then (1) the GPU-seconds it uses inside slot `t` are `Σ_c n_c·s[c,t]`, so
//! every schedule that holds at most `G` GPUs at every instant meets `Σ n_c·s ≤ G·|t|` in
//! every slot, whatever `|t|`; (2) its JCT is the available part of every slot before `f`
//! plus `completion − start of f` (or of its arrival), and the time it runs in `f` is at most
//! that, so the model's JCT never exceeds the real one; (3) energy is exact, and carbon is
//! charged at the slot's lowest intensity, never above the real one. Merging two slots into
//! one sums their capacities and can only widen the set of feasible `s`: a coarser grid is
//! a relaxation of a finer one, so it gives a lower (still valid, looser) bound. Coarse
//! slots therefore cost tightness only where the capacity binds, and the grid of
//! [`Slots::adaptive`] keeps the short base slot there.

use crate::error::BoundError;

/// Slot boundaries: slot `t` is `[end_s[t−1], end_s[t])`, slot 0 starting at 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Slots {
    end_s: Vec<f64>,
}

impl Slots {
    /// `count` slots of `slot_s` seconds.
    pub fn uniform(slot_s: f64, count: usize) -> Slots {
        Slots {
            end_s: (1..=count).map(|k| k as f64 * slot_s).collect(),
        }
    }

    /// Slots ending at `end_s` (strictly increasing, positive); errors otherwise.
    pub fn from_ends(end_s: Vec<f64>) -> Result<Slots, BoundError> {
        let mut previous = 0.0;
        for (t, &end) in end_s.iter().enumerate() {
            if !(end.is_finite() && end > previous) {
                return Err(BoundError::Input(format!(
                    "slot {t} ends at {end} s, not after its start {previous} s"
                )));
            }
            previous = end;
        }
        Ok(Slots { end_s })
    }

    /// A grid of base slots of `base_s` over `[0, horizon_s)`, where runs of base slots
    /// that `busy` does not mark are merged into slots of up to `quiet_s` seconds
    /// (`busy[k]` for base slot `k`; missing entries count as quiet).
    pub fn adaptive(base_s: f64, quiet_s: f64, horizon_s: f64, busy: &[bool]) -> Slots {
        let base_count = (horizon_s / base_s).ceil().max(1.0) as usize;
        let merge = ((quiet_s / base_s).floor() as usize).max(1);
        let mut end_s = Vec::new();
        let mut k = 0;
        while k < base_count {
            let mut next = k + 1;
            if !busy.get(k).copied().unwrap_or(false) {
                while next < base_count
                    && next - k < merge
                    && !busy.get(next).copied().unwrap_or(false)
                {
                    next += 1;
                }
            }
            end_s.push(next as f64 * base_s);
            k = next;
        }
        Slots { end_s }
    }

    pub fn count(&self) -> usize {
        self.end_s.len()
    }

    pub fn is_empty(&self) -> bool {
        self.end_s.is_empty()
    }

    pub fn start_s(&self, slot: usize) -> f64 {
        if slot == 0 {
            0.0
        } else {
            self.end_s[(slot - 1).min(self.end_s.len() - 1)]
        }
    }

    pub fn end_s(&self, slot: usize) -> f64 {
        self.end_s[slot]
    }

    pub fn length_s(&self, slot: usize) -> f64 {
        self.end_s(slot) - self.start_s(slot)
    }

    /// The end of the last slot (after it capacity is unlimited).
    pub fn horizon_s(&self) -> f64 {
        self.end_s.last().copied().unwrap_or(0.0)
    }

    /// The slot holding `time_s` ([`Self::count`] at or after the horizon).
    pub fn slot_of(&self, time_s: f64) -> usize {
        self.end_s.partition_point(|&end| end <= time_s)
    }

    /// The longest slot.
    pub fn longest_s(&self) -> f64 {
        (0..self.count())
            .map(|t| self.length_s(t))
            .fold(0.0, f64::max)
    }
}

/// Share of the GPUs above which a base slot counts as busy.
const BUSY_LOAD_SHARE: f64 = 0.5;

/// Which of `count` base slots of `slot_s` are busy, given what each job would hold if it
/// ran from its arrival at its trace configuration (`(from_s, to_s, gpus)` per job, in
/// the instance's GPU units) on `gpus` GPUs: where that load passes half the GPUs on
/// average, or where a fluid queue of the GPU-seconds beyond capacity is not empty. Only
/// where [`Slots::adaptive`] keeps fine slots depends on it, never the bound's validity.
pub fn busy_base_slots(
    held: impl IntoIterator<Item = (f64, f64, f64)>,
    slot_s: f64,
    count: usize,
    gpus: f64,
) -> Vec<bool> {
    let mut load = vec![0.0; count]; // GPU-seconds held per base slot
    for (from, to, held_gpus) in held {
        let first = (from / slot_s).floor().max(0.0) as usize;
        let last = ((to / slot_s).ceil().max(0.0) as usize).min(count);
        for (k, slot_load) in load.iter_mut().enumerate().take(last).skip(first) {
            let start = k as f64 * slot_s;
            let overlap = (to.min(start + slot_s) - from.max(start)).max(0.0);
            *slot_load += held_gpus * overlap;
        }
    }
    let capacity = gpus * slot_s;
    let mut backlog = 0.0;
    load.iter()
        .map(|&l| {
            backlog = (backlog + l - capacity).max(0.0);
            l > BUSY_LOAD_SHARE * capacity || backlog > 0.0
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_runs_merge_and_busy_slots_stay_fine() {
        // Base 100 s over 1000 s; base slots 3 and 4 busy; quiet slots merge by up to 3.
        let busy = [
            false, false, false, true, true, false, false, false, false, false,
        ];
        let slots = Slots::adaptive(100.0, 300.0, 1000.0, &busy);
        let ends: Vec<f64> = (0..slots.count()).map(|t| slots.end_s(t)).collect();
        assert_eq!(ends, vec![300.0, 400.0, 500.0, 800.0, 1000.0]);
        assert_eq!(slots.slot_of(0.0), 0);
        assert_eq!(slots.slot_of(399.9), 1);
        assert_eq!(slots.slot_of(400.0), 2);
        assert_eq!(slots.slot_of(1000.0), 5);
        assert_eq!(slots.length_s(3), 300.0);
        assert_eq!(slots.start_s(0), 0.0);
        assert!(Slots::from_ends(vec![10.0, 10.0]).is_err());
    }

    #[test]
    fn load_over_half_or_a_queue_marks_busy() {
        // 4 GPUs, base 10 s: 3 GPUs over [0, 10) (busy), 1 over [10, 20) (quiet), 6 over
        // [20, 30) (busy, a queue of 20 GPU-s), then nothing: the queue drains within
        // [30, 40), quiet.
        let busy = busy_base_slots(
            [(0.0, 10.0, 3.0), (10.0, 20.0, 1.0), (20.0, 30.0, 6.0)],
            10.0,
            5,
            4.0,
        );
        assert_eq!(busy, vec![true, false, true, false, false]);
    }
}
