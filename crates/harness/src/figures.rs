//! Paper-style figures drawn from the results CSVs alone (nothing is re-run).
//!
//! [`draw_all`] reads `mean_grid.csv`, `gaps.csv` and `pareto.csv` from a results folder
//! and writes every figure those files support, as SVG and PNG, into its `figures/`
//! subfolder:
//!
//! - `alloc_vs_arrived_<family>` (and `_zoom` on 80–130 % arrived), `power_vs_arrived_<family>`,
//!   `power_saving_vs_fgd_<family>`, `frag_ratio_vs_arrived_<family>`: one panel per trace;
//! - `gaps_<trace>_<objective>`: proven gap bars with whiskers up to the largest possible gap;
//! - `pareto_<trace>_<checkpoint>`: the exact power/fragmentation front and the policies.
//!
//! Every policy has one colour and marker in every figure of a folder: the canonical
//! policies have fixed ones, mixes take the next ones in name order. Text is drawn with the
//! embedded DejaVu Sans font, so no system font is needed; PNG text is placed glyph by glyph
//! (see [`TextMode`]). Output is deterministic: the same CSVs give the same SVG bytes.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{anyhow, bail, Context, Result};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::io::write_atomic;

/// Means over seeds on the integer arrived-percent grid.
pub const MEAN_GRID_CSV: &str = "mean_grid.csv";
/// Exact-solver optimality gaps at checkpoints.
pub const GAPS_CSV: &str = "gaps.csv";
/// Exact power/fragmentation fronts and the policies' points.
pub const PARETO_CSV: &str = "pareto.csv";
/// Subfolder of the results folder that receives the figures.
pub const FIGURES_DIR: &str = "figures";

/// Reads the CSVs present in `results_dir` and writes every figure they support into
/// `results_dir/figures/` (an `.svg` and a `.png` each). Returns the paths written, in a
/// fixed order. A figure kind whose CSV is absent or has no data row is skipped; a malformed
/// CSV is an error naming the file and line.
pub fn draw_all(results_dir: &Path) -> Result<Vec<PathBuf>> {
    let grid = MeanGrid::read(&results_dir.join(MEAN_GRID_CSV))?;
    let gaps = read_gaps(&results_dir.join(GAPS_CSV))?;
    let pareto = read_pareto(&results_dir.join(PARETO_CSV))?;

    let mut names: BTreeSet<String> = BTreeSet::new();
    if let Some(grid) = &grid {
        for trace in grid.traces.values() {
            names.extend(trace.policies.keys().cloned());
        }
    }
    names.extend(
        gaps.iter()
            .flat_map(|g| g.rows.iter().map(|r| r.policy.clone())),
    );
    names.extend(pareto.iter().flat_map(|p| {
        p.rows
            .iter()
            .filter(|r| r.kind == PointKind::Policy)
            .map(|r| r.label.clone())
    }));
    let palette = Palette::new(&names);

    // Layout measures text, so the font is needed before any figure is planned.
    ensure_fonts()?;
    let mut figures: Vec<(String, Figure)> = Vec::new();
    if let Some(grid) = &grid {
        figures.extend(family_figures(grid, &palette)?);
    }
    if let Some(gaps) = &gaps {
        figures.extend(gap_figures(gaps, &palette)?);
    }
    if let Some(pareto) = &pareto {
        figures.extend(pareto_figures(pareto, &palette)?);
    }
    if figures.is_empty() {
        return Ok(Vec::new());
    }

    let out_dir = results_dir.join(FIGURES_DIR);
    fs::create_dir_all(&out_dir)
        .with_context(|| format!("cannot create folder {}", out_dir.display()))?;
    let mut written = Vec::with_capacity(2 * figures.len());
    for (stem, figure) in &figures {
        write_figure(&out_dir, stem, figure, &mut written)?;
    }
    Ok(written)
}

// ---------------------------------------------------------------------------------------
// Fonts, sizes and colours
// ---------------------------------------------------------------------------------------

/// Registers DejaVu Sans as plotters' "sans-serif" once per process.
fn ensure_fonts() -> Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
            .is_ok()
            && plotters::style::register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold())
                .is_ok()
    });
    if ok {
        Ok(())
    } else {
        bail!("cannot load the embedded DejaVu Sans font")
    }
}

const TITLE_PX: f64 = 24.0;
const SUBTITLE_PX: f64 = 15.0;
const PANEL_TITLE_PX: f64 = 18.0;
const AXIS_DESC_PX: f64 = 16.0;
const TICK_PX: f64 = 14.0;
const LEGEND_PX: f64 = 15.0;
const POINT_LABEL_PX: f64 = 14.0;
/// Height of the title block above the panels.
const HEADER_PX: u32 = 76;
/// Height of one legend row.
const LEGEND_ROW_PX: i32 = 26;
/// Width of a legend swatch.
const SWATCH_PX: i32 = 36;

const INK: RGBColor = RGBColor(30, 30, 30);
const SUBTLE_INK: RGBColor = RGBColor(80, 80, 80);
const GRID_LINE: RGBColor = RGBColor(222, 222, 222);
/// Colour of status swatches in legends (they apply to every policy).
const NEUTRAL: RGBColor = RGBColor(90, 90, 90);

fn font(size_px: f64) -> FontDesc<'static> {
    FontDesc::new(FontFamily::SansSerif, size_px, FontStyle::Normal)
}

fn bold_font(size_px: f64) -> FontDesc<'static> {
    FontDesc::new(FontFamily::SansSerif, size_px, FontStyle::Bold)
}

/// Width of `text` in pixels in `font`, as [`draw_text`] lays it out.
fn text_width_px(text: &str, font: &FontDesc) -> Result<i32> {
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
enum TextMode {
    /// One text element per string (SVG: the viewer lays the glyphs out).
    Whole,
    /// One glyph at a time, each at its pen position plus its left side bearing. plotters'
    /// glyph rasteriser starts every glyph's ink at the pen, dropping the side bearing, which
    /// opens visible gaps after letters like `l`; placing glyphs one by one corrects that.
    PerGlyph,
}

/// Horizontal metrics of the embedded DejaVu font, read from its `hhea`, `OS/2`, `cmap`
/// (format 4) and `hmtx` tables.
struct FontMetrics {
    data: &'static [u8],
    /// Offset of the format-4 `cmap` subtable.
    cmap: usize,
    hmtx: usize,
    h_metric_count: usize,
    /// Ascent minus descent in font units: a font size in pixels spans this many units.
    height_units: f64,
}

fn be_u16(data: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*data.get(at)?, *data.get(at + 1)?]))
}

fn be_i16(data: &[u8], at: usize) -> Option<i16> {
    be_u16(data, at).map(|v| v as i16)
}

fn be_u32(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes([
        *data.get(at)?,
        *data.get(at + 1)?,
        *data.get(at + 2)?,
        *data.get(at + 3)?,
    ]))
}

impl FontMetrics {
    /// The metrics of the font registered for `style` (parsed once).
    fn of(style: FontStyle) -> Option<&'static FontMetrics> {
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

