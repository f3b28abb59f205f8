//! The *per-node device model*: the least fragmentation of placing exactly the tasks the
//! snapshot's heuristic placed, exact, on clusters small enough for it (sampled
//! sub-clusters), with the placement read back from its solution.
//!
//! Why: the device relaxation ([`super::pooled`]) pools CPU within a node type, so where
//! CPU strands devices on one node but not on the type as a whole (`gpuspec33`) its bound
//! stays below the optimum; and column generation's rounding does not always find the
//! optimum (8 nodes of `gpuspec33` at 50 % arrived: 8,955.2 where this model proves
//! 8,928.3). Keeping every node apart makes the program exact.
//!
//! For every node `n` (devices `G`, memory `M`, CPU levels `l` with `C_l` CPU used at most,
//! credits `c_l`, `g_l`, `multi_l` of [`crate::node_value::NodeValue`]) and every shape `s`
//! admitted on its type, maximise the credit `Σ_{n,l} [Σ_q g_l(1000 − load_q)·z_{nl,q} +
//! Σ_j (c_l + j·g_l(1000) + multi_l(j))·e_{nl,j}]` over non-negative integers:
//! - `x_{n,s}` tasks of shape `s` on `n`, every task somewhere: `Σ_n x_{n,s} = count_s`;
//! - `e_{nl,j} = 1` for the node's level `l` and its `j` fully free devices: `Σ_{l,j}
//!   e_{nl,j} = 1`;
//! - `z_{nl,q}` devices of `n` hold the share pattern `q` (`a_{m,q}` shares of `m` milli),
//!   at the node's level only: `Σ_q z_{nl,q} ≤ Σ_j (G − j)·e_{nl,j}`; its shares are its
//!   share tasks': `Σ_{l,q} a_{m,q}·z_{nl,q} = Σ_{s of size m} x_{n,s}`;
//! - every device holds shares, a whole task or nothing: `Σ_{l,q} z_{nl,q} +
//!   Σ_{s whole} gpus_s·x_{n,s} + Σ_{l,j} j·e_{nl,j} = G`;
//! - CPU, memory and the task count within the node: `Σ_s cpu_s·x_{n,s} ≤ Σ_{l,j}
//!   C_l·e_{nl,j}`, `Σ_s mem_s·x_{n,s} ≤ M`, `Σ_s x_{n,s} ≤ 1001`.
//!
//! A placement is a solution of its own credit (a node's level its first admissible), and
//! every solution is a placement (whole tasks on devices of their own, each pattern's
//! shares on one device) whose credit is at least the solution's, for a level that admits
//! the node's CPU is worth no more than its first admissible one. So the optimum is the
//! least fragmentation, HiGHS's dual bound a lower bound on it, and the placement read
//! back from any solution at most that solution's fragmentation. On the 8-node
//! sub-clusters of the openb traces it is solved in 1–8 s on 2 cores, most at the root;
//! HiGHS's presolve is off, for its probing took 24 of 28 s on one of them.

use std::time::Instant;

use good_lp::solvers::highs::HighsProblem;
use good_lp::{Expression, SolverModel, Variable};

use gapbench_model::state::MAX_TASKS_PER_NODE;
use gapbench_model::{DeviceSet, NodeId, Placement, MAX_GPUS_PER_NODE, MILLI_GPU_PER_GPU};

use super::{Frame, COLUMN_LIMIT, MIP_NODE_LIMIT};
use crate::eval::{frag_milli, state_of};
use crate::model::Columns;
use crate::shapes::{ShapeKind, Shapes};
use crate::snapshot::{check_assignment, Snapshot};
use crate::solve::{relative_gap, SolveReport, SolveStatus};
use crate::solve::{run_highs_within, HighsWork, Objective, RawStatus, SolveOptions};
use gapbench_results::best_known::meets;

