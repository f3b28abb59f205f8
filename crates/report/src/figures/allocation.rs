//! Allocation curves: allocated GPU vs arrived workload (the FGD paper's main figure), and
//! a zoom on 80–130 % arrived where the policies separate.

use super::line_metric::LineMetric;
use super::mean_grid::{MeanPoint, TraceCurves};
use crate::draw::{padded, Axis};

const Y_DESC: &str = "allocated GPU (% of capacity)";

fn allocation(points: &[&MeanPoint]) -> Option<Vec<(f64, f64)>> {
    Some(
        points
            .iter()
            .map(|p| (p.arrived_pct, p.alloc_pct))
            .collect(),
    )
}

/// Allocated GPU over the whole sweep, on a fixed 0–100+ % axis.
pub(crate) struct Allocation;

impl LineMetric for Allocation {
    fn stem(&self, family: &str) -> String {
        format!("alloc_vs_arrived_{family}")
    }
    fn what(&self) -> &'static str {
        "GPU allocation vs arrived workload"
    }
    fn y_desc(&self) -> &'static str {
        Y_DESC
    }
    fn values(&self, _: &TraceCurves, _: &str, points: &[&MeanPoint]) -> Option<Vec<(f64, f64)>> {
        allocation(points)
    }
    fn y_axis(&self, _lo: f64, hi: f64) -> Axis {
        Axis::fixed(0.0, (hi.max(100.0) / 10.0).ceil() * 10.0, 10.0, Y_DESC)
    }
}

/// Allocated GPU from 80 to 130 % arrived, on an axis fitted to the data.
pub(crate) struct AllocationZoom;

impl LineMetric for AllocationZoom {
    fn stem(&self, family: &str) -> String {
        format!("alloc_vs_arrived_{family}_zoom")
    }
    fn what(&self) -> &'static str {
        "GPU allocation vs arrived workload (zoom on 80–130 %)"
    }
    fn y_desc(&self) -> &'static str {
        Y_DESC
    }
    fn x_range(&self) -> (f64, f64) {
        (80.0, 130.0)
    }
    fn zoom(&self) -> bool {
        true
    }
    fn values(&self, _: &TraceCurves, _: &str, points: &[&MeanPoint]) -> Option<Vec<(f64, f64)>> {
        allocation(points)
    }
    fn y_axis(&self, lo: f64, hi: f64) -> Axis {
        let (lo, hi) = padded(lo, hi, 0.05);
        Axis::nice(lo, hi, 8, Y_DESC)
    }
}
