//! `pareto.csv` as the Pareto figures need it.

use std::path::Path;

use anyhow::Result;
use gapbench_results::table::read_rows;
use gapbench_results::{ParetoPoint, PointKind, SolveStatus};

use super::gap_data::Checkpoint;

/// One row of `pareto.csv`, reduced to what a figure marks.
pub(crate) struct ParetoMark {
    pub(crate) trace: String,
    /// Nodes of the (sub-)cluster; `None` in files written before the column existed.
    pub(crate) nodes: Option<usize>,
    pub(crate) checkpoint: Checkpoint,
    pub(crate) seed: String,
    pub(crate) kind: PointKind,
    pub(crate) label: String,
    /// `(power_w, frag_gpu_milli)`, `None` for infeasible or failed front points.
    pub(crate) point: Option<(f64, f64)>,
    /// For front points: the solver's status (`None` for a policy's own point).
    pub(crate) status: Option<SolveStatus>,
    /// For front points under a power cap with a proven fragmentation bound:
    /// `(cap_w, bound_gpu_milli)`.
    pub(crate) bound: Option<(f64, f64)>,
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
        let status = match p.kind {
            PointKind::Policy => None,
            PointKind::Front => match SolveStatus::parse(&p.status) {
                Some(status) => Some(status),
                None => {
                    return Err(table.error(
                        row.line,
                        format_args!("column `status`: {:?} is not a solver status", p.status),
                    ))
                }
            },
        };
        let usable = !matches!(
            status,
            Some(SolveStatus::Infeasible | SolveStatus::Error(_) | SolveStatus::Unsupported(_))
        );
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
            nodes: p.nodes,
            checkpoint: Checkpoint::new(p.checkpoint_pct),
            seed: p.seed.clone(),
            kind: p.kind,
            label: p.label.clone(),
            point,
            status,
            bound: match (p.power_cap_w, p.frag_bound_gpu_milli) {
                (Some(cap), Some(bound)) if cap.is_finite() && bound.is_finite() => {
                    Some((cap, bound))
                }
                _ => None,
            },
        });
    }
    Ok(Some(ParetoTable { rows }))
}
