//! Time-mode trade-off: each policy's total energy against its mean job completion time
//! (means over seeds), one figure per (source, arrival scale, idle policy). Down and left
//! is better on both. Drawn as a Pareto figure without an exact front.

use std::collections::BTreeSet;

use anyhow::Result;

use super::names::file_safe;
use super::pareto::ParetoFigure;
use super::replay_data::{Panel, PolicyMeans};
use crate::draw::*;

pub(crate) fn energy_jct_figures(
    panels: &[(Panel, Vec<PolicyMeans>)],
    palette: &Palette,
) -> Result<Vec<(String, ParetoFigure)>> {
    let mut figures = Vec::new();
    for (panel, policies) in panels {
        let mut stem = format!(
            "replay_energy_vs_jct_{}_{}",
            file_safe(&panel.source),
            panel.idle
        );
        if (panel.arrival_scale - 1.0).abs() > 1e-12 {
            stem.push_str(&format!(
                "_x{}",
                file_safe(&panel.arrival_scale.to_string())
            ));
        }
        let figure = energy_jct_figure(panel, policies, palette)?;
        figures.push((stem, figure));
    }
    Ok(figures)
}

/// One panel's figure: each policy's mean energy (in MWh from 10 MWh on) against its mean
/// JCT.
fn energy_jct_figure(
    panel: &Panel,
    policies: &[PolicyMeans],
    palette: &Palette,
) -> Result<ParetoFigure> {
    let max_kwh = policies
        .iter()
        .map(|p| p.mean.energy_kwh)
        .fold(0.0, f64::max);
    let (unit, per_unit) = if max_kwh >= 10_000.0 {
        ("MWh", 1000.0)
    } else {
        ("kWh", 1.0)
    };
    let mut points = Vec::new();
    let mut names = BTreeSet::new();
    let mut seeds = BTreeSet::new();
    // A replay where no task completed has no mean JCT to draw.
    for p in policies.iter().filter(|p| p.mean.mean_jct_s.is_finite()) {
        names.insert(p.policy.clone());
        seeds.insert(p.seeds);
        points.push((
            palette.style(&p.policy),
            p.policy.clone(),
            (p.mean.energy_kwh / per_unit, p.mean.mean_jct_s / 3600.0),
        ));
    }
    points.sort_by(|a, b| {
        a.0.rank
            .cmp(&b.0.rank)
            .then_with(|| natural_cmp(&a.1, &b.1))
    });
    let mut legend = vec![LegendEntry::new(Swatch::Heading, "policy")];
    legend.extend(
        palette
            .ordered(names.iter())
            .into_iter()
            .map(|s| LegendEntry::new(Swatch::Marker(s.clone()), s.name)),
    );
    let (x_lo, x_hi) = min_max(points.iter().map(|p| p.2 .0)).unwrap_or((0.0, 1.0));
    let (y_lo, y_hi) = min_max(points.iter().map(|p| p.2 .1)).unwrap_or((0.0, 1.0));
    let (x_lo, x_hi) = padded(x_lo, x_hi, 0.1);
    let (y_lo, y_hi) = padded(y_lo, y_hi, 0.1);
    let title = format!(
        "Energy vs job completion time — {} ({} nodes)",
        panel.title(),
        panel.nodes
    );
    let seeds: Vec<String> = seeds.iter().map(usize::to_string).collect();
    let subtitle = format!(
        "time mode: total energy and mean JCT (end − arrival) per policy, mean over {} seed(s); lower left is better",
        seeds.join("–")
    );
    let legend_width_px = legend_width_px(&legend)?;
    let width = (1000 + legend_width_px).max(header_width_px(&title, &subtitle)?);
    let height = HEADER_PX + 700u32.max(legend_height_px(&legend));
    Ok(ParetoFigure {
        size_px: (width, height),
        title,
        subtitle,
        x: Axis::nice(x_lo, x_hi, 8, &format!("total energy ({unit})")),
        y: Axis::nice(y_lo, y_hi, 8, "mean job completion time (h)"),
        fronts: Vec::new(),
        points,
        legend,
        legend_width_px,
    })
}
