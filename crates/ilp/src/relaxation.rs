//! Valid bounds for clusters too large for the per-node model (the full 1,213-node openb
//! cluster with ≈10 k tasks): a **relaxation** that aggregates identical nodes.
//!
//! Per node type `τ` with `N_τ` nodes, `X[τ,s] ∈ ℤ≥0` counts tasks of shape `s` on nodes of
//! that type, and the per-node constraints of [`crate::model`] are summed over the type:
//! - `Σ_s cpu_s·X ≤ N_τ·cpu_cap`, `Σ_s mem_s·X ≤ N_τ·mem_cap`, `Σ_s X ≤ 1001·N_τ`;
//! - `W_τ = Σ_{s whole} k_s·X[τ,s]` whole devices, `Σ_s gpu_milli_s·X ≤ 1000·N_τ·G_τ`;
//! - power: `U_τ ∈ ℤ` working devices with `1000·U_τ ≥ Σ_s gpu_milli_s·X` and, per dual
//!   feasible function `f_ε` (`f_ε(m) = 1` if `m > 1000 − 1000ε`, `0` if `m < 1000ε`, else
//!   `m/1000`; at most 1 per device), `U_τ ≥ W_τ + Σ_{s share} f_ε(m_s)·X[τ,s]`;
//!   `I_τ ∈ ℤ` idle cores with `2000·I_τ + Σ_s cpu_s·X ≤ N_τ·cpu_cap`;
//!   `A_τ ∈ ℤ` active sockets with `cores_per_socket·A_τ + I_τ ≥ N_τ·real_cores`;
//!   `Y_τ ∈ ℤ` used nodes, each with an active socket, at most `G_τ` working devices and
//!   `cpu_cap` of CPU: `A_τ ≥ Y_τ`, `G_τ·Y_τ ≥ U_τ`, `cpu_cap·Y_τ ≥ Σ_s cpu_s·X`.
//!
//! Every per-node solution aggregates to a solution of this model with the same objective
//! value, so its optimum — and HiGHS's proven dual bound of it, which is at least its LP
//! relaxation's value — bounds the true optimum: from below for power, from above for
//! allocation. The model is small (types × shapes integers) whatever the cluster size. The
//! bound is loose where the aggregation forgets that a task's CPU and GPU share one node
//! and that CPU sockets step per node; gaps against it are upper estimates.
//!
//! The tight version is [`crate::cg`]: configuration columns `λ[τ,c]` (a feasible multiset
//! of shapes on *one* node of type `τ`, with its exact per-node cost) instead of `X[τ,s]`,
//! priced by the per-node model of [`crate::model`] on one node.

use std::time::Instant;

use gapbench_model::state::MAX_TASKS_PER_NODE;
use gapbench_model::{NodeType, PowerModel, MILLI_GPU_PER_GPU};
use good_lp::solvers::highs::HighsProblem;
use good_lp::{variable, Constraint, Expression, ProblemVariables, SolverModel, Variable};

use crate::eval::{alloc_gpu_milli, power_watts, state_of};
use crate::model::{dff, DFF_EPSILONS};
use crate::shapes::{ShapeKind, Shapes};
use crate::snapshot::Snapshot;
use crate::solve::{
    relative_gap, run_highs, Objective, RawSolve, RawStatus, SolveOptions, SolveReport, SolveStatus,
};

const MILLI: f64 = MILLI_GPU_PER_GPU as f64;

/// A lower bound on the least total power (idle power included) that places exactly the
/// heuristic's placed tasks, from the by-type relaxation. The report's incumbent and
/// placement are the heuristic's own (the only placement known); status `RelaxationBound`.
pub fn relaxed_min_power(snapshot: &Snapshot, options: &SolveOptions) -> SolveReport {
    relaxed(snapshot, Objective::Power, options)
}

/// An upper bound on the most GPU milli any placement of the arrived tasks could allocate,
/// from the by-type relaxation; incumbent and placement are the heuristic's.
pub fn relaxed_max_alloc(snapshot: &Snapshot, options: &SolveOptions) -> SolveReport {
    relaxed(snapshot, Objective::Alloc, options)
}

