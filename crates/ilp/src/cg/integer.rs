//! Integer solutions (price-and-branch): the master over every generated column with
//! `λ_c ∈ ℤ≥0`, warm-started from the better of the heuristic's own configurations and a
//! rounding of the master LP, then expanded to one placement per task.

use std::time::Instant;

use gapbench_model::{Cluster, ClusterState, DeviceSet, Placement, Task};
use highs::{ColProblem, HighsSolutionStatus, Sense};

use super::column::{Added, ColumnPool, TypeCluster};
use super::greedy::choose_devices;
use super::pricing::PricingContext;
use crate::model::Demand;
use crate::shapes::Shapes;
use crate::solve::SolveOptions;

/// The restricted integer master's answer.
pub(crate) struct IntegerMaster {
    /// Nodes per pool column.
    pub uses: Vec<(usize, u32)>,
}

/// Solves the integer master over the `allowed` columns of `pool` from `start` (nodes per
/// pool column, feasible, allowed). `None` when HiGHS returns no solution (never worse than
/// `start`: it is the warm start).
#[allow(clippy::too_many_arguments)]
pub(crate) fn solve_integer_master(
    pool: &ColumnPool,
    types: &[TypeCluster],
    shape_counts: &[usize],
    demand: Demand,
    start: &[(usize, u32)],
    allowed: &[bool],
    options: &SolveOptions,
    time_limit_s: f64,
) -> Result<Option<IntegerMaster>, String> {
    solve_integer_master_capped(
        pool,
        types,
        shape_counts,
        demand,
        start,
        allowed,
        options,
        time_limit_s,
        None,
    )
}

/// [`solve_integer_master`] under a power cap row `Σ_c watts_c·n_c ≤ watts_left` when given
/// (the ε-constraint front, [`super::front`]; `start` must respect it).
#[allow(clippy::too_many_arguments)]
pub(crate) fn solve_integer_master_capped(
    pool: &ColumnPool,
    types: &[TypeCluster],
    shape_counts: &[usize],
    demand: Demand,
    start: &[(usize, u32)],
    allowed: &[bool],
    options: &SolveOptions,
    time_limit_s: f64,
    watts_left: Option<f64>,
) -> Result<Option<IntegerMaster>, String> {
    if pool.len() == 0 {
        return Ok(None);
    }
    let mut problem = ColProblem::default();
    let convexity: Vec<_> = types
        .iter()
        .map(|t| problem.add_row(..=t.nodes as f64))
        .collect();
    let power_cap = watts_left.map(|watts| problem.add_row(..=watts));
    let rows: Vec<_> = shape_counts
        .iter()
        .map(|&count| match demand {
            Demand::Exactly => problem.add_row(count as f64..=count as f64),
            Demand::AtMost => problem.add_row(..=count as f64),
        })
        .collect();
    for (column, &allowed) in pool.columns.iter().zip(allowed) {
        let mut factors = vec![(convexity[column.type_index], 1.0)];
        factors.extend(column.counts.iter().map(|&(s, n)| (rows[s], f64::from(n))));
        factors.extend(power_cap.map(|row| (row, column.watts)));
        // A column left out stays at 0 (presolve drops it).
        let most = if allowed {
            types[column.type_index].nodes as f64
        } else {
            0.0
        };
        problem.add_integer_column(column.cost, 0.0..=most, factors);
    }
    let mut model = problem
        .try_optimise(Sense::Minimise)
        .map_err(|e| format!("HiGHS rejected the integer master: {e:?}"))?;
    let set = |model: &mut highs::Model, name: &str, value: f64| {
        model
            .try_set_option(name, value)
            .map_err(|e| format!("HiGHS option {name}: {e:?}"))
    };
    set(&mut model, "time_limit", time_limit_s.max(0.01))?;
    set(&mut model, "mip_rel_gap", options.mip_rel_gap)?;
    if let Some(threads) = options.threads {
        model
            .try_set_option("threads", threads as i32)
            .map_err(|e| format!("HiGHS option threads: {e:?}"))?;
    }
    // A solution may name a column more than once (the repair opens nodes one by one).
    let mut values = vec![0.0; pool.len()];
    for &(c, n) in start {
        values[c] += f64::from(n);
    }
    model
        .try_set_solution(Some(&values), None, None, None)
        .map_err(|e| format!("HiGHS refused the warm start: {e:?}"))?;
    let solved = model
        .try_solve()
        .map_err(|e| format!("HiGHS failed on the integer master: {e:?}"))?;
    if solved.primal_solution_status() != HighsSolutionStatus::Feasible {
        return Ok(None);
    }
    let mut uses = Vec::new();
    for (c, &value) in solved.get_solution().columns().iter().enumerate() {
        let rounded = value.round();
        if (value - rounded).abs() > 1e-4 || rounded < 0.0 {
            return Err(format!("the integer master returned λ = {value}"));
        }
        if rounded > 0.0 {
            uses.push((c, rounded as u32));
        }
    }
    Ok(Some(IntegerMaster { uses }))
}

