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
//!   `8-node sampled sub-cluster`);
//! - `tables` — REPORT.md's tables as LaTeX (`tables/*.tex`); `policy_names` — policies
//!   as papers name them.

mod budgets;
mod cluster_size;
mod draw;
mod eaco;
pub mod figures;
mod gap_spread;
mod gaps;
pub mod policy_names;
pub mod report;
mod tables;
mod time_mode;

use std::path::{Path, PathBuf};

use anyhow::Result;
use gapbench_results::io::write_atomic;
use gapbench_results::{MatrixDescription, REPORT_MD};

pub use figures::{
    draw_all, plan_figures, FigureOptions, FigurePlan, Style, FIGURES_DIR, STAGING_PREFIX,
};
pub use policy_names::PolicyNames;
pub use report::write_report;
pub use tables::TABLES_DIR;

/// Draws the figures, writes the LaTeX tables (`tables/*.tex`), then writes `REPORT.md`
/// (which lists the figures), of the results folder `dir`; returns the figure and table
/// files written. Everything is read and checked against
/// `matrix.json` first ([`gapbench_results::folder::check_folder`]), and the figures and
/// report are built before any existing one is replaced: a missing, header-only or bad CSV
/// is an error that leaves the folder's figures and `REPORT.md` as they were.
pub fn redraw(dir: &Path) -> Result<Vec<PathBuf>> {
    redraw_with(dir, None)
}

/// [`redraw`] in the style and with the policy names of `options`, or of the folder's
/// spec (its `[figures]` table, [`FigureOptions::of_matrix`]) when `None`.
pub fn redraw_with(dir: &Path, options: Option<&FigureOptions>) -> Result<Vec<PathBuf>> {
    let matrix = MatrixDescription::read(dir)?;
    let of_spec;
    let options = match options {
        Some(options) => options,
        None => {
            of_spec = FigureOptions::of_matrix(&matrix)?;
            &of_spec
        }
    };
    gapbench_results::folder::check_folder(dir, &matrix)?;
    let plan = figures::plan_figures_with(dir, Some(&matrix), options)?;
    let tables = tables::plan_tables(dir, &matrix, &options.names)?;
    let report = report::report_text(dir, &matrix, &plan.png_names())?;
    let mut written = figures::draw_plan(dir, &plan)?;
    written.extend(tables::write_tables(dir, &tables)?);
    write_atomic(&dir.join(REPORT_MD), report.as_bytes())?;
    Ok(written)
}
