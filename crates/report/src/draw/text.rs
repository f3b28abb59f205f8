//! Fonts, sizes, ink colours and text layout: the embedded DejaVu Sans, its glyph metrics
//! read from the font tables, and [`draw_text`], which places PNG text glyph by glyph.

use std::collections::HashMap;
use std::sync::OnceLock;

use anyhow::{anyhow, bail, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The family name DejaVu Sans declares in its `name` table: the paper style's SVGs name it,
/// so the PDF converter (and any viewer with the font) resolves it.
pub(crate) const EMBEDDED_FAMILY: &str = "DejaVu Sans";

/// Registers the embedded DejaVu Sans with plotters, as the generic `sans-serif` the default
/// style names and under its own name for the paper style.
pub(crate) fn ensure_fonts() -> Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        ["sans-serif", EMBEDDED_FAMILY].iter().all(|family| {
            plotters::style::register_font(family, FontStyle::Normal, dejavu::sans::regular())
                .is_ok()
                && plotters::style::register_font(family, FontStyle::Bold, dejavu::sans::bold())
                    .is_ok()
        })
    });
    if ok {
        Ok(())
    } else {
        bail!("cannot load the embedded DejaVu Sans font")
    }
}

pub(crate) const TITLE_PX: f64 = 24.0;
pub(crate) const SUBTITLE_PX: f64 = 15.0;
pub(crate) const PANEL_TITLE_PX: f64 = 18.0;
pub(crate) const AXIS_DESC_PX: f64 = 16.0;
pub(crate) const TICK_PX: f64 = 14.0;
pub(crate) const LEGEND_PX: f64 = 15.0;
pub(crate) const POINT_LABEL_PX: f64 = 14.0;
/// Height of the title block above the panels.
pub(crate) const HEADER_PX: u32 = 76;
/// Height of one legend row.
pub(crate) const LEGEND_ROW_PX: i32 = 26;
/// Width of a legend swatch.
pub(crate) const SWATCH_PX: i32 = 36;

pub(crate) const INK: RGBColor = RGBColor(30, 30, 30);
pub(crate) const SUBTLE_INK: RGBColor = RGBColor(80, 80, 80);
pub(crate) const GRID_LINE: RGBColor = RGBColor(222, 222, 222);
/// Colour of status swatches in legends (they apply to every policy).
pub(crate) const NEUTRAL: RGBColor = RGBColor(90, 90, 90);

pub(crate) fn font(size_px: f64) -> FontDesc<'static> {
    FontDesc::new(FontFamily::SansSerif, size_px, FontStyle::Normal)
}

pub(crate) fn bold_font(size_px: f64) -> FontDesc<'static> {
    FontDesc::new(FontFamily::SansSerif, size_px, FontStyle::Bold)
}

/// Width of `text` in pixels in `font`, as [`draw_text`] lays it out.
pub(crate) fn text_width_px(text: &str, font: &FontDesc) -> Result<i32> {
    if let Some(metrics) = FontMetrics::of(font.get_style()) {
        let scale = font.get_size() / metrics.height_units;
        let units: f64 = text
            .chars()
            .map(|c| f64::from(metrics.char_metrics(c).0))
            .sum();
        return Ok((units * scale).ceil() as i32);
    }
    let (w, _) = font
        .box_size(text)
        .map_err(|e| anyhow!("cannot measure text {text:?}: {e:?}"))?;
    Ok(w as i32)
}

/// How text is handed to the backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextMode {
    /// One text element per string (SVG: the viewer lays the glyphs out).
    Whole,
    /// One glyph at a time, each at its pen position plus its left side bearing. plotters'
    /// glyph rasteriser starts every glyph's ink at the pen, dropping the side bearing, which
    /// opens visible gaps after letters like `l`; placing glyphs one by one corrects that.
    PerGlyph,
}

/// Horizontal metrics of the embedded DejaVu font, read from its `hhea`, `OS/2`, `cmap`
/// (format 4) and `hmtx` tables.
pub(crate) struct FontMetrics {
    pub(crate) data: &'static [u8],
    /// Offset of the format-4 `cmap` subtable.
    pub(crate) cmap: usize,
    pub(crate) hmtx: usize,
    pub(crate) h_metric_count: usize,
    /// Ascent minus descent in font units: a font size in pixels spans this many units.
    pub(crate) height_units: f64,
}

