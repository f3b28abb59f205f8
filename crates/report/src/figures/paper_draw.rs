//! A paper-style line figure (what `paper_lines` plans), laid out and drawn: panels in a
//! row (or a grid of three columns), each with its ticks and axis descriptions at 8–9 pt,
//! the bands under the lines, and the legend in rows under the panels.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::draw::*;

/// One curve: the mean line and, with several seeds, the (x, min, max) band.
pub(crate) struct PaperSeries {
    pub(crate) colour: RGBColor,
    pub(crate) shape: Shape,
    /// Shifts the markers so that overlapping curves show all of theirs.
    pub(crate) rank: usize,
    pub(crate) mean: Vec<(f64, f64)>,
    pub(crate) band: Vec<(f64, f64, f64)>,
}

pub(crate) struct PaperPanel {
    /// The trace, when the figure has several panels.
    pub(crate) title: Option<String>,
    pub(crate) x: Axis,
    pub(crate) y: Axis,
    pub(crate) series: Vec<PaperSeries>,
}

/// A paper-style line figure, laid out at [`PAPER_DPI`].
pub(crate) struct PaperLinesFigure {
    pub(crate) size_px: (u32, u32),
    pub(crate) width_in: f64,
    pub(crate) caption: String,
    pub(crate) grid: (usize, usize),
    pub(crate) panel_height_px: u32,
    pub(crate) panels: Vec<PaperPanel>,
    pub(crate) marker_step_pct: f64,
    pub(crate) zero_line: bool,
    /// (label, colour, marker) in legend order.
    pub(crate) legend: Vec<(String, RGBColor, Shape)>,
    pub(crate) legend_grid: (usize, usize),
}

/// Band fill: the curve's colour at this opacity, light enough for overlaps to stay legible.
const BAND_OPACITY: f64 = 0.22;
/// Line width and marker radius in points.
const LINE_PT: f64 = 1.1;
const MARKER_PT: f64 = 2.1;
/// A legend swatch's line length in points.
const SWATCH_PT: f64 = 16.0;

fn px(pt: f64) -> i32 {
    pt_px(pt).round() as i32
}

/// Sizes the figure: 3.33 in wide for one panel, 7 in for more; panels about 3:4 high; the
/// legend rows as many as its entries need at the figure's width.
pub(crate) fn layout(
    panels: Vec<PaperPanel>,
    legend: Vec<(String, RGBColor, Shape)>,
    caption: String,
    zoom: bool,
    zero_line: bool,
) -> Result<PaperLinesFigure> {
    let cols = panels.len().clamp(1, 3);
    let rows = panels.len().div_ceil(cols);
    let width_in = if panels.len() == 1 {
        SINGLE_COLUMN_IN
    } else {
        DOUBLE_COLUMN_IN
    };
    let width = in_px(width_in);
    let panel_height_px =
        ((width as f64 / cols as f64) * if cols == 1 { 0.74 } else { 0.9 }) as u32;
    let text = paper_font(PAPER_TEXT_PT);
    let mut widest = 0;
    for (label, _, _) in &legend {
        widest = widest.max(text_width_px(label, &text)?);
    }
    let entry_px = widest + px(SWATCH_PT) + px(14.0);
    let legend_cols =
        ((width as i32 - px(8.0)) / entry_px.max(1)).clamp(1, legend.len().max(1) as i32) as usize;
    let legend_rows = legend.len().div_ceil(legend_cols);
    let height =
        rows as u32 * panel_height_px + legend_rows as u32 * legend_row_px() + px(6.0) as u32;
    Ok(PaperLinesFigure {
        size_px: (width, height),
        width_in,
        caption,
        grid: (rows, cols),
        panel_height_px,
        panels,
        marker_step_pct: if zoom { 5.0 } else { 10.0 },
        zero_line,
        legend,
        legend_grid: (legend_rows, legend_cols),
    })
}

fn legend_row_px() -> u32 {
    pt_px(PAPER_TEXT_PT * 1.55).round() as u32
}

