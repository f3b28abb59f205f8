//! How fast, and at what power, a deep-learning training job runs in a configuration (GPU
//! count, nodes spanned, GPU clock): the performance and energy model that PowerFlow-style
//! and GreenFlow-style allocators and their exact frontiers share (time-and-budgets §3.2–3.3).
//!
//! Everything here is the standard model family, not PowerFlow's own equations (which were
//! not available to us) — every constant is a design choice marked [D]:
//! - compute per iteration `T_comp = (α_c + β_c·b/n) · (ρ·f_max/f + 1 − ρ)`: only the
//!   compute-bound share ρ speeds up with the clock;
//! - ring all-reduce `T_sync = 0` (n = 1), `α_in + β_in·(n − 2)` within a node,
//!   `α_x + β_x·(n − 2)` across nodes;
//! - Pollux-style overlap `T_it = (T_comp^γ + T_sync^γ)^(1/γ)`;
//! - GPU power `P(f) = P_idle + (P_max − P_idle)·(f/f_max)^κ` while computing and
//!   `P_idle + 0.2·(P_max − P_idle)` while only communicating; idle and full watts are the
//!   reference power model's ([`crate::power::gpu_power_profile`]) so every policy sees the
//!   same numbers;
//! - a host share of [`HOST_WATTS_PER_GPU`] per GPU for the whole iteration.
//!
//! The scaling constants of each [`WorkloadClass`] are fitted to the shape of ElasticFlow's
//! published A100 throughput profiles (ResNet-50 at batch 256: 1.8 it/s on 1 GPU, 6.2 on 4,
//! 10.4 on 8, 15 on 16; BERT saturating near 3× at 8 GPUs); the absolute time scale cancels,
//! because a trace task's iteration count is its duration over its trace configuration's
//! iteration time ([`TrainingJob::from_trace`]).

use rand::Rng;

use crate::gpu::GpuModel;
use crate::power::{gpu_power_profile, GpuPowerProfile};
use crate::rng::keyed;

/// Host (CPU, memory, platform) watts charged per GPU of a running job [D]: the reference
/// CPU socket's 120 W full power, two sockets per 8-GPU node.
pub const HOST_WATTS_PER_GPU: f64 = 30.0;

/// The clock steps a policy may choose, as fractions of `f_max` [D]: five levels, all above
/// every model's `f_min`.
pub const FREQUENCY_LEVELS: [f64; 5] = [0.6, 0.7, 0.8, 0.9, 1.0];

/// A GPU model's clock range and how its speed and power respond to the clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DvfsProfile {
    pub f_min_mhz: f64,
    pub f_max_mhz: f64,
    /// Exponent of dynamic power in the clock.
    pub kappa: f64,
    /// Share of compute time that scales with the clock.
    pub rho: f64,
    pub idle_watts: f64,
    pub max_watts: f64,
}

impl DvfsProfile {
    /// The profile of `model` [D: public spec-sheet clock ranges, rounded; κ and ρ from
    /// time-and-budgets §3.2]; A10 and the undisclosed G2 share a row (the reference gives
    /// them one power profile), as do A100 and G3. `None` for models without a power profile.
    pub fn of(model: GpuModel) -> Option<DvfsProfile> {
        DvfsProfile::with_power(model, gpu_power_profile(model)?)
    }

    /// The profile of `model` with the device power `power` (a GPU-model file's, for a
    /// cluster built with one: [`crate::Cluster::dvfs_profile`]); `None` for models without
    /// a clock range: G1 and models from a file.
    pub fn with_power(model: GpuModel, power: GpuPowerProfile) -> Option<DvfsProfile> {
        let (f_min_mhz, f_max_mhz, kappa, rho) = match model {
            GpuModel::V100M16 | GpuModel::V100M32 => (135.0, 1530.0, 2.5, 0.75),
            GpuModel::A100 | GpuModel::G3 => (210.0, 1410.0, 2.5, 0.75),
            GpuModel::T4 => (300.0, 1590.0, 2.0, 0.7),
            GpuModel::P100 => (544.0, 1328.0, 2.5, 0.7),
            GpuModel::A10 | GpuModel::G2 => (210.0, 1695.0, 2.0, 0.7),
            _ => return None,
        };
        Some(DvfsProfile {
            f_min_mhz,
            f_max_mhz,
            kappa,
            rho,
            idle_watts: f64::from(power.idle_watts),
            max_watts: f64::from(power.full_watts),
        })
    }

