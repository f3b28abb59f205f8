//! What a bench does with specs and shard folders that would lose or fake results: budget
//! fractions two decimals cannot tell apart, a sub-cluster larger than the cluster, a merge
//! of a damaged cell or of too few shards. All on the embedded workload, in seconds.

use std::path::{Path, PathBuf};

use gapbench::bench::{merge, run_bench, BenchOptions};

/// A fresh scratch folder for one test, holding `spec` as `spec.toml`.
fn scratch(name: &str, spec: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gapbench-inputs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("spec.toml"), spec).unwrap();
    dir
}

fn options(dir: &Path, out: &Path, shard: Option<(usize, usize)>) -> BenchOptions {
    BenchOptions {
        spec: dir.join("spec.toml"),
        stand_in: true,
        out: Some(out.to_path_buf()),
        jobs: Some(2),
        shard,
        command: "gapbench bench --spec spec.toml".to_string(),
        ..BenchOptions::default()
    }
}

#[test]
fn budget_fractions_equal_to_two_decimals_each_keep_their_row() {
    let spec = r#"
name = "fractions"
[budget]
trace = "default"
seeds = [42]
kinds = ["energy"]
fractions = [0.951, 0.954]
setups = [{ name = "slice", gpus = 8, first_jobs = 12 }]
"#;
    let dir = scratch("fractions", spec);
    let out = dir.join("out");
    // Typed without the spec, as a default spec would be: the report still names it.
    let typed = BenchOptions {
        command: "gapbench bench".to_string(),
        ..options(&dir, &out, None)
    };
    assert!(run_bench(&typed).unwrap().complete);
    let report = std::fs::read_to_string(out.join("REPORT.md")).unwrap();
    let reproduce = format!(
        "`gapbench bench --spec {} --stand-in`",
        dir.join("spec.toml").display()
    );
    assert!(report.contains(&reproduce), "{reproduce}:\n{report}");
    let points = std::fs::read_to_string(out.join("budget_points.csv")).unwrap();
    for fraction in ["0.951", "0.954"] {
        let rows = points
            .lines()
            .filter(|l| l.contains(&format!(",powerflow,{fraction},")))
            .count();
        assert_eq!(rows, 1, "powerflow at {fraction}:\n{points}");
    }
    for file in ["powerflow@0.951.json", "powerflow@0.954.json"] {
        assert!(
            out.join("budget-cells/slice/seed-42").join(file).is_file(),
            "{file}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_sub_cluster_larger_than_the_cluster_is_refused_before_any_sweep() {
    let spec = r#"
name = "too-many-nodes"
traces = ["default"]
policies = ["fgd"]
seeds = [1]
[gaps]
traces = ["default"]
policies = ["fgd"]
seeds = [1]
checkpoints = [50]
sample_nodes = 100000
"#;
    let dir = scratch("sample", spec);
    let out = dir.join("out");
    let error = format!("{:#}", run_bench(&options(&dir, &out, None)).unwrap_err());
    assert!(error.contains("spec.toml"), "names the spec: {error}");
    assert!(
        error.contains("[gaps]") && error.contains("100000"),
        "{error}"
    );
    assert!(!out.join("cells").exists(), "no sweep ran: {error}");
    std::fs::remove_dir_all(&dir).unwrap();
}

const SWEEPS: &str = r#"
name = "merge-check"
traces = ["default"]
policies = ["bestfit"]
seeds = "42..43"
"#;

#[test]
fn a_merge_missing_shards_fails_saying_which_cells() {
    let dir = scratch("merge-missing", SWEEPS);
    let shard0 = dir.join("s0");
    run_bench(&options(&dir, &shard0, Some((0, 2)))).unwrap();
    let merged = dir.join("merged");
    let error = format!(
        "{:#}",
        merge(&merged, std::slice::from_ref(&shard0)).unwrap_err()
    );
    assert!(error.contains("incomplete: 1 of 2 cells"), "{error}");
    assert!(
        error.contains("seed-43.json"),
        "names the missing cell: {error}"
    );
    assert!(!merged.join("REPORT.md").exists());
    // With the other shard the same merge completes.
    let shard1 = dir.join("s1");
    run_bench(&options(&dir, &shard1, Some((1, 2)))).unwrap();
    assert!(merge(&merged, &[shard0, shard1]).unwrap().complete);
    assert!(merged.join("REPORT.md").is_file());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_merge_over_a_damaged_cell_fails_naming_it() {
    let dir = scratch("merge-damaged", SWEEPS);
    let (shard0, shard1) = (dir.join("s0"), dir.join("s1"));
    run_bench(&options(&dir, &shard0, Some((0, 2)))).unwrap();
    run_bench(&options(&dir, &shard1, Some((1, 2)))).unwrap();
    let cell = shard1.join("cells/openb-like/bestfit/seed-43.json");
    let text = std::fs::read_to_string(&cell).unwrap();
    for damaged in [
        text[..text.len() / 2].to_string(),
        text.replacen("\"key\": \"", "\"key\": \"0", 1),
    ] {
        std::fs::write(&cell, &damaged).unwrap();
        let merged = dir.join("merged");
        let _ = std::fs::remove_dir_all(&merged);
        let error = format!(
            "{:#}",
            merge(&merged, &[shard0.clone(), shard1.clone()]).unwrap_err()
        );
        assert!(error.contains(&cell.display().to_string()), "{error}");
        assert!(error.contains("not a finished cell"), "{error}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
