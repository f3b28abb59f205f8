//! `cargo xtask perf [--save]`: count the cost of every `whole_run` and `scoring` benchmark
//! under callgrind, compare each with the committed baseline `results/perf-baseline.json`,
//! fail on a regression, and append the counts to `results/perf-history.csv`.
//!
//! Why counts, not wall time: on shared and virtual machines (CI runners, this project's
//! own) wall time swings by ±35–45 % between identical runs, far more than the 15 %
//! tolerance, and no calibration or fastest-sample trick brought it under. Callgrind runs
//! the program on a simulated CPU, so the same binary on the same input gives the same
//! counts on every run — noise is zero by construction, and a 15 % gate means 15 %.
//!
//! The cost of a benchmark is its *estimated cycles*, the weighting KCachegrind uses:
//! `Ir + 10 × (I1mr + D1mr + D1mw) + 100 × (ILmr + DLmr + DLmw)` — instructions, plus
//! first-level cache misses at 10 cycles and last-level misses at 100 — so a change that
//! only makes memory access worse is caught too. The simulated caches are fixed
//! (32 KiB 8-way L1s, 8 MiB 16-way LL, 64 B lines), not read from the host, so counts
//! agree across machines. They do depend on the compiler and valgrind versions, which the
//! baseline records; after a toolchain change, re-save the baseline.
//!
//! The criterion benchmarks (`cargo bench -p gapbench-benches`) remain the place to read
//! wall times; both run the same workloads, defined once in `benches/lib.rs`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, ensure, Context, Result};
use serde_json::{json, Value};

/// The probe's groups, each named after the criterion bench target that times it.
const GROUPS: [&str; 2] = ["whole_run", "scoring"];
/// A benchmark regresses when its estimated cycles exceed the baseline's by more than this.
const TOLERANCE: f64 = 0.15;
/// Fixed simulated caches: size in bytes, associativity, line size.
const CACHES: [&str; 3] = ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64"];

/// Callgrind's counts for one benchmark.
#[derive(Debug, Clone, PartialEq)]
struct Cost {
    instructions: u64,
    estimated_cycles: u64,
    /// The callgrind dump they come from: `callgrind_annotate` on it shows where the cost is.
    dump: PathBuf,
}

