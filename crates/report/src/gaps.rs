//! The exact-gaps section of `REPORT.md`: per cluster size a summary (policy × checkpoint,
//! one column per objective), then every row of `gaps.csv` with incumbent and bound.

use std::fmt::Write as _;

use anyhow::Result;
use gapbench_results::{GapRow, Objective, SolveStatus};

/// The gaps section: a summary per cluster size, then every row.
pub(crate) fn section(out: &mut String, rows: &[(&str, &GapRow)]) -> Result<()> {
    writeln!(out, "## Exact gaps\n")?;
    writeln!(out, "For the very tasks each heuristic faced at a checkpoint, the best any placement could do (HiGHS). Power and fragmentation gaps are `(heuristic − optimum) / optimum` in %; the allocation gap is `optimum − heuristic` in percentage points of GPU capacity. The true gap lies in [low, high]: `low` against the solver's best placement, `high` against its proven bound; they are equal when the status is `optimal`. A `time_limit`, `gap_limit`, `lp_bound` or `relaxation_bound` row is an interval, never a fake optimum: `time_limit` — the clock stopped the solve; `gap_limit` — the requested `--mip-gap` was reached; `lp_bound` — column generation converged, so the bound is the configuration LP's proven optimum and only the integer gap is left; `relaxation_bound` — an aggregated relaxation bounds the heuristic's own placement.\n")?;
    summaries(out, rows)?;
    writeln!(out, "Every row:\n")?;
    writeln!(out, "| trace | checkpoint | objective | policy | nodes | tasks | heuristic | incumbent | bound | status | gap low | gap high | solve s |")?;
    writeln!(out, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")?;
    let number = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.2}"));
    for (trace, row) in rows {
        writeln!(
            out,
            "| {} | {:.0} % | {} | {} | {} | {} | {:.2} | {} | {} | {} | {} | {} | {:.2} |",
            trace,
            row.checkpoint_pct,
            row.objective.name(),
            row.policy,
            row.nodes,
            row.tasks,
            row.heuristic_value,
            number(row.incumbent),
            number(row.bound),
            row.status.label(),
            number(row.gap_low_pct),
            number(row.gap_high_pct),
            row.solve_s
        )?;
    }
    writeln!(out)?;
    Ok(())
}

/// One table per cluster size (largest first, so the whole cluster leads): each cell is
/// the gap interval and the solve's status, `–` where the objective was not solved.
fn summaries(out: &mut String, rows: &[(&str, &GapRow)]) -> Result<()> {
    let mut sizes: Vec<usize> = rows.iter().map(|(_, r)| r.nodes).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    sizes.dedup();
    let objectives = [Objective::Power, Objective::Alloc, Objective::Frag];
    for nodes in sizes {
        writeln!(out, "### {nodes} nodes\n")?;
        writeln!(
            out,
            "| trace | policy | checkpoint | power gap % | allocation gap pp | fragmentation gap % |"
        )?;
        writeln!(out, "|---|---|---|---|---|---|")?;
        let mut keys: Vec<(&str, &str, u64, f64)> = Vec::new();
        for (trace, row) in rows.iter().filter(|(_, r)| r.nodes == nodes) {
            let key = (*trace, row.policy.as_str(), row.seed, row.checkpoint_pct);
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        for (trace, policy, seed, checkpoint) in keys {
            let cells: Vec<String> = objectives
                .iter()
                .map(|&objective| {
                    rows.iter()
                        .find(|(t, r)| {
                            *t == trace
                                && r.nodes == nodes
                                && r.policy == policy
                                && r.seed == seed
                                && r.checkpoint_pct == checkpoint
                                && r.objective == objective
                        })
                        .map_or("–".to_string(), |(_, r)| interval(r))
                })
                .collect();
            writeln!(
                out,
                "| {trace} | {policy} (seed {seed}) | {checkpoint:.0} % | {} |",
                cells.join(" | ")
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// `low – high (status)`, the one value when proven optimal, the status alone without a
/// gap (an error, an infeasible solve).
fn interval(row: &GapRow) -> String {
    let number = |v: Option<f64>| v.map_or("?".to_string(), |v| format!("{v:.2}"));
    match (&row.status, row.gap_low_pct, row.gap_high_pct) {
        (SolveStatus::Optimal, Some(low), _) => format!("{low:.2} (optimal)"),
        (status, None, None) => status.label(),
        (status, low, high) => format!("{} – {} ({})", number(low), number(high), status.label()),
    }
}
