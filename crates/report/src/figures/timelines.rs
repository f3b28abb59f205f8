//! Time-mode timelines: cluster power and active nodes over a replay, one curve per
//! policy, one panel per (source, arrival scale, idle policy). Each curve is one seed's
//! replay (the smallest seed) sampled at about 200 instants: replays of different seeds end
//! at different times, so they are shown, not averaged.

use std::collections::BTreeSet;

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::replay_data::{Panel, TimelineSeries};
use crate::draw::Palette;
use crate::draw::*;

/// One metric over time for every panel.
pub(crate) struct TimelineFigure {
    pub(crate) size_px: (u32, u32),
    pub(crate) title: String,
    pub(crate) subtitle: String,
    pub(crate) grid: (usize, usize),
    pub(crate) panels: Vec<TimelinePanel>,
    pub(crate) legend: Vec<LegendEntry>,
    pub(crate) legend_width_px: u32,
}

pub(crate) struct TimelinePanel {
    pub(crate) title: String,
    pub(crate) x: Axis,
    pub(crate) y: Axis,
    pub(crate) series: Vec<(PolicyStyle, Vec<(f64, f64)>)>,
    /// A lower bound drawn as a dashed black line: `(whose schedule, points)`.
    pub(crate) bound: Option<(String, Vec<(f64, f64)>)>,
}

/// The bound a power panel shows: that of the replay with the least mean power (its
/// samples are evenly spaced), the one whose gap says most about the bound.
fn least_power_bound(series: &[TimelineSeries]) -> Option<&TimelineSeries> {
    let mean = |s: &TimelineSeries| {
        s.points.iter().map(|p| p.1).sum::<f64>() / s.points.len().max(1) as f64
    };
    series
        .iter()
        .filter(|s| !s.bound_kw.is_empty())
        .min_by(|a, b| mean(a).total_cmp(&mean(b)))
}

/// Markers on every this many samples of a curve (shifted per policy).
const MARKER_EVERY: usize = 20;

/// What a timeline plots: `(stem, title, y description, value of a sample)`.
type Metric = (
    &'static str,
    &'static str,
    &'static str,
    fn(&(f64, f64, f64)) -> f64,
);

const POWER_STEM: &str = "replay_power_over_time";

/// The legend's style of the bound's line.
fn bound_style() -> PolicyStyle {
    PolicyStyle {
        name: "energy bound".into(),
        colour: BLACK,
        shape: Shape::Circle,
        rank: 0,
    }
}

const METRICS: [Metric; 2] = [
    (POWER_STEM, "Cluster power over time", "power (kW)", |p| p.1),
    (
        "replay_active_nodes_over_time",
        "Active nodes over time",
        "nodes with at least one task",
        |p| p.2,
    ),
];

/// The power and active-node timelines of every panel.
pub(crate) fn timeline_figures(
    panels: &[(Panel, Vec<TimelineSeries>)],
    palette: &Palette,
) -> Result<Vec<(String, TimelineFigure)>> {
    if panels.is_empty() {
        return Ok(Vec::new());
    }
    let mut figures = Vec::new();
    for metric in &METRICS {
        let mut seen = Seen::default();
        let drawn = panels
            .iter()
            .map(|(panel, series)| timeline_panel(panel, series, metric, palette, &mut seen))
            .collect();
        let figure = timeline_figure(metric, drawn, &seen, palette)?;
        figures.push((metric.0.to_string(), figure));
    }
    Ok(figures)
}

/// What a figure's panels showed: policies, seeds, and whether a bound was drawn.
#[derive(Default)]
struct Seen {
    names: BTreeSet<String>,
    seeds: BTreeSet<u64>,
    bound: bool,
}

