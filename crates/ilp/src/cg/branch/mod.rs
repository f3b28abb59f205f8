//! Branch and price: closes the integrality gap that column generation leaves when its LP
//! bound is proven and the integer phase found no placement at that bound
//! ([`branch_and_price`], depth first, on the clock a solve has left), or raises a power
//! bound towards the least power of integer wake-ups ([`integer_bound`], best first,
//! under work limits: the same bound on every run).
//!
//! Branching is on aggregated counts, which pricing can take as prices (Vanderbeck's
//! aggregate branching, as in cutting stock), never on one column's `λ_c` (its down branch
//! would need pricing to skip a known configuration):
//! - nodes at work, of all types, `Σ_c λ_c ≤ k` or `≥ k + 1`, first whenever fractional
//!   (a sleeping cluster's LP wakes a fraction of a node, often spread over types of about
//!   the same power, where no one type's row moves the bound), and nodes of type `τ` at
//!   work, `Σ_{c∈τ} λ_c`: the row's dual `σ` charges every non-empty configuration, so when
//!   `σ > 0` pricing looks for the best non-empty one;
//! - CPU sockets at work on nodes of type `τ`, `Σ_{c∈τ} sockets_c·λ_c` (power only: an
//!   always-on LP keeps a fraction of a socket at work): the dual is a price per socket,
//!   added to pricing's value of each CPU level
//!   ([`crate::node_value::NodeValue::with_socket_dual`]);
//! - tasks of shape `s` on nodes of type `τ`, `Σ_{c∈τ} a_{s,c}·λ_c ≤ k` or `≥ k + 1`: the
//!   dual adds to the price of `s` when type `τ` is priced.
//!
//! Pricing in a tree node goes through
//! [`super::pricing::PricingContext::price_in_tree`], which takes the rows' duals.
//!
//! Every tree node re-solves its master LP (the pool's columns, the branching rows, and an
//! artificial column per `=`/`≥` row at a prohibitive cost, so it always has a solution)
//! with pricing, and its bound is the best Lagrangian bound reached there, valid whether
//! or not pricing finished: dualising every row but the convexity rows,
//!
//! `z ≥ C₀ + Σ_s y_s·count_s + Σ_r σ_r·rhs_r + Σ_τ N_τ·min(0, ρ⁺_τ − κ_τ)`,
//!
//! with `y_s + Σ_{r on (τ,s)} σ_r` the prices of type `τ`, `κ_τ = Σ_{r on τ's node count} σ_r`
//! and `ρ⁺_τ` a lower bound on the least reduced cost of a non-empty configuration (the
//! least over all configurations when `κ_τ ≤ 0`). A node whose bound reaches the incumbent
//! is closed; an integral LP solution is a placement (expanded and checked like any other);
//! a node whose aggregates are all integral but whose `λ` is not cannot be split further by
//! these rows: the integer master over the pool gets a try at it, and if the incumbent
//! still lies above the node's bound, the node stays open and its bound is the tree's.
//! Depth first, the branch nearer the LP's value first. The tree's bound is the least over
//! its open and unexplored nodes (a child starts from its parent's bound), never below the
//! root's: it is what the solve reports.

use std::time::{Duration, Instant};

use highs::{Col, ColProblem, HighsModelStatus, Model, Row, Sense};

mod best_first;

pub(super) use self::best_first::{integer_bound, TreeLimits};

use super::column::{Added, Column, ColumnPool};
use super::incumbent::Incumbent;
use super::integer::solve_integer_master;
use super::problem::{CgStats, Problem};
use crate::model::Demand;
use crate::solve::{relative_gap, Objective};

/// The artificial penalty per unit of an uncovered row, as a multiple of the dearest
/// column (as in [`super::dive`]).
const PENALTY_FACTOR: f64 = 1e3;
/// What counts as fractional.
const TOLERANCE: f64 = 1e-6;
/// The integer master's time at a leaf whose aggregates are integral: this share of what
/// is left, at most [`LEAF_MASTER_S`].
const LEAF_MASTER_SHARE: f64 = 0.25;
const LEAF_MASTER_S: f64 = 5.0;

