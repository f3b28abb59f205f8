//! Figures and `REPORT.md` of a gapbench results folder, drawn from its CSVs and
//! `matrix.json` alone.
//!
//! Invariant: *the report depends on no engine, solver or CLI crate* — only on the results
//! schema (`gapbench-results`). Any results folder, from any machine or version that wrote
//! the same schema, can be redrawn (`gapbench figures DIR`, `cargo xtask figures DIR`)
//! without running anything.
//!
//! - [`figures`] — one module per figure family (allocation, power, fragmentation, gaps,
//!   Pareto) and [`draw_all`];
//! - `draw` — the drawing kit they share (text, colours, axes, legends, marks);
//! - [`report`] — `REPORT.md`; `gaps`, `time_mode`, `eaco`, `budgets` — its sections;
//! - `cluster_size` — how figures and report name a cluster size (`1,213 nodes`,
//!   `8-node sampled sub-cluster`).

mod budgets;
mod cluster_size;
mod draw;
mod eaco;
pub mod figures;
mod gap_spread;
mod gaps;
pub mod report;
mod time_mode;

use std::path::{Path, PathBuf};

use anyhow::Result;
use gapbench_results::io::write_atomic;
use gapbench_results::{MatrixDescription, REPORT_MD};

pub use figures::{draw_all, plan_figures, FigurePlan, FIGURES_DIR, STAGING_PREFIX};
pub use report::write_report;

/// Draws the figures, then writes `REPORT.md` (which lists them), of the results folder
/// `dir`; returns the figure files written. Everything is read and checked against
/// `matrix.json` first ([`gapbench_results::folder::check_folder`]), and the figures and
/// report are built before any existing one is replaced: a missing, header-only or bad CSV
/// is an error that leaves the folder's figures and `REPORT.md` as they were.
pub fn redraw(dir: &Path) -> Result<Vec<PathBuf>> {
    let matrix = MatrixDescription::read(dir)?;
    gapbench_results::folder::check_folder(dir, &matrix)?;
    let plan = figures::plan_figures_with(dir, Some(&matrix))?;
    let report = report::report_text(dir, &matrix, &plan.png_names())?;
    let figures = figures::draw_plan(dir, &plan)?;
    write_atomic(&dir.join(REPORT_MD), report.as_bytes())?;
    Ok(figures)
}
