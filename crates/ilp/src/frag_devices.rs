//! A lower bound on fragmentation from how the GPU tasks can share devices and CPU can
//! strand them: the *device relaxation*, which keeps every device and every node of the
//! cluster and every task, and forgets which of a type's nodes holds what (and memory).
//!
//! Why: on a small cluster the configuration LP of column generation splits its few tasks
//! fractionally over identical nodes, and its bound stays far below every placement (on 8
//! nodes of the default trace at 80 %: 2,608.6 against 2,942.6 milli-GPU, and branching on
//! aggregated counts does not move it). What it misses is integral: the eleven GPU shares
//! of that snapshot need at least nine devices, however they are placed.
//!
//! A node's credits `V(n) = c_l + Σ_d g_l(f_d) + multi_l(E_n)` ([`NodeValue`]: `f_d` each
//! device's free milli, `E_n` its fully free devices) depend on its CPU only through its
//! level `l`, the first whose `C_l` (CPU used at most) admits the CPU it uses, and
//! `F(n) = P·L_n − V(n)` (`P` the typical pods' probability mass, `L_n` the node's free
//! milli). Summed over the cluster `P·Σ_n L_n` is fixed by the task set, so the least
//! fragmentation is `P·L` minus the most credit, and the most credit is at most that of
//!
//! `max Σ_{τ,l} [Σ_q g_l(1000 − load_q)·z_{τl,q} + Σ_j (c_l + j·g_l(1000) + multi_l(j))·e_{τl,j}]`
//!
//! over groups `(τ, l)`, the nodes of type `τ` at level `l`:
//! - `e_{τl,j}` nodes of the group have `j` fully free devices, `Σ_{l,j} e_{τl,j} = N_τ`;
//! - `z_{τl,q}` devices of the group hold the pattern `q`, a multiset of share sizes within
//!   1,000 milli (`a_{m,q}` shares of `m` milli);
//! - `x_{τl,k}` tasks of class `k` are on the group's nodes, every task somewhere:
//!   `Σ_{τ,l} x_{τl,k} = count_k`; the group's shares of each size are its patterns':
//!   `Σ_q a_{m,q}·z_{τl,q} = Σ_{k of size m} x_{τl,k}`;
//! - every device of the group holds shares, a whole task or nothing:
//!   `Σ_q z_{τl,q} + Σ_{k whole} gpus_k·x_{τl,k} + Σ_j j·e_{τl,j} = G_τ·Σ_j e_{τl,j}`;
//! - the group's tasks use at most its nodes' CPU: `Σ_k cpu_k·x_{τl,k} ≤ C_l·Σ_j e_{τl,j}`;
//! - all of them non-negative integers.
//!
//! Every placement gives a solution of the same credit (each node in its own level's group,
//! its devices' patterns, its tasks), so the integer optimum bounds fragmentation from
//! below. What it forgets is which node of a group holds which task (CPU and devices are
//! pooled within the group) and memory. HiGHS's dual bound is used, valid whether or not it
//! proved the optimum. A class is a set of tasks the relaxation cannot tell apart: one
//! `gpu_milli`, GPU count and CPU, admitted on the same node types (where one fits an empty
//! node, `Shape::max_per_node`, as in column generation). The bound is the same on every
//! run: patterns are enumerated to a fixed limit (beyond it, no bound is given) and the
//! search is stopped by a node limit, the clock being only a safety net.

use good_lp::{variable, Expression, ProblemVariables, SolverModel};

use gapbench_model::{Cluster, NodeType, TypicalPods, MILLI_GPU_PER_GPU};

use crate::error::SolveError;
use crate::node_value::NodeValue;
use crate::shapes::{ShapeKind, Shapes};
use crate::snapshot::Snapshot;
use crate::solve::{run_highs_within, RawStatus, SolveOptions};

