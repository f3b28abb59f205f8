//! The exact gaps in `REPORT.md`: the whole-cluster table that leads the report
//! ([`headline`]), then the section with the sampled sub-clusters' tables (policy ×
//! checkpoint, one column per objective) and every row of `gaps.csv` with incumbent and
//! bound. Sizes are never mixed in one table.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use gapbench_results::table::read_rows;
use gapbench_results::{best_known, BestKnown, GapRow, Objective, SolveStatus, GAPS_CSV};

use crate::cluster_size::ClusterSizes;
use crate::draw::natural_cmp;
use crate::figures::gap_data::{upper_end, UpperEnd};

/// How the tables pool solves of one instance, for the reader of either table.
const POOLED: &str = "Before any task fails, every policy holds the same tasks at a checkpoint: they pose one instance (`gaps.csv`'s `instance` column), which a study solves once for all of them, and each row's incumbent is the better of that solve's placement and the policy's own. A table cell uses the best placement and the best bound known for its instance; where several solves bound it (policies that reached it through different earlier solves), it is marked `best of N` and its status is that of the solve whose bound it keeps. Below the tables, every row as `gaps.csv` has it.";

/// What the statuses prove, for the reader of either table.
const STATUSES: &str = "A `time_limit`, `gap_limit`, `lp_bound` or `relaxation_bound` row is an interval, never a fake optimum: `time_limit` — the clock stopped the solve; `gap_limit` — the requested `--mip-gap` was reached; `lp_bound` — column generation converged, so the bound is at least the configuration LP's proven optimum, and branching in the time left did not close the integer gap; `relaxation_bound` — an aggregated relaxation bounds the heuristic's own placement. `∞ (bound 0)`: the proven bound is 0, so a gap relative to the optimum has no finite upper end; `∞ (no bound)`: the solve proved no bound.";

/// The rows of a results folder's `gaps.csv`, each with its trace (none without the file):
/// what REPORT.md's gap sections and the LaTeX gap tables both read.
pub(crate) fn read_traced(dir: &Path) -> Result<Vec<(String, GapRow)>> {
    let gaps = read_rows::<GapRow>(&dir.join(GAPS_CSV), &["trace"])?;
    Ok(gaps
        .iter()
        .flat_map(|gaps| {
            gaps.rows
                .iter()
                .map(|row| (gaps.text(row, "trace").to_string(), row.value.clone()))
        })
        .collect())
}

/// The sizes of `rows` that are whole clusters, as `(trace, nodes)`, largest first within
/// a trace.
pub(crate) fn whole_clusters<'a>(
    rows: &[(&'a str, &GapRow)],
    sizes: &ClusterSizes,
) -> Vec<(&'a str, usize)> {
    let mut out: Vec<(&str, usize)> = rows
        .iter()
        .filter(|(trace, row)| !sizes.is_sample(trace, row.nodes))
        .map(|(trace, row)| (*trace, row.nodes))
        .collect();
    out.sort_by(|a, b| natural_cmp(a.0, b.0).then(b.1.cmp(&a.1)));
    out.dedup();
    out
}

/// The table that leads `REPORT.md`: the gaps on the whole cluster, one table per trace.
/// Nothing when every gap was solved on a sampled sub-cluster.
pub(crate) fn headline(
    out: &mut String,
    rows: &[(&str, &GapRow)],
    sizes: &ClusterSizes,
) -> Result<()> {
    let whole = whole_clusters(rows, sizes);
    if whole.is_empty() {
        return Ok(());
    }
    writeln!(out, "## Exact gaps on the whole cluster\n")?;
    writeln!(out, "How far each online policy is from the best placement of the very tasks it had placed at a checkpoint, on the whole cluster (column generation; the allocation gap in percentage points of GPU capacity, the others in % of the optimum). The true gap lies in `low – high`: `low` against the solver's best placement, `high` against its proven bound. {POOLED} {STATUSES} The sampled sub-clusters and every row follow under *Exact gaps*.\n")?;
    let known = best_known(rows.iter().map(|(_, row)| *row));
    for (trace, nodes) in whole {
        summary(out, rows, &known, trace, nodes, sizes)?;
        crate::gap_spread::table(out, &cells_of(rows, &known, trace, nodes))?;
    }
    Ok(())
}

/// The best-known cells (`known`, parallel to `rows`) of one trace and cluster size.
fn cells_of<'k>(
    rows: &[(&str, &GapRow)],
    known: &'k [BestKnown],
    trace: &str,
    nodes: usize,
) -> Vec<&'k BestKnown> {
    rows.iter()
        .zip(known)
        .filter(|((t, r), _)| *t == trace && r.nodes == nodes)
        .map(|(_, k)| k)
        .collect()
}

