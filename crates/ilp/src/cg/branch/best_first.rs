//! Branch and price best first, under work limits: a lower bound on the integer optimum
//! (a power bound's integer wake-ups), the same on every run. The rows, the node masters
//! and their pricing are the parent module's.

use std::time::{Duration, Instant};

use super::super::column::ColumnPool;
use super::super::integer::solution_cost;
use super::super::problem::{CgStats, Problem};
use super::super::PowerTree;
use super::{most_fractional, push_children, solve_node, NodeLimits, Pending, TOLERANCE};

/// The work a best-first tree ([`integer_bound`]) may do: tree nodes, pricing rounds per
/// node and patterns per pricing search (the limits that make it the same on every run),
/// and a deadline on the problem's clock, a safety net.
#[derive(Debug, Clone, Copy)]
pub(in crate::cg) struct TreeLimits {
    pub max_nodes: usize,
    pub rounds_per_node: Option<usize>,
    pub scans: Option<u64>,
    pub deadline_s: f64,
}

/// A lower bound on the integer optimum by branch and price, best first: the open node
/// of least bound is solved next (the deepest of equal ones), so every node solved can
/// raise the tree's bound, the least over its open nodes. Integral LP solutions give
/// `incumbent` (minimisation inside, the value of a known integer solution, e.g. the warm
/// start's), which prunes. Nothing here reads the clock but the safety net: with
/// `scans` given, the same inputs give the same bound on every run. Returns the bound
/// (minimisation inside): the least over the nodes left open and the best integer
/// solution's value, at least `root_bound`; when the tree is closed, the integer optimum.
pub(in crate::cg) fn integer_bound(
    problem: &Problem,
    pool: &mut ColumnPool,
    mut incumbent: f64,
    root_bound: f64,
    limits: &TreeLimits,
    stats: &mut CgStats,
) -> Result<(f64, PowerTree), String> {
    let clock = Instant::now();
    let node_limits = NodeLimits {
        deadline: problem.clock + Duration::from_secs_f64(limits.deadline_s.max(0.0)),
        scans: limits.scans,
        rounds: limits.rounds_per_node,
    };
    let prunes = |bound: f64, incumbent: f64| bound >= incumbent - 1e-9 * incumbent.abs().max(1.0);
    let mut open = vec![Pending {
        branches: Vec::new(),
        bound: root_bound,
    }];
    // Nodes that cannot be split further (integral aggregates, fractional λ, or a master
    // the pool cannot meet yet): open for good, at their bound.
    let mut stuck = f64::INFINITY;
    let (mut nodes, mut out_of_time) = (0, false);
    loop {
        open.retain(|node| !prunes(node.bound, incumbent));
        let Some(next) = least_bound(&open) else {
            break;
        };
        if nodes >= limits.max_nodes {
            break;
        }
        if Instant::now() >= node_limits.deadline {
            out_of_time = true;
            break;
        }
        let node = open.swap_remove(next);
        nodes += 1;
        let solved = solve_node(problem, pool, &node.branches, &node_limits)?;
        let bound = node.bound.max(solved.bound);
        if prunes(bound, incumbent) {
            continue;
        }
        let Some(lambda) = solved.lambda else {
            stuck = stuck.min(bound);
            continue;
        };
        if let Some((aggregate, value)) = most_fractional(problem, pool, &lambda) {
            push_children(&mut open, &node, aggregate, value, bound);
            continue;
        }
        if lambda
            .iter()
            .all(|&(_, l)| (l - l.round()).abs() <= TOLERANCE)
        {
            let uses: Vec<(usize, u32)> = lambda
                .iter()
                .filter(|&&(_, l)| l.round() >= 1.0)
                .map(|&(c, l)| (c, l.round() as u32))
                .collect();
            incumbent = incumbent.min(problem.constant + solution_cost(pool, &uses));
        }
        if !prunes(bound, incumbent) {
            stuck = stuck.min(bound);
        }
    }
    stats.branch_nodes += nodes;
    stats.branch_seconds += clock.elapsed().as_secs_f64();
    let open_bound = open.iter().map(|n| n.bound).fold(stuck, f64::min);
    let tree = PowerTree {
        nodes,
        closed: open.is_empty() && stuck == f64::INFINITY,
        out_of_time,
    };
    Ok((open_bound.min(incumbent).max(root_bound), tree))
}

/// The open node of least bound, the deepest (then the latest) among equal ones.
fn least_bound(open: &[Pending]) -> Option<usize> {
    (0..open.len()).min_by(|&a, &b| {
        let (x, y) = (&open[a], &open[b]);
        x.bound
            .total_cmp(&y.bound)
            .then(y.branches.len().cmp(&x.branches.len()))
            .then(b.cmp(&a))
    })
}
