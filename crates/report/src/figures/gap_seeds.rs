//! A gap bar over several seeds (the arrival orders of one trace): the mean interval as the
//! bar and whisker, and the range over the seeds beside it, as `REPORT.md`'s spread table
//! (`gap_spread.rs`) gives them, so a figure tells a typical gap from one arrival order's.

use std::collections::BTreeSet;

use super::gap_data::{BarStatus, ProvenGap, UpperEnd};

/// How far the seeds of one bar spread: from the least proven gap of any seed to the
/// greatest upper end of any seed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SeedRange {
    pub(crate) seeds: usize,
    pub(crate) least_low_pct: f64,
    /// Unbounded when any seed's upper end is.
    pub(crate) greatest_high: UpperEnd,
    /// The seeds' statuses differ: the bar is drawn as the least proven of them.
    pub(crate) mixed_status: bool,
}

/// What one bar draws of its seeds' intervals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct OverSeeds {
    /// Mean over the seeds of the proven gap (the interval's low end).
    pub(crate) mean_low_pct: f64,
    /// Mean over the seeds of the upper end; unbounded when any seed's is (the strongest
    /// reason of theirs).
    pub(crate) mean_high: UpperEnd,
    /// The least proven status of the seeds (`BarStatus` orders strongest first).
    pub(crate) status: BarStatus,
    /// `None` for one seed: its bar is its interval.
    pub(crate) range: Option<SeedRange>,
}

/// The mean interval, status and range of `per_seed` (one interval per seed, not empty).
pub(crate) fn over_seeds(per_seed: &[ProvenGap]) -> OverSeeds {
    let n = per_seed.len() as f64;
    let unbounded = per_seed
        .iter()
        .filter_map(|g| match g.high {
            UpperEnd::Unbounded(reason) => Some(reason),
            UpperEnd::Finite(_) => None,
        })
        .min();
    let finite_highs = || {
        per_seed.iter().filter_map(|g| match g.high {
            UpperEnd::Finite(high) => Some(high),
            UpperEnd::Unbounded(_) => None,
        })
    };
    let (mean_high, greatest_high) = match unbounded {
        Some(reason) => (UpperEnd::Unbounded(reason), UpperEnd::Unbounded(reason)),
        None => (
            UpperEnd::Finite(finite_highs().sum::<f64>() / n),
            UpperEnd::Finite(finite_highs().fold(f64::NEG_INFINITY, f64::max)),
        ),
    };
    let statuses: BTreeSet<BarStatus> = per_seed.iter().map(|g| g.bar).collect();
    let range = (per_seed.len() > 1).then(|| SeedRange {
        seeds: per_seed.len(),
        least_low_pct: per_seed
            .iter()
            .map(|g| g.low_pct)
            .fold(f64::INFINITY, f64::min),
        greatest_high,
        mixed_status: statuses.len() > 1,
    });
    OverSeeds {
        mean_low_pct: per_seed.iter().map(|g| g.low_pct).sum::<f64>() / n,
        mean_high,
        status: statuses.last().copied().unwrap_or(BarStatus::Optimal),
        range,
    }
}

#[cfg(test)]
mod tests {
    use super::super::gap_data::Unbounded;
    use super::*;

    fn gap(bar: BarStatus, low_pct: f64, high: UpperEnd) -> ProvenGap {
        ProvenGap { bar, low_pct, high }
    }

    /// Seeds [10, 10] optimal, [12, 16] gap_limit, [5, 19] time_limit. By hand: mean
    /// (10 + 12 + 5) / 3 = 9 to (10 + 16 + 19) / 3 = 15, range 5 to 19, drawn as
    /// time_limit (the least proven), statuses mixed.
    #[test]
    fn three_seeds_give_the_hand_computed_mean_and_range() {
        let seeds = [
            gap(BarStatus::Optimal, 10.0, UpperEnd::Finite(10.0)),
            gap(BarStatus::GapLimit, 12.0, UpperEnd::Finite(16.0)),
            gap(BarStatus::TimeLimit, 5.0, UpperEnd::Finite(19.0)),
        ];
        let over = over_seeds(&seeds);
        assert_eq!(over.mean_low_pct, 9.0);
        assert_eq!(over.mean_high, UpperEnd::Finite(15.0));
        assert_eq!(over.status, BarStatus::TimeLimit);
        let range = SeedRange {
            seeds: 3,
            least_low_pct: 5.0,
            greatest_high: UpperEnd::Finite(19.0),
            mixed_status: true,
        };
        assert_eq!(over.range, Some(range));
    }

    /// [4, 8] and [6, ∞): mean 5 to ∞, range 4 to ∞; one status, so not mixed.
    #[test]
    fn an_unbounded_seed_makes_the_mean_and_the_range_unbounded() {
        let unbounded = UpperEnd::Unbounded(Unbounded::NoBound);
        let seeds = [
            gap(BarStatus::TimeLimit, 4.0, UpperEnd::Finite(8.0)),
            gap(BarStatus::TimeLimit, 6.0, unbounded),
        ];
        let over = over_seeds(&seeds);
        assert_eq!((over.mean_low_pct, over.mean_high), (5.0, unbounded));
        let range = over.range.unwrap();
        assert_eq!((range.least_low_pct, range.greatest_high), (4.0, unbounded));
        assert!(!range.mixed_status);
    }

    /// One seed: the bar is its interval, with no range.
    #[test]
    fn one_seed_is_its_own_interval() {
        let one = [gap(BarStatus::LpBound, 3.25, UpperEnd::Finite(7.5))];
        let over = over_seeds(&one);
        assert_eq!(
            (over.mean_low_pct, over.mean_high),
            (3.25, UpperEnd::Finite(7.5))
        );
        assert_eq!((over.status, over.range), (BarStatus::LpBound, None));
    }
}
