//! Budget-study figures (`budget_*.csv`): per setup and budget kind, mean JCT against what
//! was spent with the exact frontier beneath every point (drawn as a Pareto figure), and
//! the power of running jobs with the grid's carbon intensity over time.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::Result;
use gapbench_results::table::read_rows;
use gapbench_results::{
    budget_point_label, BudgetFrontierRow, BudgetPointRow, BudgetTimelineRow, BUDGET_FRONTIER_CSV,
    BUDGET_POINTS_CSV, BUDGET_TIMELINE_CSV,
};

use super::names::file_safe;
use super::pareto::{FrontMarker, FrontSeries, ParetoFigure, FRONT_COLOURS};
use super::timelines::{TimelineFigure, TimelinePanel};
use crate::draw::*;

/// The label of the grid's carbon intensity in the timeline legend.
pub(crate) const GRID_SERIES: &str = "grid carbon intensity";

/// The rows of a results folder's budget study (empty when it has none).
pub(crate) struct BudgetTables {
    pub(crate) points: Vec<BudgetPointRow>,
    pub(crate) frontier: Vec<BudgetFrontierRow>,
    pub(crate) timeline: Vec<BudgetTimelineRow>,
}

impl BudgetTables {
    pub(crate) fn read(dir: &Path) -> Result<Option<BudgetTables>> {
        let Some(points) = read_rows::<BudgetPointRow>(&dir.join(BUDGET_POINTS_CSV), &[])? else {
            return Ok(None);
        };
        Ok(Some(BudgetTables {
            points: points.rows.into_iter().map(|r| r.value).collect(),
            frontier: values(read_rows(&dir.join(BUDGET_FRONTIER_CSV), &[])?),
            timeline: values(read_rows(&dir.join(BUDGET_TIMELINE_CSV), &[])?),
        }))
    }

    /// Every policy label the figures draw.
    pub(crate) fn names(&self) -> BTreeSet<String> {
        let mut names: BTreeSet<String> = self
            .points
            .iter()
            .map(|p| budget_point_label(&p.policy, p.fraction))
            .collect();
        names.insert(GRID_SERIES.to_string());
        names
    }

    /// (setup, kind) pairs in the order they appear.
    pub(crate) fn studies(&self) -> Vec<(String, String)> {
        let mut studies: Vec<(String, String)> = Vec::new();
        for p in &self.points {
            let key = (p.setup.clone(), p.kind.clone());
            if !studies.contains(&key) {
                studies.push(key);
            }
        }
        studies
    }
}

/// The values of a table that may be absent.
fn values<T>(rows: Option<gapbench_results::table::Rows<T>>) -> Vec<T> {
    rows.map(|r| r.rows.into_iter().map(|row| row.value).collect())
        .unwrap_or_default()
}

/// The unit of a budget kind.
pub(crate) fn unit(kind: &str) -> &'static str {
    if kind == "carbon" {
        "kg CO2e"
    } else {
        "kWh"
    }
}

/// What a point spent in its study's unit.
pub(crate) fn spend(point: &BudgetPointRow) -> Option<f64> {
    if point.kind == "carbon" {
        point.carbon_kg
    } else {
        point.job_energy_kwh
    }
}

/// One figure of a budget study: its JCT against the budget, or its power and grid
/// timeline.
pub(crate) enum BudgetFigure {
    Jct(ParetoFigure),
    Timeline(TimelineFigure),
}

/// Per study (setup and budget kind), its JCT figure then its timeline figure, each when
/// the tables hold its data.
pub(crate) fn budget_figures(
    tables: &BudgetTables,
    palette: &Palette,
) -> Result<Vec<(String, BudgetFigure)>> {
    let mut figures = Vec::new();
    for (setup, kind) in tables.studies() {
        let stem = format!("{}_{}", file_safe(&setup), file_safe(&kind));
        if let Some(figure) = jct_figure(tables, &setup, &kind, palette)? {
            figures.push((format!("budget_jct_{stem}"), BudgetFigure::Jct(figure)));
        }
        if let Some(figure) = timeline_figure(tables, &setup, &kind, palette)? {
            figures.push((
                format!("budget_timeline_{stem}"),
                BudgetFigure::Timeline(figure),
            ));
        }
    }
    Ok(figures)
}

