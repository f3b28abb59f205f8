//! The gapbench data model: what a GPU datacenter and its workload *are*, independent of
//! how anything is scheduled or solved.
//!
//! Units are carried in names: `cpu_milli` (1000 = one vCPU), `memory_mib`, `gpu_milli`
//! (1000 = one whole GPU, per device), `watts`. Resources are integers; only power and
//! fragmentation are floats.
//!
//! This crate depends on no solver, plotting or CLI crate (see `ARCHITECTURE.md`).

pub mod carbon;
pub mod checker;
pub mod cluster;
mod csv_table;
pub mod error;
pub mod failure;
pub mod frag;
pub mod gpu;
pub mod gpu_models;
pub mod input_rules;
pub mod metrics;
pub mod node_list;
pub mod power;
pub mod prepare;
pub mod rng;
pub mod state;
pub mod task;
pub mod testing;
pub mod training;
pub mod workload;

pub use carbon::{caiso_2023, load_carbon_csv, CarbonSeries, SyntheticGrid};
pub use checker::{check_placements, Violation};
pub use cluster::{Cluster, Node, NodeId, NodeType, NodeTypeId};
pub use error::InputError;
pub use failure::{FailureReason, Shortfall};
pub use frag::{FragAccumulators, TypicalPod, TypicalPods};
pub use gpu::{GpuModel, GpuModelSet, MAX_GPU_MODELS};
pub use gpu_models::{GpuModelSpec, GpuModelTable};
pub use input_rules::{Adjustment, AdjustmentKind, InputRules};
pub use metrics::{ClusterMetrics, MetricsTracker};
pub use power::{CpuPowerProfile, NodePower, PowerModel};
pub use prepare::{prepare, NodeOrder, PreparedWorkload, SweepEvent, TaskOrder};
pub use state::{ClusterState, DeviceSet, NodeState, Placement};
pub use task::Task;

/// One whole GPU in milli-GPU.
pub const MILLI_GPU_PER_GPU: u32 = 1000;
/// The most GPUs one node may carry; device sets are bit masks of this width.
pub const MAX_GPUS_PER_NODE: usize = 8;
