//! Fragmentation curves: the FGD measure's fragmented share of the unallocated GPU.

use super::line_metric::LineMetric;
use super::mean_grid::{MeanPoint, TraceCurves};
use crate::draw::Axis;

/// Fragmented GPU as % of free GPU.
pub(crate) struct FragRatio;

impl LineMetric for FragRatio {
    fn stem(&self, family: &str) -> String {
        format!("frag_ratio_vs_arrived_{family}")
    }
    fn what(&self) -> &'static str {
        "GPU fragmentation ratio vs arrived workload"
    }
    fn y_desc(&self) -> &'static str {
        "fragmented GPU (% of free GPU)"
    }
    fn values(&self, _: &TraceCurves, _: &str, points: &[&MeanPoint]) -> Option<Vec<(f64, f64)>> {
        Some(
            points
                .iter()
                .map(|p| (p.arrived_pct, p.frag_ratio_pct))
                .collect(),
        )
    }
    fn y_axis(&self, _lo: f64, hi: f64) -> Axis {
        Axis::nice(0.0, hi.max(1.0) * 1.05, 8, self.y_desc())
    }
    fn subtitle(&self, seeds: &str) -> String {
        format!("fragmented share of the unallocated GPU (FGD measure); mean over {seeds}")
    }
}
