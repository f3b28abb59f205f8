//! Every figure family, one module each, and [`draw_all`], which draws all that a results
//! folder's CSVs support. A new family (frontiers…) is a new module here that returns
//! `(stem, its own figure type)` pairs, and a variant of [`Figure`] with a `From` for it
//! (the families never use this module's items, so no import runs back up; what they share
//! sits in `names`). Time mode: `timelines` (power and active nodes over time), `energy_jct`
//! (energy vs mean JCT), `eaco_bars` (EaCO's normalised bars), `eaco_tradeoff` (EaCO's
//! energy vs run time over σ against the bound's frontier), read by `replay_data`.

pub(crate) mod allocation;
pub(crate) mod budget;
pub(crate) mod eaco_bars;
pub(crate) mod eaco_tradeoff;
pub(crate) mod energy_jct;
pub(crate) mod fragmentation;
pub(crate) mod gap_data;
pub(crate) mod gap_seeds;
pub(crate) mod gaps;
pub(crate) mod line_metric;
pub(crate) mod lines;
pub(crate) mod mean_grid;
pub(crate) mod names;
mod options;
pub(crate) mod paper_draw;
pub(crate) mod paper_lines;
pub(crate) mod pareto;
pub(crate) mod pareto_data;
pub(crate) mod pdf;
pub(crate) mod pdf_canonical;
pub(crate) mod power;
pub(crate) mod replay_data;
pub(crate) mod seed_grid;
pub(crate) mod timelines;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use gapbench_results::io::write_atomic;
use gapbench_results::{
    MatrixDescription, PointKind, GAPS_CSV, MATRIX_JSON, MEAN_GRID_CSV, PARETO_CSV,
    REPLAY_RUNS_CSV, REPLAY_TIMELINE_CSV,
};

pub use options::{FigureOptions, Style};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::cluster_size::ClusterSizes;
use crate::draw::{ensure_fonts, Palette, TextMode};
use budget::BudgetFigure;
use eaco_bars::EacoBarsFigure;
use gaps::GapsFigure;
use lines::LinesFigure;
use paper_draw::PaperLinesFigure;
use pareto::ParetoFigure;
use timelines::TimelineFigure;

/// Subfolder of the results folder that receives the figures.
pub const FIGURES_DIR: &str = "figures";

/// The figures of a redraw are drawn into `figures/.staging-<pid>/`, then moved over the old
/// ones; a redraw killed midway leaves that folder, which the next writer of the results
/// folder removes (the harness's `out_dir`).
pub const STAGING_PREFIX: &str = ".staging-";

/// Reads the CSVs present in `results_dir` (and its `matrix.json`, when there is one) and
/// writes every figure they support into `results_dir/figures/` (an `.svg`, a `.pdf` and a
/// `.png` each). Returns the paths written, in a fixed order. A figure kind whose CSV is absent or
/// has no data row is skipped; a malformed CSV is an error naming the file and line.
pub fn draw_all(results_dir: &Path) -> Result<Vec<PathBuf>> {
    draw_figures(results_dir, read_matrix(results_dir)?.as_ref())
}

/// The file name the staged figures keep (`.svg`, `.pdf`, `.png`, and the paper style's
/// caption `.txt`).
fn is_figure_file(path: &Path) -> bool {
    path.extension()
        .is_some_and(|ext| ext == "svg" || ext == "pdf" || ext == "png" || ext == "txt")
}

/// The folder's `matrix.json`, when there is one (it says which cluster size is a sampled
/// sub-cluster).
fn read_matrix(results_dir: &Path) -> Result<Option<MatrixDescription>> {
    if results_dir.join(MATRIX_JSON).exists() {
        Ok(Some(MatrixDescription::read(results_dir)?))
    } else {
        Ok(None)
    }
}

/// [`draw_all`] with the folder's `matrix.json` already read (and the folder checked
/// against it).
fn draw_figures(results_dir: &Path, matrix: Option<&MatrixDescription>) -> Result<Vec<PathBuf>> {
    if let Some(matrix) = matrix {
        gapbench_results::folder::check_folder(results_dir, matrix)?;
    }
    let options = FigureOptions::default();
    draw_plan(
        results_dir,
        &plan_figures_with(results_dir, matrix, &options)?,
    )
}