/// The least fragmentation of the snapshot's placed tasks by the per-node device model
/// (see the module documentation): `optimal` with its placement where HiGHS closes it
/// within [`MIP_NODE_LIMIT`] nodes and the time limit, otherwise its dual bound and the
/// better of the placement it holds and the heuristic's (`time_limit`);
/// `unsupported` beyond [`COLUMN_LIMIT`] columns.
pub fn min_frag_by_devices(snapshot: &Snapshot, options: &SolveOptions) -> SolveReport {
    let clock = Instant::now();
    let mut report = solve(snapshot, options)
        .unwrap_or_else(|message| SolveReport::error(Objective::Frag, message, 0.0));
    report.solve_seconds = clock.elapsed().as_secs_f64();
    report
}

fn solve(snapshot: &Snapshot, options: &SolveOptions) -> Result<SolveReport, String> {
    let (cluster, typical) = (snapshot.cluster, snapshot.typical);
    let shapes = snapshot.checked_shapes(options, snapshot.placed_tasks())?;
    let heuristic_value = frag_milli(
        cluster,
        typical,
        &state_of(cluster, snapshot.tasks, &snapshot.heuristic),
    );
    let Some(frame) = Frame::new(cluster, typical, &shapes)
        .filter(|frame| frame.per_node_columns(snapshot, &shapes) <= COLUMN_LIMIT)
    else {
        let reason = format!("the per-node device model has more than {COLUMN_LIMIT} columns");
        return Ok(SolveReport::without_solution(
            Objective::Frag,
            SolveStatus::Unsupported(reason),
            0.0,
        ));
    };
    let (problem, layout) = Layout::build(&frame, snapshot, &shapes);
    // One thread: HiGHS's tree search on two workers was slower on these models (8 nodes
    // of `gpuspec33` at 80 and 100 %: 9.3 and 8.0 s against 7.8 and 6.1 s, 2 cores).
    let limits = SolveOptions {
        mip_rel_gap: 0.0,
        verbose: false,
        threads: Some(1),
        ..options.clone()
    };
    let work = HighsWork {
        max_nodes: MIP_NODE_LIMIT,
        presolve: false,
    };
    // From the heuristic's placement: HiGHS alone finds no solution at all in 30 s on some
    // 8-node sub-clusters (`gpushare40`, seed 43, 80 %).
    let start = frame.start(&layout, snapshot, &shapes, &snapshot.heuristic);
    let raw = run_highs_within(problem, start.as_deref(), &limits, work);
    let least_minus_credit =
        match (&raw.status, raw.bound) {
            (RawStatus::Error(message), _) => {
                return Err(format!("the per-node device model: {message}"))
            }
            (RawStatus::Infeasible, _) => return Err(
                "the per-node device model has no solution, yet the heuristic's placement is one"
                    .into(),
            ),
            (_, bound) => bound,
        };
    let bound =
        least_minus_credit.map(|b| Frame::fragmentation(typical, cluster, &shapes, -b).max(0.0));
    let mut best = (heuristic_value, snapshot.heuristic.clone());
    if let Some(columns) = &raw.columns {
        let placement = frame.placement(&layout, columns, snapshot, &shapes)?;
        check_assignment(cluster, snapshot.tasks, &placement)
            .map_err(|e| format!("the per-node device model's placement: {e}"))?;
        let value = frag_milli(
            cluster,
            typical,
            &state_of(cluster, snapshot.tasks, &placement),
        );
        // The model prices a node at a level its CPU admits, never above its first such
        // level: the placement is at least as good as HiGHS says its solution is.
        if let Some(least_minus_credit) = raw.objective {
            let said = Frame::fragmentation(typical, cluster, &shapes, -least_minus_credit);
            if value > said + 1e-6 * said.abs().max(1.0) {
                return Err(format!(
                    "the per-node device model's solution is worth {said}, its placement {value}"
                ));
            }
        }
        if value < best.0 {
            best = (value, placement);
        }
    }
    Ok(report(best, bound))
}

