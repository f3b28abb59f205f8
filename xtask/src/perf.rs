//! `cargo xtask perf [--save]`: run the criterion benchmarks briefly, compare each with the
//! committed baseline `results/perf-baseline.json`, fail on a regression, and append the
//! measurements to `results/perf-history.csv`.
//!
//! Noise handling:
//! - every criterion group also measures `calibration`, a fixed integer workload that uses
//!   none of gapbench's code, and each benchmark is compared as the ratio of its time to its
//!   group's calibration time: the speed of the machine cancels, so a baseline carries over
//!   between machines of a kind;
//! - the time of a benchmark is its fastest sample (per iteration), not the mean: other
//!   processes only ever add time, so the minimum is the estimate least moved by them;
//! - a benchmark over the tolerance is measured again once (with its calibration) and only
//!   a regression that persists fails.
//!
//! A benchmark regresses when its ratio exceeds the baseline's by more than 15 %.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

/// The bench targets `perf` runs; each defines one criterion group of the same name.
const BENCHES: [&str; 2] = ["whole_run", "scoring"];
const CALIBRATION: &str = "calibration";
const TOLERANCE: f64 = 0.15;

pub fn perf(env: &[(String, String)], root: &Path, save: bool) -> Result<()> {
    let criterion_dir = root.join("target/criterion");
    for group in BENCHES {
        // Stale results of renamed benchmarks must not be read back.
        let _ = std::fs::remove_dir_all(criterion_dir.join(group));
    }
    for group in BENCHES {
        run_bench(env, root, group, None)?;
    }
    let mut times = read_fastest(&criterion_dir)?;
    let mut ratios = ratios_of(&times)?;
    let baseline_path = root.join("results/perf-baseline.json");

    if save {
        append_history(&root.join("results/perf-history.csv"), &times, &ratios)?;
        let json: serde_json::Map<String, serde_json::Value> = ratios
            .iter()
            .map(|(id, ratio)| (id.clone(), serde_json::json!({ "ratio_to_calibration": round6(*ratio), "fastest_ns": times[id].round() })))
            .collect();
        std::fs::write(&baseline_path, serde_json::to_string_pretty(&json)? + "\n")?;
        println!(
            "saved {} benchmarks to results/perf-baseline.json",
            ratios.len()
        );
        return Ok(());
    }

    let text = std::fs::read_to_string(&baseline_path)
        .context("results/perf-baseline.json: no baseline (run `cargo xtask perf --save`)")?;
    let baseline: BTreeMap<String, f64> = serde_json::from_str::<serde_json::Value>(&text)
        .context("results/perf-baseline.json: not JSON")?
        .as_object()
        .context("results/perf-baseline.json: not an object")?
        .iter()
        .filter_map(|(id, entry)| Some((id.clone(), entry.get("ratio_to_calibration")?.as_f64()?)))
        .collect();
    let over = |ratios: &BTreeMap<String, f64>| -> Vec<String> {
        ratios
            .iter()
            .filter(|(id, ratio)| {
                baseline
                    .get(*id)
                    .is_some_and(|base| **ratio / base - 1.0 > TOLERANCE)
            })
            .map(|(id, _)| id.clone())
            .collect()
    };
    let suspects = over(&ratios);
    if !suspects.is_empty() {
        println!(
            "measuring again, to rule out noise: {}",
            suspects.join(", ")
        );
        for suspect in &suspects {
            let (group, name) = suspect.split_once('/').expect("ids are group/name");
            run_bench(
                env,
                root,
                group,
                Some(&format!("^{group}/({name}|{CALIBRATION})$")),
            )?;
            let again = read_fastest(&criterion_dir)?;
            let ratio = again[suspect] / again[&format!("{group}/{CALIBRATION}")];
            if ratio < ratios[suspect] {
                ratios.insert(suspect.clone(), ratio);
                times.insert(suspect.clone(), again[suspect]);
            }
        }
    }
    append_history(&root.join("results/perf-history.csv"), &times, &ratios)?;

    println!(
        "{:<32} {:>12} {:>9} {:>9} {:>8}",
        "benchmark (vs its group's calibration)", "fastest", "ratio", "baseline", "change"
    );
    for (id, ratio) in &ratios {
        match baseline.get(id) {
            None => println!(
                "{id:<32} {:>12} {ratio:>9.3} {:>9} {:>8}",
                human(times[id]),
                "new",
                ""
            ),
            Some(base) => {
                let change = ratio / base - 1.0;
                let flag = if change > TOLERANCE {
                    "  REGRESSION"
                } else {
                    ""
                };
                println!(
                    "{id:<32} {:>12} {ratio:>9.3} {base:>9.3} {:>+7.1}%{flag}",
                    human(times[id]),
                    100.0 * change
                );
            }
        }
    }
    let regressions = over(&ratios);
    if !regressions.is_empty() {
        bail!(
            "performance regressions over {:.0} % (measured twice): {}",
            100.0 * TOLERANCE,
            regressions.join(", ")
        );
    }
    println!(
        "no benchmark is more than {:.0} % slower than its baseline",
        100.0 * TOLERANCE
    );
    Ok(())
}

