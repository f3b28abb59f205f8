//! Optimality-gap figures: one per trace, cluster size and objective — results of different
//! sizes are never averaged together — with grouped bars (one group per checkpoint, one bar
//! per policy) of the proven gap and whiskers up to the largest gap the bound allows.
//!
//! The value axis shows what can be read: every proven gap, and every upper end within
//! [`READABLE_MULTIPLE`] × the largest proven gap. A longer whisker is cut at the axis top
//! with its value written above it; a gap without finite upper end (a proven bound of 0, no
//! bound at all) is a dashed line topped by `∞` and its reason. Those labels run upward,
//! one per bar slot, in a band above the axis, so they cannot collide.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use gapbench_results::{Objective, SolveStatus};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::gap_data::{
    status_legend, BarStatus, Checkpoint, GapCase, GapTable, NoGap, ProvenGap, Unbounded, UpperEnd,
};
use super::gap_seeds::{over_seeds, SeedRange};
use super::names::{file_safe, seeds_phrase};
use crate::cluster_size::{thousands, ClusterSizes};
use crate::draw::Palette;
use crate::draw::*;

/// Upper ends beyond this multiple of the largest proven gap (of at least one unit: 1 % or
/// 1 pp) are cut at the axis top: a whisker to 12,000 % would flatten every bar to nothing.
pub(crate) const READABLE_MULTIPLE: f64 = 4.0;

/// Size of the values and reasons written above cut and unbounded whiskers.
const END_LABEL_PX: f64 = 13.0;

/// Grouped bars: one group per checkpoint, one bar per policy.
pub(crate) struct GapsFigure {
    pub(crate) size_px: (u32, u32),
    pub(crate) title: String,
    pub(crate) subtitle: String,
    pub(crate) x: Axis,
    pub(crate) y: Axis,
    /// Policies in slot order.
    pub(crate) slots: Vec<PolicyStyle>,
    pub(crate) bars: Vec<GapBar>,
    /// (group, slot) pairs with rows but none usable.
    pub(crate) missing: Vec<(usize, usize)>,
    pub(crate) legend: Vec<LegendEntry>,
    pub(crate) legend_width_px: u32,
    /// Height of the band above the value axis that holds the labels of cut and unbounded
    /// whiskers (0 when there are none).
    pub(crate) band_px: u32,
    /// `%` or `pp`, for the labels of cut whiskers.
    pub(crate) unit: &'static str,
}

/// One aggregated bar: means over the seeds with a usable row.
pub(crate) struct GapBar {
    pub(crate) group: usize,
    pub(crate) slot: usize,
    pub(crate) low_pct: f64,
    /// The mean upper end, or unbounded when some seed has no finite one.
    pub(crate) high: UpperEnd,
    /// The least proven status of its seeds (`BarStatus` orders strongest first).
    pub(crate) status: BarStatus,
    /// Over several seeds: their range, drawn beside the bar; `None` for one seed.
    pub(crate) seed_range: Option<SeedRange>,
}

/// How a bar's upper end is drawn on an axis that ends at `y_top`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum EndMark {
    /// Proven optimal (or the bound meets the incumbent): no whisker.
    None,
    Whisker(f64),
    /// Beyond the axis: cut, with this label above it.
    Cut(String),
    /// No finite upper end: `∞` with this reason above it.
    Unbounded(String),
}

impl GapBar {
    pub(crate) fn end_mark(&self, y_top: f64, unit: &str) -> EndMark {
        match self.high {
            UpperEnd::Finite(high) if high <= self.low_pct + 1e-9 => EndMark::None,
            UpperEnd::Finite(high) if high <= y_top * (1.0 + 1e-9) => EndMark::Whisker(high),
            UpperEnd::Finite(high) => EndMark::Cut(format!("{} {unit}", gap_value(high))),
            UpperEnd::Unbounded(reason) => EndMark::Unbounded(reason.short().to_string()),
        }
    }
}

