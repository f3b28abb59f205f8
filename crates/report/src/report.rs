//! `REPORT.md` of a results folder: what ran, the headline tables, the figures, and how to
//! reproduce — written from the folder's CSVs and `matrix.json` alone.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use gapbench_results::io::write_atomic;
use gapbench_results::table::read_rows;
use gapbench_results::{
    CheckedRow, GapRow, MatrixDescription, MeanGridRow, RunRow, MEAN_GRID_CSV, REPORT_MD, RUNS_CSV,
};
use serde::de::DeserializeOwned;

use crate::cluster_size::ClusterSizes;
use crate::figures::FIGURES_DIR;

/// The FGD authors' published means (tune 1.3, seeds 42–51, default trace): allocated GPU %
/// at 100 % / 130 % arrived (reference-semantics §9).
const REFERENCE_ALLOCATION: [(&str, f64, f64); 6] = [
    ("random", 86.30, 87.47),
    ("dotprod", 90.62, 90.85),
    ("clustering", 91.65, 91.88),
    ("packing", 91.78, 92.00),
    ("bestfit", 92.86, 93.08),
    ("fgd", 95.23, 95.39),
];

/// Mean final allocation (after the last event, ≈ 130 % arrived) per (trace, policy).
pub(crate) fn final_allocation(rows: &[RunRow]) -> BTreeMap<(String, String), f64> {
    let mut sums: BTreeMap<(String, String), (f64, usize)> = BTreeMap::new();
    for row in rows {
        let entry = sums
            .entry((row.trace.clone(), row.policy.clone()))
            .or_default();
        entry.0 += row.final_alloc_pct;
        entry.1 += 1;
    }
    sums.into_iter()
        .map(|(k, (sum, n))| (k, sum / n as f64))
        .collect()
}

/// The rows of `path`, each checked ([`gapbench_results::CheckedRow`]); none when the
/// folder has no such file (a bench of replays only has no sweep CSVs).
pub(crate) fn read_csv<T: DeserializeOwned + CheckedRow>(path: &Path) -> Result<Vec<T>> {
    Ok(read_rows::<T>(path, &[])?
        .map(|rows| rows.rows.into_iter().map(|row| row.value).collect())
        .unwrap_or_default())
}

/// Mean values per (trace, policy) at each integer arrived percent, in file order.
pub(crate) type Curves = BTreeMap<String, Vec<(String, Vec<MeanGridRow>)>>;

pub(crate) fn curves(rows: Vec<MeanGridRow>) -> Curves {
    let mut by_trace: Curves = BTreeMap::new();
    for row in rows {
        let policies = by_trace.entry(row.trace.clone()).or_default();
        match policies.iter_mut().find(|(p, _)| *p == row.policy) {
            Some((_, points)) => points.push(row),
            None => policies.push((row.policy.clone(), vec![row])),
        }
    }
    by_trace
}

/// The value at integer percent `a` (the last grid point when the curve stops short).
pub(crate) fn at(points: &[MeanGridRow], a: usize) -> &MeanGridRow {
    points
        .iter()
        .find(|p| p.arrived_pct.round() as usize == a)
        .unwrap_or_else(|| points.last().expect("curves are non-empty"))
}

/// Writes `REPORT.md` into `dir` (listing the figures now in its `figures/`) and returns its
/// text.
pub fn write_report(dir: &Path, matrix: &MatrixDescription) -> Result<String> {
    let out = report_text(dir, matrix, &figure_pngs(dir))?;
    write_atomic(&dir.join(REPORT_MD), out.as_bytes())?;
    Ok(out)
}

