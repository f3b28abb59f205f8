//! Marks drawn in pixels: bars (solid, hatched, light), whiskers, crosses, dashed
//! reference lines, and a figure's header.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::*;

/// How a bar is drawn: how much the solver proved about a gap, strongest first — solid
/// (proven optimal), hatched (an interval: bound and incumbent not closed; the hatching tells
/// why: `\` the requested MIP gap, `—` the LP bound with the integer gap open, `/` the time
/// limit), light (a relaxation's bound against the heuristic's own placement).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum BarStatus {
    Optimal,
    GapLimit,
    LpBound,
    TimeLimit,
    Relaxation,
}

/// Direction of a bar's hatching lines.
#[derive(Clone, Copy)]
enum Hatch {
    /// `/`: lines x + y = c.
    Rising,
    /// `\`: lines x − y = c.
    Falling,
    /// `—`: lines y = c.
    Level,
}

impl BarStatus {
    fn hatch(self) -> Option<Hatch> {
        match self {
            BarStatus::Optimal | BarStatus::Relaxation => None,
            BarStatus::GapLimit => Some(Hatch::Falling),
            BarStatus::LpBound => Some(Hatch::Level),
            BarStatus::TimeLimit => Some(Hatch::Rising),
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
    if status == BarStatus::Optimal {
        area.draw(&Rectangle::new([(x0, y0), (x1, y1)], colour.filled()))?;
        return Ok(());
    }
    let light = if status == BarStatus::Relaxation {
        0.6
    } else {
        0.72
    };
    area.draw(&Rectangle::new(
        [(x0, y0), (x1, y1)],
        lighten(colour, light).filled(),
    ))?;
    if let Some(hatch) = status.hatch() {
        for line in hatch_lines(hatch, (x0, y0), (x1, y1)) {
            area.draw(&PathElement::new(line, colour.stroke_width(1)))?;
        }
    }
    area.draw(&Rectangle::new(
        [(x0, y0), (x1, y1)],
        colour.stroke_width(1),
    ))?;
    Ok(())
}

/// The hatching lines of a box, 7 px apart, clipped to it.
fn hatch_lines(hatch: Hatch, (x0, y0): (i32, i32), (x1, y1): (i32, i32)) -> Vec<Vec<(i32, i32)>> {
    let spacing = 7;
    let mut lines = Vec::new();
    match hatch {
        Hatch::Level => {
            let mut y = y1 - spacing / 2;
            while y > y0 {
                lines.push(vec![(x0, y), (x1, y)]);
                y -= spacing;
            }
        }
        Hatch::Rising => {
            // x + y = c from the top left corner on.
            let mut c = x0 + y0 + spacing / 2;
            while c < x1 + y1 {
                let (start_x, end_x) = (x0.max(c - y1), x1.min(c - y0));
                if start_x < end_x {
                    lines.push(vec![(start_x, c - start_x), (end_x, c - end_x)]);
                }
                c += spacing;
            }
        }
        Hatch::Falling => {
            // x − y = c from the bottom left corner on.
            let mut c = x0 - y1 + spacing / 2;
            while c < x1 - y0 {
                let (start_x, end_x) = (x0.max(c + y0), x1.min(c + y1));
                if start_x < end_x {
                    lines.push(vec![(start_x, start_x - c), (end_x, end_x - c)]);
                }
                c += spacing;
            }
        }
    }
    lines
}

/// An ink line through `points`, `width_px` wide.
fn ink_line<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    points: Vec<(i32, i32)>,
    width_px: u32,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    area.draw(&PathElement::new(points, INK.stroke_width(width_px)))?;
    Ok(())
}

/// A vertical whisker from `y_low` up to `y_high` with a cap at each end.
pub(crate) fn draw_whisker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    x: i32,
    y_low: i32,
    y_high: i32,
    cap_half_px: i32,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    ink_line(area, vec![(x, y_low), (x, y_high)], 2)?;
    let cap = |y| vec![(x - cap_half_px, y), (x + cap_half_px, y)];
    ink_line(area, cap(y_high), 2)?;
    ink_line(area, cap(y_low), 1)
}

/// The range of a bar's seeds: a thin line from `y_low` up to `y_high` with a short tick at
/// each end, or an arrowhead at the top where the range goes beyond the axis (`beyond`).
pub(crate) fn draw_seed_range<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    x: i32,
    (y_low, y_high): (i32, i32),
    beyond: bool,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    const TICK_HALF_PX: i32 = 3;
    ink_line(area, vec![(x, y_low), (x, y_high)], 1)?;
    ink_line(
        area,
        vec![(x - TICK_HALF_PX, y_low), (x + TICK_HALF_PX, y_low)],
        1,
    )?;
    if beyond {
        area.draw(&Polygon::new(
            vec![(x - 4, y_high + 6), (x + 4, y_high + 6), (x, y_high - 2)],
            INK.filled(),
        ))?;
    } else {
        ink_line(
            area,
            vec![(x - TICK_HALF_PX, y_high), (x + TICK_HALF_PX, y_high)],
            1,
        )?;
    }
    Ok(())
}

/// A whisker too long for the axis: from `y_low` past the axis top `y_cut` up to `y_end`,
/// broken at the axis top by two slanted strokes (the axis does not reach its value, which
/// is written above it).
pub(crate) fn draw_cut_whisker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    x: i32,
    (y_low, y_cut, y_end): (i32, i32, i32),
    cap_half_px: i32,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    ink_line(area, vec![(x, y_low), (x, y_end)], 2)?;
    ink_line(
        area,
        vec![(x - cap_half_px, y_low), (x + cap_half_px, y_low)],
        1,
    )?;
    // The break: a white gap between two strokes slanting up to the right.
    let half = cap_half_px.max(4) + 1;
    area.draw(&Polygon::new(
        vec![
            (x - half, y_cut + 1),
            (x + half, y_cut - 3),
            (x + half, y_cut - 8),
            (x - half, y_cut - 4),
        ],
        WHITE.filled(),
    ))?;
    for dy in [0, -6] {
        ink_line(
            area,
            vec![(x - half, y_cut + 1 + dy), (x + half, y_cut - 3 + dy)],
            1,
        )?;
    }
    Ok(())
}

/// A gap with no finite upper end: a dashed line from `y_low` up to `y_top`, topped by
/// an `∞` of `infinity_px` whose baseline sits at `y_top`.
pub(crate) fn draw_unbounded<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    x: i32,
    (y_low, y_top): (i32, i32),
    infinity_px: f64,
    mode: TextMode,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let mut y = y_low;
    while y > y_top {
        ink_line(area, vec![(x, y), (x, (y - 5).max(y_top))], 2)?;
        y -= 9;
    }
    draw_text(
        area,
        "∞",
        &bold_font(infinity_px),
        INK,
        Placement::at(HPos::Center, VPos::Bottom),
        (x, y_top + 2),
        mode,
    )?;
    Ok(())
}

/// Size of the `∞` that tops an unbounded gap in a plot.
pub(crate) const INFINITY_PX: f64 = 26.0;

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
