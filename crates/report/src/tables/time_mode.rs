//! The time-mode tables: energy per policy with the proven energy bound and the gap to it
//! (REPORT.md's time-mode table, the columns a paper shows), and the budget tables: mean
//! JCT under an energy or carbon budget against the frontier's bound.

use gapbench_results::{
    BudgetPointRow, ReplayBoundStatus, BUDGET_POINTS_CSV, EACO_BOUNDS_CSV, REPLAY_RUNS_CSV,
};

use super::latex::{escape, number, Align, LatexTable};
use crate::budgets::{mean, point_means};
use crate::eaco::EacoBounds;
use crate::figures::budget::{unit, BudgetTables};
use crate::figures::names::file_safe;
use crate::figures::replay_data::{Panel, PolicyMeans};
use crate::policy_names::PolicyNames;

/// `(file stem, table)` per replay panel: `energy_<source>_<idle>[_x<scale>]`.
pub(crate) fn energy_tables(
    panels: &[(Panel, Vec<PolicyMeans>)],
    eaco: &EacoBounds,
    names: &PolicyNames,
) -> Vec<(String, LatexTable)> {
    panels
        .iter()
        .map(|(panel, policies)| {
            let mut stem = format!(
                "energy_{}_{}",
                file_safe(&panel.source),
                file_safe(&panel.idle)
            );
            if (panel.arrival_scale - 1.0).abs() > 1e-12 {
                stem.push_str(&format!(
                    "_x{}",
                    file_safe(&panel.arrival_scale.to_string())
                ));
            }
            (stem, energy_table(panel, policies, eaco, names))
        })
        .collect()
}

fn energy_table(
    panel: &Panel,
    policies: &[PolicyMeans],
    eaco: &EacoBounds,
    names: &PolicyNames,
) -> LatexTable {
    let mut table = LatexTable::new(
        &format!("Time mode, {} ({} nodes): cluster energy, its proven lower bound and the gap (E - bound)/bound, job energy and job completion times, means over seeds; from {REPLAY_RUNS_CSV} (and {EACO_BOUNDS_CSV} for EaCO's setup).", panel.title(), panel.nodes),
        &[
            ("policy", Align::Text),
            ("energy kWh", Align::Number),
            ("bound kWh", Align::Number),
            ("gap %", Align::Number),
            ("job energy kWh", Align::Number),
            ("mean JCT h", Align::Number),
            ("p95 JCT h", Align::Number),
            ("makespan h", Align::Number),
            ("seeds", Align::Number),
        ],
    );
    let mut deadline_bound = false;
    for p in policies {
        let m = &p.mean;
        let (bound, gap_pct, mark) = match (m.bound_kwh, eaco.bound_for(panel, &p.policy)) {
            (Some(bound), _) => (
                Some(bound),
                m.bound_gap.map(|g| 100.0 * g),
                replay_mark(&mut table, m),
            ),
            (None, Some((bound, own))) => {
                deadline_bound = true;
                let mark = if own {
                    table.marks.mark("makespan", "the policy missed deadlines: its bound lets every job end by the policy's own makespan")
                } else {
                    String::new()
                };
                (
                    Some(bound),
                    Some(100.0 * (m.energy_kwh - bound) / bound),
                    mark,
                )
            }
            (None, None) => (None, None, String::new()),
        };
        table.rows.push(vec![
            escape(&names.display(&p.policy)),
            number(Some(m.energy_kwh), 1),
            format!("{}{mark}", number(bound, 1)),
            number(gap_pct, 2),
            number(Some(m.job_energy_kwh), 1),
            number(Some(m.mean_jct_s / 3600.0), 3),
            number(Some(m.p95_jct_s / 3600.0), 3),
            number(Some(m.makespan_s / 3600.0), 1),
            p.seeds.to_string(),
        ]);
    }
    table.note = if deadline_bound {
        "Bound: no co-allocation of the same jobs on the same servers that ends every job by its deadline uses less energy; -- where no bound was computed."
    } else {
        "Bound: no placement of the same tasks at the replay's own start and end times uses less energy; -- where no bound was computed."
    }
    .into();
    table
}