    fn parse(data: &'static [u8]) -> Option<FontMetrics> {
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
    fn glyph(&self, c: char) -> u16 {
        self.lookup(c).unwrap_or(0)
    }

    fn lookup(&self, c: char) -> Option<u16> {
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
    fn char_metrics(&self, c: char) -> (u16, i16) {
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
struct Placement {
    h: HPos,
    v: VPos,
    /// Reads bottom to top (rotated a quarter turn anticlockwise).
    upward: bool,
}

impl Placement {
    const fn at(h: HPos, v: VPos) -> Self {
        Placement {
            h,
            v,
            upward: false,
        }
    }
}

/// Draws `text` anchored at `pos` (area pixels) in `font` and `colour`.
fn draw_text<DB: DrawingBackend>(
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

/// A colour mixed with white: `amount` 0 keeps it, 1 gives white.
fn lighten(colour: RGBColor, amount: f64) -> RGBColor {
    let mix = |c: u8| (f64::from(c) + (255.0 - f64::from(c)) * amount).round() as u8;
    RGBColor(mix(colour.0), mix(colour.1), mix(colour.2))
}

/// Fixed colours of the canonical policies, in legend order.
const CANONICAL_POLICIES: [(&str, RGBColor); 7] = [
    ("random", RGBColor(127, 127, 127)),
    ("dotprod", RGBColor(140, 86, 75)),
    ("clustering", RGBColor(148, 103, 189)),
    ("packing", RGBColor(174, 176, 24)),
    ("bestfit", RGBColor(23, 176, 196)),
    ("fgd", RGBColor(31, 119, 180)),
    ("pwr", RGBColor(214, 39, 40)),
];

/// Colours of the other policies (mixes), taken in name order.
const MIX_COLOURS: [RGBColor; 8] = [
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(227, 119, 194),
    RGBColor(0, 0, 128),
    RGBColor(128, 64, 0),
    RGBColor(0, 128, 128),
    RGBColor(106, 61, 154),
    RGBColor(255, 187, 120),
];

/// Marker outlines, used in turn by the policies in legend order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
    Pentagon,
}

const SHAPES: [Shape; 6] = [
    Shape::Circle,
    Shape::Square,
    Shape::TriangleUp,
    Shape::Diamond,
    Shape::TriangleDown,
    Shape::Pentagon,
];

impl Shape {
    /// The outline as a polygon around `centre`, about `radius_px` across half.
    fn polygon(self, centre: (i32, i32), radius_px: f64) -> Vec<(i32, i32)> {
        let r = radius_px;
        let unit: Vec<(f64, f64)> = match self {
            Shape::Circle => regular_polygon(16, r, 0.0),
            Shape::Square => {
                let s = 0.88 * r;
                vec![(-s, -s), (s, -s), (s, s), (-s, s)]
            }
            Shape::TriangleUp => vec![(0.0, -1.2 * r), (1.1 * r, 0.8 * r), (-1.1 * r, 0.8 * r)],
            Shape::TriangleDown => vec![(0.0, 1.2 * r), (1.1 * r, -0.8 * r), (-1.1 * r, -0.8 * r)],
            Shape::Diamond => vec![
                (0.0, -1.25 * r),
                (1.1 * r, 0.0),
                (0.0, 1.25 * r),
                (-1.1 * r, 0.0),
            ],
            Shape::Pentagon => regular_polygon(5, 1.1 * r, -std::f64::consts::FRAC_PI_2),
        };
        unit.into_iter()
            .map(|(x, y)| (centre.0 + x.round() as i32, centre.1 + y.round() as i32))
            .collect()
    }
}

fn regular_polygon(corners: usize, radius: f64, start_rad: f64) -> Vec<(f64, f64)> {
    (0..corners)
        .map(|k| {
            let angle = start_rad + 2.0 * std::f64::consts::PI * k as f64 / corners as f64;
            (radius * angle.cos(), radius * angle.sin())
        })
        .collect()
}

/// How one policy is drawn everywhere.
#[derive(Debug, Clone)]
struct PolicyStyle {
    name: String,
    colour: RGBColor,
    shape: Shape,
    /// Position in the legend order.
    rank: usize,
}

/// The policy → style map of one results folder.
struct Palette {
    styles: BTreeMap<String, PolicyStyle>,
}

impl Palette {
    /// Canonical policies first (fixed colours), then every other name in natural order.
    fn new(names: &BTreeSet<String>) -> Self {
        let mut styles = BTreeMap::new();
        for (rank, (name, colour)) in CANONICAL_POLICIES.iter().enumerate() {
            styles.insert(
                (*name).to_string(),
                PolicyStyle {
                    name: (*name).to_string(),
                    colour: *colour,
                    shape: SHAPES[rank % SHAPES.len()],
                    rank,
                },
            );
        }
        let mut others: Vec<&String> = names
            .iter()
            .filter(|n| !styles.contains_key(n.as_str()))
            .collect();
        others.sort_by(|a, b| natural_cmp(a, b));
        for (i, name) in others.into_iter().enumerate() {
            let rank = CANONICAL_POLICIES.len() + i;
            styles.insert(
                name.clone(),
                PolicyStyle {
                    name: name.clone(),
                    colour: MIX_COLOURS[i % MIX_COLOURS.len()],
                    shape: SHAPES[rank % SHAPES.len()],
                    rank,
                },
            );
        }
        Palette { styles }
    }

    fn style(&self, name: &str) -> PolicyStyle {
        self.styles.get(name).cloned().unwrap_or(PolicyStyle {
            name: name.to_string(),
            colour: INK,
            shape: Shape::Circle,
            rank: usize::MAX,
        })
    }

    /// The styles of `names`, in legend order.
    fn ordered<'a>(&self, names: impl IntoIterator<Item = &'a String>) -> Vec<PolicyStyle> {
        let mut styles: Vec<PolicyStyle> = names.into_iter().map(|n| self.style(n)).collect();
        styles.sort_by(|a, b| a.rank.cmp(&b.rank).then_with(|| a.name.cmp(&b.name)));
        styles.dedup_by(|a, b| a.name == b.name);
        styles
    }
}

/// Orders strings with embedded numbers by value: `gpushare20` < `gpushare100`.
fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for (x, y) in ca.iter().zip(&cb) {
        let ord = match (x, y) {
            ((true, p), (true, q)) => {
                let (p, q) = (p.trim_start_matches('0'), q.trim_start_matches('0'));
                p.len().cmp(&q.len()).then_with(|| p.cmp(q))
            }
            ((_, p), (_, q)) => p.cmp(q),
        };
        if ord.is_ne() {
            return ord;
        }
    }
    ca.len().cmp(&cb.len()).then_with(|| a.cmp(b))
}

// ---------------------------------------------------------------------------------------
// CSV input
// ---------------------------------------------------------------------------------------

/// One CSV file read whole: column positions by header name and records with line numbers.
struct Table {
    path: PathBuf,
    columns: HashMap<String, usize>,
    records: Vec<(u64, csv::StringRecord)>,
}

/// One record of a [`Table`], for typed field access with file-and-line errors.
struct Row<'a> {
    table: &'a Table,
    line: u64,
    record: &'a csv::StringRecord,
}

impl Table {
    /// `None` when the file is absent or has no data row.
    fn read(path: &Path, required: &[&str]) -> Result<Option<Table>> {
        let bytes = match fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .trim(csv::Trim::All)
            .from_reader(bytes.as_slice());
        let header = reader
            .headers()
            .map_err(|e| anyhow!("{}: line 1: {e}", path.display()))?
            .clone();
        let columns: HashMap<String, usize> = header
            .iter()
            .enumerate()
            .map(|(i, name)| (name.to_string(), i))
            .collect();
        for name in required {
            if !columns.contains_key(*name) {
                bail!("{}: line 1: missing column `{name}`", path.display());
            }
        }
        let mut records = Vec::new();
        for result in reader.records() {
            let record = result.map_err(|e| {
                let line = e.position().map_or(0, csv::Position::line);
                anyhow!("{}: line {line}: {e}", path.display())
            })?;
            let line = record.position().map_or(0, csv::Position::line);
            records.push((line, record));
        }
        if records.is_empty() {
            return Ok(None);
        }
        Ok(Some(Table {
            path: path.to_path_buf(),
            columns,
            records,
        }))
    }

    fn rows(&self) -> impl Iterator<Item = Row<'_>> {
        self.records.iter().map(move |(line, record)| Row {
            table: self,
            line: *line,
            record,
        })
    }
}

impl Row<'_> {
    fn error(&self, message: impl std::fmt::Display) -> anyhow::Error {
        anyhow!(
            "{}: line {}: {message}",
            self.table.path.display(),
            self.line
        )
    }

    fn text(&self, column: &str) -> &str {
        self.table
            .columns
            .get(column)
            .and_then(|&i| self.record.get(i))
            .unwrap_or("")
    }

    /// A non-empty text field.
    fn name(&self, column: &str) -> Result<String> {
        let value = self.text(column);
        if value.is_empty() {
            return Err(self.error(format_args!("column `{column}` is empty")));
        }
        Ok(value.to_string())
    }

    /// A finite number.
    fn number(&self, column: &str) -> Result<f64> {
        self.optional_number(column)?
            .ok_or_else(|| self.error(format_args!("column `{column}` is empty")))
    }

    /// A finite number, or `None` for an empty field.
    fn optional_number(&self, column: &str) -> Result<Option<f64>> {
        match self.number_or_infinity(column)? {
            Some(v) if v.is_infinite() => Err(self.error(format_args!(
                "column `{column}`: {:?} is not a finite number",
                self.text(column)
            ))),
            other => Ok(other),
        }
    }

    /// A number that may be +infinity (`inf`), or `None` for an empty field.
    fn number_or_infinity(&self, column: &str) -> Result<Option<f64>> {
        let text = self.text(column);
        if text.is_empty() {
            return Ok(None);
        }
        match text.parse::<f64>() {
            Ok(v) if v.is_nan() || v == f64::NEG_INFINITY => Err(self.error(format_args!(
                "column `{column}`: {text:?} is not a usable number"
            ))),
            Ok(v) => Ok(Some(v)),
            Err(_) => Err(self.error(format_args!("column `{column}`: {text:?} is not a number"))),
        }
    }
}

