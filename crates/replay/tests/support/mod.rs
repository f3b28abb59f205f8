//! Small clusters and workloads for the replay tests.

#![allow(dead_code)]

use gapbench_model::{Cluster, CpuPowerProfile, GpuModel, NodeType, Task};
use gapbench_replay::policies::{is_budgeted, time_policy, Eaco, EacoConfig, TimePolicyKind};
use gapbench_replay::{PodPhase, Qos, TimePolicy, TimedTask, TimedWorkload};

pub fn node_type(gpus: u8, cpu_cores: u32) -> NodeType {
    NodeType {
        gpu_model: (gpus > 0).then_some(GpuModel::V100M16),
        gpu_count: gpus,
        cpu_milli: cpu_cores * 1000,
        memory_mib: 256 * 1024,
    }
}

pub fn cluster(types: &[NodeType]) -> Cluster {
    Cluster::new(
        types
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("node-{i}"), *t)),
        CpuPowerProfile::Reference,
    )
    .expect("valid test cluster")
}

#[allow(clippy::too_many_arguments)]
pub fn timed(
    name: &str,
    cpu_milli: u32,
    gpus: u8,
    gpu_milli: u16,
    qos: Qos,
    arrival_s: f64,
    duration_s: f64,
) -> TimedTask {
    TimedTask {
        task: Task::new(name, cpu_milli, 1024, gpus, gpu_milli),
        qos,
        phase: PodPhase::Running,
        arrival_s,
        duration_s,
        left_censored: false,
        right_censored: false,
        profile: None,
    }
}

pub fn workload(mut tasks: Vec<TimedTask>) -> TimedWorkload {
    tasks.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
    let end = tasks
        .iter()
        .map(|t| t.arrival_s + t.duration_s)
        .fold(0.0, f64::max);
    TimedWorkload {
        tasks,
        dropped_pending: 0,
        trace_end_s: end,
        adjustments: Vec::new(),
    }
}

/// Every time-mode policy, by name: sweep policy specs, every policy of the time-policy
/// table, and a noisy EaCO that must undo.
pub fn policies() -> Vec<&'static str> {
    let mut names = vec!["fgd", "pwr", "pwr:200,fgd:800"];
    names.extend(TimePolicyKind::ALL.iter().map(|kind| kind.name()));
    names.push("eaco-o-noisy");
    names
}

/// Whether `name` plans in rounds (its first starts need not follow arrival order).
pub fn plans_in_rounds(name: &str) -> bool {
    is_budgeted(name)
}

pub fn policy(name: &str, cluster: &Cluster) -> Box<dyn TimePolicy> {
    match name {
        // Wrong predictions make EaCO co-locate where an observation must undo it.
        "eaco-o-noisy" => Box::new(Eaco::new(EacoConfig {
            prediction_noise: 0.3,
            ..EacoConfig::oversubscribed()
        })),
        name => time_policy(name, cluster).expect("a known policy"),
    }
}
