//! A walk along the power–fragmentation front by single-task moves.
//!
//! From a placement (the least-power one, or any found under a cap), the walk applies one
//! move at a time ([`super::moves`]), the best by its rule:
//!
//! - [`Toward::LessFrag`] (power at most `cap_watts`): a move that lowers `F` without
//!   raising `P` (or lowers `P` at the same `F`) first; else the one that lowers `F` at the
//!   fewest added watts per milli-GPU saved, `ΔP / −ΔF`, within the cap;
//! - [`Toward::LessPower`]: the mirror image, the fewest milli-GPU added per watt saved.
//!
//! Every move lowers `(F, P)` (resp. `(P, F)`) lexicographically, so the walk never
//! returns to a placement, and it stops after [`MOVES_PER_WALK`] moves at most (a count,
//! not a clock: the walk is deterministic). Each placement it passes through is a point;
//! those no other point of the walk dominates are kept ([`super::staircase`]).
//!
//! A move's cost is the sum of its removal's and its insertion's (they touch different
//! nodes), so the best move of a shape is found from the best removals and insertions by
//! change of power ([`Buckets`]): a move changes `P` by few distinct watts (a socket or a
//! device waking or sleeping).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use gapbench_model::{ClusterState, DeviceSet, Placement};

use super::cap_context::Measured;
use super::moves::{node_moves, Delta, NodeCosts, NodeMoves, Placed};
use super::staircase::Staircase;
use crate::eval::state_of;
use crate::shapes::Shapes;
use crate::snapshot::{check_assignment, Snapshot};

/// The most moves one walk makes, and the most placements it hands back.
const MOVES_PER_WALK: usize = 20_000;
const KEPT_PER_WALK: usize = 24;
/// A change of fragmentation smaller than this (milli-GPU) counts as none.
const FRAG_EPSILON: f64 = 1e-6;

/// Which cost a walk lowers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Toward {
    LessFrag,
    LessPower,
}

/// A change of fragmentation, ordered (the bucket sets' key).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Milli(pub f64);

impl Eq for Milli {}

impl PartialOrd for Milli {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Milli {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// By change of watts, the entries ordered by change of fragmentation, then node.
type Bucket<T> = BTreeMap<i64, BTreeSet<(Milli, u32, T)>>;

/// Every node's removals and insertions per shape, and moves within a node, by `ΔP`.
#[derive(Default)]
struct Buckets {
    removals: Vec<Bucket<usize>>,
    insertions: Vec<Bucket<DeviceSet>>,
    within: Bucket<(usize, DeviceSet)>,
}

fn insert<T: Ord>(bucket: &mut Bucket<T>, delta: Delta, node: u32, item: T) {
    bucket
        .entry(delta.watts)
        .or_default()
        .insert((Milli(delta.frag_milli), node, item));
}

fn remove<T: Ord>(bucket: &mut Bucket<T>, delta: Delta, node: u32, item: T) {
    if let Some(set) = bucket.get_mut(&delta.watts) {
        set.remove(&(Milli(delta.frag_milli), node, item));
        if set.is_empty() {
            bucket.remove(&delta.watts);
        }
    }
}

impl Buckets {
    fn new(shapes: usize) -> Self {
        Buckets {
            removals: (0..shapes).map(|_| Bucket::new()).collect(),
            insertions: (0..shapes).map(|_| Bucket::new()).collect(),
            within: Bucket::new(),
        }
    }