/// Mean values at one arrived percent.
#[derive(Debug, Clone, Copy)]
struct MeanPoint {
    arrived_pct: f64,
    alloc_pct: f64,
    frag_ratio_pct: f64,
    power_total_w: f64,
}

/// The curves of one trace.
struct TraceCurves {
    family: String,
    seeds: BTreeSet<u64>,
    policies: BTreeMap<String, Vec<MeanPoint>>,
}

/// `mean_grid.csv`, by trace.
struct MeanGrid {
    traces: BTreeMap<String, TraceCurves>,
}

impl MeanGrid {
    const COLUMNS: [&'static str; 8] = [
        "trace",
        "family",
        "policy",
        "seeds",
        "arrived_pct",
        "alloc_pct",
        "frag_ratio_pct",
        "power_total_w",
    ];

    fn read(path: &Path) -> Result<Option<MeanGrid>> {
        let Some(table) = Table::read(path, &Self::COLUMNS)? else {
            return Ok(None);
        };
        let mut traces: BTreeMap<String, TraceCurves> = BTreeMap::new();
        let mut seen: BTreeSet<(String, String, i64)> = BTreeSet::new();
        for row in table.rows() {
            let trace = row.name("trace")?;
            let family = row.name("family")?;
            let policy = row.name("policy")?;
            let seeds = row.number("seeds")?;
            if seeds < 1.0 || seeds.fract() != 0.0 {
                return Err(row.error(format_args!(
                    "column `seeds`: {seeds} is not a positive count"
                )));
            }
            let point = MeanPoint {
                arrived_pct: row.number("arrived_pct")?,
                alloc_pct: row.number("alloc_pct")?,
                frag_ratio_pct: row.number("frag_ratio_pct")?,
                power_total_w: row.number("power_total_w")?,
            };
            let key = (
                trace.clone(),
                policy.clone(),
                (point.arrived_pct * 1000.0).round() as i64,
            );
            if !seen.insert(key) {
                return Err(row.error(format_args!(
                    "second row for trace {trace}, policy {policy} at {} % arrived",
                    point.arrived_pct
                )));
            }
            let curves = traces.entry(trace.clone()).or_insert_with(|| TraceCurves {
                family: family.clone(),
                seeds: BTreeSet::new(),
                policies: BTreeMap::new(),
            });
            if curves.family != family {
                return Err(row.error(format_args!(
                    "trace {trace} is in family {family} here but in family {} above",
                    curves.family
                )));
            }
            curves.seeds.insert(seeds as u64);
            curves.policies.entry(policy).or_default().push(point);
        }
        for curves in traces.values_mut() {
            for points in curves.policies.values_mut() {
                points.sort_by(|a, b| a.arrived_pct.total_cmp(&b.arrived_pct));
            }
        }
        Ok(Some(MeanGrid { traces }))
    }
}

/// The optimisation objective of a gap row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Objective {
    Power,
    Alloc,
    Frag,
}

impl Objective {
    fn parse(text: &str) -> Option<Self> {
        match text {
            "power" => Some(Objective::Power),
            "alloc" => Some(Objective::Alloc),
            "frag" => Some(Objective::Frag),
            _ => None,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Objective::Power => "power",
            Objective::Alloc => "alloc",
            Objective::Frag => "frag",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Objective::Power => "total power (minimise)",
            Objective::Alloc => "allocated GPU (maximise)",
            Objective::Frag => "fragmented GPU (minimise)",
        }
    }

    fn gap_axis(self) -> &'static str {
        match self {
            Objective::Alloc => "gap (percentage points of GPU capacity)",
            Objective::Power | Objective::Frag => "gap (%)",
        }
    }
}

/// How much the solver proved about a gap; ordered from strongest to weakest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum BarStatus {
    Optimal,
    TimeLimit,
    Relaxation,
}

impl BarStatus {
    fn legend(self) -> &'static str {
        match self {
            BarStatus::Optimal => "solved to optimality (solid)",
            BarStatus::TimeLimit => "time limit: bound not closed (hatched)",
            BarStatus::Relaxation => "LP-relaxation bound only (light)",
        }
    }
}

/// Solver statuses of rows that carry no gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum NoGap {
    Infeasible,
    Error,
}

/// One row of `gaps.csv`.
struct GapRow {
    trace: String,
    checkpoint: Checkpoint,
    objective: Objective,
    policy: String,
    seed: String,
    /// `(low, high)`; high is +infinity when no finite upper bound exists.
    gap_pct: Result<(BarStatus, f64, f64), NoGap>,
}

struct GapTable {
    rows: Vec<GapRow>,
}

/// A checkpoint in arrived percent, kept as thousandths so it can key maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Checkpoint(i64);

impl Checkpoint {
    fn new(pct: f64) -> Self {
        Checkpoint((pct * 1000.0).round() as i64)
    }

    /// Shortest decimal form: `90`, `97.5`.
    fn label(self) -> String {
        let text = format!("{:.3}", self.0 as f64 / 1000.0);
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }

    /// For file names: `90`, `97p5`.
    fn file_part(self) -> String {
        self.label().replace('.', "p").replace('-', "m")
    }
}