    /// Watts of one GPU computing at `frequency` (a fraction of `f_max`).
    pub fn computing_watts(&self, frequency: f64) -> f64 {
        self.idle_watts + (self.max_watts - self.idle_watts) * frequency.powf(self.kappa)
    }

    /// Watts of one GPU waiting on communication.
    pub fn communicating_watts(&self) -> f64 {
        self.idle_watts + 0.2 * (self.max_watts - self.idle_watts)
    }

    /// The lowest allowed clock as a fraction of `f_max`.
    pub fn min_frequency(&self) -> f64 {
        self.f_min_mhz / self.f_max_mhz
    }
}

/// A synthetic kind of training job; its constants shape how it scales with GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WorkloadClass {
    /// A compute-light model: little to gain from more GPUs.
    SmallCnn,
    /// ResNet-50-like: scales well (≈ 5.8× on 8 GPUs).
    ResNetLike,
    /// VGG-like: large gradients, ≈ 4× on 8 GPUs.
    VggLike,
    /// BERT-like: saturates near 3× on 8 GPUs.
    BertLike,
}

/// The scaling constants of one class, seconds per iteration at `f_max`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Scaling {
    /// α_c: per-iteration compute overhead.
    compute_fixed_s: f64,
    /// β_c·b: compute of the whole global batch on one GPU.
    compute_batch_s: f64,
    /// α_in, β_in: all-reduce within a node.
    sync_in_node_s: f64,
    sync_in_node_per_gpu_s: f64,
    /// α_x, β_x: all-reduce across nodes.
    sync_across_s: f64,
    sync_across_per_gpu_s: f64,
    /// γ: overlap of compute and communication (1 = none).
    overlap: f64,
}

impl WorkloadClass {
    pub const ALL: [WorkloadClass; 4] = [
        WorkloadClass::SmallCnn,
        WorkloadClass::ResNetLike,
        WorkloadClass::VggLike,
        WorkloadClass::BertLike,
    ];

