//! Same inputs and seed → byte-identical output files, whatever the thread count.

use std::path::Path;

use gapbench::run::{run_seeds, write_outputs, RunSettings};
use gapbench::workload::Workload;
use gapbench_model::{CpuPowerProfile, NodeOrder, TaskOrder};

fn run_with_threads(threads: usize, out: &Path) {
    let workload = Workload::load(None, None, CpuPowerProfile::Reference).unwrap();
    let settings = RunSettings::new("pwr:200,fgd:800".parse().unwrap(), Some(1.3), TaskOrder::Shuffled, NodeOrder::Random);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let runs = pool.install(|| run_seeds(&workload, &settings, &[42, 43, 44]));
    write_outputs(out, &workload, &settings, &runs, true).unwrap();
}

fn files_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push((path.strip_prefix(dir).unwrap().display().to_string(), std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn outputs_are_byte_identical_on_one_and_two_threads() {
    let base = std::env::temp_dir().join(format!("gapbench-determinism-{}", std::process::id()));
    let (one, two) = (base.join("one"), base.join("two"));
    run_with_threads(1, &one);
    run_with_threads(2, &two);
    let (a, b) = (files_under(&one), files_under(&two));
    let names: Vec<&str> = a.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"seed-43/curve.csv") && names.contains(&"mean_curve.csv") && names.contains(&"manifest.json"), "{names:?}");
    assert_eq!(a.len(), b.len());
    for ((name_a, bytes_a), (name_b, bytes_b)) in a.iter().zip(&b) {
        assert_eq!(name_a, name_b);
        assert!(bytes_a == bytes_b, "{name_a} differs between thread counts");
    }
    std::fs::remove_dir_all(&base).unwrap();
}