impl PaperLinesFigure {
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        mode: TextMode,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let panels_height = self.grid.0 as u32 * self.panel_height_px;
        let (plots, legend) = root.split_vertically(panels_height);
        let areas = plots.split_evenly(self.grid);
        for (panel, area) in self.panels.iter().zip(&areas) {
            self.draw_panel(root, area, panel, mode)?;
        }
        self.draw_legend(root, &legend, mode)
    }

    fn draw_panel<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        area: &DrawingArea<DB, Shift>,
        panel: &PaperPanel,
        mode: TextMode,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let chart = paper_chart(root, area, panel, mode)?;
        if self.zero_line && panel.y.range.0 < 0.0 && panel.y.range.1 > 0.0 {
            let left = chart.backend_coord(&(panel.x.range.0, 0.0));
            let right = chart.backend_coord(&(panel.x.range.1, 0.0));
            draw_dashed_hline(root, left.0, right.0, left.1, SUBTLE_INK)?;
        }
        for series in &panel.series {
            if series.band.len() > 1 {
                let upper = series
                    .band
                    .iter()
                    .map(|&(x, _, hi)| chart.backend_coord(&(x, hi)));
                let lower = series
                    .band
                    .iter()
                    .rev()
                    .map(|&(x, lo, _)| chart.backend_coord(&(x, lo)));
                let fill = series.colour.mix(BAND_OPACITY).filled();
                root.draw(&Polygon::new(upper.chain(lower).collect::<Vec<_>>(), fill))?;
            }
        }
        for series in &panel.series {
            let points: Vec<(i32, i32)> =
                series.mean.iter().map(|p| chart.backend_coord(p)).collect();
            root.draw(&PathElement::new(
                points,
                series.colour.stroke_width(px(LINE_PT) as u32),
            ))?;
            let shift_pct = (series.rank % 5) as f64 * self.marker_step_pct / 5.0;
            for &(x, y) in &series.mean {
                let k = ((x - shift_pct) / self.marker_step_pct).round();
                if (x - shift_pct - k * self.marker_step_pct).abs() < 1e-6 {
                    let centre = chart.backend_coord(&(x, y));
                    draw_marker(
                        root,
                        series.shape,
                        centre,
                        pt_px(MARKER_PT),
                        series.colour,
                        series.colour,
                    )?;
                }
            }
        }
        Ok(())
    }

    fn draw_legend<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        area: &DrawingArea<DB, Shift>,
        mode: TextMode,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let (x_range, y_range) = area.get_pixel_range();
        let cols = self.legend_grid.1;
        let col_px = (x_range.end - x_range.start - px(8.0)) / cols as i32;
        let text = paper_font(PAPER_TEXT_PT);
        for (i, (label, colour, shape)) in self.legend.iter().enumerate() {
            let left = x_range.start + px(4.0) + (i % cols) as i32 * col_px;
            let y = y_range.start
                + px(3.0)
                + (i / cols) as i32 * legend_row_px() as i32
                + legend_row_px() as i32 / 2;
            let right = left + px(SWATCH_PT);
            root.draw(&PathElement::new(
                vec![(left, y), (right, y)],
                colour.stroke_width(px(LINE_PT) as u32),
            ))?;
            draw_marker(
                root,
                *shape,
                ((left + right) / 2, y),
                pt_px(MARKER_PT),
                *colour,
                *colour,
            )?;
            let place = Placement::at(HPos::Left, VPos::Center);
            draw_text(root, label, &text, INK, place, (right + px(4.0), y), mode)?;
        }
        Ok(())
    }
}

/// The chart of one panel: margins sized to its tick labels and descriptions, grid lines
/// and ticks at the axes' ticks, the axis descriptions, and the trace above when given.
fn paper_chart<'a, DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &'a DrawingArea<DB, Shift>,
    panel: &PaperPanel,
    mode: TextMode,
) -> Result<Chart<'a, DB>>
where
    DB::ErrorType: 'static,
{
    let text = paper_font(PAPER_TEXT_PT);
    let mut widest = 0;
    for &t in &panel.y.ticks {
        widest = widest.max(text_width_px(&panel.y.label(t), &text)?);
    }
    let top_margin = if panel.title.is_some() {
        line_px(PAPER_LABEL_PT) + px(4.0)
    } else {
        // The top tick's label is centred on the plot's top edge.
        px(3.0) + line_px(PAPER_TEXT_PT) / 2
    };
    let chart = ChartBuilder::on(area)
        .margin_top(top_margin)
        .margin_right(px(9.0))
        .margin_left(px(2.0))
        .x_label_area_size(px(5.0) + line_px(PAPER_TEXT_PT) + line_px(PAPER_LABEL_PT))
        .y_label_area_size(widest + px(5.0) + line_px(PAPER_LABEL_PT))
        .build_cartesian_2d(panel.x.coord(), panel.y.coord())?;
    let (left, bottom) = chart.backend_coord(&(panel.x.range.0, panel.y.range.0));
    let (right, top) = chart.backend_coord(&(panel.x.range.1, panel.y.range.1));
    let plot = (left, right, top, bottom);
    draw_paper_ticks(root, &chart, panel, plot, mode)?;
    draw_paper_descriptions(root, area, panel, plot, mode)?;
    Ok(chart)
}

