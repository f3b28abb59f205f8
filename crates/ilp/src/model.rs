//! The per-node assignment model every exact formulation is built on, with its two optional
//! objective pieces (power, fragmentation), the warm start from a concrete placement and the
//! decoding of a solution back to one placement per task.
//!
//! Decision variables, for every node `n` (all nodes of the snapshot's cluster), shape `s`,
//! device `d` and sharing milli class `j` (distinct gpu_milli `m_j` of sharing tasks):
//! - `x[n,s] ∈ ℤ≥0`: tasks of shape `s` on `n`;
//! - `w[n,d] ∈ {0,1}`: device `d` is given whole to whole-GPU tasks;
//! - `z[n,d,j] ∈ ℤ≥0`: sharing tasks of class `j` on device `d`.
//!
//! Constraints (spec §2):
//! - `Σ_s cpu_s·x[n,s] ≤ cpu_cap(n)`, `Σ_s mem_s·x[n,s] ≤ mem_cap(n)`, `Σ_s x[n,s] ≤ 1001`;
//! - `Σ_{s whole} k_s·x[n,s] = Σ_d w[n,d]` (whole tasks take whole devices);
//! - `Σ_d z[n,d,j] = Σ_{s share, m_s = m_j} x[n,s]`;
//! - `used[n,d] = 1000·w[n,d] + Σ_j m_j·z[n,d,j] ≤ 1000`;
//! - demand: `Σ_n x[n,s] = count_s` (place exactly these tasks) or `≤ count_s` (choose).
//!
//! Symmetry breaking (each keeps at least one optimal solution, because every objective
//! depends only on the multiset of device loads of a node and on node types):
//! - devices of a node are sorted: `used[n,d] ≥ used[n,d+1]` and `w[n,d] ≥ w[n,d+1]`;
//! - identical nodes (same type) are sorted by the key `Σ_s κ_s·x[n,s]` with
//!   `κ_s = gpu_milli_s + cpu_milli_s/128` (optional, see `SolveOptions::node_symmetry`).
//!
//! Tasks are disaggregated deterministically: the tasks of a shape go, in arrival order, to
//! nodes in id order; whole tasks to the node's whole devices in index order; sharing tasks
//! of a class to the device slots `z[n,d,j]` in device order.

use std::collections::{BTreeMap, HashMap};

use gapbench_model::state::MAX_TASKS_PER_NODE;
use gapbench_model::{Cluster, DeviceSet, NodeId, Placement, TypicalPods, MILLI_GPU_PER_GPU};
use good_lp::{variable, Constraint, Expression, ProblemVariables, Variable, VariableDefinition};

use crate::shapes::{ShapeKind, Shapes};

const MILLI: f64 = MILLI_GPU_PER_GPU as f64;

/// The ε of the dual feasible functions used for device-count cuts.
pub(crate) const DFF_EPSILONS: [f64; 4] = [0.2, 0.3, 0.4, 0.5];

/// The variables of a model under construction. good_lp keeps a variable's column index
/// private; warm starts and solutions are column vectors, so we remember it here.
pub(crate) struct Columns {
    pub vars: ProblemVariables,
    index: HashMap<Variable, usize>,
}

impl Columns {
    fn new() -> Self {
        Columns {
            vars: ProblemVariables::new(),
            index: HashMap::new(),
        }
    }

    fn add(&mut self, definition: VariableDefinition) -> Variable {
        let v = self.vars.add(definition);
        let next = self.index.len();
        self.index.insert(v, next);
        v
    }

    pub fn integer(&mut self, min: f64, max: f64) -> Variable {
        self.add(variable().integer().min(min).max(max))
    }

    pub fn binary(&mut self) -> Variable {
        self.add(variable().binary())
    }

    pub fn continuous(&mut self, min: f64, max: f64) -> Variable {
        self.add(variable().min(min).max(max))
    }

    pub fn col(&self, v: Variable) -> usize {
        self.index[&v]
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }
}

