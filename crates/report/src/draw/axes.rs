//! Axes: ranges, round ticks and their labels, and the house-style chart every panel is
//! drawn on.

use anyhow::Result;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::*;

/// One axis: its range, tick positions and how ticks are written.
#[derive(Debug, Clone)]
pub(crate) struct Axis {
    pub(crate) range: (f64, f64),
    pub(crate) ticks: Vec<f64>,
    pub(crate) decimals: usize,
    /// Category names written at the ticks instead of numbers.
    pub(crate) names: Option<Vec<String>>,
    pub(crate) desc: String,
}

impl Axis {
    /// Ticks at multiples of `step` in exactly `lo..=hi`.
    pub(crate) fn fixed(lo: f64, hi: f64, step: f64, desc: &str) -> Axis {
        let first = (lo / step - 1e-9).ceil() as i64;
        let last = (hi / step + 1e-9).floor() as i64;
        // Thin out absurd tick counts (only reachable with extreme data).
        let every = ((last - first) / 50).max(1) as usize;
        Axis {
            range: (lo, hi),
            ticks: (first..=last)
                .step_by(every)
                .map(|k| k as f64 * step)
                .collect(),
            decimals: decimals_of(step),
            names: None,
            desc: desc.to_string(),
        }
    }

    /// About `max_ticks` round ticks; the range grows to the ticks around `lo..=hi`.
    pub(crate) fn nice(lo: f64, hi: f64, max_ticks: usize, desc: &str) -> Axis {
        let (lo, hi) = if !(hi - lo).is_finite() {
            (0.0, 1.0)
        } else if hi - lo > 1e-9 * hi.abs().max(1.0) {
            (lo, hi)
        } else {
            let half = (0.05 * lo.abs()).max(1.0);
            (lo - half, hi + half)
        };
        let raw = (hi - lo) / max_ticks.max(1) as f64;
        let magnitude = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 2.5, 5.0, 10.0]
            .iter()
            .map(|m| m * magnitude)
            .find(|s| *s >= raw * (1.0 - 1e-9))
            .unwrap_or(10.0 * magnitude);
        let lo = (lo / step + 1e-9).floor() * step;
        let hi = (hi / step - 1e-9).ceil() * step;
        Axis::fixed(lo, hi, step, desc)
    }

    /// Categories at 0, 1, …; the range leaves half a slot on each side.
    pub(crate) fn categories(names: Vec<String>, desc: &str) -> Axis {
        let n = names.len().max(1);
        Axis {
            range: (-0.5, n as f64 - 0.5),
            ticks: (0..names.len()).map(|i| i as f64).collect(),
            decimals: 0,
            names: Some(names),
            desc: desc.to_string(),
        }
    }

    pub(crate) fn label(&self, value: f64) -> String {
        if let Some(names) = &self.names {
            let i = value.round();
            return if (value - i).abs() < 1e-6 && i >= 0.0 {
                names.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            };
        }
        let value = if value.abs() < 1e-9 { 0.0 } else { value };
        format!("{value:.*}", self.decimals)
    }

    /// Widest tick label in pixels.
    pub(crate) fn widest_label_px(&self) -> Result<i32> {
        let tick_font = font(TICK_PX);
        let mut widest = 0;
        for &t in &self.ticks {
            widest = widest.max(text_width_px(&self.label(t), &tick_font)?);
        }
        Ok(widest)
    }
}

/// Decimals needed to write multiples of `step` exactly.
pub(crate) fn decimals_of(step: f64) -> usize {
    (0..6)
        .find(|d| {
            let scaled = step * 10f64.powi(*d as i32);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.abs().max(1.0)
        })
        .unwrap_or(6)
}

/// `lo..hi` grown by `fraction` of its span on both sides, not below zero when the data is not.
pub(crate) fn padded(lo: f64, hi: f64, fraction: f64) -> (f64, f64) {
    let pad = (hi - lo).abs() * fraction;
    let new_lo = if lo >= 0.0 {
        (lo - pad).max(0.0)
    } else {
        lo - pad
    };
    (new_lo, hi + pad)
}

