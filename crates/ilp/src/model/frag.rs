//! The fragmentation piece of the assignment model: the FGD measure against the typical
//! pods, linearised per node.

use std::collections::BTreeMap;

use gapbench_model::{NodeId, NodeType, TypicalPods, MILLI_GPU_PER_GPU};
use good_lp::{Expression, Variable};

use super::*;

impl PlacementModel<'_> {
    /// Adds the FGD fragmentation measure (spec §5.7), linearised exactly, for a model that
    /// places exactly its task set.
    ///
    /// With `L_n` the free GPU milli of node `n` and `P = Σ_t p_t`, every class but Q3
    /// counts the whole `p_t·L_n`, and Q3 keeps `p_t·Σ_{d: left_d ≥ m_t} left_d` out of the
    /// fragment, so `F(n) = P·L_n − Σ_t p_t·Q3_t(n)` with
    /// `Q3_t(n) = [cpu_left ≥ cpu_t ∧ #{d: left_d ≥ m_t} ≥ k_t]·Σ_{d: left_d ≥ m_t} left_d`
    /// for GPU typical pods the node's model admits (0 otherwise). `Σ_n L_n` is fixed by the
    /// task set, so only `Q3` is variable. Linearisation (the objective maximises `v`):
    /// - `g[n,d,m] ∈ {0,1}`, `used[n,d] + m·g ≤ 1000` (g = 1 only if `left_d ≥ m`);
    ///   `g[n,d,m] ≤ g[n,d+1,m]` (devices are sorted by load);
    /// - `q[n,d,m] ∈ [0,1000]`, `q ≤ 1000 − used[n,d]`, `q ≤ 1000·g[n,d,m]`;
    /// - `h[n,t] ∈ {0,1}`, `Σ cpu·x + cpu_t·h ≤ cpu_cap`, `h ≤ g[n,G−k_t,m_t]` (the k-th
    ///   freest device fits, so k devices do);
    /// - `v[n,t] ∈ [0, 1000·G]`, `v ≤ Σ_d q[n,d,m_t]`, `v ≤ 1000·G·h[n,t]`;
    ///
    /// and `Σ_n F(n) = P·Σ_n L_n − Σ_{n,t} p_t·v[n,t]`. Typical pods equal in
    /// (cpu, milli, count) on a node are merged, their probabilities added.
    pub fn add_frag(&mut self, typical: &TypicalPods) -> FragTerms {
        let total_probability: f64 = typical.pods.iter().map(|p| p.probability).sum();
        let capacity_milli = self.cluster.gpu_capacity_milli() as f64;
        let placed_milli: f64 = self
            .shapes
            .shapes
            .iter()
            .map(|s| f64::from(s.total_gpu_milli()) * s.count() as f64)
            .sum();
        let mut q3_weighted = Expression::default();
        let mut nodes = Vec::with_capacity(self.nodes.len());
        for n in 0..self.nodes.len() {
            let node_type = *self.cluster.node_type(n as NodeId);
            let devices = usize::from(node_type.gpu_count);
            let merged = merged_pods(typical, &node_type);
            let mut thresholds: Vec<u16> = merged.keys().map(|k| k.1).collect();
            thresholds.sort_unstable();
            thresholds.dedup();
            let mut fits = Vec::with_capacity(thresholds.len());
            let mut free_fitting = Vec::with_capacity(thresholds.len());
            for &m in &thresholds {
                let (g, q) = self.add_threshold(n, devices, m);
                fits.push(g);
                free_fitting.push(q);
            }
            self.tighten_fits(n, &thresholds, &fits);
            let mut pods = Vec::with_capacity(merged.len());
            for (&(cpu_milli, gpu_milli, gpu_count), &probability) in &merged {
                let k = thresholds
                    .binary_search(&gpu_milli)
                    .expect("threshold listed");
                let (h, v) = self.add_pod(
                    n,
                    &node_type,
                    (cpu_milli, gpu_count),
                    &fits[k],
                    &free_fitting[k],
                );
                q3_weighted.add_mul(probability, v);
                pods.push(FragPodVars {
                    cpu_milli,
                    gpu_count,
                    threshold: k,
                    h,
                    v,
                });
            }
            nodes.push(NodeFragVars {
                thresholds,
                fits,
                free_fitting,
                pods,
            });
        }
        FragTerms {
            nodes,
            q3_weighted,
            constant_milli: total_probability * (capacity_milli - placed_milli),
        }
    }

    /// Per device `d` of node `n`, for a typical pod's GPU milli `m`: `g[d]` (binary, the
    /// device fits `m` more: `used + m·g ≤ 1000`, devices ordered `g[d−1] ≤ g[d]`) and
    /// `q[d]` (the free milli it counts, at most its free milli and 0 unless `g[d]`).
    fn add_threshold(
        &mut self,
        n: usize,
        devices: usize,
        m: u16,
    ) -> (Vec<Variable>, Vec<Variable>) {
        let g: Vec<Variable> = (0..devices).map(|_| self.cols.binary()).collect();
        let q: Vec<Variable> = (0..devices)
            .map(|_| self.cols.continuous(0.0, MILLI))
            .collect();
        for d in 0..devices {
            let used = used_gpu_milli(&self.nodes[n], self.shapes, d);
            self.rows
                .push((used.clone() + f64::from(m) * g[d]).leq(MILLI));
            self.rows.push((q[d] + used).leq(MILLI));
            self.rows.push((q[d] - MILLI * g[d]).leq(0.0));
        }
        for d in 1..devices {
            self.rows.push((g[d - 1] - g[d]).leq(0.0));
        }
        (g, q)
    }

    /// A merged typical pod `(cpu_milli, gpu_count)` on node `n`, given its threshold's
    /// `fits` and `free_fitting`: `h` (binary, the pod fits: CPU left and `gpu_count`
    /// devices fitting) and `v` (the free milli it cannot use, at most the fitting devices'
    /// and 0 unless `h`).
    fn add_pod(
        &mut self,
        n: usize,
        node_type: &NodeType,
        (cpu_milli, gpu_count): (u32, u8),
        fits: &[Variable],
        free_fitting: &[Variable],
    ) -> (Variable, Variable) {
        let devices = usize::from(node_type.gpu_count);
        let h = self.cols.binary();
        let v = self.cols.continuous(0.0, MILLI * devices as f64);
        let cpu = self.cpu_used_milli(n);
        self.rows
            .push((cpu + f64::from(cpu_milli) * h).leq(f64::from(node_type.cpu_milli)));
        self.rows
            .push((h - fits[devices - usize::from(gpu_count)]).leq(0.0));
        let reachable: Expression = free_fitting.iter().copied().sum();
        self.rows.push((v - reachable).leq(0.0));
        self.rows.push((v - MILLI * devices as f64 * h).leq(0.0));
        (h, v)
    }

    /// Valid tightenings of the threshold indicators `g[k][d]` of one node (thresholds
    /// ascending), each implied by `g[k][d] = [left_d ≥ m_k]`:
    /// - nested: `g[k][d] ≤ g[k−1][d]`;
    /// - staircase: `used_d + Σ_k (m_k − m_{k−1})·g[k][d] ≤ 1000`;
    /// - a device left with `m_k` free holds no task larger than `1000 − m_k`, nor a whole
    ///   task: `z[d][j] ≤ U_j·(1 − g[k][d])` for the smallest such `k`, `w_d + g[0][d] ≤ 1`;
    /// - dual feasible weights: `g[k][d] + w_d + Σ_j f_ε(m_j)·z[d][j] ≤ 1` where what fits
    ///   beside `m_k` free weighs nothing.
    // Devices index the inner dimension of `fits[k][d]`: a range loop reads best.
    #[allow(clippy::needless_range_loop)]
    fn tighten_fits(&mut self, n: usize, thresholds: &[u16], fits: &[Vec<Variable>]) {
        let devices = self.nodes[n].whole.len();
        if thresholds.is_empty() {
            return;
        }
        for d in 0..devices {
            let mut staircase = used_gpu_milli(&self.nodes[n], self.shapes, d);
            let mut previous = 0.0;
            for (k, &m) in thresholds.iter().enumerate() {
                staircase.add_mul(f64::from(m) - previous, fits[k][d]);
                previous = f64::from(m);
                if k > 0 {
                    self.rows.push((fits[k][d] - fits[k - 1][d]).leq(0.0));
                }
            }
            self.rows.push(staircase.leq(MILLI));
            // A device left with more than 500 free holds only tasks of at most 500, whose
            // f_0.5 weights are 0; a fully free one holds nothing. Otherwise the weights of
            // what it holds sum to at most 1 (a dual feasible function), so
            // g + w + Σ_j f_ε(m_j)·z ≤ 1 (ε = 0.5 from the first threshold above 500; every
            // ε at 1000).
            for (k, &m) in thresholds.iter().enumerate() {
                let epsilons: &[f64] = match m {
                    1000 => &DFF_EPSILONS,
                    m if m > 500 && thresholds[..k].iter().all(|&p| p <= 500) => &[0.5],
                    _ => continue,
                };
                for &epsilon in epsilons {
                    let load = dff_load(&self.nodes[n], self.shapes, d, epsilon) + fits[k][d];
                    self.rows.push(load.leq(1.0));
                }
            }
            if let Some(w) = self.nodes[n].whole[d] {
                self.rows.push((w + fits[0][d]).leq(1.0));
            }
            for (j, z) in self.nodes[n].share[d].iter().enumerate() {
                let Some(z) = *z else { continue };
                let m_j = u32::from(self.shapes.share_milli[j]);
                let smallest = thresholds
                    .iter()
                    .position(|&m| u32::from(m) + m_j > MILLI_GPU_PER_GPU);
                if let Some(k) = smallest {
                    let most = f64::from(MILLI_GPU_PER_GPU / m_j);
                    self.rows.push((z + most * fits[k][d]).leq(most));
                }
            }
        }
    }
}

