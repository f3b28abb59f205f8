//! What free GPU milli keeps out of a node's fragment, on one node type.
//!
//! FGD's fragment (spec §5.7, `model::frag`) is `F(n) = P·L_n − V(n)`, with `P` the typical
//! pods' total probability, `L_n` the node's free GPU milli and `V(n) = Σ_t p_t·Q3_t(n)` the
//! free milli each typical pod could use:
//! `Q3_t(n) = [cpu_left ≥ cpu_t]·[#{d: f_d ≥ m_t} ≥ k_t]·Σ_{d: f_d ≥ m_t} f_d` for the GPU
//! pods the node's model admits (0 for the others). Only two things about a node matter:
//! - its *CPU bucket* `b`: the typical pods whose CPU still fits (`cpu_left ≥ c_b`, the
//!   pods' CPU requests sorted);
//! - each device's free milli `f_d`, through the pods' GPU thresholds.
//!
//! A single-GPU pod fits when one device has `f_d ≥ m_t`, and then counts exactly the
//! devices with `f_d ≥ m_t`; so its part is `Σ_d f_d·[f_d ≥ m_t]`, device by device. A
//! multi-GPU pod asks whole devices (`m_t = 1000`, the loader's rule): with `E` fully free
//! devices it counts `1000·E` when `E ≥ k_t`. Hence, per bucket `b`,
//!
//! `V(n) = Σ_d f_d·W_b(f_d) + 1000·E·M_b(E)`,
//!
//! `W_b(f) = Σ {p_t : single-GPU, cpu_t ≤ c_b, m_t ≤ f}` and
//! `M_b(E) = Σ {p_t : multi-GPU, cpu_t ≤ c_b, k_t ≤ E}`: separable over devices but for `E`.

use gapbench_model::{GpuModel, NodeType, TypicalPods, MILLI_GPU_PER_GPU};

const MILLI: usize = MILLI_GPU_PER_GPU as usize;

/// The credit tables of one node type (see the module documentation).
#[derive(Debug, Clone)]
pub(crate) struct Credits {
    pub devices: u32,
    /// CPU thresholds `c_b`, ascending, the first 0: bucket `b` is `cpu_left ≥ c_b`.
    pub cpu_thresholds: Vec<u32>,
    /// Per bucket, `g_b(f) = f·W_b(f)` for every free milli `f` in `0..=1000`.
    device: Vec<Vec<f64>>,
    /// Per bucket, `M_b(E)` for `E` in `0..=devices`.
    multi: Vec<Vec<f64>>,
}

impl Credits {
    /// The tables of `node_type` against `typical`.
    pub fn of(node_type: &NodeType, typical: &TypicalPods) -> Credits {
        let devices = u32::from(node_type.gpu_count);
        // The pods that can ever be credited on this type, as (cpu, milli, count, p).
        let credited: Vec<(u32, u32, u32, f64)> = match node_type.gpu_model {
            Some(model) if devices > 0 => typical
                .pods
                .iter()
                .filter(|pod| pod.gpu_milli > 0 && admits(&pod.gpu_models, model))
                .filter(|pod| {
                    u32::from(pod.gpu_count) <= devices && pod.cpu_milli <= node_type.cpu_milli
                })
                .map(|pod| {
                    (
                        pod.cpu_milli,
                        u32::from(pod.gpu_milli),
                        u32::from(pod.gpu_count),
                        pod.probability,
                    )
                })
                .collect(),
            _ => Vec::new(),
        };
        let mut cpu_thresholds: Vec<u32> = credited.iter().map(|p| p.0).chain([0]).collect();
        cpu_thresholds.sort_unstable();
        cpu_thresholds.dedup();
        let mut device = Vec::with_capacity(cpu_thresholds.len());
        let mut multi = Vec::with_capacity(cpu_thresholds.len());
        for &c in &cpu_thresholds {
            let mut weight = vec![0.0; MILLI + 1];
            let mut by_count = vec![0.0; devices as usize + 1];
            for &(cpu, milli, count, p) in &credited {
                if cpu > c {
                    continue;
                }
                if count == 1 {
                    weight[milli as usize] += p;
                } else {
                    // A multi-GPU pod needs whole free devices (whole-GPU requests only).
                    by_count[count as usize] += p;
                }
            }
            let mut cumulative = 0.0;
            let table: Vec<f64> = weight
                .iter()
                .enumerate()
                .map(|(f, w)| {
                    cumulative += w;
                    f as f64 * cumulative
                })
                .collect();
            let mut cumulative = 0.0;
            let counts: Vec<f64> = by_count
                .iter()
                .map(|w| {
                    cumulative += w;
                    cumulative
                })
                .collect();
            device.push(table);
            multi.push(counts);
        }
        Credits {
            devices,
            cpu_thresholds,
            device,
            multi,
        }
    }

    pub fn buckets(&self) -> usize {
        self.cpu_thresholds.len()
    }

    /// The bucket of a node with `cpu_left_milli` free: the last threshold it reaches.
    pub fn bucket(&self, cpu_left_milli: u64) -> usize {
        self.cpu_thresholds
            .partition_point(|&c| u64::from(c) <= cpu_left_milli)
            .saturating_sub(1)
    }

