//! The spread of the whole-cluster gaps over seeds: where a study solved several seeds (the
//! arrival orders of one trace), a row per policy and checkpoint gives, per objective, the
//! mean of the gap intervals' ends and their range over the seeds, so a reader can tell a
//! typical gap from an accident of one arrival order.

use std::fmt::Write as _;

use anyhow::Result;
use gapbench_results::{BestKnown, Objective};

/// The mean interval and the range over the seeds of one policy, checkpoint and objective.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spread {
    pub seeds: usize,
    /// Mean over the seeds of the interval's low end, and of its high end (∞ when any seed's
    /// is unbounded or missing).
    pub mean_low: f64,
    pub mean_high: f64,
    /// The least low end and the greatest high end over the seeds.
    pub least_low: f64,
    pub greatest_high: f64,
    /// Seeds whose interval is proven optimal (a single value).
    pub optimal: usize,
}

impl Spread {
    /// The spread of `cells` (one per seed); `None` without any low end.
    pub(crate) fn of(cells: &[&BestKnown]) -> Option<Spread> {
        let lows: Vec<f64> = cells.iter().filter_map(|k| k.row.gap_low_pct).collect();
        if lows.len() != cells.len() || lows.is_empty() {
            return None;
        }
        let highs: Vec<f64> = cells
            .iter()
            .map(|k| k.row.gap_high_pct.unwrap_or(f64::INFINITY))
            .collect();
        let count = cells.len() as f64;
        Some(Spread {
            seeds: cells.len(),
            mean_low: lows.iter().sum::<f64>() / count,
            mean_high: highs.iter().sum::<f64>() / count,
            least_low: lows.iter().copied().fold(f64::INFINITY, f64::min),
            greatest_high: highs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            optimal: cells
                .iter()
                .filter(|k| k.row.status == gapbench_results::SolveStatus::Optimal)
                .count(),
        })
    }

    /// `mean low – high [range least – greatest]`, `∞` for an unbounded end.
    fn cell(&self) -> String {
        let end = |v: f64| {
            if v.is_finite() {
                format!("{v:.2}")
            } else {
                "∞".to_string()
            }
        };
        format!(
            "{} – {} [{} – {}]",
            end(self.mean_low),
            end(self.mean_high),
            end(self.least_low),
            end(self.greatest_high)
        )
    }
}

/// The spread table of one trace and cluster size, from its best-known cells (`here`);
/// nothing when every policy and checkpoint has one seed.
pub(crate) fn table(out: &mut String, here: &[&BestKnown]) -> Result<()> {
    let mut keys: Vec<(&str, f64)> = Vec::new();
    for known in here {
        let key = (known.row.policy.as_str(), known.row.checkpoint_pct);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    let cells_of = |policy: &str, checkpoint: f64, objective: Objective| -> Vec<&BestKnown> {
        here.iter()
            .copied()
            .filter(|k| {
                k.row.policy == policy
                    && k.row.checkpoint_pct == checkpoint
                    && k.row.objective == objective
            })
            .collect()
    };
    let several = keys.iter().any(|&(policy, checkpoint)| {
        Objective::ALL
            .iter()
            .any(|&o| cells_of(policy, checkpoint, o).len() > 1)
    });
    if !several {
        return Ok(());
    }
    writeln!(out, "Over the seeds solved (the arrival orders of the trace): per objective the mean of the intervals' low and high ends, then in brackets the least low end and the greatest high end of any seed; the seed count and how many were proven optimal follow the policy.\n")?;
    writeln!(
        out,
        "| policy | checkpoint | seeds (optimal per objective) | power gap % | allocation gap pp | fragmentation gap % |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|")?;
    for (policy, checkpoint) in keys {
        let spreads: Vec<Option<Spread>> = Objective::ALL
            .iter()
            .map(|&o| Spread::of(&cells_of(policy, checkpoint, o)))
            .collect();
        let seeds = spreads.iter().flatten().map(|s| s.seeds).max().unwrap_or(0);
        let optimal: Vec<String> = spreads
            .iter()
            .map(|s| s.as_ref().map_or("–".into(), |s| s.optimal.to_string()))
            .collect();
        let cells: Vec<String> = spreads
            .iter()
            .map(|s| s.as_ref().map_or("–".into(), Spread::cell))
            .collect();
        writeln!(
            out,
            "| {policy} | {checkpoint:.0} % | {seeds} ({}) | {} |",
            optimal.join("/"),
            cells.join(" | ")
        )?;
    }
    writeln!(out)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gapbench_results::{best_known, GapRow, SolveStatus};

    fn row(seed: u64, low: f64, high: Option<f64>, status: SolveStatus) -> GapRow {
        GapRow {
            checkpoint_pct: 50.0,
            objective: Objective::Power,
            policy: "fgd".into(),
            seed,
            nodes: 1213,
            tasks: 100 + seed as usize,
            heuristic_value: 100.0,
            incumbent: Some(90.0),
            bound: Some(80.0),
            status,
            gap_low_pct: Some(low),
            gap_high_pct: high,
            solve_s: 1.0,
            // One instance per seed: best_known pools rows of one instance only.
            instance: format!("instance-{seed}"),
        }
    }

    #[test]
    fn means_and_ranges_over_seeds_match_a_hand_computed_case() {
        let rows = [
            row(42, 10.0, Some(12.0), SolveStatus::GapLimit),
            row(43, 20.0, Some(20.0), SolveStatus::Optimal),
            row(44, 6.0, Some(16.0), SolveStatus::TimeLimitWithIncumbent),
        ];
        let known = best_known(rows.iter());
        let cells: Vec<&BestKnown> = known.iter().collect();
        let spread = Spread::of(&cells).unwrap();
        assert_eq!(spread.seeds, 3);
        assert_eq!(spread.mean_low, 12.0);
        assert_eq!(spread.mean_high, 16.0);
        assert_eq!((spread.least_low, spread.greatest_high), (6.0, 20.0));
        assert_eq!(spread.optimal, 1);
        assert_eq!(spread.cell(), "12.00 – 16.00 [6.00 – 20.00]");

        let mut table_text = String::new();
        table(&mut table_text, &cells).unwrap();
        assert!(table_text
            .contains("| fgd | 50 % | 3 (1/–/–) | 12.00 – 16.00 [6.00 – 20.00] | – | – |"));
        // One seed: no spread table.
        let mut one = String::new();
        table(&mut one, &cells[..1]).unwrap();
        assert!(one.is_empty());
    }

    #[test]
    fn an_unbounded_seed_makes_the_mean_high_end_unbounded() {
        let rows = [
            row(42, 10.0, Some(12.0), SolveStatus::GapLimit),
            row(43, 4.0, None, SolveStatus::TimeLimitWithIncumbent),
        ];
        let known = best_known(rows.iter());
        let cells: Vec<&BestKnown> = known.iter().collect();
        let spread = Spread::of(&cells).unwrap();
        assert_eq!(spread.cell(), "7.00 – ∞ [4.00 – ∞]");
    }
}