/// One placement per task (`task_count` tasks) from nodes per pool column: the nodes of
/// each type, in id order, take the type's columns in pool order; the tasks of each shape,
/// in arrival order, fill the columns' slots of that shape. Unplaced tasks stay `None`.
pub(crate) fn expand(
    cluster: &Cluster,
    types: &[TypeCluster],
    pool: &ColumnPool,
    shapes: &Shapes,
    uses: &[(usize, u32)],
    task_count: usize,
) -> Result<Vec<Option<Placement>>, String> {
    let mut free_nodes: Vec<Vec<u32>> = vec![Vec::new(); cluster.node_types.len()];
    for (n, node) in cluster.nodes.iter().enumerate().rev() {
        free_nodes[usize::from(node.type_id)].push(n as u32);
    }
    let mut next_task = vec![0usize; shapes.shapes.len()];
    let mut placement = vec![None; task_count];
    for &(c, n) in uses {
        let column = &pool.columns[c];
        let type_id = types[column.type_index].type_id;
        for _ in 0..n {
            let node = free_nodes[type_id].pop().ok_or_else(|| {
                format!(
                    "the integer master uses more nodes of {} than exist",
                    types[column.type_index].node_type().label()
                )
            })?;
            for &(s, devices) in &column.slots {
                let task = *shapes.shapes[s].tasks.get(next_task[s]).ok_or_else(|| {
                    "the integer master places more tasks of a shape than there are".to_string()
                })?;
                next_task[s] += 1;
                placement[task] = Some(Placement { node, devices });
            }
        }
    }
    Ok(placement)
}

/// Round and repair: a feasible integer solution near the master LP's. Every column keeps
/// `⌊λ_c⌋` nodes; the tasks left over (at most one node's worth per fractional column) are
/// packed first-fit-decreasing — onto a rounded or already opened node if one holds the
/// task, else onto a new node of the type where the task alone costs least — and each
/// node becomes a column. `None` when some task fits on no node left.
pub(crate) fn round_and_repair(
    context: &PricingContext,
    pool: &mut ColumnPool,
    lambda: &[(usize, f64)],
    demand: Demand,
    repair: Repair,
    deadline: Instant,
) -> Option<Vec<(usize, u32)>> {
    let Rounded {
        uses,
        mut nodes_left,
        tasks_left,
    } = round_down(context, pool, lambda);
    if demand == Demand::AtMost {
        return Some(uses);
    }
    let repairer = Repairer {
        context,
        best_fit: repair == Repair::LeastAdded,
    };
    // The rounded nodes take leftover tasks first, then empty nodes open: on a nearly full
    // cluster there are too few empty nodes for the leftovers alone.
    let mut open = repairer.rounded_nodes(pool, uses);
    for s in residual_tasks(context.shapes, &tasks_left) {
        if Instant::now() >= deadline {
            return None;
        }
        let chosen = repairer.best_open_node(&open, s);
        if !repairer.best_fit {
            if let Some((_, i, after)) = chosen {
                open[i] = after;
                continue;
            }
        }
        let fresh = repairer.cheapest_empty_node(&nodes_left, s);
        let opens_a_node = match (&chosen, &fresh) {
            (Some((added, _, _)), Some(node)) => node.cost < *added,
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (None, None) => return None,
        };
        if opens_a_node {
            let node = fresh.expect("an empty node takes the task");
            nodes_left[node.type_index] -= 1;
            open.push(node);
        } else {
            let (_, i, after) = chosen.expect("an open node takes the task");
            open[i] = after;
        }
    }
    let mut uses = Vec::with_capacity(open.len());
    for node in open {
        let column = context.column(node.type_index, node.slots).ok()?;
        let c = match pool.add(column) {
            Added::New(c) | Added::Cheaper(c) | Added::Known(c) => c,
        };
        uses.push((c, 1));
    }
    Some(uses)
}