/// Draws every planned figure into a staging folder, then moves each over its old file and
/// removes the figures the folder no longer supports: a figure that fails to draw leaves
/// every existing one in place.
pub(crate) fn draw_plan(results_dir: &Path, plan: &FigurePlan) -> Result<Vec<PathBuf>> {
    let out_dir = results_dir.join(FIGURES_DIR);
    if plan.figures.is_empty() {
        remove_stale_figures(&out_dir, &[])?;
        return Ok(Vec::new());
    }
    let staging = out_dir.join(format!("{STAGING_PREFIX}{}", std::process::id()));
    let _ = fs::remove_dir_all(&staging);
    fs::create_dir_all(&staging)
        .with_context(|| format!("cannot create folder {}", staging.display()))?;
    let mut drawn = Vec::with_capacity(3 * plan.figures.len());
    let drawing = plan
        .figures
        .iter()
        .try_for_each(|(stem, figure)| write_figure(&staging, stem, figure, &mut drawn));
    let placed = drawing.and_then(|()| {
        let mut written = Vec::with_capacity(drawn.len());
        for from in &drawn {
            let to = out_dir.join(from.file_name().expect("figures have file names"));
            fs::rename(from, &to)
                .with_context(|| format!("cannot move {} to {}", from.display(), to.display()))?;
            written.push(to);
        }
        Ok(written)
    });
    let _ = fs::remove_dir_all(&staging);
    let written = placed?;
    remove_stale_figures(&out_dir, &written)?;
    Ok(written)
}

/// The figures a results folder's CSVs support, read and laid out (data, ranges, legends,
/// colours) but not yet drawn: everything of [`draw_all`] but the rendering.
pub struct FigurePlan {
    figures: Vec<(String, Figure)>,
}

impl FigurePlan {
    /// The file stems of the planned figures, in drawing order.
    pub fn stems(&self) -> Vec<&str> {
        self.figures.iter().map(|(stem, _)| stem.as_str()).collect()
    }

    /// The PNG file names the plan draws (what `REPORT.md` shows).
    pub(crate) fn png_names(&self) -> Vec<String> {
        self.figures
            .iter()
            .map(|(stem, _)| format!("{stem}.png"))
            .collect()
    }
}

/// Reads the CSVs present in `results_dir` (and its `matrix.json`, when there is one) and
/// lays out every figure they support; a malformed file is an error naming it (and the line).
pub fn plan_figures(results_dir: &Path) -> Result<FigurePlan> {
    let options = FigureOptions::default();
    plan_figures_with(results_dir, read_matrix(results_dir)?.as_ref(), &options)
}

/// [`plan_figures`] with the folder's `matrix.json` already read.
pub(crate) fn plan_figures_with(
    results_dir: &Path,
    matrix: Option<&MatrixDescription>,
    options: &FigureOptions,
) -> Result<FigurePlan> {
    let tables = Tables::read(results_dir)?;
    let palette = Palette::new(&tables.policy_names());
    let sizes = tables.cluster_sizes(matrix);

    // Layout measures text, so the font is needed before any figure is planned.
    ensure_fonts()?;
    let mut figures: Vec<(String, Figure)> = Vec::new();
    if let Some(grid) = &tables.grid {
        match options.style {
            Style::Default => figures.extend(wrapped(lines::family_figures(grid, &palette)?)),
            Style::Paper => {
                let seeds = seed_grid::read_seed_grid(
                    &results_dir
                        .join(<gapbench_results::GridRow as gapbench_results::CsvRow>::FILE),
                )?;
                let paper = paper_lines::paper_figures(grid, seeds.as_ref(), &options.names)?;
                figures.extend(wrapped(paper));
            }
        }
    }
    if let Some(gaps) = &tables.gaps {
        figures.extend(wrapped(gaps::gap_figures(gaps, &sizes, &palette)?));
    }
    if let Some(pareto) = &tables.pareto {
        figures.extend(wrapped(pareto::pareto_figures(pareto, &sizes, &palette)?));
    }
    if let Some(timeline) = &tables.replay_timeline {
        figures.extend(wrapped(timelines::timeline_figures(timeline, &palette)?));
    }
    if let Some(runs) = &tables.replay_runs {
        figures.extend(wrapped(energy_jct::energy_jct_figures(
            &runs.panels,
            &palette,
        )?));
        figures.extend(wrapped(eaco_bars::eaco_bar_figures(
            &runs.panels,
            &palette,
        )?));
        figures.extend(wrapped(eaco_tradeoff::eaco_tradeoff_figures(
            results_dir,
            &runs.panels,
        )?));
    }
    if let Some(budgets) = &tables.budgets {
        figures.extend(wrapped(budget::budget_figures(budgets, &palette)?));
    }
    Ok(FigurePlan { figures })
}

