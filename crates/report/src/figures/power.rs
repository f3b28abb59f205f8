//! Power curves: total power vs arrived workload, and each policy's saving relative to FGD
//! (the PWR paper's comparison).

use std::collections::BTreeMap;

use super::line_metric::LineMetric;
use super::mean_grid::{MeanPoint, TraceCurves};
use crate::draw::{padded, Axis};

/// Mean total cluster power in kW.
pub(crate) struct TotalPower;

impl LineMetric for TotalPower {
    fn stem(&self, family: &str) -> String {
        format!("power_vs_arrived_{family}")
    }
    fn what(&self) -> &'static str {
        "Total power vs arrived workload"
    }
    fn y_desc(&self) -> &'static str {
        "total power (kW)"
    }
    fn values(&self, _: &TraceCurves, _: &str, points: &[&MeanPoint]) -> Option<Vec<(f64, f64)>> {
        Some(
            points
                .iter()
                .map(|p| (p.arrived_pct, p.power_total_w / 1000.0))
                .collect(),
        )
    }
    fn y_axis(&self, lo: f64, hi: f64) -> Axis {
        let (lo, hi) = padded(lo, hi, 0.05);
        Axis::nice(lo, hi, 8, self.y_desc())
    }
}

/// Saving vs FGD at the same arrived %, `(P_fgd − P_policy) / P_fgd × 100`; traces without
/// FGD have no panel, and FGD itself no curve.
pub(crate) struct PowerSaving;

impl LineMetric for PowerSaving {
    fn stem(&self, family: &str) -> String {
        format!("power_saving_vs_fgd_{family}")
    }
    fn what(&self) -> &'static str {
        "Power saving relative to FGD"
    }
    fn y_desc(&self) -> &'static str {
        "power saving vs FGD (%)"
    }
    fn applies(&self, curves: &TraceCurves) -> bool {
        curves.policies.contains_key("fgd")
    }
    fn values(
        &self,
        curves: &TraceCurves,
        policy: &str,
        points: &[&MeanPoint],
    ) -> Option<Vec<(f64, f64)>> {
        if policy == "fgd" {
            return None;
        }
        let key = |arrived_pct: f64| (arrived_pct * 1000.0).round() as i64;
        let fgd_w: BTreeMap<i64, f64> = curves
            .policies
            .get("fgd")
            .map(|fgd| {
                fgd.iter()
                    .map(|p| (key(p.arrived_pct), p.power_total_w))
                    .collect()
            })
            .unwrap_or_default();
        Some(
            points
                .iter()
                .filter_map(|p| {
                    let fgd = *fgd_w.get(&key(p.arrived_pct))?;
                    (fgd > 0.0).then(|| (p.arrived_pct, (fgd - p.power_total_w) / fgd * 100.0))
                })
                .collect(),
        )
    }
    fn y_axis(&self, lo: f64, hi: f64) -> Axis {
        let (lo, hi) = padded(lo.min(0.0), hi.max(0.0), 0.08);
        Axis::nice(lo, hi, 8, self.y_desc())
    }
    fn subtitle(&self, seeds: &str) -> String {
        format!(
            "saving = (P_fgd − P_policy) / P_fgd × 100, above 0: less power than FGD; mean over {seeds}"
        )
    }
    fn zero_line(&self) -> Option<&'static str> {
        Some("same power as FGD")
    }
}