/// An aggregated count of the master's columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Aggregate {
    /// Nodes at work, of every type (many types of about the same power split one node
    /// between them: this row moves the bound where each type's alone barely does).
    AllNodes,
    /// Nodes of type `.0` at work.
    Nodes(usize),
    /// Tasks of shape `.1` on nodes of type `.0`.
    Tasks(usize, usize),
    /// CPU sockets at work on nodes of type `.0` (power only: pricing values sockets).
    Sockets(usize),
}

impl Aggregate {
    /// The column's coefficient in the aggregate.
    fn of(self, column: &Column) -> f64 {
        match self {
            Aggregate::AllNodes => 1.0,
            Aggregate::Nodes(t) => f64::from(u8::from(column.type_index == t)),
            Aggregate::Tasks(t, s) if column.type_index == t => column
                .counts
                .iter()
                .find(|&&(shape, _)| shape == s)
                .map_or(0.0, |&(_, n)| f64::from(n)),
            Aggregate::Tasks(..) => 0.0,
            Aggregate::Sockets(t) if column.type_index == t => f64::from(column.sockets),
            Aggregate::Sockets(_) => 0.0,
        }
    }
}

/// One branching decision: `aggregate ≤ bound` (`at_most`) or `≥ bound`.
#[derive(Debug, Clone, Copy)]
struct Branch {
    aggregate: Aggregate,
    at_most: bool,
    bound: f64,
}

/// A tree node waiting: its branching decisions and its parent's bound.
struct Pending {
    branches: Vec<Branch>,
    bound: f64,
}

/// Runs the tree from `root_bound` (the proven bound so far, minimisation inside) until
/// `deadline_s` on the problem's clock, improving `best` when it finds a better placement;
/// returns the tree's proven bound (minimisation inside), at least `root_bound`, which
/// meets the incumbent when every node was closed.
pub(super) fn branch_and_price(
    problem: &Problem,
    pool: &mut ColumnPool,
    best: &mut Incumbent,
    root_bound: f64,
    deadline_s: f64,
    stats: &mut CgStats,
) -> Result<f64, String> {
    let clock = Instant::now();
    let deadline = problem.clock + Duration::from_secs_f64(deadline_s.max(0.0));
    let mut stack = vec![Pending {
        branches: Vec::new(),
        bound: root_bound,
    }];
    // The least bound over the nodes left open (integral aggregates, or out of time).
    let mut open_bound = f64::INFINITY;
    let mut leaf_master_pool = 0;
    while let Some(node) = stack.pop() {
        if closed(problem, node.bound, best.value, &mut open_bound) {
            continue;
        }
        if Instant::now() >= deadline {
            open_bound = open_bound.min(node.bound);
            break;
        }
        stats.branch_nodes += 1;
        let limits = NodeLimits {
            deadline,
            scans: None,
            rounds: None,
        };
        let solved = solve_node(problem, pool, &node.branches, &limits)?;
        let bound = node.bound.max(solved.bound);
        if closed(problem, bound, best.value, &mut open_bound) {
            continue;
        }
        let Some(lambda) = solved.lambda else {
            // Out of time, or the pool cannot meet the rows yet: the node stays open.
            open_bound = open_bound.min(bound);
            continue;
        };
        match most_fractional(problem, pool, &lambda) {
            Some((aggregate, value)) => push_children(&mut stack, &node, aggregate, value, bound),
            None => {
                let integral = lambda
                    .iter()
                    .all(|&(_, l)| (l - l.round()).abs() <= TOLERANCE);
                if integral {
                    let uses: Vec<(usize, u32)> = lambda
                        .iter()
                        .filter(|&&(_, l)| l.round() >= 1.0)
                        .map(|&(c, l)| (c, l.round() as u32))
                        .collect();
                    consider(problem, pool, &uses, best)?;
                } else if pool.len() > leaf_master_pool {
                    leaf_master_pool = pool.len();
                    leaf_integer_master(problem, pool, best, deadline)?;
                }
                if !closed(problem, bound, best.value, &mut open_bound) {
                    open_bound = open_bound.min(bound);
                }
            }
        }
    }
    for node in &stack {
        open_bound = open_bound.min(node.bound);
    }
    stats.branch_seconds += clock.elapsed().as_secs_f64();
    Ok(open_bound.min(problem.sign * best.value).max(root_bound))
}

