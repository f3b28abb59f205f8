//! EaCO's trade-off as a curve, one figure per idle policy: EaCO-O's energy saving vs its
//! mean run-time increase (both vs FIFO) at each swept deadline factor σ, the bound's
//! frontier (the most any co-allocation meeting σ-deadlines saves, drawn as a staircase
//! at run-time increase σ − 1: a schedule whose jobs are at most x late meets every
//! σ ≥ 1 + x) and the paper's reported point. Drawn as a Pareto figure.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::Result;
use plotters::style::RGBColor;

use super::pareto::{FrontMarker, FrontSeries, ParetoFigure};
use super::replay_data::{Panel, PolicyMeans};
use crate::draw::*;
use crate::eaco::{tradeoff_points, EacoBounds, TradeoffPoint, PAPER_POINT};

/// A colour per cluster size (64 and 28 servers first).
const SERVER_COLOURS: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
];

/// The bound's frontier through `(σ − 1, saving)`: on `[σ_k − 1, σ_{k+1} − 1]` the saving
/// of `σ_{k+1}` (a schedule at most `x` late meets every larger σ's deadlines).
fn frontier(points: &[&TradeoffPoint]) -> Vec<(f64, f64)> {
    let mut steps = Vec::new();
    for (k, p) in points.iter().enumerate() {
        let x = (p.deadline_factor - 1.0) * 100.0;
        if k > 0 {
            steps.push((
                (points[k - 1].deadline_factor - 1.0) * 100.0,
                p.bound_saving_pct,
            ));
        }
        steps.push((x, p.bound_saving_pct));
    }
    steps
}

pub(crate) fn eaco_tradeoff_figures(
    dir: &Path,
    panels: &[(Panel, Vec<PolicyMeans>)],
) -> Result<Vec<(String, ParetoFigure)>> {
    let bounds = EacoBounds::read(dir)?;
    let eaco_panels: Vec<&(Panel, Vec<PolicyMeans>)> =
        panels.iter().filter(|(p, _)| p.is_eaco()).collect();
    let points = tradeoff_points(&bounds, &eaco_panels);
    let idles: BTreeSet<&str> = points.iter().map(|p| p.idle.as_str()).collect();
    let mut figures = Vec::new();
    for idle in idles {
        let mine: Vec<&TradeoffPoint> = points.iter().filter(|p| p.idle == idle).collect();
        if mine.len() < 2 {
            continue;
        }
        figures.push((
            format!("eaco_tradeoff_{idle}"),
            tradeoff_figure(idle, &mine)?,
        ));
    }
    Ok(figures)
}

/// The trade-off figure of one idle policy: per cluster size EaCO-O's points over σ and
/// the bound's frontier, and the paper's point.
fn tradeoff_figure(idle: &str, mine: &[&TradeoffPoint]) -> Result<ParetoFigure> {
    let servers: Vec<usize> = {
        let mut s: Vec<usize> = mine.iter().map(|p| p.servers).collect();
        s.dedup();
        s
    };
    let (fronts, mut legend) = server_fronts(mine, &servers);
    let paper = PolicyStyle {
        name: "paper".to_string(),
        colour: NEUTRAL,
        shape: Shape::Diamond,
        rank: 0,
    };
    legend.push(LegendEntry::new(Swatch::Heading, "reported"));
    legend.push(LegendEntry::new(
        Swatch::Marker(paper.clone()),
        "EaCO paper (64 nodes)",
    ));
    let xs = mine
        .iter()
        .flat_map(|p| [p.eaco_run_increase_pct, (p.deadline_factor - 1.0) * 100.0])
        .chain([0.0, PAPER_POINT.0]);
    let ys = mine
        .iter()
        .flat_map(|p| [p.eaco_saving_pct, p.bound_saving_pct])
        .chain([0.0, PAPER_POINT.1]);
    let (x_lo, x_hi) = padded_range(xs);
    let (y_lo, y_hi) = padded_range(ys);
    let seeds: BTreeSet<usize> = mine.iter().map(|p| p.seeds).collect();
    let seeds: Vec<String> = seeds.iter().map(usize::to_string).collect();
    let servers_text: Vec<String> = servers.iter().map(usize::to_string).collect();
    let title = format!(
        "EaCO's trade-off vs the proven bound — EaCO setup, {} 8×V100 servers, {idle}",
        servers_text.join(" and ")
    );
    let subtitle = format!(
        "energy saving and mean run-time increase vs FIFO per deadline factor σ, means over {} seed(s); dashed: no co-allocation meeting σ-deadlines saves more (at x = σ − 1)",
        seeds.join("–")
    );
    let legend_width_px = legend_width_px(&legend)?;
    let width = (1000 + legend_width_px).max(header_width_px(&title, &subtitle)?);
    let height = HEADER_PX + 700u32.max(legend_height_px(&legend));
    Ok(ParetoFigure {
        size_px: (width, height),
        title,
        subtitle,
        x: Axis::nice(x_lo, x_hi, 10, "mean job run-time increase vs FIFO (%)"),
        y: Axis::nice(y_lo, y_hi, 10, "energy saving vs FIFO (%)"),
        fronts,
        points: vec![(paper, "paper".to_string(), PAPER_POINT)],
        legend,
        legend_width_px,
    })
}

/// Per cluster size: EaCO-O's points over σ and the bound's frontier, with their legend.
fn server_fronts(
    mine: &[&TradeoffPoint],
    servers: &[usize],
) -> (Vec<FrontSeries>, Vec<LegendEntry>) {
    let mut fronts = Vec::new();
    let mut legend = vec![LegendEntry::new(Swatch::Heading, "servers")];
    for (i, &n) in servers.iter().enumerate() {
        let colour = SERVER_COLOURS[i % SERVER_COLOURS.len()];
        let curve: Vec<&TradeoffPoint> = mine.iter().copied().filter(|p| p.servers == n).collect();
        fronts.push(FrontSeries {
            colour,
            points: curve
                .iter()
                .map(|p| {
                    (
                        p.eaco_run_increase_pct,
                        p.eaco_saving_pct,
                        FrontMarker::Proven,
                    )
                })
                .collect(),
            bound: frontier(&curve),
        });
        let sigmas: Vec<String> = curve
            .iter()
            .map(|p| p.deadline_factor.to_string())
            .collect();
        legend.push(LegendEntry::new(
            Swatch::Front(colour, true),
            format!("{n}: EaCO-O, σ = {}", sigmas.join(", ")),
        ));
        legend.push(LegendEntry::new(
            Swatch::Bound(colour),
            format!("{n}: most any schedule saves (bound)"),
        ));
    }
    (fronts, legend)
}

fn padded_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = min_max(values).unwrap_or((0.0, 1.0));
    padded(lo, hi, 0.06)
}
