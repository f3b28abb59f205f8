//! The tables of a results folder as LaTeX, for a paper: `tables/*.tex`, the same data as
//! REPORT.md's tables — the whole-cluster gaps (`gaps.rs`), allocation and power
//! (`sweep.rs`), time-mode energy with its bound and the budget studies (`time_mode.rs`) —
//! each drawn with `latex.rs`. Policies carry their papers' names (`policy_names`).

pub(crate) mod gaps;
pub(crate) mod latex;
pub(crate) mod sweep;
pub(crate) mod time_mode;

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use gapbench_results::io::write_atomic;
use gapbench_results::{GapRow, MatrixDescription, MEAN_GRID_CSV, REPLAY_RUNS_CSV, RUNS_CSV};

use crate::cluster_size::ClusterSizes;
use crate::figures::budget::BudgetTables;
use crate::figures::replay_data::read_replay_runs;
use crate::policy_names::PolicyNames;
use crate::report::{curves, final_allocation, read_csv};
use latex::LatexTable;

/// Subfolder of the results folder that receives the tables.
pub const TABLES_DIR: &str = "tables";

/// Every table the folder's CSVs support, as `(file stem, table)`, in a fixed order.
pub(crate) fn plan_tables(
    dir: &Path,
    matrix: &MatrixDescription,
    names: &PolicyNames,
) -> Result<Vec<(String, LatexTable)>> {
    let mut tables = Vec::new();
    let traced = crate::gaps::read_traced(dir)?;
    let gap_rows: Vec<(&str, &GapRow)> = traced.iter().map(|(t, r)| (t.as_str(), r)).collect();
    let sizes = ClusterSizes::of_spec(
        matrix,
        gap_rows.iter().map(|(trace, row)| (*trace, row.nodes)),
    );
    tables.extend(gaps::whole_cluster_tables(&gap_rows, &sizes, names));
    let curves = curves(read_csv(&dir.join(MEAN_GRID_CSV))?);
    let finals = final_allocation(&read_csv(&dir.join(RUNS_CSV))?);
    tables.extend(sweep::sweep_tables(&curves, &finals, names)?);
    if let Some(runs) = read_replay_runs(&dir.join(REPLAY_RUNS_CSV))? {
        let eaco = crate::eaco::EacoBounds::read(dir)?;
        tables.extend(time_mode::energy_tables(&runs.panels, &eaco, names));
    }
    if let Some(budgets) = BudgetTables::read(dir)? {
        tables.extend(time_mode::budget_tables(&budgets, names));
    }
    Ok(tables)
}

/// Writes the planned tables into `dir/tables/` (each atomically) and removes the `.tex`
/// files the folder no longer supports; returns the paths written.
pub(crate) fn write_tables(dir: &Path, tables: &[(String, LatexTable)]) -> Result<Vec<PathBuf>> {
    let out_dir = dir.join(TABLES_DIR);
    let mut written = Vec::with_capacity(tables.len());
    if !tables.is_empty() {
        fs::create_dir_all(&out_dir)
            .with_context(|| format!("cannot create folder {}", out_dir.display()))?;
    }
    for (stem, table) in tables {
        let path = out_dir.join(format!("{stem}.tex"));
        write_atomic(&path, table.render().as_bytes())?;
        written.push(path);
    }
    if let Ok(entries) = fs::read_dir(&out_dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "tex") && !written.contains(&path) {
                fs::remove_file(&path)
                    .with_context(|| format!("cannot remove {}", path.display()))?;
            }
        }
    }
    Ok(written)
}