/// Branches `node` on `aggregate` at its fractional `value`: both children (of bound
/// `bound`) go on the stack, depth first, the nearer branch popped first.
fn push_children(
    stack: &mut Vec<Pending>,
    node: &Pending,
    aggregate: Aggregate,
    value: f64,
    bound: f64,
) {
    let down = Branch {
        aggregate,
        at_most: true,
        bound: value.floor(),
    };
    let up = Branch {
        aggregate,
        at_most: false,
        bound: value.ceil(),
    };
    let (first, second) = if value - value.floor() >= 0.5 {
        (up, down)
    } else {
        (down, up)
    };
    for branch in [second, first] {
        let mut branches = node.branches.clone();
        branches.push(branch);
        stack.push(Pending { branches, bound });
    }
}

/// Whether a node of bound `bound` (minimisation inside) needs no search: it holds
/// nothing better than `incumbent` (the objective's own sense), or nothing better than the
/// requested gap asks for — then its bound stays in `open_bound`, since it was not proven
/// beyond the incumbent.
fn closed(problem: &Problem, bound: f64, incumbent: f64, open_bound: &mut f64) -> bool {
    let inside = problem.sign * incumbent;
    let rounded = if problem.objective.integral() {
        (bound - 1e-6).ceil()
    } else {
        bound
    };
    let tolerance = 1e-6 * inside.abs().max(1.0);
    if rounded >= inside - tolerance {
        return true;
    }
    let within_gap = relative_gap(incumbent, problem.sign * rounded) <= problem.options.mip_rel_gap;
    if within_gap {
        *open_bound = open_bound.min(bound);
    }
    within_gap
}

/// Expands, checks and evaluates a solution; keeps it if it beats `best`.
fn consider(
    problem: &Problem,
    pool: &ColumnPool,
    uses: &[(usize, u32)],
    best: &mut Incumbent,
) -> Result<(), String> {
    let (placement, value) =
        problem.checked_placement(pool, uses, "a branch-and-price placement")?;
    if problem.sign * value < problem.sign * best.value {
        best.value = value;
        best.placement = placement;
        best.used_columns.extend(uses.iter().map(|&(c, _)| c));
    }
    Ok(())
}

/// The integer master over the whole pool, from the incumbent's columns when the pool
/// holds them (else from nothing), for a leaf the aggregates cannot split.
fn leaf_integer_master(
    problem: &Problem,
    pool: &ColumnPool,
    best: &mut Incumbent,
    deadline: Instant,
) -> Result<(), String> {
    let left = deadline
        .saturating_duration_since(Instant::now())
        .as_secs_f64();
    let time_limit_s = (left * LEAF_MASTER_SHARE).min(LEAF_MASTER_S);
    if time_limit_s < 0.05 {
        return Ok(());
    }
    let allowed = vec![true; pool.len()];
    let solved = solve_integer_master(
        pool,
        problem.context.types,
        &problem.shape_counts,
        problem.demand,
        &[],
        &allowed,
        problem.options,
        time_limit_s,
    )?;
    if let Some(integer) = solved {
        consider(problem, pool, &integer.uses, best)?;
    }
    Ok(())
}

/// The aggregate to branch on in `lambda`: the count of all nodes at work when it is
/// fractional, else the most fractional aggregate (nearest to ½), if any.
fn most_fractional(
    problem: &Problem,
    pool: &ColumnPool,
    lambda: &[(usize, f64)],
) -> Option<(Aggregate, f64)> {
    let types = problem.context.types.len();
    let shapes = problem.shape_counts.len();
    let mut nodes = vec![0.0; types];
    let mut sockets = vec![0.0; types];
    let mut tasks = vec![vec![0.0; shapes]; types];
    for &(c, l) in lambda {
        let column = &pool.columns[c];
        nodes[column.type_index] += l;
        sockets[column.type_index] += l * f64::from(column.sockets);
        for &(s, n) in &column.counts {
            tasks[column.type_index][s] += l * f64::from(n);
        }
    }
    // Sockets only where pricing values them (power's levels count them).
    let power = problem.objective == Objective::Power;
    let all_nodes = nodes.iter().sum();
    let candidates = std::iter::once((Aggregate::AllNodes, all_nodes))
        .chain((0..types).map(|t| (Aggregate::Nodes(t), nodes[t])))
        .chain(
            (0..types)
                .flat_map(|t| (0..shapes).map(move |s| (t, s)))
                .map(|(t, s)| (Aggregate::Tasks(t, s), tasks[t][s])),
        )
        .chain(
            (0..types)
                .filter(|_| power)
                .map(|t| (Aggregate::Sockets(t), sockets[t])),
        );
    let mut chosen: Option<(Aggregate, f64, f64)> = None;
    for (aggregate, value) in candidates {
        let fraction = value - value.floor();
        if fraction <= TOLERANCE || fraction >= 1.0 - TOLERANCE {
            continue;
        }
        // The count of all nodes at work first, whenever it is fractional.
        let distance = match aggregate {
            Aggregate::AllNodes => -1.0,
            _ => (fraction - 0.5).abs(),
        };
        if chosen.is_none_or(|(_, _, d)| distance < d - 1e-12) {
            chosen = Some((aggregate, value, distance));
        }
    }
    chosen.map(|(aggregate, value, _)| (aggregate, value))
}