/// The height of a line of `pt`-point text.
fn line_px(pt: f64) -> i32 {
    pt_px(pt * 1.25).round() as i32
}

/// Grid lines, tick marks and tick labels of both axes, then the axes' lines; `plot` is
/// (left, right, top, bottom) in pixels of the root.
fn draw_paper_ticks<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart<'_, DB>,
    panel: &PaperPanel,
    (left, right, top, bottom): (i32, i32, i32, i32),
    mode: TextMode,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let text = paper_font(PAPER_TEXT_PT);
    // 0.7 pt: the house style's 1 px grey line would vanish in print.
    let grid = PAPER_GRID_LINE.stroke_width(px(0.7) as u32);
    let axis = SUBTLE_INK.stroke_width(px(0.5) as u32);
    let tick = px(2.5);
    for &t in &panel.x.ticks {
        let x = chart.backend_coord(&(t, panel.y.range.0)).0;
        root.draw(&PathElement::new(vec![(x, top), (x, bottom)], grid))?;
        root.draw(&PathElement::new(
            vec![(x, bottom), (x, bottom + tick)],
            axis,
        ))?;
        let place = Placement::at(HPos::Center, VPos::Top);
        let at = (x, bottom + tick + px(1.5));
        draw_text(root, &panel.x.label(t), &text, INK, place, at, mode)?;
    }
    for &t in &panel.y.ticks {
        let y = chart.backend_coord(&(panel.x.range.0, t)).1;
        root.draw(&PathElement::new(vec![(left, y), (right, y)], grid))?;
        root.draw(&PathElement::new(vec![(left - tick, y), (left, y)], axis))?;
        let place = Placement::at(HPos::Right, VPos::Center);
        let at = (left - tick - px(1.5), y);
        draw_text(root, &panel.y.label(t), &text, INK, place, at, mode)?;
    }
    let frame = vec![(left, top), (left, bottom), (right, bottom)];
    root.draw(&PathElement::new(frame, axis))?;
    Ok(())
}

/// The axes' descriptions (x under the plot, kept inside the panel; y upward at the
/// panel's left edge) and the panel's title.
fn draw_paper_descriptions<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    panel: &PaperPanel,
    (left, right, top, bottom): (i32, i32, i32, i32),
    mode: TextMode,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let label = paper_font(PAPER_LABEL_PT);
    let (area_x, area_y) = area.get_pixel_range();
    // Centred under the plot unless that would run past the panel's right edge.
    let half = text_width_px(&panel.x.desc, &label)? / 2;
    let x_centre = ((left + right) / 2).min(area_x.end - px(2.0) - half);
    let below = Placement::at(HPos::Center, VPos::Bottom);
    let at = (x_centre, area_y.end - px(1.0));
    draw_text(root, &panel.x.desc, &label, INK, below, at, mode)?;
    let upward = Placement {
        h: HPos::Center,
        v: VPos::Top,
        upward: true,
    };
    let at = (area_x.start + px(1.0), (top + bottom) / 2);
    draw_text(root, &panel.y.desc, &label, INK, upward, at, mode)?;
    if let Some(title) = &panel.title {
        let place = Placement::at(HPos::Center, VPos::Top);
        let at = ((left + right) / 2, area_y.start + px(1.0));
        draw_text(root, title, &label, INK, place, at, mode)?;
    }
    Ok(())
}
