//! Failed placements say why: a trace that does not suit the cluster (whole-GPU inference
//! instances asking 120 GiB each, plus a few impossible requests) gets its failures counted
//! by reason in `summary.json` and named per event in `curve.csv`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use gapbench::run::{run_to_folder, RunSettings};
use gapbench::workload::Workload;
use gapbench_model::{ClusterState, CpuPowerProfile, InputRules, NodeOrder, TaskOrder};

const INFERENCE_TASKS: usize = 8000;

/// 8,000 whole-GPU 120 GiB tasks; 5 asking 3 TiB of memory (more than any node); 3 pinned to
/// A100 (absent from the openb cluster); 2 asking 16 GPUs (nodes have at most 8).
fn inference_trace() -> String {
    let mut csv = String::from("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n");
    for i in 0..INFERENCE_TASKS {
        writeln!(csv, "infer-{i:05},8000,122880,1,1000,").unwrap();
    }
    for i in 0..5 {
        writeln!(csv, "huge-memory-{i},8000,3145728,1,1000,").unwrap();
    }
    for i in 0..3 {
        writeln!(csv, "a100-only-{i},8000,65536,1,1000,A100").unwrap();
    }
    for i in 0..2 {
        writeln!(csv, "sixteen-gpus-{i},8000,65536,16,1000,").unwrap();
    }
    csv
}

#[test]
fn failures_are_counted_by_reason_in_summary_and_curve() {
    let dir = std::env::temp_dir().join(format!("gapbench-failures-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let tasks = dir.join("inference.csv");
    std::fs::write(&tasks, inference_trace()).unwrap();
    let workload = Workload::load(
        None,
        None,
        Some(&tasks),
        CpuPowerProfile::Reference,
        InputRules::Strict,
    )
    .unwrap();
    let settings = RunSettings::new(
        "fgd".parse().unwrap(),
        None,
        TaskOrder::AsListed,
        NodeOrder::AsListed,
    );
    let out = dir.join("out");
    let totals = run_to_folder(&out, &workload, &settings, &[42], false).unwrap();
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let run: gapbench::run::SeedSummary =
        serde_json::from_value(summary["runs"][0].clone()).unwrap();
    assert_eq!(
        (totals.failed, &totals.failures),
        (run.failed, &run.failures)
    );

    let expected_never = BTreeMap::from([
        ("never_fits:memory".to_string(), 5),
        ("never_fits:gpu_model".to_string(), 3),
        ("never_fits:gpu_count".to_string(), 2),
    ]);
    for (label, count) in &expected_never {
        assert_eq!(run.failures.get(label), Some(count), "{label}");
    }
    let no_room = run.failures["no_room"];
    assert!(no_room > 0, "the cluster fills up with 120 GiB tasks");
    assert_eq!(run.failures.len(), 4, "{:?}", run.failures);
    assert_eq!(run.failures.values().sum::<usize>(), run.failed);

    // curve.csv names the same reason per failed event, and a `no_room` task really fits
    // some node of the empty cluster.
    let curve = std::fs::read_to_string(out.join("curve.csv")).unwrap();
    let mut lines = curve.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (task_col, outcome_col, reason_col) = (column("task"), column("outcome"), column("reason"));
    let empty = ClusterState::empty(&workload.cluster);
    let mut per_reason: BTreeMap<String, usize> = BTreeMap::new();
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        let reason = fields[reason_col];
        match fields[outcome_col] {
            "placed" => assert_eq!(reason, ""),
            "failed" => {
                *per_reason.entry(reason.to_string()).or_default() += 1;
                let task = workload
                    .tasks
                    .iter()
                    .find(|t| t.name == fields[task_col])
                    .unwrap();
                let fits_empty = (0..workload.cluster.len() as u32)
                    .any(|node| empty.fits(&workload.cluster, node, task));
                assert_eq!(fits_empty, reason == "no_room", "{line}");
            }
            other => panic!("unexpected outcome {other}"),
        }
    }
    assert_eq!(per_reason, run.failures);
    let _ = std::fs::remove_dir_all(&dir);
}