/// The proven frontier of each seed (as many as there are front colours), with its legend;
/// where the study found schedules (`schedule_mean_jct_s`), the frontier is the dashed
/// bound and the best schedule found within each point's spend the solid staircase, as in
/// the snapshot Pareto figures: the exact frontier lies between them.
fn frontier_lines(
    tables: &BudgetTables,
    points: &[&BudgetPointRow],
    in_study: &dyn Fn(&str, &str) -> bool,
    seeds: &BTreeSet<u64>,
) -> (Vec<FrontSeries>, Vec<LegendEntry>) {
    let mut fronts = Vec::new();
    let mut legend = Vec::new();
    for (i, seed) in seeds.iter().enumerate().take(FRONT_COLOURS.len()) {
        let line: Vec<(f64, f64)> = tables
            .frontier
            .iter()
            .filter(|f| in_study(&f.setup, &f.kind) && f.seed == *seed)
            .map(|f| (f.budget, f.mean_jct_bound_s / 3600.0))
            .collect();
        if line.is_empty() {
            continue;
        }
        let colour = FRONT_COLOURS[i];
        let of_seed = if seeds.len() > 1 {
            format!(", seed {seed}")
        } else {
            String::new()
        };
        let found = schedules_found(points, *seed);
        let (points, bound) = if found.is_empty() {
            let label = format!("proven frontier (lower bound){of_seed}");
            legend.push(LegendEntry::new(Swatch::Front(colour, true), label));
            let marked = line.into_iter().map(|(x, y)| (x, y, FrontMarker::Proven));
            (marked.collect(), Vec::new())
        } else {
            let label = format!("proven frontier (lower bound){of_seed}");
            legend.push(LegendEntry::new(Swatch::Bound(colour), label));
            let label = format!("best schedule found within the spend{of_seed}");
            legend.push(LegendEntry::new(Swatch::Front(colour, false), label));
            (found, line)
        };
        fronts.push(FrontSeries {
            colour,
            points,
            bound,
        });
    }
    (fronts, legend)
}

/// The schedules found within the spends of `seed`'s points, `(spend, mean JCT h)` by
/// spend, each the least found at that spend or below (a schedule within a budget is
/// within every larger one); hollow: not proven least.
fn schedules_found(points: &[&BudgetPointRow], seed: u64) -> Vec<(f64, f64, FrontMarker)> {
    let mut found: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.seed == seed)
        .filter_map(|p| Some((spend(p)?, p.schedule_mean_jct_s? / 3600.0)))
        .collect();
    found.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    found.dedup_by(|later, kept| later.0 == kept.0);
    let mut least = f64::INFINITY;
    found
        .into_iter()
        .map(|(x, y)| {
            least = least.min(y);
            (x, least, FrontMarker::TimeLimit)
        })
        .collect()
}

/// A policy point per budgeted replay that has one (spend, mean JCT in hours), in palette
/// order, and the policies' labels; `None` when no replay has a point.
#[allow(clippy::type_complexity)]
fn policy_marks(
    points: &[&BudgetPointRow],
    several_seeds: bool,
    palette: &Palette,
) -> Option<(Vec<(PolicyStyle, String, (f64, f64))>, BTreeSet<String>)> {
    let mut marks = Vec::new();
    let mut names = BTreeSet::new();
    for p in points {
        let (Some(x), Some(jct)) = (spend(p), p.mean_jct_s) else {
            continue;
        };
        let name = budget_point_label(&p.policy, p.fraction);
        let label = if several_seeds {
            format!("{name} (seed {})", p.seed)
        } else {
            name.clone()
        };
        marks.push((palette.style(&name), label, (x, jct / 3600.0)));
        names.insert(name);
    }
    if marks.is_empty() {
        return None;
    }
    marks.sort_by(|a, b| a.0.rank.cmp(&b.0.rank).then_with(|| a.1.cmp(&b.1)));
    Some((marks, names))
}

