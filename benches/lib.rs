//! Shared set-up for the criterion benchmarks in `benches/`: the workloads they run on.

use criterion::measurement::WallTime;
use criterion::BenchmarkGroup;
use gapbench_model::testing::openb_traces_dir;
use gapbench_model::workload::{load_nodes_csv, load_tasks_csv};
use gapbench_model::{Cluster, CpuPowerProfile, Task};

/// The real openb GPU cluster and `default` trace (the benchmarks' reference workload).
pub fn openb_default() -> (Cluster, Vec<Task>) {
    let dir = openb_traces_dir();
    let cluster = load_nodes_csv(
        &dir.join("openb_node_list_gpu_node.csv"),
        CpuPowerProfile::Reference,
    )
    .expect("openb node list loads");
    let tasks =
        load_tasks_csv(&dir.join("openb_pod_list_default.csv")).expect("openb default trace loads");
    (cluster, tasks)
}

/// A fixed CPU workload that does not depend on gapbench's code: sorts 200,000 pseudo-random
/// integers (a fixed linear congruential sequence) and folds them — branchy, cache-using
/// integer work of the same flavour as scheduling.
pub fn calibration_workload() -> u64 {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut values: Vec<u64> = (0..200_000)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state >> 17
        })
        .collect();
    values.sort_unstable();
    values.iter().fold(0u64, |acc, &v| acc.rotate_left(5) ^ v)
}

/// Registers `<group>/calibration`. Every group measures it next to its own benchmarks, so
/// `cargo xtask perf` can divide each benchmark by a calibration taken under the same
/// machine conditions (speed, load) moments apart.
pub fn bench_calibration(group: &mut BenchmarkGroup<'_, WallTime>) {
    group.bench_function("calibration", |b| b.iter(calibration_workload));
}