/// The rounded-down part of a master LP solution, and what it leaves for the repair.
struct Rounded {
    /// Nodes per pool column, `⌊λ_c⌋` or fewer where nodes or tasks run out.
    uses: Vec<(usize, u32)>,
    /// Nodes of each type not used by `uses`.
    nodes_left: Vec<usize>,
    /// Tasks of each shape not placed by `uses`.
    tasks_left: Vec<usize>,
}

/// Keeps `⌊λ_c⌋` nodes of each column, in pool order, as far as the nodes of its type and
/// the tasks of its shapes still allow (the LP may over-cover an `AtMost` row).
fn round_down(context: &PricingContext, pool: &ColumnPool, lambda: &[(usize, f64)]) -> Rounded {
    let mut uses: Vec<(usize, u32)> = Vec::new();
    let mut nodes_left: Vec<usize> = context.types.iter().map(|t| t.nodes).collect();
    let mut left: Vec<usize> = context.shapes.shapes.iter().map(|s| s.count()).collect();
    let mut floors: Vec<(usize, u32)> = lambda
        .iter()
        .map(|&(c, l)| (c, (l + 1e-6).floor() as u32))
        .filter(|&(_, n)| n > 0)
        .collect();
    floors.sort_unstable();
    for (c, n) in floors {
        let column = &pool.columns[c];
        let n = (n as usize).min(nodes_left[column.type_index]);
        let n = column
            .counts
            .iter()
            .fold(n, |n, &(s, a)| n.min(left[s] / a as usize));
        if n == 0 {
            continue;
        }
        nodes_left[column.type_index] -= n;
        for &(s, a) in &column.counts {
            left[s] -= n * a as usize;
        }
        uses.push((c, n as u32));
    }
    Rounded {
        uses,
        nodes_left,
        tasks_left: left,
    }
}

/// The residual tasks (one shape index per task), largest first (GPU milli, then CPU), as
/// first-fit-decreasing packs them.
fn residual_tasks(shapes: &Shapes, tasks_left: &[usize]) -> Vec<usize> {
    let mut residual: Vec<usize> = Vec::new();
    for (s, &n) in tasks_left.iter().enumerate() {
        residual.extend(std::iter::repeat_n(s, n));
    }
    residual.sort_by_key(|&s| {
        let shape = &shapes.shapes[s];
        (
            std::cmp::Reverse(shape.total_gpu_milli()),
            std::cmp::Reverse(shape.cpu_milli),
            s,
        )
    });
    residual
}

/// One node of the repair: rounded from a column, or opened for a residual task.
struct Open {
    type_index: usize,
    state: ClusterState,
    slots: Vec<(usize, DeviceSet)>,
    /// The node's cost relative to the empty node.
    cost: f64,
    /// The pool column the node still is (the repair has not touched it): its twins
    /// would take a task at the same cost, so only the first is tried.
    column: Option<usize>,
}

/// The repair's placement rules for one residual task at a time.
struct Repairer<'c, 'a> {
    context: &'c PricingContext<'a>,
    /// [`Repair::LeastAdded`]: every open node is tried, and an empty one competes.
    best_fit: bool,
}

impl Repairer<'_, '_> {
    /// The representative task of shape `s` (every task of a shape binds alike).
    fn task_of(&self, s: usize) -> &Task {
        &self.context.tasks[self.context.shapes.shapes[s].tasks[0]]
    }