pub(crate) fn be_u16(data: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*data.get(at)?, *data.get(at + 1)?]))
}

pub(crate) fn be_i16(data: &[u8], at: usize) -> Option<i16> {
    be_u16(data, at).map(|v| v as i16)
}

pub(crate) fn be_u32(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes([
        *data.get(at)?,
        *data.get(at + 1)?,
        *data.get(at + 2)?,
        *data.get(at + 3)?,
    ]))
}

impl FontMetrics {
    /// The metrics of the font registered for `style` (parsed once).
    pub(crate) fn of(style: FontStyle) -> Option<&'static FontMetrics> {
        static REGULAR: OnceLock<Option<FontMetrics>> = OnceLock::new();
        static BOLD: OnceLock<Option<FontMetrics>> = OnceLock::new();
        match style {
            FontStyle::Bold => BOLD
                .get_or_init(|| FontMetrics::parse(dejavu::sans::bold()))
                .as_ref(),
            _ => REGULAR
                .get_or_init(|| FontMetrics::parse(dejavu::sans::regular()))
                .as_ref(),
        }
    }

    pub(crate) fn parse(data: &'static [u8]) -> Option<FontMetrics> {
        let table_count = usize::from(be_u16(data, 4)?);
        let mut tables = HashMap::new();
        for i in 0..table_count {
            let record = 12 + 16 * i;
            let tag = data.get(record..record + 4)?;
            tables.insert(tag, be_u32(data, record + 8)? as usize);
        }
        let hhea = *tables.get(&b"hhea"[..])?;
        let (mut ascent, mut descent) = (
            f64::from(be_i16(data, hhea + 4)?),
            f64::from(be_i16(data, hhea + 6)?),
        );
        if let Some(&os2) = tables.get(&b"OS/2"[..]) {
            // USE_TYPO_METRICS: the typographic ascent and descent define the line height.
            if be_u16(data, os2 + 62)? & (1 << 7) != 0 {
                ascent = f64::from(be_i16(data, os2 + 68)?);
                descent = f64::from(be_i16(data, os2 + 70)?);
            }
        }
        let h_metric_count = usize::from(be_u16(data, hhea + 34)?);
        let hmtx = *tables.get(&b"hmtx"[..])?;
        let cmap_table = *tables.get(&b"cmap"[..])?;
        let mut cmap = None;
        for i in 0..usize::from(be_u16(data, cmap_table + 2)?) {
            let record = cmap_table + 4 + 8 * i;
            let (platform, encoding) = (be_u16(data, record)?, be_u16(data, record + 2)?);
            let offset = cmap_table + be_u32(data, record + 4)? as usize;
            if (platform, encoding) == (3, 1) && be_u16(data, offset)? == 4 {
                cmap = Some(offset);
            }
        }
        let height_units = ascent - descent;
        (height_units > 0.0 && h_metric_count > 0).then_some(FontMetrics {
            data,
            cmap: cmap?,
            hmtx,
            h_metric_count,
            height_units,
        })
    }

    /// The glyph index of `c` (0, the missing glyph, when the font lacks it).
    pub(crate) fn glyph(&self, c: char) -> u16 {
        self.lookup(c).unwrap_or(0)
    }

    pub(crate) fn lookup(&self, c: char) -> Option<u16> {
        let code = u16::try_from(u32::from(c)).ok()?;
        let (data, table) = (self.data, self.cmap);
        let segments = usize::from(be_u16(data, table + 6)? / 2);
        let ends = table + 14;
        let starts = ends + 2 * segments + 2;
        let deltas = starts + 2 * segments;
        let range_offsets = deltas + 2 * segments;
        for i in 0..segments {
            if be_u16(data, ends + 2 * i)? < code {
                continue;
            }
            let start = be_u16(data, starts + 2 * i)?;
            if start > code {
                return None;
            }
            let delta = be_u16(data, deltas + 2 * i)?;
            let range_offset = usize::from(be_u16(data, range_offsets + 2 * i)?);
            if range_offset == 0 {
                return Some(code.wrapping_add(delta));
            }
            let at = range_offsets + 2 * i + range_offset + 2 * usize::from(code - start);
            let glyph = be_u16(data, at)?;
            return (glyph != 0).then(|| glyph.wrapping_add(delta));
        }
        None
    }

    /// Advance width and left side bearing of `c`, in font units.
    pub(crate) fn char_metrics(&self, c: char) -> (u16, i16) {
        let glyph = usize::from(self.glyph(c));
        let data = self.data;
        let last = self.h_metric_count - 1;
        let advance = be_u16(data, self.hmtx + 4 * glyph.min(last)).unwrap_or(0);
        let bearing = if glyph <= last {
            be_i16(data, self.hmtx + 4 * glyph + 2)
        } else {
            be_i16(
                data,
                self.hmtx + 4 * self.h_metric_count + 2 * (glyph - self.h_metric_count),
            )
        };
        (advance, bearing.unwrap_or(0))
    }
}

