//! `curve.csv` of `gapbench run`: one row per task event of a sweep, the cluster after it.

use serde::Serialize;

use crate::declare_row;

declare_row! {
    /// One task event of a sweep and the cluster after it.
    #[derive(Debug, Clone, PartialEq, Serialize)]
    pub struct CurveRow in "curve.csv" {
        /// The event's index, from 0.
        event: usize [Plain, ""],
        /// The task's name in the trace.
        task: String [Raw, ""],
        /// `placed` or `failed`.
        outcome: &'static str [Plain, ""],
        /// Why a failed task fit nowhere (a `FailureReason` label); empty when placed.
        reason: &'static str [Plain, ""],
        /// The node it was placed on; empty when it failed.
        node: String [Raw, ""],
        /// The GPU devices of the node it holds, `|`-separated (empty for CPU tasks).
        devices: String [Raw, ""],
        /// GPU demand arrived so far.
        arrived_gpu_milli: u64 [Plain, "milli-GPU"],
        /// Arrived GPU demand, % of cluster GPU capacity.
        arrived_pct: f64 [Fixed(4), "%"],
        /// GPU allocated.
        used_gpu_milli: u64 [Plain, "milli-GPU"],
        /// Allocated GPU, % of cluster GPU capacity.
        alloc_pct: f64 [Fixed(4), "%"],
        /// FGD fragmentation: idle GPU no typical task could use.
        frag_gpu_milli: f64 [Fixed(2), "milli-GPU"],
        /// Fragmented GPU, % of the idle GPU (0 when none is idle).
        frag_ratio_pct: f64 [Fixed(4), "%"],
        /// The Q1, Q2 and Q4 fragment (the reference's "Q124"), % of the idle GPU (0 when
        /// none is idle).
        q124_pct: f64 [Fixed(4), "%"],
        /// Idle GPU.
        idle_gpu_milli: f64 [Fixed(2), "milli-GPU"],
        /// CPU power of every node.
        power_cpu_w: i64 [Plain, "W"],
        /// GPU power of every node.
        power_gpu_w: i64 [Plain, "W"],
        /// Cluster power: CPU and GPU.
        power_total_w: i64 [Plain, "W"],
        /// Nodes holding at least one task.
        used_nodes: u32 [Plain, ""],
        /// Every GPU device of the nodes in use (as the reference counts them).
        used_gpus: u32 [Plain, ""],
        /// CPU demand arrived so far.
        arrived_cpu_milli: u64 [Plain, "milli-CPU"],
        /// CPU allocated.
        used_cpu_milli: u64 [Plain, "milli-CPU"],
        /// Tasks that failed to place so far.
        failed_tasks: u32 [Plain, ""],
    }
}
