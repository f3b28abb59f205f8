//! What `gapbench` refuses, run as a user would: each case exits 1 (never 101, a panic)
//! with a message that says what is wrong and why, and writes no results.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A scratch folder of this test process.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gapbench-refusals-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `gapbench ARGS` in `dir`; returns (exit code, stdout, stderr).
fn gapbench(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_gapbench"))
        .args(args)
        .current_dir(dir)
        .env_remove("GAPBENCH_TRACES")
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("gapbench runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Asserts `gapbench ARGS` is refused with exit code 1 and a message containing each of
/// `expected`; returns the message.
fn refused(dir: &Path, args: &[&str], expected: &[&str]) -> String {
    let (code, stdout, stderr) = gapbench(dir, args);
    assert_eq!(code, 1, "{args:?}: exit {code}\n{stdout}\n{stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    for text in expected {
        assert!(
            stderr.contains(text),
            "{args:?}: expected `{text}` in\n{stderr}"
        );
    }
    stderr
}

const CPU_NODES: &str =
    "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,0,\nn1,64000,262144,0,\n";

/// Item 3: an arrival sweep measures against GPU capacity; a cluster without GPUs is
/// refused before anything runs (it divided by zero, or dropped every task with exit 0).
#[test]
fn a_cluster_without_gpus_is_refused_by_the_sweep_commands() {
    let dir = scratch("no-gpus");
    std::fs::write(dir.join("cpu-nodes.csv"), CPU_NODES).unwrap();
    for tune in ["none", "1.3"] {
        refused(
            &dir,
            &[
                "run",
                "--nodes",
                "cpu-nodes.csv",
                "--tune",
                tune,
                "--out",
                "out",
            ],
            &["cpu-nodes.csv", "no GPUs"],
        );
        assert!(!dir.join("out").exists(), "no half-written folder");
    }
    refused(
        &dir,
        &[
            "gap",
            "--nodes",
            "cpu-nodes.csv",
            "--sample-nodes",
            "2",
            "--out",
            "out",
        ],
        &["cpu-nodes.csv", "no GPUs"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Item 7: a checkpoint past the end of the sweep would be its end state under another
/// label, and a repeated one would be solved twice.
#[test]
fn gap_checkpoints_beyond_the_sweep_or_repeated_are_refused() {
    let dir = scratch("checkpoints");
    let gap = |checkpoints: &str| {
        vec![
            "gap",
            "--sample-nodes",
            "4",
            "--objectives",
            "power",
            "--pareto-points",
            "0",
            "--time-limit",
            "5",
            "--checkpoints",
            checkpoints,
            "--out",
            "out",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    };
    let args = gap("50,500");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    refused(&dir, &args, &["checkpoint 500", "beyond", "tune 1.3"]);
    let args = gap("50,80,50");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    refused(&dir, &args, &["checkpoint 50 is given twice"]);
    assert!(!dir.join("out").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
