//! `grid.csv` by trace, policy and seed: every seed's own curve, which the paper style
//! draws as the spread around the mean (and pairs seed by seed for differences vs FGD).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;
use gapbench_results::check::{non_negative, percent, CheckedRow, ColumnError};
use gapbench_results::table::read_rows;
use serde::Deserialize;

use super::mean_grid::{MeanPoint, TraceCurves};

/// The columns of `grid.csv` (`gapbench_results::GridRow`) the spread is drawn from.
#[derive(Debug, Clone, Deserialize)]
struct SeedGridRow {
    trace: String,
    family: String,
    policy: String,
    seed: u64,
    arrived_pct: f64,
    alloc_pct: f64,
    frag_ratio_pct: f64,
    power_total_w: f64,
}

impl CheckedRow for SeedGridRow {
    fn check(&self) -> Result<(), ColumnError> {
        non_negative("arrived_pct", self.arrived_pct)?;
        percent("alloc_pct", self.alloc_pct)?;
        percent("frag_ratio_pct", self.frag_ratio_pct)?;
        non_negative("power_total_w", self.power_total_w)
    }
}

/// Every seed's curves of one trace, as one [`TraceCurves`] per seed (so a metric computes a
/// seed's value from that seed's curves alone: a saving vs FGD pairs the same seed's runs).
pub(crate) struct SeedCurves {
    pub(crate) seeds: BTreeMap<u64, TraceCurves>,
}

/// `grid.csv` by trace; `None` when the folder has none.
pub(crate) fn read_seed_grid(path: &Path) -> Result<Option<BTreeMap<String, SeedCurves>>> {
    let Some(table) = read_rows::<SeedGridRow>(path, &[])? else {
        return Ok(None);
    };
    let mut traces: BTreeMap<String, SeedCurves> = BTreeMap::new();
    for row in &table.rows {
        let r = &row.value;
        let curves = traces
            .entry(r.trace.clone())
            .or_insert_with(|| SeedCurves {
                seeds: BTreeMap::new(),
            })
            .seeds
            .entry(r.seed)
            .or_insert_with(|| TraceCurves {
                family: r.family.clone(),
                seeds: [1].into(),
                policies: BTreeMap::new(),
            });
        curves
            .policies
            .entry(r.policy.clone())
            .or_default()
            .push(MeanPoint {
                arrived_pct: r.arrived_pct,
                alloc_pct: r.alloc_pct,
                frag_ratio_pct: r.frag_ratio_pct,
                power_total_w: r.power_total_w,
            });
    }
    for trace in traces.values_mut() {
        for curves in trace.seeds.values_mut() {
            for points in curves.policies.values_mut() {
                points.sort_by(|a, b| a.arrived_pct.total_cmp(&b.arrived_pct));
            }
        }
    }
    Ok(Some(traces))
}