fn relaxed(snapshot: &Snapshot, objective: Objective, options: &SolveOptions) -> SolveReport {
    let clock = Instant::now();
    let fail =
        |message: String| SolveReport::error(objective, message, clock.elapsed().as_secs_f64());
    let indices: Vec<usize> = match objective {
        Objective::Power => snapshot.placed_tasks(),
        Objective::Alloc => (0..snapshot.tasks.len()).collect(),
        Objective::Frag => return fail("no by-type relaxation of fragmentation".into()),
    };
    let shapes = match snapshot.checked_shapes(options, indices) {
        Ok(shapes) => shapes,
        Err(e) => return fail(e),
    };
    let cluster = snapshot.cluster;
    let type_counts = cluster.type_counts();
    let mut model = ByTypeModel::new(shapes.shapes.len());
    for (t, node_type) in cluster.node_types.iter().enumerate() {
        if type_counts[t] == 0 {
            continue;
        }
        let nodes = type_counts[t] as f64;
        let load = model.add_type_counts(&shapes, node_type, nodes);
        let power_model = (objective == Objective::Power).then_some(&cluster.power_models[t]);
        model.add_type_rows(&shapes, node_type, power_model, nodes, load);
    }
    model.add_demand_rows(&shapes, objective);
    let raw = run_highs(model.into_problem(objective), None, options);
    let state = state_of(cluster, snapshot.tasks, &snapshot.heuristic);
    let heuristic = match objective {
        Objective::Power => power_watts(cluster, &state) as f64,
        _ => alloc_gpu_milli(snapshot.tasks, &snapshot.heuristic) as f64,
    };
    let bound = match checked_bound(&raw, objective, heuristic) {
        Ok(bound) => bound,
        Err(e) => return fail(e),
    };
    SolveReport {
        objective,
        status: SolveStatus::RelaxationBound,
        incumbent: Some(heuristic),
        bound: Some(bound),
        mip_gap: Some(relative_gap(heuristic, bound)),
        solve_seconds: clock.elapsed().as_secs_f64(),
        placement: snapshot.heuristic.clone(),
        secondary_power_watts: None,
    }
}

/// The relaxation's bound from HiGHS's answer, rounded towards the heuristic (integral
/// objectives); an error when there is none or it is beyond the heuristic's feasible
/// `heuristic` value (a relaxation can never beat a feasible placement beyond tolerance).
fn checked_bound(raw: &RawSolve, objective: Objective, heuristic: f64) -> Result<f64, String> {
    let bound =
        match raw.status {
            RawStatus::Error(ref e) => return Err(e.clone()),
            RawStatus::Infeasible => return Err(
                "the by-type relaxation is infeasible although the heuristic's placement is not"
                    .into(),
            ),
            RawStatus::Optimal => raw.bound.or(raw.objective),
            RawStatus::Limit => raw.bound,
        };
    let Some(bound) = bound else {
        return Err("HiGHS gave no bound for the by-type relaxation within the time limit".into());
    };
    let bound = match objective {
        Objective::Power => (bound - 1e-6).ceil(),
        _ => (bound + 1e-6).floor(),
    };
    let beyond = match objective {
        Objective::Power => bound > heuristic,
        _ => bound < heuristic,
    };
    if beyond {
        return Err(format!(
            "the relaxation bound {bound} is beyond the heuristic's feasible value {heuristic}"
        ));
    }
    Ok(bound)
}

/// The by-type model while it is built: variables, rows and the objective's parts.
struct ByTypeModel {
    vars: ProblemVariables,
    rows: Vec<Constraint>,
    /// Power above the constant part (active sockets, working devices).
    power: Expression,
    /// Idle power of every socket and device, in watts.
    power_constant: f64,
    /// GPU milli allocated, over every type.
    allocated: Expression,
    /// Tasks placed per shape, over every type.
    placed: Vec<Expression>,
}

/// One node type's loads, summed over its `X[τ,s]`.
struct TypeLoad {
    cpu: Expression,
    memory: Expression,
    tasks: Expression,
    gpu_milli: Expression,
    whole_devices: Expression,
    /// `Σ_{s share} f_ε(m_s)·X[τ,s]` per ε of [`DFF_EPSILONS`].
    dff_load: Vec<Expression>,
}

impl ByTypeModel {
    fn new(shape_count: usize) -> Self {
        Self {
            vars: ProblemVariables::new(),
            rows: Vec::new(),
            power: Expression::default(),
            power_constant: 0.0,
            allocated: Expression::default(),
            placed: vec![Expression::default(); shape_count],
        }
    }

    /// Adds `X[τ,s]` for every shape that fits a node of the type (`nodes` of them), and
    /// returns the type's summed loads.
    fn add_type_counts(&mut self, shapes: &Shapes, node_type: &NodeType, nodes: f64) -> TypeLoad {
        let mut load = TypeLoad {
            cpu: Expression::default(),
            memory: Expression::default(),
            tasks: Expression::default(),
            gpu_milli: Expression::default(),
            whole_devices: Expression::default(),
            dff_load: vec![Expression::default(); DFF_EPSILONS.len()],
        };
        for (s, shape) in shapes.shapes.iter().enumerate() {
            let most = shape.max_per_node(node_type);
            if most == 0 {
                continue;
            }
            let upper = (f64::from(most) * nodes).min(shape.count() as f64);
            let x: Variable = self.vars.add(variable().integer().min(0.0).max(upper));
            self.placed[s].add_mul(1.0, x);
            load.cpu.add_mul(f64::from(shape.cpu_milli), x);
            load.memory.add_mul(shape.memory_mib as f64, x);
            load.tasks.add_mul(1.0, x);
            let milli = f64::from(shape.total_gpu_milli());
            if milli > 0.0 {
                load.gpu_milli.add_mul(milli, x);
                self.allocated.add_mul(milli, x);
            }
            match shape.kind() {
                ShapeKind::Whole => load.whole_devices.add_mul(f64::from(shape.gpu_count), x),
                ShapeKind::Share => {
                    for (e, dff_load) in DFF_EPSILONS.iter().zip(&mut load.dff_load) {
                        let weight = dff(*e, shape.gpu_milli);
                        if weight > 0.0 {
                            dff_load.add_mul(weight, x);
                        }
                    }
                }
                ShapeKind::CpuOnly => {}
            }
        }
        load
    }