/// A tree node's master LP after pricing.
struct SolvedNode {
    /// The node's best Lagrangian bound (minimisation inside, constant included).
    bound: f64,
    /// The last LP solution as `(pool index, λ)`, when it placed every task without an
    /// artificial column (`None` too when the time ran out first).
    lambda: Option<Vec<(usize, f64)>>,
}

/// A tree node's master: convexity rows, demand rows, the branching rows, the pool's
/// columns and one artificial column per row a solution may otherwise not meet.
struct NodeMaster<'b> {
    model: Option<Model>,
    convexity: Vec<Row>,
    demand: Vec<Row>,
    branches: &'b [Branch],
    branch_rows: Vec<Row>,
    /// Pool index per master column (`None`: artificial).
    pool_of: Vec<Option<usize>>,
    columns: Vec<Col>,
}

impl<'b> NodeMaster<'b> {
    fn new(problem: &Problem, pool: &ColumnPool, branches: &'b [Branch]) -> Result<Self, String> {
        let mut lp = ColProblem::default();
        let convexity: Vec<Row> = problem
            .type_nodes
            .iter()
            .map(|&n| lp.add_row(..=n as f64))
            .collect();
        let demand: Vec<Row> = problem
            .shape_counts
            .iter()
            .map(|&count| match problem.demand {
                Demand::Exactly => lp.add_row(count as f64..=count as f64),
                Demand::AtMost => lp.add_row(..=count as f64),
            })
            .collect();
        let branch_rows: Vec<Row> = branches
            .iter()
            .map(|b| {
                if b.at_most {
                    lp.add_row(..=b.bound)
                } else {
                    lp.add_row(b.bound..)
                }
            })
            .collect();
        let mut model = lp
            .try_optimise(Sense::Minimise)
            .map_err(|e| format!("HiGHS rejected a branch node's master: {e:?}"))?;
        if let Some(threads) = problem.options.threads {
            model
                .try_set_option("threads", threads as i32)
                .map_err(|e| format!("HiGHS option threads: {e:?}"))?;
        }
        let mut master = NodeMaster {
            model: Some(model),
            convexity,
            demand,
            branches,
            branch_rows,
            pool_of: Vec::new(),
            columns: Vec::new(),
        };
        let dearest = pool
            .columns
            .iter()
            .map(|c| c.cost.abs())
            .fold(1.0, f64::max);
        let penalty = PENALTY_FACTOR * dearest;
        if problem.demand == Demand::Exactly {
            for s in 0..master.demand.len() {
                master.add_artificial(master.demand[s], penalty)?;
            }
        }
        for (i, branch) in branches.iter().enumerate() {
            if !branch.at_most {
                master.add_artificial(master.branch_rows[i], penalty)?;
            }
        }
        for (i, column) in pool.columns.iter().enumerate() {
            master.add(column, i)?;
        }
        Ok(master)
    }

    fn add_artificial(&mut self, row: Row, penalty: f64) -> Result<(), String> {
        let model = self.model.as_mut().expect("master present between solves");
        let col = model
            .try_add_column(penalty, 0.0.., [(row, 1.0)])
            .map_err(|e| format!("HiGHS refused an artificial column: {e:?}"))?;
        self.pool_of.push(None);
        self.columns.push(col);
        Ok(())
    }