fn jct_figure(
    tables: &BudgetTables,
    setup: &str,
    kind: &str,
    palette: &Palette,
) -> Result<Option<ParetoFigure>> {
    let in_study = |s: &str, k: &str| s == setup && k == kind;
    let points: Vec<&BudgetPointRow> = tables
        .points
        .iter()
        .filter(|p| in_study(&p.setup, &p.kind))
        .collect();
    let seeds: BTreeSet<u64> = points.iter().map(|p| p.seed).collect();
    let (fronts, mut legend) = frontier_lines(tables, &points, &in_study, &seeds);
    let Some((marks, names)) = policy_marks(&points, seeds.len() > 1, palette) else {
        return Ok(None);
    };
    legend.push(LegendEntry::new(
        Swatch::Heading,
        "policy @ budget share of FIFO's",
    ));
    for style in palette.ordered(names.iter()) {
        let name = style.name.clone();
        legend.push(LegendEntry::new(Swatch::Marker(style), name));
    }
    let xs = fronts
        .iter()
        .flat_map(|f| {
            f.points
                .iter()
                .map(|p| p.0)
                .chain(f.bound.iter().map(|b| b.0))
        })
        .chain(marks.iter().map(|m| m.2 .0));
    let ys = fronts
        .iter()
        .flat_map(|f| {
            f.points
                .iter()
                .map(|p| p.1)
                .chain(f.bound.iter().map(|b| b.1))
        })
        .chain(marks.iter().map(|m| m.2 .1));
    let (x_lo, x_hi) = padded_range(xs);
    let (_, y_hi) = padded_range(ys);
    let title = format!("Mean JCT vs {kind} spent — budget study {setup}");
    let lines = if fronts.iter().any(|f| !f.bound.is_empty()) {
        format!("dashed: no schedule of the same jobs within that {kind} has a smaller mean JCT; solid: the best schedule found within it")
    } else {
        format!("line: no schedule of the same jobs within that {kind} has a smaller mean JCT")
    };
    let subtitle = format!(
        "{} jobs; points: budgeted replays (failed budgets not drawn); {lines}",
        points.first().map_or(0, |p| p.jobs)
    );
    let legend_width_px = legend_width_px(&legend)?;
    let width = (1000 + legend_width_px).max(header_width_px(&title, &subtitle)?);
    let height = HEADER_PX + 700u32.max(legend_height_px(&legend));
    Ok(Some(ParetoFigure {
        size_px: (width, height),
        title,
        subtitle,
        x: Axis::nice(
            x_lo,
            x_hi,
            8,
            &format!("{kind} spent by jobs ({})", unit(kind)),
        ),
        y: Axis::nice(0.0, y_hi, 8, "mean JCT (hours)"),
        fronts,
        points: marks,
        legend,
        legend_width_px,
    }))
}

fn padded_range(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = min_max(values).unwrap_or((0.0, 1.0));
    padded(lo, hi, 0.1)
}

/// The two panels of a budget timeline: each policy's job power, and the grid's carbon
/// intensity (as the first policy's replay sampled it).
fn power_and_grid_panels(
    rows: &[&BudgetTimelineRow],
    policies: &BTreeSet<String>,
    palette: &Palette,
) -> Vec<TimelinePanel> {
    let span_h = rows.iter().map(|r| r.time_s / 3600.0).fold(0.0, f64::max);
    let (unit_name, per_unit) = if span_h > 72.0 {
        ("days", 24.0)
    } else {
        ("hours", 1.0)
    };
    let series_of = |value: fn(&BudgetTimelineRow) -> f64, policy: &str| -> Vec<(f64, f64)> {
        rows.iter()
            .filter(|r| r.policy == policy)
            .map(|r| (r.time_s / 3600.0 / per_unit, value(r)))
            .collect()
    };
    let power: Vec<(PolicyStyle, Vec<(f64, f64)>)> = palette
        .ordered(policies.iter())
        .into_iter()
        .map(|style| {
            let points = series_of(|r| r.job_kw, &style.name);
            (style, points)
        })
        .collect();
    let fifo = power
        .first()
        .map(|(s, _)| s.name.clone())
        .unwrap_or_default();
    let grid = vec![(
        palette.style(GRID_SERIES),
        series_of(|r| r.g_per_kwh, &fifo),
    )];
    let x = Axis::nice(
        0.0,
        (span_h / per_unit).max(1e-3),
        8,
        &format!("time since the first arrival ({unit_name})"),
    );
    let top = |series: &[(PolicyStyle, Vec<(f64, f64)>)]| {
        padded(
            0.0,
            series
                .iter()
                .flat_map(|(_, p)| p.iter().map(|q| q.1))
                .fold(0.0, f64::max),
            0.05,
        )
        .1
    };
    vec![
        TimelinePanel {
            title: "power of running jobs".into(),
            x: x.clone(),
            y: Axis::nice(0.0, top(&power), 8, "kW"),
            series: power,
            bound: None,
        },
        TimelinePanel {
            title: "grid carbon intensity".into(),
            x,
            y: Axis::nice(0.0, top(&grid), 8, "g CO2e / kWh"),
            series: grid,
            bound: None,
        },
    ]
}