/// The text of `REPORT.md` of `dir`, showing the figures `pngs` (file names in `figures/`).
pub(crate) fn report_text(
    dir: &Path,
    matrix: &MatrixDescription,
    pngs: &[String],
) -> Result<String> {
    let mut out = String::new();
    let spec = &matrix.spec;
    writeln!(out, "# gapbench report: {}\n", spec.name)?;
    writeln!(out, "{}\n", spec.description)?;
    if matrix.stand_in {
        writeln!(out, "> **Not the real traces: the embedded openb-like workload (the openb GPU cluster's node types and the default trace's task shapes) stood in for every trace**, because no traces folder was given or found, or `--stand-in` was asked. Point `--traces` at the openb CSVs for the real matrix.\n")?;
    }
    let traced = crate::gaps::read_traced(dir)?;
    let gap_rows: Vec<(&str, &GapRow)> = traced.iter().map(|(t, r)| (t.as_str(), r)).collect();
    let sizes = ClusterSizes::of_spec(
        matrix,
        gap_rows.iter().map(|(trace, row)| (*trace, row.nodes)),
    );
    crate::gaps::headline(&mut out, &gap_rows, &sizes)?;
    let seeds = spec.seeds.expand()?;
    writeln!(out, "## What ran\n")?;
    if !matrix.traces.is_empty() {
        what_ran_sweeps(&mut out, matrix, &seeds)?;
    }
    if let Some(replay) = &matrix.spec.replay {
        crate::time_mode::what_ran(&mut out, replay)?;
    }
    writeln!(out, "- inputs (SHA-256):")?;
    // A trace that is both swept and replayed is listed twice: once per mode.
    let sweep_inputs = matrix.inputs.iter().map(|(trace, i)| (trace.clone(), i));
    let replay_inputs =
        (matrix.replay_inputs.iter()).map(|(source, i)| (format!("{source} (time mode)"), i));
    for (source, inputs) in sweep_inputs.chain(replay_inputs) {
        for input in inputs {
            writeln!(
                out,
                "  - {source} {}: `{}` {}",
                input.role,
                input.source,
                input.sha256.get(..16).unwrap_or(&input.sha256)
            )?;
        }
    }
    writeln!(out, "\nReproduce: `{}` (finished runs are reused; delete `cells/`, `gap-cells/` and `replay-cells/` to recompute them; the `[budget]` study always reruns; `cargo xtask figures DIR` redraws figures and this report from the CSVs).\n", matrix.command)?;

    let curves = curves(read_csv(&dir.join(MEAN_GRID_CSV))?);
    let finals = final_allocation(&read_csv(&dir.join(RUNS_CSV))?);
    if !curves.is_empty() {
        allocation_section(&mut out, &curves, &finals)?;
        power_section(&mut out, &curves)?;
    }
    if !gap_rows.is_empty() {
        crate::gaps::section(&mut out, &gap_rows, &sizes)?;
    }
    crate::time_mode::sections(&mut out, dir)?;
    crate::budgets::section(&mut out, dir)?;
    figures_section(&mut out, pngs)?;
    Ok(out)
}

/// The sweep lines of "What ran".
fn what_ran_sweeps(out: &mut String, matrix: &MatrixDescription, seeds: &[u64]) -> Result<()> {
    let spec = &matrix.spec;
    writeln!(out, "- traces: {}", matrix.traces.join(", "))?;
    writeln!(out, "- policies: {}", spec.policies.join("; "))?;
    writeln!(
        out,
        "- seeds: {} ({} per policy and trace); tune {} × cluster GPU capacity",
        seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        seeds.len(),
        spec.tune
    )?;
    writeln!(
        out,
        "- runs: {}",
        matrix.traces.len() * spec.policies.len() * seeds.len()
    )?;
    Ok(())
}

