//! What a node's state is worth beyond its tasks' profits, by CPU level and device.
//!
//! Pricing maximises `Φ(c) = Σ_s π_s·n_s + V(c)` over one node's configurations, with `V`
//! the node's own part of the objective, negated and relative to the empty node where it
//! helps. Every objective gapbench prices has the same shape: `V` depends on the node's
//! CPU only through a *level* (how much CPU is used at most) and on its devices one at a
//! time, but for the fully free ones counted together:
//!
//! `V(c) = constant_l + Σ_d g_l(f_d) + multi_l(E)`,
//!
//! `l` the level of the CPU `c` uses, `f_d` each device's free milli, `E` the fully free
//! devices. Levels are sorted by the CPU they allow, ascending, and a level allowing less
//! is worth at least as much, pointwise: so a state is worth its own (first admissible)
//! level's value, and any admissible level prices it no higher — the search relies on it.
//!
//! - *Fragmentation* (spec §5.7, `model::frag`): `F(n) = P·L_n − V(n)` with
//!   `V(n) = Σ_t p_t·Q3_t(n)`, the free milli each typical pod could use:
//!   `Q3_t = [cpu_left ≥ cpu_t]·[#{d: f_d ≥ m_t} ≥ k_t]·Σ_{d: f_d ≥ m_t} f_d` for the GPU
//!   pods the node's model admits. A single-GPU pod's part is `Σ_d f_d·[f_d ≥ m_t]`, device
//!   by device; a multi-GPU pod asks whole devices (`m_t = 1000`, the loader's rule) and
//!   counts `1000·E` when `E ≥ k_t`. The level is the *CPU bucket*: the pods whose CPU still
//!   fits (`cpu_left ≥ c_b`). So `g_b(f) = f·W_b(f)`,
//!   `W_b(f) = Σ {p_t : single-GPU, cpu_t ≤ c_b, m_t ≤ f}`, and
//!   `multi_b(E) = 1000·E·Σ {p_t : multi-GPU, cpu_t ≤ c_b, k_t ≤ E}`.
//! - *Power* (spec §6, `model::power`): `V = P(empty) − P(n)`. The level is the number of
//!   active CPU sockets `a` (CPU used at most `C − 2000·max(0, cores − a·cores per
//!   socket)`), costing `a·(full − idle)` socket watts; a device that is not fully free
//!   costs `full − idle` GPU watts.
//! - *Allocation*: `V = 0` (what a task allocates is in its profit).
//!
//! Weighted sums of these (the power–fragmentation front prices `frag + μ·power`) keep the
//! shape: the levels are merged.

use gapbench_model::{GpuModel, NodeType, PowerModel, TypicalPods, MILLI_GPU_PER_GPU};

const MILLI: usize = MILLI_GPU_PER_GPU as usize;

/// One CPU level (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Level {
    /// The most CPU a configuration at this level uses.
    pub cpu_used_at_most: u64,
    pub constant: f64,
    /// CPU sockets at work at this level (power; 0 for the other objectives).
    pub sockets: u32,
    /// `g_l(f)` for every free milli `f` in `0..=1000`.
    device: Vec<f64>,
    /// `multi_l(E)` for `E` in `0..=devices`.
    multi: Vec<f64>,
}

/// The value table of one node type (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NodeValue {
    pub devices: u32,
    /// Levels, CPU allowed ascending.
    pub levels: Vec<Level>,
    /// A device at work costs a fixed amount whatever its load (power): the search splits
    /// by the number of devices at work (the pricing search's `Slots`).
    pub busy_is_fixed: bool,
}