/// `13,926`, `202`, `17.5`: as many digits as a reader needs of a cut whisker's end.
fn gap_value(value: f64) -> String {
    if value >= 999.5 {
        thousands(value.round() as u64)
    } else if value >= 99.95 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

pub(crate) fn gap_figures(
    gaps: &GapTable,
    sizes: &ClusterSizes,
    palette: &Palette,
) -> Result<Vec<(String, GapsFigure)>> {
    let mut by_key: BTreeMap<(&str, usize, Objective), Vec<&GapCase>> = BTreeMap::new();
    for row in &gaps.rows {
        by_key
            .entry((row.trace.as_str(), row.nodes, row.objective))
            .or_default()
            .push(row);
    }
    // Trace by trace; the whole cluster (most nodes) first.
    let mut keys: Vec<(&str, usize, Objective)> = by_key.keys().copied().collect();
    keys.sort_by(|a, b| {
        natural_cmp(a.0, b.0)
            .then(b.1.cmp(&a.1))
            .then(a.2.cmp(&b.2))
    });
    let mut figures = Vec::new();
    for (trace, nodes, objective) in keys {
        let rows = &by_key[&(trace, nodes, objective)];
        let size = sizes.describe(trace, nodes);
        let figure = gaps_figure(trace, &size, objective, rows, palette)?;
        let stem = format!("gaps_{}_{nodes}n_{}", file_safe(trace), objective.name());
        figures.push((stem, figure));
    }
    Ok(figures)
}

/// The bars of one figure and what the rows that make no bar say.
struct Cells {
    bars: Vec<GapBar>,
    missing: Vec<(usize, usize)>,
    skipped: BTreeMap<NoGap, usize>,
    /// How many seeds each bar averages.
    seeds_per_bar: BTreeSet<u64>,
}

fn cells(rows: &[&GapCase], checkpoints: &[Checkpoint], slots: &[PolicyStyle]) -> Cells {
    let mut by_cell: BTreeMap<(usize, usize), Vec<&GapCase>> = BTreeMap::new();
    let mut skipped: BTreeMap<NoGap, usize> = BTreeMap::new();
    for row in rows {
        let group = checkpoints.binary_search(&row.checkpoint).unwrap_or(0);
        let slot = slots.iter().position(|s| s.name == row.policy).unwrap_or(0);
        by_cell.entry((group, slot)).or_default().push(row);
        if let Err(no_gap) = row.gap_pct {
            *skipped.entry(no_gap).or_default() += 1;
        }
    }
    let mut out = Cells {
        bars: Vec::new(),
        missing: Vec::new(),
        skipped,
        seeds_per_bar: BTreeSet::new(),
    };
    for (&(group, slot), cell) in &by_cell {
        // One interval per seed (the best known of its instance): each seed weighs the same.
        let mut per_seed: BTreeMap<&str, ProvenGap> = BTreeMap::new();
        for row in cell {
            if let Ok(gap) = row.gap_pct {
                per_seed.entry(row.seed.as_str()).or_insert(gap);
            }
        }
        if per_seed.is_empty() {
            out.missing.push((group, slot));
            continue;
        }
        out.seeds_per_bar.insert(per_seed.len() as u64);
        let gaps: Vec<ProvenGap> = per_seed.into_values().collect();
        out.bars.push(seed_bar(group, slot, &gaps));
    }
    out
}

/// The bar of one policy and checkpoint from one interval per seed.
fn seed_bar(group: usize, slot: usize, per_seed: &[ProvenGap]) -> GapBar {
    let over = over_seeds(per_seed);
    GapBar {
        group,
        slot,
        low_pct: over.mean_low_pct,
        high: over.mean_high,
        status: over.status,
        seed_range: over.range,
    }
}

/// The value axis: every proven gap and the upper ends within [`READABLE_MULTIPLE`] × the
/// largest of them; the seeds' ranges count as upper ends and lowest gaps.
fn value_axis(bars: &[GapBar], objective: Objective) -> Axis {
    let lowest = bars
        .iter()
        .map(|b| b.seed_range.map_or(b.low_pct, |r| r.least_low_pct))
        .fold(0.0f64, f64::min);
    let proven = bars.iter().map(|b| b.low_pct).fold(0.0f64, f64::max);
    let readable = READABLE_MULTIPLE * proven.max(1.0);
    let top = bars
        .iter()
        .flat_map(|b| [Some(b.high), b.seed_range.map(|r| r.greatest_high)])
        .filter_map(|high| match high {
            Some(UpperEnd::Finite(high)) if high <= readable => Some(high),
            _ => None,
        })
        .fold(proven, f64::max);
    Axis::nice(lowest, (top * 1.08).max(1.0), 8, objective.gap_axis())
}

/// Statuses with a gap, in the order the legend lists them.
const STATUS_ORDER: [SolveStatus; 5] = [
    SolveStatus::Optimal,
    SolveStatus::TimeLimitWithIncumbent,
    SolveStatus::LpBound,
    SolveStatus::GapLimit,
    SolveStatus::RelaxationBound,
];

fn legend(
    rows: &[&GapCase],
    slots: &[PolicyStyle],
    cells: &Cells,
    marks: &[EndMark],
) -> Vec<LegendEntry> {
    let mut legend = vec![LegendEntry::new(Swatch::Heading, "policy")];
    for style in slots {
        legend.push(LegendEntry::new(
            Swatch::Bar(style.colour, BarStatus::Optimal),
            style.name.clone(),
        ));
    }
    let heading = if cells.bars.iter().any(|b| b.seed_range.is_some()) {
        "bar = mean proven gap; status (least proven seed)"
    } else {
        "bar = proven gap; status"
    };
    legend.push(LegendEntry::new(Swatch::Heading, heading));
    for status in &STATUS_ORDER {
        let present = rows
            .iter()
            .any(|r| r.gap_pct.is_ok() && r.status == *status);
        if let (true, Some(text), Ok(bar)) = (
            present,
            status_legend(status),
            super::gap_data::bar_status(status),
        ) {
            legend.push(LegendEntry::new(Swatch::Bar(NEUTRAL, bar), text));
        }
    }
    legend.extend(mark_legend(cells, marks));
    legend
}

/// The legend rows of the marks above and beside the bars.
fn mark_legend(cells: &Cells, marks: &[EndMark]) -> Vec<LegendEntry> {
    let mut legend = Vec::new();
    if marks.iter().any(|m| matches!(m, EndMark::Whisker(_))) {
        legend.push(LegendEntry::new(
            Swatch::Whisker,
            "whisker: largest possible gap",
        ));
    }
    if marks.iter().any(|m| matches!(m, EndMark::Cut(_))) {
        legend.push(LegendEntry::new(
            Swatch::CutWhisker,
            "whisker beyond the axis: its end written above",
        ));
    }
    let reasons: BTreeSet<Unbounded> = cells
        .bars
        .iter()
        .filter_map(|b| match b.high {
            UpperEnd::Unbounded(reason) => Some(reason),
            UpperEnd::Finite(_) => None,
        })
        .collect();
    for reason in reasons {
        legend.push(LegendEntry::new(Swatch::Unbounded, reason.legend()));
    }
    if cells.bars.iter().any(|b| b.seed_range.is_some()) {
        legend.push(LegendEntry::new(
            Swatch::SeedRange,
            "range over the seeds: least proven to greatest possible gap",
        ));
    }
    if !cells.missing.is_empty() {
        legend.push(LegendEntry::new(
            Swatch::Missing,
            "no gap (infeasible / solver error)",
        ));
    }
    legend
}

/// `seed 42`, `seeds 42–44`, `seeds 7, 42`: the seeds a figure's rows come from.
pub(crate) fn seed_list(seeds: &BTreeSet<&str>) -> String {
    let mut numbers: Vec<u64> = Vec::new();
    for seed in seeds {
        match seed.parse() {
            Ok(n) => numbers.push(n),
            Err(_) => {
                let mut names: Vec<&str> = seeds.iter().copied().collect();
                names.sort_by(|a, b| natural_cmp(a, b));
                return format!("seeds {}", names.join(", "));
            }
        }
    }
    numbers.sort_unstable();
    match numbers.as_slice() {
        [] => "no seed".to_string(),
        [one] => format!("seed {one}"),
        [first, .., last] if last - first + 1 == numbers.len() as u64 && numbers.len() > 2 => {
            format!("seeds {first}–{last}")
        }
        _ => format!(
            "seeds {}",
            numbers
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn subtitle(cells: &Cells, any_cut: bool) -> String {
    let averaged = if cells.seeds_per_bar.iter().all(|&n| n == 1) {
        "one seed".to_string()
    } else {
        format!("mean over {}", seeds_phrase(&cells.seeds_per_bar))
    };
    let mut subtitle = format!(
        "bars: gap proven at least ({averaged}); whiskers: up to the largest gap the bounds allow (the best placement and bound known for the same tasks)"
    );
    if any_cut {
        subtitle.push_str(&format!(
            "; cut beyond {READABLE_MULTIPLE}× the largest proven gap"
        ));
    }
    subtitle.push_str(&seed_range_phrase(&cells.bars));
    if !cells.skipped.is_empty() {
        let parts: Vec<String> = cells
            .skipped
            .iter()
            .map(|(kind, n)| match kind {
                NoGap::Infeasible => format!("{n} infeasible"),
                NoGap::Error => format!("{n} solver error"),
                NoGap::Unsupported => format!("{n} unsupported"),
            })
            .collect();
        subtitle.push_str(&format!("; rows not plotted: {}", parts.join(", ")));
    }
    subtitle
}

/// What the subtitle says of the seeds' ranges and of bars whose seeds differ in status
/// (empty when every bar has one seed).
fn seed_range_phrase(bars: &[GapBar]) -> String {
    let ranges: Vec<&SeedRange> = bars.iter().filter_map(|b| b.seed_range.as_ref()).collect();
    if ranges.is_empty() {
        return String::new();
    }
    let mut phrase = "; thin line: range over the seeds, least proven gap to greatest upper end (arrow: beyond the axis)".to_string();
    let mixed = ranges.iter().filter(|r| r.mixed_status).count();
    if mixed > 0 {
        let bars = if mixed == 1 { "bar mixes" } else { "bars mix" };
        phrase.push_str(&format!(
            "; {mixed} {bars} statuses, hatched as the least proven seed"
        ));
    }
    phrase
}

/// The figure of one trace, cluster size (`size`, as [`ClusterSizes::describe`] writes
/// it) and objective.
pub(crate) fn gaps_figure(
    trace: &str,
    size: &str,
    objective: Objective,
    rows: &[&GapCase],
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
    let cells = cells(rows, &checkpoints, &slots);
    let y = value_axis(&cells.bars, objective);
    let unit = if objective == Objective::Alloc {
        "pp"
    } else {
        "%"
    };
    let marks: Vec<EndMark> = cells
        .bars
        .iter()
        .map(|b| b.end_mark(y.range.1, unit))
        .collect();
    let x = Axis::categories(
        checkpoints
            .iter()
            .map(|c| format!("{} %", c.label()))
            .collect(),
        "checkpoint: arrived workload (% of cluster GPU capacity)",
    );
    let legend = legend(rows, &slots, &cells, &marks);
    let any_cut = marks.iter().any(|m| matches!(m, EndMark::Cut(_)));
    let subtitle = subtitle(&cells, any_cut);
    let seeds: BTreeSet<&str> = rows.iter().map(|r| r.seed.as_str()).collect();
    let title = format!(
        "Optimality gap of online policies — trace {trace}, {size}, {}, objective: {}",
        seed_list(&seeds),
        objective.description()
    );
    let band_px = band_px(&marks)?;
    let legend_width_px = legend_width_px(&legend)?;
    // A seeds' range beside each bar needs wider slots.
    let slot_px = if cells.bars.iter().any(|b| b.seed_range.is_some()) {
        36
    } else {
        26
    };
    let plot_w = (checkpoints.len() * slots.len().max(1) * slot_px + 260).max(900) as u32;
    let width = (plot_w + legend_width_px).max(header_width_px(&title, &subtitle)?);
    let height = HEADER_PX + (640 + band_px).max(legend_height_px(&legend));
    Ok(GapsFigure {
        size_px: (width, height),
        title,
        subtitle,
        x,
        y,
        slots,
        bars: cells.bars,
        missing: cells.missing,
        legend,
        legend_width_px,
        band_px,
        unit,
    })
}

/// Pixels above the axis top a cut or unbounded whisker's mark and label need.
const MARK_ABOVE_AXIS_PX: i32 = 30;

/// Height of the band for the labels written above the axis (0 without any).
fn band_px(marks: &[EndMark]) -> Result<u32> {
    let label_font = font(END_LABEL_PX);
    let mut longest = None;
    for mark in marks {
        if let EndMark::Cut(label) | EndMark::Unbounded(label) = mark {
            let width = text_width_px(label, &label_font)?;
            longest = Some(longest.unwrap_or(0).max(width));
        }
    }
    // The chart's own top margin (12 px) lies between the band and the axis top.
    Ok(longest.map_or(0, |w| (w + MARK_ABOVE_AXIS_PX + 4 - 12).max(0) as u32))
}

impl GapsFigure {
    /// Left data x and width of a bar slot.
    fn slot_span(&self, group: usize, slot: usize) -> (f64, f64) {
        let n = self.slots.len().max(1) as f64;
        // Groups use most of their slot, but a lone bar does not become a wall.
        let group_width = (0.16 * n).min(0.84);
        let width = group_width / n;
        (
            group as f64 - group_width / 2.0 + slot as f64 * width,
            width,
        )
    }

    fn has_seed_ranges(&self) -> bool {
        self.bars.iter().any(|b| b.seed_range.is_some())
    }

    /// Left and right data x of a bar; with seeds' ranges the bar leaves the right of its
    /// slot to the range line ([`GapsFigure::range_x`]).
    pub(crate) fn slot_x(&self, group: usize, slot: usize) -> (f64, f64) {
        let (left, width) = self.slot_span(group, slot);
        if self.has_seed_ranges() {
            (left + 0.06 * width, left + 0.66 * width)
        } else {
            (left + 0.08 * width, left + 0.92 * width)
        }
    }

    /// Data x of the seeds' range line of a slot.
    pub(crate) fn range_x(&self, group: usize, slot: usize) -> f64 {
        let (left, width) = self.slot_span(group, slot);
        left + 0.82 * width
    }

    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        mode: TextMode,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let plot = frame(
            root,
            &self.title,
            &self.subtitle,
            &self.legend,
            self.legend_width_px,
            mode,
        )?;
        let (_, chart_area) = plot.split_vertically(self.band_px);
        let chart = build_chart(root, &chart_area, None, &self.x, &self.y, mode)?;
        for bar in &self.bars {
            self.draw_gap_bar(root, &chart, bar, mode)?;
        }
        let zero = 0.0f64.clamp(self.y.range.0, self.y.range.1);
        for &(group, slot) in &self.missing {
            let (x0, x1) = self.slot_x(group, slot);
            let left = chart.backend_coord(&(x0, zero));
            let right = chart.backend_coord(&(x1, zero));
            draw_cross(root, ((left.0 + right.0) / 2, left.1 - 9), 5)?;
        }
        Ok(())
    }

    /// One bar with the mark of its upper end, the label above the axis of a cut or
    /// unbounded end, and its seeds' range.
    fn draw_gap_bar<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        chart: &Chart<'_, DB>,
        bar: &GapBar,
        mode: TextMode,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let y_top = self.y.range.1;
        let top_px = chart.backend_coord(&(0.0, y_top)).1;
        let zero = 0.0f64.clamp(self.y.range.0, y_top);
        let style = &self.slots[bar.slot];
        let (x0, x1) = self.slot_x(bar.group, bar.slot);
        let base = chart.backend_coord(&(x0, zero));
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
        let label = match bar.end_mark(y_top, self.unit) {
            EndMark::None => None,
            EndMark::Whisker(high) => {
                let high_y = chart.backend_coord(&(x0, high)).1;
                draw_whisker(root, mid_x, top.1, high_y, cap)?;
                None
            }
            EndMark::Cut(label) => {
                draw_cut_whisker(root, mid_x, (top.1, top_px, top_px - 12), cap)?;
                Some(label)
            }
            EndMark::Unbounded(label) => {
                draw_unbounded(root, mid_x, (top.1, top_px - 8), INFINITY_PX, mode)?;
                Some(label)
            }
        };
        if let Some(label) = label {
            // Upward, one per slot: slots are wider than a line of this text.
            let place = Placement {
                h: HPos::Left,
                v: VPos::Center,
                upward: true,
            };
            let at = (mid_x, top_px - MARK_ABOVE_AXIS_PX);
            draw_text(root, &label, &font(END_LABEL_PX), INK, place, at, mode)?;
        }
        if let Some(range) = &bar.seed_range {
            let x = self.range_x(bar.group, bar.slot);
            let low = chart.backend_coord(&(x, range.least_low_pct.clamp(self.y.range.0, y_top)));
            let (high, beyond) = match range.greatest_high {
                UpperEnd::Finite(high) if high <= y_top * (1.0 + 1e-9) => (high, false),
                _ => (y_top, true),
            };
            let high_y = chart.backend_coord(&(x, high)).1;
            draw_seed_range(root, low.0, (low.1, high_y), beyond)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(low_pct: f64, high: UpperEnd) -> GapBar {
        GapBar {
            group: 0,
            slot: 0,
            low_pct,
            high,
            status: BarStatus::TimeLimit,
            seed_range: None,
        }
    }

    /// The fragmentation figure: proven gaps 5.5–111 %, upper ends of 202 %,
    /// 13,926 % and two without finite bound. The axis reads the proven gaps and 202 %.
    #[test]
    fn the_axis_shows_what_can_be_read_and_cuts_the_rest() {
        let bars = [
            bar(5.53, UpperEnd::Finite(202.03)),
            bar(10.18, UpperEnd::Unbounded(Unbounded::ZeroBound)),
            bar(111.40, UpperEnd::Unbounded(Unbounded::NoBound)),
            bar(58.10, UpperEnd::Finite(13926.48)),
        ];
        let axis = value_axis(&bars, Objective::Frag);
        assert!(axis.range.1 >= 202.03 && axis.range.1 < 4.0 * 111.40);
        let marks: Vec<EndMark> = bars.iter().map(|b| b.end_mark(axis.range.1, "%")).collect();
        assert_eq!(marks[0], EndMark::Whisker(202.03));
        assert_eq!(marks[1], EndMark::Unbounded("bound 0".into()));
        assert_eq!(marks[2], EndMark::Unbounded("no bound".into()));
        assert_eq!(marks[3], EndMark::Cut("13,926 %".into()));
    }

    #[test]
    fn small_proven_gaps_keep_a_readable_floor() {
        // All proven gaps 0: upper ends up to 4 units stay, 50 % is cut.
        let bars = [
            bar(0.0, UpperEnd::Finite(0.8)),
            bar(0.0, UpperEnd::Finite(50.0)),
        ];
        let axis = value_axis(&bars, Objective::Power);
        assert!(axis.range.1 >= 0.8 && axis.range.1 <= 4.0);
        assert_eq!(
            bars[1].end_mark(axis.range.1, "%"),
            EndMark::Cut("50.0 %".into())
        );
        assert_eq!(bars[0].end_mark(axis.range.1, "%"), EndMark::Whisker(0.8));
    }

    fn case(
        policy: &str,
        checkpoint: f64,
        seed: &str,
        bar: BarStatus,
        low: f64,
        high: UpperEnd,
    ) -> GapCase {
        let status = match bar {
            BarStatus::Optimal => SolveStatus::Optimal,
            BarStatus::GapLimit => SolveStatus::GapLimit,
            BarStatus::LpBound => SolveStatus::LpBound,
            BarStatus::TimeLimit => SolveStatus::TimeLimitWithIncumbent,
            BarStatus::Relaxation => SolveStatus::RelaxationBound,
        };
        GapCase {
            trace: "default".into(),
            nodes: 20,
            checkpoint: Checkpoint::new(checkpoint),
            objective: Objective::Power,
            policy: policy.into(),
            seed: seed.into(),
            status,
            gap_pct: Ok(ProvenGap {
                bar,
                low_pct: low,
                high,
            }),
        }
    }

    /// Three seeds of fgd at 90 %: [10, 10] optimal, [12, 16] gap_limit (twice: a re-solve
    /// of the same instance counts once), [5, 19] time_limit. By hand: mean 9 – 15, range
    /// 5 – 19, drawn as time_limit (the least proven) and marked as mixing statuses. pwr at
    /// 110 %: [4, 8] and [6, ∞) give mean 5 – ∞ and range 4 – ∞; pwr at 90 %, one seed, has
    /// no range and stays as it is.
    #[test]
    fn bars_over_seeds_carry_the_hand_computed_mean_and_range() {
        use BarStatus::*;
        let finite = UpperEnd::Finite;
        let rows = [
            case("fgd", 90.0, "42", Optimal, 10.0, finite(10.0)),
            case("fgd", 90.0, "43", GapLimit, 12.0, finite(16.0)),
            case("fgd", 90.0, "43", GapLimit, 12.0, finite(16.0)),
            case("fgd", 90.0, "44", TimeLimit, 5.0, finite(19.0)),
            case("pwr", 90.0, "42", Optimal, 3.0, finite(3.0)),
            case("pwr", 110.0, "42", TimeLimit, 4.0, finite(8.0)),
            case(
                "pwr",
                110.0,
                "43",
                TimeLimit,
                6.0,
                UpperEnd::Unbounded(Unbounded::NoBound),
            ),
        ];
        let refs: Vec<&GapCase> = rows.iter().collect();
        let names: BTreeSet<String> = ["fgd".to_string(), "pwr".to_string()].into();
        let figure = gaps_figure(
            "default",
            "20 nodes",
            Objective::Power,
            &refs,
            &Palette::new(&names),
        )
        .unwrap();
        let slot = |name: &str| figure.slots.iter().position(|s| s.name == name).unwrap();
        let bar_at = |group: usize, policy: &str| {
            figure
                .bars
                .iter()
                .find(|b| b.group == group && b.slot == slot(policy))
                .unwrap()
        };
        let fgd = bar_at(0, "fgd");
        assert_eq!((fgd.low_pct, fgd.high), (9.0, finite(15.0)));
        assert_eq!(fgd.status, TimeLimit);
        assert_eq!(
            fgd.seed_range,
            Some(SeedRange {
                seeds: 3,
                least_low_pct: 5.0,
                greatest_high: finite(19.0),
                mixed_status: true
            })
        );
        let unbounded = UpperEnd::Unbounded(Unbounded::NoBound);
        let pwr_110 = bar_at(1, "pwr");
        assert_eq!((pwr_110.low_pct, pwr_110.high), (5.0, unbounded));
        assert_eq!(
            pwr_110.seed_range,
            Some(SeedRange {
                seeds: 2,
                least_low_pct: 4.0,
                greatest_high: unbounded,
                mixed_status: false
            })
        );
        assert_eq!(bar_at(0, "pwr").seed_range, None);
        // The axis reaches the greatest upper end (19 ≤ 4 × the largest mean proven gap).
        assert!(figure.y.range.1 >= 19.0);
        assert!(
            figure.subtitle.contains("mean over 1–3 seeds"),
            "{}",
            figure.subtitle
        );
        assert!(figure
            .subtitle
            .contains("1 bar mixes statuses, hatched as the least proven seed"));
        assert!(figure
            .legend
            .iter()
            .any(|e| matches!(e.swatch, Swatch::SeedRange)));
        // Each range line sits beside its bar, inside the slot.
        let (x0, x1) = figure.slot_x(0, slot("fgd"));
        let range_x = figure.range_x(0, slot("fgd"));
        assert!(x0 < x1 && x1 < range_x && range_x < figure.slot_x(0, slot("fgd") + 1).0);
    }

    #[test]
    fn seeds_are_listed_or_ranged() {
        let set = |s: &[&'static str]| s.iter().copied().collect::<BTreeSet<&str>>();
        assert_eq!(seed_list(&set(&["42"])), "seed 42");
        assert_eq!(seed_list(&set(&["43", "42"])), "seeds 42, 43");
        assert_eq!(seed_list(&set(&["42", "44", "43"])), "seeds 42–44");
        assert_eq!(seed_list(&set(&["7", "42"])), "seeds 7, 42");
    }
}
