//! The non-dominated points of a set of placements in power and fragmentation.

/// Fragmentation differences below this (milli-GPU, the results' precision) are rounding:
/// the same node states summed in another order.
pub(super) const FRAG_TOLERANCE_MILLI: f64 = 1e-3;

/// Points `(watts, frag_milli, id)` no other point offered dominates, by power (so
/// fragmentation falls along it).
#[derive(Debug, Default, Clone)]
pub(super) struct Staircase {
    points: Vec<(i64, f64, usize)>,
}

impl Staircase {
    /// Keeps the point unless one kept is at most as high in both costs (fragmentation
    /// within [`FRAG_TOLERANCE_MILLI`]); drops the points it dominates so. Returns whether
    /// it was kept.
    pub fn offer(&mut self, watts: i64, frag_milli: f64, id: usize) -> bool {
        if self
            .points
            .iter()
            .any(|&(w, f, _)| w <= watts && f <= frag_milli + FRAG_TOLERANCE_MILLI)
        {
            return false;
        }
        self.points
            .retain(|&(w, f, _)| !(w >= watts && f >= frag_milli - FRAG_TOLERANCE_MILLI));
        let at = self.points.partition_point(|&(w, _, _)| w < watts);
        self.points.insert(at, (watts, frag_milli, id));
        true
    }

    pub fn points(&self) -> &[(i64, f64, usize)] {
        &self.points
    }

    /// At most `keep` (≥ 2) of the points, spread evenly along the staircase: both ends,
    /// and the first point at or past each `k/(keep − 1)` of its length (power and
    /// fragmentation each over its span, summed).
    pub fn thinned(&self, keep: usize) -> Vec<(i64, f64, usize)> {
        let points = &self.points;
        if points.len() <= keep.max(2) {
            return points.clone();
        }
        let (first, last) = (points[0], points[points.len() - 1]);
        let watts_span = ((last.0 - first.0) as f64).max(1.0);
        let frag_span = (first.1 - last.1).max(1e-9);
        let mut along = vec![0.0];
        for pair in points.windows(2) {
            let step =
                (pair[1].0 - pair[0].0) as f64 / watts_span + (pair[0].1 - pair[1].1) / frag_span;
            along.push(along.last().copied().unwrap_or(0.0) + step);
        }
        let total = along.last().copied().unwrap_or(0.0);
        let mut kept: Vec<usize> = Vec::new();
        for k in 0..keep {
            let target = total * k as f64 / (keep - 1) as f64;
            let i = along
                .partition_point(|&a| a < target - 1e-12)
                .min(points.len() - 1);
            if kept.last() != Some(&i) {
                kept.push(i);
            }
        }
        if kept.last() != Some(&(points.len() - 1)) {
            kept.push(points.len() - 1);
        }
        kept.into_iter().map(|i| points[i]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dominated_points_are_dropped_and_the_rest_sorted_by_power() {
        let mut s = Staircase::default();
        assert!(s.offer(100, 50.0, 0));
        assert!(s.offer(120, 40.0, 1));
        assert!(!s.offer(130, 45.0, 2), "dominated by (120, 40)");
        assert!(s.offer(90, 60.0, 3));
        assert!(s.offer(110, 30.0, 4), "dominates (120, 40)");
        assert!(
            !s.offer(115, 30.0 - 1e-9, 5),
            "the same fragmentation, rounded"
        );
        let ids: Vec<usize> = s.points().iter().map(|p| p.2).collect();
        assert_eq!(ids, vec![3, 0, 4]);
    }

    #[test]
    fn thinning_keeps_both_ends_and_at_most_keep_points() {
        let mut s = Staircase::default();
        for i in 0..100 {
            s.offer(i, 1000.0 - 10.0 * i as f64, i as usize);
        }
        let thin = s.thinned(7);
        assert!(thin.len() <= 7 && thin.len() >= 6, "{thin:?}");
        assert_eq!(thin[0].2, 0);
        assert_eq!(thin.last().unwrap().2, 99);
    }
}