/// The gaps section: the explanation, a summary per trace and sampled sub-cluster size
/// (the whole cluster's lead the report), then every row.
pub(crate) fn section(
    out: &mut String,
    rows: &[(&str, &GapRow)],
    sizes: &ClusterSizes,
) -> Result<()> {
    writeln!(out, "## Exact gaps\n")?;
    writeln!(out, "For the very tasks each heuristic faced at a checkpoint, the best any placement could do (HiGHS). Power and fragmentation gaps are `(heuristic − optimum) / optimum` in %; the allocation gap is `optimum − heuristic` in percentage points of GPU capacity. The true gap lies in [low, high]: `low` against the solver's best placement, `high` against its proven bound; they are equal when the status is `optimal`. {POOLED} {STATUSES}\n")?;
    let known = best_known(rows.iter().map(|(_, row)| *row));
    let mut samples: Vec<(&str, usize)> = rows
        .iter()
        .filter(|(trace, row)| sizes.is_sample(trace, row.nodes))
        .map(|(trace, row)| (*trace, row.nodes))
        .collect();
    samples.sort_by(|a, b| natural_cmp(a.0, b.0).then(b.1.cmp(&a.1)));
    samples.dedup();
    for (trace, nodes) in samples {
        summary(out, rows, &known, trace, nodes, sizes)?;
    }
    writeln!(out, "Every row:\n")?;
    writeln!(out, "| trace | checkpoint | objective | policy | nodes | tasks | heuristic | incumbent | bound | status | gap low | gap high | solve s |")?;
    writeln!(out, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")?;
    let number = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.2}"));
    for (trace, row) in rows {
        let high = match row.gap_high_pct {
            Some(f64::INFINITY) => "∞".to_string(),
            high => number(high),
        };
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
            high,
            row.solve_s
        )?;
    }
    writeln!(out)?;
    Ok(())
}

/// The table of one trace and cluster size: a row per policy, seed and checkpoint, each
/// cell the best known gap interval of its instance (`known`, parallel to `rows`) and its
/// status, `–` where the objective was not solved.
fn summary(
    out: &mut String,
    rows: &[(&str, &GapRow)],
    known: &[BestKnown],
    trace: &str,
    nodes: usize,
    sizes: &ClusterSizes,
) -> Result<()> {
    let objectives = [Objective::Power, Objective::Alloc, Objective::Frag];
    writeln!(out, "### trace {trace}, {}\n", sizes.describe(trace, nodes))?;
    writeln!(
        out,
        "| policy | checkpoint | power gap % | allocation gap pp | fragmentation gap % |"
    )?;
    writeln!(out, "|---|---|---|---|---|")?;
    let here = cells_of(rows, known, trace, nodes);
    let mut keys: Vec<(&str, u64, f64)> = Vec::new();
    for known in &here {
        let row = &known.row;
        let key = (row.policy.as_str(), row.seed, row.checkpoint_pct);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    for (policy, seed, checkpoint) in keys {
        let cells: Vec<String> = objectives
            .iter()
            .map(|&objective| {
                here.iter()
                    .find(|k| {
                        let r = &k.row;
                        r.policy == policy
                            && r.seed == seed
                            && r.checkpoint_pct == checkpoint
                            && r.objective == objective
                    })
                    .map_or("–".to_string(), |k| interval(k))
            })
            .collect();
        writeln!(
            out,
            "| {policy} (seed {seed}) | {checkpoint:.0} % | {} |",
            cells.join(" | ")
        )?;
    }
    writeln!(out)?;
    Ok(())
}

/// `low – high (status)`, the one value when proven optimal, `low – ∞ (status; bound 0)`
/// without a finite upper end, the status alone without a gap (an error, an infeasible
/// solve); `best of N` when it pools `N` solves of the instance.
fn interval(known: &BestKnown) -> String {
    let row = &known.row;
    let number = |v: Option<f64>| v.map_or("?".to_string(), |v| format!("{v:.2}"));
    let status = match known.solves {
        1 => row.status.label(),
        n => format!("{}, best of {n}", row.status.label()),
    };
    match (&row.status, row.gap_low_pct, upper_end(row)) {
        (SolveStatus::Optimal, Some(low), _) => format!("{low:.2} ({status})"),
        (_, None, _) if row.gap_high_pct.is_none() => status,
        (_, low, Some(UpperEnd::Unbounded(reason))) => {
            format!("{} – ∞ ({status}; {})", number(low), reason.short())
        }
        (_, low, _) => format!("{} – {} ({status})", number(low), number(row.gap_high_pct)),
    }
}
