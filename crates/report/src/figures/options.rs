//! How a redraw draws: the style (the house style for the screen, or the paper style) and
//! the policies' display names.

use std::str::FromStr;

use anyhow::{anyhow, Result};
use gapbench_results::MatrixDescription;

use crate::policy_names::PolicyNames;

/// The look of the figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Style {
    /// Large canvases with titles and the legend beside the panels, for the screen and
    /// REPORT.md; policies as the CLI spells them.
    #[default]
    Default,
    /// For papers: 3.33 in (single column) or 7 in (double column) wide, 8–9 pt text in the
    /// embedded font, no title (the caption is written to `<figure>.txt`), the legend under
    /// the plot, a colour-blind-safe palette, the papers' policy names and the spread
    /// across seeds on every line. Families without a paper layout keep the house style.
    Paper,
}

impl FromStr for Style {
    type Err = String;

    fn from_str(text: &str) -> Result<Style, String> {
        match text {
            "default" => Ok(Style::Default),
            "paper" => Ok(Style::Paper),
            other => Err(format!(
                "unknown figure style `{other}` (known: default, paper)"
            )),
        }
    }
}

/// What a redraw is asked for.
#[derive(Debug, Clone, Default)]
pub struct FigureOptions {
    pub style: Style,
    /// Display names: the user's, then the papers' (the LaTeX tables use them in every
    /// style, the figures in the paper style).
    pub names: PolicyNames,
}

impl FigureOptions {
    /// The options a results folder's spec asks for (its `[figures]` table), the defaults
    /// without one.
    pub fn of_matrix(matrix: &MatrixDescription) -> Result<FigureOptions> {
        let Some(figures) = &matrix.spec.figures else {
            return Ok(FigureOptions::default());
        };
        let style = match &figures.style {
            Some(style) => style
                .parse()
                .map_err(|e| anyhow!("matrix.json: [figures] {e}"))?,
            None => Style::Default,
        };
        Ok(FigureOptions {
            style,
            names: PolicyNames::new(figures.names.clone()),
        })
    }
}