fn allocation_section(
    out: &mut String,
    curves: &Curves,
    finals: &BTreeMap<(String, String), f64>,
) -> Result<()> {
    writeln!(out, "## GPU allocation\n")?;
    writeln!(out, "Allocated GPU (% of cluster capacity) when arrived demand reaches 100 % and at the end (≈ 130 %), mean over seeds. Higher is better; the FGD paper's main comparison.\n")?;
    for (trace, policies) in curves {
        writeln!(out, "### {trace}\n")?;
        writeln!(
            out,
            "| policy | alloc % at 100 % | alloc % at 130 % | frag ratio % at 100 % | seeds |"
        )?;
        writeln!(out, "|---|---|---|---|---|")?;
        let mut ranked: Vec<(&String, f64)> = Vec::new();
        for (policy, points) in policies {
            let p100 = at(points, 100);
            let end = *finals
                .get(&(trace.clone(), policy.clone()))
                .with_context(|| {
                    format!(
                        "{RUNS_CSV} has no run of {policy} on {trace}, which {MEAN_GRID_CSV} has"
                    )
                })?;
            writeln!(
                out,
                "| {policy} | {:.2} | {end:.2} | {:.2} | {} |",
                p100.alloc_pct, p100.frag_ratio_pct, p100.seeds
            )?;
            ranked.push((policy, p100.alloc_pct));
        }
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        writeln!(
            out,
            "\nRanking at 100 %: {}\n",
            ranked
                .iter()
                .map(|(p, _)| p.as_str())
                .collect::<Vec<_>>()
                .join(" > ")
        )?;
        if trace == "default" || trace == "openb-like" {
            writeln!(
                out,
                "Against the FGD authors' published means (same trace, tune 1.3, seeds 42–51):\n"
            )?;
            writeln!(
                out,
                "| policy | reference 100 % / 130 % | gapbench 100 % / 130 % | difference (pp) |"
            )?;
            writeln!(out, "|---|---|---|---|")?;
            for (policy, reference_100, reference_130) in REFERENCE_ALLOCATION {
                if let Some((_, points)) = policies.iter().find(|(p, _)| p == policy) {
                    let (ours_100, ours_130) = (
                        at(points, 100).alloc_pct,
                        finals[&(trace.clone(), policy.to_string())],
                    );
                    writeln!(out, "| {policy} | {reference_100:.2} / {reference_130:.2} | {ours_100:.2} / {ours_130:.2} | {:+.2} / {:+.2} |", ours_100 - reference_100, ours_130 - reference_130)?;
                }
            }
            writeln!(out)?;
        }
    }
    Ok(())
}

fn power_section(out: &mut String, curves: &Curves) -> Result<()> {
    writeln!(out, "## Power\n")?;
    writeln!(out, "Power saving vs FGD, `(P_fgd − P_x) / P_fgd`, on the mean total power when arrived demand reaches 50 / 80 / 100 % of capacity (the PWR paper's comparison), with allocation at 100 % for the trade-off.\n")?;
    for (trace, policies) in curves {
        let Some((_, fgd)) = policies.iter().find(|(p, _)| p == "fgd") else {
            continue;
        };
        writeln!(out, "### {trace}\n")?;
        writeln!(out, "| policy | power kW at 50 % | saving at 50 % | saving at 80 % | saving at 100 % | alloc % at 100 % |")?;
        writeln!(out, "|---|---|---|---|---|---|")?;
        for (policy, points) in policies {
            let saving = |a| {
                100.0 * (at(fgd, a).power_total_w - at(points, a).power_total_w)
                    / at(fgd, a).power_total_w
            };
            writeln!(
                out,
                "| {policy} | {:.1} | {:+.2} % | {:+.2} % | {:+.2} % | {:.2} |",
                at(points, 50).power_total_w / 1000.0,
                saving(50),
                saving(80),
                saving(100),
                at(points, 100).alloc_pct
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// The PNG files in `dir/figures/`.
fn figure_pngs(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir.join(FIGURES_DIR)) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".png"))
        .collect()
}

fn figures_section(out: &mut String, pngs: &[String]) -> Result<()> {
    if pngs.is_empty() {
        return Ok(());
    }
    let mut pngs = pngs.to_vec();
    pngs.sort();
    pngs.dedup();
    writeln!(out, "## Figures\n")?;
    writeln!(
        out,
        "Each as PNG (shown) and SVG beside it; redraw with `cargo xtask figures DIR`.\n"
    )?;
    for png in pngs {
        writeln!(out, "![{}](figures/{png})\n", png.trim_end_matches(".png"))?;
    }
    Ok(())
}
