//! Property tests of what reads a results folder back: `figures` (the report's CSV
//! readers, figure layout and REPORT.md) and `merge` (a shard's `matrix.json` and cells),
//! each fed with a real bench folder (sweeps, replays, a budget study, and the report's
//! synthetic gap rows) of which one file is damaged, 10,000 cases each. Neither panics; a
//! refusal names the damaged file; what merge takes from a cell reaches the merged folder
//! unchanged; and one case in 1,000 is drawn whole, PNGs and all. The test binary's
//! allocator refuses anything past 1 GiB.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use gapbench::bench::{merge, run_bench, BenchOptions};
use gapbench_results::MatrixDescription;
use proptest::prelude::*;

#[global_allocator]
static ALLOCATOR: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, 1 << 30);

const CASES: u32 = 10_000;

/// Scratch space: memory-backed where there is one (cases write and sync many files).
/// The folders of earlier runs whose process is gone are removed first.
fn scratch(name: &str) -> PathBuf {
    let shm = Path::new("/dev/shm");
    let base = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    static CLEANED: OnceLock<()> = OnceLock::new();
    CLEANED.get_or_init(|| remove_stale_scratch(&base));
    let dir = base.join(format!("gapbench-fuzz-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Removes `gapbench-fuzz-<pid>-*` folders of processes that have exited (only where
/// `/proc` tells which processes run).
fn remove_stale_scratch(base: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = name
            .strip_prefix("gapbench-fuzz-")
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok());
        if pid.is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

const SPEC: &str = r#"
name = "fuzz"
traces = ["default"]
policies = ["fgd", "bestfit"]
seeds = "1..2"

[replay]
policies = ["fifo", "eaco-r"]
seeds = [1]
idle = ["always-on"]

[replay.eaco]
servers = [2]
jobs = 8
jobs_per_hour = 4.0

[budget]
trace = "default"
seeds = [42]
kinds = ["energy"]
fractions = [1.0]
setups = [{ name = "slice", gpus = 8, first_jobs = 12 }]
"#;

fn bench(spec: &str, dir: &Path, out: &Path, shard: Option<(usize, usize)>) {
    std::fs::write(dir.join("spec.toml"), spec).unwrap();
    run_bench(&BenchOptions {
        spec: dir.join("spec.toml"),
        stand_in: true,
        out: Some(out.to_path_buf()),
        jobs: Some(2),
        shard,
        command: "gapbench bench --spec spec.toml".to_string(),
        ..BenchOptions::default()
    })
    .unwrap();
}

/// A results folder and its files' names and bytes.
type Folder = (PathBuf, Vec<(String, Vec<u8>)>);

/// A complete results folder of every CSV kind, made once: its files by name.
fn complete_folder() -> &'static Folder {
    static FOLDER: OnceLock<Folder> = OnceLock::new();
    FOLDER.get_or_init(|| {
        let dir = scratch("complete");
        let out = dir.join("out");
        bench(SPEC, &dir, &out, None);
        let synthetic =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/data/synthetic");
        for name in ["gaps.csv", "pareto.csv"] {
            std::fs::copy(synthetic.join(name), out.join(name)).unwrap();
        }
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "csv" || x == "json"))
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read(&p).unwrap())
            })
            .collect();
        files.sort();
        (out, files)
    })
}

/// A shard folder holding the first of two sweep cells, and that cell's path in it.
fn shard_folder() -> &'static (PathBuf, String) {
    static SHARD: OnceLock<(PathBuf, String)> = OnceLock::new();
    SHARD.get_or_init(|| {
        let dir = scratch("shard");
        let out = dir.join("out");
        let spec = "name = \"m\"\ntraces = [\"default\"]\npolicies = [\"fgd\"]\nseeds = [1, 2]\n";
        bench(spec, &dir, &out, Some((0, 2)));
        (out, "cells/openb-like/fgd/seed-1.json".to_string())
    })
}

/// A field or JSON value as a broken file might hold it.
fn odd_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| v.to_string()),
        prop::sample::select(vec![
            "",
            "NaN",
            "nan",
            "inf",
            "-inf",
            "-1",
            "0",
            "1e308",
            "-1e308",
            "1e-320",
            "x",
            "\"",
            "optimal",
            "time_limit",
            "bound",
            "18446744073709551616",
            "\"a,b\"",
            "null",
            "[]",
            "{}",
            "true",
            "é",
        ])
        .prop_map(String::from),
    ]
}

