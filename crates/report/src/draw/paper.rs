//! The paper style's look: sizes in points at 300 pixels per inch, the embedded font under
//! its own name, and a colour-blind-safe palette with a fixed colour and marker per policy.
//!
//! Colours are Okabe and Ito's eight (Color Universal Design, 2008), which stay distinct
//! under the common colour-vision deficiencies; each built-in policy keeps one colour and
//! one marker in every figure, so a reader can tell policies apart in grey print too.

use plotters::prelude::*;

use super::Shape;

/// Pixels per inch of the paper style's canvas (its PNG is 300 dpi; its SVG and PDF state
/// the size in inches).
pub(crate) const PAPER_DPI: f64 = 300.0;
/// A single-column figure's width (the common two-column conference page).
pub(crate) const SINGLE_COLUMN_IN: f64 = 3.33;
/// A figure across both columns.
pub(crate) const DOUBLE_COLUMN_IN: f64 = 7.0;
/// Tick labels and legend text.
pub(crate) const PAPER_TEXT_PT: f64 = 8.0;
/// Axis descriptions and panel titles.
pub(crate) const PAPER_LABEL_PT: f64 = 9.0;

/// Pixels of the canvas for `pt` points.
pub(crate) fn pt_px(pt: f64) -> f64 {
    pt * PAPER_DPI / 72.0
}

/// Pixels of the canvas for `inches`.
pub(crate) fn in_px(inches: f64) -> u32 {
    (inches * PAPER_DPI).round() as u32
}

/// The font at `pt` points. plotters writes an SVG `font-size` of its size over 1.24 (and
/// rasterises at that size), so the size handed to it is scaled up by that factor.
pub(crate) fn paper_font(pt: f64) -> FontDesc<'static> {
    FontDesc::new(
        FontFamily::Name(super::EMBEDDED_FAMILY),
        pt_px(pt) * 1.24,
        FontStyle::Normal,
    )
}

/// Grid lines: a little darker than the house style's, as they are thinner in print.
pub(crate) const PAPER_GRID_LINE: RGBColor = RGBColor(215, 215, 215);

/// Okabe–Ito: black, orange, sky blue, bluish green, yellow, blue, vermillion, reddish
/// purple.
pub(crate) const OKABE_ITO: [RGBColor; 8] = [
    RGBColor(0, 0, 0),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 158, 115),
    RGBColor(240, 228, 66),
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(204, 121, 167),
];

/// The fixed (colour, marker) of each built-in policy and the shipped mix, by CLI name.
const FIXED: [(&str, usize, Shape); 8] = [
    ("fgd", 6, Shape::Circle),
    ("pwr", 5, Shape::Square),
    ("bestfit", 3, Shape::TriangleUp),
    ("pwr:200,fgd:800", 1, Shape::Diamond),
    ("dotprod", 7, Shape::TriangleDown),
    ("packing", 2, Shape::Pentagon),
    ("clustering", 0, Shape::TriangleUp),
    ("random", 0, Shape::Circle),
];

/// Colours other policies take in turn (yellow last: it is faint on white).
const OTHERS: [usize; 7] = [0, 2, 7, 1, 3, 5, 4];

/// The paper style of policy `name`; `other_index` numbers the policies without a fixed
/// style in a figure set, in natural order.
pub(crate) fn paper_style(name: &str, other_index: usize) -> (RGBColor, Shape) {
    if let Some((_, colour, shape)) = FIXED.iter().find(|(n, _, _)| *n == name) {
        return (OKABE_ITO[*colour], *shape);
    }
    let colour = OKABE_ITO[OTHERS[other_index % OTHERS.len()]];
    let shape = super::SHAPES[(other_index + 1) % super::SHAPES.len()];
    (colour, shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_fixed_styles() {
        assert_eq!(in_px(SINGLE_COLUMN_IN), 999);
        assert!((pt_px(8.0) - 33.33).abs() < 0.01);
        assert_eq!(paper_style("fgd", 0), (RGBColor(213, 94, 0), Shape::Circle));
        // Every fixed pair differs from every other.
        for (i, a) in FIXED.iter().enumerate() {
            for b in &FIXED[i + 1..] {
                assert!((a.1, a.2) != (b.1, b.2), "{} and {} look alike", a.0, b.0);
            }
        }
    }
}
