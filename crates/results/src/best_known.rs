//! The best interval known for a heuristic's gap when several solves bound one optimum.
//!
//! A snapshot's optimum depends on the instance — the cluster, the FGD target workload and
//! the tasks the solver decides about — not on the policy that placed them. Before any task
//! fails, every policy of a study holds the same tasks at a checkpoint, so its solves (each
//! warm-started from another heuristic) are solves of one instance: any of their placements
//! is feasible for all, and any of their bounds is valid for all. For a minimisation
//! (power, fragmentation) the optimum lies in `[max_k bound_k, min_k incumbent_k]`, and a
//! heuristic value `H` has the gap interval
//! `[(H − min incumbent) / min incumbent, (H − max bound) / max bound]` (× 100; `+∞` when
//! the best bound is 0 and `H > 0`). Rows are matched by [`GapRow::instance`] and objective;
//! allocation rows (a maximisation in points of capacity) and rows without a fingerprint
//! are kept as they are.

use std::collections::BTreeMap;

use crate::{GapRow, Objective, SolveStatus};

/// A row with the best interval known for its instance.
#[derive(Debug, Clone, PartialEq)]
pub struct BestKnown {
    /// The row with incumbent, bound, status and gaps replaced by the best known.
    pub row: GapRow,
    /// How many solves of the same instance the interval pools (1: the row's own). Rows of
    /// one solve count once: a gap study solves an instance once for every policy that
    /// poses it, and those rows share its bound, status and seconds (their incumbents may
    /// differ: each is the better of the solve's and the policy's own placement).
    pub solves: usize,
}

/// [`BestKnown`] for each of `rows`, in their order.
///
/// The pooled status is the one of the solve that proved the best bound (what is proven of
/// the optimum's lower end), or `optimal` when the best placement meets the best bound.
pub fn best_known<'a>(rows: impl IntoIterator<Item = &'a GapRow>) -> Vec<BestKnown> {
    let rows: Vec<&GapRow> = rows.into_iter().collect();
    let mut groups: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    for (i, row) in rows.iter().enumerate() {
        if poolable(row) {
            groups
                .entry((row.objective.name(), row.instance.as_str()))
                .or_default()
                .push(i);
        }
    }
    let mut out: Vec<BestKnown> = rows
        .iter()
        .map(|row| BestKnown {
            row: (*row).clone(),
            solves: 1,
        })
        .collect();
    for members in groups.values().filter(|m| m.len() > 1) {
        let mut distinct: Vec<(Option<u64>, u64, String)> = members
            .iter()
            .map(|&i| {
                let row = rows[i];
                let bound = row.bound.map(f64::to_bits);
                (bound, row.solve_s.to_bits(), row.status.label())
            })
            .collect();
        distinct.sort();
        distinct.dedup();
        let solves = distinct.len();
        let incumbent = members
            .iter()
            .filter_map(|&i| rows[i].incumbent)
            .fold(f64::INFINITY, f64::min);
        let best_bound = members
            .iter()
            .filter_map(|&i| rows[i].bound.map(|b| (b, i)))
            .fold(None, |best: Option<(f64, usize)>, (b, i)| match best {
                Some((top, _)) if top >= b => best,
                _ => Some((b, i)),
            });
        for &i in members {
            let known = &mut out[i].row;
            known.incumbent = incumbent.is_finite().then_some(incumbent);
            known.bound = best_bound.map(|(b, _)| b);
            known.status = match best_bound {
                Some((b, _)) if meets(incumbent, b) => SolveStatus::Optimal,
                Some((_, from)) => rows[from].status.clone(),
                None => known.status.clone(),
            };
            let h = known.heuristic_value;
            known.gap_low_pct = known.incumbent.map(|inc| relative_gap_pct(h, inc));
            known.gap_high_pct = known.bound.map(|b| relative_gap_pct(h, b));
            out[i].solves = solves;
        }
    }
    out
}

/// Rows whose optimum others may share: minimisations with a fingerprint and a proven
/// value on at least one side.
fn poolable(row: &GapRow) -> bool {
    matches!(row.objective, Objective::Power | Objective::Frag)
        && !row.instance.is_empty()
        && (row.incumbent.is_some() || row.bound.is_some())
}

/// Whether a minimisation's placement of value `incumbent` meets the proven lower `bound`
/// (to a relative 1e-9): then it is optimal.
pub fn meets(incumbent: f64, bound: f64) -> bool {
    incumbent <= bound + 1e-9 * bound.abs().max(1.0)
}