/// The mark of a replay bound that a work or time limit stopped (still a bound).
fn replay_mark(table: &mut LatexTable, m: &gapbench_results::ReplayRunRow) -> String {
    let status = ReplayBoundStatus::parse(&m.bound_status).unwrap_or(ReplayBoundStatus::TimeLimit);
    match status.mark() {
        None => String::new(),
        Some((_, meaning)) => table.marks.mark(status.label(), meaning),
    }
}

/// `(file stem, table)` per budget study: `budget_<setup>_<kind>`.
pub(crate) fn budget_tables(
    tables: &BudgetTables,
    names: &PolicyNames,
) -> Vec<(String, LatexTable)> {
    tables
        .studies()
        .into_iter()
        .map(|(setup, kind)| {
            let rows: Vec<&BudgetPointRow> = tables
                .points
                .iter()
                .filter(|p| p.setup == setup && p.kind == kind)
                .collect();
            let stem = format!("budget_{}_{}", file_safe(&setup), file_safe(&kind));
            (stem, budget_table(&setup, &kind, &rows, names))
        })
        .collect()
}

fn budget_table(
    setup: &str,
    kind: &str,
    rows: &[&BudgetPointRow],
    names: &PolicyNames,
) -> LatexTable {
    let jobs = rows.first().map_or(0, |p| p.jobs);
    let spent_head = format!("{kind} spent ({})", unit(kind));
    let mut table = LatexTable::new(
        &format!("Budget study {setup}, {kind} budget ({jobs} jobs): spend, mean JCT, FIFO's mean JCT over the policy's, and the proven lower bound on mean JCT at the point's own spend with the gap (JCT - bound)/bound, means over seeds; from {BUDGET_POINTS_CSV}."),
        &[
            ("policy", Align::Text),
            ("budget", Align::Number),
            (spent_head.as_str(), Align::Number),
            ("cluster kWh", Align::Number),
            ("mean JCT h", Align::Number),
            ("FIFO ÷ this", Align::Number),
            ("bound h", Align::Number),
            ("gap %", Align::Number),
        ],
    );
    for (first, m) in point_means(rows) {
        let statuses: Vec<&String> = m.status.iter().filter(|s| *s != "converged").collect();
        let mark = match statuses.first() {
            Some(status) if !m.bound_h.is_empty() => status_mark(&mut table, status),
            _ => String::new(),
        };
        let failed = if m.failed > 0 {
            table
                .marks
                .mark("failed", "some seeds failed; means over the others")
        } else {
            String::new()
        };
        table.rows.push(vec![
            format!("{}{failed}", escape(&names.display(&first.policy))),
            first
                .fraction
                .map_or("--".to_string(), |f| number(Some(f), 2)),
            number(mean(&m.spent), 3),
            number(mean(&m.cluster_kwh), 1),
            number(mean(&m.jct_h), 2),
            number(mean(&m.speedup), 2),
            format!("{}{mark}", number(mean(&m.bound_h), 2)),
            number(mean(&m.gap), 1),
        ]);
    }
    table.note = "Budget: a share of full-clock FIFO's own spend. Unmarked bounds: column generation converged.".into();
    table
}

/// The mark of a bound status other than `converged` (`open (LP ≤ x h)`, `lagrangian`).
fn status_mark(table: &mut LatexTable, status: &str) -> String {
    let key = status.split_whitespace().next().unwrap_or(status);
    let note = match key {
        "lagrangian" => "lagrangian: Lagrangian lines only, no LP value to hold them against",
        "open" => "open: column generation stopped before converging; the bound holds",
        _ => "bound status as budget_points.csv gives it",
    };
    table.marks.mark(key, note)
}