/// Whether every task of the set must be placed or the model chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Demand {
    Exactly,
    AtMost,
}

/// The variables of one node.
pub(crate) struct NodeVars {
    pub node: NodeId,
    /// `x[s]`; `None` where the shape cannot go on this node at all.
    pub count: Vec<Option<Variable>>,
    /// `w[d]`; `None` when no whole-GPU shape can go on this node.
    pub whole: Vec<Option<Variable>>,
    /// `z[d][j]`; `None` when no sharing shape of class `j` can go on this node.
    pub share: Vec<Vec<Option<Variable>>>,
}

/// The assignment core: `x`, `w`, `z` and the constraints above.
pub(crate) struct PlacementModel<'a> {
    pub cluster: &'a Cluster,
    pub shapes: &'a Shapes,
    pub cols: Columns,
    pub rows: Vec<Constraint>,
    pub nodes: Vec<NodeVars>,
    /// Identical nodes (one node type each), ids ascending, in type order.
    pub groups: Vec<Vec<NodeId>>,
    pub demand: Demand,
}

impl<'a> PlacementModel<'a> {
    pub fn new(
        cluster: &'a Cluster,
        shapes: &'a Shapes,
        demand: Demand,
        node_symmetry: bool,
    ) -> Self {
        let mut cols = Columns::new();
        let mut rows = Vec::new();
        let mut nodes = Vec::with_capacity(cluster.len());
        let class_count = shapes.share_milli.len();
        let total_tasks: usize = shapes.shapes.iter().map(|s| s.count()).sum();
        for n in 0..cluster.len() as NodeId {
            let node_type = cluster.node_type(n);
            let devices = usize::from(node_type.gpu_count);
            let count: Vec<Option<Variable>> = shapes
                .shapes
                .iter()
                .map(|shape| match shape.max_per_node(node_type) {
                    0 => None,
                    most => Some(cols.integer(0.0, f64::from(most))),
                })
                .collect();
            let any_whole = shapes
                .shapes
                .iter()
                .zip(&count)
                .any(|(s, x)| x.is_some() && s.kind() == ShapeKind::Whole);
            let whole: Vec<Option<Variable>> = (0..devices)
                .map(|_| any_whole.then(|| cols.binary()))
                .collect();
            // Per class: how many tasks of that class could come here at most.
            let mut class_tasks = vec![0usize; class_count];
            for (s, shape) in shapes.shapes.iter().enumerate() {
                if let (Some(j), Some(_)) = (shapes.share_class(s), count[s]) {
                    class_tasks[j] += shape.count();
                }
            }
            let share: Vec<Vec<Option<Variable>>> = (0..devices)
                .map(|_| {
                    (0..class_count)
                        .map(|j| {
                            let per_device = MILLI_GPU_PER_GPU / u32::from(shapes.share_milli[j]);
                            let most = (per_device as usize).min(class_tasks[j]);
                            (most > 0).then(|| cols.integer(0.0, most as f64))
                        })
                        .collect()
                })
                .collect();
            let vars = NodeVars {
                node: n,
                count,
                whole,
                share,
            };

            // Σ_s cpu_s·x ≤ cap, Σ_s mem_s·x ≤ cap, Σ_s x ≤ 1001.
            let mut cpu = Expression::default();
            let mut memory = Expression::default();
            let mut tasks = Expression::default();
            for (shape, x) in shapes.shapes.iter().zip(&vars.count) {
                if let Some(x) = *x {
                    cpu.add_mul(f64::from(shape.cpu_milli), x);
                    memory.add_mul(shape.memory_mib as f64, x);
                    tasks.add_mul(1.0, x);
                }
            }
            rows.push(cpu.leq(f64::from(node_type.cpu_milli)));
            rows.push(memory.leq(node_type.memory_mib as f64));
            if total_tasks > MAX_TASKS_PER_NODE as usize {
                rows.push(tasks.leq(f64::from(MAX_TASKS_PER_NODE)));
            }
            if devices > 0 {
                // Whole tasks take whole devices: Σ_s k_s·x = Σ_d w.
                let mut whole_demand = Expression::default();
                for (shape, x) in shapes.shapes.iter().zip(&vars.count) {
                    if let (Some(x), ShapeKind::Whole) = (*x, shape.kind()) {
                        whole_demand.add_mul(f64::from(shape.gpu_count), x);
                    }
                }
                let whole_devices: Expression = vars.whole.iter().flatten().copied().sum();
                rows.push(whole_demand.eq(whole_devices));
                // Sharing tasks of each class are spread over devices: Σ_d z[d][j] = Σ x.
                for j in 0..class_count {
                    let mut on_node = Expression::default();
                    for (s, x) in vars.count.iter().enumerate() {
                        if let (Some(x), Some(class)) = (*x, shapes.share_class(s)) {
                            if class == j {
                                on_node.add_mul(1.0, x);
                            }
                        }
                    }
                    let on_devices: Expression = vars.share.iter().filter_map(|row| row[j]).sum();
                    rows.push(on_node.eq(on_devices));
                }
                // Device capacity, and devices sorted by load (whole ones first). The dual
                // feasible weights of what one device holds sum to at most 1 — a tighter
                // LP than capacity alone (two 600-milli tasks never share a device).
                for d in 0..devices {
                    rows.push(used_gpu_milli(&vars, shapes, d).leq(MILLI));
                    if class_count > 0 {
                        for epsilon in DFF_EPSILONS {
                            rows.push(dff_load(&vars, shapes, d, epsilon).leq(1.0));
                        }
                    }
                }
                for d in 1..devices {
                    rows.push(
                        used_gpu_milli(&vars, shapes, d - 1).geq(used_gpu_milli(&vars, shapes, d)),
                    );
                    if let (Some(a), Some(b)) = (vars.whole[d - 1], vars.whole[d]) {
                        rows.push((a - b).geq(0.0));
                    }
                }
            }
            nodes.push(vars);
        }

        // Demand per shape.
        for (s, shape) in shapes.shapes.iter().enumerate() {
            let placed: Expression = nodes.iter().filter_map(|v| v.count[s]).sum();
            let count = shape.count() as f64;
            rows.push(match demand {
                Demand::Exactly => placed.eq(count),
                Demand::AtMost => placed.leq(count),
            });
        }

        let mut groups: Vec<Vec<NodeId>> = vec![Vec::new(); cluster.node_types.len()];
        for (n, node) in cluster.nodes.iter().enumerate() {
            groups[usize::from(node.type_id)].push(n as NodeId);
        }
        groups.retain(|g| !g.is_empty());
        if node_symmetry {
            for group in &groups {
                for pair in group.windows(2) {
                    let key = |n: NodeId| -> Expression {
                        let mut key = Expression::default();
                        for (shape, x) in shapes.shapes.iter().zip(&nodes[n as usize].count) {
                            if let Some(x) = *x {
                                key.add_mul(shape.order_key_x128() as f64 / 128.0, x);
                            }
                        }
                        key
                    };
                    rows.push(key(pair[0]).geq(key(pair[1])));
                }
            }
        }
        PlacementModel {
            cluster,
            shapes,
            cols,
            rows,
            nodes,
            groups,
            demand,
        }
    }

