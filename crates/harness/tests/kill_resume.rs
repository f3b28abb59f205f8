//! A bench killed (SIGKILL) at random points, then re-run, ends with the files of a bench
//! that was never interrupted, byte for byte, and no temporary file left: writes are atomic
//! and a rerun cleans what a killed write left.
//!
//! The kill points are drawn from a fixed seed over the length of an uninterrupted bench, so
//! they fall in the sweeps, the replays, the budget study, the aggregation and the figures
//! (the test prints them).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{assert_same_files, files_under};
use gapbench::out_dir::is_temp_file;

/// Deterministic cells only (no time-limited exact study, whose solve times differ).
const SPEC: &str = r#"
name = "kill-test"
traces = ["default"]
policies = ["fgd", "bestfit", "pwr:200,fgd:800"]
seeds = "42..45"
tune = 1.3

[replay]
policies = ["fgd", "fifo", "eaco-r"]
seeds = [42]
idle = ["always-on", "sleep-when-empty"]

[replay.eaco]
servers = [3]
jobs = 12
jobs_per_hour = 4.0

[budget]
trace = "default"
seeds = [42]
kinds = ["energy"]
fractions = [0.9, 1.0]
setups = [{ name = "slice", gpus = 8, first_jobs = 20 }]
"#;

/// Fresh folders, each killed `KILLS_PER_TRIAL` times in a row (the first always mid-run,
/// the later ones in a rerun that resumes, or after it ended), then re-run to the end.
const TRIALS: usize = 4;
const KILLS_PER_TRIAL: usize = 2;

/// A folder `dir/name` with the spec in it: benches run there with the same relative
/// arguments, so their command lines (kept in REPORT.md and matrix.json) are the same.
fn run_folder(dir: &Path, name: &str) -> PathBuf {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("spec.toml"), SPEC).unwrap();
    folder
}

fn start_bench(folder: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_gapbench"))
        .args([
            "bench",
            "--spec",
            "spec.toml",
            "--stand-in",
            "--jobs",
            "2",
            "--out",
            "out",
        ])
        .current_dir(folder)
        .env_remove("GAPBENCH_TRACES")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gapbench starts")
}

fn finish(child: Child) {
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "bench failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// splitmix64: the kill points from a fixed seed, without a dependency.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[test]
fn a_bench_killed_at_random_points_reruns_to_identical_files_and_no_temp_file() {
    let dir = std::env::temp_dir().join(format!("gapbench-kill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);

    let whole = run_folder(&dir, "whole");
    let started = Instant::now();
    finish(start_bench(&whole));
    let length = started.elapsed();

    let mut state = 0x6761_7062_656e_6368; // "gapbench"
    let mut points = Vec::new();
    for trial in 0..TRIALS {
        let killed = run_folder(&dir, &format!("killed-{trial}"));
        for kill in 0..KILLS_PER_TRIAL {
            let micros = length.as_micros() as u64;
            let mut delay = Duration::from_micros(next(&mut state) % micros.max(1));
            loop {
                let mut child = start_bench(&killed);
                std::thread::sleep(delay);
                let finished_first = child.try_wait().unwrap().is_some();
                let _ = child.kill(); // SIGKILL: no destructor, no cleanup runs.
                let _ = child.wait();
                points.push((trial, delay.as_millis(), finished_first));
                // A trial's first kill must interrupt (else the trial proves nothing): when
                // the bench ran faster than the first one, start afresh and kill sooner.
                if kill > 0 || !finished_first {
                    break;
                }
                std::fs::remove_dir_all(killed.join("out")).unwrap();
                delay /= 2;
            }
        }
        finish(start_bench(&killed));

        let killed_out = killed.join("out");
        let temp: Vec<_> = files_under(&killed_out)
            .into_iter()
            .map(|(path, _)| path)
            .filter(|path| is_temp_file(&path.file_name().unwrap().to_string_lossy()))
            .collect();
        assert!(
            temp.is_empty(),
            "temp files left after kills at {points:?} (trial, ms, finished): {temp:?}"
        );
        assert_same_files(&whole.join("out"), &killed_out);
    }
    eprintln!(
        "bench of {} ms killed at {points:?} (trial, ms, finished before the kill)",
        length.as_millis()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
