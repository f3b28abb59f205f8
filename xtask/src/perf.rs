//! `cargo xtask perf [--save]`: run the criterion benchmarks briefly, compare each with the
//! committed baseline `results/perf-baseline.json`, fail on a regression, and append the
//! measurements to `results/perf-history.csv`.
//!
//! Noise: every benchmark is divided by the `calibration` benchmark (a fixed integer workload
//! that does not use gapbench's code), measured in the same session. Ratios cancel the speed
//! of the machine and most of its momentary load, so the baseline transfers between machines
//! of a kind. A benchmark regresses when its ratio exceeds the baseline's by more than 15 %.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

const CALIBRATION: &str = "calibration/sort_and_fold";
const TOLERANCE: f64 = 0.15;
/// The bench targets `perf` runs; each defines one criterion group of the same name.
const BENCHES: [&str; 3] = ["calibration", "whole_run", "scoring"];

pub fn perf(env: &[(String, String)], root: &Path, save: bool) -> Result<()> {
    let criterion_dir = root.join("target/criterion");
    for group in BENCHES {
        // Stale results of renamed benchmarks must not be read back.
        let _ = std::fs::remove_dir_all(criterion_dir.join(group));
    }
    let mut args: Vec<String> = vec!["bench".into(), "--package".into(), "gapbench-benches".into()];
    for bench in BENCHES {
        args.push("--bench".into());
        args.push(bench.into());
    }
    args.extend(["--", "--warm-up-time", "1", "--measurement-time", "3", "--noplot"].map(String::from));
    let status = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(&args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(root)
        .status()
        .context("cannot start cargo bench")?;
    if !status.success() {
        bail!("the benchmarks failed ({status})");
    }
    let measured = read_estimates(&criterion_dir)?;
    let calibration = *measured.get(CALIBRATION).context("the calibration benchmark did not run")?;
    let ratios: BTreeMap<String, f64> = measured.iter().map(|(id, ns)| (id.clone(), ns / calibration)).collect();

    let baseline_path = root.join("results/perf-baseline.json");
    append_history(&root.join("results/perf-history.csv"), &measured, &ratios)?;
    if save {
        let json: serde_json::Map<String, serde_json::Value> = ratios
            .iter()
            .map(|(id, ratio)| (id.clone(), serde_json::json!({ "ratio_to_calibration": round6(*ratio), "mean_ns": measured[id].round() })))
            .collect();
        std::fs::write(&baseline_path, serde_json::to_string_pretty(&json)? + "\n")?;
        println!("saved {} benchmarks to {}", ratios.len(), baseline_path.display());
        return Ok(());
    }
    let text = std::fs::read_to_string(&baseline_path).with_context(|| format!("{}: no baseline (run `cargo xtask perf --save`)", baseline_path.display()))?;
    let baseline: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("{}: not JSON", baseline_path.display()))?;
    let mut regressions = Vec::new();
    println!("{:<36} {:>14} {:>10} {:>10} {:>8}", "benchmark", "mean", "ratio", "baseline", "change");
    for (id, ratio) in &ratios {
        let Some(base) = baseline.get(id).and_then(|b| b.get("ratio_to_calibration")).and_then(|r| r.as_f64()) else {
            println!("{id:<36} {:>14} {ratio:>10.3} {:>10} {:>8}", human(measured[id]), "new", "");
            continue;
        };
        let change = ratio / base - 1.0;
        let flag = if change > TOLERANCE { "  REGRESSION" } else { "" };
        println!("{id:<36} {:>14} {ratio:>10.3} {base:>10.3} {:>+7.1}%{flag}", human(measured[id]), 100.0 * change);
        if change > TOLERANCE {
            regressions.push(format!("{id} is {:.1} % slower than its baseline", 100.0 * change));
        }
    }
    if !regressions.is_empty() {
        bail!("performance regressions (tolerance {:.0} %):\n  {}", 100.0 * TOLERANCE, regressions.join("\n  "));
    }
    println!("no benchmark is more than {:.0} % slower than its baseline", 100.0 * TOLERANCE);
    Ok(())
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

fn human(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else {
        format!("{:.3} µs", ns / 1e3)
    }
}

/// Mean time in ns of every benchmark criterion measured: `<group>/<bench>` →
/// `target/criterion/<group>/<bench>/new/estimates.json`.
fn read_estimates(criterion_dir: &Path) -> Result<BTreeMap<String, f64>> {
    let mut estimates = BTreeMap::new();
    for group in BENCHES {
        let group_dir = criterion_dir.join(group);
        let Ok(entries) = std::fs::read_dir(&group_dir) else { continue };
        for entry in entries.flatten() {
            let file: PathBuf = entry.path().join("new/estimates.json");
            let Ok(text) = std::fs::read_to_string(&file) else { continue };
            let json: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("{}: not JSON", file.display()))?;
            let mean = json.pointer("/mean/point_estimate").and_then(|v| v.as_f64()).with_context(|| format!("{}: no mean", file.display()))?;
            estimates.insert(format!("{group}/{}", entry.file_name().to_string_lossy()), mean);
        }
    }
    Ok(estimates)
}

fn append_history(path: &Path, measured: &BTreeMap<String, f64>, ratios: &BTreeMap<String, f64>) -> Result<()> {
    let revision = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map_or_else(|| "unknown".to_string(), |o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let date = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .ok()
        .map_or_else(|| "unknown".to_string(), |o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let mut text = if path.is_file() { std::fs::read_to_string(path)? } else { "date,git_revision,benchmark,mean_ns,ratio_to_calibration\n".to_string() };
    for (id, ns) in measured {
        writeln!(text, "{date},{revision},{id},{:.0},{:.6}", ns, ratios[id])?;
    }
    let temp = path.with_extension("csv.tmp");
    std::fs::write(&temp, text)?;
    std::fs::rename(&temp, path)?;
    Ok(())
}
