//! The ground truth every figure rests on — the placement checker, the power model, the
//! fragmentation measure, the cluster-state bookkeeping and the cluster metrics — on small
//! cases computed by hand. One test binary (not five) so that `cargo mutants` relinks once per
//! mutant.

mod checker;
mod frag;
mod metrics;
mod power;
mod state;

use gapbench_model::{Cluster, CpuPowerProfile, GpuModel, NodeType};

/// Node 0: 2 × V100M32, 8 vCPU (4 cores, one socket), 16 GiB. Node 1: CPU-only, 4 vCPU,
/// 8 GiB.
fn two_node_cluster() -> Cluster {
    let gpu_node = NodeType {
        gpu_model: Some(GpuModel::V100M32),
        gpu_count: 2,
        cpu_milli: 8000,
        memory_mib: 16_384,
    };
    let cpu_node = NodeType {
        gpu_model: None,
        gpu_count: 0,
        cpu_milli: 4000,
        memory_mib: 8192,
    };
    Cluster::new(
        [("gpu".to_string(), gpu_node), ("cpu".to_string(), cpu_node)],
        CpuPowerProfile::Reference,
    )
    .unwrap()
}