#[derive(Debug, Clone)]
enum Damage {
    /// Replace field `field` of line `line` (header included) by `text`.
    Field {
        line: usize,
        field: usize,
        text: String,
    },
    DropField {
        line: usize,
        field: usize,
    },
    DuplicateLine(usize),
    DeleteLine(usize),
    /// Cut the file at a share of its length.
    Truncate(u16),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        8 => (any::<usize>(), any::<usize>(), odd_text())
            .prop_map(|(line, field, text)| Damage::Field { line, field, text }),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(line, field)| Damage::DropField { line, field }),
        1 => any::<usize>().prop_map(Damage::DuplicateLine),
        1 => any::<usize>().prop_map(Damage::DeleteLine),
        1 => any::<u16>().prop_map(Damage::Truncate),
    ]
}

/// `text` (a CSV) after `damage`; field `0` of line `0` is the first header name, and
/// a line's fields are split at commas (so a quoted comma may split too: more damage).
fn damage_csv(text: &[u8], damage: &Damage) -> Vec<u8> {
    let text = String::from_utf8_lossy(text);
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    if lines.is_empty() {
        return text.as_bytes().to_vec();
    }
    let count = lines.len();
    match damage {
        Damage::Field { line, field, text } => {
            let i = line % count;
            let mut fields: Vec<String> = lines[i].split(',').map(String::from).collect();
            let k = field % fields.len();
            fields[k] = text.clone();
            lines[i] = fields.join(",");
        }
        Damage::DropField { line, field } => {
            let i = line % count;
            let mut fields: Vec<String> = lines[i].split(',').map(String::from).collect();
            fields.remove(field % fields.len());
            lines[i] = fields.join(",");
        }
        Damage::DuplicateLine(n) => {
            let i = n % count;
            lines.insert(i, lines[i].clone());
        }
        Damage::DeleteLine(n) => {
            lines.remove(n % count);
        }
        Damage::Truncate(at) => {
            let bytes = text.as_bytes();
            let cut = bytes.len() * usize::from(*at) / usize::from(u16::MAX);
            return bytes[..cut].to_vec();
        }
    }
    (lines.join("\n") + "\n").into_bytes()
}