/// The report of `best` (fragmentation and placement) against `bound`.
fn report((value, placement): (f64, Vec<Option<Placement>>), bound: Option<f64>) -> SolveReport {
    let proven = bound.is_some_and(|b| meets(value, b));
    let bound = if proven {
        Some(value)
    } else {
        bound.map(|b| b.min(value))
    };
    SolveReport {
        objective: Objective::Frag,
        status: if proven {
            SolveStatus::Optimal
        } else {
            SolveStatus::TimeLimitWithIncumbent
        },
        incumbent: Some(value),
        bound,
        mip_gap: bound.map(|b| relative_gap(value, b)),
        solve_seconds: 0.0,
        placement,
        secondary_power_watts: None,
    }
}

impl Frame {
    /// Columns of the per-node model: per node its admitted shapes, and per level its
    /// patterns and free-device counts.
    fn per_node_columns(&self, snapshot: &Snapshot, shapes: &Shapes) -> usize {
        let cluster = snapshot.cluster;
        (0..cluster.len())
            .map(|n| {
                let node_type = cluster.node_type(n as u32);
                let t = self.kind_of(cluster.nodes[n].type_id as usize);
                let admitted = shapes
                    .shapes
                    .iter()
                    .filter(|s| s.max_per_node(node_type) > 0)
                    .count();
                let kind = &self.types[t];
                let per_level = self.patterns[t].len() + kind.gpus as usize + 1;
                admitted + kind.credit.levels.len() * per_level
            })
            .sum()
    }

    /// The index into `types` of cluster node type `type_id` (one with nodes).
    fn kind_of(&self, type_id: usize) -> usize {
        self.types
            .iter()
            .position(|kind| kind.type_id == type_id)
            .expect("every node's type has nodes")
    }
}

/// Where the program's variables are: each node's, and their columns, to read the
/// placement back from a solution.
struct Layout {
    columns: Columns,
    nodes: Vec<Node>,
}

impl Layout {
    /// The program, and its layout.
    fn build(frame: &Frame, snapshot: &Snapshot, shapes: &Shapes) -> (HighsProblem, Layout) {
        let cluster = snapshot.cluster;
        let mut columns = Columns::new();
        let mut credit = Expression::default();
        let mut placed = vec![Expression::default(); shapes.shapes.len()];
        let mut rows = Vec::new();
        let mut nodes = Vec::new();
        for n in 0..cluster.len() {
            let kind = frame.kind_of(cluster.nodes[n].type_id as usize);
            let (node, node_credit, node_rows) =
                frame.node(kind, shapes, &mut columns, &mut placed);
            credit += node_credit;
            rows.extend(node_rows);
            nodes.push(node);
        }
        let vars = std::mem::take(&mut columns.vars);
        let mut problem = vars.minimise(-credit).using(good_lp::highs);
        for (row, shape) in placed.into_iter().zip(&shapes.shapes) {
            problem.add_constraint(row.eq(shape.count() as f64));
        }
        for row in rows {
            problem.add_constraint(row);
        }
        (problem, Layout { columns, nodes })
    }
}

/// One node's variables: its kind (index into the frame's types), `(shape, x)` and
/// `(pattern, z)`.
struct Node {
    kind: usize,
    tasks: Vec<(usize, Variable)>,
    /// `z`, level-major: pattern `q` at level `l` is `patterns[l·Q + q]`, `Q` the kind's
    /// patterns.
    patterns: Vec<(usize, Variable)>,
    /// `e`, level-major: `j` fully free devices at level `l` is `free[l·(G + 1) + j]`.
    free: Vec<Variable>,
}

