//! `gapbench figures`: redraws a results folder's figures, LaTeX tables and REPORT.md from
//! its CSVs.

use std::path::Path;

use anyhow::{bail, Context, Result};
use gapbench::out_dir::OutDir;
use gapbench_report::{FigureOptions, Style};
use gapbench_results::MatrixDescription;

/// `gapbench figures DIR [--style STYLE] [--name POLICY=NAME]…`: the spec's `[figures]`
/// settings, with the style replaced and the names added by the flags.
pub fn figures(dir: &Path, style: Option<&str>, names: &[String]) -> Result<()> {
    if !dir.join(gapbench_results::MATRIX_JSON).is_file() {
        bail!(
            "{}: not a results folder (no {})",
            dir.display(),
            gapbench_results::MATRIX_JSON
        );
    }
    let _held = OutDir::acquire(dir)?;
    let mut options = FigureOptions::of_matrix(&MatrixDescription::read(dir)?)?;
    if let Some(style) = style {
        options.style = style
            .parse::<Style>()
            .map_err(|e| anyhow::anyhow!("--style: {e}"))?;
    }
    for name in names {
        let (policy, display) = name
            .split_once('=')
            .with_context(|| format!("--name {name}: expected POLICY=NAME"))?;
        if policy.trim().is_empty() || display.trim().is_empty() {
            bail!("--name {name}: expected POLICY=NAME, both non-empty");
        }
        options.names.insert(policy.trim(), display.trim());
    }
    let written = gapbench_report::redraw_with(dir, Some(&options))?;
    println!(
        "{} figure and table files and REPORT.md written in {}",
        written.len(),
        dir.display()
    );
    Ok(())
}
