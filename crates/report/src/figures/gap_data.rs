//! `gaps.csv` as the gap figures need it: per row, how much the solver proved.

use std::path::Path;

use anyhow::Result;
use gapbench_results::table::read_rows;
use gapbench_results::{best_known, GapRow, Objective, SolveStatus};

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
    /// Nodes of the (sub-)cluster: figures never mix sizes.
    pub(crate) nodes: usize,
    pub(crate) checkpoint: Checkpoint,
    pub(crate) objective: Objective,
    pub(crate) policy: String,
    pub(crate) seed: String,
    pub(crate) status: SolveStatus,
    pub(crate) gap_pct: Result<ProvenGap, NoGap>,
}

/// What one solve proved about a gap: it is at least `low_pct`, at most `high`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProvenGap {
    pub(crate) bar: BarStatus,
    pub(crate) low_pct: f64,
    pub(crate) high: UpperEnd,
}

/// The largest gap the proven bound allows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum UpperEnd {
    Finite(f64),
    Unbounded(Unbounded),
}

/// Why a gap has no finite upper end, strongest reason first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Unbounded {
    /// The proven bound is 0 (fragmentation can reach 0): a gap relative to an optimum
    /// that may be 0 has no finite upper end.
    ZeroBound,
    /// The solve proved no bound at all.
    NoBound,
}

impl Unbounded {
    /// Of a row whose upper end is infinite or missing: from its `bound` column.
    fn of(bound: Option<f64>) -> Self {
        match bound {
            Some(b) if b.abs() < 1e-9 => Unbounded::ZeroBound,
            _ => Unbounded::NoBound,
        }
    }

    /// Written beside the mark.
    pub(crate) fn short(self) -> &'static str {
        match self {
            Unbounded::ZeroBound => "bound 0",
            Unbounded::NoBound => "no bound",
        }
    }

    /// Written in the legend.
    pub(crate) fn legend(self) -> &'static str {
        match self {
            Unbounded::ZeroBound => "no finite bound: proven bound 0 (gap relative to 0)",
            Unbounded::NoBound => "no finite bound: the solve proved no bound",
        }
    }
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

/// How a bar of a row with `status` is drawn (`Err`: the row has no gap). `gap_limit`
/// (stopped at the requested MIP gap) and `lp_bound` (the LP optimum, the integer gap left)
/// are intervals like `time_limit`: hatched, each its own way, and the legend names which.
pub(crate) fn bar_status(status: &SolveStatus) -> Result<BarStatus, NoGap> {
    match status {
        SolveStatus::Optimal => Ok(BarStatus::Optimal),
        SolveStatus::GapLimit => Ok(BarStatus::GapLimit),
        SolveStatus::LpBound => Ok(BarStatus::LpBound),
        SolveStatus::TimeLimitWithIncumbent => Ok(BarStatus::TimeLimit),
        SolveStatus::RelaxationBound => Ok(BarStatus::Relaxation),
        SolveStatus::Infeasible => Err(NoGap::Infeasible),
        SolveStatus::Error(_) => Err(NoGap::Error),
        SolveStatus::Unsupported(_) => Err(NoGap::Unsupported),
    }
}

/// The legend line of a status with a gap: its label as in `gaps.csv` and `REPORT.md`, what
/// it proves, and how its bar is drawn.
pub(crate) fn status_legend(status: &SolveStatus) -> Option<&'static str> {
    Some(match status {
        SolveStatus::Optimal => "optimal: solved to optimality (solid)",
        SolveStatus::TimeLimitWithIncumbent => {
            "time_limit: the clock stopped the solve (hatched /)"
        }
        SolveStatus::GapLimit => "gap_limit: the requested MIP gap was reached (hatched \\)",
        SolveStatus::LpBound => "lp_bound: LP bound proven, integer gap not closed (hatched —)",
        SolveStatus::RelaxationBound => {
            "relaxation_bound: a relaxation's bound vs the heuristic's placement (light)"
        }
        SolveStatus::Infeasible | SolveStatus::Error(_) | SolveStatus::Unsupported(_) => {
            return None
        }
    })
}

/// The upper end of a row's gap: no upper end (no bound proven) or +inf (bound 0) are
/// unbounded gaps; `None` for a NaN or −inf.
pub(crate) fn upper_end(gap: &GapRow) -> Option<UpperEnd> {
    match gap.gap_high_pct {
        Some(high) if high.is_finite() => Some(UpperEnd::Finite(high)),
        Some(f64::INFINITY) | None => Some(UpperEnd::Unbounded(Unbounded::of(gap.bound))),
        Some(_) => None,
    }
}

/// The interval of a row with a gap, or what is wrong with its gap columns.
fn proven_gap(gap: &GapRow, bar: BarStatus) -> Result<ProvenGap, String> {
    let Some(low) = gap.gap_low_pct else {
        return Err(format!("status {} needs gap_low_pct", gap.status.label()));
    };
    if !low.is_finite() {
        return Err(format!("gap_low_pct {low} is not a finite number"));
    }
    let Some(high) = upper_end(gap) else {
        return Err(format!(
            "gap [{low}, {}] is not a usable interval",
            gap.gap_high_pct.unwrap_or(f64::NAN)
        ));
    };
    if let UpperEnd::Finite(high) = high {
        if low > high + 1e-6 * high.abs().max(1.0) {
            return Err(format!("gap_low_pct {low} is above gap_high_pct {high}"));
        }
    }
    Ok(ProvenGap {
        bar,
        low_pct: low,
        high,
    })
}

/// Reads `gaps.csv` ([`GapRow`]s after a `trace` column); `None` when absent or empty.
/// Each case draws the best interval known for its instance (`results::best_known`), as
/// the report's tables do.
pub(crate) fn read_gaps(path: &Path) -> Result<Option<GapTable>> {
    let Some(table) = read_rows::<GapRow>(path, &["trace"])? else {
        return Ok(None);
    };
    let mut rows = Vec::with_capacity(table.rows.len());
    for row in &table.rows {
        // Every row's own interval must be usable, pooled or not.
        if let Ok(bar) = bar_status(&row.value.status) {
            proven_gap(&row.value, bar).map_err(|e| table.error(row.line, e))?;
        }
    }
    let known = best_known(table.rows.iter().map(|row| &row.value));
    for (row, known) in table.rows.iter().zip(&known) {
        let gap = &known.row;
        let gap_pct = match bar_status(&gap.status) {
            Ok(bar) => Ok(proven_gap(gap, bar).map_err(|e| table.error(row.line, e))?),
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
            nodes: gap.nodes,
            checkpoint: Checkpoint::new(gap.checkpoint_pct),
            objective: gap.objective,
            policy: gap.policy.clone(),
            seed: table.text(row, "seed").to_string(),
            status: gap.status.clone(),
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
