//! Defects of `replay`, `gap`, `frontier` and `bench` found by an adversarial run (issue
//! #34), run as a user would, on the embedded workload and tiny inputs: stale outputs of a
//! reused `--out`, bad instance libraries found only after solving, checkpoints the sweep
//! never reached, messages that blame the wrong flag, a timeline that stops short of
//! `--until`, duplicate frontier budgets.

mod common;

use std::path::{Path, PathBuf};

use common::{gapbench_in as gapbench, names};

/// A scratch folder of this test process.
fn scratch(name: &str) -> PathBuf {
    common::scratch("cli-defects", name)
}

/// Asserts `gapbench ARGS` succeeds; returns its stdout.
fn succeeds(dir: &Path, args: &[&str]) -> String {
    let (code, stdout, stderr) = gapbench(dir, args);
    assert_eq!(code, 0, "{args:?}:\n{stdout}\n{stderr}");
    stdout
}

/// Asserts `gapbench ARGS` is refused (exit 1, or 2 from a flag's parser; never a panic)
/// with a message containing each of `expected`; returns (stdout, stderr).
fn refused(dir: &Path, args: &[&str], expected: &[&str]) -> (String, String) {
    let (code, stdout, stderr) = gapbench(dir, args);
    assert!(
        code == 1 || code == 2,
        "{args:?}: exit {code}\n{stdout}\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    for text in expected {
        assert!(
            stderr.contains(text),
            "{args:?}: expected `{text}` in\n{stderr}"
        );
    }
    (stdout, stderr)
}