/// Columns (patterns, tasks and node counts, over every group) the relaxation may have
/// before it gives up (no bound): the whole openb cluster has too many share sizes and
/// node types for it, and its column generation is within 0.5 % anyway.
const COLUMN_LIMIT: usize = 60_000;
/// Branch-and-bound nodes HiGHS may search (the work limit that makes the bound the same
/// on every run); on the 8-node sub-clusters of the openb traces the root closes it.
const MIP_NODE_LIMIT: u32 = 10_000;
/// The share of the solve's time limit HiGHS is given as a safety net.
const CLOCK_SHARE: f64 = 0.25;

/// A lower bound on the least fragmentation (milli-GPU) of placing exactly the tasks the
/// snapshot's heuristic placed, from the device relaxation (see the module documentation);
/// `None` when the relaxation is larger than it builds.
pub fn frag_device_bound(
    snapshot: &Snapshot,
    options: &SolveOptions,
) -> Result<Option<f64>, SolveError> {
    let shapes = snapshot
        .checked_shapes(options, snapshot.placed_tasks())
        .map_err(SolveError::Problem)?;
    device_bound(snapshot.cluster, snapshot.typical, &shapes, options).map_err(SolveError::Solver)
}

/// [`frag_device_bound`] on shapes already grouped.
pub(crate) fn device_bound(
    cluster: &Cluster,
    typical: &TypicalPods,
    shapes: &Shapes,
    options: &SolveOptions,
) -> Result<Option<f64>, String> {
    let Some(relaxation) = Relaxation::new(cluster, typical, shapes) else {
        return Ok(None);
    };
    let mut vars = ProblemVariables::new();
    let mut credit = Expression::default();
    let mut placed = vec![Expression::default(); relaxation.classes.len()];
    let mut rows = Vec::new();
    for (t, kind) in relaxation.types.iter().enumerate() {
        let mut nodes_of_type = Expression::default();
        for level in 0..kind.credit.levels.len() {
            let group = relaxation.group(t, level, &mut vars, &mut placed);
            credit += group.credit;
            rows.extend(group.rows);
            nodes_of_type += group.nodes;
        }
        rows.push(nodes_of_type.eq(kind.nodes as f64));
    }
    let mut problem = vars.minimise(-credit).using(good_lp::highs);
    for (row, class) in placed.into_iter().zip(&relaxation.classes) {
        problem.add_constraint(row.eq(class.count as f64));
    }
    for row in rows {
        problem.add_constraint(row);
    }
    let limits = SolveOptions {
        time_limit_s: options.time_limit_s * CLOCK_SHARE,
        mip_rel_gap: 0.0,
        verbose: false,
        ..options.clone()
    };
    let raw = run_highs_within(problem, &limits, Some(MIP_NODE_LIMIT));
    let least_minus_credit = match (&raw.status, raw.bound, raw.objective) {
        (RawStatus::Error(message), _, _) => {
            return Err(format!("the device relaxation: {message}"))
        }
        (RawStatus::Infeasible, _, _) => {
            return Err(
                "the device relaxation has no solution, yet the heuristic's placement is one"
                    .into(),
            )
        }
        (_, Some(bound), _) => bound,
        (RawStatus::Optimal, None, Some(objective)) => objective,
        _ => return Ok(None),
    };
    let mass: f64 = typical.pods.iter().map(|pod| pod.probability).sum();
    let placed_milli: f64 = shapes
        .shapes
        .iter()
        .map(|s| s.count() as f64 * f64::from(s.total_gpu_milli()))
        .sum();
    let free_milli = cluster.gpu_capacity_milli() as f64 - placed_milli;
    Ok(Some(mass * free_milli + least_minus_credit))
}

/// What the integer program is built from: the node types, the task classes, the share
/// sizes and each type's device patterns.
struct Relaxation {
    types: Vec<Kind>,
    classes: Vec<Class>,
    /// Distinct `gpu_milli` of the share classes, ascending.
    sizes: Vec<u32>,
    /// Per type, its device patterns.
    patterns: Vec<Vec<Pattern>>,
}

