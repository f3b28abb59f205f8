//! `gapbench figures`: redraws a results folder's figures and REPORT.md from its CSVs.

use std::path::Path;

use anyhow::{bail, Result};
use gapbench::out_dir::OutDir;

/// `gapbench figures DIR`.
pub fn figures(dir: &Path) -> Result<()> {
    if !dir.join(gapbench_results::MATRIX_JSON).is_file() {
        bail!(
            "{}: not a results folder (no {})",
            dir.display(),
            gapbench_results::MATRIX_JSON
        );
    }
    let _held = OutDir::acquire(dir)?;
    let figures = gapbench_report::redraw(dir)?;
    println!(
        "{} figure files and REPORT.md written in {}",
        figures.len(),
        dir.display()
    );
    Ok(())
}