    fn add(&mut self, column: &Column, pool_index: usize) -> Result<(), String> {
        let model = self.model.as_mut().expect("master present between solves");
        let mut factors = vec![(self.convexity[column.type_index], 1.0)];
        factors.extend(
            column
                .counts
                .iter()
                .map(|&(s, n)| (self.demand[s], f64::from(n))),
        );
        for (branch, &row) in self.branches.iter().zip(&self.branch_rows) {
            let a = branch.aggregate.of(column);
            if a != 0.0 {
                factors.push((row, a));
            }
        }
        let col = model
            .try_add_column(column.cost, 0.0.., factors)
            .map_err(|e| format!("HiGHS refused a column: {e:?}"))?;
        self.pool_of.push(Some(pool_index));
        self.columns.push(col);
        Ok(())
    }
}

/// A node LP's duals with the signs the bound needs: shape duals non-positive where the
/// demand is `≤`, `≤` branching rows non-positive and `≥` ones non-negative.
struct SignedDuals {
    shapes: Vec<f64>,
    branches: Vec<f64>,
}

impl SignedDuals {
    fn of(problem: &Problem, branches: &[Branch], lp: &NodeDuals) -> SignedDuals {
        let mut shapes = lp.shapes.clone();
        if problem.demand == Demand::AtMost {
            for y in &mut shapes {
                *y = y.min(0.0);
            }
        }
        let branch_duals = branches
            .iter()
            .zip(&lp.branches)
            .map(|(b, &d)| if b.at_most { d.min(0.0) } else { d.max(0.0) })
            .collect();
        SignedDuals {
            shapes,
            branches: branch_duals,
        }
    }

    /// `C₀ + Σ_s y_s·count_s + Σ_b d_b·bound_b`: the node's bound before pricing adds
    /// each type's `N_τ·min(0, ρ_τ − charge_τ)`.
    fn bound_base(&self, problem: &Problem, branches: &[Branch]) -> f64 {
        problem.constant
            + self
                .shapes
                .iter()
                .zip(&problem.shape_counts)
                .map(|(y, &n)| y * n as f64)
                .sum::<f64>()
            + branches
                .iter()
                .zip(&self.branches)
                .map(|(b, d)| d * b.bound)
                .sum::<f64>()
    }

    /// Type `t`'s prices, what its node-count rows charge a non-empty node, and what its
    /// socket rows pay a socket at work.
    fn of_type(&self, branches: &[Branch], t: usize) -> TypeDuals {
        let mut duals = TypeDuals {
            prices: self.shapes.clone(),
            charge: 0.0,
            socket: 0.0,
        };
        for (b, &d) in branches.iter().zip(&self.branches) {
            match b.aggregate {
                Aggregate::AllNodes => duals.charge += d,
                Aggregate::Nodes(u) if u == t => duals.charge += d,
                Aggregate::Tasks(u, s) if u == t => duals.prices[s] += d,
                Aggregate::Sockets(u) if u == t => duals.socket += d,
                _ => {}
            }
        }
        duals
    }
}

/// What a tree node's rows make of one type's pricing: shape prices, the charge on a
/// non-empty node, and the price of a socket at work.
struct TypeDuals {
    prices: Vec<f64>,
    charge: f64,
    socket: f64,
}

impl TypeDuals {
    /// A column's reduced cost beyond its shape prices' (`reduced`): the rows' share.
    fn reduced(&self, column: &Column, reduced: f64) -> f64 {
        reduced - self.charge - self.socket * f64::from(column.sockets)
    }
}

/// The duals of a node's LP: per shape, per type's convexity row, per branching row.
struct NodeDuals {
    value: f64,
    lambda: Vec<f64>,
    shapes: Vec<f64>,
    convexity: Vec<f64>,
    branches: Vec<f64>,
}