    pub fn label(self) -> &'static str {
        match self {
            WorkloadClass::SmallCnn => "small-cnn",
            WorkloadClass::ResNetLike => "resnet-like",
            WorkloadClass::VggLike => "vgg-like",
            WorkloadClass::BertLike => "bert-like",
        }
    }

    /// [D] ResNet and BERT fitted to ElasticFlow's profiles (least squares on log speed-up);
    /// VGG and the small CNN chosen to bracket them.
    fn scaling(self) -> Scaling {
        let (compute_fixed_s, compute_batch_s, sync_in, sync_in_per, sync_x, sync_x_per, overlap) =
            match self {
                WorkloadClass::SmallCnn => (0.02, 0.08, 0.03, 0.002, 0.06, 0.002, 2.0),
                WorkloadClass::ResNetLike => (0.02, 0.536, 0.04, 0.0, 0.04, 0.0, 2.0),
                WorkloadClass::VggLike => (0.03, 0.75, 0.12, 0.005, 0.2, 0.005, 2.0),
                WorkloadClass::BertLike => (0.06, 0.2257, 0.06, 0.0, 0.06, 0.001, 3.0),
            };
        Scaling {
            compute_fixed_s,
            compute_batch_s,
            sync_in_node_s: sync_in,
            sync_in_node_per_gpu_s: sync_in_per,
            sync_across_s: sync_x,
            sync_across_per_gpu_s: sync_x_per,
            overlap,
        }
    }

    /// The class of a trace task, drawn from a generator keyed by its name (so every policy
    /// and every bound sees the same class) [D]: tasks using under half a GPU are mostly
    /// small CNNs; whole-GPU tasks spread over the heavier classes.
    pub fn of_task(name: &str, gpu_milli: u16, seed: u64) -> WorkloadClass {
        let weights: [u32; 4] = if gpu_milli < 500 {
            [70, 20, 5, 5]
        } else {
            [10, 40, 20, 30]
        };
        let mut rng = keyed(seed, "workload-class", name);
        let mut draw = rng.random_range(0..weights.iter().sum::<u32>());
        for (class, weight) in WorkloadClass::ALL.into_iter().zip(weights) {
            if draw < weight {
                return class;
            }
            draw -= weight;
        }
        unreachable!("the draw is below the total weight")
    }

    /// Time and energy of one iteration in `config` on GPUs of `dvfs`.
    pub fn iteration(self, dvfs: &DvfsProfile, config: Configuration) -> IterationCost {
        let s = self.scaling();
        let n = f64::from(config.gpus);
        let clock_factor = dvfs.rho / config.frequency + (1.0 - dvfs.rho);
        let compute_s = (s.compute_fixed_s + s.compute_batch_s / n) * clock_factor;
        let sync_s = match (config.gpus, config.nodes) {
            (0 | 1, _) => 0.0,
            (_, 0 | 1) => s.sync_in_node_s + s.sync_in_node_per_gpu_s * (n - 2.0),
            _ => s.sync_across_s + s.sync_across_per_gpu_s * (n - 2.0),
        };
        let seconds = (compute_s.powf(s.overlap) + sync_s.powf(s.overlap)).powf(1.0 / s.overlap);
        let gpu_joules = n
            * (dvfs.computing_watts(config.frequency) * compute_s
                + dvfs.communicating_watts() * (seconds - compute_s));
        IterationCost {
            seconds,
            gpu_joules,
            host_joules: HOST_WATTS_PER_GPU * n * seconds,
        }
    }
}

/// Where and how fast a job runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Configuration {
    pub gpus: u8,
    /// Nodes the GPUs span (1 for every job of at most 8 GPUs placed on one node).
    pub nodes: u8,
    /// GPU clock as a fraction of `f_max`.
    pub frequency: f64,
}

impl Configuration {
    /// `gpus` on one node at full clock.
    pub fn full_clock(gpus: u8) -> Configuration {
        Configuration {
            gpus,
            nodes: 1,
            frequency: 1.0,
        }
    }
}

/// One iteration's time and energy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IterationCost {
    pub seconds: f64,
    pub gpu_joules: f64,
    pub host_joules: f64,
}

impl IterationCost {
    pub fn joules(&self) -> f64 {
        self.gpu_joules + self.host_joules
    }

    /// Average power while running, in watts.
    pub fn watts(&self) -> f64 {
        self.joules() / self.seconds
    }
}

/// How much a policy may change of a job (time-and-budgets §3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fidelity {
    /// L0: the clock only; GPU count and placement as in the trace.
    FrequencyOnly,
    /// L1: also the GPU count, in buddy sizes `{n/2, n, 2n} ∩ {1, 2, 4, 8}`; a task sharing
    /// one GPU stays on it, and one whose trace count is no buddy size (3, 6, 16 GPUs) keeps
    /// that count, as the arrival sweep places it.
    ElasticGpus,
}

/// A trace task as a training job: its class, GPU model and the iterations it must run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrainingJob {
    pub class: WorkloadClass,
    pub dvfs: DvfsProfile,
    /// GPUs the trace ran it on (1 for a GPU-sharing task).
    pub trace_gpus: u8,
    /// It shares one GPU with others (`gpu_milli < 1000`): it never changes GPU count.
    pub shares_a_gpu: bool,
    pub iterations: f64,
}

/// A GPU count elastic jobs may take: 1, 2, 4 or 8.
fn is_buddy_size(gpus: u8) -> bool {
    matches!(gpus, 1 | 2 | 4 | 8)
}

