//! The sharded bench on a real Slurm: a single-node cluster started here
//! (`deploy/slurm/local-cluster.sh`: Debian's slurm-wlm and munge), the spec
//! `deploy/slurm/check.toml` submitted as a 4-task job array plus its merge job
//! (`deploy/slurm/gapbench-slurm.sh`), one array task killed mid-run and re-submitted.
//!
//! Checked: the killed shard is listed as failed with its log; re-submission runs only that
//! shard and recomputes none of the cells already written (their files keep their bytes and
//! modification times); the merged folder is byte-identical to an unsharded bench (every CSV,
//! REPORT.md, figure and cell; only the cells' wall times differ).
//!
//! Needs root (slurmd runs jobs as their users). `GAPBENCH_SLURM_TEST=require` (set by
//! `.ci/run` and `cargo xtask slurm-local`) installs Slurm when missing and fails when it
//! cannot be set up; otherwise the test runs where Slurm is installed and says why it skips
//! where it is not.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant, SystemTime};

mod common;
use common::files_under;

const SHARDS: usize = 4;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn script(name: &str) -> PathBuf {
    repository().join("deploy/slurm").join(name)
}

/// Runs `command`, echoing its output; panics with it when `must_succeed` and it failed.
fn run(command: &mut Command, must_succeed: bool) -> Output {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    println!("$ {command:?}\n{text}");
    if must_succeed {
        assert!(output.status.success(), "{command:?} failed:\n{text}");
    }
    output
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Whether this test can and should run here; `None` with the reason printed when not.
fn slurm_wanted() -> bool {
    let required = std::env::var("GAPBENCH_SLURM_TEST").is_ok_and(|v| v == "require");
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let installed = ["sbatch", "slurmctld", "slurmd", "munged"]
        .iter()
        .all(|tool| {
            Command::new("sh")
                .args(["-c", &format!("command -v {tool}")])
                .output()
                .is_ok_and(|o| o.status.success())
        });
    match (required, root, installed) {
        (true, false, _) => panic!(
            "GAPBENCH_SLURM_TEST=require, but the local Slurm needs root (slurmd runs jobs as their users)"
        ),
        (true, true, _) | (false, true, true) => true,
        (false, false, _) => {
            println!("skipped: the local Slurm needs root (GAPBENCH_SLURM_TEST=require makes this a failure)");
            false
        }
        (false, true, false) => {
            println!("skipped: Slurm is not installed (`cargo xtask slurm-local` installs it and runs this test; GAPBENCH_SLURM_TEST=require makes this a failure)");
            false
        }
    }
}

/// The local cluster, stopped when dropped (the test passing or not).
struct Cluster {
    dir: PathBuf,
}

impl Cluster {
    fn up(dir: &Path) -> Cluster {
        let cluster = Cluster {
            dir: dir.to_path_buf(),
        };
        let started = Instant::now();
        run(
            Command::new("bash")
                .arg(script("local-cluster.sh"))
                .arg("up")
                .arg(dir),
            true,
        );
        println!("local Slurm up in {:.1} s", started.elapsed().as_secs_f64());
        cluster
    }

    fn conf(&self) -> PathBuf {
        self.dir.join("slurm.conf")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script("local-cluster.sh"))
            .arg("down")
            .arg(&self.dir)
            .status();
    }
}

