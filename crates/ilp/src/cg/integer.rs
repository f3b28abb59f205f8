//! Integer solutions (price-and-branch): the master over every generated column with
//! `λ_c ∈ ℤ≥0`, warm-started from the heuristic's own configurations, then expanded to
//! one placement per task.

use gapbench_model::{Cluster, Placement};
use highs::{ColProblem, HighsModelStatus, HighsSolutionStatus, Sense};

use super::column::{ColumnPool, TypeCluster};
use crate::model::Demand;
use crate::shapes::Shapes;
use crate::solve::SolveOptions;

/// The restricted integer master's answer.
pub(crate) struct IntegerMaster {
    /// Nodes per pool column.
    pub uses: Vec<(usize, u32)>,
    /// HiGHS stopped on its time limit.
    pub timed_out: bool,
}

/// Solves the integer master over `pool` from `start` (nodes per pool column, feasible).
/// `None` when HiGHS returns no solution (never worse than `start`: it is the warm start).
pub(crate) fn solve_integer_master(
    pool: &ColumnPool,
    types: &[TypeCluster],
    shape_counts: &[usize],
    demand: Demand,
    start: &[(usize, u32)],
    options: &SolveOptions,
    time_limit_s: f64,
) -> Result<Option<IntegerMaster>, String> {
    let mut problem = ColProblem::default();
    let convexity: Vec<_> = types
        .iter()
        .map(|t| problem.add_row(..=t.nodes as f64))
        .collect();
    let rows: Vec<_> = shape_counts
        .iter()
        .map(|&count| match demand {
            Demand::Exactly => problem.add_row(count as f64..=count as f64),
            Demand::AtMost => problem.add_row(..=count as f64),
        })
        .collect();
    for column in &pool.columns {
        let mut factors = vec![(convexity[column.type_index], 1.0)];
        factors.extend(column.counts.iter().map(|&(s, n)| (rows[s], f64::from(n))));
        let most = types[column.type_index].nodes as f64;
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
    let mut values = vec![0.0; pool.len()];
    for &(c, n) in start {
        values[c] = f64::from(n);
    }
    model
        .try_set_solution(Some(&values), None, None, None)
        .map_err(|e| format!("HiGHS refused the warm start: {e:?}"))?;
    let solved = model
        .try_solve()
        .map_err(|e| format!("HiGHS failed on the integer master: {e:?}"))?;
    let timed_out = matches!(
        solved.status(),
        HighsModelStatus::ReachedTimeLimit | HighsModelStatus::ReachedInterrupt
    );
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
    Ok(Some(IntegerMaster { uses, timed_out }))
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
