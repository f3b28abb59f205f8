//! Attributes openb lacks, derived per task (spec time-and-budgets §2.6 [D]): actual GPU
//! utilisation, peak GPU memory, epochs and a deadline.
//!
//! Each task draws from its own generator, seeded by the run seed and its name, so every
//! policy (and every later tool) sees the same numbers whatever the task order.

use rand::{Rng, SeedableRng};
use rand_distr::{Beta, Distribution};

use gapbench_model::rng::SimRng;

use crate::timed_workload::{Qos, TimedTask};

/// Deadline factor σ per QoS class: deadline = arrival + σ · duration (spec §2.6).
/// `f64::INFINITY` means no deadline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeadlineFactors {
    pub latency_sensitive: f64,
    pub guaranteed: f64,
    pub burstable: f64,
    pub best_effort: f64,
}

impl Default for DeadlineFactors {
    /// σ(LS) = σ(Guaranteed) = 1 (no slowdown allowed), σ(Burstable) = 1.2, σ(BE) = ∞.
    fn default() -> Self {
        DeadlineFactors {
            latency_sensitive: 1.0,
            guaranteed: 1.0,
            burstable: 1.2,
            best_effort: f64::INFINITY,
        }
    }
}

impl DeadlineFactors {
    pub fn of(&self, qos: Qos) -> f64 {
        match qos {
            Qos::LatencySensitive => self.latency_sensitive,
            Qos::Guaranteed => self.guaranteed,
            Qos::Burstable => self.burstable,
            Qos::BestEffort => self.best_effort,
        }
    }
}

/// Derived attributes of one task.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TaskAttributes {
    /// Actual utilisation of each of its GPUs, per mille: `(m/1000)·X`, `X ~ Beta(2, 2.5)`,
    /// clipped to [0.05, 1]; 0 for CPU-only tasks.
    pub util_permille: u32,
    /// Peak memory on each of its GPUs as a share of the device's memory, per mille:
    /// `(m/1000)·Y`, `Y ~ U(0.4, 0.9)`. In MiB it is this share of the GPU model's memory
    /// (spec: `mem_gpu = (m/1000)·GPU_mem(M)·Y`), so the share does not depend on the model.
    pub gpu_memory_permille: u32,
    /// `clamp(floor(d / 1800 s), 1, 100)`.
    pub epochs: u32,
    pub epoch_s: f64,
    /// Absolute deadline in seconds; infinite for no deadline.
    pub deadline_s: f64,
}

/// 64-bit FNV-1a of the name, mixed with the seed: the key of a task's own generator.
fn task_key(seed: u64, name: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in name.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// A generator owned by one task of one run.
pub fn task_rng(seed: u64, name: &str) -> SimRng {
    SimRng::seed_from_u64(task_key(seed, name))
}

/// Derives the attributes of every task (same order as `tasks`); a task's measured
/// [`crate::timed_workload::GpuProfile`] replaces the utilisation and memory draws (each
/// task has its own generator, so this changes no other task's numbers).
pub fn derive_attributes(
    tasks: &[TimedTask],
    seed: u64,
    factors: &DeadlineFactors,
) -> Vec<TaskAttributes> {
    let beta = Beta::new(2.0, 2.5).expect("valid Beta parameters");
    tasks
        .iter()
        .map(|timed| {
            let mut rng = task_rng(seed, &timed.task.name);
            let x: f64 = beta.sample(&mut rng);
            let y: f64 = rng.random_range(0.4..0.9);
            let share = f64::from(timed.task.gpu_milli) / 1000.0;
            let (util_permille, gpu_memory_permille) = if timed.task.is_cpu_only() {
                (0, 0)
            } else if let Some(profile) = timed.profile {
                (profile.util_permille, profile.gpu_memory_permille)
            } else {
                (
                    ((share * x).clamp(0.05, 1.0) * 1000.0).round() as u32,
                    ((share * y) * 1000.0).round() as u32,
                )
            };
            let epochs = ((timed.duration_s / 1800.0).floor() as u32).clamp(1, 100);
            TaskAttributes {
                util_permille,
                gpu_memory_permille,
                epochs,
                epoch_s: timed.duration_s / f64::from(epochs),
                deadline_s: timed.arrival_s + factors.of(timed.qos) * timed.duration_s,
            }
        })
        .collect()
}
