//! The EaCO evaluation setup (spec time-and-budgets §2.4–2.5), rebuilt for the engine:
//! clusters of 8×V100 servers and a job mix of the four profiled models.
//!
//! From the paper [EaCO §6]: 8×V100 servers with 2×18-core Xeon Gold 6240 (72 vCPUs) and
//! 768 GB RAM; AlexNet, ResNet-18, ResNet-50 and VGG-16 on ImageNet, with the measured epoch
//! times and average GPU utilisation of the solo-run table; clusters of 64 and 28 nodes.
//! Our choices [D], since the paper does not name its trace: every job trains one model on
//! a whole 8-GPU server (as in the profiling runs), the model is uniform over the four,
//! epochs are uniform in 10..=90 (90 = the reference scripts' full run), arrivals are
//! Poisson, every job has a Burstable deadline (σ = 1.2 by default), GPU memory shares are
//! 15 % (AlexNet, ResNet-18) and 30 % (ResNet-50, VGG-16) of a 32 GB V100 (all four fit
//! under a 90 % memory threshold, as the paper co-locates all four).

use rand::Rng;
use rand_distr::{Distribution, Exp};

use gapbench_model::rng::seeded;
use gapbench_model::{Cluster, CpuPowerProfile, GpuModel, NodeType, Task};

use crate::timed_workload::{GpuProfile, PodPhase, Qos, TimedTask, TimedWorkload};

/// One profiled model: name, epoch time (s), average GPU utilisation (‰), GPU memory (‰).
pub const EACO_MODELS: [(&str, f64, u32, u32); 4] = [
    ("alexnet", 0.39 * 3600.0, 47, 150),
    ("resnet18", 0.39 * 3600.0, 112, 150),
    ("resnet50", 0.40 * 3600.0, 366, 300),
    ("vgg16", 0.40 * 3600.0, 480, 300),
];

/// `nodes` servers of 8×V100 (32 GB), 72 vCPUs, 768 GiB.
pub fn eaco_cluster(nodes: usize) -> Cluster {
    let server = NodeType {
        gpu_model: Some(GpuModel::V100M32),
        gpu_count: 8,
        cpu_milli: 72_000,
        memory_mib: 768 * 1024,
    };
    Cluster::new(
        (0..nodes).map(|i| (format!("v100-server-{i:03}"), server)),
        CpuPowerProfile::Reference,
    )
    .expect("the EaCO server type is valid")
}

/// `jobs` jobs arriving as a Poisson process of `jobs_per_hour`, from `seed`.
pub fn eaco_jobs(jobs: usize, jobs_per_hour: f64, seed: u64) -> TimedWorkload {
    let mut rng = seeded(seed);
    let gaps = Exp::new(jobs_per_hour / 3600.0).expect("a positive arrival rate");
    let mut now = 0.0;
    let tasks: Vec<TimedTask> = (0..jobs)
        .map(|i| {
            let (model, epoch_s, util_permille, gpu_memory_permille) =
                EACO_MODELS[rng.random_range(0..EACO_MODELS.len())];
            let epochs = rng.random_range(10..=90);
            let arrival = now;
            now += gaps.sample(&mut rng);
            TimedTask {
                task: Task::new(format!("{model}-{i:04}"), 8_000, 64 * 1024, 8, 1000),
                qos: Qos::Burstable,
                phase: PodPhase::Succeeded,
                arrival_s: arrival,
                duration_s: epoch_s * f64::from(epochs),
                left_censored: false,
                right_censored: false,
                profile: Some(GpuProfile {
                    util_permille,
                    gpu_memory_permille,
                }),
            }
        })
        .collect();
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
