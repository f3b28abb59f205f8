//! EaCO's comparison as the paper draws it: per cluster size (and idle policy), each
//! policy's total energy and mean job run time normalised to FIFO's (means over seeds).
//! Solid bars: energy; light bars: run time; dashed line: FIFO = 1.

use std::collections::BTreeSet;

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::replay_data::{Panel, PolicyMeans};
use crate::draw::Palette;
use crate::draw::*;

pub(crate) struct EacoBarsFigure {
    pub(crate) size_px: (u32, u32),
    pub(crate) title: String,
    pub(crate) subtitle: String,
    pub(crate) grid: (usize, usize),
    pub(crate) panels: Vec<BarsPanel>,
    pub(crate) legend: Vec<LegendEntry>,
    pub(crate) legend_width_px: u32,
}

pub(crate) struct BarsPanel {
    pub(crate) title: String,
    pub(crate) x: Axis,
    pub(crate) y: Axis,
    /// Per category: colour, energy / FIFO, run time / FIFO.
    pub(crate) bars: Vec<(RGBColor, f64, f64)>,
}

/// The bar chart of every EaCO panel that has a FIFO baseline; none without such panels.
pub(crate) fn eaco_bar_figures(
    panels: &[(Panel, Vec<PolicyMeans>)],
    palette: &Palette,
) -> Result<Vec<(String, EacoBarsFigure)>> {
    let mut drawn = Vec::new();
    let mut seeds = BTreeSet::new();
    for (panel, policies) in panels
        .iter()
        .filter(|(p, _)| p.is_eaco() && !p.is_eaco_sweep_point())
    {
        let Some(fifo) = policies
            .iter()
            .find(|p| p.policy == "fifo" || p.policy == "fifo-o")
        else {
            continue;
        };
        let (energy, run) = (fifo.mean.energy_kwh, fifo.mean.mean_run_s);
        if energy <= 0.0 || run <= 0.0 {
            continue;
        }
        let styles = palette.ordered(policies.iter().map(|p| &p.policy));
        let mut bars = Vec::new();
        for style in &styles {
            let p = policies
                .iter()
                .find(|p| p.policy == style.name)
                .expect("a style per policy");
            seeds.insert(p.seeds);
            bars.push((
                style.colour,
                p.mean.energy_kwh / energy,
                p.mean.mean_run_s / run,
            ));
        }
        let top = bars.iter().map(|b| b.1.max(b.2)).fold(1.0, f64::max);
        drawn.push(BarsPanel {
            title: format!("{} servers, {}", panel.nodes, panel.idle),
            x: Axis::categories(styles.iter().map(|s| s.name.clone()).collect(), "policy"),
            y: Axis::nice(0.0, top * 1.08, 8, "relative to FIFO"),
            bars,
        });
    }
    if drawn.is_empty() {
        return Ok(Vec::new());
    }
    let legend = vec![
        LegendEntry::new(Swatch::Heading, "normalised to FIFO"),
        LegendEntry::new(Swatch::Bar(NEUTRAL, BarStatus::Optimal), "total energy"),
        LegendEntry::new(
            Swatch::Bar(NEUTRAL, BarStatus::Relaxation),
            "mean job run time",
        ),
        LegendEntry::new(Swatch::Reference, "FIFO = 1"),
    ];
    let title = "EaCO vs its Gavel baselines: energy and run time relative to FIFO".to_string();
    let seeds: Vec<String> = seeds.iter().map(usize::to_string).collect();
    let subtitle = format!(
        "time mode on EaCO's setup (8×V100 servers, four-model job mix); means over {} seed(s); run time = end − first start",
        seeds.join("–")
    );
    let cols = if drawn.len() == 1 { 1 } else { 2 };
    let rows = drawn.len().div_ceil(cols);
    let (panel_w, panel_h) = (640, 460);
    let legend_width_px = legend_width_px(&legend)?;
    let width = (cols as u32 * panel_w + legend_width_px).max(header_width_px(&title, &subtitle)?);
    let height = HEADER_PX + (rows as u32 * panel_h).max(legend_height_px(&legend));
    Ok(vec![(
        "replay_eaco_energy_runtime_vs_fifo".to_string(),
        EacoBarsFigure {
            size_px: (width, height),
            title,
            subtitle,
            grid: (rows, cols),
            panels: drawn,
            legend,
            legend_width_px,
        },
    )])
}

impl EacoBarsFigure {
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        mode: TextMode,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let plots = frame(
            root,
            &self.title,
            &self.subtitle,
            &self.legend,
            self.legend_width_px,
            mode,
        )?;
        let areas = plots.split_evenly(self.grid);
        for (panel, area) in self.panels.iter().zip(&areas) {
            let chart = build_chart(root, area, Some(&panel.title), &panel.x, &panel.y, mode)?;
            for (i, &(colour, energy, run)) in panel.bars.iter().enumerate() {
                let slot = i as f64;
                for (from, to, value, status) in [
                    (slot - 0.36, slot - 0.01, energy, BarStatus::Optimal),
                    (slot + 0.01, slot + 0.36, run, BarStatus::Relaxation),
                ] {
                    draw_bar(
                        root,
                        chart.backend_coord(&(from, 0.0)),
                        chart.backend_coord(&(to, value)),
                        colour,
                        status,
                    )?;
                }
            }
            let left = chart.backend_coord(&(panel.x.range.0, 1.0));
            let right = chart.backend_coord(&(panel.x.range.1, 1.0));
            draw_dashed_hline(root, left.0, right.0, left.1, SUBTLE_INK)?;
        }
        Ok(())
    }
}