fn timeline_figure(
    tables: &BudgetTables,
    setup: &str,
    kind: &str,
    palette: &Palette,
) -> Result<Option<TimelineFigure>> {
    let rows: Vec<&BudgetTimelineRow> = tables
        .timeline
        .iter()
        .filter(|r| r.setup == setup && r.kind == kind)
        .collect();
    let Some(seed) = rows.iter().map(|r| r.seed).min() else {
        return Ok(None);
    };
    let rows: Vec<&BudgetTimelineRow> = rows.into_iter().filter(|r| r.seed == seed).collect();
    let policies: BTreeSet<String> = rows.iter().map(|r| r.policy.clone()).collect();
    let panels = power_and_grid_panels(&rows, &policies, palette);
    let mut legend = vec![LegendEntry::new(Swatch::Heading, "series")];
    let mut names = policies;
    names.insert(GRID_SERIES.to_string());
    legend.extend(
        palette
            .ordered(names.iter())
            .into_iter()
            .map(|s| LegendEntry::new(Swatch::Line(s.clone()), s.name)),
    );
    let title = format!("Power and carbon intensity over time — budget study {setup} ({kind})");
    let subtitle = format!("full-clock FIFO and the budgeted policy at FIFO's {kind}; seed {seed}, sampled at about 200 instants");
    let legend_width_px = legend_width_px(&legend)?;
    let width = (2 * 620 + legend_width_px).max(header_width_px(&title, &subtitle)?);
    let height = HEADER_PX + 440u32.max(legend_height_px(&legend));
    Ok(Some(TimelineFigure {
        size_px: (width, height),
        title,
        subtitle,
        grid: (1, 2),
        panels,
        legend,
        legend_width_px,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(seed: u64, spent_kwh: f64, schedule_s: Option<f64>) -> BudgetPointRow {
        BudgetPointRow {
            setup: "slice".into(),
            seed,
            kind: "energy".into(),
            policy: "powerflow".into(),
            fraction: Some(1.0),
            budget: Some(spent_kwh),
            jobs: 10,
            job_energy_kwh: Some(spent_kwh),
            carbon_kg: None,
            cluster_energy_kwh: None,
            mean_jct_s: Some(9000.0),
            fifo_mean_jct_s: 9000.0,
            jct_speedup_vs_fifo: Some(1.0),
            bound_mean_jct_s: Some(3600.0),
            gap: Some(1.5),
            bound_status: "converged".into(),
            bound_lp_mean_jct_s: None,
            error: String::new(),
            schedule_mean_jct_s: schedule_s,
        }
    }

    /// A schedule within a spend is within every larger one: the staircase takes the least
    /// found at each spend or below, one point per spend, the seed's points only.
    #[test]
    fn the_schedules_found_step_down_with_the_spend() {
        let rows = [
            point(1, 12.0, Some(3.0 * 3600.0)),
            point(1, 10.0, Some(2.0 * 3600.0)),
            point(1, 11.0, Some(2.5 * 3600.0)),
            point(1, 11.0, None),
            point(2, 9.0, Some(1.0 * 3600.0)),
        ];
        let refs: Vec<&BudgetPointRow> = rows.iter().collect();
        let found: Vec<(f64, f64)> = schedules_found(&refs, 1)
            .into_iter()
            .map(|(x, y, _)| (x, y))
            .collect();
        assert_eq!(found, [(10.0, 2.0), (11.0, 2.0), (12.0, 2.0)]);
    }
}
