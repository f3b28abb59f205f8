//! `bench --status` on a partly finished sharded bench: two shards of three ran, one of their
//! cells was cut short mid-write, the third has not started.

use std::path::{Path, PathBuf};
use std::process::Command;

use gapbench::bench::status::{Kind, KindCount, Status};
use gapbench::bench::{run_bench, BenchOptions};

const SPEC: &str = r#"
name = "status-test"
description = "a little of every kind of cell, on the embedded workload"
traces = ["default"]
policies = ["bestfit", "fgd"]
seeds = "42..43"
tune = 1.3

[gaps]
traces = ["default"]
policies = ["fgd"]
seeds = [42]
checkpoints = [50]
objectives = ["power"]
sample_nodes = 3
time_limit_s = 20
pareto_points = 0

[replay]
traces = ["default"]
policies = ["fgd"]
seeds = [42]
idle = ["always-on"]

[replay.eaco]
servers = [3]
jobs = 12
jobs_per_hour = 4.0

[budget]
trace = "default"
seeds = [42]
kinds = ["energy"]
fractions = [1.0]
setups = [{ name = "slice", gpus = 16, first_jobs = 30 }]
"#;

fn options(dir: &Path, out: &Path, shard: (usize, usize)) -> BenchOptions {
    BenchOptions {
        spec: dir.join("spec.toml"),
        // The embedded openb-like workload, as asked.
        traces_dir: None,
        stand_in: true,
        out: Some(out.to_path_buf()),
        jobs: Some(2),
        shard: Some(shard),
        progress: false,
        command: "gapbench bench --spec spec.toml".to_string(),
    }
}

#[test]
fn status_counts_what_the_shard_folders_hold() {
    let dir = std::env::temp_dir().join(format!("gapbench-status-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("spec.toml"), SPEC).unwrap();
    let shards: Vec<PathBuf> = (0..3).map(|i| dir.join(format!("s{i}"))).collect();
    // Cells are numbered sweeps (bestfit 42, bestfit 43, fgd 42, fgd 43), then the gap study,
    // then the replays (openb-like, eaco-3), then the budget cells (full-clock FIFO,
    // powerflow@1.00, the frontier); cell k is shard k mod 3's.
    run_bench(&options(&dir, &shards[0], (0, 3))).unwrap();
    run_bench(&options(&dir, &shards[1], (1, 3))).unwrap();
    // Shard 1's sweep (bestfit 43) is cut short mid-write: not done.
    let cut = shards[1].join("cells/openb-like/bestfit/seed-43.json");
    let text = std::fs::read_to_string(&cut).unwrap();
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();

    let status = Status::of(&shards).unwrap();
    assert_eq!(status.started, shards[..2]);
    assert_eq!(status.not_started, shards[2..]);
    let counts: Vec<(Kind, (usize, usize))> = status
        .counts()
        .into_iter()
        .map(|(kind, c)| (kind, (c.done, c.total)))
        .collect();
    assert_eq!(
        counts,
        [
            (Kind::Sweep, (2, 4)),
            (Kind::Gap, (1, 1)),
            (Kind::Replay, (1, 2)),
            (Kind::Budget, (2, 3)),
        ]
    );
    // Every done cell was timed, and in the folder that holds it.
    for (kind, c) in status.counts() {
        assert_eq!(c.timed, c.done, "{kind:?}");
        assert!(c.timed_seconds > 0.0, "{kind:?}");
    }
    let done: Vec<_> = status
        .cells
        .iter()
        .filter_map(|c| Some((c.path.clone(), c.done_in.clone()?)))
        .collect();
    assert!(done.contains(&(
        PathBuf::from("cells/openb-like/fgd/seed-43.json"),
        shards[0].clone()
    )));
    assert!(done.contains(&(
        PathBuf::from("budget-cells/slice/seed-42/powerflow@1.00.json"),
        shards[0].clone()
    )));

    // Slowest first; the time left counts the two sweeps, one replay and one budget cell at
    // their kinds' means.
    let slowest = status.slowest(3);
    assert_eq!(slowest.len(), 3);
    assert!(slowest
        .windows(2)
        .all(|w| w[0].seconds.unwrap() >= w[1].seconds.unwrap()));
    let mean = |c: KindCount| c.timed_seconds / c.timed as f64;
    let by_kind = |kind| status.counts().into_iter().find(|c| c.0 == kind).unwrap().1;
    let expected = 2.0 * mean(by_kind(Kind::Sweep))
        + mean(by_kind(Kind::Replay))
        + mean(by_kind(Kind::Budget));
    let (work, untimed) = status.work_left();
    assert!((work - expected).abs() < 1e-9 && untimed == 0);
    assert!(status.pace().unwrap() > 0.0);

    // The command prints the same.
    let output = Command::new(env!("CARGO_BIN_EXE_gapbench"))
        .args(["bench", "--status"])
        .args(&shards)
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for line in [
        "sweeps                       2       4",
        "gap (sub-cluster)            1       1",
        "replay                       1       2",
        "budget                       2       3",
        "all                          6      10",
        "s2: not started (no matrix.json yet)",
        "slowest cells:",
        "time left: about ",
    ] {
        assert!(printed.contains(line), "`{line}` missing from:\n{printed}");
    }

    // A folder of another matrix is refused, by name.
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(
        dir.join("spec.toml"),
        SPEC.replace("seeds = \"42..43\"", "seeds = \"42..44\""),
    )
    .unwrap();
    run_bench(&options(&dir, &other, (2, 3))).unwrap();
    let error = Status::of(&[shards[0].clone(), other.clone()])
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("other") && error.contains("different matrix"),
        "{error}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
