//! The *device relaxation*: a lower bound on fragmentation from how the GPU tasks can
//! share devices and CPU can strand them, which keeps every device and every node of the
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

use gapbench_model::{Cluster, TypicalPods, MILLI_GPU_PER_GPU};

use super::{Frame, COLUMN_LIMIT, MIP_NODE_LIMIT};
use crate::error::SolveError;
use crate::shapes::{ShapeKind, Shapes};
use crate::snapshot::Snapshot;
use crate::solve::{run_highs_within, HighsWork, RawStatus, SolveOptions};

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
    let Some(relaxation) =
        Frame::new(cluster, typical, shapes).filter(|frame| frame.pooled_columns() <= COLUMN_LIMIT)
    else {
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
    let raw = run_highs_within(problem, None, &limits, HighsWork::nodes(MIP_NODE_LIMIT));
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
    Ok(Some(Frame::fragmentation(
        typical,
        cluster,
        shapes,
        -least_minus_credit,
    )))
}

/// One group's part of the program: its credit, its rows, and its node count.
struct Group {
    credit: Expression,
    rows: Vec<good_lp::Constraint>,
    nodes: Expression,
}

impl Frame {
    /// Columns of the relaxation: per type and level its patterns, classes and node counts.
    fn pooled_columns(&self) -> usize {
        self.types
            .iter()
            .zip(&self.patterns)
            .map(|(kind, own)| {
                let per_level = own.len() + self.classes.len() + 1 + kind.gpus as usize;
                kind.credit.levels.len() * per_level
            })
            .sum()
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