impl Frame {
    /// The variables of one node of kind `t`, its credit and its rows, its tasks added to
    /// `placed`.
    fn node(
        &self,
        t: usize,
        shapes: &Shapes,
        columns: &mut Columns,
        placed: &mut [Expression],
    ) -> (Node, Expression, Vec<good_lp::Constraint>) {
        let kind = &self.types[t];
        let (value, gpus) = (&kind.credit, f64::from(kind.gpus));
        let mut devices = Expression::default();
        let mut shares = vec![Expression::default(); self.sizes.len()];
        let (mut cpu, mut memory, mut count): (Expression, Expression, Expression) =
            Default::default();
        let mut tasks = Vec::new();
        for (s, shape) in shapes.shapes.iter().enumerate() {
            let most = shape.max_per_node(&kind.node_type);
            if most == 0 {
                continue;
            }
            let x = columns.integer(0.0, f64::from(most));
            tasks.push((s, x));
            placed[s] += x;
            cpu += f64::from(shape.cpu_milli) * x;
            memory += shape.memory_mib as f64 * x;
            count += x;
            match shape.kind() {
                ShapeKind::Share => shares[self.size_of(u32::from(shape.gpu_milli))] -= x,
                ShapeKind::Whole => devices += f64::from(shape.gpu_count) * x,
                ShapeKind::CpuOnly => {}
            }
        }
        let (mut credit, mut one_state, mut cpu_allowed): (Expression, Expression, Expression) =
            Default::default();
        let mut rows = Vec::new();
        let mut patterns = Vec::new();
        let mut free_devices = Vec::new();
        for (level, allowance) in value.levels.iter().enumerate() {
            let (mut at_level, mut room_at_level) = (Expression::default(), Expression::default());
            for (q, pattern) in self.patterns[t].iter().enumerate() {
                let z = columns.integer(0.0, gpus);
                patterns.push((q, z));
                credit += value.device(level, MILLI_GPU_PER_GPU - pattern.load_milli) * z;
                devices += z;
                at_level += z;
                for &(size, n) in &pattern.shares {
                    shares[size] += f64::from(n) * z;
                }
            }
            for free in 0..=kind.gpus {
                let e = columns.binary();
                free_devices.push(e);
                let node_credit = allowance.constant
                    + f64::from(free) * value.device(level, MILLI_GPU_PER_GPU)
                    + value.multi(level, free);
                credit += node_credit * e;
                devices += f64::from(free) * e;
                one_state += e;
                cpu_allowed += allowance.cpu_used_at_most as f64 * e;
                room_at_level += (gpus - f64::from(free)) * e;
            }
            rows.push(at_level.leq(room_at_level));
        }
        rows.extend(shares.into_iter().map(|row| row.eq(0.0)));
        rows.push(devices.eq(gpus));
        rows.push(one_state.eq(1.0));
        rows.push(cpu.leq(cpu_allowed));
        rows.push(memory.leq(kind.node_type.memory_mib as f64));
        rows.push(count.leq(f64::from(MAX_TASKS_PER_NODE)));
        let node = Node {
            kind: t,
            tasks,
            patterns,
            free: free_devices,
        };
        (node, credit, rows)
    }

    /// The index of a share size in `sizes` (every share shape's is there).
    fn size_of(&self, milli: u32) -> usize {
        self.sizes
            .binary_search(&milli)
            .expect("the frame's sizes are its share shapes'")
    }

    /// The placement of a solution (`values`, by column): on each node, each pattern's
    /// devices from device 0 on, whole tasks on the devices after them, and the share
    /// tasks in the patterns' slots of their size.
    fn placement(
        &self,
        layout: &Layout,
        values: &[f64],
        snapshot: &Snapshot,
        shapes: &Shapes,
    ) -> Result<Vec<Option<Placement>>, String> {
        let count = |v: Variable| values[layout.columns.col(v)].round().max(0.0) as u32;
        let unreal = |what: &str| format!("the per-node device model's solution {what}");
        let mut next_task = vec![0; shapes.shapes.len()];
        let mut placement = vec![None; snapshot.tasks.len()];
        for (n, node) in layout.nodes.iter().enumerate() {
            let gpus = self.types[node.kind].gpus as usize;
            let mut device = 0;
            // Open share slots: (device, share milli, shares left).
            let mut slots: Vec<(usize, u32, u32)> = Vec::new();
            for &(q, z) in &node.patterns {
                for _ in 0..count(z) {
                    for &(size, shares) in &self.patterns[node.kind][q].shares {
                        slots.push((device, self.sizes[size], shares));
                    }
                    device += 1;
                }
            }
            for &(s, x) in &node.tasks {
                let shape = &shapes.shapes[s];
                for _ in 0..count(x) {
                    let devices = match shape.kind() {
                        ShapeKind::CpuOnly => DeviceSet::EMPTY,
                        ShapeKind::Whole => {
                            let mut set = DeviceSet::EMPTY;
                            for _ in 0..shape.gpu_count {
                                if device >= gpus {
                                    return Err(unreal("uses more devices than a node has"));
                                }
                                set = set.with(device);
                                device += 1;
                            }
                            set
                        }
                        ShapeKind::Share => {
                            let milli = u32::from(shape.gpu_milli);
                            let slot = slots
                                .iter_mut()
                                .find(|slot| slot.1 == milli && slot.2 > 0)
                                .ok_or_else(|| unreal("has a share without a device"))?;
                            slot.2 -= 1;
                            DeviceSet::single(slot.0)
                        }
                    };
                    let task = *shape
                        .tasks
                        .get(next_task[s])
                        .ok_or_else(|| unreal("places more tasks of a shape than there are"))?;
                    next_task[s] += 1;
                    let node = n as NodeId;
                    placement[task] = Some(Placement { node, devices });
                }
            }
        }
        Ok(placement)
    }
}

