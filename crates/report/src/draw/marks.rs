//! Marks drawn in pixels: bars (solid, hatched, light), whiskers, crosses, dashed
//! reference lines, and a figure's header.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::*;

/// How a bar is drawn: how much the solver proved about a gap, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum BarStatus {
    Optimal,
    TimeLimit,
    Relaxation,
}

impl BarStatus {
    pub(crate) fn legend(self) -> &'static str {
        match self {
            BarStatus::Optimal => "solved to optimality (solid)",
            BarStatus::TimeLimit => "time limit: bound not closed (hatched)",
            BarStatus::Relaxation => "LP-relaxation bound only (light)",
        }
    }
}

/// A bar between two pixel corners, styled by the solver status.
pub(crate) fn draw_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x0, y0): (i32, i32),
    (x1, y1): (i32, i32),
    colour: RGBColor,
    status: BarStatus,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let (x0, x1) = (x0.min(x1), x0.max(x1));
    let (y0, y1) = (y0.min(y1), y0.max(y1));
    match status {
        BarStatus::Optimal => {
            area.draw(&Rectangle::new([(x0, y0), (x1, y1)], colour.filled()))?;
        }
        BarStatus::TimeLimit | BarStatus::Relaxation => {
            let light = if status == BarStatus::TimeLimit {
                0.72
            } else {
                0.6
            };
            area.draw(&Rectangle::new(
                [(x0, y0), (x1, y1)],
                lighten(colour, light).filled(),
            ))?;
            if status == BarStatus::TimeLimit {
                // Diagonal hatching: lines x + y = c, clipped to the bar.
                let spacing = 7;
                let mut c = x0 + y0 + spacing / 2;
                while c < x1 + y1 {
                    let start_x = x0.max(c - y1);
                    let end_x = x1.min(c - y0);
                    if start_x < end_x {
                        area.draw(&PathElement::new(
                            vec![(start_x, c - start_x), (end_x, c - end_x)],
                            colour.stroke_width(1),
                        ))?;
                    }
                    c += spacing;
                }
            }
            area.draw(&Rectangle::new(
                [(x0, y0), (x1, y1)],
                colour.stroke_width(1),
            ))?;
        }
    }
    Ok(())
}

/// A vertical whisker from `y_low` up to `y_high` with a cap (or an arrow head if
/// `unbounded`).
pub(crate) fn draw_whisker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    x: i32,
    y_low: i32,
    y_high: i32,
    cap_half_px: i32,
    unbounded: bool,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    area.draw(&PathElement::new(
        vec![(x, y_low), (x, y_high)],
        INK.stroke_width(2),
    ))?;
    if unbounded {
        area.draw(&Polygon::new(
            vec![(x, y_high - 2), (x - 5, y_high + 7), (x + 5, y_high + 7)],
            INK.filled(),
        ))?;
    } else {
        area.draw(&PathElement::new(
            vec![(x - cap_half_px, y_high), (x + cap_half_px, y_high)],
            INK.stroke_width(2),
        ))?;
        area.draw(&PathElement::new(
            vec![(x - cap_half_px, y_low), (x + cap_half_px, y_low)],
            INK.stroke_width(1),
        ))?;
    }
    Ok(())
}

pub(crate) fn draw_cross<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    half_px: i32,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let style = SUBTLE_INK.stroke_width(2);
    area.draw(&PathElement::new(
        vec![(x - half_px, y - half_px), (x + half_px, y + half_px)],
        style,
    ))?;
    area.draw(&PathElement::new(
        vec![(x - half_px, y + half_px), (x + half_px, y - half_px)],
        style,
    ))?;
    Ok(())
}

pub(crate) fn draw_dashed_hline<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    x0: i32,
    x1: i32,
    y: i32,
    colour: RGBColor,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let mut x = x0;
    while x < x1 {
        area.draw(&PathElement::new(
            vec![(x, y), (x1.min(x + 6), y)],
            colour.stroke_width(1),
        ))?;
        x += 10;
    }
    Ok(())
}

/// The title (bold, centred) and a subtitle line of a figure.
pub(crate) fn draw_header<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    subtitle: &str,
    mode: TextMode,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let (width, _) = area.dim_in_pixel();
    let centre = width as i32 / 2;
    let place = Placement::at(HPos::Center, VPos::Top);
    draw_text(
        area,
        title,
        &bold_font(TITLE_PX),
        INK,
        place,
        (centre, 12),
        mode,
    )?;
    draw_text(
        area,
        subtitle,
        &font(SUBTITLE_PX),
        SUBTLE_INK,
        place,
        (centre, 48),
        mode,
    )?;
    Ok(())
}

/// Width a header needs so that neither line is clipped.
pub(crate) fn header_width_px(title: &str, subtitle: &str) -> Result<u32> {
    let title_px = text_width_px(title, &bold_font(TITLE_PX))?;
    let subtitle_px = text_width_px(subtitle, &font(SUBTITLE_PX))?;
    Ok((title_px.max(subtitle_px) + 40) as u32)
}