    /// One open node per rounded node, each with its column's slots bound.
    fn rounded_nodes(&self, pool: &ColumnPool, uses: Vec<(usize, u32)>) -> Vec<Open> {
        let mut open: Vec<Open> = Vec::new();
        for (c, n) in uses {
            let column = &pool.columns[c];
            let mut state = ClusterState::empty(&self.context.types[column.type_index].one_node);
            for &(s, devices) in &column.slots {
                state.bind(self.task_of(s), Placement { node: 0, devices });
            }
            for _ in 0..n {
                open.push(Open {
                    type_index: column.type_index,
                    state: state.clone(),
                    slots: column.slots.clone(),
                    cost: column.cost,
                    column: Some(c),
                });
            }
        }
        open
    }

    /// The devices a task of shape `s` would take on `node`, if it fits.
    fn devices_on(&self, node: &Open, s: usize) -> Option<DeviceSet> {
        let kind = &self.context.types[node.type_index];
        if !node.state.fits(&kind.one_node, 0, self.task_of(s)) {
            return None;
        }
        let shape = &self.context.shapes.shapes[s];
        choose_devices(&node.state.nodes[0], shape.kind(), shape)
    }

    /// `node` with the task on `devices`: its state, slots and cost.
    fn with_task(&self, node: &Open, s: usize, devices: DeviceSet) -> Open {
        let shapes = self.context.shapes;
        let mut state = node.state.clone();
        state.bind(self.task_of(s), Placement { node: 0, devices });
        let mut slots = node.slots.clone();
        slots.push((s, devices));
        let allocated: u64 = slots
            .iter()
            .map(|&(s, _)| u64::from(shapes.shapes[s].total_gpu_milli()))
            .sum();
        let kind = &self.context.types[node.type_index];
        let cost = kind.relative_cost(
            self.context.typical,
            self.context.objective,
            &state,
            allocated,
        );
        Open {
            type_index: node.type_index,
            state,
            slots,
            cost,
            column: None,
        }
    }

    /// The best node already open for a task of shape `s`: (added cost, index, the node
    /// with the task); the first that fits unless [`Self::best_fit`].
    fn best_open_node(&self, open: &[Open], s: usize) -> Option<(f64, usize, Open)> {
        let mut chosen: Option<(f64, usize, Open)> = None;
        let mut tried_columns = std::collections::HashSet::new();
        for (i, node) in open.iter().enumerate() {
            if node.column.is_some_and(|c| !tried_columns.insert(c)) {
                continue;
            }
            let Some(devices) = self.devices_on(node, s) else {
                continue;
            };
            let after = self.with_task(node, s, devices);
            let added = after.cost - node.cost;
            if chosen.as_ref().is_none_or(|(best, _, _)| added < *best) {
                chosen = Some((added, i, after));
            }
            if !self.best_fit {
                break;
            }
        }
        chosen
    }

    /// The cheapest empty node (of a type with nodes left) that takes the task alone.
    fn cheapest_empty_node(&self, nodes_left: &[usize], s: usize) -> Option<Open> {
        let mut fresh: Option<Open> = None;
        for (t, kind) in self.context.types.iter().enumerate() {
            if nodes_left[t] == 0 {
                continue;
            }
            let empty = Open {
                type_index: t,
                state: ClusterState::empty(&kind.one_node),
                slots: Vec::new(),
                cost: 0.0,
                column: None,
            };
            let Some(devices) = self.devices_on(&empty, s) else {
                continue;
            };
            let node = self.with_task(&empty, s, devices);
            if fresh.as_ref().is_none_or(|best| node.cost < best.cost) {
                fresh = Some(node);
            }
        }
        fresh
    }
}

/// Where the repair puts a leftover task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Repair {
    /// On the first node (rounded, then opened) it fits.
    FirstFit,
    /// Where it adds the least cost, an empty node included (for power: a socket or a
    /// device already awake costs nothing more).
    LeastAdded,
}

/// `Σ_c cost_c·n_c` of a solution given as nodes per pool column.
pub(crate) fn solution_cost(pool: &ColumnPool, uses: &[(usize, u32)]) -> f64 {
    uses.iter()
        .map(|&(c, n)| f64::from(n) * pool.columns[c].cost)
        .sum()
}