impl TrainingJob {
    /// The trace ran the task at full clock on `trace_gpus` GPUs of one node for
    /// `duration_s`, each used `gpu_milli` of 1000; that fixes its iteration count
    /// (time-and-budgets §3.3 step 2).
    pub fn from_trace(
        class: WorkloadClass,
        dvfs: DvfsProfile,
        trace_gpus: u8,
        gpu_milli: u16,
        duration_s: f64,
    ) -> TrainingJob {
        let trace_gpus = trace_gpus.max(1);
        let per_iteration = class.iteration(&dvfs, Configuration::full_clock(trace_gpus));
        TrainingJob {
            class,
            dvfs,
            trace_gpus,
            shares_a_gpu: gpu_milli < 1000,
            iterations: duration_s / per_iteration.seconds,
        }
    }

    /// The configurations a policy may choose at `fidelity`: GPU counts × clock levels.
    pub fn configurations(&self, fidelity: Fidelity) -> Vec<Configuration> {
        let counts: Vec<u8> = match fidelity {
            _ if self.shares_a_gpu => vec![1],
            Fidelity::FrequencyOnly => vec![self.trace_gpus],
            Fidelity::ElasticGpus if !is_buddy_size(self.trace_gpus) => vec![self.trace_gpus],
            Fidelity::ElasticGpus => [self.trace_gpus / 2, self.trace_gpus, self.trace_gpus * 2]
                .into_iter()
                .filter(|&n| is_buddy_size(n))
                .collect(),
        };
        let min_frequency = self.dvfs.min_frequency();
        counts
            .into_iter()
            .flat_map(|gpus| {
                FREQUENCY_LEVELS
                    .into_iter()
                    .filter(move |f| *f >= min_frequency)
                    .map(move |frequency| Configuration {
                        gpus,
                        nodes: 1,
                        frequency,
                    })
            })
            .collect()
    }

    /// Seconds to run `remaining` iterations in `config`.
    pub fn seconds(&self, config: Configuration, remaining: f64) -> f64 {
        remaining * self.class.iteration(&self.dvfs, config).seconds
    }