    /// The type's summed capacity rows, and its power rows when `power_model` is given
    /// (the power objective).
    fn add_type_rows(
        &mut self,
        shapes: &Shapes,
        node_type: &NodeType,
        power_model: Option<&PowerModel>,
        nodes: f64,
        load: TypeLoad,
    ) {
        let devices = f64::from(node_type.gpu_count);
        let cpu_capacity = nodes * f64::from(node_type.cpu_milli);
        self.rows.push(load.cpu.clone().leq(cpu_capacity));
        self.rows
            .push(load.memory.leq(nodes * node_type.memory_mib as f64));
        self.rows
            .push(load.tasks.leq(nodes * f64::from(MAX_TASKS_PER_NODE)));
        self.rows
            .push(load.gpu_milli.clone().leq(nodes * devices * MILLI));
        self.rows
            .push(load.whole_devices.clone().leq(nodes * devices));
        let Some(model) = power_model else {
            return;
        };
        let every_task_uses_cpu = shapes.shapes.iter().all(|s| s.cpu_milli > 0);
        let used_nodes =
            self.add_socket_rows(node_type, model, nodes, load.cpu, every_task_uses_cpu);
        if let Some(gpu) = model.gpu {
            let working = self
                .vars
                .add(variable().integer().min(0.0).max(nodes * devices));
            self.rows.push((devices * used_nodes - working).geq(0.0));
            self.rows.push((MILLI * working).geq(load.gpu_milli));
            for dff_load in load.dff_load {
                self.rows
                    .push(Expression::from(working).geq(load.whole_devices.clone() + dff_load));
            }
            let (idle, full) = (f64::from(gpu.idle_watts), f64::from(gpu.full_watts));
            self.power_constant += nodes * devices * idle;
            self.power.add_mul(full - idle, working);
        }
    }

    /// Idle cores `I_τ`, active sockets `A_τ` and used nodes `Y_τ` of one type with their
    /// rows and socket power; returns `Y_τ`, which bounds the working devices.
    fn add_socket_rows(
        &mut self,
        node_type: &NodeType,
        model: &PowerModel,
        nodes: f64,
        cpu: Expression,
        every_task_uses_cpu: bool,
    ) -> Variable {
        let idle_cores = self.vars.add(
            variable()
                .integer()
                .min(0.0)
                .max(nodes * f64::from(node_type.cpu_milli / 2000)),
        );
        let active = self.vars.add(
            variable()
                .integer()
                .min(0.0)
                .max(nodes * f64::from(model.sockets)),
        );
        let cpu_used = cpu.clone();
        self.rows
            .push((2000.0 * idle_cores + cpu).leq(nodes * f64::from(node_type.cpu_milli)));
        self.rows.push(
            (f64::from(model.socket.cores_per_socket) * active + idle_cores)
                .geq(nodes * f64::from(model.real_cores)),
        );
        let (socket_idle, socket_full) = (
            f64::from(model.socket.idle_watts),
            f64::from(model.socket.full_watts),
        );
        self.power_constant += nodes * socket_idle * f64::from(model.sockets);
        self.power.add_mul(socket_full - socket_idle, active);
        // Used nodes: every used node has an active socket (when every task uses CPU),
        // holds at most G working devices and cpu_cap of CPU: A ≥ Y, G·Y ≥ U, cap·Y ≥ Σ cpu·X.
        let used_nodes = self.vars.add(variable().integer().min(0.0).max(nodes));
        if every_task_uses_cpu {
            self.rows.push((active - used_nodes).geq(0.0));
        }
        self.rows
            .push((f64::from(node_type.cpu_milli) * used_nodes).geq(cpu_used.clone()));
        used_nodes
    }

    /// Every task of each shape placed (power: exactly the heuristic's placed tasks), or
    /// at most all of them (allocation).
    fn add_demand_rows(&mut self, shapes: &Shapes, objective: Objective) {
        for (shape, placed) in shapes.shapes.iter().zip(std::mem::take(&mut self.placed)) {
            let count = shape.count() as f64;
            self.rows.push(match objective {
                Objective::Power => placed.eq(count),
                _ => placed.leq(count),
            });
        }
    }

    /// The HiGHS problem: least power (its constant carried by a fixed variable) or most
    /// allocated GPU milli.
    fn into_problem(self, objective: Objective) -> HighsProblem {
        let mut vars = self.vars;
        let unsolved = match objective {
            Objective::Power => {
                let one = vars.add(variable().integer().min(1.0).max(1.0));
                vars.minimise(self.power + self.power_constant * one)
            }
            _ => vars.maximise(self.allocated),
        };
        let mut problem = unsolved.using(good_lp::highs);
        for row in self.rows {
            problem.add_constraint(row);
        }
        problem
    }
}