/// One group's part of the program: its credit, its rows, and its node count.
struct Group {
    credit: Expression,
    rows: Vec<good_lp::Constraint>,
    nodes: Expression,
}

impl Relaxation {
    /// `None` beyond [`COLUMN_LIMIT`] columns.
    fn new(cluster: &Cluster, typical: &TypicalPods, shapes: &Shapes) -> Option<Relaxation> {
        let types = node_types(cluster, typical);
        let classes = classes(shapes, &types);
        let mut sizes: Vec<u32> = classes
            .iter()
            .filter(|c| c.kind == ShapeKind::Share)
            .map(|c| c.milli)
            .collect();
        sizes.sort_unstable();
        sizes.dedup();
        let patterns = patterns(&types, &classes, &sizes)?;
        let columns: usize = types
            .iter()
            .zip(&patterns)
            .map(|(kind, own)| {
                let per_level = own.len() + classes.len() + 1 + kind.gpus as usize;
                kind.credit.levels.len() * per_level
            })
            .sum();
        (columns <= COLUMN_LIMIT).then_some(Relaxation {
            types,
            classes,
            sizes,
            patterns,
        })
    }

    /// The variables of group (type `t`, CPU `level`), its tasks added to `placed`.
    fn group(
        &self,
        t: usize,
        level: usize,
        vars: &mut ProblemVariables,
        placed: &mut [Expression],
    ) -> Group {
        let kind = &self.types[t];
        let value = &kind.credit;
        let mut credit = Expression::default();
        let mut devices = Expression::default();
        let mut cpu = Expression::default();
        let mut nodes = Expression::default();
        // Shares of each size on the group's devices, less the share tasks placed there.
        let mut shares = vec![Expression::default(); self.sizes.len()];
        for pattern in &self.patterns[t] {
            let z = vars.add(variable().integer().min(0));
            credit += value.device(level, MILLI_GPU_PER_GPU - pattern.load_milli) * z;
            devices += z;
            for &(size, n) in &pattern.shares {
                shares[size] += f64::from(n) * z;
            }
        }
        for (k, class) in self.classes.iter().enumerate() {
            if !class.admitted[t] {
                continue;
            }
            let tasks = vars.add(variable().integer().min(0));
            placed[k] += tasks;
            cpu += f64::from(class.cpu_milli) * tasks;
            match (class.kind, self.sizes.binary_search(&class.milli)) {
                (ShapeKind::Share, Ok(size)) => shares[size] -= tasks,
                (ShapeKind::Whole, _) => devices += f64::from(class.gpus) * tasks,
                _ => {}
            }
        }
        for free in 0..=kind.gpus {
            let e = vars.add(variable().integer().min(0));
            let node_credit = value.levels[level].constant
                + f64::from(free) * value.device(level, MILLI_GPU_PER_GPU)
                + value.multi(level, free);
            credit += node_credit * e;
            devices += (f64::from(free) - f64::from(kind.gpus)) * e;
            nodes += e;
        }
        let cap = value.levels[level].cpu_used_at_most as f64;
        let mut rows: Vec<good_lp::Constraint> =
            shares.into_iter().map(|row| row.eq(0.0)).collect();
        rows.push(devices.eq(0.0));
        rows.push(cpu.leq(cap * nodes.clone()));
        Group {
            credit,
            rows,
            nodes,
        }
    }
}

/// A node type as the relaxation sees it (types without GPUs too: CPU-only tasks may go
/// there, and their nodes have no fragment).
struct Kind {
    node_type: NodeType,
    nodes: usize,
    gpus: u32,
    /// Fragmentation's credits on the type, by CPU level.
    credit: NodeValue,
}

