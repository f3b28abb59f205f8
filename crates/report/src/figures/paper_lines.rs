//! The paper style's line figures: the same metrics as `lines` (allocation, its zoom, power,
//! the saving vs FGD, fragmentation), one panel per trace of a family — a single-column
//! figure (3.33 in) for one trace, double-column (7 in) for more — with every curve's
//! spread across seeds as a band, no title (the caption goes to a `.txt` beside the figure)
//! and the legend under the plot. Drawn by `paper_draw`.
//!
//! The spread comes from `grid.csv`, each seed's own curve: at every arrived percent that
//! all seeds reached, the line is the mean of the seeds' values and the band runs from
//! their minimum to their maximum. A metric computes a seed's value from that seed's runs
//! alone, so the saving vs FGD is a paired difference: each seed's policy run against the
//! FGD run on the same arrival order.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use plotters::style::RGBColor;

use super::paper_draw::{PaperLinesFigure, PaperPanel, PaperSeries};

use super::line_metric::LineMetric;
use super::lines::{ARRIVED_DESC, METRICS};
use super::mean_grid::{MeanGrid, MeanPoint, TraceCurves};
use super::names::{file_safe, seeds_phrase};
use super::seed_grid::SeedCurves;
use crate::draw::*;
use crate::policy_names::PolicyNames;

/// Every paper-style line figure of every family.
pub(crate) fn paper_figures(
    grid: &MeanGrid,
    seeds: Option<&BTreeMap<String, SeedCurves>>,
    names: &PolicyNames,
) -> Result<Vec<(String, PaperLinesFigure)>> {
    let styles = policy_styles(grid);
    let mut figures = Vec::new();
    for (family, traces) in grid.families() {
        for metric in METRICS {
            let context = FigureContext {
                family,
                metric,
                seeds,
                names,
                styles: &styles,
            };
            if let Some(figure) = paper_figure(&context, &traces)? {
                figures.push((metric.stem(&file_safe(family)), figure));
            }
        }
    }
    Ok(figures)
}

/// What every panel of one figure shares.
struct FigureContext<'a> {
    family: &'a str,
    metric: &'a dyn LineMetric,
    seeds: Option<&'a BTreeMap<String, SeedCurves>>,
    names: &'a PolicyNames,
    styles: &'a BTreeMap<String, (RGBColor, Shape, usize)>,
}

