//! Time-driven replay: tasks arrive at their trace times, wait when nothing fits, run for
//! their durations at a speed set by who shares their GPUs, and leave. Energy is integrated
//! exactly from piecewise-constant power; JCT, waits and deadline misses are per task.
//!
//! Entry point: [`run`]`(cluster, timed_workload, policy, options) -> ReplayResult`.
//! One engine for every policy: every arrival-sweep policy through
//! [`policies::OnlinePolicy`], EaCO ([`policies::Eaco`], modes R and O), EaCO's Gavel
//! baselines (FIFO exclusive, FIFO_packed, simplified Gandiva), and the budgeted policies
//! (PowerFlow-style, GreenFlow-style) with their baselines (full-clock FIFO, Zeus-like), all
//! on real nodes and devices, with exact energy and carbon ledgers. Design:
//! `../shared/spec/time-and-budgets.md` §1–§4, §6.1.

pub mod attributes;
pub mod budget;
pub mod colocation;
pub mod devices;
pub mod eaco_setup;
pub mod energy;
pub mod engine;
mod error;
mod events;
pub mod jobs;
pub mod openb_like;
pub mod options;
pub mod policies;
pub mod policy;
pub mod results;
pub mod timed_workload;

pub use attributes::{derive_attributes, DeadlineFactors, TaskAttributes};
pub use budget::{Budget, BudgetOutcome};
pub use colocation::ColocationModel;
pub use energy::{GpuPowerMode, IdlePolicy, Ledger, PowerSettings};
pub use engine::{run, run_observed, OnFull, QueueDiscipline, ReplayOptions, ReplayProgress};
pub use error::ReplayError;
pub use jobs::{JobTable, TrainingTask};
pub use openb_like::openb_like_timed;
pub use policy::{Action, CapacityMode, Progress, RefusalClass, ReplayView, RoundKind, TimePolicy};
pub use results::{Distribution, ReplayResult, Segment, Summary, TaskRecord, TimelineRow};
pub use timed_workload::{
    GpuProfile, PodPhase, Qos, TimedTask, TimedWorkload, WorkloadCensus, TIME_RULES,
};
