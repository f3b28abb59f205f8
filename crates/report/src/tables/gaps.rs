//! The whole-cluster gap table: REPORT.md's lead table, one per trace and size, each cell
//! the best known gap interval of its instance with its status as a mark.

use gapbench_results::{best_known, BestKnown, GapRow, Objective, SolveStatus, GAPS_CSV};

use super::latex::{escape, interval, number, Align, LatexTable, Marks};
use crate::cluster_size::ClusterSizes;
use crate::figures::gap_data::{upper_end, UpperEnd};
use crate::policy_names::PolicyNames;

/// `(file stem, table)` per whole-cluster size: `gaps_<trace>_<nodes>n`.
pub(crate) fn whole_cluster_tables(
    rows: &[(&str, &GapRow)],
    sizes: &ClusterSizes,
    names: &PolicyNames,
) -> Vec<(String, LatexTable)> {
    let known = best_known(rows.iter().map(|(_, row)| *row));
    crate::gaps::whole_clusters(rows, sizes)
        .into_iter()
        .map(|(trace, nodes)| {
            let stem = format!("gaps_{}_{nodes}n", crate::figures::names::file_safe(trace));
            (stem, size_table(rows, &known, (trace, nodes), sizes, names))
        })
        .collect()
}

fn size_table(
    rows: &[(&str, &GapRow)],
    known: &[BestKnown],
    (trace, nodes): (&str, usize),
    sizes: &ClusterSizes,
    names: &PolicyNames,
) -> LatexTable {
    let mut table = LatexTable::new(
        &format!("Exact gaps on trace {trace}, {}: the true gap lies in low-high (low against the solver's best placement, high against its proven bound); from {GAPS_CSV}.", sizes.describe(trace, nodes)),
        &[
            ("policy", Align::Text),
            ("seed", Align::Number),
            ("checkpoint %", Align::Number),
            ("power gap %", Align::Number),
            ("alloc. gap pp", Align::Number),
            ("frag. gap %", Align::Number),
        ],
    );
    let here: Vec<&BestKnown> = rows
        .iter()
        .zip(known)
        .filter(|((t, r), _)| *t == trace && r.nodes == nodes)
        .map(|(_, k)| k)
        .collect();
    let mut keys: Vec<(&str, u64, f64)> = Vec::new();
    for k in &here {
        let key = (k.row.policy.as_str(), k.row.seed, k.row.checkpoint_pct);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    for (policy, seed, checkpoint) in keys {
        let mut cells = vec![
            escape(&names.display(policy)),
            seed.to_string(),
            number(Some(checkpoint), 0),
        ];
        for objective in [Objective::Power, Objective::Alloc, Objective::Frag] {
            let cell = here.iter().find(|k| {
                let r = &k.row;
                r.policy == policy
                    && r.seed == seed
                    && r.checkpoint_pct == checkpoint
                    && r.objective == objective
            });
            cells.push(cell.map_or("--".to_string(), |k| gap_cell(k, &mut table.marks)));
        }
        table.rows.push(cells);
    }
    table.note = "Unmarked: proven optimal. Power and fragmentation gaps in \\% of the optimum, the allocation gap in percentage points of GPU capacity.".into();
    table
}

/// `low--high` with the status's mark; the one value when proven optimal.
fn gap_cell(known: &BestKnown, marks: &mut Marks) -> String {
    let row = &known.row;
    let label = row.status.label();
    let mark = match &row.status {
        SolveStatus::Optimal => String::new(),
        status => marks.mark(&label, &format!("{label}: {}", status_note(status))),
    };
    let pooled = if known.solves > 1 {
        marks.mark(
            "pooled",
            "best known of several solves of the same instance",
        )
    } else {
        String::new()
    };
    let value = match (&row.status, row.gap_low_pct, upper_end(row)) {
        (SolveStatus::Optimal, Some(low), _) => number(Some(low), 2),
        (_, None, _) if row.gap_high_pct.is_none() => "--".to_string(),
        (_, low, Some(UpperEnd::Unbounded(_))) => format!("{}--$\\infty$", number(low, 2)),
        (_, low, _) => interval(low, row.gap_high_pct, 2),
    };
    format!("{value}{mark}{pooled}")
}

/// What a status proves, for the table's notes.
fn status_note(status: &SolveStatus) -> &'static str {
    match status {
        SolveStatus::Optimal => "proven optimal",
        SolveStatus::GapLimit => "the requested MIP gap was reached",
        SolveStatus::TimeLimitWithIncumbent => "the clock stopped the solve",
        SolveStatus::LpBound => {
            "column generation converged; the bound is the configuration LP's optimum"
        }
        SolveStatus::RelaxationBound => "an aggregated relaxation bounds the policy's placement",
        SolveStatus::Infeasible => "no placement satisfies the constraints",
        SolveStatus::Unsupported(_) => "not attempted at this size",
        SolveStatus::Error(_) => "the solve failed",
    }
}