/// The typical pods that can use a node of `node_type` (GPU pods whose model, device count
/// and CPU it admits), merged where they behave alike on it: probability per
/// `(cpu_milli, gpu_milli, gpu_count)`.
fn merged_pods(typical: &TypicalPods, node_type: &NodeType) -> BTreeMap<(u32, u16, u8), f64> {
    let devices = usize::from(node_type.gpu_count);
    let mut merged: BTreeMap<(u32, u16, u8), f64> = BTreeMap::new();
    if let Some(model) = node_type.gpu_model {
        for pod in &typical.pods {
            let usable = pod.gpu_milli > 0
                && pod.gpu_models.allows(model)
                && usize::from(pod.gpu_count) <= devices
                && pod.cpu_milli <= node_type.cpu_milli;
            if usable {
                *merged
                    .entry((pod.cpu_milli, pod.gpu_milli, pod.gpu_count))
                    .or_default() += pod.probability;
            }
        }
    }
    merged
}

pub(crate) struct FragPodVars {
    pub cpu_milli: u32,
    pub gpu_count: u8,
    /// Index into the node's thresholds.
    pub threshold: usize,
    pub h: Variable,
    pub v: Variable,
}

pub(crate) struct NodeFragVars {
    pub thresholds: Vec<u16>,
    /// `g[k][d]`
    pub fits: Vec<Vec<Variable>>,
    /// `q[k][d]`
    pub free_fitting: Vec<Vec<Variable>>,
    pub pods: Vec<FragPodVars>,
}

