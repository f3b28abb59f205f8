//! The drawing kit every figure shares: text, colours, axes, legends and marks.
//!
//! What plotters does and what is done here:
//! - plotters: the SVG and bitmap backends, coordinate mapping (`ChartBuilder`,
//!   `Cartesian2d`, `backend_coord`), curves (`LineSeries`), primitive shapes, and
//!   rasterising each glyph from the registered DejaVu font.
//! - here, text layout: PNG text is placed glyph by glyph ([`TextMode::PerGlyph`]) from the
//!   font's own metrics, because plotters' rasteriser starts every glyph's ink at the pen
//!   and drops the left side bearing, opening gaps after letters like `l`. Tick labels,
//!   axis descriptions, titles and legends therefore go through [`draw_text`], never
//!   through plotters' mesh or legend (which would rasterise whole strings).
//! - here, ticks: an [`Axis`] chooses round ticks and their decimals once, and the grid
//!   lines, tick marks and labels are all drawn from that one list, in absolute pixels.
//!   plotters' `configure_mesh` could draw the lines, but its key points are hints, not a
//!   fixed list, and the SVG elements it writes differ: handing the lines back would change
//!   every figure's bytes for no visible gain, so it was not done.
//! - here, marks plotters has no element for: hatched and light bars, whiskers, crosses,
//!   dashed reference lines and legend swatches.

mod axes;
mod legend;
mod marks;
mod palette;
mod paper;
mod text;

pub(crate) use axes::*;
pub(crate) use legend::*;
pub(crate) use marks::*;
pub(crate) use palette::*;
pub(crate) use paper::*;
pub(crate) use text::*;
