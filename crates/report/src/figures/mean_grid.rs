//! `mean_grid.csv` by trace: the mean curves every line figure draws.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::Result;
use gapbench_results::table::read_rows;
use gapbench_results::MeanGridRow;

/// Mean values at one arrived percent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MeanPoint {
    pub(crate) arrived_pct: f64,
    pub(crate) alloc_pct: f64,
    pub(crate) frag_ratio_pct: f64,
    pub(crate) power_total_w: f64,
}

/// The curves of one trace.
pub(crate) struct TraceCurves {
    pub(crate) family: String,
    pub(crate) seeds: BTreeSet<u64>,
    pub(crate) policies: BTreeMap<String, Vec<MeanPoint>>,
}

/// `mean_grid.csv`, by trace.
pub(crate) struct MeanGrid {
    pub(crate) traces: BTreeMap<String, TraceCurves>,
}

impl MeanGrid {
    /// The traces grouped by family, each family's in natural order: a line figure each.
    pub(crate) fn families(&self) -> BTreeMap<&str, Vec<(&String, &TraceCurves)>> {
        let mut families: BTreeMap<&str, Vec<(&String, &TraceCurves)>> = BTreeMap::new();
        for (trace, curves) in &self.traces {
            families
                .entry(curves.family.as_str())
                .or_default()
                .push((trace, curves));
        }
        for traces in families.values_mut() {
            traces.sort_by(|a, b| crate::draw::natural_cmp(a.0, b.0));
        }
        families
    }

    pub(crate) fn read(path: &Path) -> Result<Option<MeanGrid>> {
        let Some(table) = read_rows::<MeanGridRow>(path, &[])? else {
            return Ok(None);
        };
        let mut traces: BTreeMap<String, TraceCurves> = BTreeMap::new();
        let mut seen: BTreeSet<(String, String, i64)> = BTreeSet::new();
        for row in &table.rows {
            let error = |message: std::fmt::Arguments| table.error(row.line, message);
            let MeanGridRow {
                trace,
                family,
                policy,
                seeds,
                ..
            } = row.value.clone();
            for (column, text) in [("trace", &trace), ("family", &family), ("policy", &policy)] {
                if text.is_empty() {
                    return Err(error(format_args!("column `{column}` is empty")));
                }
            }
            if seeds < 1 {
                return Err(error(format_args!(
                    "column `seeds`: {seeds} is not a positive count"
                )));
            }
            let v = &row.value;
            for (column, value) in [
                ("arrived_pct", v.arrived_pct),
                ("alloc_pct", v.alloc_pct),
                ("frag_ratio_pct", v.frag_ratio_pct),
                ("power_total_w", v.power_total_w),
            ] {
                if !value.is_finite() {
                    return Err(error(format_args!(
                        "column `{column}`: {value} is not a finite number"
                    )));
                }
            }
            let point = MeanPoint {
                arrived_pct: v.arrived_pct,
                alloc_pct: v.alloc_pct,
                frag_ratio_pct: v.frag_ratio_pct,
                power_total_w: v.power_total_w,
            };
            let key = (
                trace.clone(),
                policy.clone(),
                (point.arrived_pct * 1000.0).round() as i64,
            );
            if !seen.insert(key) {
                return Err(error(format_args!(
                    "second row for trace {trace}, policy {policy} at {} % arrived",
                    point.arrived_pct
                )));
            }
            let curves = traces.entry(trace.clone()).or_insert_with(|| TraceCurves {
                family: family.clone(),
                seeds: BTreeSet::new(),
                policies: BTreeMap::new(),
            });
            if curves.family != family {
                return Err(error(format_args!(
                    "trace {trace} is in family {family} here but in family {} above",
                    curves.family
                )));
            }
            curves.seeds.insert(seeds);
            curves.policies.entry(policy).or_default().push(point);
        }
        for curves in traces.values_mut() {
            for points in curves.policies.values_mut() {
                points.sort_by(|a, b| a.arrived_pct.total_cmp(&b.arrived_pct));
            }
        }
        Ok(Some(MeanGrid { traces }))
    }
}