impl NodeMaster<'_> {
    /// `None` when the time ran out first, or HiGHS ended without an optimum.
    fn solve(&mut self, deadline: Instant) -> Result<Option<NodeDuals>, String> {
        let left = deadline
            .saturating_duration_since(Instant::now())
            .as_secs_f64();
        if left <= 0.0 {
            return Ok(None);
        }
        let model = self.model.take().expect("master present between solves");
        let solved = super::master::solve_within(model, left, "a branch node's master")?;
        let status = solved.status();
        let result = match status {
            HighsModelStatus::Optimal => {
                let solution = solved.get_solution();
                let rows = solution.dual_rows();
                let (types, shapes) = (self.convexity.len(), self.demand.len());
                Ok(Some(NodeDuals {
                    value: solved.objective_value(),
                    lambda: solution.columns().to_vec(),
                    convexity: rows[..types].to_vec(),
                    shapes: rows[types..types + shapes].to_vec(),
                    branches: rows[types + shapes..].to_vec(),
                }))
            }
            // Out of time, or a status HiGHS leaves `Unknown` on a re-solve: the node stays
            // open at its parent's bound, so the tree's bound stays honest and the solve
            // keeps its incumbent and root bound.
            _ => Ok(None),
        };
        self.model = Some(Model::from(solved));
        result
    }
}

/// What stops a tree node's pricing: the clock (a safety net where `scans` is given), the
/// patterns one search may scan, and the pricing rounds of one node.
struct NodeLimits {
    deadline: Instant,
    scans: Option<u64>,
    rounds: Option<usize>,
}

/// Solves a tree node's master LP with exact pricing until no column improves it (or a
/// limit); its bound is the best Lagrangian bound on the way.
fn solve_node(
    problem: &Problem,
    pool: &mut ColumnPool,
    branches: &[Branch],
    limits: &NodeLimits,
) -> Result<SolvedNode, String> {
    let context = &problem.context;
    let types = context.types;
    let deadline = limits.deadline;
    let mut master = NodeMaster::new(problem, pool, branches)?;
    let mut bound = f64::NEG_INFINITY;
    let mut rounds = 0;
    loop {
        rounds += 1;
        let Some(lp) = master.solve(deadline)? else {
            return Ok(SolvedNode {
                bound,
                lambda: None,
            });
        };
        let duals = SignedDuals::of(problem, branches, &lp);
        let mut bound_now = duals.bound_base(problem, branches);
        let tolerance = 1e-9 * (problem.constant + lp.value).abs().max(1.0);
        let mut improving = Vec::new();
        for (t, kind) in types.iter().enumerate() {
            let row_duals = duals.of_type(branches, t);
            let prices = &row_duals.prices;
            let start = pool.best_of_type(t, prices, 1).first().copied().cloned();
            let priced = context.price_in_tree(
                t,
                prices,
                start.as_ref(),
                deadline,
                limits.scans,
                row_duals.charge > 0.0,
                row_duals.socket,
            )?;
            let rho = priced.lower_bound + kind.wake_cost;
            bound_now += kind.nodes as f64 * (rho - row_duals.charge).min(0.0);
            if let Some((column, reduced)) = priced.best {
                if row_duals.reduced(&column, reduced) - lp.convexity[t] < -tolerance {
                    improving.push(column);
                }
            }
        }
        bound = bound.max(bound_now);
        let mut added = false;
        for column in improving {
            if let Added::New(i) | Added::Cheaper(i) = pool.add(column) {
                master.add(&pool.columns[i], i)?;
                added = true;
            }
        }
        let out_of_time = Instant::now() >= deadline;
        let out_of_rounds = limits.rounds.is_some_and(|most| rounds >= most);
        if !added || out_of_time || out_of_rounds {
            // Without a column to add, the LP is optimal where every pricing was proven;
            // either way its solution is what the node branches on (any split is valid).
            // Out of rounds, the last solution is a restricted master's: still a split.
            let lambda = if added && out_of_time {
                None
            } else {
                node_solution(&master, &lp.lambda)
            };
            return Ok(SolvedNode { bound, lambda });
        }
    }
}

/// `(pool index, λ)` of the pool columns `lambda` uses, twins added up; `None` when an
/// artificial column is in use.
fn node_solution(master: &NodeMaster, lambda: &[f64]) -> Option<Vec<(usize, f64)>> {
    let mut used: Vec<(usize, f64)> = Vec::new();
    for (kind, &l) in master.pool_of.iter().zip(lambda) {
        match kind {
            None if l > TOLERANCE => return None,
            Some(c) if l > 1e-9 => used.push((*c, l)),
            _ => {}
        }
    }
    used.sort_by_key(|&(c, _)| c);
    used.dedup_by(|later, kept| {
        let twin = later.0 == kept.0;
        if twin {
            kept.1 += later.1;
        }
        twin
    });
    Some(used)
}