impl Frame {
    /// The model's columns for `placement` (the warm start): each node at its first
    /// admissible level, with its tasks, its devices' patterns and its fully free devices;
    /// `None` where the placement is not one of the model's (a node not in the cluster, a
    /// task of a shape not admitted on its node, a pattern not enumerated).
    fn start(
        &self,
        layout: &Layout,
        snapshot: &Snapshot,
        shapes: &Shapes,
        placement: &[Option<Placement>],
    ) -> Option<Vec<f64>> {
        let nodes = layout.nodes.len();
        let shape_of = shapes.shape_of_task(snapshot.tasks.len());
        let mut counts = vec![vec![0u32; shapes.shapes.len()]; nodes];
        let mut cpu = vec![0u64; nodes];
        // Per node and device: the share sizes on it, and whether a whole task holds it.
        let mut shares = vec![vec![Vec::new(); MAX_GPUS_PER_NODE]; nodes];
        let mut whole = vec![[false; MAX_GPUS_PER_NODE]; nodes];
        for (task, at) in placement.iter().enumerate() {
            let (Some(at), Some(s)) = (at, *shape_of.get(task)?) else {
                continue;
            };
            let (node, shape) = (at.node as usize, &shapes.shapes[s]);
            if node >= nodes {
                return None;
            }
            counts[node][s] += 1;
            cpu[node] += u64::from(shape.cpu_milli);
            for device in at.devices.iter() {
                match shape.kind() {
                    ShapeKind::Share => {
                        shares[node][device].push(self.size_of(u32::from(shape.gpu_milli)))
                    }
                    _ => whole[node][device] = true,
                }
            }
        }
        let mut values = vec![0.0; layout.columns.len()];
        for (n, node) in layout.nodes.iter().enumerate() {
            let kind = &self.types[node.kind];
            let level = kind
                .credit
                .levels
                .iter()
                .position(|l| l.cpu_used_at_most >= cpu[n])?;
            let admitted: u32 = node.tasks.iter().map(|&(s, _)| counts[n][s]).sum();
            if admitted != counts[n].iter().sum::<u32>() {
                return None;
            }
            for &(s, x) in &node.tasks {
                values[layout.columns.col(x)] = f64::from(counts[n][s]);
            }
            let own = &self.patterns[node.kind];
            let mut free = 0;
            for device in 0..kind.gpus as usize {
                let mut sizes = std::mem::take(&mut shares[n][device]);
                if sizes.is_empty() {
                    free += usize::from(!whole[n][device]);
                    continue;
                }
                sizes.sort_unstable();
                let q = own.iter().position(|pattern| pattern.holds(&sizes))?;
                values[layout.columns.col(node.patterns[level * own.len() + q].1)] += 1.0;
            }
            let e = node.free[level * (kind.gpus as usize + 1) + free];
            values[layout.columns.col(e)] = 1.0;
        }
        Some(values)
    }
}
