//! Every figure as a PDF: its SVG parsed by `usvg` and written by `svg2pdf`, vector
//! throughout, with the glyphs it uses embedded as a font subset.
//!
//! The font is the one the figures are laid out with, DejaVu Sans (regular and bold, from
//! the `dejavu` crate that the PNGs already rasterise; DejaVu's licence is the Bitstream
//! Vera licence with public-domain changes, free to embed and redistribute). It is the only
//! font in the database `usvg` resolves against, under its own name and as the generic
//! `sans-serif` the default style's SVGs name: no system font is ever looked up, so a PDF is
//! the same on every machine. One SVG pixel is a CSS pixel, 1/96 inch (the paper style's
//! SVGs state their size in inches).

use std::sync::{Arc, OnceLock};

use anyhow::{anyhow, Result};
use svg2pdf::usvg;

use crate::draw::EMBEDDED_FAMILY;

/// CSS pixels per inch: how `usvg` and the PDF page agree on a figure's printed size.
const CSS_PX_PER_INCH: f32 = 96.0;

/// The `usvg` options with the embedded fonts loaded (built once).
fn options() -> &'static usvg::Options<'static> {
    static OPTIONS: OnceLock<usvg::Options<'static>> = OnceLock::new();
    OPTIONS.get_or_init(|| {
        let mut fonts = usvg::fontdb::Database::new();
        fonts.load_font_data(dejavu::sans::regular().to_vec());
        fonts.load_font_data(dejavu::sans::bold().to_vec());
        fonts.set_sans_serif_family(EMBEDDED_FAMILY);
        usvg::Options {
            font_family: EMBEDDED_FAMILY.to_string(),
            fontdb: Arc::new(fonts),
            ..usvg::Options::default()
        }
    })
}

/// The PDF of an SVG figure: one page the figure's size, text as embedded glyphs.
pub(crate) fn svg_to_pdf(svg: &str) -> Result<Vec<u8>> {
    let tree = usvg::Tree::from_str(svg, options())
        .map_err(|e| anyhow!("cannot read the figure's SVG for its PDF: {e}"))?;
    let page = svg2pdf::PageOptions {
        dpi: CSS_PX_PER_INCH,
    };
    let pdf = svg2pdf::to_pdf(&tree, svg2pdf::ConversionOptions::default(), page)
        .map_err(|e| anyhow!("cannot convert the figure to PDF: {e}"))?;
    super::pdf_canonical::canonical(&pdf)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SVG: &str = r##"<svg width="192" height="96" viewBox="0 0 192 96" xmlns="http://www.w3.org/2000/svg">
<rect x="0" y="0" width="192" height="96" fill="#FFFFFF"/>
<text x="10" y="40" font-family="sans-serif" font-size="20" fill="#1E1E1E">allocated GPU</text>
<text x="10" y="80" font-family="sans-serif" font-size="20" font-weight="bold">PWR+FGD</text>
</svg>"##;

    /// The page is the figure's size at 96 px per inch (192 × 96 px: 144 × 72 pt), and both
    /// DejaVu faces are embedded as font programs.
    #[test]
    fn a_figure_becomes_one_page_of_its_size_with_its_fonts_embedded() {
        let pdf = svg_to_pdf(SVG).unwrap();
        let text = String::from_utf8_lossy(&pdf);
        assert!(text.starts_with("%PDF-"));
        assert!(text.contains("/MediaBox [0 0 144 72]"), "{text}");
        assert!(text.contains("DejaVuSans-Bold"));
        assert!(text.contains("/FontFile2"));
        assert_eq!(
            text.matches("/FontFile2").count(),
            2,
            "one font program per face"
        );
        // svg2pdf's hash maps are seeded afresh for every conversion.
        for _ in 0..8 {
            assert_eq!(
                pdf,
                svg_to_pdf(SVG).unwrap(),
                "the same SVG gives the same bytes"
            );
        }
    }
}