/// Where a text is anchored and which way it runs.
#[derive(Clone, Copy)]
pub(crate) struct Placement {
    pub(crate) h: HPos,
    pub(crate) v: VPos,
    /// Reads bottom to top (rotated a quarter turn anticlockwise).
    pub(crate) upward: bool,
}

impl Placement {
    pub(crate) const fn at(h: HPos, v: VPos) -> Self {
        Placement {
            h,
            v,
            upward: false,
        }
    }
}

/// Draws `text` anchored at `pos` (area pixels) in `font` and `colour`.
pub(crate) fn draw_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    font: &FontDesc<'static>,
    colour: RGBColor,
    place: Placement,
    pos: (i32, i32),
    mode: TextMode,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let font = if place.upward {
        font.transform(FontTransform::Rotate270)
    } else {
        font.clone()
    };
    let metrics = FontMetrics::of(font.get_style());
    let (TextMode::PerGlyph, Some(metrics)) = (mode, metrics) else {
        area.draw_text(
            text,
            &font.color(&colour).pos(Pos::new(place.h, place.v)),
            pos,
        )?;
        return Ok(());
    };
    let scale = font.get_size() / metrics.height_units;
    let mut pen = 0.0;
    let mut glyphs = Vec::with_capacity(text.len());
    for c in text.chars() {
        let (advance, bearing) = metrics.char_metrics(c);
        if !c.is_whitespace() {
            glyphs.push((c, pen + f64::from(bearing) * scale));
        }
        pen += f64::from(advance) * scale;
    }
    let start = match place.h {
        HPos::Left => 0.0,
        HPos::Center => -pen / 2.0,
        HPos::Right => -pen,
    };
    let style = font.color(&colour).pos(Pos::new(HPos::Left, place.v));
    let mut buffer = [0u8; 4];
    for (c, offset) in glyphs {
        let along = (start + offset).round() as i32;
        let at = if place.upward {
            (pos.0, pos.1 - along)
        } else {
            (pos.0 + along, pos.1)
        };
        area.draw_text(c.encode_utf8(&mut buffer), &style, at)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glyph_metrics_agree_with_the_rasteriser_layout() {
        ensure_fonts().unwrap();
        for (font, text) in [
            (font(16.0), "arrived workload (% of cluster GPU capacity)"),
            (bold_font(24.0), "GPU allocation vs arrived workload"),
            (font(14.0), "pwr:200,fgd:800 — ε ×"),
        ] {
            let ours = text_width_px(text, &font).unwrap();
            let (theirs, _) = font.box_size(text).unwrap();
            let diff = (ours - theirs as i32).abs();
            assert!(
                diff <= 2 + ours / 50,
                "{text:?}: {ours} px vs plotters' {theirs} px"
            );
        }
        let metrics = FontMetrics::of(FontStyle::Normal).unwrap();
        assert_ne!(metrics.glyph('a'), 0);
        assert_ne!(metrics.glyph('ε'), 0);
        // `l` has a wide left side bearing: the reason for per-glyph placement.
        assert!(metrics.char_metrics('l').1 > 100);
    }
}
