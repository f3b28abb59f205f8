//! Legends: a column of swatches (lines, markers, bars, references) with their labels.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::*;

/// What a legend row shows before its text.
#[derive(Debug, Clone)]
pub(crate) enum Swatch {
    /// A bold heading row without swatch.
    Heading,
    /// A policy's line with its marker.
    Line(PolicyStyle),
    /// A policy's marker alone.
    Marker(PolicyStyle),
    /// A bar in a policy's colour.
    Bar(RGBColor, BarStatus),
    /// A whisker from the proven to the largest possible gap.
    Whisker,
    /// A whisker cut at the axis top, its value written above it.
    CutWhisker,
    /// A dashed line topped by `∞`: no finite upper bound.
    Unbounded,
    /// A thin line beside a bar: the range of its seeds' gaps.
    SeedRange,
    /// The cross marking a slot without any usable row.
    Missing,
    /// An exact front: its line colour, marker and whether the marker is filled.
    Front(RGBColor, bool),
    /// A point of an exact front alone: its colour, marker shape and whether it is filled.
    FrontPoint(RGBColor, Shape, bool),
    /// A dashed reference line.
    Reference,
    /// A front's proven bound: a dashed line in its colour.
    Bound(RGBColor),
}

#[derive(Debug, Clone)]
pub(crate) struct LegendEntry {
    pub(crate) swatch: Swatch,
    pub(crate) label: String,
}

impl LegendEntry {
    pub(crate) fn new(swatch: Swatch, label: impl Into<String>) -> Self {
        LegendEntry {
            swatch,
            label: label.into(),
        }
    }
}

/// Width of the legend column for `entries`.
pub(crate) fn legend_width_px(entries: &[LegendEntry]) -> Result<u32> {
    let mut widest = 0;
    for entry in entries {
        let font = match entry.swatch {
            Swatch::Heading => bold_font(LEGEND_PX),
            _ => font(LEGEND_PX),
        };
        let indent = if matches!(entry.swatch, Swatch::Heading) {
            0
        } else {
            SWATCH_PX + 10
        };
        widest = widest.max(indent + text_width_px(&entry.label, &font)?);
    }
    // Left padding (12) plus room on the right.
    Ok((widest + 40).max(170) as u32)
}

pub(crate) fn legend_height_px(entries: &[LegendEntry]) -> u32 {
    (entries.len() as i32 * LEGEND_ROW_PX + 24) as u32
}

pub(crate) fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[LegendEntry],
    mode: TextMode,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let left = 12;
    let mut top = 14;
    for entry in entries {
        let middle = top + LEGEND_ROW_PX / 2;
        let place = Placement::at(HPos::Left, VPos::Center);
        if matches!(entry.swatch, Swatch::Heading) {
            draw_text(
                area,
                &entry.label,
                &bold_font(LEGEND_PX),
                INK,
                place,
                (left, middle),
                mode,
            )?;
        } else {
            draw_swatch(area, &entry.swatch, (left, middle), mode)?;
            let at = (left + SWATCH_PX + 10, middle);
            draw_text(area, &entry.label, &font(LEGEND_PX), INK, place, at, mode)?;
        }
        top += LEGEND_ROW_PX;
    }
    Ok(())
}

/// Draws `swatch` in the box starting at `left` and centred on `middle` (area pixels).
pub(crate) fn draw_swatch<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    swatch: &Swatch,
    (left, middle): (i32, i32),
    mode: TextMode,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let right = left + SWATCH_PX;
    let centre = (left + SWATCH_PX / 2, middle);
    match swatch {
        Swatch::Heading => {}
        Swatch::Line(style) => {
            area.draw(&PathElement::new(
                vec![(left, middle), (right, middle)],
                style.colour.stroke_width(3),
            ))?;
            draw_marker(area, style.shape, centre, 5.0, style.colour, style.colour)?;
        }
        Swatch::Marker(style) => draw_marker(area, style.shape, centre, 6.0, style.colour, INK)?,
        Swatch::Bar(colour, status) => draw_bar(
            area,
            (left + 4, middle - 8),
            (right - 4, middle + 8),
            *colour,
            *status,
        )?,
        Swatch::Whisker => draw_whisker(area, centre.0, middle + 9, middle - 9, 7)?,
        Swatch::CutWhisker => {
            draw_cut_whisker(area, centre.0, (middle + 10, middle - 2, middle - 11), 7)?;
        }
        // Smaller than in the plot, so that it stays within its legend row.
        Swatch::Unbounded => draw_unbounded(area, centre.0, (middle + 11, middle + 3), 16.0, mode)?,
        Swatch::SeedRange => draw_seed_range(area, centre.0, (middle + 9, middle - 9), false)?,
        Swatch::Missing => draw_cross(area, centre, 6)?,
        Swatch::Front(colour, filled) => {
            area.draw(&PathElement::new(
                vec![(left, middle), (right, middle)],
                colour.stroke_width(2),
            ))?;
            let fill = if *filled { *colour } else { WHITE };
            draw_marker(area, Shape::Circle, centre, 5.0, fill, *colour)?;
        }
        Swatch::FrontPoint(colour, shape, filled) => {
            let fill = if *filled { *colour } else { WHITE };
            draw_marker(area, *shape, centre, 5.0, fill, *colour)?;
        }
        Swatch::Reference => draw_dashed_hline(area, left, right, middle, SUBTLE_INK)?,
        Swatch::Bound(colour) => draw_dashed_hline(area, left, right, middle, *colour)?,
    }
    Ok(())
}

/// A filled marker with an outline.
pub(crate) fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    shape: Shape,
    centre: (i32, i32),
    radius_px: f64,
    fill: RGBColor,
    outline: RGBColor,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let mut points = shape.polygon(centre, radius_px);
    area.draw(&Polygon::new(points.clone(), fill.filled()))?;
    points.push(points[0]);
    area.draw(&PathElement::new(
        points,
        outline.stroke_width(if fill == outline { 1 } else { 2 }),
    ))?;
    Ok(())
}

/// Every figure's frame: the header across the top, the legend down the right
/// (`legend_width_px` wide); returns the area left for the plots.
pub(crate) fn frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    subtitle: &str,
    legend: &[LegendEntry],
    legend_width_px: u32,
    mode: TextMode,
) -> Result<DrawingArea<DB, Shift>>
where
    DB::ErrorType: 'static,
{
    let (width, _) = root.dim_in_pixel();
    let (header, body) = root.split_vertically(HEADER_PX);
    draw_header(&header, title, subtitle, mode)?;
    let (plots, legend_area) = body.split_horizontally(width - legend_width_px);
    draw_legend(&legend_area, legend, mode)?;
    Ok(plots)
}