/// The fragmentation piece: `Σ_n F(n) = constant_milli − q3_weighted`.
pub(crate) struct FragTerms {
    pub nodes: Vec<NodeFragVars>,
    pub q3_weighted: Expression,
    pub constant_milli: f64,
}

impl FragTerms {
    pub fn fill_start(&self, model: &PlacementModel, loads: &[NodeLoad], start: &mut [f64]) {
        for (n, (vars, load)) in self.nodes.iter().zip(loads).enumerate() {
            let node_type = model.cluster.node_type(n as NodeId);
            let devices = usize::from(node_type.gpu_count);
            let left: Vec<u32> = (0..devices)
                .map(|d| MILLI_GPU_PER_GPU - load.used_gpu_milli(d, &model.shapes.share_milli))
                .collect();
            for (k, &m) in vars.thresholds.iter().enumerate() {
                for d in 0..devices {
                    let fits = left[d] >= u32::from(m);
                    start[model.cols.col(vars.fits[k][d])] = if fits { 1.0 } else { 0.0 };
                    start[model.cols.col(vars.free_fitting[k][d])] =
                        if fits { f64::from(left[d]) } else { 0.0 };
                }
            }
            let cpu_left = u64::from(node_type.cpu_milli) - load.cpu_used_milli;
            for pod in &vars.pods {
                let m = u32::from(vars.thresholds[pod.threshold]);
                let fitting = left.iter().filter(|&&l| l >= m).count();
                let h =
                    cpu_left >= u64::from(pod.cpu_milli) && fitting >= usize::from(pod.gpu_count);
                let reachable: u32 = left.iter().filter(|&&l| l >= m).sum();
                start[model.cols.col(pod.h)] = if h { 1.0 } else { 0.0 };
                start[model.cols.col(pod.v)] = if h { f64::from(reachable) } else { 0.0 };
            }
        }
    }
}
