//! What one line figure plots, apart from how line figures are drawn (`lines`): the family
//! modules (allocation, power, fragmentation) implement it, and `lines` lists them.

use super::mean_grid::{MeanPoint, TraceCurves};
use crate::draw::Axis;

/// What one line figure of a family plots. Each family module (allocation, power,
/// fragmentation…) declares its metrics; `lines::METRICS` lists them in drawing order.
pub(crate) trait LineMetric: Sync {
    /// The file stem for a (file-safe) family name.
    fn stem(&self, family: &str) -> String;
    /// What the title says, before ` — <family> family`.
    fn what(&self) -> &'static str;
    fn y_desc(&self) -> &'static str;
    /// The arrived-% range shown.
    fn x_range(&self) -> (f64, f64) {
        (0.0, 130.0)
    }
    /// A zoom ticks every 10 % and marks every 5 % whatever the grid.
    fn zoom(&self) -> bool {
        false
    }
    /// Whether a trace's panel can show this metric at all.
    fn applies(&self, _curves: &TraceCurves) -> bool {
        true
    }
    /// The (arrived %, value) curve of `policy` from its in-range points; `None` leaves the
    /// policy out of this figure.
    fn values(
        &self,
        curves: &TraceCurves,
        policy: &str,
        points: &[&MeanPoint],
    ) -> Option<Vec<(f64, f64)>>;
    /// The y axis for data spanning `lo..=hi`.
    fn y_axis(&self, lo: f64, hi: f64) -> Axis;
    fn subtitle(&self, seeds: &str) -> String {
        format!("mean over {seeds} per policy")
    }
    /// A dashed line at y = 0, with its legend text.
    fn zero_line(&self) -> Option<&'static str> {
        None
    }
}