/// Item 5: a reused `--out` of `replay` holds only this run's outputs (it kept the
/// `seed-N/` folders of an earlier `--seeds` run, and a single-seed run's files after a
/// `--seeds` run).
#[test]
fn a_rerun_of_replay_leaves_only_its_own_outputs() {
    let dir = scratch("replay-out");
    let replay = |seeds: &[&str]| {
        let mut args = vec!["replay", "--until", "200", "--out", "out"];
        args.extend_from_slice(seeds);
        succeeds(&dir, &args);
    };
    let out = dir.join("out");
    replay(&["--seeds", "42..43"]);
    assert_eq!(
        names(&out),
        [
            ".gapbench.lock",
            "manifest.json",
            "seed-42",
            "seed-43",
            "summary.json"
        ]
    );
    replay(&["--seed", "7"]);
    assert_eq!(
        names(&out),
        [
            ".gapbench.lock",
            "manifest.json",
            "summary.json",
            "tasks.csv",
            "timeline.csv"
        ]
    );
    replay(&["--seeds", "7..8"]);
    assert_eq!(
        names(&out),
        [
            ".gapbench.lock",
            "manifest.json",
            "seed-7",
            "seed-8",
            "summary.json"
        ]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The flags of a small, fast gap study on the embedded workload (4 sampled nodes, power
/// only, no front), exporting to `export`.
fn small_gap<'a>(out: &'a str, export: &'a str, checkpoints: &'a str) -> Vec<&'a str> {
    vec![
        "gap",
        "--sample-nodes",
        "4",
        "--objectives",
        "power",
        "--pareto-points",
        "0",
        "--time-limit",
        "20",
        "--checkpoints",
        checkpoints,
        "--out",
        out,
        "--export",
        export,
    ]
}

/// Asserts a refused gap study solved nothing and wrote nothing: no table row, no instance,
/// no gaps.csv or manifest in `out`.
fn assert_nothing_solved(dir: &Path, stdout: &str, out: &str) {
    assert!(!stdout.contains("instance "), "{stdout}");
    assert!(!stdout.contains("  power "), "{stdout}");
    assert!(!dir.join(out).join("gaps.csv").exists());
    assert!(!dir.join(out).join("manifest.json").exists());
}

/// Item 9: `gap --export DIR` checks DIR and every instance file already in it before it
/// solves anything (a bad file stopped it after the first checkpoint's solves, with no
/// gaps.csv or manifest and index.csv stale), each error naming the file; hand-edited
/// instance files are checked, not indexed as they are.
#[test]
fn gap_export_checks_the_library_before_solving() {
    let dir = scratch("export");
    // A good library to edit: one instance of 4 nodes at 50 %.
    succeeds(&dir, &small_gap("first", "lib", "50"));
    let lib = dir.join("lib");
    let good_name = names(&lib)
        .into_iter()
        .find(|n| n.ends_with(".json"))
        .expect("an instance file");
    let good = std::fs::read_to_string(lib.join(&good_name)).unwrap();
    let index = std::fs::read_to_string(lib.join("index.csv")).unwrap();
    assert_eq!(index.lines().count(), 2, "{index}");

    // DIR is a file, or the results folder itself.
    std::fs::write(dir.join("a-file"), "x").unwrap();
    let (stdout, _) = refused(
        &dir,
        &small_gap("out", "a-file", "50"),
        &["a-file", "not a folder"],
    );
    assert_nothing_solved(&dir, &stdout, "out");
    let (stdout, _) = refused(&dir, &small_gap("out", "out", "50"), &["--export", "--out"]);
    assert_nothing_solved(&dir, &stdout, "out");

    // Each bad file in turn, beside the good one: refused before any solve, naming it.
    let value: serde_json::Value = serde_json::from_str(&good).unwrap();
    // An edited file keeps the name check quiet (`name` is its file stem), so the check
    // the edit is about is the one that speaks.
    let edited = |stem: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut v = value.clone();
        v["name"] = stem.into();
        edit(&mut v);
        serde_json::to_string_pretty(&v).unwrap()
    };
    let bad_files: Vec<(&str, String, &str)> = vec![
        ("truncated.json", good[..good.len() / 2].to_string(), "EOF"),
        (
            "version.json",
            edited("version", &|v| v["format_version"] = 99.into()),
            "version",
        ),
        (
            "nan.json",
            good.replacen("\"solve_s\": ", "\"solve_s\": NaN, \"x\": ", 1),
            "",
        ),
        (
            "wrong-side.json",
            edited("wrong-side", &|v| {
                let value = v["problems"][0]["value"].as_f64().unwrap();
                v["problems"][0]["bound"] = (value + 100.0).into();
            }),
            "bound",
        ),
        (
            "shape.json",
            edited("shape", &|v| {
                v["heuristic"]["placement"][0]["tasks"][0]["shape"] = 999.into()
            }),
            "shape 999",
        ),
        (
            "missing.json",
            edited("missing", &|v| {
                v["problems"][0].as_object_mut().unwrap().remove("bound");
            }),
            "bound",
        ),
        ("copy.json", good.clone(), "copy.json"),
    ];
    for (name, text, expected) in &bad_files {
        let bad = lib.join(name);
        std::fs::write(&bad, text).unwrap();
        let file_name = format!("lib/{name}");
        let (stdout, _) = refused(
            &dir,
            &small_gap("out", "lib", "50"),
            &[file_name.as_str(), expected],
        );
        assert_nothing_solved(&dir, &stdout, "out");
        let mut expected_names = vec![good_name.clone(), "index.csv".to_string(), name.to_string()];
        expected_names.sort();
        assert_eq!(
            names(&lib),
            expected_names,
            "{name}: nothing new in the library"
        );
        assert_eq!(
            std::fs::read_to_string(lib.join("index.csv")).unwrap(),
            index
        );
        std::fs::remove_file(&bad).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Item 11: a checkpoint the sweep never reached is refused, saying how far it got (on 3
/// nodes the tuned sweep ends short of 130 %, and 130 was accepted as the end state).
#[test]
fn gap_refuses_a_checkpoint_the_sweep_never_reached() {
    let dir = scratch("checkpoint");
    let (_, stderr) = refused(
        &dir,
        &[
            "gap",
            "--sample-nodes",
            "3",
            "--objectives",
            "power",
            "--pareto-points",
            "0",
            "--checkpoints",
            "50,130",
            "--out",
            "out",
        ],
        &["checkpoint 130 % is beyond the sweep, which ends at "],
    );
    assert!(!dir.join("out/gaps.csv").exists(), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Item 13: an EaCO arrival rate that spreads the arrivals over centuries is blamed on
/// `--eaco-jobs-per-hour`, not on `--arrival-scale 1`.
#[test]
fn a_too_slow_eaco_rate_blames_its_own_flag() {
    let dir = scratch("eaco-rate");
    let (_, stderr) = refused(
        &dir,
        &[
            "replay",
            "--eaco-servers",
            "1",
            "--eaco-jobs",
            "3",
            "--eaco-jobs-per-hour",
            "1e-300",
            "--out",
            "out",
        ],
        &["--eaco-jobs-per-hour"],
    );
    assert!(!stderr.contains("--arrival-scale 1 "), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Item 13: `bench --traces FILE` says FILE is not a folder (it said the folder does not
/// exist).
#[test]
fn a_traces_file_is_said_to_be_no_folder() {
    let dir = scratch("traces-file");
    std::fs::write(dir.join("traces.csv"), "x\n").unwrap();
    let (_, stderr) = refused(
        &dir,
        &["bench", "--quick", "--traces", "traces.csv", "--out", "out"],
        &["traces.csv", "is not a folder"],
    );
    assert!(!stderr.contains("does not exist"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Item 13: `replay --until T` ends its timeline with a row at T whose energy is the
/// summary's (it ended at the last event before T, short of the energy up to T).
#[test]
fn the_timeline_ends_at_until_and_agrees_with_the_summary() {
    let dir = scratch("until");
    // Three tasks arriving from 0 s (the embedded workload's first arrival is after 150 s).
    std::fs::write(
        dir.join("nodes.csv"),
        "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,T4\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("tasks.csv"),
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
         p0,1000,1024,1,1000,,LS,Succeeded,0,300,0\n\
         p1,1000,1024,1,500,,LS,Succeeded,50,400,50\n\
         p2,1000,1024,1,1000,,LS,Succeeded,100,500,100\n",
    )
    .unwrap();
    succeeds(
        &dir,
        &[
            "replay",
            "--nodes",
            "nodes.csv",
            "--tasks",
            "tasks.csv",
            "--until",
            "150",
            "--out",
            "out",
        ],
    );
    let timeline = std::fs::read_to_string(dir.join("out/timeline.csv")).unwrap();
    let header: Vec<&str> = timeline.lines().next().unwrap().split(',').collect();
    let last: Vec<&str> = timeline.lines().last().unwrap().split(',').collect();
    let column = |name: &str| {
        let at = header.iter().position(|h| *h == name).unwrap();
        last[at].parse::<f64>().unwrap()
    };
    assert_eq!(column("time_s"), 150.0, "{timeline}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/summary.json")).unwrap())
            .unwrap();
    let total = summary["runs"][0]["total_energy_kwh"].as_f64().unwrap();
    let energy = column("energy_kwh");
    assert!(
        (energy - total).abs() <= 1e-6 * total.max(1e-9),
        "timeline ends at {energy} kWh, the summary says {total}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Item 13: `frontier --budgets 1,1` is refused (it wrote two identical rows), and so is
/// `--sweep` below 2 (0 and 1 were silently taken as 2).
#[test]
fn frontier_refuses_repeated_budgets_and_a_sweep_of_fewer_than_two_points() {
    let dir = scratch("frontier");
    let frontier = |extra: &[&str]| {
        let mut args = vec![
            "frontier",
            "--gpus",
            "8",
            "--first-jobs",
            "3",
            "--out",
            "out",
        ];
        args.extend_from_slice(extra);
        args.into_iter().map(String::from).collect::<Vec<_>>()
    };
    for (extra, expected) in [
        (&["--budgets", "1,2,1"][..], "budget 1 is given twice"),
        (&["--sweep", "0"][..], "--sweep"),
        (&["--sweep", "1"][..], "--sweep"),
    ] {
        let args = frontier(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&dir, &args, &[expected]);
        assert!(!dir.join("out/frontier.csv").exists());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