/// `json` with the `n`th value (depth first) replaced by `text` read as JSON (or as a
/// string when it is not JSON).
fn damage_json(json: &[u8], n: usize, text: &str) -> Vec<u8> {
    let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(json) else {
        return json.to_vec();
    };
    fn count(v: &serde_json::Value) -> usize {
        1 + match v {
            serde_json::Value::Array(a) => a.iter().map(count).sum(),
            serde_json::Value::Object(o) => o.values().map(count).sum(),
            _ => 0,
        }
    }
    fn replace(v: &mut serde_json::Value, n: &mut usize, new: &serde_json::Value) -> bool {
        if *n == 0 {
            *v = new.clone();
            return true;
        }
        *n -= 1;
        match v {
            serde_json::Value::Array(a) => a.iter_mut().any(|c| replace(c, n, new)),
            serde_json::Value::Object(o) => o.values_mut().any(|c| replace(c, n, new)),
            _ => false,
        }
    }
    let new = serde_json::from_str(text).unwrap_or(serde_json::Value::String(text.to_string()));
    let mut k = 1 + n % (count(&value) - 1).max(1);
    replace(&mut value, &mut k, &new);
    serde_json::to_vec_pretty(&value).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    /// `gapbench figures` reads every CSV of the folder and matrix.json; with one of them
    /// damaged it lays out the figures and writes REPORT.md, or refuses naming that file.
    #[test]
    fn figures_read_a_damaged_folder_or_name_the_damaged_file(
        which in any::<usize>(),
        damage in damage(),
        json_at in any::<usize>(),
        json_text in odd_text(),
        draw in 0u32..1000,
    ) {
        let (base, files) = complete_folder();
        let case = scratch_case("figures");
        for (name, bytes) in files {
            std::fs::write(case.join(name), bytes).unwrap();
        }
        let (name, bytes) = &files[which % files.len()];
        let damaged = if name.ends_with(".json") {
            damage_json(bytes, json_at, &json_text)
        } else {
            damage_csv(bytes, &damage)
        };
        std::fs::write(case.join(name), &damaged).unwrap();
        let outcome = MatrixDescription::read(&case).and_then(|matrix| {
            gapbench_report::plan_figures(&case)?;
            gapbench_report::write_report(&case, &matrix)?;
            if draw == 0 {
                gapbench_report::redraw(&case)?;
            }
            Ok(())
        });
        if let Err(error) = outcome {
            let message = format!("{error:#}");
            prop_assert!(message.contains(name.as_str()), "{} damaged, yet: {}", name, message);
        }
        let _ = base;
    }

    /// `gapbench merge` of a shard whose matrix.json or cell is damaged: it never panics; it
    /// refuses a damaged matrix naming it, and a damaged cell naming that; a cell it copies
    /// reaches the merged folder with every value unchanged, and an undamaged cell is always
    /// copied. One shard of two never completes the matrix: the merge fails saying so.
    #[test]
    fn merge_takes_cells_unchanged_or_names_the_damaged_file(
        in_matrix in any::<bool>(),
        at in any::<usize>(),
        text in odd_text(),
        intact in any::<bool>(),
    ) {
        let (shard, cell) = shard_folder();
        let case = scratch_case("merge");
        let (shard_case, out) = (case.join("shard"), case.join("merged"));
        let cell_path = shard_case.join(cell);
        std::fs::create_dir_all(cell_path.parent().unwrap()).unwrap();
        let matrix = std::fs::read(shard.join("matrix.json")).unwrap();
        let record = std::fs::read(shard.join(cell)).unwrap();
        let (matrix, record) = match (intact, in_matrix) {
            (true, _) => (matrix, record),
            (false, true) => (damage_json(&matrix, at, &text), record),
            (false, false) => (matrix, damage_json(&record, at, &text)),
        };
        std::fs::write(shard_case.join("matrix.json"), &matrix).unwrap();
        std::fs::write(&cell_path, &record).unwrap();
        let error = match merge(&out, std::slice::from_ref(&shard_case)) {
            Ok(_) => return Err(TestCaseError::fail("one of two cells cannot complete the matrix")),
            Err(error) => format!("{error:#}"),
        };
        let merged = out.join(cell);
        if error.contains("matrix.json") {
            prop_assert!(!intact && in_matrix, "refused an intact matrix: {}", error);
        } else if merged.exists() {
            let read = |bytes: &[u8]| serde_json::from_slice::<serde_json::Value>(bytes).unwrap();
            let changed = first_change(&read(&std::fs::read(&merged).unwrap()), &read(&record), "");
            prop_assert!(changed.is_none(), "merge changed {:?}", changed);
            prop_assert!(error.contains("incomplete: 1 of 2 cells"), "{}", error);
        } else {
            prop_assert!(!intact, "an intact cell was left out: {}", error);
            // A matrix damaged into another valid one may not hold this cell at all.
            let named = error.contains(cell.as_str()) || (in_matrix && error.contains("incomplete"));
            prop_assert!(named, "the damaged cell is not named: {}", error);
        }
    }
}

/// The path of the first value that differs between `a` and `b` (numbers compared by
/// value: `0` and `0.0` are the same number), if any.
fn first_change(a: &serde_json::Value, b: &serde_json::Value, path: &str) -> Option<String> {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let same = match (x.as_u64(), y.as_u64(), x.as_i64(), y.as_i64()) {
                (Some(p), Some(q), _, _) => p == q,
                (_, _, Some(p), Some(q)) => p == q,
                // A float field holds the nearest f64 to what the file says.
                _ => x.as_f64() == y.as_f64(),
            };
            (!same).then(|| format!("{path}: {x} vs {y}"))
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_change(p, q, &format!("{path}[{i}]"))),
        (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
            x.iter().find_map(|(k, p)| match y.get(k) {
                Some(q) => first_change(p, q, &format!("{path}.{k}")),
                None => Some(format!("{path}.{k} missing")),
            })
        }
        _ => (a != b).then(|| format!("{path}: {a} vs {b}")),
    }
}

/// A case folder of this test (the same one every case, emptied first).
fn scratch_case(name: &str) -> PathBuf {
    thread_local! {
        static DIRS: std::cell::RefCell<Vec<(String, PathBuf)>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let dir = DIRS.with(|dirs| {
        let mut dirs = dirs.borrow_mut();
        match dirs.iter().find(|(n, _)| n == name) {
            Some((_, dir)) => dir.clone(),
            None => {
                let dir = scratch(&format!("case-{name}"));
                dirs.push((name.to_string(), dir.clone()));
                dir
            }
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
