//! Line figures over arrived workload: one panel per trace of a family, one curve per
//! policy. What each figure plots is a [`LineMetric`] of its family's module, listed in
//! [`METRICS`].

use std::collections::BTreeSet;

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::line_metric::LineMetric;
use super::mean_grid::{MeanGrid, MeanPoint, TraceCurves};
use super::names::{file_safe, seeds_phrase};
use crate::draw::Palette;
use crate::draw::*;

/// Policies' curves in one panel per trace.
pub(crate) struct LinesFigure {
    pub(crate) size_px: (u32, u32),
    pub(crate) title: String,
    pub(crate) subtitle: String,
    pub(crate) grid: (usize, usize),
    pub(crate) panels: Vec<LinePanel>,
    /// Draw markers on each curve this many arrived percent apart.
    pub(crate) marker_step_pct: f64,
    /// Draw a dashed line at y = 0.
    pub(crate) zero_line: bool,
    pub(crate) legend: Vec<LegendEntry>,
    pub(crate) legend_width_px: u32,
}

pub(crate) struct LinePanel {
    pub(crate) title: String,
    pub(crate) x: Axis,
    pub(crate) y: Axis,
    pub(crate) series: Vec<(PolicyStyle, Vec<(f64, f64)>)>,
}

pub(crate) const ARRIVED_DESC: &str = "arrived workload (% of cluster GPU capacity)";

/// Every line metric, in the order their figures are drawn.
pub(crate) const METRICS: [&dyn LineMetric; 5] = [
    &super::allocation::Allocation,
    &super::allocation::AllocationZoom,
    &super::power::TotalPower,
    &super::power::PowerSaving,
    &super::fragmentation::FragRatio,
];

/// The curves of `metric` for one trace, restricted to the metric's x range.
fn trace_series(
    curves: &TraceCurves,
    metric: &dyn LineMetric,
    palette: &Palette,
) -> Vec<(PolicyStyle, Vec<(f64, f64)>)> {
    let (x_lo, x_hi) = metric.x_range();
    let mut series = Vec::new();
    for style in palette.ordered(curves.policies.keys()) {
        let points: Vec<&MeanPoint> = curves.policies[&style.name]
            .iter()
            .filter(|p| p.arrived_pct >= x_lo - 1e-9 && p.arrived_pct <= x_hi + 1e-9)
            .collect();
        let Some(values) = metric.values(curves, &style.name, &points) else {
            continue;
        };
        if !values.is_empty() {
            series.push((style, values));
        }
    }
    series
}

/// Rows and columns of a panel grid for `n` panels.
fn grid_shape(n: usize) -> (usize, usize) {
    let cols = match n {
        0 | 1 => 1,
        2 | 4 => 2,
        3 | 5 | 6 | 9 => 3,
        7 | 8 => 4,
        _ => 4,
    };
    (n.max(1).div_ceil(cols), cols)
}

/// Panel size for a grid with `cols` columns.
fn panel_size_px(cols: usize) -> (u32, u32) {
    match cols {
        1 => (960, 690),
        2 => (620, 440),
        3 => (500, 390),
        _ => (440, 360),
    }
}

/// Every line figure of every family (traces grouped by family, in natural order).
pub(crate) fn family_figures(
    grid: &MeanGrid,
    palette: &Palette,
) -> Result<Vec<(String, LinesFigure)>> {
    let mut figures = Vec::new();
    for (family, traces) in grid.families() {
        for metric in METRICS {
            if let Some(figure) = line_figure(family, &traces, metric, palette)? {
                figures.push((metric.stem(&file_safe(family)), figure));
            }
        }
    }
    Ok(figures)
}