fn read_gaps(path: &Path) -> Result<Option<GapTable>> {
    const COLUMNS: [&str; 8] = [
        "trace",
        "checkpoint_pct",
        "objective",
        "policy",
        "seed",
        "status",
        "gap_low_pct",
        "gap_high_pct",
    ];
    let Some(table) = Table::read(path, &COLUMNS)? else {
        return Ok(None);
    };
    let mut rows = Vec::with_capacity(table.records.len());
    for row in table.rows() {
        let objective_text = row.text("objective");
        let objective = Objective::parse(objective_text).ok_or_else(|| {
            row.error(format_args!(
                "column `objective`: {objective_text:?} is not power, alloc or frag"
            ))
        })?;
        let status_text = row.text("status");
        // The solver's labels: `gap_limit` (stopped at the requested MIP gap) is an interval
        // like `time_limit`; `relaxation_bound` is a relaxation; `error: …` carries a message.
        let status = match status_text {
            "optimal" => Ok(BarStatus::Optimal),
            "time_limit" | "gap_limit" => Ok(BarStatus::TimeLimit),
            "relaxation" | "relaxation_bound" => Ok(BarStatus::Relaxation),
            "infeasible" => Err(NoGap::Infeasible),
            error if error == "error" || error.starts_with("error:") => Err(NoGap::Error),
            other => {
                return Err(row.error(format_args!(
                    "column `status`: {other:?} is not optimal, time_limit, relaxation, infeasible or error"
                )))
            }
        };
        let gap_pct = match status {
            Ok(status) => {
                let low = row.optional_number("gap_low_pct")?;
                let high = row.number_or_infinity("gap_high_pct")?;
                let (Some(low), Some(high)) = (low, high) else {
                    return Err(row.error(format_args!(
                        "status {status_text} needs both gap_low_pct and gap_high_pct"
                    )));
                };
                if low > high + 1e-6 * high.abs().max(1.0) {
                    return Err(row.error(format_args!(
                        "gap_low_pct {low} is above gap_high_pct {high}"
                    )));
                }
                Ok((status, low, high))
            }
            Err(no_gap) => Err(no_gap),
        };
        rows.push(GapRow {
            trace: row.name("trace")?,
            checkpoint: Checkpoint::new(row.number("checkpoint_pct")?),
            objective,
            policy: row.name("policy")?,
            seed: row.text("seed").to_string(),
            gap_pct,
        });
    }
    Ok(Some(GapTable { rows }))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PointKind {
    Front,
    Policy,
}

/// One row of `pareto.csv`.
struct ParetoRow {
    trace: String,
    checkpoint: Checkpoint,
    seed: String,
    kind: PointKind,
    label: String,
    /// `(power_w, frag_gpu_milli)`, `None` for infeasible or failed front points.
    point: Option<(f64, f64)>,
    /// For front points: proven optimal (else only a time-limited solution).
    proven: bool,
}

struct ParetoTable {
    rows: Vec<ParetoRow>,
}

fn read_pareto(path: &Path) -> Result<Option<ParetoTable>> {
    const COLUMNS: [&str; 8] = [
        "trace",
        "checkpoint_pct",
        "seed",
        "kind",
        "label",
        "power_w",
        "frag_gpu_milli",
        "status",
    ];
    let Some(table) = Table::read(path, &COLUMNS)? else {
        return Ok(None);
    };
    let mut rows = Vec::with_capacity(table.records.len());
    for row in table.rows() {
        let kind = match row.text("kind") {
            "front" => PointKind::Front,
            "policy" => PointKind::Policy,
            other => {
                return Err(row.error(format_args!(
                    "column `kind`: {other:?} is not front or policy"
                )))
            }
        };
        let status = row.text("status");
        let (usable, proven) = match (kind, status) {
            (PointKind::Policy, _) => (true, true),
            (PointKind::Front, "optimal") => (true, true),
            (PointKind::Front, "time_limit" | "gap_limit" | "relaxation" | "relaxation_bound") => (true, false),
            (PointKind::Front, error) if error == "infeasible" || error == "error" || error.starts_with("error:") => (false, false),
            (PointKind::Front, other) => {
                return Err(row.error(format_args!(
                    "column `status`: {other:?} is not optimal, time_limit, relaxation, infeasible or error"
                )))
            }
        };
        let point = if usable {
            Some((row.number("power_w")?, row.number("frag_gpu_milli")?))
        } else {
            None
        };
        rows.push(ParetoRow {
            trace: row.name("trace")?,
            checkpoint: Checkpoint::new(row.number("checkpoint_pct")?),
            seed: row.text("seed").to_string(),
            kind,
            label: row.name("label")?,
            point,
            proven,
        });
    }
    Ok(Some(ParetoTable { rows }))
}

// ---------------------------------------------------------------------------------------
// Axes and legends
// ---------------------------------------------------------------------------------------

/// One axis: its range, tick positions and how ticks are written.
#[derive(Debug, Clone)]
struct Axis {
    range: (f64, f64),
    ticks: Vec<f64>,
    decimals: usize,
    /// Category names written at the ticks instead of numbers.
    names: Option<Vec<String>>,
    desc: String,
}

impl Axis {
    /// Ticks at multiples of `step` in exactly `lo..=hi`.
    fn fixed(lo: f64, hi: f64, step: f64, desc: &str) -> Axis {
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
    fn nice(lo: f64, hi: f64, max_ticks: usize, desc: &str) -> Axis {
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
    fn categories(names: Vec<String>, desc: &str) -> Axis {
        let n = names.len().max(1);
        Axis {
            range: (-0.5, n as f64 - 0.5),
            ticks: (0..names.len()).map(|i| i as f64).collect(),
            decimals: 0,
            names: Some(names),
            desc: desc.to_string(),
        }
    }

    fn label(&self, value: f64) -> String {
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
    fn widest_label_px(&self) -> Result<i32> {
        let tick_font = font(TICK_PX);
        let mut widest = 0;
        for &t in &self.ticks {
            widest = widest.max(text_width_px(&self.label(t), &tick_font)?);
        }
        Ok(widest)
    }
}

/// Decimals needed to write multiples of `step` exactly.
fn decimals_of(step: f64) -> usize {
    (0..6)
        .find(|d| {
            let scaled = step * 10f64.powi(*d as i32);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.abs().max(1.0)
        })
        .unwrap_or(6)
}

/// `lo..hi` grown by `fraction` of its span on both sides, not below zero when the data is not.
fn padded(lo: f64, hi: f64, fraction: f64) -> (f64, f64) {
    let pad = (hi - lo).abs() * fraction;
    let new_lo = if lo >= 0.0 {
        (lo - pad).max(0.0)
    } else {
        lo - pad
    };
    (new_lo, hi + pad)
}

fn min_max(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values.into_iter().fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// A continuous f64 coordinate whose grid lines and tick labels sit exactly at given values.
#[derive(Debug, Clone)]
struct TickedRange {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
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
    fn coord(&self) -> TickedRange {
        TickedRange {
            lo: self.range.0,
            hi: self.range.1,
            ticks: self.ticks.clone(),
        }
    }
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<TickedRange, TickedRange>>;

/// A chart on `area` with the house style: an optional title, grid lines at the ticks and
/// labelled axes. Decorations are drawn on `root`, in absolute pixels.
fn build_chart<'a, DB: DrawingBackend>(
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

    let desc_font = font(AXIS_DESC_PX);
    let (centre_x, centre_y) = ((left + right) / 2, (top + bottom) / 2);
    let place = Placement::at(HPos::Center, VPos::Top);
    draw_text(
        root,
        &x.desc,
        &desc_font,
        INK,
        place,
        (centre_x, bottom + 36),
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
    Ok(chart)
}

/// What a legend row shows before its text.
#[derive(Debug, Clone)]
enum Swatch {
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
    /// A whisker that runs off the top: no finite upper bound.
    Unbounded,
    /// The cross marking a slot without any usable row.
    Missing,
    /// An exact front: its line colour, marker and whether the marker is filled.
    Front(RGBColor, bool),
    /// A dashed reference line.
    Reference,
}

#[derive(Debug, Clone)]
struct LegendEntry {
    swatch: Swatch,
    label: String,
}

impl LegendEntry {
    fn new(swatch: Swatch, label: impl Into<String>) -> Self {
        LegendEntry {
            swatch,
            label: label.into(),
        }
    }
}

/// Width of the legend column for `entries`.
fn legend_width_px(entries: &[LegendEntry]) -> Result<u32> {
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

fn legend_height_px(entries: &[LegendEntry]) -> u32 {
    (entries.len() as i32 * LEGEND_ROW_PX + 24) as u32
}

fn draw_legend<DB: DrawingBackend>(
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
            draw_swatch(area, &entry.swatch, (left, middle))?;
            let at = (left + SWATCH_PX + 10, middle);
            draw_text(area, &entry.label, &font(LEGEND_PX), INK, place, at, mode)?;
        }
        top += LEGEND_ROW_PX;
    }
    Ok(())
}

/// Draws `swatch` in the box starting at `left` and centred on `middle` (area pixels).
fn draw_swatch<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    swatch: &Swatch,
    (left, middle): (i32, i32),
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
        Swatch::Whisker => draw_whisker(area, centre.0, middle + 9, middle - 9, 7, false)?,
        Swatch::Unbounded => draw_whisker(area, centre.0, middle + 9, middle - 9, 7, true)?,
        Swatch::Missing => draw_cross(area, centre, 6)?,
        Swatch::Front(colour, filled) => {
            area.draw(&PathElement::new(
                vec![(left, middle), (right, middle)],
                colour.stroke_width(2),
            ))?;
            let fill = if *filled { *colour } else { WHITE };
            draw_marker(area, Shape::Circle, centre, 5.0, fill, *colour)?;
        }
        Swatch::Reference => draw_dashed_hline(area, left, right, middle, SUBTLE_INK)?,
    }
    Ok(())
}

/// A filled marker with an outline.
fn draw_marker<DB: DrawingBackend>(
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

/// A bar between two pixel corners, styled by the solver status.
fn draw_bar<DB: DrawingBackend>(
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
fn draw_whisker<DB: DrawingBackend>(
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

fn draw_cross<DB: DrawingBackend>(
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

fn draw_dashed_hline<DB: DrawingBackend>(
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
fn draw_header<DB: DrawingBackend>(
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
fn header_width_px(title: &str, subtitle: &str) -> Result<u32> {
    let title_px = text_width_px(title, &bold_font(TITLE_PX))?;
    let subtitle_px = text_width_px(subtitle, &font(SUBTITLE_PX))?;
    Ok((title_px.max(subtitle_px) + 40) as u32)
}

// ---------------------------------------------------------------------------------------
// Figures
// ---------------------------------------------------------------------------------------

/// Everything needed to draw one figure, independent of the output format.
enum Figure {
    Lines(LinesFigure),
    Gaps(GapsFigure),
    Pareto(ParetoFigure),
}

impl Figure {
    fn size_px(&self) -> (u32, u32) {
        match self {
            Figure::Lines(f) => f.size_px,
            Figure::Gaps(f) => f.size_px,
            Figure::Pareto(f) => f.size_px,
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, mode: TextMode) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        match self {
            Figure::Lines(f) => f.draw(root, mode),
            Figure::Gaps(f) => f.draw(root, mode),
            Figure::Pareto(f) => f.draw(root, mode),
        }
    }
}

/// Writes `<stem>.svg` and `<stem>.png` into `dir` (each atomically).
fn write_figure(dir: &Path, stem: &str, figure: &Figure, written: &mut Vec<PathBuf>) -> Result<()> {
    let size = figure.size_px();
    let svg_path = dir.join(format!("{stem}.svg"));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        figure
            .draw(&root, TextMode::Whole)
            .with_context(|| format!("cannot draw {}", svg_path.display()))?;
        root.present()
            .with_context(|| format!("cannot draw {}", svg_path.display()))?;
    }
    write_atomic(&svg_path, svg.as_bytes())?;
    written.push(svg_path);

    // The encoder picks the format from the extension, so the temp file ends in `.png`.
    let png_path = dir.join(format!("{stem}.png"));
    let temp = dir.join(format!(".{stem}.{}.tmp.png", std::process::id()));
    let drawn = (|| -> Result<()> {
        let root = BitMapBackend::new(&temp, size).into_drawing_area();
        figure.draw(&root, TextMode::PerGlyph)?;
        root.present()?;
        Ok(())
    })();
    if let Err(e) = drawn {
        let _ = fs::remove_file(&temp);
        return Err(e.context(format!("cannot draw {}", png_path.display())));
    }
    fs::rename(&temp, &png_path)
        .with_context(|| format!("cannot move {} to {}", temp.display(), png_path.display()))?;
    written.push(png_path);
    Ok(())
}

/// Keeps file names portable: letters, digits, `-`, `_` and `.`; anything else becomes `_`.
fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `3 seeds`, `1 seed`, `3–10 seeds`.
fn seeds_phrase(counts: &BTreeSet<u64>) -> String {
    match (counts.first(), counts.last()) {
        (Some(1), Some(1)) => "1 seed".to_string(),
        (Some(a), Some(b)) if a == b => format!("{a} seeds"),
        (Some(a), Some(b)) => format!("{a}–{b} seeds"),
        _ => "no seeds".to_string(),
    }
}

// --- line figures over arrived percent --------------------------------------------------

/// Policies' curves in one panel per trace.
struct LinesFigure {
    size_px: (u32, u32),
    title: String,
    subtitle: String,
    grid: (usize, usize),
    panels: Vec<LinePanel>,
    /// Draw markers on each curve this many arrived percent apart.
    marker_step_pct: f64,
    /// Draw a dashed line at y = 0.
    zero_line: bool,
    legend: Vec<LegendEntry>,
    legend_width_px: u32,
}

struct LinePanel {
    title: String,
    x: Axis,
    y: Axis,
    series: Vec<(PolicyStyle, Vec<(f64, f64)>)>,
}

const ARRIVED_DESC: &str = "arrived workload (% of cluster GPU capacity)";

/// Which curve a line figure shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Metric {
    Alloc,
    AllocZoom,
    Power,
    PowerSaving,
    FragRatio,
}

impl Metric {
    const ALL: [Metric; 5] = [
        Metric::Alloc,
        Metric::AllocZoom,
        Metric::Power,
        Metric::PowerSaving,
        Metric::FragRatio,
    ];

    fn stem(self, family: &str) -> String {
        let family = file_safe(family);
        match self {
            Metric::Alloc => format!("alloc_vs_arrived_{family}"),
            Metric::AllocZoom => format!("alloc_vs_arrived_{family}_zoom"),
            Metric::Power => format!("power_vs_arrived_{family}"),
            Metric::PowerSaving => format!("power_saving_vs_fgd_{family}"),
            Metric::FragRatio => format!("frag_ratio_vs_arrived_{family}"),
        }
    }

    fn title(self, family: &str) -> String {
        let what = match self {
            Metric::Alloc => "GPU allocation vs arrived workload",
            Metric::AllocZoom => "GPU allocation vs arrived workload (zoom on 80–130 %)",
            Metric::Power => "Total power vs arrived workload",
            Metric::PowerSaving => "Power saving relative to FGD",
            Metric::FragRatio => "GPU fragmentation ratio vs arrived workload",
        };
        format!("{what} — {family} family")
    }

    fn y_desc(self) -> &'static str {
        match self {
            Metric::Alloc | Metric::AllocZoom => "allocated GPU (% of capacity)",
            Metric::Power => "total power (kW)",
            Metric::PowerSaving => "power saving vs FGD (%)",
            Metric::FragRatio => "fragmented GPU (% of free GPU)",
        }
    }

    fn x_range(self) -> (f64, f64) {
        match self {
            Metric::AllocZoom => (80.0, 130.0),
            _ => (0.0, 130.0),
        }
    }
}

/// The curves of `metric` for one trace, restricted to the metric's x range.
fn trace_series(
    curves: &TraceCurves,
    metric: Metric,
    palette: &Palette,
) -> Vec<(PolicyStyle, Vec<(f64, f64)>)> {
    let (x_lo, x_hi) = metric.x_range();
    let in_range = |p: &&MeanPoint| p.arrived_pct >= x_lo - 1e-9 && p.arrived_pct <= x_hi + 1e-9;
    let fgd_w: BTreeMap<i64, f64> = curves
        .policies
        .get("fgd")
        .map(|points| {
            points
                .iter()
                .map(|p| ((p.arrived_pct * 1000.0).round() as i64, p.power_total_w))
                .collect()
        })
        .unwrap_or_default();
    let mut series = Vec::new();
    for style in palette.ordered(curves.policies.keys()) {
        let points = &curves.policies[&style.name];
        let values: Vec<(f64, f64)> = match metric {
            Metric::Alloc | Metric::AllocZoom => points
                .iter()
                .filter(in_range)
                .map(|p| (p.arrived_pct, p.alloc_pct))
                .collect(),
            Metric::Power => points
                .iter()
                .filter(in_range)
                .map(|p| (p.arrived_pct, p.power_total_w / 1000.0))
                .collect(),
            Metric::FragRatio => points
                .iter()
                .filter(in_range)
                .map(|p| (p.arrived_pct, p.frag_ratio_pct))
                .collect(),
            Metric::PowerSaving => {
                if style.name == "fgd" {
                    continue;
                }
                points
                    .iter()
                    .filter(in_range)
                    .filter_map(|p| {
                        let fgd = *fgd_w.get(&((p.arrived_pct * 1000.0).round() as i64))?;
                        (fgd > 0.0).then(|| (p.arrived_pct, (fgd - p.power_total_w) / fgd * 100.0))
                    })
                    .collect()
            }
        };
        if !values.is_empty() {
            series.push((style, values));
        }
    }
    series
}

/// Rows and columns of a panel grid for `n` panels.
fn grid_shape(n: usize) -> (usize, usize) {
    let cols = match n {
        0 | 1 => 1,
        2 | 4 => 2,
        3 | 5 | 6 | 9 => 3,
        7 | 8 => 4,
        _ => 4,
    };
    (n.max(1).div_ceil(cols), cols)
}

/// Panel size for a grid with `cols` columns.
fn panel_size_px(cols: usize) -> (u32, u32) {
    match cols {
        1 => (960, 690),
        2 => (620, 440),
        3 => (500, 390),
        _ => (440, 360),
    }
}

fn family_figures(grid: &MeanGrid, palette: &Palette) -> Result<Vec<(String, Figure)>> {
    let mut families: BTreeMap<&str, Vec<(&String, &TraceCurves)>> = BTreeMap::new();
    for (trace, curves) in &grid.traces {
        families
            .entry(curves.family.as_str())
            .or_default()
            .push((trace, curves));
    }
    let mut figures = Vec::new();
    for (family, mut traces) in families {
        traces.sort_by(|a, b| natural_cmp(a.0, b.0));
        for metric in Metric::ALL {
            if let Some(figure) = line_figure(family, &traces, metric, palette)? {
                figures.push((metric.stem(family), Figure::Lines(figure)));
            }
        }
    }
    Ok(figures)
}

/// One line figure of a family, or `None` when no trace has data for it.
fn line_figure(
    family: &str,
    traces: &[(&String, &TraceCurves)],
    metric: Metric,
    palette: &Palette,
) -> Result<Option<LinesFigure>> {
    let mut panels_data = Vec::new();
    for (trace, curves) in traces {
        if metric == Metric::PowerSaving && !curves.policies.contains_key("fgd") {
            continue;
        }
        let series = trace_series(curves, metric, palette);
        if !series.is_empty() {
            panels_data.push((*trace, *curves, series));
        }
    }
    if panels_data.is_empty() {
        return Ok(None);
    }
    let (rows, cols) = grid_shape(panels_data.len());
    let (panel_w, panel_h) = panel_size_px(cols);
    let (x_lo, x_hi) = metric.x_range();
    let x_step = if metric == Metric::AllocZoom || cols <= 2 {
        10.0
    } else {
        20.0
    };

    let mut panels = Vec::new();
    let mut seed_counts = BTreeSet::new();
    let mut legend_names: BTreeSet<String> = BTreeSet::new();
    for (trace, curves, series) in panels_data {
        seed_counts.extend(curves.seeds.iter().copied());
        let (lo, hi) = min_max(series.iter().flat_map(|(_, pts)| pts.iter().map(|p| p.1)))
            .unwrap_or((0.0, 1.0));
        let y = match metric {
            Metric::Alloc => Axis::fixed(
                0.0,
                (hi.max(100.0) / 10.0).ceil() * 10.0,
                10.0,
                metric.y_desc(),
            ),
            Metric::AllocZoom | Metric::Power => {
                let (lo, hi) = padded(lo, hi, 0.05);
                Axis::nice(lo, hi, 8, metric.y_desc())
            }
            Metric::PowerSaving => {
                let (lo, hi) = padded(lo.min(0.0), hi.max(0.0), 0.08);
                Axis::nice(lo, hi, 8, metric.y_desc())
            }
            Metric::FragRatio => Axis::nice(0.0, hi.max(1.0) * 1.05, 8, metric.y_desc()),
        };
        legend_names.extend(series.iter().map(|(s, _)| s.name.clone()));
        panels.push(LinePanel {
            title: format!("trace {trace}"),
            x: Axis::fixed(x_lo, x_hi, x_step, ARRIVED_DESC),
            y,
            series,
        });
    }

    let mut legend = vec![LegendEntry::new(Swatch::Heading, "policy")];
    legend.extend(palette.ordered(legend_names.iter()).into_iter().map(|s| {
        let label = s.name.clone();
        LegendEntry::new(Swatch::Line(s), label)
    }));
    let zero_line = metric == Metric::PowerSaving;
    if zero_line {
        legend.push(LegendEntry::new(Swatch::Reference, "same power as FGD"));
    }
    let subtitle = match metric {
        Metric::PowerSaving => format!(
            "saving = (P_fgd − P_policy) / P_fgd × 100, above 0: less power than FGD; mean over {}",
            seeds_phrase(&seed_counts)
        ),
        Metric::FragRatio => format!(
            "fragmented share of the unallocated GPU (FGD measure); mean over {}",
            seeds_phrase(&seed_counts)
        ),
        _ => format!("mean over {} per policy", seeds_phrase(&seed_counts)),
    };
    let title = metric.title(family);
    let legend_width_px = legend_width_px(&legend)?;
    let width = (cols as u32 * panel_w + legend_width_px).max(header_width_px(&title, &subtitle)?);
    let height = HEADER_PX + (rows as u32 * panel_h).max(legend_height_px(&legend));
    Ok(Some(LinesFigure {
        size_px: (width, height),
        title,
        subtitle,
        grid: (rows, cols),
        panels,
        marker_step_pct: if metric == Metric::AllocZoom {
            5.0
        } else {
            10.0
        },
        zero_line,
        legend,
        legend_width_px,
    }))
}

impl LinesFigure {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, mode: TextMode) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let (width, _) = root.dim_in_pixel();
        let (header, body) = root.split_vertically(HEADER_PX);
        draw_header(&header, &self.title, &self.subtitle, mode)?;
        let (plots, legend) = body.split_horizontally(width - self.legend_width_px);
        draw_legend(&legend, &self.legend, mode)?;
        let areas = plots.split_evenly(self.grid);
        for (panel, area) in self.panels.iter().zip(&areas) {
            let mut chart = build_chart(root, area, Some(&panel.title), &panel.x, &panel.y, mode)?;
            if self.zero_line && panel.y.range.0 < 0.0 && panel.y.range.1 > 0.0 {
                let left = chart.backend_coord(&(panel.x.range.0, 0.0));
                let right = chart.backend_coord(&(panel.x.range.1, 0.0));
                draw_dashed_hline(root, left.0, right.0, left.1, SUBTLE_INK)?;
            }
            for (style, points) in &panel.series {
                chart.draw_series(LineSeries::new(
                    points.iter().copied(),
                    style.colour.stroke_width(2),
                ))?;
                // Markers every step, shifted by a fifth of a step per policy so that curves
                // lying on top of each other still show all their markers.
                let shift_pct = (style.rank % 5) as f64 * self.marker_step_pct / 5.0;
                for &(x, y) in points {
                    let k = ((x - shift_pct) / self.marker_step_pct).round();
                    if (x - shift_pct - k * self.marker_step_pct).abs() < 1e-6 {
                        let centre = chart.backend_coord(&(x, y));
                        draw_marker(root, style.shape, centre, 4.5, style.colour, style.colour)?;
                    }
                }
            }
        }
        Ok(())
    }
}

// --- optimality gaps --------------------------------------------------------------------

/// Grouped bars: one group per checkpoint, one bar per policy.
struct GapsFigure {
    size_px: (u32, u32),
    title: String,
    subtitle: String,
    x: Axis,
    y: Axis,
    /// Policies in slot order.
    slots: Vec<PolicyStyle>,
    bars: Vec<GapBar>,
    /// (group, slot) pairs with rows but none usable.
    missing: Vec<(usize, usize)>,
    legend: Vec<LegendEntry>,
    legend_width_px: u32,
}

/// One aggregated bar: means over the seeds with a usable row.
struct GapBar {
    group: usize,
    slot: usize,
    low_pct: f64,
    /// `None` when some seed has no finite upper bound.
    high_pct: Option<f64>,
    status: BarStatus,
}

fn gap_figures(gaps: &GapTable, palette: &Palette) -> Result<Vec<(String, Figure)>> {
    let mut by_key: BTreeMap<(&str, Objective), Vec<&GapRow>> = BTreeMap::new();
    for row in &gaps.rows {
        by_key
            .entry((row.trace.as_str(), row.objective))
            .or_default()
            .push(row);
    }
    let mut keys: Vec<(&str, Objective)> = by_key.keys().copied().collect();
    keys.sort_by(|a, b| natural_cmp(a.0, b.0).then(a.1.cmp(&b.1)));
    let mut figures = Vec::new();
    for key in keys {
        let rows = &by_key[&key];
        let figure = gaps_figure(key.0, key.1, rows, palette)?;
        let stem = format!("gaps_{}_{}", file_safe(key.0), key.1.as_str());
        figures.push((stem, Figure::Gaps(figure)));
    }
    Ok(figures)
}

fn gaps_figure(
    trace: &str,
    objective: Objective,
    rows: &[&GapRow],
    palette: &Palette,
) -> Result<GapsFigure> {
    let checkpoints: Vec<Checkpoint> = rows
        .iter()
        .map(|r| r.checkpoint)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let policy_names: BTreeSet<String> = rows.iter().map(|r| r.policy.clone()).collect();
    let slots = palette.ordered(policy_names.iter());

    let mut cells: BTreeMap<(usize, usize), Vec<&GapRow>> = BTreeMap::new();
    let mut seeds_per_cell = BTreeSet::new();
    let mut skipped: BTreeMap<NoGap, usize> = BTreeMap::new();
    for row in rows {
        let group = checkpoints.binary_search(&row.checkpoint).unwrap_or(0);
        let slot = slots.iter().position(|s| s.name == row.policy).unwrap_or(0);
        cells.entry((group, slot)).or_default().push(row);
        if let Err(no_gap) = row.gap_pct {
            *skipped.entry(no_gap).or_default() += 1;
        }
    }

    let mut bars = Vec::new();
    let mut missing = Vec::new();
    let mut statuses = BTreeSet::new();
    for (&(group, slot), cell) in &cells {
        let usable: Vec<(BarStatus, f64, f64)> =
            cell.iter().filter_map(|r| r.gap_pct.ok()).collect();
        if usable.is_empty() {
            missing.push((group, slot));
            continue;
        }
        let seeds: BTreeSet<&str> = cell
            .iter()
            .filter(|r| r.gap_pct.is_ok())
            .map(|r| r.seed.as_str())
            .collect();
        seeds_per_cell.insert(seeds.len() as u64);
        let n = usable.len() as f64;
        let status = usable
            .iter()
            .map(|u| u.0)
            .max()
            .unwrap_or(BarStatus::Optimal);
        statuses.insert(status);
        let low_pct = usable.iter().map(|u| u.1).sum::<f64>() / n;
        let high_pct = usable
            .iter()
            .all(|u| u.2.is_finite())
            .then(|| usable.iter().map(|u| u.2).sum::<f64>() / n);
        bars.push(GapBar {
            group,
            slot,
            low_pct,
            high_pct,
            status,
        });
    }

    let top = bars
        .iter()
        .map(|b| b.high_pct.unwrap_or(b.low_pct).max(b.low_pct))
        .fold(0.0f64, f64::max);
    let y = Axis::nice(0.0, (top * 1.12).max(1.0), 8, objective.gap_axis());
    let x = Axis::categories(
        checkpoints
            .iter()
            .map(|c| format!("{} %", c.label()))
            .collect(),
        "checkpoint: arrived workload (% of cluster GPU capacity)",
    );

    let mut legend = vec![LegendEntry::new(Swatch::Heading, "policy")];
    for style in &slots {
        legend.push(LegendEntry::new(
            Swatch::Bar(style.colour, BarStatus::Optimal),
            style.name.clone(),
        ));
    }
    legend.push(LegendEntry::new(Swatch::Heading, "bar = proven gap"));
    for status in &statuses {
        legend.push(LegendEntry::new(
            Swatch::Bar(NEUTRAL, *status),
            status.legend(),
        ));
    }
    if bars
        .iter()
        .any(|b| b.high_pct.is_some_and(|h| h > b.low_pct + 1e-9))
    {
        legend.push(LegendEntry::new(
            Swatch::Whisker,
            "whisker: largest possible gap",
        ));
    }
    if bars.iter().any(|b| b.high_pct.is_none()) {
        legend.push(LegendEntry::new(Swatch::Unbounded, "no finite upper bound"));
    }
    if !missing.is_empty() {
        legend.push(LegendEntry::new(
            Swatch::Missing,
            "no gap (infeasible / solver error)",
        ));
    }

    let averaged = if seeds_per_cell.iter().all(|&n| n == 1) {
        "one seed".to_string()
    } else {
        format!("mean over {}", seeds_phrase(&seeds_per_cell))
    };
    let mut subtitle = format!(
        "bars: gap proven at least ({averaged}); whiskers: up to the largest gap the bounds allow"
    );
    if !skipped.is_empty() {
        let parts: Vec<String> = skipped
            .iter()
            .map(|(kind, n)| match kind {
                NoGap::Infeasible => format!("{n} infeasible"),
                NoGap::Error => format!("{n} solver error"),
            })
            .collect();
        subtitle.push_str(&format!("; rows not plotted: {}", parts.join(", ")));
    }
    let title = format!(
        "Optimality gap of online policies — trace {trace}, objective: {}",
        objective.description()
    );
    let legend_width_px = legend_width_px(&legend)?;
    let plot_w = (checkpoints.len() * slots.len().max(1) * 26 + 260).max(900) as u32;
    let width = (plot_w + legend_width_px).max(header_width_px(&title, &subtitle)?);
    let height = HEADER_PX + 640u32.max(legend_height_px(&legend));
    Ok(GapsFigure {
        size_px: (width, height),
        title,
        subtitle,
        x,
        y,
        slots,
        bars,
        missing,
        legend,
        legend_width_px,
    })
}

impl GapsFigure {
    /// Left and right data x of a bar slot.
    fn slot_x(&self, group: usize, slot: usize) -> (f64, f64) {
        let n = self.slots.len().max(1) as f64;
        // Groups use most of their slot, but a lone bar does not become a wall.
        let group_width = (0.16 * n).min(0.84);
        let width = group_width / n;
        let left = group as f64 - group_width / 2.0 + slot as f64 * width;
        (left + 0.08 * width, left + 0.92 * width)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, mode: TextMode) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let (width, _) = root.dim_in_pixel();
        let (header, body) = root.split_vertically(HEADER_PX);
        draw_header(&header, &self.title, &self.subtitle, mode)?;
        let (plot, legend) = body.split_horizontally(width - self.legend_width_px);
        draw_legend(&legend, &self.legend, mode)?;
        let chart = build_chart(root, &plot, None, &self.x, &self.y, mode)?;
        let y_top = self.y.range.1;
        for bar in &self.bars {
            let style = &self.slots[bar.slot];
            let (x0, x1) = self.slot_x(bar.group, bar.slot);
            let base = chart.backend_coord(&(x0, 0.0));
            let top = chart.backend_coord(&(x1, bar.low_pct.min(y_top)));
            // A zero gap still shows as a thin bar on the axis.
            let top_y = top.1.min(base.1 - 3);
            draw_bar(
                root,
                (base.0, top_y),
                (top.0, base.1),
                style.colour,
                bar.status,
            )?;
            let mid_x = (base.0 + top.0) / 2;
            let cap = ((top.0 - base.0) / 3).clamp(2, 8);
            match bar.high_pct {
                Some(high) if high > bar.low_pct + 1e-9 => {
                    let high_y = chart.backend_coord(&(x0, high.min(y_top))).1;
                    draw_whisker(root, mid_x, top.1, high_y, cap, false)?;
                }
                Some(_) => {}
                None => {
                    let high_y = chart.backend_coord(&(x0, y_top)).1;
                    draw_whisker(root, mid_x, top.1, high_y, cap, true)?;
                }
            }
        }
        for &(group, slot) in &self.missing {
            let (x0, x1) = self.slot_x(group, slot);
            let left = chart.backend_coord(&(x0, 0.0));
            let right = chart.backend_coord(&(x1, 0.0));
            draw_cross(root, ((left.0 + right.0) / 2, left.1 - 9), 5)?;
        }
        Ok(())
    }
}

// --- Pareto fronts ----------------------------------------------------------------------

/// An exact front and the policies' points at one checkpoint of one trace.
struct ParetoFigure {
    size_px: (u32, u32),
    title: String,
    subtitle: String,
    x: Axis,
    y: Axis,
    fronts: Vec<FrontSeries>,
    /// Policy style, point label and (power_kw, frag) in axis units.
    points: Vec<(PolicyStyle, String, (f64, f64))>,
    legend: Vec<LegendEntry>,
    legend_width_px: u32,
}

struct FrontSeries {
    colour: RGBColor,
    /// (power_kw, frag in axis units, proven optimal), by increasing power.
    points: Vec<(f64, f64, bool)>,
}

/// Line colours of the fronts of successive seeds.
const FRONT_COLOURS: [RGBColor; 3] = [
    RGBColor(20, 20, 20),
    RGBColor(105, 105, 105),
    RGBColor(165, 165, 165),
];

fn pareto_figures(pareto: &ParetoTable, palette: &Palette) -> Result<Vec<(String, Figure)>> {
    let mut by_key: BTreeMap<(&str, Checkpoint), Vec<&ParetoRow>> = BTreeMap::new();
    for row in &pareto.rows {
        by_key
            .entry((row.trace.as_str(), row.checkpoint))
            .or_default()
            .push(row);
    }
    let mut keys: Vec<(&str, Checkpoint)> = by_key.keys().copied().collect();
    keys.sort_by(|a, b| natural_cmp(a.0, b.0).then(a.1.cmp(&b.1)));
    let mut figures = Vec::new();
    for key in keys {
        if let Some(figure) = pareto_figure(key.0, key.1, &by_key[&key], palette)? {
            let stem = format!("pareto_{}_{}", file_safe(key.0), key.1.file_part());
            figures.push((stem, Figure::Pareto(figure)));
        }
    }
    Ok(figures)
}

fn pareto_figure(
    trace: &str,
    checkpoint: Checkpoint,
    rows: &[&ParetoRow],
    palette: &Palette,
) -> Result<Option<ParetoFigure>> {
    let usable: Vec<&ParetoRow> = rows.iter().copied().filter(|r| r.point.is_some()).collect();
    let skipped = rows.len() - usable.len();
    let Some((_, max_frag_milli)) = min_max(usable.iter().filter_map(|r| r.point.map(|p| p.1)))
    else {
        return Ok(None);
    };
    let (frag_per_unit, frag_unit) = if max_frag_milli >= 2000.0 {
        (1000.0, "GPUs")
    } else {
        (1.0, "milli-GPU")
    };
    let to_axes =
        |(power_w, frag_milli): (f64, f64)| (power_w / 1000.0, frag_milli / frag_per_unit);

    let seeds: Vec<&str> = {
        let mut seeds: Vec<&str> = usable
            .iter()
            .map(|r| r.seed.as_str())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        seeds.sort_by(|a, b| natural_cmp(a, b));
        seeds
    };
    let several_seeds = seeds.len() > 1;

    let mut fronts = Vec::new();
    let mut legend = Vec::new();
    let mut any_unproven = false;
    for (i, seed) in seeds.iter().enumerate() {
        let mut points: Vec<(f64, f64, bool)> = usable
            .iter()
            .filter(|r| r.kind == PointKind::Front && r.seed == *seed)
            .filter_map(|r| {
                r.point.map(|p| {
                    let (x, y) = to_axes(p);
                    (x, y, r.proven)
                })
            })
            .collect();
        if points.is_empty() {
            continue;
        }
        points.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        any_unproven |= points.iter().any(|p| !p.2);
        let colour = FRONT_COLOURS[i % FRONT_COLOURS.len()];
        let label = if several_seeds {
            format!("exact Pareto front, seed {seed}")
        } else {
            "exact Pareto front".to_string()
        };
        legend.push(LegendEntry::new(Swatch::Front(colour, true), label));
        fronts.push(FrontSeries { colour, points });
    }
    if any_unproven {
        legend.push(LegendEntry::new(
            Swatch::Front(FRONT_COLOURS[0], false),
            "front point at time limit",
        ));
    }

    let mut points = Vec::new();
    let mut policy_names = BTreeSet::new();
    for row in usable.iter().filter(|r| r.kind == PointKind::Policy) {
        let style = palette.style(&row.label);
        let label = if several_seeds {
            format!("{} (seed {})", row.label, row.seed)
        } else {
            row.label.clone()
        };
        policy_names.insert(row.label.clone());
        points.push((style, label, to_axes(row.point.unwrap_or_default())));
    }
    points.sort_by(|a, b| {
        a.0.rank
            .cmp(&b.0.rank)
            .then_with(|| natural_cmp(&a.1, &b.1))
    });
    if !policy_names.is_empty() {
        legend.push(LegendEntry::new(Swatch::Heading, "online policy"));
        for style in palette.ordered(policy_names.iter()) {
            let name = style.name.clone();
            legend.push(LegendEntry::new(Swatch::Marker(style), name));
        }
    }

    let all_x = fronts
        .iter()
        .flat_map(|f| f.points.iter().map(|p| p.0))
        .chain(points.iter().map(|p| p.2 .0));
    let all_y = fronts
        .iter()
        .flat_map(|f| f.points.iter().map(|p| p.1))
        .chain(points.iter().map(|p| p.2 .1));
    let (x_lo, x_hi) = min_max(all_x).unwrap_or((0.0, 1.0));
    let (y_lo, y_hi) = min_max(all_y).unwrap_or((0.0, 1.0));
    let (x_lo, x_hi) = padded(x_lo, x_hi, 0.1);
    let (y_lo, y_hi) = padded(y_lo, y_hi, 0.1);
    let x = Axis::nice(x_lo, x_hi, 8, "power (kW)");
    let y = Axis::nice(y_lo, y_hi, 8, &format!("fragmented GPU ({frag_unit})"));

    let title = format!(
        "Power vs fragmentation — trace {trace} at {} % arrived",
        checkpoint.label()
    );
    let mut subtitle = "line: exact ε-constraint front (least fragmentation for each power cap); \
                        points: online policies on the same snapshot"
        .to_string();
    if several_seeds {
        subtitle.push_str(&format!("; {} seeds", seeds.len()));
    }
    if skipped > 0 {
        let noun = if skipped == 1 { "point" } else { "points" };
        subtitle.push_str(&format!(
            "; {skipped} infeasible/failed front {noun} not plotted"
        ));
    }
    let legend_width_px = legend_width_px(&legend)?;
    let width = (1000 + legend_width_px).max(header_width_px(&title, &subtitle)?);
    let height = HEADER_PX + 700u32.max(legend_height_px(&legend));
    Ok(Some(ParetoFigure {
        size_px: (width, height),
        title,
        subtitle,
        x,
        y,
        fronts,
        points,
        legend,
        legend_width_px,
    }))
}

/// Pixel box `(x0, y0, x1, y1)`.
type PixelBox = (i32, i32, i32, i32);

fn overlaps(a: PixelBox, b: PixelBox) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

impl ParetoFigure {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, mode: TextMode) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let (width, _) = root.dim_in_pixel();
        let (header, body) = root.split_vertically(HEADER_PX);
        draw_header(&header, &self.title, &self.subtitle, mode)?;
        let (plot, legend) = body.split_horizontally(width - self.legend_width_px);
        draw_legend(&legend, &self.legend, mode)?;
        let mut chart = build_chart(root, &plot, None, &self.x, &self.y, mode)?;
        let (x_px, y_px) = chart.plotting_area().get_pixel_range();

        for front in &self.fronts {
            chart.draw_series(LineSeries::new(
                front.points.iter().map(|p| (p.0, p.1)),
                front.colour.stroke_width(2),
            ))?;
            for &(x, y, proven) in &front.points {
                let fill = if proven { front.colour } else { WHITE };
                draw_marker(
                    root,
                    Shape::Circle,
                    chart.backend_coord(&(x, y)),
                    4.5,
                    fill,
                    front.colour,
                )?;
            }
        }

        // Markers first, then labels placed around them without overlaps where possible.
        let centres: Vec<(i32, i32)> = self
            .points
            .iter()
            .map(|p| chart.backend_coord(&p.2))
            .collect();
        let mut taken: Vec<PixelBox> = centres
            .iter()
            .map(|c| (c.0 - 7, c.1 - 7, c.0 + 7, c.1 + 7))
            .collect();
        for front in &self.fronts {
            for p in &front.points {
                let c = chart.backend_coord(&(p.0, p.1));
                taken.push((c.0 - 5, c.1 - 5, c.0 + 5, c.1 + 5));
            }
        }
        for ((style, _, _), &centre) in self.points.iter().zip(&centres) {
            draw_marker(root, style.shape, centre, 6.5, style.colour, INK)?;
        }
        let label_font = font(POINT_LABEL_PX);
        for ((style, label, _), &(cx, cy)) in self.points.iter().zip(&centres) {
            let (w, h) = (text_width_px(label, &label_font)?, POINT_LABEL_PX as i32);
            // (anchor offset, horizontal anchor, vertical anchor) candidates around the point.
            let candidates = [
                ((12, 0), HPos::Left, VPos::Center),
                ((-12, 0), HPos::Right, VPos::Center),
                ((0, -11), HPos::Center, VPos::Bottom),
                ((0, 11), HPos::Center, VPos::Top),
                ((8, -8), HPos::Left, VPos::Bottom),
                ((8, 8), HPos::Left, VPos::Top),
                ((-8, -8), HPos::Right, VPos::Bottom),
                ((-8, 8), HPos::Right, VPos::Top),
                ((12, -22), HPos::Left, VPos::Bottom),
                ((12, 22), HPos::Left, VPos::Top),
            ];
            let boxed = |((dx, dy), hpos, vpos): ((i32, i32), HPos, VPos)| -> PixelBox {
                let (ax, ay) = (cx + dx, cy + dy);
                let x0 = match hpos {
                    HPos::Left => ax,
                    HPos::Center => ax - w / 2,
                    HPos::Right => ax - w,
                };
                let y0 = match vpos {
                    VPos::Top => ay,
                    VPos::Center => ay - h / 2,
                    VPos::Bottom => ay - h,
                };
                (x0, y0, x0 + w, y0 + h)
            };
            let inside = |b: PixelBox| {
                b.0 >= x_px.start && b.2 <= x_px.end && b.1 >= y_px.start && b.3 <= y_px.end
            };
            let chosen = candidates
                .iter()
                .copied()
                .find(|c| {
                    let b = boxed(*c);
                    inside(b) && !taken.iter().any(|t| overlaps(*t, b))
                })
                .or_else(|| candidates.iter().copied().find(|c| inside(boxed(*c))))
                .unwrap_or(candidates[0]);
            taken.push(boxed(chosen));
            let ((dx, dy), hpos, vpos) = chosen;
            let place = Placement::at(hpos, vpos);
            draw_text(
                root,
                label,
                &label_font,
                mix_with_ink(style.colour),
                place,
                (cx + dx, cy + dy),
                mode,
            )?;
        }
        Ok(())
    }
}

/// A darker shade of `colour` so that labels stay readable on white.
fn mix_with_ink(colour: RGBColor) -> RGBColor {
    let mix = |c: u8| (f64::from(c) * 0.7).round() as u8;
    RGBColor(mix(colour.0), mix(colour.1), mix(colour.2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order_compares_numbers_by_value() {
        let mut names = vec![
            "gpushare100",
            "gpushare20",
            "gpushare40",
            "default",
            "gpushare5",
        ];
        names.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            names,
            [
                "default",
                "gpushare5",
                "gpushare20",
                "gpushare40",
                "gpushare100"
            ]
        );
    }

    #[test]
    fn nice_axis_covers_the_data_with_round_ticks() {
        let axis = Axis::nice(312.4, 987.0, 8, "kW");
        assert!(axis.range.0 <= 312.4 && axis.range.1 >= 987.0);
        assert_eq!(axis.label(axis.ticks[1]), "400");
        let small = Axis::nice(0.0, 0.37, 8, "%");
        assert_eq!(small.decimals, 2);
        assert_eq!(small.label(0.05), "0.05");
    }

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

    #[test]
    fn checkpoints_print_short_and_file_safe() {
        assert_eq!(Checkpoint::new(90.0).label(), "90");
        assert_eq!(Checkpoint::new(97.5).file_part(), "97p5");
    }

    #[test]
    fn canonical_colours_do_not_depend_on_the_other_names() {
        let few: BTreeSet<String> = ["fgd".to_string()].into();
        let many: BTreeSet<String> = ["pwr:200,fgd:800", "fgd", "random", "zzz"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (a, b) = (Palette::new(&few), Palette::new(&many));
        for (name, _) in CANONICAL_POLICIES {
            assert_eq!(a.style(name).colour, b.style(name).colour);
        }
        assert_ne!(b.style("pwr:200,fgd:800").colour, b.style("zzz").colour);
    }
}