    /// Joules to run `remaining` iterations in `config`.
    pub fn joules(&self, config: Configuration, remaining: f64) -> f64 {
        remaining * self.class.iteration(&self.dvfs, config).joules()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v100() -> DvfsProfile {
        DvfsProfile::of(GpuModel::V100M32).unwrap()
    }

    /// time-and-budgets §3.2's V100 check: a fully busy GPU at 0.75 f_max takes ≈ 25 % longer
    /// and uses ≈ 30 % less GPU energy.
    #[test]
    fn v100_at_three_quarters_clock_is_slower_but_cheaper() {
        let class = WorkloadClass::ResNetLike;
        let at = |frequency| {
            class.iteration(
                &v100(),
                Configuration {
                    gpus: 1,
                    nodes: 1,
                    frequency,
                },
            )
        };
        let (full, slow) = (at(1.0), at(0.75));
        let time = slow.seconds / full.seconds - 1.0;
        let energy = slow.gpu_joules / full.gpu_joules - 1.0;
        assert!((time - 0.25).abs() < 1e-9, "time {time}");
        assert!((energy + 0.30).abs() < 0.05, "energy {energy}");
        assert!(slow.joules() < full.joules());
    }

    fn speedup(class: WorkloadClass, gpus: u8, nodes: u8) -> f64 {
        let at = |gpus, nodes| {
            class
                .iteration(
                    &DvfsProfile::of(GpuModel::A100).unwrap(),
                    Configuration {
                        gpus,
                        nodes,
                        frequency: 1.0,
                    },
                )
                .seconds
        };
        at(1, 1) / at(gpus, nodes)
    }

    /// §3.2's shape check against ElasticFlow's profiles: strongly sublinear speed-up,
    /// ≈ 5–6× at 8 GPUs for CNNs, ≈ 3× for BERT-like jobs; more GPUs never slow a job down
    /// within a node, and each doubling gains less than the one before.
    #[test]
    fn speedups_are_sublinear_with_the_published_shape() {
        let resnet8 = speedup(WorkloadClass::ResNetLike, 8, 1);
        assert!((5.0..=6.0).contains(&resnet8), "{resnet8}");
        assert!((3.3..=3.6).contains(&speedup(WorkloadClass::ResNetLike, 4, 1)));
        assert!((7.5..=9.0).contains(&speedup(WorkloadClass::ResNetLike, 16, 2)));
        let bert8 = speedup(WorkloadClass::BertLike, 8, 1);
        assert!((2.5..=3.5).contains(&bert8), "{bert8}");
        for class in WorkloadClass::ALL {
            let s: Vec<f64> = [1, 2, 4, 8].map(|n| speedup(class, n, 1)).to_vec();
            for w in s.windows(2) {
                assert!(w[1] >= w[0], "{class:?} {s:?}");
            }
            for (k, n) in [2.0, 4.0, 8.0].iter().enumerate() {
                assert!(s[k + 1] < *n, "{class:?} is sublinear: {s:?}");
            }
            assert!(
                s[2] / s[1] <= s[1] / s[0] && s[3] / s[2] <= s[2] / s[1],
                "{class:?} {s:?}"
            );
        }
    }

    /// A trace count that is no buddy size had no trace configuration at L1 (3 GPUs gave
    /// only 1; 16 only 8), and the replay's job table panicked on it.
    #[test]
    fn a_job_of_any_gpu_count_keeps_its_trace_configuration() {
        for gpus in [3u8, 5, 6, 7, 9, 16] {
            let job = TrainingJob::from_trace(WorkloadClass::VggLike, v100(), gpus, 1000, 600.0);
            for fidelity in [Fidelity::FrequencyOnly, Fidelity::ElasticGpus] {
                let configurations = job.configurations(fidelity);
                assert!(!configurations.is_empty());
                assert!(
                    configurations.iter().all(|c| c.gpus == gpus),
                    "{gpus} {fidelity:?}"
                );
                assert!(configurations.contains(&Configuration::full_clock(gpus)));
            }
        }
    }

    #[test]
    fn a_trace_job_takes_its_trace_duration_in_its_trace_configuration() {
        let job = TrainingJob::from_trace(WorkloadClass::VggLike, v100(), 4, 1000, 7200.0);
        assert!((job.seconds(Configuration::full_clock(4), job.iterations) - 7200.0).abs() < 1e-6);
        assert!(job.seconds(Configuration::full_clock(8), job.iterations) < 7200.0);
        let l0 = job.configurations(Fidelity::FrequencyOnly);
        assert_eq!(l0.len(), 5);
        assert!(l0.iter().all(|c| c.gpus == 4));
        let l1 = job.configurations(Fidelity::ElasticGpus);
        assert_eq!(
            l1.iter()
                .map(|c| c.gpus)
                .collect::<std::collections::BTreeSet<_>>(),
            [2, 4, 8].into()
        );
        let sharing = TrainingJob::from_trace(WorkloadClass::SmallCnn, v100(), 1, 300, 60.0);
        assert!(sharing
            .configurations(Fidelity::ElasticGpus)
            .iter()
            .all(|c| c.gpus == 1));
        let whole = TrainingJob::from_trace(WorkloadClass::SmallCnn, v100(), 1, 1000, 60.0);
        let counts: std::collections::BTreeSet<u8> = whole
            .configurations(Fidelity::ElasticGpus)
            .iter()
            .map(|c| c.gpus)
            .collect();
        assert_eq!(counts, [1, 2].into());
    }

    #[test]
    fn classes_are_keyed_by_task_name() {
        let classes: Vec<WorkloadClass> = (0..400)
            .map(|i| WorkloadClass::of_task(&format!("pod-{i}"), 1000, 42))
            .collect();
        for class in WorkloadClass::ALL {
            assert!(classes.contains(&class), "{class:?}");
        }
        assert_eq!(
            WorkloadClass::of_task("pod-7", 1000, 42),
            WorkloadClass::of_task("pod-7", 1000, 42)
        );
        let small = (0..400)
            .filter(|i| {
                WorkloadClass::of_task(&format!("pod-{i}"), 200, 42) == WorkloadClass::SmallCnn
            })
            .count();
        assert!(small > 200, "{small} of 400 light tasks are small CNNs");
    }
}