    /// Adds (`add`) or takes out one node's moves.
    fn update(&mut self, node: u32, moves: &NodeMoves, shape_of: &[Option<usize>], add: bool) {
        for &(task, delta) in &moves.removals {
            let Some(s) = shape_of[task] else { continue };
            if add {
                insert(&mut self.removals[s], delta, node, task);
            } else {
                remove(&mut self.removals[s], delta, node, task);
            }
        }
        for (s, choices) in moves.insertions.iter().enumerate() {
            for &(devices, delta) in choices {
                if add {
                    insert(&mut self.insertions[s], delta, node, devices);
                } else {
                    remove(&mut self.insertions[s], delta, node, devices);
                }
            }
        }
        for &(task, devices, delta) in &moves.within {
            if add {
                insert(&mut self.within, delta, node, (task, devices));
            } else {
                remove(&mut self.within, delta, node, (task, devices));
            }
        }
    }
}

/// A move: `task` to `to`, changing the costs by `delta`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Move {
    pub task: usize,
    pub to: Placement,
    pub delta: Delta,
}

/// How good a move is under a walk's rule (smaller is better), `None` if the rule does not
/// take it: class 0 for a move that lowers one cost and raises neither, class 1 for a
/// trade (the added cost per unit of the other saved).
fn rank(toward: Toward, delta: Delta, watts_room: i64) -> Option<(u8, f64, f64)> {
    let (df, dp) = (delta.frag_milli, delta.watts as f64);
    match toward {
        Toward::LessFrag => {
            if delta.watts > watts_room {
                None
            } else if (df < -FRAG_EPSILON && dp <= 0.0) || (df <= 0.0 && dp < 0.0) {
                Some((0, df, dp))
            } else if df < -FRAG_EPSILON {
                Some((1, dp / -df, df))
            } else {
                None
            }
        }
        Toward::LessPower => {
            if (dp < 0.0 && df <= 0.0) || (dp == 0.0 && df < -FRAG_EPSILON) {
                Some((0, dp, df))
            } else if dp < 0.0 {
                Some((1, df / -dp, dp))
            } else {
                None
            }
        }
    }
}

fn better(a: (u8, f64, f64), b: (u8, f64, f64)) -> bool {
    a.0 < b.0 || (a.0 == b.0 && (a.1 < b.1 || (a.1 == b.1 && a.2 < b.2)))
}

/// A placement being walked, with every node's moves.
pub(super) struct Walk<'a> {
    pub(super) snapshot: &'a Snapshot<'a>,
    pub(super) costs: NodeCosts<'a>,
    pub(super) shape_of: Vec<Option<usize>>,
    /// One task per shape, to test insertions with.
    pub(super) representatives: Vec<usize>,
    pub(super) placement: Vec<Option<Placement>>,
    pub(super) state: ClusterState,
    /// The tasks on each node, in the order they came.
    pub(super) hosted: Vec<Vec<usize>>,
    pub(super) moves: Vec<NodeMoves>,
    buckets: Buckets,
    pub(super) watts: i64,
    pub(super) frag_milli: f64,
}