pub fn perf(env: &[(String, String)], root: &Path, save: bool) -> Result<()> {
    crate::prerequisites::ensure_valgrind()?;
    let valgrind = tool_version("valgrind", &["--version"]).context("cannot run valgrind")?;
    let rustc = tool_version("rustc", &["--version"]).context("cannot run rustc")?;
    let probe = build_probe(env, root)?;

    // The two groups are independent processes; run them side by side.
    let costs: BTreeMap<String, Cost> = std::thread::scope(|scope| {
        let handles: Vec<_> = GROUPS
            .iter()
            .map(|group| scope.spawn(|| count_group(env, root, &probe, group)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a counting thread panicked"))
            .collect::<Result<Vec<_>>>()
    })?
    .into_iter()
    .flatten()
    .collect();

    let baseline_path = root.join("results/perf-baseline.json");
    append_history(&root.join("results/perf-history.csv"), &costs)?;
    if save {
        return save_baseline(&baseline_path, &costs, &rustc, &valgrind);
    }

    let baseline = read_baseline(&baseline_path, &rustc, &valgrind)?;
    compare_with_baseline(&costs, &baseline)
}

/// Builds `perf-probe` (release profile, like everything else) and returns its path.
fn build_probe(env: &[(String, String)], root: &Path) -> Result<PathBuf> {
    crate::cargo(
        env,
        &[
            "build",
            "--release",
            "--package",
            "gapbench-benches",
            "--bin",
            "perf-probe",
        ],
        &[],
    )?;
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    Ok(target.join("release/perf-probe"))
}

/// Runs `perf-probe GROUP` under callgrind and returns each benchmark's cost.
fn count_group(
    env: &[(String, String)],
    root: &Path,
    probe: &Path,
    group: &str,
) -> Result<Vec<(String, Cost)>> {
    let dir = root.join("target/perf").join(group);
    // Dumps of an earlier run must not be read back.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let out_file = dir.join("callgrind.out");
    println!("counting {group} under callgrind (a few minutes)…");
    let output = Command::new("valgrind")
        .args(["--tool=callgrind", "--cache-sim=yes"])
        .args(CACHES)
        .args([
            "--collect-atstart=no",
            "--toggle-collect=perf_probe::measured",
            "--dump-after=perf_probe::benchmark",
        ])
        .arg(format!("--callgrind-out-file={}", out_file.display()))
        .arg(probe)
        .arg(group)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(root)
        .output()
        .context("cannot start valgrind")?;
    if !output.status.success() {
        bail!(
            "perf-probe {group} failed under valgrind ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let ids: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.strip_prefix("benchmark "))
        .map(str::to_string)
        .collect();
    ensure!(!ids.is_empty(), "perf-probe {group} ran no benchmark");
    // Callgrind numbers its dumps from 1 in the order the benchmarks ran.
    ids.into_iter()
        .enumerate()
        .map(|(k, id)| {
            let dump = dir.join(format!("callgrind.out.{}", k + 1));
            let text = std::fs::read_to_string(&dump)
                .with_context(|| format!("{}: no callgrind dump for {id}", dump.display()))?;
            let cost = parse_dump(&text, &dump).with_context(|| format!("{}", dump.display()))?;
            Ok((id, cost))
        })
        .collect()
}

/// Reads the `events:` and `totals:` lines of a callgrind dump (trailing zero counts may
/// be left out of `totals:`).
fn parse_dump(text: &str, dump: &Path) -> Result<Cost> {
    let line = |prefix: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .with_context(|| format!("no `{prefix}` line"))
    };
    let events: Vec<&str> = line("events:")?.split_whitespace().collect();
    let totals: Vec<u64> = line("totals:")?
        .split_whitespace()
        .map(|n| n.parse().context("a total is not a count"))
        .collect::<Result<_>>()?;
    let count = |event: &str| -> u64 {
        events
            .iter()
            .position(|e| *e == event)
            .and_then(|i| totals.get(i).copied())
            .unwrap_or(0)
    };
    ensure!(events.contains(&"Ir"), "no instruction counts (Ir)");
    let l1_misses = count("I1mr") + count("D1mr") + count("D1mw");
    let last_level_misses = count("ILmr") + count("DLmr") + count("DLmw");
    let instructions = count("Ir");
    Ok(Cost {
        instructions,
        estimated_cycles: instructions + 10 * l1_misses + 100 * last_level_misses,
        dump: dump.to_path_buf(),
    })
}

/// The baseline's estimated cycles per benchmark; warns when it was saved under another
/// toolchain, whose counts are not comparable.
fn read_baseline(path: &Path, rustc: &str, valgrind: &str) -> Result<BTreeMap<String, u64>> {
    let name = "results/perf-baseline.json";
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{name}: no baseline (run `cargo xtask perf --save`)"))?;
    let document: Value =
        serde_json::from_str(&text).with_context(|| format!("{name}: not JSON"))?;
    let saved_with = |tool: &str| document["toolchain"][tool].as_str().unwrap_or("unknown");
    for (tool, now) in [("rustc", rustc), ("valgrind", valgrind)] {
        if saved_with(tool) != now {
            println!(
                "warning: the baseline was saved with {}, this is {now}; counts may differ for that reason alone (re-save with `cargo xtask perf --save`)",
                saved_with(tool)
            );
        }
    }
    document["benchmarks"]
        .as_object()
        .with_context(|| {
            format!("{name}: no `benchmarks` object (re-save with `cargo xtask perf --save`)")
        })?
        .iter()
        .map(|(id, entry)| {
            let cycles = entry["estimated_cycles"]
                .as_u64()
                .with_context(|| format!("{name}: {id} has no `estimated_cycles` count"))?;
            Ok((id.clone(), cycles))
        })
        .collect()
}

/// The first line a tool prints, e.g. `valgrind-3.19.0`; `None` when it cannot run.
fn tool_version(program: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(program).args(args).output().ok()?;
    output.status.success().then(|| {
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_string()
    })
}

/// The columns of `results/perf-history.csv`: name, unit, meaning (the header is written
/// from them, and `docs/benchmarks.md`'s table is checked against them).
pub const HISTORY_COLUMNS: [(&str, &str, &str); 5] = [
    (
        "date",
        "UTC",
        "when `cargo xtask perf` ran, `YYYY-MM-DDTHH:MM:SSZ`",
    ),
    (
        "git_revision",
        "–",
        "the commit measured, 12 hex digits, `+dirty` when tracked files had changes",
    ),
    (
        "benchmark",
        "–",
        "the benchmark, `group/name` (`scoring/fgd`, `whole_run/pwr`)",
    ),
    (
        "estimated_cycles",
        "cycles",
        "callgrind's `Ir + 10 × L1 misses + 100 × last-level misses`",
    ),
    (
        "instructions",
        "instructions",
        "instructions executed (callgrind's `Ir`)",
    ),
];

/// `HISTORY_COLUMNS` as a markdown table.
#[cfg(test)]
pub fn history_markdown() -> String {
    let mut table = String::from("| column | unit | meaning |\n|---|---|---|\n");
    for (name, unit, meaning) in HISTORY_COLUMNS {
        table.push_str(&format!("| `{name}` | {unit} | {meaning} |\n"));
    }
    table
}

fn append_history(path: &Path, costs: &BTreeMap<String, Cost>) -> Result<()> {
    let revision = tool_version("git", &["rev-parse", "--short=12", "HEAD"])
        .unwrap_or_else(|| "unknown".into());
    let dirty = tool_version("git", &["status", "--porcelain", "--untracked-files=no"])
        .is_some_and(|status| !status.is_empty());
    let revision = if dirty {
        format!("{revision}+dirty")
    } else {
        revision
    };
    let date = tool_version("date", &["-u", "+%Y-%m-%dT%H:%M:%SZ"]).unwrap_or_default();
    let mut text = if path.is_file() {
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?
    } else {
        let names: Vec<&str> = HISTORY_COLUMNS.iter().map(|(name, _, _)| *name).collect();
        format!("{}\n", names.join(","))
    };
    for (id, cost) in costs {
        writeln!(
            text,
            "{date},{revision},{id},{},{}",
            cost.estimated_cycles, cost.instructions
        )?;
    }
    write_atomic(path, &text)
}

/// Writes through a temporary file and a rename, so an interrupted write leaves the old file.
fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let temp = path.with_extension("tmp");
    std::fs::write(&temp, text).with_context(|| format!("cannot write {}", temp.display()))?;
    std::fs::rename(&temp, path).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimated_cycles_weigh_misses_and_tolerate_omitted_zeros() {
        let dump = "events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\nsummary: 1000 0 0 1 2 3 4\ntotals: 1000 0 0 1 2 3 4\n";
        let cost = parse_dump(dump, Path::new("callgrind.out.1")).unwrap();
        assert_eq!(cost.instructions, 1000);
        assert_eq!(cost.estimated_cycles, 1000 + 10 * (1 + 2 + 3) + 100 * 4);
    }

    #[test]
    fn a_dump_without_totals_is_an_error() {
        assert!(parse_dump("events: Ir\n", Path::new("callgrind.out.1")).is_err());
    }
}

/// Writes the counted costs as the new baseline (`--save`).
fn save_baseline(
    baseline_path: &Path,
    costs: &BTreeMap<String, Cost>,
    rustc: &str,
    valgrind: &str,
) -> Result<()> {
    let benchmarks: serde_json::Map<String, Value> = costs
        .iter()
        .map(|(id, cost)| {
            let entry = json!({
                "estimated_cycles": cost.estimated_cycles,
                "instructions": cost.instructions,
            });
            (id.clone(), entry)
        })
        .collect();
    let document = json!({
        "toolchain": { "rustc": rustc, "valgrind": valgrind },
        "benchmarks": benchmarks,
    });
    write_atomic(
        &baseline_path,
        &(serde_json::to_string_pretty(&document)? + "\n"),
    )?;
    println!(
        "saved {} benchmarks to results/perf-baseline.json",
        costs.len()
    );
    Ok(())
}

/// Prints each benchmark's cost against its baseline; an error naming every regression
/// over the tolerance (and where its callgrind dump is).
fn compare_with_baseline(
    costs: &BTreeMap<String, Cost>,
    baseline: &BTreeMap<String, u64>,
) -> Result<()> {
    println!(
        "{:<28} {:>16} {:>16} {:>8}",
        "benchmark", "estimated cycles", "baseline", "change"
    );
    let mut regressions = Vec::new();
    for (id, cost) in costs {
        let now = cost.estimated_cycles;
        match baseline.get(id) {
            None => println!("{id:<28} {now:>16} {:>16} {:>8}", "new", ""),
            Some(&base) => {
                let change = now as f64 / base as f64 - 1.0;
                let flag = if change > TOLERANCE {
                    regressions.push((id, change, &cost.dump));
                    "  REGRESSION"
                } else {
                    ""
                };
                println!(
                    "{id:<28} {now:>16} {base:>16} {:>+7.1}%{flag}",
                    100.0 * change
                );
            }
        }
    }
    for id in baseline.keys().filter(|id| !costs.contains_key(*id)) {
        println!("{id:<28} {:>16} (no longer measured)", "—");
    }
    if !regressions.is_empty() {
        println!("where the cost is: `callgrind_annotate FILE` (or KCachegrind) on");
        for (id, _, dump) in &regressions {
            println!("  {id:<26} {}", dump.display());
        }
        let list: Vec<String> = regressions
            .iter()
            .map(|(id, change, _)| format!("{id} ({:+.1} %)", 100.0 * change))
            .collect();
        bail!(
            "performance regressions over {:.0} %: {}",
            100.0 * TOLERANCE,
            list.join(", ")
        );
    }
    println!(
        "no benchmark costs more than {:.0} % over its baseline",
        100.0 * TOLERANCE
    );
    Ok(())
}
