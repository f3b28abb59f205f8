//! `gaps.csv` as the gap figures need it: per row, how much the solver proved.

use std::path::Path;

use anyhow::Result;
use gapbench_results::table::read_rows;
use gapbench_results::{GapRow, Objective, SolveStatus};

pub(crate) use crate::draw::BarStatus;

/// Solver statuses of rows that carry no gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum NoGap {
    Infeasible,
    Error,
    Unsupported,
}

/// One row of `gaps.csv`, reduced to what a bar shows.
pub(crate) struct GapCase {
    pub(crate) trace: String,
    pub(crate) checkpoint: Checkpoint,
    pub(crate) objective: Objective,
    pub(crate) policy: String,
    pub(crate) seed: String,
    /// `(low, high)`; high is +infinity when no finite upper bound exists.
    pub(crate) gap_pct: Result<(BarStatus, f64, f64), NoGap>,
}

pub(crate) struct GapTable {
    pub(crate) rows: Vec<GapCase>,
}

/// A checkpoint in arrived percent, kept as thousandths so it can key maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Checkpoint(pub(crate) i64);

impl Checkpoint {
    pub(crate) fn new(pct: f64) -> Self {
        Checkpoint((pct * 1000.0).round() as i64)
    }

    /// Shortest decimal form: `90`, `97.5`.
    pub(crate) fn label(self) -> String {
        let text = format!("{:.3}", self.0 as f64 / 1000.0);
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }

    /// For file names: `90`, `97p5`.
    pub(crate) fn file_part(self) -> String {
        self.label().replace('.', "p").replace('-', "m")
    }
}

/// Reads `gaps.csv` ([`GapRow`]s after a `trace` column); `None` when absent or empty.
pub(crate) fn read_gaps(path: &Path) -> Result<Option<GapTable>> {
    let Some(table) = read_rows::<GapRow>(path, &["trace"])? else {
        return Ok(None);
    };
    let mut rows = Vec::with_capacity(table.rows.len());
    for row in &table.rows {
        let gap = &row.value;
        // `gap_limit` (stopped at the requested MIP gap) and `lp_bound` (the LP optimum, the
        // integer gap left) are intervals like `time_limit`.
        let status = match &gap.status {
            SolveStatus::Optimal => Ok(BarStatus::Optimal),
            SolveStatus::TimeLimitWithIncumbent | SolveStatus::GapLimit | SolveStatus::LpBound => {
                Ok(BarStatus::TimeLimit)
            }
            SolveStatus::RelaxationBound => Ok(BarStatus::Relaxation),
            SolveStatus::Infeasible => Err(NoGap::Infeasible),
            SolveStatus::Error(_) => Err(NoGap::Error),
            SolveStatus::Unsupported(_) => Err(NoGap::Unsupported),
        };
        let gap_pct = match status {
            Ok(status) => {
                let (Some(low), Some(high)) = (gap.gap_low_pct, gap.gap_high_pct) else {
                    return Err(table.error(
                        row.line,
                        format_args!(
                            "status {} needs both gap_low_pct and gap_high_pct",
                            gap.status.label()
                        ),
                    ));
                };
                if !low.is_finite() || high.is_nan() || high == f64::NEG_INFINITY {
                    return Err(table.error(
                        row.line,
                        format_args!("gap [{low}, {high}] is not a usable interval"),
                    ));
                }
                if low > high + 1e-6 * high.abs().max(1.0) {
                    return Err(table.error(
                        row.line,
                        format_args!("gap_low_pct {low} is above gap_high_pct {high}"),
                    ));
                }
                Ok((status, low, high))
            }
            Err(no_gap) => Err(no_gap),
        };
        let trace = table.text(row, "trace");
        if trace.is_empty() {
            return Err(table.error(row.line, "column `trace` is empty"));
        }
        if gap.policy.is_empty() {
            return Err(table.error(row.line, "column `policy` is empty"));
        }
        if !gap.checkpoint_pct.is_finite() {
            return Err(table.error(row.line, "column `checkpoint_pct` is not a finite number"));
        }
        rows.push(GapCase {
            trace: trace.to_string(),
            checkpoint: Checkpoint::new(gap.checkpoint_pct),
            objective: gap.objective,
            policy: gap.policy.clone(),
            seed: table.text(row, "seed").to_string(),
            gap_pct,
        });
    }
    Ok(Some(GapTable { rows }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoints_print_short_and_file_safe() {
        assert_eq!(Checkpoint::new(90.0).label(), "90");
        assert_eq!(Checkpoint::new(97.5).file_part(), "97p5");
    }
}