fn run_bench(
    env: &[(String, String)],
    root: &Path,
    bench: &str,
    filter: Option<&str>,
) -> Result<()> {
    let mut args = vec![
        "bench",
        "--package",
        "gapbench-benches",
        "--bench",
        bench,
        "--",
        "--warm-up-time",
        "1",
        "--measurement-time",
        "3",
        "--noplot",
    ];
    if let Some(filter) = filter {
        args.push(filter);
    }
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(&args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(root)
        .status()
        .context("cannot start cargo bench")?;
    if !status.success() {
        bail!("benchmark `{bench}` failed ({status})");
    }
    Ok(())
}

/// Each benchmark's ratio to its group's calibration.
fn ratios_of(times: &BTreeMap<String, f64>) -> Result<BTreeMap<String, f64>> {
    times
        .iter()
        .filter(|(id, _)| !id.ends_with(&format!("/{CALIBRATION}")))
        .map(|(id, ns)| {
            let group = id.split_once('/').map_or(id.as_str(), |(g, _)| g);
            let calibration = times
                .get(&format!("{group}/{CALIBRATION}"))
                .with_context(|| format!("group {group} has no calibration benchmark"))?;
            Ok((id.clone(), ns / calibration))
        })
        .collect()
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

/// The fastest sample's time per iteration, in ns, of every benchmark criterion measured:
/// `<group>/<bench>` → `target/criterion/<group>/<bench>/new/sample.json`.
fn read_fastest(criterion_dir: &Path) -> Result<BTreeMap<String, f64>> {
    let mut fastest = BTreeMap::new();
    for group in BENCHES {
        let Ok(entries) = std::fs::read_dir(criterion_dir.join(group)) else {
            continue;
        };
        for entry in entries.flatten() {
            let file = entry.path().join("new/sample.json");
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let json: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("{}: not JSON", file.display()))?;
            let numbers = |key: &str| -> Option<Vec<f64>> {
                json.get(key)?
                    .as_array()?
                    .iter()
                    .map(|v| v.as_f64())
                    .collect()
            };
            let (iters, times) = numbers("iters")
                .zip(numbers("times"))
                .with_context(|| format!("{}: no samples", file.display()))?;
            let best = iters
                .iter()
                .zip(&times)
                .map(|(n, t)| t / n)
                .fold(f64::INFINITY, f64::min);
            if !best.is_finite() {
                bail!("{}: no samples", file.display());
            }
            fastest.insert(
                format!("{group}/{}", entry.file_name().to_string_lossy()),
                best,
            );
        }
    }
    Ok(fastest)
}

fn append_history(
    path: &Path,
    times: &BTreeMap<String, f64>,
    ratios: &BTreeMap<String, f64>,
) -> Result<()> {
    let output = |program: &str, args: &[&str]| {
        Command::new(program)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map_or_else(
                || "unknown".to_string(),
                |o| String::from_utf8_lossy(&o.stdout).trim().to_string(),
            )
    };
    let revision = output("git", &["rev-parse", "--short=12", "HEAD"]);
    let date = output("date", &["-u", "+%Y-%m-%dT%H:%M:%SZ"]);
    let mut text = if path.is_file() {
        std::fs::read_to_string(path)?
    } else {
        "date,git_revision,benchmark,fastest_ns,ratio_to_calibration\n".to_string()
    };
    for (id, ratio) in ratios {
        writeln!(text, "{date},{revision},{id},{:.0},{ratio:.6}", times[id])?;
    }
    let temp = path.with_extension("csv.tmp");
    std::fs::write(&temp, text)?;
    std::fs::rename(&temp, path)?;
    Ok(())
}
