//! The budget section of `REPORT.md`: PowerFlow-style and GreenFlow-style against
//! full-clock FIFO at shares of FIFO's spend, with the exact frontier's bound where the
//! study computed one.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use gapbench_results::BudgetPointRow;

use crate::figures::budget::{spend, unit, BudgetTables};

/// Means over seeds of one policy point of one study.
#[derive(Default)]
pub(crate) struct Means {
    pub(crate) seeds: usize,
    pub(crate) failed: usize,
    pub(crate) first_error: String,
    pub(crate) spent: Vec<f64>,
    pub(crate) cluster_kwh: Vec<f64>,
    pub(crate) jct_h: Vec<f64>,
    pub(crate) speedup: Vec<f64>,
    pub(crate) bound_h: Vec<f64>,
    pub(crate) gap: Vec<f64>,
    /// The best integer schedule found within each seed's spend.
    pub(crate) schedule_h: Vec<f64>,
    /// Each seed's bound status, `converged` or `open (LP ≤ x h)`.
    pub(crate) status: Vec<String>,
}

pub(crate) fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

fn cell(value: Option<f64>, decimals: usize) -> String {
    value.map_or("—".to_string(), |v| format!("{v:.decimals$}"))
}

/// The mean schedule found, when every seed with a point has one (a mean over some seeds
/// would not compare with the other columns' means).
fn schedule_cell(m: &Means) -> String {
    if m.schedule_h.is_empty() || m.schedule_h.len() != m.jct_h.len() {
        return "—".to_string();
    }
    cell(mean(&m.schedule_h), 2)
}