impl NodeValue {
    /// Fragmentation's credits on `node_type` against `typical`.
    pub fn fragmentation(node_type: &NodeType, typical: &TypicalPods) -> NodeValue {
        let devices = u32::from(node_type.gpu_count);
        let cpu = u64::from(node_type.cpu_milli);
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
        let mut thresholds: Vec<u32> = credited.iter().map(|p| p.0).chain([0]).collect();
        thresholds.sort_unstable();
        thresholds.dedup();
        // The highest bucket allows the least CPU: levels ascending in CPU allowed.
        let levels = thresholds
            .iter()
            .rev()
            .map(|&c| {
                let mut weight = vec![0.0; MILLI + 1];
                let mut by_count = vec![0.0; devices as usize + 1];
                for &(pod_cpu, milli, count, p) in &credited {
                    if pod_cpu > c {
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
                let device = weight
                    .iter()
                    .enumerate()
                    .map(|(f, w)| {
                        cumulative += w;
                        f as f64 * cumulative
                    })
                    .collect();
                let mut cumulative = 0.0;
                let multi = by_count
                    .iter()
                    .enumerate()
                    .map(|(e, w)| {
                        cumulative += w;
                        f64::from(MILLI_GPU_PER_GPU) * e as f64 * cumulative
                    })
                    .collect();
                Level {
                    cpu_used_at_most: cpu - u64::from(c),
                    constant: 0.0,
                    sockets: 0,
                    device,
                    multi,
                }
            })
            .collect();
        NodeValue {
            devices,
            levels,
            busy_is_fixed: false,
        }
    }

    /// Power saved against the empty node (`P(empty) − P(n)`, ≤ 0) on a node of `cpu_milli`
    /// with power model `power`.
    pub fn power(power: &PowerModel, cpu_milli: u32, devices: u32) -> NodeValue {
        let cpu = u64::from(cpu_milli);
        let empty_cpu = power.cpu_watts(cpu_milli);
        let busy_device = power.gpu.map_or(0.0, |gpu| {
            f64::from(gpu.full_watts) - f64::from(gpu.idle_watts)
        });
        let mut device = vec![-busy_device; MILLI + 1];
        device[MILLI] = 0.0;
        let mut levels: Vec<Level> = Vec::new();
        for active in 0..=power.sockets {
            let idle_cores = power
                .real_cores
                .saturating_sub(active * power.socket.cores_per_socket);
            let Some(cpu_used_at_most) = cpu.checked_sub(2000 * u64::from(idle_cores)) else {
                continue;
            };
            let cpu_left = u32::try_from(cpu - cpu_used_at_most).unwrap_or(u32::MAX);
            let constant = (empty_cpu - power.cpu_watts(cpu_left)) as f64;
            if levels
                .last()
                .is_some_and(|l| l.cpu_used_at_most == cpu_used_at_most)
            {
                continue;
            }
            levels.push(Level {
                cpu_used_at_most,
                constant,
                sockets: active,
                device: device.clone(),
                multi: vec![0.0; devices as usize + 1],
            });
        }
        NodeValue {
            devices,
            levels,
            busy_is_fixed: true,
        }
    }

    /// Nothing beyond the profits: one level, the whole node (allocation).
    pub fn nothing(cpu_milli: u32, devices: u32) -> NodeValue {
        NodeValue {
            devices,
            levels: vec![Level {
                cpu_used_at_most: u64::from(cpu_milli),
                constant: 0.0,
                sockets: 0,
                device: vec![0.0; MILLI + 1],
                multi: vec![0.0; devices as usize + 1],
            }],
            busy_is_fixed: false,
        }
    }

    /// `self + weight·other`, levels merged (both of one node type).
    pub fn plus(&self, weight: f64, other: &NodeValue) -> NodeValue {
        let mut caps: Vec<u64> = self
            .levels
            .iter()
            .chain(&other.levels)
            .map(|l| l.cpu_used_at_most)
            .collect();
        caps.sort_unstable();
        caps.dedup();
        let levels = caps
            .into_iter()
            .filter_map(|cap| {
                let a = &self.levels[self.level_at(cap)?];
                let b = &other.levels[other.level_at(cap)?];
                Some(Level {
                    cpu_used_at_most: cap,
                    constant: a.constant + weight * b.constant,
                    sockets: a.sockets + b.sockets,
                    device: a
                        .device
                        .iter()
                        .zip(&b.device)
                        .map(|(x, y)| x + weight * y)
                        .collect(),
                    multi: a
                        .multi
                        .iter()
                        .zip(&b.multi)
                        .map(|(x, y)| x + weight * y)
                        .collect(),
                })
            })
            .collect();
        NodeValue {
            devices: self.devices,
            levels,
            busy_is_fixed: self.busy_is_fixed || other.busy_is_fixed,
        }
    }

    /// `V + dual·sockets`: the value a branching row on the sockets at work adds (its
    /// dual `dual`, see `cg::branch`). A positive dual may make a level worth more than
    /// one allowing less; a configuration priced at a level above its own is then
    /// overvalued, which only lowers the pricing's bound (still valid).
    pub fn with_socket_dual(&self, dual: f64) -> NodeValue {
        let mut value = self.clone();
        for level in &mut value.levels {
            level.constant += dual * f64::from(level.sockets);
        }
        value
    }

    /// The level a configuration using `cpu_used` CPU is priced at: the first that allows
    /// it (`None` beyond the node).
    pub fn level_at(&self, cpu_used: u64) -> Option<usize> {
        let l = self
            .levels
            .partition_point(|l| l.cpu_used_at_most < cpu_used);
        (l < self.levels.len()).then_some(l)
    }

    /// Every level's device value `g_l(f)` is non-decreasing in the free milli `f` (a
    /// bound may then credit a device more free milli than it has).
    pub fn devices_non_decreasing(&self) -> bool {
        self.levels
            .iter()
            .all(|l| l.device.windows(2).all(|w| w[0] <= w[1]))
    }

    /// Levels `a` and `b` value every device alike (`g` and `multi`): power's levels,
    /// which differ only in their sockets.
    pub fn same_devices(&self, a: usize, b: usize) -> bool {
        let (a, b) = (&self.levels[a], &self.levels[b]);
        a.device == b.device && a.multi == b.multi
    }

    pub fn device(&self, level: usize, free_milli: u32) -> f64 {
        self.levels[level].device[free_milli as usize]
    }

    pub fn multi(&self, level: usize, fully_free: u32) -> f64 {
        self.levels[level].multi[fully_free as usize]
    }

    /// What a free device is worth at most in `level`: `g_l(1000)` and its share of the
    /// multi-GPU credit at its largest.
    pub fn free_device_at_most(&self, level: usize) -> f64 {
        let l = &self.levels[level];
        let multi = (1..l.multi.len())
            .map(|e| l.multi[e] / e as f64)
            .fold(0.0, f64::max);
        l.device[MILLI] + multi
    }

    /// `V` of a state using `cpu_used` CPU with devices' free milli `free`.
    pub fn value(&self, cpu_used: u64, free: impl IntoIterator<Item = u32>) -> f64 {
        let Some(level) = self.level_at(cpu_used) else {
            return f64::NEG_INFINITY;
        };
        let mut fully_free = 0;
        let mut total = self.levels[level].constant;
        for f in free {
            total += self.device(level, f);
            fully_free += u32::from(f == MILLI_GPU_PER_GPU);
        }
        total + self.multi(level, fully_free)
    }

    /// `V` of the empty node.
    pub fn empty(&self) -> f64 {
        self.value(
            0,
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
    use gapbench_model::{Cluster, CpuPowerProfile, Task};
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

    fn free_milli() -> impl Strategy<Value = Vec<u32>> {
        prop::collection::vec(
            prop::sample::select(vec![0u32, 90, 160, 229, 230, 500, 650, 810, 999, 1000]),
            1..=8,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// Fragmentation: `P·L − V` is the model crate's own fragment of the node.
        #[test]
        fn fragmentation_values_reproduce_the_fragment_measure(
            raw in prop::collection::vec(pod(), 1..=12),
            free in free_milli(),
            cpu_used in 0u64..=40000,
        ) {
            let typical = typical_of(&raw);
            let node_type = NodeType {
                gpu_model: Some(GpuModel::G2),
                gpu_count: free.len() as u8,
                cpu_milli: 40000,
                memory_mib: 1 << 20,
            };
            let value = NodeValue::fragmentation(&node_type, &typical);
            let free_milli: Vec<u16> = free.iter().map(|&f| f as u16).collect();
            let cpu_left = 40000 - cpu_used as u32;
            let fragment = typical.node_fragment_milli(node_type.gpu_model, cpu_left, &free_milli);
            let total: f64 = typical.pods.iter().map(|p| p.probability).sum();
            let left: u32 = free.iter().sum();
            let from_value = total * f64::from(left) - value.value(cpu_used, free.iter().copied());
            prop_assert!((fragment - from_value).abs() < 1e-6, "{fragment} vs {from_value}");
        }

        /// Power: `P(empty) − V` is the model crate's own power of the node.
        #[test]
        fn power_values_reproduce_the_power_model(
            free in free_milli(),
            vcpus in prop::sample::select(vec![8u32, 16, 64, 96, 104, 128]),
            used_share in 0.0f64..=1.0,
            model in prop::sample::select(vec![GpuModel::G2, GpuModel::T4, GpuModel::V100M32]),
            by_model in any::<bool>(),
        ) {
            let node_type = NodeType {
                gpu_model: Some(model),
                gpu_count: free.len() as u8,
                cpu_milli: vcpus * 1000,
                memory_mib: 1 << 20,
            };
            let profile = if by_model { CpuPowerProfile::ByGpuModel } else { CpuPowerProfile::Reference };
            let cluster = Cluster::new([("n".to_string(), node_type)], profile).unwrap();
            let power = cluster.power_model(0);
            let value = NodeValue::power(power, node_type.cpu_milli, free.len() as u32);
            let cpu_used = (used_share * f64::from(node_type.cpu_milli)) as u64;
            let free_milli: Vec<u16> = free.iter().map(|&f| f as u16).collect();
            let watts = |cpu_left: u32, free: &[u16]| power.node_power(cpu_left, free).total_watts() as f64;
            let empty = watts(node_type.cpu_milli, &vec![1000; free.len()]);
            let here = watts(node_type.cpu_milli - cpu_used as u32, &free_milli);
            let from_value = empty - value.value(cpu_used, free.iter().copied());
            prop_assert!((here - from_value).abs() < 1e-9, "{here} vs {from_value}");
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
        let value = NodeValue::fragmentation(&node_type, &typical);
        let caps: Vec<u64> = value.levels.iter().map(|l| l.cpu_used_at_most).collect();
        assert_eq!(caps, vec![8000, 16000]);
        assert_eq!(value.value(12000, [500]), 0.0);
        assert!((value.value(8000, [500]) - 500.0).abs() < 1e-9);
        assert_eq!(value.value(8000, [499]), 0.0);
    }

    #[test]
    fn a_weighted_sum_prices_each_part_at_its_own_level() {
        let typical = typical_of(&[(8000, 1, 500)]);
        let node_type = NodeType {
            gpu_model: Some(GpuModel::G2),
            gpu_count: 1,
            cpu_milli: 64000,
            memory_mib: 1 << 16,
        };
        let cluster =
            Cluster::new([("n".to_string(), node_type)], CpuPowerProfile::Reference).unwrap();
        let fragment = NodeValue::fragmentation(&node_type, &typical);
        let power = NodeValue::power(cluster.power_model(0), node_type.cpu_milli, 1);
        let both = fragment.plus(0.5, &power);
        for cpu_used in [0, 8000, 33000, 56000, 60000, 64000] {
            for free in [0, 499, 500, 1000] {
                let expected =
                    fragment.value(cpu_used, [free]) + 0.5 * power.value(cpu_used, [free]);
                assert!((both.value(cpu_used, [free]) - expected).abs() < 1e-9);
            }
        }
    }
}