pub(crate) fn min_max(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values.into_iter().fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// A continuous f64 coordinate whose grid lines and tick labels sit exactly at given values.
#[derive(Debug, Clone)]
pub(crate) struct TickedRange {
    pub(crate) lo: f64,
    pub(crate) hi: f64,
    pub(crate) ticks: Vec<f64>,
}

impl Ranged for TickedRange {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.hi - self.lo;
        if span <= 0.0 {
            return (limit.0 + limit.1) / 2;
        }
        let fraction = (value - self.lo) / span;
        limit.0 + (f64::from(limit.1 - limit.0) * fraction).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

impl Axis {
    pub(crate) fn coord(&self) -> TickedRange {
        TickedRange {
            lo: self.range.0,
            hi: self.range.1,
            ticks: self.ticks.clone(),
        }
    }
}

pub(crate) type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<TickedRange, TickedRange>>;

/// A chart on `area` with the house style: an optional title, grid lines at the ticks and
/// labelled axes. Decorations are drawn on `root`, in absolute pixels.
pub(crate) fn build_chart<'a, DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &'a DrawingArea<DB, Shift>,
    title: Option<&str>,
    x: &Axis,
    y: &Axis,
    mode: TextMode,
) -> Result<Chart<'a, DB>>
where
    DB::ErrorType: 'static,
{
    let chart = ChartBuilder::on(area)
        .margin_top(if title.is_some() { 38 } else { 12 })
        .margin_bottom(8)
        .margin_left(8)
        .margin_right(24)
        .x_label_area_size(62)
        .y_label_area_size(y.widest_label_px()? + 46)
        .build_cartesian_2d(x.coord(), y.coord())?;
    let (left, bottom) = chart.backend_coord(&(x.range.0, y.range.0));
    let (right, top) = chart.backend_coord(&(x.range.1, y.range.1));
    let plot = PlotBox {
        left,
        right,
        top,
        bottom,
    };
    draw_ticks(root, &chart, &plot, x, y, mode)?;
    draw_descriptions(root, area, &plot, (x, y), title, mode)?;
    Ok(chart)
}

/// The plot's edges in pixels of the root.
#[derive(Clone, Copy)]
struct PlotBox {
    left: i32,
    right: i32,
    top: i32,
    bottom: i32,
}

/// Grid lines, tick marks and tick labels of both axes, then the axes' lines.
fn draw_ticks<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart<'_, DB>,
    plot: &PlotBox,
    x: &Axis,
    y: &Axis,
    mode: TextMode,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let PlotBox {
        left,
        right,
        top,
        bottom,
    } = *plot;
    let grid = GRID_LINE.stroke_width(1);
    let axis = SUBTLE_INK.stroke_width(1);
    let tick_font = font(TICK_PX);
    for &t in &x.ticks {
        let px = chart.backend_coord(&(t, y.range.0)).0;
        root.draw(&PathElement::new(vec![(px, top), (px, bottom)], grid))?;
        root.draw(&PathElement::new(
            vec![(px, bottom), (px, bottom + 5)],
            axis,
        ))?;
        let place = Placement::at(HPos::Center, VPos::Top);
        draw_text(
            root,
            &x.label(t),
            &tick_font,
            INK,
            place,
            (px, bottom + 9),
            mode,
        )?;
    }
    for &t in &y.ticks {
        let py = chart.backend_coord(&(x.range.0, t)).1;
        root.draw(&PathElement::new(vec![(left, py), (right, py)], grid))?;
        root.draw(&PathElement::new(vec![(left - 5, py), (left, py)], axis))?;
        let place = Placement::at(HPos::Right, VPos::Center);
        draw_text(
            root,
            &y.label(t),
            &tick_font,
            INK,
            place,
            (left - 9, py),
            mode,
        )?;
    }
    root.draw(&PathElement::new(
        vec![(left, top), (left, bottom), (right, bottom)],
        axis,
    ))?;
    Ok(())
}

/// The axes' descriptions (the y one upward, at the area's left edge) and the title.
fn draw_descriptions<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    plot: &PlotBox,
    (x, y): (&Axis, &Axis),
    title: Option<&str>,
    mode: TextMode,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let desc_font = font(AXIS_DESC_PX);
    let (centre_x, centre_y) = ((plot.left + plot.right) / 2, (plot.top + plot.bottom) / 2);
    let place = Placement::at(HPos::Center, VPos::Top);
    draw_text(
        root,
        &x.desc,
        &desc_font,
        INK,
        place,
        (centre_x, plot.bottom + 36),
        mode,
    )?;
    let (area_x, area_y) = area.get_pixel_range();
    let place = Placement {
        h: HPos::Center,
        v: VPos::Top,
        upward: true,
    };
    draw_text(
        root,
        &y.desc,
        &desc_font,
        INK,
        place,
        (area_x.start + 6, centre_y),
        mode,
    )?;
    if let Some(title) = title {
        let place = Placement::at(HPos::Center, VPos::Top);
        draw_text(
            root,
            title,
            &bold_font(PANEL_TITLE_PX),
            INK,
            place,
            (centre_x, area_y.start + 10),
            mode,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_axis_covers_the_data_with_round_ticks() {
        let axis = Axis::nice(312.4, 987.0, 8, "kW");
        assert!(axis.range.0 <= 312.4 && axis.range.1 >= 987.0);
        assert_eq!(axis.label(axis.ticks[1]), "400");
        let small = Axis::nice(0.0, 0.37, 8, "%");
        assert_eq!(small.decimals, 2);
        assert_eq!(small.label(0.05), "0.05");
    }
}