    /// Allocated GPU milli: `Σ_n Σ_s gpu_milli_s·x[n,s]`.
    pub fn allocated_gpu_milli(&self) -> Expression {
        let mut total = Expression::default();
        for vars in &self.nodes {
            for (shape, x) in self.shapes.shapes.iter().zip(&vars.count) {
                if let Some(x) = *x {
                    if shape.total_gpu_milli() > 0 {
                        total.add_mul(f64::from(shape.total_gpu_milli()), x);
                    }
                }
            }
        }
        total
    }

    /// `Σ_s cpu_s·x[n,s]`.
    fn cpu_used_milli(&self, n: usize) -> Expression {
        let mut cpu = Expression::default();
        for (shape, x) in self.shapes.shapes.iter().zip(&self.nodes[n].count) {
            if let Some(x) = *x {
                cpu.add_mul(f64::from(shape.cpu_milli), x);
            }
        }
        cpu
    }

    /// A column fixed at 1 whose objective coefficient is the objective's constant: good_lp
    /// drops constants before HiGHS sees them, so without it HiGHS's objective, bound and
    /// relative gap would ignore the constant (e.g. idle power).
    pub fn constant_column(&mut self) -> Variable {
        self.cols.add(variable().integer().min(1.0).max(1.0))
    }

    /// Adds the power model of spec §6 and returns its dynamic part and constant.
    ///
    /// Per node: `idle_cores ∈ ℤ, 2000·idle_cores ≤ cpu_cap − Σ cpu·x`,
    /// `active ∈ ℤ, cores_per_socket·active ≥ real_cores − idle_cores`, so that at a minimum
    /// `active = ceil((real − floor(cpu_left/2000))/cores_per_socket)` exactly as the model;
    /// per device: `working ∈ {0,1}`, `used ≤ 1000·working` (any allocation makes it work).
    /// `P = Σ_n idle_cpu·sockets + (full_cpu − idle_cpu)·active
    ///    + Σ_d idle_gpu + (full_gpu − idle_gpu)·working`.
    pub fn add_power(&mut self) -> PowerTerms {
        let mut dynamic_watts = Expression::default();
        let mut constant_watts = 0.0;
        let mut nodes = Vec::with_capacity(self.nodes.len());
        for n in 0..self.nodes.len() {
            let node_type = *self.cluster.node_type(n as NodeId);
            let model = *self.cluster.power_model(n as NodeId);
            let max_idle_cores = node_type.cpu_milli / 2000;
            let idle_cores = self.cols.integer(0.0, f64::from(max_idle_cores));
            let active = self.cols.integer(0.0, f64::from(model.sockets));
            let cpu = self.cpu_used_milli(n);
            self.rows
                .push((2000.0 * idle_cores + cpu).leq(f64::from(node_type.cpu_milli)));
            let cores = f64::from(model.socket.cores_per_socket);
            self.rows
                .push((cores * active + idle_cores).geq(f64::from(model.real_cores)));
            let socket_idle = f64::from(model.socket.idle_watts);
            let socket_full = f64::from(model.socket.full_watts);
            constant_watts += socket_idle * f64::from(model.sockets);
            dynamic_watts.add_mul(socket_full - socket_idle, active);
            // Node-used indicator: any task with CPU on the node makes at least one socket
            // active (real − floor((cap − c)/2000) ≥ 1 for every c ≥ 1), so
            // x[n,s] ≤ M_s·y (cpu_s > 0) and active ≥ y. Linking the GPUs to it
            // (working ≤ y) is valid when every GPU shape that may come here uses CPU.
            let used = self.cols.binary();
            self.rows.push((active - used).geq(0.0));
            let mut gpu_tasks_use_cpu = true;
            for (shape, x) in self.shapes.shapes.iter().zip(&self.nodes[n].count) {
                let Some(x) = *x else { continue };
                if shape.cpu_milli > 0 {
                    let most = f64::from(shape.max_per_node(&node_type));
                    self.rows.push((x - most * used).leq(0.0));
                } else if shape.gpu_count > 0 {
                    gpu_tasks_use_cpu = false;
                }
            }
            let mut working = Vec::new();
            if let Some(gpu) = model.gpu {
                let (idle, full) = (f64::from(gpu.idle_watts), f64::from(gpu.full_watts));
                for d in 0..usize::from(node_type.gpu_count) {
                    let u = self.cols.binary();
                    let used = used_gpu_milli(&self.nodes[n], self.shapes, d);
                    self.rows.push(used.leq(MILLI * u));
                    for epsilon in DFF_EPSILONS {
                        let load = dff_load(&self.nodes[n], self.shapes, d, epsilon);
                        self.rows.push(load.leq(u));
                    }
                    constant_watts += idle;
                    dynamic_watts.add_mul(full - idle, u);
                    working.push(u);
                }
                for pair in working.windows(2) {
                    self.rows.push((pair[0] - pair[1]).geq(0.0));
                }
                if let (Some(&first), true) = (working.first(), gpu_tasks_use_cpu) {
                    self.rows.push((first - used).leq(0.0));
                }
            }
            nodes.push(NodePowerVars {
                idle_cores,
                active,
                used,
                working,
            });
        }
        if self.demand == Demand::Exactly {
            self.add_global_power_cuts(&nodes);
        }
        PowerTerms {
            nodes,
            dynamic_watts,
            constant_watts,
        }
    }