/// The seeds' bound statuses: one word when they agree, else each with its count.
fn status_cell(statuses: &[String]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for status in statuses {
        match counts.iter_mut().find(|(s, _)| s == status) {
            Some((_, n)) => *n += 1,
            None => counts.push((status, 1)),
        }
    }
    match counts.as_slice() {
        [] => "—".to_string(),
        [(only, _)] => only.to_string(),
        many => many
            .iter()
            .map(|(s, n)| format!("{s} ×{n}"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

pub(crate) fn section(out: &mut String, dir: &Path) -> Result<()> {
    let Some(tables) = BudgetTables::read(dir)? else {
        return Ok(());
    };
    writeln!(out, "## Budgets: PowerFlow-style and GreenFlow-style\n")?;
    writeln!(out, "The GPU jobs of the trace as training jobs (time-and-budgets §3), replayed in the one time engine on the setup's real nodes (CPU, memory and GPU model respected, every placement checked): PowerFlow-style under an energy budget, GreenFlow-style (oracle forecast) under a carbon budget, against full-clock FIFO and a Zeus-like clock choice (non-preemptive, in the study's queue discipline, `queue` in the spec). A budget is a share of full-clock FIFO's own spend: at 1.00 the policy may spend what FIFO spent, \"at equal energy\" (or carbon). **FIFO ÷ this** is FIFO's mean JCT over the policy's: the PowerFlow paper reports 1.57–3.39× at equal energy, GreenFlow up to 2.15× at equal carbon. The gain comes from removing queueing (shortest-remaining-first admission, elastic GPU counts, re-planning every round), so it grows with contention: on the whole cluster nothing waits and the ratio stays near 1. **bound** is a proven lower bound on mean JCT of the same jobs at the point's own spend (Lagrangian lines — a sweep of budget prices, or a dual ascent aimed at each point's own spend — tightened by column generation over per-job schedules where the study asks: `gapbench_ilp::frontier`); gap = (JCT − bound) / bound. **schedule found** is the least mean JCT of a schedule of the same problem found within the point's spend, where the study sets `incumbent_nodes` (a list schedule in the order of the LP's mean completions, or the study's own replays, with a branch and bound on top when asked): the problem's optimum lies between bound and it, so of the gap at most (schedule − bound) is the bound's, and at least (JCT − schedule) the policy's — or the relaxation's, as that schedule pools GPU-seconds per slot rather than placing jobs on nodes. **bound status**: `converged` = column generation brought the bound within 0.5 % of its LP relaxation's optimum; `open` = it stopped first (time or rounds), the bound still valid; `lagrangian` = subgradient (Lagrangian) lines only, no LP value to hold them against; per seed when seeds differ. Means over seeds; spent counts job energy (or its carbon): the training jobs' GPUs (idle power plus their utilisation of the dynamic power at their clock) and host share; **cluster kWh** is every node of the setup, idle included, as in the time-mode table. Both are \"-style\" ports from the papers' abstracts: every constant is ours.\n")?;
    for (setup, kind) in tables.studies() {
        let rows: Vec<&BudgetPointRow> = tables
            .points
            .iter()
            .filter(|p| p.setup == setup && p.kind == kind)
            .collect();
        let jobs = rows.first().map_or(0, |p| p.jobs);
        writeln!(out, "### {setup}: {kind} budget ({jobs} jobs)\n")?;
        writeln!(out, "| policy | budget (share of FIFO's) | {kind} spent ({}) | cluster kWh | mean JCT (h) | FIFO ÷ this | bound (h) | gap | schedule found (h) | bound status |", unit(&kind))?;
        writeln!(out, "|---|---|---|---|---|---|---|---|---|---|")?;
        for (first, m) in &point_means(&rows) {
            write_point_line(out, first, m)?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// The rows of one study grouped by (policy, budget share), in the order the rows first name
/// each, with their means over seeds.
pub(crate) fn point_means<'a>(rows: &[&'a BudgetPointRow]) -> Vec<(&'a BudgetPointRow, Means)> {
    let mut by_point: Vec<(&BudgetPointRow, Means)> = Vec::new();
    for &p in rows {
        let index = match by_point
            .iter()
            .position(|(first, _)| first.policy == p.policy && first.fraction == p.fraction)
        {
            Some(index) => index,
            None => {
                by_point.push((p, Means::default()));
                by_point.len() - 1
            }
        };
        let m = &mut by_point[index].1;
        m.seeds += 1;
        if !p.error.is_empty() {
            m.failed += 1;
            if m.first_error.is_empty() {
                m.first_error = p.error.clone();
            }
            continue;
        }
        m.spent.extend(spend(p));
        m.cluster_kwh.extend(p.cluster_energy_kwh);
        m.jct_h.extend(p.mean_jct_s.map(|s| s / 3600.0));
        m.speedup.extend(p.jct_speedup_vs_fifo);
        m.bound_h.extend(p.bound_mean_jct_s.map(|s| s / 3600.0));
        m.gap.extend(p.gap.map(|g| 100.0 * g));
        m.schedule_h
            .extend(p.schedule_mean_jct_s.map(|s| s / 3600.0));
        if !p.bound_status.is_empty() {
            m.status.push(p.bound_status.clone());
        }
    }
    by_point
}

/// The table line of one (policy, budget share): its means, or the error of a point that
/// failed on every seed.
fn write_point_line(out: &mut String, first: &BudgetPointRow, m: &Means) -> Result<()> {
    let (policy, fraction) = (&first.policy, first.fraction);
    if m.failed == m.seeds {
        writeln!(
            out,
            "| {policy} | {} | — | — | — | — | — | {} | — | — |",
            cell(fraction, 2),
            m.first_error.replace('|', "/")
        )?;
        return Ok(());
    }
    let failed = if m.failed > 0 {
        format!(" ({} of {} seeds failed)", m.failed, m.seeds)
    } else {
        String::new()
    };
    writeln!(
        out,
        "| {policy}{failed} | {} | {} | {} | {} | {}× | {} | {} | {} | {} |",
        cell(fraction, 2),
        cell(mean(&m.spent), 3),
        cell(mean(&m.cluster_kwh), 1),
        cell(mean(&m.jct_h), 2),
        cell(mean(&m.speedup), 2),
        cell(mean(&m.bound_h), 2),
        mean(&m.gap).map_or("—".to_string(), |g| format!("{g:.1} %")),
        schedule_cell(m),
        status_cell(&m.status)
    )?;
    Ok(())
}