/// One panel of `metric`: every policy's curve, in days past 72 hours, and the least-power
/// replay's bound on power panels.
fn timeline_panel(
    panel: &Panel,
    series: &[TimelineSeries],
    &(stem, _, y_desc, value): &Metric,
    palette: &Palette,
    seen: &mut Seen,
) -> TimelinePanel {
    let span_h = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(0.0, f64::max);
    let (unit, per_unit) = if span_h > 72.0 {
        ("days", 24.0)
    } else {
        ("hours", 1.0)
    };
    let mut curves = Vec::new();
    for style in palette.ordered(series.iter().map(|s| &s.policy)) {
        let s = series
            .iter()
            .find(|s| s.policy == style.name)
            .expect("a style per series");
        seen.names.insert(s.policy.clone());
        seen.seeds.insert(s.seed);
        let points = s
            .points
            .iter()
            .map(|p| (p.0 / per_unit, value(p)))
            .collect();
        curves.push((style, points));
    }
    let (lo, hi) = min_max(
        curves
            .iter()
            .flat_map(|(_, pts): &(_, Vec<(f64, f64)>)| pts.iter().map(|p| p.1)),
    )
    .unwrap_or((0.0, 1.0));
    let (_, hi) = padded(lo.min(0.0), hi, 0.05);
    let bound = (stem == POWER_STEM)
        .then(|| least_power_bound(series))
        .flatten()
        .map(|s| {
            seen.bound = true;
            let points = s.bound_kw.iter().map(|p| (p.0 / per_unit, p.1)).collect();
            (s.policy.clone(), points)
        });
    TimelinePanel {
        title: format!("{} ({} nodes)", panel.title(), panel.nodes),
        x: Axis::nice(
            0.0,
            (span_h / per_unit).max(1e-3),
            8,
            &format!("time since the first arrival ({unit})"),
        ),
        y: Axis::nice(0.0, hi, 8, y_desc),
        series: curves,
        bound,
    }
}

/// The figure of `metric`'s panels: legend, subtitle, panel grid and size.
fn timeline_figure(
    &(_, what, _, _): &Metric,
    drawn: Vec<TimelinePanel>,
    seen: &Seen,
    palette: &Palette,
) -> Result<TimelineFigure> {
    let mut legend = vec![LegendEntry::new(Swatch::Heading, "policy")];
    legend.extend(
        palette
            .ordered(seen.names.iter())
            .into_iter()
            .map(|s| LegendEntry::new(Swatch::Line(s.clone()), s.name)),
    );
    if seen.bound {
        legend.push(LegendEntry::new(Swatch::Heading, "energy bound (dashed)"));
        legend.push(LegendEntry::new(
            Swatch::Line(bound_style()),
            "least-power replay",
        ));
    }
    let seeds: Vec<String> = seen.seeds.iter().map(u64::to_string).collect();
    let subtitle = format!(
        "time mode: one replay per policy (seed {}), sampled at 200 instants",
        seeds.join("/")
    );
    let cols = match drawn.len() {
        1 => 1,
        2 | 4 => 2,
        _ => 3,
    };
    let rows = drawn.len().div_ceil(cols);
    let (panel_w, panel_h) = if cols == 1 { (960, 600) } else { (620, 440) };
    let legend_width_px = legend_width_px(&legend)?;
    let width = (cols as u32 * panel_w + legend_width_px).max(header_width_px(what, &subtitle)?);
    let height = HEADER_PX + (rows as u32 * panel_h).max(legend_height_px(&legend));
    Ok(TimelineFigure {
        size_px: (width, height),
        title: what.to_string(),
        subtitle,
        grid: (rows, cols),
        panels: drawn,
        legend,
        legend_width_px,
    })
}

impl TimelineFigure {
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
            for (style, points) in &panel.series {
                chart.draw_series(LineSeries::new(
                    points.iter().copied(),
                    style.colour.stroke_width(2),
                ))?;
                // Markers every few samples, shifted per policy so that curves lying on
                // top of each other still show all their markers.
                let shift = (style.rank % 5) * MARKER_EVERY / 5;
                for point in points.iter().skip(shift).step_by(MARKER_EVERY) {
                    let centre = chart.backend_coord(point);
                    draw_marker(root, style.shape, centre, 4.5, style.colour, style.colour)?;
                }
            }
            if let Some((_, points)) = &panel.bound {
                chart.draw_series(DashedLineSeries::new(
                    points.iter().copied(),
                    6,
                    4,
                    BLACK.stroke_width(2),
                ))?;
            }
        }
        Ok(())
    }
}