    /// Two rounded global counts, valid when the task set is fixed (their right-hand sides
    /// are then constants), that the per-node LP misses:
    /// - active sockets: summing `cps_n·active_n ≥ real_n − idle_n` and
    ///   `2000·idle_n ≤ cap_n − used_n` gives
    ///   `Σ_n active_n ≥ ⌈(Σ_n (real_n − cap_n/2000) + Σ_tasks cpu/2000) / max_n cps_n⌉`;
    /// - working devices: every whole-GPU task needs its own devices and, on every other
    ///   device, the dual feasible weights `f_ε` of its sharing tasks sum to at most 1, so
    ///   `Σ_{n,d} working ≥ ⌈Σ_s k_s·count_s + Σ_{s share} f_ε(m_s)·count_s⌉` for each ε.
    fn add_global_power_cuts(&mut self, nodes: &[NodePowerVars]) {
        let mut cores_needed = 0.0;
        let mut max_cores_per_socket = 1.0f64;
        for n in 0..self.nodes.len() {
            let node_type = self.cluster.node_type(n as NodeId);
            let model = self.cluster.power_model(n as NodeId);
            cores_needed += f64::from(model.real_cores) - f64::from(node_type.cpu_milli) / 2000.0;
            max_cores_per_socket =
                max_cores_per_socket.max(f64::from(model.socket.cores_per_socket));
        }
        let task_cpu: f64 = self
            .shapes
            .shapes
            .iter()
            .map(|s| f64::from(s.cpu_milli) * s.count() as f64)
            .sum();
        cores_needed += task_cpu / 2000.0;
        let sockets: Expression = nodes.iter().map(|v| v.active).sum();
        self.rows
            .push(sockets.geq(((cores_needed / max_cores_per_socket) - 1e-9).ceil()));
        let working: Vec<Variable> = nodes
            .iter()
            .flat_map(|v| v.working.iter().copied())
            .collect();
        if working.is_empty() {
            return;
        }
        let whole: f64 = self
            .shapes
            .shapes
            .iter()
            .filter(|s| s.kind() == ShapeKind::Whole)
            .map(|s| f64::from(s.gpu_count) * s.count() as f64)
            .sum();
        let devices_needed = DFF_EPSILONS
            .iter()
            .map(|&e| {
                whole
                    + self
                        .shapes
                        .shapes
                        .iter()
                        .filter(|s| s.kind() == ShapeKind::Share)
                        .map(|s| dff(e, s.gpu_milli) * s.count() as f64)
                        .sum::<f64>()
            })
            .fold(0.0, f64::max);
        let total: Expression = working.into_iter().sum();
        self.rows.push(total.geq((devices_needed - 1e-9).ceil()));
    }

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
            // Merge typical pods that behave alike on this node.
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
            let mut thresholds: Vec<u16> = merged.keys().map(|k| k.1).collect();
            thresholds.sort_unstable();
            thresholds.dedup();
            let mut fits = Vec::with_capacity(thresholds.len());
            let mut free_fitting = Vec::with_capacity(thresholds.len());
            for &m in &thresholds {
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
                fits.push(g);
                free_fitting.push(q);
            }
            self.tighten_fits(n, &thresholds, &fits);
            let mut pods = Vec::with_capacity(merged.len());
            for (&(cpu_milli, gpu_milli, gpu_count), &probability) in &merged {
                let k = thresholds
                    .binary_search(&gpu_milli)
                    .expect("threshold listed");
                let h = self.cols.binary();
                let v = self.cols.continuous(0.0, MILLI * devices as f64);
                let cpu = self.cpu_used_milli(n);
                self.rows
                    .push((cpu + f64::from(cpu_milli) * h).leq(f64::from(node_type.cpu_milli)));
                self.rows
                    .push((h - fits[k][devices - usize::from(gpu_count)]).leq(0.0));
                let reachable: Expression = free_fitting[k].iter().copied().sum();
                self.rows.push((v - reachable).leq(0.0));
                self.rows.push((v - MILLI * devices as f64 * h).leq(0.0));
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

    /// Start values for `x`, `w`, `z` from canonical loads.
    pub fn fill_start(&self, loads: &[NodeLoad], start: &mut [f64]) {
        for (vars, load) in self.nodes.iter().zip(loads) {
            for (x, &c) in vars.count.iter().zip(&load.count) {
                if let Some(x) = x {
                    start[self.cols.col(*x)] = f64::from(c);
                }
            }
            for (d, w) in vars.whole.iter().enumerate() {
                if let Some(w) = w {
                    start[self.cols.col(*w)] = if load.whole[d] { 1.0 } else { 0.0 };
                }
            }
            for (d, row) in vars.share.iter().enumerate() {
                for (j, z) in row.iter().enumerate() {
                    if let Some(z) = z {
                        start[self.cols.col(*z)] = f64::from(load.share[d][j]);
                    }
                }
            }
        }
    }

    /// One placement per task (`task_count` = the snapshot's task count) from solved column
    /// values; tasks outside the shape set, or not chosen, stay `None`.
    pub fn decode(
        &self,
        values: &[f64],
        task_count: usize,
    ) -> Result<Vec<Option<Placement>>, String> {
        let value = |v: Variable| -> Result<u32, String> {
            let raw = values[self.cols.col(v)];
            let rounded = raw.round();
            if (raw - rounded).abs() > 1e-4 || rounded < 0.0 {
                return Err(format!("solver returned a non-integral count {raw}"));
            }
            Ok(rounded as u32)
        };
        let mut placement = vec![None; task_count];
        // Next unplaced task of each shape.
        let mut next_task = vec![0usize; self.shapes.shapes.len()];
        for vars in &self.nodes {
            let mut whole_devices = Vec::new();
            for (d, w) in vars.whole.iter().enumerate() {
                if let Some(w) = w {
                    if value(*w)? == 1 {
                        whole_devices.push(d);
                    }
                }
            }
            // Sharing slots per class: device d repeated z[d][j] times.
            let mut slots: Vec<Vec<usize>> = vec![Vec::new(); self.shapes.share_milli.len()];
            for (d, row) in vars.share.iter().enumerate() {
                for (j, z) in row.iter().enumerate() {
                    if let Some(z) = z {
                        for _ in 0..value(*z)? {
                            slots[j].push(d);
                        }
                    }
                }
            }
            let mut next_whole = 0;
            let mut next_slot = vec![0usize; slots.len()];
            for (s, x) in vars.count.iter().enumerate() {
                let Some(x) = x else { continue };
                let shape = &self.shapes.shapes[s];
                for _ in 0..value(*x)? {
                    let task = *shape.tasks.get(next_task[s]).ok_or_else(|| {
                        format!(
                            "solver placed more tasks of a shape than there are ({})",
                            shape.count()
                        )
                    })?;
                    next_task[s] += 1;
                    let devices = match shape.kind() {
                        ShapeKind::CpuOnly => DeviceSet::EMPTY,
                        ShapeKind::Whole => {
                            let k = usize::from(shape.gpu_count);
                            let taken = whole_devices
                                .get(next_whole..next_whole + k)
                                .ok_or("solver's whole-device count does not match its tasks")?;
                            next_whole += k;
                            taken.iter().fold(DeviceSet::EMPTY, |set, &d| set.with(d))
                        }
                        ShapeKind::Share => {
                            let j = self
                                .shapes
                                .share_class(s)
                                .expect("sharing shape has a class");
                            let d = *slots[j]
                                .get(next_slot[j])
                                .ok_or("solver's device slots do not match its sharing tasks")?;
                            next_slot[j] += 1;
                            DeviceSet::single(d)
                        }
                    };
                    placement[task] = Some(Placement {
                        node: vars.node,
                        devices,
                    });
                }
            }
        }
        Ok(placement)
    }
}

/// A dual feasible function for bin packing (Fekete–Schepers `u^(ε)`, `ε ≤ 1/2`): the
/// weights of the items in one device sum to at most 1, so `Σ f_ε(m)` bounds the devices
/// needed from below more tightly than `Σ m/1000`: `1` above `1000 − 1000ε`, `0` below
/// `1000ε`, `m/1000` between.
pub(crate) fn dff(epsilon: f64, gpu_milli: u16) -> f64 {
    let x = f64::from(gpu_milli) / MILLI;
    if x > 1.0 - epsilon {
        1.0
    } else if x < epsilon {
        0.0
    } else {
        x
    }
}

/// `w[n,d] + Σ_j f_ε(m_j)·z[n,d,j]`: at most 1 on any device.
fn dff_load(vars: &NodeVars, shapes: &Shapes, d: usize, epsilon: f64) -> Expression {
    let mut load = Expression::default();
    if let Some(w) = vars.whole[d] {
        load.add_mul(1.0, w);
    }
    for (j, z) in vars.share[d].iter().enumerate() {
        let weight = dff(epsilon, shapes.share_milli[j]);
        if let (Some(z), true) = (*z, weight > 0.0) {
            load.add_mul(weight, z);
        }
    }
    load
}

/// `used[n,d] = 1000·w[n,d] + Σ_j m_j·z[n,d,j]`.
fn used_gpu_milli(vars: &NodeVars, shapes: &Shapes, d: usize) -> Expression {
    let mut used = Expression::default();
    if let Some(w) = vars.whole[d] {
        used.add_mul(MILLI, w);
    }
    for (j, z) in vars.share[d].iter().enumerate() {
        if let Some(z) = *z {
            used.add_mul(f64::from(shapes.share_milli[j]), z);
        }
    }
    used
}

pub(crate) struct NodePowerVars {
    pub idle_cores: Variable,
    pub active: Variable,
    /// Some task with CPU runs on the node.
    pub used: Variable,
    pub working: Vec<Variable>,
}

/// The power piece: `P = constant_watts + dynamic_watts`.
pub(crate) struct PowerTerms {
    pub nodes: Vec<NodePowerVars>,
    pub dynamic_watts: Expression,
    pub constant_watts: f64,
}

impl PowerTerms {
    pub fn fill_start(&self, model: &PlacementModel, loads: &[NodeLoad], start: &mut [f64]) {
        for (n, (vars, load)) in self.nodes.iter().zip(loads).enumerate() {
            let node_type = model.cluster.node_type(n as NodeId);
            let power = model.cluster.power_model(n as NodeId);
            let cpu_left = u64::from(node_type.cpu_milli) - load.cpu_used_milli;
            let idle_cores = (cpu_left / 2000) as u32;
            let active = power
                .real_cores
                .saturating_sub(idle_cores)
                .div_ceil(power.socket.cores_per_socket);
            start[model.cols.col(vars.idle_cores)] = f64::from(idle_cores);
            let used = load.cpu_used_milli > 0;
            start[model.cols.col(vars.used)] = if used { 1.0 } else { 0.0 };
            start[model.cols.col(vars.active)] = f64::from(active);
            for (d, u) in vars.working.iter().enumerate() {
                let working = load.used_gpu_milli(d, &model.shapes.share_milli) > 0;
                start[model.cols.col(*u)] = if working { 1.0 } else { 0.0 };
            }
        }
    }
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

/// What a concrete placement puts on one node, in the model's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodeLoad {
    /// Tasks per shape.
    pub count: Vec<u32>,
    /// Per device: given to whole-GPU tasks.
    pub whole: Vec<bool>,
    /// Per device, per sharing class: tasks.
    pub share: Vec<Vec<u32>>,
    pub cpu_used_milli: u64,
}

impl NodeLoad {
    fn empty(shapes: &Shapes, devices: usize) -> Self {
        NodeLoad {
            count: vec![0; shapes.shapes.len()],
            whole: vec![false; devices],
            share: vec![vec![0; shapes.share_milli.len()]; devices],
            cpu_used_milli: 0,
        }
    }