/// The CSVs of a results folder that figures draw from, each `None` when absent or empty.
struct Tables {
    grid: Option<mean_grid::MeanGrid>,
    gaps: Option<gap_data::GapTable>,
    pareto: Option<pareto_data::ParetoTable>,
    replay_runs: Option<replay_data::ReplayRuns>,
    replay_timeline: Option<replay_data::Timelines>,
    budgets: Option<budget::BudgetTables>,
}

impl Tables {
    fn read(results_dir: &Path) -> Result<Tables> {
        Ok(Tables {
            grid: mean_grid::MeanGrid::read(&results_dir.join(MEAN_GRID_CSV))?,
            gaps: gap_data::read_gaps(&results_dir.join(GAPS_CSV))?,
            pareto: pareto_data::read_pareto(&results_dir.join(PARETO_CSV))?,
            replay_runs: replay_data::read_replay_runs(&results_dir.join(REPLAY_RUNS_CSV))?,
            replay_timeline: replay_data::read_replay_timeline(
                &results_dir.join(REPLAY_TIMELINE_CSV),
            )?,
            budgets: budget::BudgetTables::read(results_dir)?,
        })
    }

    /// Every policy name any figure draws: one palette over them all keeps a policy's
    /// colour the same in every figure.
    fn policy_names(&self) -> BTreeSet<String> {
        let mut names: BTreeSet<String> = BTreeSet::new();
        if let Some(grid) = &self.grid {
            for trace in grid.traces.values() {
                names.extend(trace.policies.keys().cloned());
            }
        }
        names.extend(
            self.gaps
                .iter()
                .flat_map(|g| g.rows.iter().map(|r| r.policy.clone())),
        );
        names.extend(self.pareto.iter().flat_map(|p| {
            p.rows
                .iter()
                .filter(|r| r.kind == PointKind::Policy)
                .map(|r| r.label.clone())
        }));
        names.extend(self.replay_runs.iter().flat_map(|r| {
            r.panels
                .iter()
                .flat_map(|(_, policies)| policies.iter().map(|p| p.policy.clone()))
        }));
        if let Some(budgets) = &self.budgets {
            names.extend(budgets.names());
        }
        names
    }

    /// The `(trace, nodes)` the gap and Pareto rows were solved on, and the `[gaps]`
    /// study's sample size from `matrix.json`: what their titles call each size.
    fn cluster_sizes(&self, matrix: Option<&MatrixDescription>) -> ClusterSizes {
        let mut sizes = ClusterSizes::new(
            matrix.and_then(|m| m.spec.gaps.as_ref().and_then(|g| g.sample_nodes)),
        );
        for row in self.gaps.iter().flat_map(|g| &g.rows) {
            sizes.saw(&row.trace, row.nodes);
        }
        for row in self.pareto.iter().flat_map(|p| &p.rows) {
            if let Some(nodes) = row.nodes {
                sizes.saw(&row.trace, nodes);
            }
        }
        sizes
    }
}

/// Removes the figure files (`.svg`, `.pdf`, `.png`, `.txt`) of `dir` not in `written`: figures of a CSV
/// that is gone, or of a study no longer in the folder, must not outlive it.
fn remove_stale_figures(dir: &Path, written: &[PathBuf]) -> Result<()> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries {
        let path = entry
            .with_context(|| format!("cannot list {}", dir.display()))?
            .path();
        if is_figure_file(&path) && !written.contains(&path) {
            fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
        }
    }
    Ok(())
}

/// Everything needed to draw one figure, independent of the output format.
pub(crate) enum Figure {
    Lines(LinesFigure),
    Gaps(GapsFigure),
    Pareto(ParetoFigure),
    Timeline(TimelineFigure),
    Bars(EacoBarsFigure),
    Paper(PaperLinesFigure),
}