/// One line figure of a family, or `None` when no trace has data for it.
fn line_figure(
    family: &str,
    traces: &[(&String, &TraceCurves)],
    metric: &dyn LineMetric,
    palette: &Palette,
) -> Result<Option<LinesFigure>> {
    let mut panels_data = Vec::new();
    for (trace, curves) in traces {
        if !metric.applies(curves) {
            continue;
        }
        let series = trace_series(curves, metric, palette);
        if !series.is_empty() {
            panels_data.push((*trace, *curves, series));
        }
    }
    if panels_data.is_empty() {
        return Ok(None);
    }
    let (rows, cols) = grid_shape(panels_data.len());
    let (panel_w, panel_h) = panel_size_px(cols);
    let (x_lo, x_hi) = metric.x_range();
    let x_step = if metric.zoom() || cols <= 2 {
        10.0
    } else {
        20.0
    };

    let mut panels = Vec::new();
    let mut seed_counts = BTreeSet::new();
    let mut legend_names: BTreeSet<String> = BTreeSet::new();
    for (trace, curves, series) in panels_data {
        seed_counts.extend(curves.seeds.iter().copied());
        let (lo, hi) = min_max(series.iter().flat_map(|(_, pts)| pts.iter().map(|p| p.1)))
            .unwrap_or((0.0, 1.0));
        legend_names.extend(series.iter().map(|(s, _)| s.name.clone()));
        panels.push(LinePanel {
            title: format!("trace {trace}"),
            x: Axis::fixed(x_lo, x_hi, x_step, ARRIVED_DESC),
            y: metric.y_axis(lo, hi),
            series,
        });
    }

    let mut legend = vec![LegendEntry::new(Swatch::Heading, "policy")];
    legend.extend(palette.ordered(legend_names.iter()).into_iter().map(|s| {
        let label = s.name.clone();
        LegendEntry::new(Swatch::Line(s), label)
    }));
    if let Some(label) = metric.zero_line() {
        legend.push(LegendEntry::new(Swatch::Reference, label));
    }
    let subtitle = metric.subtitle(&seeds_phrase(&seed_counts));
    let title = format!("{} — {family} family", metric.what());
    let legend_width_px = legend_width_px(&legend)?;
    let width = (cols as u32 * panel_w + legend_width_px).max(header_width_px(&title, &subtitle)?);
    let height = HEADER_PX + (rows as u32 * panel_h).max(legend_height_px(&legend));
    Ok(Some(LinesFigure {
        size_px: (width, height),
        title,
        subtitle,
        grid: (rows, cols),
        panels,
        marker_step_pct: if metric.zoom() { 5.0 } else { 10.0 },
        zero_line: metric.zero_line().is_some(),
        legend,
        legend_width_px,
    }))
}

impl LinesFigure {
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        mode: TextMode,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let plots = frame(
            root,
            &self.title,
            &self.subtitle,
            &self.legend,
            self.legend_width_px,
            mode,
        )?;
        let areas = plots.split_evenly(self.grid);
        for (panel, area) in self.panels.iter().zip(&areas) {
            let mut chart = build_chart(root, area, Some(&panel.title), &panel.x, &panel.y, mode)?;
            if self.zero_line && panel.y.range.0 < 0.0 && panel.y.range.1 > 0.0 {
                let left = chart.backend_coord(&(panel.x.range.0, 0.0));
                let right = chart.backend_coord(&(panel.x.range.1, 0.0));
                draw_dashed_hline(root, left.0, right.0, left.1, SUBTLE_INK)?;
            }
            for (style, points) in &panel.series {
                chart.draw_series(LineSeries::new(
                    points.iter().copied(),
                    style.colour.stroke_width(2),
                ))?;
                // Markers every step, shifted by a fifth of a step per policy so that curves
                // lying on top of each other still show all their markers.
                let shift_pct = (style.rank % 5) as f64 * self.marker_step_pct / 5.0;
                for &(x, y) in points {
                    let k = ((x - shift_pct) / self.marker_step_pct).round();
                    if (x - shift_pct - k * self.marker_step_pct).abs() < 1e-6 {
                        let centre = chart.backend_coord(&(x, y));
                        draw_marker(root, style.shape, centre, 4.5, style.colour, style.colour)?;
                    }
                }
            }
        }
        Ok(())
    }
}
