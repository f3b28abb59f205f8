//! Reusing an `--out` folder (item 8): afterwards it holds this run's outputs and nothing
//! an earlier run wrote that this one did not — no old `seed-N/` folders, no mean of other
//! seeds, no aggregate of a study the spec dropped; and `figures` over a folder that lost a
//! CSV its matrix writes refuses, keeping every figure.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::names;

/// A scratch folder of this test process.
fn scratch(name: &str) -> PathBuf {
    common::scratch("out-folders", name)
}

fn gapbench(dir: &Path, args: &[&str]) {
    let output = Command::new(env!("CARGO_BIN_EXE_gapbench"))
        .args(args)
        .current_dir(dir)
        .env_remove("GAPBENCH_TRACES")
        .output()
        .expect("gapbench runs");
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A traces folder with a two-node cluster and a small `default` trace.
fn small_traces(dir: &Path) -> (String, String) {
    let nodes = dir.join("nodes.csv");
    std::fs::write(
        &nodes,
        "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,T4\nn1,64000,262144,8,V100M32\n",
    )
    .unwrap();
    let tasks = dir.join("openb_pod_list_default.csv");
    let mut text = String::from("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n");
    for i in 0..12 {
        text.push_str(&format!("p{i},1000,1024,1,{}\n", 250 * (1 + i % 4)));
    }
    std::fs::write(&tasks, text).unwrap();
    std::fs::copy(&nodes, dir.join("openb_node_list_gpu_node.csv")).unwrap();
    (nodes.display().to_string(), tasks.display().to_string())
}

#[test]
fn a_rerun_of_run_leaves_only_its_own_seeds() {
    let dir = scratch("run");
    let (nodes, tasks) = small_traces(&dir);
    let run = |seeds: &[&str]| {
        let mut args = vec!["run", "--nodes", &nodes, "--tasks", &tasks, "--out", "out"];
        args.extend_from_slice(seeds);
        gapbench(&dir, &args);
    };
    let out = dir.join("out");
    run(&["--seeds", "1..3"]);
    let three = [
        ".gapbench.lock",
        "manifest.json",
        "mean_curve.csv",
        "seed-1",
        "seed-2",
        "seed-3",
        "summary.json",
    ];
    assert_eq!(names(&out), three);
    run(&["--seeds", "1..2"]);
    assert_eq!(
        names(&out),
        [
            ".gapbench.lock",
            "manifest.json",
            "mean_curve.csv",
            "seed-1",
            "seed-2",
            "summary.json"
        ]
    );
    run(&["--seed", "5"]);
    assert_eq!(
        names(&out),
        [
            ".gapbench.lock",
            "curve.csv",
            "manifest.json",
            "summary.json"
        ]
    );
    // A file of the user's stays.
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    run(&["--seeds", "1..3"]);
    let mut expected = three.to_vec();
    expected.insert(3, "notes.txt");
    assert_eq!(names(&out), expected);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn figures_of_a_removed_csv_and_aggregates_of_a_dropped_study_are_removed() {
    let dir = scratch("bench");
    small_traces(&dir);
    std::fs::write(
        dir.join("sweeps.toml"),
        "name = \"s\"\ntraces = [\"default\"]\npolicies = [\"fgd\", \"bestfit\"]\nseeds = [1, 2]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("replays.toml"),
        "name = \"r\"\n[replay]\npolicies = [\"fifo\"]\nseeds = [1]\nidle = [\"always-on\"]\n[replay.eaco]\nservers = [2]\njobs = 4\njobs_per_hour = 4.0\n",
    )
    .unwrap();
    let out = dir.join("out");
    gapbench(
        &dir,
        &[
            "bench",
            "--spec",
            "sweeps.toml",
            "--traces",
            ".",
            "--out",
            "out",
        ],
    );
    let figures = names(&out.join("figures"));
    assert!(figures.iter().any(|f| f.ends_with(".png")), "{figures:?}");

    // `figures` after a CSV the matrix's study writes is gone: an error naming it, and
    // nothing of the folder replaced (deleting the figures would lose them for good).
    std::fs::remove_file(out.join("mean_grid.csv")).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_gapbench"))
        .args(["figures", "out"])
        .current_dir(&dir)
        .output()
        .expect("gapbench runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("mean_grid.csv"), "{stderr}");
    assert_eq!(names(&out.join("figures")), figures);

    // Another spec on the same folder: the sweeps' aggregates are not this matrix's.
    gapbench(
        &dir,
        &[
            "bench",
            "--spec",
            "sweeps.toml",
            "--traces",
            ".",
            "--out",
            "out",
        ],
    );
    gapbench(&dir, &["bench", "--spec", "replays.toml", "--out", "out"]);
    let files = names(&out);
    for stale in ["grid.csv", "mean_grid.csv", "runs.csv"] {
        assert!(
            !files.contains(&stale.to_string()),
            "{stale} left: {files:?}"
        );
    }
    assert!(files.contains(&"replay_runs.csv".to_string()), "{files:?}");
    let figures = names(&out.join("figures"));
    assert!(
        figures.iter().all(|f| f.starts_with("replay_")),
        "{figures:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