impl Figure {
    pub(crate) fn size_px(&self) -> (u32, u32) {
        match self {
            Figure::Lines(f) => f.size_px,
            Figure::Gaps(f) => f.size_px,
            Figure::Pareto(f) => f.size_px,
            Figure::Timeline(f) => f.size_px,
            Figure::Bars(f) => f.size_px,
            Figure::Paper(f) => f.size_px,
        }
    }

    /// The printed width in inches and the caption, for a paper-style figure.
    pub(crate) fn paper(&self) -> Option<(f64, &str)> {
        match self {
            Figure::Paper(f) => Some((f.width_in, f.caption.as_str())),
            _ => None,
        }
    }

    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        mode: TextMode,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        match self {
            Figure::Lines(f) => f.draw(root, mode),
            Figure::Gaps(f) => f.draw(root, mode),
            Figure::Pareto(f) => f.draw(root, mode),
            Figure::Timeline(f) => f.draw(root, mode),
            Figure::Bars(f) => f.draw(root, mode),
            Figure::Paper(f) => f.draw(root, mode),
        }
    }
}

/// A family's `(stem, figure)` pairs as [`Figure`]s, in the family's order: the families
/// return their own figure types, so only this module knows the whole [`Figure`] enum.
fn wrapped<F: Into<Figure>>(figures: Vec<(String, F)>) -> impl Iterator<Item = (String, Figure)> {
    figures
        .into_iter()
        .map(|(stem, figure)| (stem, figure.into()))
}

impl From<LinesFigure> for Figure {
    fn from(figure: LinesFigure) -> Self {
        Figure::Lines(figure)
    }
}

impl From<GapsFigure> for Figure {
    fn from(figure: GapsFigure) -> Self {
        Figure::Gaps(figure)
    }
}

impl From<ParetoFigure> for Figure {
    fn from(figure: ParetoFigure) -> Self {
        Figure::Pareto(figure)
    }
}

impl From<TimelineFigure> for Figure {
    fn from(figure: TimelineFigure) -> Self {
        Figure::Timeline(figure)
    }
}

impl From<EacoBarsFigure> for Figure {
    fn from(figure: EacoBarsFigure) -> Self {
        Figure::Bars(figure)
    }
}

impl From<PaperLinesFigure> for Figure {
    fn from(figure: PaperLinesFigure) -> Self {
        Figure::Paper(figure)
    }
}

impl From<BudgetFigure> for Figure {
    fn from(figure: BudgetFigure) -> Self {
        match figure {
            BudgetFigure::Jct(f) => Figure::Pareto(f),
            BudgetFigure::Timeline(f) => Figure::Timeline(f),
        }
    }
}

/// `svg` with its root's pixel size restated in inches (`width_in` wide, the same aspect),
/// so that it prints at its size; the view box keeps the drawing's pixels.
fn in_inches(svg: &str, width_in: f64, (w, h): (u32, u32)) -> String {
    let pixels = format!("<svg width=\"{w}\" height=\"{h}\"");
    let height_in = width_in * f64::from(h) / f64::from(w);
    let inches = format!("<svg width=\"{width_in:.3}in\" height=\"{height_in:.3}in\"");
    svg.replacen(&pixels, &inches, 1)
}

/// Writes `<stem>.svg`, `<stem>.pdf` (the SVG converted, fonts embedded) and `<stem>.png`
/// into `dir` (each atomically).
pub(crate) fn write_figure(
    dir: &Path,
    stem: &str,
    figure: &Figure,
    written: &mut Vec<PathBuf>,
) -> Result<()> {
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
    if let Some((width_in, caption)) = figure.paper() {
        svg = in_inches(&svg, width_in, size);
        let txt_path = dir.join(format!("{stem}.txt"));
        write_atomic(&txt_path, format!("{caption}\n").as_bytes())?;
        written.push(txt_path);
    }
    write_atomic(&svg_path, svg.as_bytes())?;
    let pdf_path = dir.join(format!("{stem}.pdf"));
    let pdf_bytes =
        pdf::svg_to_pdf(&svg).with_context(|| format!("cannot draw {}", pdf_path.display()))?;
    write_atomic(&pdf_path, &pdf_bytes)?;
    written.push(svg_path);
    written.push(pdf_path);

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