/// The gap of a minimisation in percent, `100 · (heuristic − reference) / reference`; `+∞`
/// against 0 unless the heuristic is 0 too. The one rule of every power and fragmentation gap.
pub fn relative_gap_pct(heuristic: f64, reference: f64) -> f64 {
    if reference == 0.0 {
        if heuristic == 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        100.0 * (heuristic - reference) / reference
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(policy: &str, h: f64, incumbent: f64, bound: f64, instance: &str) -> GapRow {
        GapRow {
            checkpoint_pct: 50.0,
            objective: Objective::Power,
            policy: policy.into(),
            seed: 42,
            nodes: 1213,
            tasks: 4000,
            heuristic_value: h,
            incumbent: Some(incumbent),
            bound: Some(bound),
            status: SolveStatus::TimeLimitWithIncumbent,
            gap_low_pct: Some(relative_gap_pct(h, incumbent)),
            gap_high_pct: Some(relative_gap_pct(h, bound)),
            solve_s: 10.0,
            instance: instance.into(),
        }
    }

    #[test]
    fn solves_of_one_instance_share_the_best_placement_and_the_best_bound() {
        let fgd = row("fgd", 1200.0, 1050.0, 990.0, "a");
        let mut pwr = row("pwr", 1010.0, 1020.0, 1000.0, "a");
        pwr.incumbent = Some(1010.0);
        pwr.status = SolveStatus::LpBound;
        let other = row("bestfit", 1100.0, 1080.0, 995.0, "b");
        let known = best_known([&fgd, &pwr, &other]);
        assert_eq!(known[0].solves, 2);
        assert_eq!(known[0].row.incumbent, Some(1010.0));
        assert_eq!(known[0].row.bound, Some(1000.0));
        // The status is that of the solve whose bound is kept.
        assert_eq!(known[0].row.status, SolveStatus::LpBound);
        let low = known[0].row.gap_low_pct.unwrap();
        let high = known[0].row.gap_high_pct.unwrap();
        assert!((low - 100.0 * 190.0 / 1010.0).abs() < 1e-9);
        assert!((high - 20.0).abs() < 1e-9);
        // Pooling only narrows: the interval lies inside the row's own.
        assert!(low >= fgd.gap_low_pct.unwrap() && high <= fgd.gap_high_pct.unwrap());
        assert_eq!(known[2].solves, 1);
        assert_eq!(known[2].row, other);
    }

    #[test]
    fn rows_of_one_solve_count_once_with_the_best_own_placement() {
        // One solve for both policies; PWR's own placement beats the solve's incumbent.
        let fgd = row("fgd", 1200.0, 1050.0, 990.0, "a");
        let mut pwr = row("pwr", 1030.0, 1030.0, 990.0, "a");
        pwr.incumbent = Some(1030.0);
        let known = best_known([&fgd, &pwr]);
        assert!(known.iter().all(|k| k.solves == 1));
        assert_eq!(known[0].row.incumbent, Some(1030.0));
        assert_eq!(known[0].row.bound, Some(990.0));
        // A second solve of the instance (another chain, another bound) counts.
        let mut again = row("bestfit", 1100.0, 1040.0, 995.0, "a");
        again.solve_s = 9.5;
        assert!(best_known([&fgd, &pwr, &again])
            .iter()
            .all(|k| k.solves == 2));
    }

    #[test]
    fn a_placement_that_meets_another_solves_bound_is_optimal() {
        let a = row("fgd", 1200.0, 1000.0, 990.0, "a");
        let b = row("pwr", 1100.0, 1005.0, 1000.0, "a");
        let known = best_known([&a, &b]);
        assert_eq!(known[0].row.status, SolveStatus::Optimal);
        assert_eq!(known[0].row.gap_low_pct, known[0].row.gap_high_pct);
    }

    #[test]
    fn rows_without_fingerprint_or_of_allocation_are_never_pooled() {
        let a = row("fgd", 1200.0, 1050.0, 990.0, "");
        let b = row("pwr", 1100.0, 1000.0, 1000.0, "");
        let mut c = row("fgd", 5000.0, 5100.0, 5200.0, "x");
        c.objective = Objective::Alloc;
        let mut d = c.clone();
        d.incumbent = Some(5150.0);
        let known = best_known([&a, &b, &c, &d]);
        assert!(known.iter().all(|k| k.solves == 1));
        assert_eq!(known[0].row, a);
        assert_eq!(known[3].row, d);
    }
}