    /// `g_b(f) = f·W_b(f)`: what one device with `free_milli` free keeps out of the
    /// fragment (multi-GPU pods aside).
    pub fn device(&self, bucket: usize, free_milli: u32) -> f64 {
        self.device[bucket][free_milli as usize]
    }

    /// `1000·E·M_b(E)`: what `fully_free` whole free devices keep out for multi-GPU pods.
    pub fn multi(&self, bucket: usize, fully_free: u32) -> f64 {
        f64::from(MILLI_GPU_PER_GPU)
            * f64::from(fully_free)
            * self.multi[bucket][fully_free as usize]
    }

    /// The most [`Self::multi`] can add per fully free device in `bucket`.
    pub fn multi_per_device_at_most(&self, bucket: usize) -> f64 {
        f64::from(MILLI_GPU_PER_GPU) * self.multi[bucket].last().copied().unwrap_or(0.0)
    }

    /// `V(n)` of a node with `cpu_left_milli` and devices' free milli `free`.
    pub fn node(&self, cpu_left_milli: u64, free: impl IntoIterator<Item = u32>) -> f64 {
        let bucket = self.bucket(cpu_left_milli);
        let mut fully_free = 0;
        let mut total = 0.0;
        for f in free {
            total += self.device(bucket, f);
            fully_free += u32::from(f == MILLI_GPU_PER_GPU);
        }
        total + self.multi(bucket, fully_free)
    }

    /// `V` of the empty node of a type with `cpu_milli`.
    pub fn empty(&self, cpu_milli: u32) -> f64 {
        self.node(
            u64::from(cpu_milli),
            std::iter::repeat_n(MILLI_GPU_PER_GPU, self.devices as usize),
        )
    }
}

/// Whether a typical pod's model list admits `model` (an empty list admits every model).
fn admits(models: &gapbench_model::GpuModelSet, model: GpuModel) -> bool {
    models.is_any() || models.allows(model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gapbench_model::Task;
    use proptest::prelude::*;

    fn typical_of(raw: &[(u32, u8, u16)]) -> TypicalPods {
        let tasks: Vec<Task> = raw
            .iter()
            .enumerate()
            .map(|(i, &(cpu, count, milli))| Task::new(format!("t{i}"), cpu, 1024, count, milli))
            .collect();
        TypicalPods::from_tasks(&tasks, 95.0)
    }

    fn pod() -> impl Strategy<Value = (u32, u8, u16)> {
        let gpus = prop_oneof![
            1 => Just((0u8, 0u16)),
            4 => prop::sample::select(vec![160u16, 230, 320, 470, 650, 810]).prop_map(|m| (1u8, m)),
            2 => Just((1u8, 1000u16)),
            1 => prop::sample::select(vec![2u8, 4]).prop_map(|k| (k, 1000u16)),
        ];
        (
            prop::sample::select(vec![2000u32, 4000, 8000, 12000, 32000]),
            gpus,
        )
            .prop_map(|(cpu, (count, milli))| (cpu, count, milli))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// `P·L − V` is the model crate's own fragment of the node, for any state.
        #[test]
        fn credits_reproduce_the_fragment_measure(
            raw in prop::collection::vec(pod(), 1..=12),
            free in prop::collection::vec(prop::sample::select(vec![0u32, 90, 160, 229, 230, 500, 650, 810, 999, 1000]), 1..=8),
            cpu_left in 0u64..=40000,
        ) {
            let typical = typical_of(&raw);
            let node_type = NodeType {
                gpu_model: Some(GpuModel::G2),
                gpu_count: free.len() as u8,
                cpu_milli: 40000,
                memory_mib: 1 << 20,
            };
            let credits = Credits::of(&node_type, &typical);
            let free_milli: Vec<u16> = free.iter().map(|&f| f as u16).collect();
            let fragment = typical.node_fragment_milli(node_type.gpu_model, cpu_left as u32, &free_milli);
            let total: f64 = typical.pods.iter().map(|p| p.probability).sum();
            let left: u32 = free.iter().sum();
            let from_credits = total * f64::from(left) - credits.node(cpu_left, free.iter().copied());
            prop_assert!((fragment - from_credits).abs() < 1e-6, "{fragment} vs {from_credits}");
        }
    }

    #[test]
    fn a_pod_without_cpu_room_credits_nothing() {
        // One typical pod: 8 vCPU, half a GPU. With 4 vCPU left a half-free device is all
        // fragment; with 8 left, none of it is.
        let typical = typical_of(&[(8000, 1, 500)]);
        let node_type = NodeType {
            gpu_model: Some(GpuModel::G2),
            gpu_count: 1,
            cpu_milli: 16000,
            memory_mib: 1 << 16,
        };
        let credits = Credits::of(&node_type, &typical);
        assert_eq!(credits.cpu_thresholds, vec![0, 8000]);
        assert_eq!(credits.node(4000, [500]), 0.0);
        assert!((credits.node(8000, [500]) - 500.0).abs() < 1e-9);
        assert_eq!(credits.node(8000, [499]), 0.0);
    }
}
