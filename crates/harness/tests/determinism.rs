//! Same inputs and seed → byte-identical output files, whatever the thread count.

use std::path::Path;

mod common;
use common::{assert_same_files, files_under};

use gapbench::run::{run_seeds, write_outputs, RunSettings};
use gapbench::workload::Workload;
use gapbench_model::{CpuPowerProfile, InputRules, NodeOrder, TaskOrder};

fn run_with_threads(threads: usize, out: &Path) {
    let workload = Workload::load(
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
    let runs = pool.install(|| run_seeds(&workload, &settings, &[42, 43, 44]));
    write_outputs(out, &workload, &settings, &runs, true).unwrap();
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
