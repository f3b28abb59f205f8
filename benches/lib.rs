//! Shared set-up for the criterion benchmarks in `benches/`: the workloads they run on.

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
