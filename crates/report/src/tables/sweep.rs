//! The sweep tables: allocation at 100 % and 130 % arrived, and power with its saving vs
//! FGD at 50 / 80 / 100 % — REPORT.md's "GPU allocation" and "Power" tables, per trace.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use gapbench_results::{MEAN_GRID_CSV, RUNS_CSV};

use super::latex::{number, Align, LatexTable};
use crate::policy_names::PolicyNames;
use crate::report::{at, Curves};

/// `(file stem, table)` for every trace: `allocation_<trace>` and, where FGD ran,
/// `power_<trace>`.
pub(crate) fn sweep_tables(
    curves: &Curves,
    finals: &BTreeMap<(String, String), f64>,
    names: &PolicyNames,
) -> Result<Vec<(String, LatexTable)>> {
    let mut tables = Vec::new();
    for (trace, policies) in curves {
        let mut table = LatexTable::new(
            &format!("GPU allocation on trace {trace}: allocated GPU (% of capacity) at 100 % and 130 % arrived (mean over seeds), fragmentation ratio at 100 %; from {MEAN_GRID_CSV} and {RUNS_CSV}."),
            &[
                ("policy", Align::Text),
                ("alloc. % at 100 %", Align::Number),
                ("alloc. % at 130 %", Align::Number),
                ("frag. % at 100 %", Align::Number),
                ("seeds", Align::Number),
            ],
        );
        for (policy, points) in policies {
            let end = finals
                .get(&(trace.clone(), policy.clone()))
                .with_context(|| {
                    format!(
                        "{RUNS_CSV} has no run of {policy} on {trace}, which {MEAN_GRID_CSV} has"
                    )
                })?;
            let p100 = at(points, 100);
            table.rows.push(vec![
                super::latex::escape(&names.display(policy)),
                number(Some(p100.alloc_pct), 2),
                number(Some(*end), 2),
                number(Some(p100.frag_ratio_pct), 2),
                p100.seeds.to_string(),
            ]);
        }
        table.note = "Allocation at 130 \\% is after the last task (about 130 \\% arrived).".into();
        let stem = crate::figures::names::file_safe(trace);
        tables.push((format!("allocation_{stem}"), table));
        if let Some(power) = power_table(trace, policies, names) {
            tables.push((format!("power_{stem}"), power));
        }
    }
    Ok(tables)
}

/// Power at 50 % arrived and the saving vs FGD, `(P_fgd − P_x) / P_fgd`, at 50 / 80 /
/// 100 %, with allocation at 100 % for the trade-off; `None` when FGD did not run.
fn power_table(
    trace: &str,
    policies: &[(String, Vec<gapbench_results::MeanGridRow>)],
    names: &PolicyNames,
) -> Option<LatexTable> {
    let (_, fgd) = policies.iter().find(|(p, _)| p == "fgd")?;
    let mut table = LatexTable::new(
        &format!("Power on trace {trace}: total power at 50 % arrived and the saving vs FGD (P_fgd - P_x) / P_fgd at 50, 80 and 100 % arrived, on mean power over seeds; from {MEAN_GRID_CSV}."),
        &[
            ("policy", Align::Text),
            ("power kW at 50 %", Align::Number),
            ("saving % at 50 %", Align::Number),
            ("at 80 %", Align::Number),
            ("at 100 %", Align::Number),
            ("alloc. % at 100 %", Align::Number),
        ],
    );
    for (policy, points) in policies {
        let saving = |a| {
            100.0 * (at(fgd, a).power_total_w - at(points, a).power_total_w)
                / at(fgd, a).power_total_w
        };
        table.rows.push(vec![
            super::latex::escape(&names.display(policy)),
            number(Some(at(points, 50).power_total_w / 1000.0), 1),
            number(Some(saving(50)), 2),
            number(Some(saving(80)), 2),
            number(Some(saving(100)), 2),
            number(Some(at(points, 100).alloc_pct), 2),
        ]);
    }
    table.note = "Saving vs FGD on the mean total power (CPU and GPU, every node).".into();
    Some(table)
}