fn node_types(cluster: &Cluster, typical: &TypicalPods) -> Vec<Kind> {
    cluster
        .node_types
        .iter()
        .zip(cluster.type_counts())
        .filter(|&(_, nodes)| nodes > 0)
        .map(|(node_type, nodes)| Kind {
            node_type: *node_type,
            nodes,
            gpus: u32::from(node_type.gpu_count),
            credit: NodeValue::fragmentation(node_type, typical),
        })
        .collect()
}

/// Tasks the relaxation cannot tell apart: one kind, `gpu_milli`, GPU count and CPU,
/// admitted on the same node types.
struct Class {
    kind: ShapeKind,
    milli: u32,
    gpus: u32,
    cpu_milli: u32,
    /// Per [`Kind`]: a task of the class fits an empty node of it.
    admitted: Vec<bool>,
    count: usize,
}

fn classes(shapes: &Shapes, types: &[Kind]) -> Vec<Class> {
    let mut classes: Vec<Class> = Vec::new();
    for shape in &shapes.shapes {
        let class = Class {
            kind: shape.kind(),
            milli: u32::from(shape.gpu_milli),
            gpus: u32::from(shape.gpu_count),
            cpu_milli: shape.cpu_milli,
            admitted: types
                .iter()
                .map(|t| shape.max_per_node(&t.node_type) > 0)
                .collect(),
            count: shape.count(),
        };
        let key = |c: &Class| (c.kind, c.milli, c.gpus, c.cpu_milli);
        match classes
            .iter_mut()
            .find(|c| key(c) == key(&class) && c.admitted == class.admitted)
        {
            Some(same) => same.count += class.count,
            None => classes.push(class),
        }
    }
    classes
}

/// A non-empty multiset of share sizes on one device.
struct Pattern {
    /// `(size, shares)`, sizes ascending (indices into the sizes' list).
    shares: Vec<(usize, u32)>,
    load_milli: u32,
}

/// Every pattern of every type: shares of the sizes admitted there, never more of one size
/// than there are; `None` beyond [`COLUMN_LIMIT`] patterns in all.
fn patterns(types: &[Kind], classes: &[Class], sizes: &[u32]) -> Option<Vec<Vec<Pattern>>> {
    let mut all = Vec::new();
    let mut total = 0;
    for (t, kind) in types.iter().enumerate() {
        // (size, milli, shares of that size admitted on the type)
        let available: Vec<(usize, u32, u32)> = sizes
            .iter()
            .enumerate()
            .map(|(size, &milli)| {
                let count: usize = classes
                    .iter()
                    .filter(|c| c.kind == ShapeKind::Share && c.milli == milli && c.admitted[t])
                    .map(|c| c.count)
                    .sum();
                (size, milli, u32::try_from(count).unwrap_or(u32::MAX))
            })
            .filter(|&(_, _, count)| count > 0)
            .collect();
        let mut found = Vec::new();
        if kind.gpus > 0 && !extend(&available, 0, 0, &mut Vec::new(), &mut found, &mut total) {
            return None;
        }
        all.push(found);
    }
    Some(all)
}

/// Depth first over `available[next..]`: every pattern that adds to `chosen` (of `load`
/// milli). False once [`COLUMN_LIMIT`] patterns were found in all.
fn extend(
    available: &[(usize, u32, u32)],
    next: usize,
    load: u32,
    chosen: &mut Vec<(usize, u32)>,
    found: &mut Vec<Pattern>,
    total: &mut usize,
) -> bool {
    for (i, &(size, milli, count)) in available.iter().enumerate().skip(next) {
        let mut n = 0;
        while n < count && load + (n + 1) * milli <= MILLI_GPU_PER_GPU {
            n += 1;
            *total += 1;
            if *total > COLUMN_LIMIT {
                return false;
            }
            let load_milli = load + n * milli;
            chosen.push((size, n));
            found.push(Pattern {
                shares: chosen.clone(),
                load_milli,
            });
            let more = extend(available, i + 1, load_milli, chosen, found, total);
            chosen.pop();
            if !more {
                return false;
            }
        }
    }
    true
}