/// The cell files (sweeps, gaps, replays, budget study) below a shard folder, with their
/// modification times.
fn cell_files(dir: &Path) -> Vec<(PathBuf, Vec<u8>, SystemTime)> {
    files_under(dir)
        .into_iter()
        .filter(|(name, _)| {
            ["cells", "gap-cells", "replay-cells", "budget-cells"]
                .iter()
                .any(|kind| name.starts_with(kind))
        })
        .map(|(name, bytes)| {
            let modified = std::fs::metadata(dir.join(&name))
                .unwrap()
                .modified()
                .unwrap();
            (name, bytes, modified)
        })
        .collect()
}

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        // Short: the kill below must land in the second or two shard 0 has left.
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_sharded_bench_on_a_real_slurm_merges_to_the_unsharded_bench() {
    if !slurm_wanted() {
        return;
    }
    let test_started = Instant::now();
    let base = std::env::temp_dir().join(format!("gapbench-slurm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let cluster = Cluster::up(&base.join("cluster"));
    let gapbench = env!("CARGO_BIN_EXE_gapbench");
    let spec = script("check.toml");
    // The real traces when they are there (as in CI), else the embedded stand-in.
    let traces = repository()
        .join("../shared/traces/openb")
        .canonicalize()
        .unwrap_or_else(|_| base.join("no-traces"));
    std::fs::create_dir_all(&traces).unwrap();

    // The reference: one unsharded bench, from its own folder, with the arguments the
    // shards use (but --shard and --jobs) and the merge's `--out merged`.
    let reference = base.join("reference");
    std::fs::create_dir_all(&reference).unwrap();
    std::fs::copy(&spec, reference.join("spec.toml")).unwrap();
    let started = Instant::now();
    run(
        Command::new(gapbench)
            .current_dir(&reference)
            .args(["bench", "--spec", "spec.toml", "--traces"])
            .arg(&traces)
            .args(["--out", "merged"]),
        true,
    );
    println!("unsharded bench: {:.1} s", started.elapsed().as_secs_f64());

    let slurm = |args: &[&str], must_succeed: bool| {
        run(
            Command::new("bash")
                .arg(script("gapbench-slurm.sh"))
                .args(args)
                .env("SLURM_CONF", cluster.conf()),
            must_succeed,
        )
    };
    let run_dir = base.join("run");
    let run_arg = run_dir.to_str().unwrap();
    let shards = SHARDS.to_string();
    let started = Instant::now();
    let submitted = slurm(
        &[
            "submit",
            "--run",
            run_arg,
            "--shards",
            &shards,
            "--spec",
            spec.to_str().unwrap(),
            "--gapbench",
            gapbench,
            "--traces",
            traces.to_str().unwrap(),
        ],
        true,
    );
    let array = text(&submitted)
        .lines()
        .find_map(|l| l.strip_prefix("submitted shards 0,1,2,3 of 4 as array job "))
        .expect("the array job's id")
        .trim()
        .to_string();

    // Kill shard 0 mid-run, as an out-of-memory kill or a lost node would: it has written
    // its first replay. Its other replays and its budget cells take it about 2 s more; the
    // budget cells count as cells, so a kill before the last of them is mid-run too (with
    // only the replays counted, the window was under a second and a kill missed it once).
    let shard0 = run_dir.join("shards/0");
    wait_until("shard 0's first replay", Duration::from_secs(300), || {
        std::fs::read_dir(shard0.join("cell-times/replay-cells")).is_ok()
    });
    run(
        Command::new("scancel")
            .args(["--signal=KILL", &format!("{array}_0")])
            .env("SLURM_CONF", cluster.conf()),
        true,
    );
    let waited = slurm(&["wait", "--run", run_arg], false);
    let listing = text(&waited);
    assert!(!waited.status.success(), "a shard failed: wait must fail");
    assert!(
        listing.contains("shard 0: FAILED")
            && listing.contains(&format!("log: {run_arg}/logs/shard-0.out")),
        "the killed shard is listed with its log:\n{listing}"
    );
    for shard in 1..SHARDS {
        assert!(
            listing.contains(&format!("shard {shard}: done")),
            "{listing}"
        );
    }
    assert!(!shard0.join("budget_points.csv").exists());
    assert!(!run_dir.join("merged/REPORT.md").exists());
    println!(
        "array with shard 0 killed: {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // Re-submission: only shard 0 runs again, and only its unfinished cells are computed.
    let before: Vec<_> = (0..SHARDS)
        .map(|i| cell_files(&run_dir.join(format!("shards/{i}"))))
        .collect();
    let started = Instant::now();
    let resubmitted = slurm(
        &["submit", "--run", run_arg, "--shards", &shards, "--wait"],
        true,
    );
    let resubmitted = text(&resubmitted);
    assert!(
        resubmitted.contains("submitted shards 0 of 4 as array job"),
        "{resubmitted}"
    );
    assert!(
        resubmitted.contains("cancelling merge job"),
        "{resubmitted}"
    );
    println!(
        "re-submission of shard 0 and the merge: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    for (i, before) in before.iter().enumerate() {
        let after = cell_files(&run_dir.join(format!("shards/{i}")));
        for cell in before {
            assert!(
                after.contains(cell),
                "shard {i}: {} was recomputed or changed",
                cell.0.display()
            );
        }
        if i == 0 {
            assert!(after.len() > before.len(), "shard 0 finished its cells");
            // Its share of the budget study is cells too (the CSVs come with the merge).
            assert!(shard0.join("budget-cells").is_dir());
        } else {
            assert_eq!(after.len(), before.len(), "shard {i} ran again");
        }
    }
    let shard0_log = std::fs::read_to_string(run_dir.join("logs/shard-0.out")).unwrap();
    assert!(
        shard0_log.contains("0 of 12 runs done now (3 already finished)"),
        "{shard0_log}"
    );

    // The merged folder is the unsharded bench's, byte for byte.
    let (merged, unsharded) = (
        files_under(&run_dir.join("merged")),
        files_under(&reference.join("merged")),
    );
    let names = |files: &[(PathBuf, Vec<u8>)]| -> Vec<PathBuf> {
        files.iter().map(|(name, _)| name.clone()).collect()
    };
    assert_eq!(names(&merged), names(&unsharded));
    for file in [
        "REPORT.md",
        "grid.csv",
        "mean_grid.csv",
        "runs.csv",
        "replay_runs.csv",
        "replay_timeline.csv",
        "budget_points.csv",
        "budget_frontier.csv",
        "budget_timeline.csv",
        "matrix.json",
    ] {
        assert!(
            names(&merged).contains(&PathBuf::from(file)),
            "{file} missing"
        );
    }
    for ((name, a), (_, b)) in merged.iter().zip(&unsharded) {
        assert!(
            a == b,
            "{} differs from the unsharded bench's",
            name.display()
        );
    }
    println!(
        "local-Slurm test: {} files identical; {:.1} s in all",
        merged.len(),
        test_started.elapsed().as_secs_f64()
    );
    drop(cluster);
    std::fs::remove_dir_all(&base).unwrap();
}
