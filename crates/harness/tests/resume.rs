//! An interrupted bench, re-run, finishes only the remaining runs and ends with files
//! byte-identical to an uninterrupted bench.

use std::path::Path;

mod common;
use common::{assert_every_entry_documented, assert_same_files};

use gapbench::bench::{merge, run_bench, BenchOptions};

const SPEC: &str = r#"
name = "resume-test"
description = "two policies, two seeds, on the embedded workload"
traces = ["default"]
policies = ["bestfit", "pwr:200,fgd:800"]
seeds = "42..43"
tune = 1.3
"#;

fn options(dir: &Path, out: &Path, shard: Option<(usize, usize)>) -> BenchOptions {
    BenchOptions {
        spec: dir.join("spec.toml"),
        // The embedded openb-like workload, as asked.
        traces_dir: None,
        stand_in: true,
        out: Some(out.to_path_buf()),
        jobs: Some(2),
        shard,
        progress: false,
        command: "gapbench bench --spec spec.toml".to_string(),
    }
}

#[test]
fn an_interrupted_bench_resumes_to_identical_outputs() {
    let dir = std::env::temp_dir().join(format!("gapbench-resume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("spec.toml"), SPEC).unwrap();

    let whole = dir.join("whole");
    let outcome = run_bench(&options(&dir, &whole, None)).unwrap();
    assert!(outcome.complete && outcome.matrix.stand_in);
    assert_eq!((outcome.kinds[0].total, outcome.kinds[0].run), (4, 4));
    for file in [
        "grid.csv",
        "mean_grid.csv",
        "runs.csv",
        "REPORT.md",
        "matrix.json",
    ] {
        assert!(whole.join(file).is_file(), "{file} missing");
    }
    assert!(std::fs::read_to_string(whole.join("REPORT.md"))
        .unwrap()
        .contains("stood in"));
    assert_every_entry_documented(&whole);

    // "Interrupt": only some runs finished, one cell file was cut short mid-write, and a temp
    // file was left behind.
    let interrupted = dir.join("interrupted");
    let partial = run_bench(&options(&dir, &interrupted, Some((0, 2)))).unwrap();
    assert!(!partial.complete && !interrupted.join("grid.csv").exists());
    let cell = interrupted.join("cells/openb-like/bestfit/seed-42.json");
    let text = std::fs::read_to_string(&cell).unwrap();
    std::fs::write(&cell, &text[..text.len() / 2]).unwrap();
    let stray = cell.with_file_name(".seed-43.json.999.tmp");
    std::fs::write(&stray, "partial").unwrap();

    let resumed = run_bench(&options(&dir, &interrupted, None)).unwrap();
    assert!(resumed.complete);
    assert_eq!(
        (resumed.kinds[0].run, resumed.kinds[0].skipped),
        (3, 1),
        "only the unfinished and the damaged runs are redone"
    );
    assert!(
        !stray.exists(),
        "the rerun removes what an interrupted write left"
    );
    assert_same_files(&whole, &interrupted);

    // Shards merged elsewhere give the same files too.
    let (shard0, shard1, merged) = (dir.join("s0"), dir.join("s1"), dir.join("merged"));
    run_bench(&options(&dir, &shard0, Some((0, 2)))).unwrap();
    run_bench(&options(&dir, &shard1, Some((1, 2)))).unwrap();
    let outcome = merge(&merged, &[shard0, shard1]).unwrap();
    assert!(outcome.complete);
    let report = |d: &Path| std::fs::read_to_string(d.join("REPORT.md")).unwrap();
    assert_eq!(
        report(&merged)
            .lines()
            .filter(|l| !l.starts_with("Reproduce"))
            .collect::<Vec<_>>(),
        report(&whole)
            .lines()
            .filter(|l| !l.starts_with("Reproduce"))
            .collect::<Vec<_>>()
    );
    for file in ["grid.csv", "mean_grid.csv", "runs.csv", "matrix.json"] {
        assert_eq!(
            std::fs::read(merged.join(file)).unwrap(),
            std::fs::read(whole.join(file)).unwrap(),
            "{file}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

const REPLAY_SPEC: &str = r#"
name = "replay-resume-test"
description = "time mode only: the embedded workload with drawn times and a small EaCO setup"

[replay]
traces = ["default"]
policies = ["fgd", "powerflow@1.0"]
seeds = "42..43"
idle = ["always-on", "sleep-when-empty"]
carbon = "caiso-like"

[replay.eaco]
servers = [3]
jobs = 12
jobs_per_hour = 4.0

[budget]
trace = "default"
seeds = [42]
fractions = [1.0]
frontier_prices = 6
frontier_steps = 20
queue = "backfill"
setups = [{ name = "slice", gpus = 16, first_jobs = 30, frontier = true }]
"#;

#[test]
fn interrupted_and_sharded_replays_end_in_identical_files() {
    let dir = std::env::temp_dir().join(format!("gapbench-replay-resume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("spec.toml"), REPLAY_SPEC).unwrap();

    let whole = dir.join("whole");
    let outcome = run_bench(&options(&dir, &whole, None)).unwrap();
    assert!(outcome.complete && outcome.matrix.stand_in);
    assert_eq!((outcome.kinds[0].total, outcome.kinds[1].total), (0, 0));
    assert_eq!((outcome.kinds[2].total, outcome.kinds[2].run), (16, 16));
    // Budget cells: FIFO, Zeus, and per kind (energy, carbon) a frontier and one budget.
    assert_eq!((outcome.kinds[3].total, outcome.kinds[3].run), (6, 6));
    assert!(!whole.join("runs.csv").exists(), "no sweep, no sweep CSVs");
    let runs = std::fs::read_to_string(whole.join("replay_runs.csv")).unwrap();
    assert_eq!(runs.lines().count(), 1 + 16);
    assert!(
        runs.contains(",powerflow@1.0,"),
        "budgeted policies join the one table"
    );
    assert!(runs.lines().nth(1).unwrap().starts_with("openb-like,"));
    assert!(runs.contains("eaco-3,3,powerflow@1.0,43,1.000,sleep-when-empty,12,12,"));
    let report = std::fs::read_to_string(whole.join("REPORT.md")).unwrap();
    // No FIFO baseline ran, so the EaCO setup's panels join the time-mode tables.
    assert!(report.contains("## Time mode") && report.contains("### eaco-3, sleep-when-empty"));
    assert!(!report.contains("## EaCO study"));
    // The budget study: FIFO, Zeus-like and PowerFlow-style (GreenFlow-style) at FIFO's
    // energy (carbon), against the frontier.
    assert!(report.contains("### slice: energy budget (30 jobs)"));
    let points = std::fs::read_to_string(whole.join("budget_points.csv")).unwrap();
    assert_eq!(points.lines().count(), 1 + 2 * 3);
    assert!(whole.join("budget_frontier.csv").is_file());
    assert_every_entry_documented(&whole);

    // Interrupted: one shard of three ran, a finished replay was cut short mid-write.
    let interrupted = dir.join("interrupted");
    let partial = run_bench(&options(&dir, &interrupted, Some((1, 3)))).unwrap();
    assert!(!partial.complete && !interrupted.join("replay_runs.csv").exists());
    let cell = interrupted.join("replay-cells/eaco-3/x1/sleep-when-empty/fgd/seed-43.json");
    let text = std::fs::read_to_string(&cell).unwrap();
    std::fs::write(&cell, &text[..text.len() / 2]).unwrap();
    assert!(
        partial.kinds[3].run > 0 && partial.kinds[3].run < 6,
        "budget cells are sharded"
    );
    let budget_cell = std::fs::read_dir(interrupted.join("budget-cells/slice/seed-42"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::write(&budget_cell, "{").unwrap();
    let resumed = run_bench(&options(&dir, &interrupted, None)).unwrap();
    assert!(resumed.complete);
    assert_eq!(
        resumed.kinds[2].run,
        16 - partial.kinds[2].run + 1,
        "only the unfinished and the damaged replays are redone"
    );
    assert_eq!(resumed.kinds[3].run, 6 - partial.kinds[3].run + 1);
    assert_same_files(&whole, &interrupted);

    // Shards merged elsewhere give the same files (the command line aside).
    let (shard0, shard1, merged) = (dir.join("s0"), dir.join("s1"), dir.join("merged"));
    run_bench(&options(&dir, &shard0, Some((0, 2)))).unwrap();
    run_bench(&options(&dir, &shard1, Some((1, 2)))).unwrap();
    assert!(merge(&merged, &[shard0, shard1]).unwrap().complete);
    for file in [
        "replay_runs.csv",
        "replay_timeline.csv",
        "matrix.json",
        "budget_points.csv",
        "budget_frontier.csv",
        "budget_timeline.csv",
    ] {
        assert_eq!(
            std::fs::read(merged.join(file)).unwrap(),
            std::fs::read(whole.join(file)).unwrap(),
            "{file}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
