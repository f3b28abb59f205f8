//! Same inputs and seed → byte-identical output files, whatever the thread count.

use std::path::Path;

mod common;
use common::{assert_same_files, files_under};

use gapbench::run::{run_to_folder, RunSettings};
use gapbench::workload::Workload;
use gapbench_model::{CpuPowerProfile, InputRules, NodeOrder, TaskOrder};

fn run_with_threads(threads: usize, out: &Path) {
    let workload = Workload::load(
        None,
        None,
        None,
        CpuPowerProfile::Reference,
        InputRules::Reference,
    )
    .unwrap();
    let settings = RunSettings::new(
        "pwr:200,fgd:800".parse().unwrap(),
        Some(1.3),
        TaskOrder::Shuffled,
        NodeOrder::Random,
    );
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| run_to_folder(out, &workload, &settings, &[42, 43, 44], true))
        .unwrap();
}

#[test]
fn outputs_are_byte_identical_on_one_and_two_threads() {
    let base = std::env::temp_dir().join(format!("gapbench-determinism-{}", std::process::id()));
    let (one, two) = (base.join("one"), base.join("two"));
    run_with_threads(1, &one);
    run_with_threads(2, &two);
    let names: Vec<String> = files_under(&one)
        .iter()
        .map(|(n, _)| n.display().to_string())
        .collect();
    assert!(
        names.contains(&"seed-43/curve.csv".to_string())
            && names.contains(&"mean_curve.csv".to_string())
            && names.contains(&"manifest.json".to_string()),
        "{names:?}"
    );
    assert_same_files(&one, &two);
    std::fs::remove_dir_all(&base).unwrap();
}

/// `run` streams each seed's summary to disk as its batch ends; the `summary.json` it
/// splices together is byte for byte `serde_json`'s print of the whole summary built in
/// memory, means over seeds included.
#[test]
fn the_streamed_summary_equals_the_summary_built_whole() {
    use gapbench::run::{run_seed, seed_summary, MeanSummary, RunSummary};
    use gapbench::summary::{mean_grid, mean_sample};
    let out = std::env::temp_dir().join(format!("gapbench-streamed-{}", std::process::id()));
    let workload = Workload::load(
        None,
        None,
        None,
        CpuPowerProfile::Reference,
        InputRules::Reference,
    )
    .unwrap();
    let settings = RunSettings::new(
        "bestfit".parse().unwrap(),
        Some(1.1),
        TaskOrder::Shuffled,
        NodeOrder::Random,
    );
    let seeds = [5, 6, 9];
    run_to_folder(&out, &workload, &settings, &seeds, true).unwrap();
    let runs: Vec<_> = seeds
        .iter()
        .map(|&seed| seed_summary(&workload.cluster, &run_seed(&workload, &settings, seed)))
        .collect();
    let whole = RunSummary {
        policy: settings.policy.clone(),
        seeds: seeds.to_vec(),
        workload: workload.describe(),
        gpu_capacity_milli: workload.cluster.gpu_capacity_milli(),
        mean: Some(MeanSummary {
            final_sample: mean_sample(&runs.iter().map(|r| r.final_sample).collect::<Vec<_>>()),
            grid: mean_grid(&runs.iter().map(|r| r.grid.clone()).collect::<Vec<_>>()),
        }),
        runs,
    };
    let expected = serde_json::to_string_pretty(&whole).unwrap() + "\n";
    let written = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(
        written == expected,
        "summary.json differs from the whole summary"
    );
    let left: Vec<_> = files_under(&out)
        .into_iter()
        .map(|(name, _)| name.display().to_string())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    std::fs::remove_dir_all(&out).unwrap();
}
