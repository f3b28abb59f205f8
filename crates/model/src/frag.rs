//! The FGD fragmentation measure (Weng et al., ATC'23; reference-semantics §5.7).
//!
//! Fragmentation is measured against a *target workload*: the most popular task shapes of
//! the original trace ("typical pods"), each with its probability. For one typical task `t`
//! a node's free GPU milli is classified (Q1–Q4, XL, XR, NoAccess); only what `t` could
//! actually use (class Q3) is not a fragment. A node's fragment amount is the
//! probability-weighted sum over typical tasks.

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::gpu::{GpuModel, GpuModelSet};
use crate::task::Task;

/// Classes of free GPU with respect to one typical task, in the reference's index order.
pub const Q1: usize = 0;
pub const Q2: usize = 1;
pub const Q3: usize = 2;
pub const Q4: usize = 3;
pub const XL: usize = 4;
pub const XR: usize = 5;
pub const NO_ACCESS: usize = 6;
pub const CLASS_NAMES: [&str; 7] = ["q1", "q2", "q3", "q4", "xl", "xr", "no_access"];

/// One typical task shape and its probability in the target workload.
#[derive(Debug, Clone, PartialEq)]
pub struct TypicalPod {
    pub cpu_milli: u32,
    pub gpu_milli: u16,
    pub gpu_count: u8,
    pub gpu_models: GpuModelSet,
    /// Tasks of the original trace with this shape.
    pub count: usize,
    pub probability: f64,
}

/// The target workload: typical pods covering a popularity threshold of the trace.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TypicalPods {
    pub pods: Vec<TypicalPod>,
    /// Distinct shapes in the trace.
    pub distinct_shapes: usize,
    /// Fraction of the trace's tasks the taken shapes cover, in percent.
    pub coverage_pct: f64,
}

/// The reference's popularity threshold: take shapes until they cover 95 % of tasks.
pub const REFERENCE_POPULARITY_PCT: f64 = 95.0;

impl TypicalPods {
    /// Builds the target workload from the *original* trace (before tuning; order is
    /// irrelevant). Shapes are ranked by count, ties broken by key descending (CPU, GPU
    /// milli, GPU count, model spec byte-wise), and taken while the cumulative count is below
    /// `popularity_pct` of all tasks; probabilities are then renormalised over the taken
    /// shapes with the reference's two f64 divisions.
    pub fn from_tasks(tasks: &[Task], popularity_pct: f64) -> Self {
        type Key = (u32, u16, u8, String);
        let mut counts: HashMap<Key, (usize, GpuModelSet)> = HashMap::new();
        for task in tasks {
            let models = if task.is_cpu_only() {
                GpuModelSet::any()
            } else {
                task.gpu_models.clone()
            };
            let key = (
                task.scoring_cpu_milli(),
                task.gpu_milli,
                task.gpu_count,
                models.spec().to_string(),
            );
            counts.entry(key).or_insert((0, models)).0 += 1;
        }
        let mut ranked: Vec<(Key, usize, GpuModelSet)> =
            counts.into_iter().map(|(k, (c, m))| (k, c, m)).collect();
        ranked.sort_by(|a, b| match b.1.cmp(&a.1) {
            Ordering::Equal => b.0.cmp(&a.0),
            other => other,
        });
        let distinct_shapes = ranked.len();
        let total = tasks.len() as f64;
        let expected = popularity_pct * total / 100.0;
        let mut cumulative = 0.0;
        let mut pods = Vec::new();
        for ((cpu_milli, gpu_milli, gpu_count, _), count, gpu_models) in ranked {
            if cumulative >= expected {
                break;
            }
            cumulative += count as f64;
            pods.push(TypicalPod {
                cpu_milli,
                gpu_milli,
                gpu_count,
                gpu_models,
                count,
                probability: count as f64 / total,
            });
        }
        if pods.len() < distinct_shapes {
            for pod in &mut pods {
                pod.probability /= cumulative / total;
            }
        }
        let coverage_pct = if total > 0.0 {
            100.0 * cumulative / total
        } else {
            0.0
        };
        TypicalPods {
            pods,
            distinct_shapes,
            coverage_pct,
        }
    }

    /// The seven class accumulators of one node state (`GetNodePodFrag` summed over the
    /// target workload), accumulated in typical-pod order as the reference does.
    pub fn node_accumulators(
        &self,
        gpu_model: Option<GpuModel>,
        cpu_left_milli: u32,
        free_gpu_milli: &[u16],
    ) -> FragAccumulators {
        let free_total: u32 = free_gpu_milli.iter().map(|&l| u32::from(l)).sum();
        let free_total_f = f64::from(free_total);
        let mut acc = [0.0f64; 7];
        for pod in &self.pods {
            let p = pod.probability;
            let cpu_fits = cpu_left_milli >= pod.cpu_milli;
            if pod.gpu_milli == 0 {
                acc[if cpu_fits { XL } else { XR }] += p * free_total_f;
                continue;
            }
            if !pod.gpu_models.is_any() && !gpu_model.is_some_and(|m| pod.gpu_models.allows(m)) {
                acc[NO_ACCESS] += p * free_total_f;
                continue;
            }
            let fitting = free_gpu_milli
                .iter()
                .filter(|&&l| l >= pod.gpu_milli)
                .count();
            if fitting >= usize::from(pod.gpu_count) {
                if cpu_fits {
                    let too_small: u32 = free_gpu_milli
                        .iter()
                        .filter(|&&l| l < pod.gpu_milli)
                        .map(|&l| u32::from(l))
                        .sum();
                    acc[Q2] += p * f64::from(too_small);
                    acc[Q3] += p * f64::from(free_total - too_small);
                } else {
                    acc[Q4] += p * free_total_f;
                }
            } else {
                acc[if cpu_fits { Q2 } else { Q1 }] += p * free_total_f;
            }
        }
        FragAccumulators(acc)
    }

    /// A node's fragment amount F(n), in milli-GPU.
    pub fn node_fragment_milli(
        &self,
        gpu_model: Option<GpuModel>,
        cpu_left_milli: u32,
        free_gpu_milli: &[u16],
    ) -> f64 {
        self.node_accumulators(gpu_model, cpu_left_milli, free_gpu_milli)
            .fragment_milli()
    }
}

/// Free milli-GPU split into the seven classes Q1, Q2, Q3, Q4, XL, XR, NoAccess.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FragAccumulators(pub [f64; 7]);

impl FragAccumulators {
    /// Everything but Q3, summed in index order 0, 1, 3, 4, 5, 6 (the order matters for the
    /// truncated FGD score).
    pub fn fragment_milli(&self) -> f64 {
        let a = &self.0;
        a[Q1] + a[Q2] + a[Q4] + a[XL] + a[XR] + a[NO_ACCESS]
    }

    /// All classes: approximately the node's free milli-GPU.
    pub fn total_milli(&self) -> f64 {
        self.0.iter().sum()
    }

    /// Q1 + Q2 + Q4, the reference's "Q124" fragment.
    pub fn q124_milli(&self) -> f64 {
        self.0[Q1] + self.0[Q2] + self.0[Q4]
    }
}
