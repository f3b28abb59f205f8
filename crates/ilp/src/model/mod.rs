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

use std::collections::HashMap;

use gapbench_model::state::MAX_TASKS_PER_NODE;
use gapbench_model::{Cluster, NodeId, NodeType, MILLI_GPU_PER_GPU};
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
    pub fn new() -> Self {
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
        let total_tasks: usize = shapes.shapes.iter().map(|s| s.count()).sum();
        for n in 0..cluster.len() as NodeId {
            let node_type = cluster.node_type(n);
            let vars = node_vars(&mut cols, shapes, n, node_type);
            resource_rows(&mut rows, &vars, shapes, node_type, total_tasks);
            device_rows(&mut rows, &vars, shapes);
            nodes.push(vars);
        }
        demand_rows(&mut rows, &nodes, shapes, demand);
        let mut groups: Vec<Vec<NodeId>> = vec![Vec::new(); cluster.node_types.len()];
        for (n, node) in cluster.nodes.iter().enumerate() {
            groups[usize::from(node.type_id)].push(n as NodeId);
        }
        groups.retain(|g| !g.is_empty());
        if node_symmetry {
            node_symmetry_rows(&mut rows, &nodes, shapes, &groups);
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
}

/// The variables of node `n`: `x[s]` for the shapes that fit it, `w[d]` when a whole-GPU
/// shape does, `z[d][j]` for the sharing classes with a task that fits (bounded by what
/// one device and the class's tasks allow).
fn node_vars(cols: &mut Columns, shapes: &Shapes, n: NodeId, node_type: &NodeType) -> NodeVars {
    let devices = usize::from(node_type.gpu_count);
    let class_count = shapes.share_milli.len();
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
    NodeVars {
        node: n,
        count,
        whole,
        share,
    }
}

/// `Σ_s cpu_s·x ≤ cap`, `Σ_s mem_s·x ≤ cap`, and `Σ_s x ≤ 1001` where the tasks could
/// exceed it (`total_tasks` in all).
fn resource_rows(
    rows: &mut Vec<Constraint>,
    vars: &NodeVars,
    shapes: &Shapes,
    node_type: &NodeType,
    total_tasks: usize,
) {
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
}

/// A node's device rows: whole tasks take whole devices, sharing tasks spread over the
/// devices, each device's capacity and dual feasible cuts, and devices sorted by load.
fn device_rows(rows: &mut Vec<Constraint>, vars: &NodeVars, shapes: &Shapes) {
    let devices = vars.whole.len();
    if devices == 0 {
        return;
    }
    let class_count = shapes.share_milli.len();
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
        rows.push(used_gpu_milli(vars, shapes, d).leq(MILLI));
        if class_count > 0 {
            for epsilon in DFF_EPSILONS {
                rows.push(dff_load(vars, shapes, d, epsilon).leq(1.0));
            }
        }
    }
    for d in 1..devices {
        rows.push(used_gpu_milli(vars, shapes, d - 1).geq(used_gpu_milli(vars, shapes, d)));
        if let (Some(a), Some(b)) = (vars.whole[d - 1], vars.whole[d]) {
            rows.push((a - b).geq(0.0));
        }
    }
}

/// Demand per shape: `Σ_n x[n,s] = count_s` or `≤ count_s`.
fn demand_rows(rows: &mut Vec<Constraint>, nodes: &[NodeVars], shapes: &Shapes, demand: Demand) {
    for (s, shape) in shapes.shapes.iter().enumerate() {
        let placed: Expression = nodes.iter().filter_map(|v| v.count[s]).sum();
        let count = shape.count() as f64;
        rows.push(match demand {
            Demand::Exactly => placed.eq(count),
            Demand::AtMost => placed.leq(count),
        });
    }
}

/// Identical nodes sorted by the key `Σ_s κ_s·x[n,s]` (symmetry breaking).
fn node_symmetry_rows(
    rows: &mut Vec<Constraint>,
    nodes: &[NodeVars],
    shapes: &Shapes,
    groups: &[Vec<NodeId>],
) {
    let key = |n: NodeId| -> Expression {
        let mut key = Expression::default();
        for (shape, x) in shapes.shapes.iter().zip(&nodes[n as usize].count) {
            if let Some(x) = *x {
                key.add_mul(shape.order_key_x128() as f64 / 128.0, x);
            }
        }
        key
    };
    for group in groups {
        for pair in group.windows(2) {
            rows.push(key(pair[0]).geq(key(pair[1])));
        }
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

mod frag;
mod placement;
mod power;

pub(crate) use frag::FragTerms;
pub(crate) use placement::{canonical_loads, NodeLoad};
pub(crate) use power::PowerTerms;
