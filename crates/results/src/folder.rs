//! A results folder checked against its `matrix.json` before anything is drawn from it:
//! every CSV the matrix says the bench wrote is there with rows, every row passes its
//! checks ([`crate::CheckedRow`]), and every policy named is one the matrix ran. Redrawing
//! reads this first, so an incomplete or edited folder is an error naming the file (line
//! and column), and no figure or report is replaced by one missing a study.

use std::path::Path;

use anyhow::Result;
use serde::de::DeserializeOwned;

use crate::table::{read_expected_rows, read_rows, Rows};
use crate::{
    BudgetFrontierRow, BudgetPointRow, BudgetTimelineRow, CheckedRow, EacoBoundRow, GapRow,
    MatrixDescription, MeanGridRow, ParetoPoint, PointKind, ReplayRunRow, ReplayTimelineRow,
    RunRow,
};

/// Reads every results CSV of `dir` (each one `matrix` expects must hold rows) and checks
/// the policies they name against `matrix`.
pub fn check_folder(dir: &Path, matrix: &MatrixDescription) -> Result<()> {
    let sweep = Some(matrix.sweep_policies().to_vec());
    let gap = matrix.gap_policies();
    let replay = matrix.replay_policies().map(<[String]>::to_vec);
    check::<MeanGridRow>(dir, matrix, crate::MEAN_GRID_CSV, &sweep, |_| true)?;
    check::<RunRow>(dir, matrix, crate::RUNS_CSV, &sweep, |_| true)?;
    check::<GapRow>(dir, matrix, crate::GAPS_CSV, &gap, |_| true)?;
    let policy_point = |p: &ParetoPoint| p.kind == PointKind::Policy;
    read::<ParetoPoint>(dir, matrix, crate::PARETO_CSV, &["trace"])?
        .map(|rows| policies_in(&rows, "label", &gap, policy_point))
        .transpose()?;
    check::<ReplayRunRow>(dir, matrix, crate::REPLAY_RUNS_CSV, &replay, |_| true)?;
    check::<ReplayTimelineRow>(dir, matrix, crate::REPLAY_TIMELINE_CSV, &replay, |_| true)?;
    // The budget study's policies are fixed by the runner, not listed in the matrix.
    read::<BudgetPointRow>(dir, matrix, crate::BUDGET_POINTS_CSV, &[])?;
    read::<BudgetFrontierRow>(dir, matrix, crate::BUDGET_FRONTIER_CSV, &[])?;
    read::<BudgetTimelineRow>(dir, matrix, crate::BUDGET_TIMELINE_CSV, &[])?;
    read::<EacoBoundRow>(dir, matrix, crate::EACO_BOUNDS_CSV, &[])?;
    Ok(())
}

/// `file` of `dir` read and checked: required with rows when `matrix` expects it.
fn read<T: DeserializeOwned + CheckedRow>(
    dir: &Path,
    matrix: &MatrixDescription,
    file: &str,
    columns: &[&str],
) -> Result<Option<Rows<T>>> {
    let path = dir.join(file);
    if matrix.expects(file) {
        read_expected_rows(&path, columns).map(Some)
    } else {
        read_rows(&path, columns)
    }
}

/// [`read`], then every row's `policy` among `allowed` (when the matrix lists them).
fn check<T: DeserializeOwned + CheckedRow>(
    dir: &Path,
    matrix: &MatrixDescription,
    file: &str,
    allowed: &Option<Vec<String>>,
    applies: impl Fn(&T) -> bool,
) -> Result<()> {
    match read::<T>(dir, matrix, file, &["policy"])? {
        Some(rows) => policies_in(&rows, "policy", allowed, applies),
        None => Ok(()),
    }
}

fn policies_in<T>(
    rows: &Rows<T>,
    column: &str,
    allowed: &Option<Vec<String>>,
    applies: impl Fn(&T) -> bool,
) -> Result<()> {
    match allowed {
        Some(allowed) => rows.check_column_in(column, allowed, "the matrix's policies", applies),
        None => Ok(()),
    }
}