/// Each policy's colour, marker and rank: fixed for the built-ins, in turn for the others.
fn policy_styles(grid: &MeanGrid) -> BTreeMap<String, (RGBColor, Shape, usize)> {
    let mut names: Vec<&String> = grid
        .traces
        .values()
        .flat_map(|t| t.policies.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    names.sort_by(|a, b| natural_cmp(a, b));
    let mut others = 0;
    names
        .into_iter()
        .enumerate()
        .map(|(rank, name)| {
            let (colour, shape) = paper_style(name, others);
            if !is_fixed(name) {
                others += 1;
            }
            (name.clone(), (colour, shape, rank))
        })
        .collect()
}

fn is_fixed(name: &str) -> bool {
    paper_style(name, 0) == paper_style(name, 1)
}

/// One figure of a family, or `None` when no trace has data for its metric.
fn paper_figure(
    context: &FigureContext,
    traces: &[(&String, &TraceCurves)],
) -> Result<Option<PaperLinesFigure>> {
    let metric = context.metric;
    let several = traces.len() > 1;
    let mut panels = Vec::new();
    let mut seed_counts = BTreeSet::new();
    let mut legend_policies: Vec<String> = Vec::new();
    for (trace, curves) in traces {
        if !metric.applies(curves) {
            continue;
        }
        let seeds = context
            .seeds
            .and_then(|s| s.get(*trace))
            .filter(|s| s.seeds.len() > 1);
        let (series, policies) = panel_series(context, curves, seeds);
        if series.is_empty() {
            continue;
        }
        seed_counts.insert(seeds.map_or(1, |s| s.seeds.len() as u64));
        for policy in policies {
            if !legend_policies.contains(&policy) {
                legend_policies.push(policy);
            }
        }
        panels.push(panel(metric, several.then(|| trace.to_string()), series));
    }
    if panels.is_empty() {
        return Ok(None);
    }
    let legend: Vec<(String, RGBColor, Shape)> = legend_policies
        .iter()
        .map(|p| {
            let (colour, shape, _) = context.styles[p];
            (context.names.display(p), colour, shape)
        })
        .collect();
    let caption = caption(context, traces, &seed_counts);
    Ok(Some(super::paper_draw::layout(
        panels,
        legend,
        caption,
        metric.zoom(),
        metric.zero_line().is_some(),
    )?))
}

/// The panel of one trace, its y axis fitted to lines and bands.
fn panel(metric: &dyn LineMetric, title: Option<String>, series: Vec<PaperSeries>) -> PaperPanel {
    let (x_lo, x_hi) = metric.x_range();
    let values = series.iter().flat_map(|s| {
        s.mean
            .iter()
            .map(|p| p.1)
            .chain(s.band.iter().flat_map(|b| [b.1, b.2]))
    });
    let (lo, hi) = min_max(values).unwrap_or((0.0, 1.0));
    let step = if metric.zoom() { 10.0 } else { 20.0 };
    let mut y = metric.y_axis(lo, hi);
    if y.ticks.len() > 7 {
        // A 3.33-inch panel has room for about six labelled ticks.
        y = Axis::nice(y.range.0, y.range.1, 6, &y.desc);
    }
    PaperPanel {
        title,
        x: Axis::fixed(x_lo, x_hi, step, ARRIVED_DESC),
        y,
        series,
    }
}

/// The curves of one trace (mean and band over `seeds` when there are several), and the
/// policies they belong to.
fn panel_series(
    context: &FigureContext,
    curves: &TraceCurves,
    seeds: Option<&SeedCurves>,
) -> (Vec<PaperSeries>, Vec<String>) {
    let metric = context.metric;
    let mut policies: Vec<&String> = curves.policies.keys().collect();
    policies.sort_by_key(|p| context.styles[*p].2);
    let mut series = Vec::new();
    let mut drawn = Vec::new();
    for policy in policies {
        let (colour, shape, rank) = context.styles[policy];
        let (mean, band) = match seeds {
            Some(seeds) => spread(metric, seeds, policy),
            None => (
                in_range_values(metric, curves, policy).unwrap_or_default(),
                Vec::new(),
            ),
        };
        if mean.is_empty() {
            continue;
        }
        series.push(PaperSeries {
            colour,
            shape,
            rank,
            mean,
            band,
        });
        drawn.push(policy.clone());
    }
    (series, drawn)
}

/// `metric`'s curve of `policy` on `curves`, restricted to the metric's x range.
fn in_range_values(
    metric: &dyn LineMetric,
    curves: &TraceCurves,
    policy: &str,
) -> Option<Vec<(f64, f64)>> {
    let (x_lo, x_hi) = metric.x_range();
    let points: Vec<&MeanPoint> = curves
        .policies
        .get(policy)?
        .iter()
        .filter(|p| p.arrived_pct >= x_lo - 1e-9 && p.arrived_pct <= x_hi + 1e-9)
        .collect();
    metric.values(curves, policy, &points)
}

/// A curve's spread: (x, min, max) at each arrived percent.
type Band = Vec<(f64, f64, f64)>;

/// The mean over seeds and the (x, min, max) band, at the arrived percents every seed has.
fn spread(metric: &dyn LineMetric, seeds: &SeedCurves, policy: &str) -> (Vec<(f64, f64)>, Band) {
    let mut by_x: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
    let mut runs = 0;
    for curves in seeds.seeds.values() {
        let Some(values) = in_range_values(metric, curves, policy) else {
            continue;
        };
        runs += 1;
        for (x, y) in values {
            by_x.entry((x * 1000.0).round() as i64).or_default().push(y);
        }
    }
    let mut mean = Vec::new();
    let mut band = Vec::new();
    for (key, values) in by_x
        .into_iter()
        .filter(|(_, v)| v.len() == runs && runs > 0)
    {
        let x = key as f64 / 1000.0;
        let (lo, hi) = min_max(values.iter().copied()).unwrap_or((0.0, 0.0));
        mean.push((x, values.iter().sum::<f64>() / values.len() as f64));
        band.push((x, lo, hi));
    }
    (mean, band)
}

/// What the figure shows, in words: title, trace(s), what the line and the band are.
fn caption(
    context: &FigureContext,
    traces: &[(&String, &TraceCurves)],
    seed_counts: &BTreeSet<u64>,
) -> String {
    let names: Vec<&str> = traces.iter().map(|(t, _)| t.as_str()).collect();
    let traces_phrase = match names.as_slice() {
        [one] => format!("trace {one}"),
        many => format!("traces {} (one panel each)", many.join(", ")),
    };
    let paired = context.metric.zero_line().is_some();
    let spread = if seed_counts.iter().all(|&n| n > 1) {
        let seeds = seeds_phrase(seed_counts);
        if paired {
            format!("Line: mean over {seeds} of each seed's saving against FGD on the same seed's arrival order (paired differences); shaded band: their minimum to maximum.")
        } else {
            format!("Line: mean over {seeds}; shaded band: minimum to maximum over the seeds.")
        }
    } else {
        format!(
            "Mean over {} (no spread to show).",
            seeds_phrase(seed_counts)
        )
    };
    format!(
        "{} — {} family, {traces_phrase}. {spread}",
        context.metric.what(),
        context.family
    )
}