impl<'a> Walk<'a> {
    /// Starts at `placement` (checked by the caller) of the snapshot's tasks.
    pub fn new(
        snapshot: &'a Snapshot<'a>,
        shapes: &Shapes,
        placement: Vec<Option<Placement>>,
    ) -> Walk<'a> {
        let cluster = snapshot.cluster;
        let mut costs = NodeCosts::new(cluster, snapshot.typical);
        let state = state_of(cluster, snapshot.tasks, &placement);
        let mut hosted = vec![Vec::new(); cluster.len()];
        for (t, p) in placement.iter().enumerate() {
            if let Some(p) = p {
                hosted[p.node as usize].push(t);
            }
        }
        let (mut watts, mut frag_milli) = (0, 0.0);
        for node in 0..cluster.len() as u32 {
            let cost = costs.of(node, state.node(node));
            watts += cost.watts;
            frag_milli += cost.frag_milli;
        }
        let mut walk = Walk {
            snapshot,
            costs,
            shape_of: shapes.shape_of_task(snapshot.tasks.len()),
            representatives: shapes.shapes.iter().map(|s| s.tasks[0]).collect(),
            placement,
            state,
            hosted,
            moves: Vec::new(),
            buckets: Buckets::new(shapes.shapes.len()),
            watts,
            frag_milli,
        };
        for node in 0..cluster.len() as u32 {
            let moves = walk.moves_of(node);
            walk.buckets.update(node, &moves, &walk.shape_of, true);
            walk.moves.push(moves);
        }
        walk
    }

    fn moves_of(&mut self, node: u32) -> NodeMoves {
        let placed = Placed {
            tasks: self.snapshot.tasks,
            placement: &self.placement,
            shape_of: &self.shape_of,
            representatives: &self.representatives,
        };
        node_moves(
            &mut self.costs,
            node,
            &self.state,
            &placed,
            &self.hosted[node as usize],
        )
    }

    /// Walks `toward` (power at most `cap_watts`) for at most `max_moves` moves; returns
    /// the non-dominated placements passed through (the start included), at most
    /// `keep` of them ([`Staircase::thinned`]).
    pub fn run(
        mut self,
        toward: Toward,
        cap_watts: i64,
        max_moves: usize,
        keep: usize,
    ) -> Vec<(i64, f64, Vec<Option<Placement>>)> {
        let start = self.placement.clone();
        let mut staircase = Staircase::default();
        staircase.offer(self.watts, self.frag_milli, 0);
        let mut log: Vec<(usize, Placement)> = Vec::new();
        while log.len() < max_moves {
            let Some(chosen) = self.best_move(toward, cap_watts - self.watts) else {
                break;
            };
            self.apply(chosen);
            log.push((chosen.task, chosen.to));
            staircase.offer(self.watts, self.frag_milli, log.len());
        }
        replay(start, &log, &staircase, keep)
    }

    /// The best move by `toward`'s rule that adds at most `watts_room` watts.
    fn best_move(&self, toward: Toward, watts_room: i64) -> Option<Move> {
        let mut best: Option<((u8, f64, f64), Move)> = None;
        let mut consider = |candidate: Move| {
            if let Some(r) = rank(toward, candidate.delta, watts_room) {
                if best.is_none_or(|(b, _)| better(r, b)) {
                    best = Some((r, candidate));
                }
            }
        };
        for (s, removals) in self.buckets.removals.iter().enumerate() {
            let insertions = &self.buckets.insertions[s];
            for (&removal_watts, removal_set) in removals {
                for (&insertion_watts, insertion_set) in insertions {
                    // The best pair on different nodes: among each side's best two.
                    let mut pair: Option<(f64, usize, Placement)> = None;
                    for &(Milli(rf), from, task) in removal_set.iter().take(2) {
                        for &(Milli(inf), node, devices) in insertion_set.iter().take(2) {
                            if node != from && pair.is_none_or(|p| rf + inf < p.0) {
                                pair = Some((rf + inf, task, Placement { node, devices }));
                            }
                        }
                    }
                    if let Some((frag_milli, task, to)) = pair {
                        consider(Move {
                            task,
                            to,
                            delta: Delta {
                                frag_milli,
                                watts: removal_watts + insertion_watts,
                            },
                        });
                    }
                }
            }
        }
        for (&watts, set) in &self.buckets.within {
            if let Some(&(Milli(frag_milli), node, (task, devices))) = set.iter().next() {
                consider(Move {
                    task,
                    to: Placement { node, devices },
                    delta: Delta { frag_milli, watts },
                });
            }
        }
        best.map(|(_, m)| m)
    }

    /// Moves the task, and rebuilds the moves of the two nodes it touched.
    pub(super) fn apply(&mut self, chosen: Move) {
        let task = &self.snapshot.tasks[chosen.task];
        let from = self.placement[chosen.task].expect("a walked task is placed");
        let mut touched = vec![from.node];
        if chosen.to.node != from.node {
            touched.push(chosen.to.node);
        }
        for &node in &touched {
            let cost = self.costs.of(node, self.state.node(node));
            self.watts -= cost.watts;
            self.frag_milli -= cost.frag_milli;
            let old = std::mem::replace(
                &mut self.moves[node as usize],
                NodeMoves {
                    removals: Vec::new(),
                    insertions: Vec::new(),
                    within: Vec::new(),
                },
            );
            self.buckets.update(node, &old, &self.shape_of, false);
        }
        self.state.release(task, from);
        self.state.bind(task, chosen.to);
        self.placement[chosen.task] = Some(chosen.to);
        let list = &mut self.hosted[from.node as usize];
        if let Some(at) = list.iter().position(|&t| t == chosen.task) {
            list.remove(at);
        }
        self.hosted[chosen.to.node as usize].push(chosen.task);
        for &node in &touched {
            let cost = self.costs.of(node, self.state.node(node));
            self.watts += cost.watts;
            self.frag_milli += cost.frag_milli;
            let moves = self.moves_of(node);
            self.buckets.update(node, &moves, &self.shape_of, true);
            self.moves[node as usize] = moves;
        }
    }
}

