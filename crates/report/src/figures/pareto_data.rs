//! `pareto.csv` as the Pareto figures need it.

use std::path::Path;

use anyhow::Result;
use gapbench_results::table::read_rows;
use gapbench_results::{ParetoPoint, PointKind, SolveStatus};

use super::gap_data::Checkpoint;

/// One row of `pareto.csv`, reduced to what a figure marks.
pub(crate) struct ParetoMark {
    pub(crate) trace: String,
    pub(crate) checkpoint: Checkpoint,
    pub(crate) seed: String,
    pub(crate) kind: PointKind,
    pub(crate) label: String,
    /// `(power_w, frag_gpu_milli)`, `None` for infeasible or failed front points.
    pub(crate) point: Option<(f64, f64)>,
    /// For front points: proven optimal (else only a time-limited solution).
    pub(crate) proven: bool,
}

pub(crate) struct ParetoTable {
    pub(crate) rows: Vec<ParetoMark>,
}

/// Reads `pareto.csv`; `None` when absent or empty.
pub(crate) fn read_pareto(path: &Path) -> Result<Option<ParetoTable>> {
    let Some(table) = read_rows::<ParetoPoint>(path, &[])? else {
        return Ok(None);
    };
    let mut rows = Vec::with_capacity(table.rows.len());
    for row in &table.rows {
        let p = &row.value;
        let (usable, proven) = match p.kind {
            PointKind::Policy => (true, true),
            PointKind::Front => match SolveStatus::parse(&p.status) {
                Some(SolveStatus::Optimal) => (true, true),
                Some(
                    SolveStatus::TimeLimitWithIncumbent
                    | SolveStatus::GapLimit
                    | SolveStatus::LpBound
                    | SolveStatus::RelaxationBound,
                ) => (true, false),
                Some(
                    SolveStatus::Infeasible | SolveStatus::Error(_) | SolveStatus::Unsupported(_),
                ) => (false, false),
                None => {
                    return Err(table.error(
                        row.line,
                        format_args!("column `status`: {:?} is not a solver status", p.status),
                    ))
                }
            },
        };
        let point = if usable {
            let finite = |column: &str, value: Option<f64>| match value {
                Some(v) if v.is_finite() => Ok(v),
                _ => Err(table.error(
                    row.line,
                    format_args!("column `{column}` is not a finite number"),
                )),
            };
            Some((
                finite("power_w", p.power_w)?,
                finite("frag_gpu_milli", p.frag_gpu_milli)?,
            ))
        } else {
            None
        };
        if p.trace.is_empty() || p.label.is_empty() {
            return Err(table.error(row.line, "columns `trace` and `label` must not be empty"));
        }
        rows.push(ParetoMark {
            trace: p.trace.clone(),
            checkpoint: Checkpoint::new(p.checkpoint_pct),
            seed: p.seed.clone(),
            kind: p.kind,
            label: p.label.clone(),
            point,
            proven,
        });
    }
    Ok(Some(ParetoTable { rows }))
}