    pub fn used_gpu_milli(&self, d: usize, share_milli: &[u16]) -> u32 {
        if self.whole[d] {
            return MILLI_GPU_PER_GPU;
        }
        self.share[d]
            .iter()
            .zip(share_milli)
            .map(|(&c, &m)| c * u32::from(m))
            .sum()
    }

    fn key_x128(&self, shapes: &Shapes) -> u64 {
        self.count
            .iter()
            .zip(&shapes.shapes)
            .map(|(&c, s)| u64::from(c) * s.order_key_x128())
            .sum()
    }
}

/// The loads of a placement, rearranged to satisfy the model's symmetry breaking: devices
/// of each node sorted by load (whole ones first on ties), and the loads of identical nodes
/// sorted by key (descending; ties keep node order). The result is the same placement up to
/// renaming identical nodes and devices, so it has the same power, allocation and
/// fragmentation.
pub(crate) fn canonical_loads(
    model: &PlacementModel,
    tasks_placement: &[Option<Placement>],
    shape_of: &[Option<usize>],
) -> Result<Vec<NodeLoad>, String> {
    let cluster = model.cluster;
    let shapes = model.shapes;
    let mut loads: Vec<NodeLoad> = (0..cluster.len() as NodeId)
        .map(|n| NodeLoad::empty(shapes, usize::from(cluster.node_type(n).gpu_count)))
        .collect();
    for (task, placement) in tasks_placement.iter().enumerate() {
        let (Some(placement), Some(s)) = (placement, shape_of[task]) else {
            continue;
        };
        let load = loads
            .get_mut(placement.node as usize)
            .ok_or_else(|| format!("placement on unknown node {}", placement.node))?;
        let shape = &shapes.shapes[s];
        load.count[s] += 1;
        load.cpu_used_milli += u64::from(shape.cpu_milli);
        for d in placement.devices.iter() {
            if d >= load.whole.len() {
                return Err(format!(
                    "placement on missing device {d} of node {}",
                    placement.node
                ));
            }
            match shape.kind() {
                ShapeKind::Whole => load.whole[d] = true,
                ShapeKind::Share => {
                    let j = shapes.share_class(s).expect("sharing shape has a class");
                    load.share[d][j] += 1;
                }
                ShapeKind::CpuOnly => {}
            }
        }
    }
    for load in &mut loads {
        let devices = load.whole.len();
        let mut order: Vec<usize> = (0..devices).collect();
        order.sort_by_key(|&d| {
            (
                std::cmp::Reverse(load.used_gpu_milli(d, &shapes.share_milli)),
                std::cmp::Reverse(load.whole[d]),
                d,
            )
        });
        load.whole = order.iter().map(|&d| load.whole[d]).collect();
        load.share = order.iter().map(|&d| load.share[d].clone()).collect();
    }
    let mut canonical = loads.clone();
    for group in &model.groups {
        let mut members: Vec<NodeId> = group.clone();
        members.sort_by_key(|&n| (std::cmp::Reverse(loads[n as usize].key_x128(shapes)), n));
        for (&slot, &from) in group.iter().zip(&members) {
            canonical[slot as usize] = loads[from as usize].clone();
        }
    }
    Ok(canonical)
}