/// The placements after the steps of `log` (moves `(task, to)` from `start`) that
/// `staircase` keeps (its ids: moves made), at most `keep` ([`Staircase::thinned`]).
pub(super) fn replay(
    start: Vec<Option<Placement>>,
    log: &[(usize, Placement)],
    staircase: &Staircase,
    keep: usize,
) -> Vec<(i64, f64, Vec<Option<Placement>>)> {
    let mut steps = staircase.thinned(keep);
    steps.sort_by_key(|s| s.2);
    let mut placement = start;
    let mut done = 0;
    let mut kept = Vec::new();
    for (watts, frag, step) in steps {
        for &(task, to) in &log[done..step] {
            placement[task] = Some(to);
        }
        done = step;
        kept.push((watts, frag, placement.clone()));
    }
    kept
}

/// The placements a walk from `start` passes through that none of the others dominates
/// (at most [`KEPT_PER_WALK`]), each checked and measured, every one within `cap_watts`.
pub(super) fn walk_from(
    snapshot: &Snapshot,
    start: &[Option<Placement>],
    toward: Toward,
    cap_watts: f64,
) -> Result<Vec<Measured>, String> {
    let placed = (0..start.len()).filter(|&t| start[t].is_some());
    let shapes = Shapes::group(snapshot.tasks, placed)?;
    let walk = Walk::new(snapshot, &shapes, start.to_vec());
    // Integral watts: a cap of 1,000.7 W admits 1,000 W.
    let cap = if cap_watts.is_finite() {
        cap_watts.floor() as i64
    } else {
        i64::MAX / 4
    };
    checked_within(
        snapshot,
        walk.run(toward, cap, MOVES_PER_WALK, KEPT_PER_WALK),
        cap_watts,
    )
}

/// The placements of a walk, checked and measured, those within `cap_watts`.
pub(super) fn checked_within(
    snapshot: &Snapshot,
    walked: Vec<(i64, f64, Vec<Option<Placement>>)>,
    cap_watts: f64,
) -> Result<Vec<Measured>, String> {
    let mut found = Vec::new();
    for (_, _, placement) in walked {
        check_assignment(snapshot.cluster, snapshot.tasks, &placement)
            .map_err(|e| format!("a walked placement fails the checker: {e}"))?;
        let measured = Measured::of(snapshot, placement);
        if measured.power_watts <= cap_watts {
            found.push(measured);
        }
    }
    Ok(found)
}

/// The placements path relinking from `start` to `target` passes through that none of the
/// others dominates ([`Walk::relink`]), checked and measured.
pub(super) fn relink_from(
    snapshot: &Snapshot,
    start: &[Option<Placement>],
    target: &[Option<Placement>],
) -> Result<Vec<Measured>, String> {
    let placed = (0..start.len()).filter(|&t| start[t].is_some());
    let shapes = Shapes::group(snapshot.tasks, placed)?;
    let walk = Walk::new(snapshot, &shapes, start.to_vec());
    let relinked = walk.relink(target, MOVES_PER_WALK, KEPT_PER_WALK);
    checked_within(snapshot, relinked, f64::INFINITY)
}
