//! Optimality-gap figures: per trace and objective, grouped bars (one group per checkpoint,
//! one bar per policy) of the proven gap, with whiskers up to the largest possible gap.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use gapbench_results::Objective;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::gap_data::{BarStatus, Checkpoint, GapCase, GapTable, NoGap};
use super::{file_safe, seeds_phrase, Figure};
use crate::draw::Palette;
use crate::draw::*;

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
}

/// One aggregated bar: means over the seeds with a usable row.
pub(crate) struct GapBar {
    pub(crate) group: usize,
    pub(crate) slot: usize,
    pub(crate) low_pct: f64,
    /// `None` when some seed has no finite upper bound.
    pub(crate) high_pct: Option<f64>,
    pub(crate) status: BarStatus,
}

pub(crate) fn gap_figures(gaps: &GapTable, palette: &Palette) -> Result<Vec<(String, Figure)>> {
    let mut by_key: BTreeMap<(&str, Objective), Vec<&GapCase>> = BTreeMap::new();
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
        let stem = format!("gaps_{}_{}", file_safe(key.0), key.1.name());
        figures.push((stem, Figure::Gaps(figure)));
    }
    Ok(figures)
}

pub(crate) fn gaps_figure(
    trace: &str,
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

    let mut cells: BTreeMap<(usize, usize), Vec<&GapCase>> = BTreeMap::new();
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
                NoGap::Unsupported => format!("{n} unsupported"),
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
    pub(crate) fn slot_x(&self, group: usize, slot: usize) -> (f64, f64) {
        let n = self.slots.len().max(1) as f64;
        // Groups use most of their slot, but a lone bar does not become a wall.
        let group_width = (0.16 * n).min(0.84);
        let width = group_width / n;
        let left = group as f64 - group_width / 2.0 + slot as f64 * width;
        (left + 0.08 * width, left + 0.92 * width)
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
