//! Path relinking: from one placement toward another, one task at a time.
//!
//! Tasks of one shape are interchangeable, so the walk heads for the target's count of
//! each shape on each node: every move takes a task of a shape off a node that holds more
//! of it than the target does and puts it on one that holds fewer. Of those moves it makes
//! the one of least `ΔF + λ·ΔP`, with `λ` the slope of the chord between the two
//! placements (milli-GPU per W): moves that do better than the chord come first, so the
//! placements passed through bend below it. It stops at the target, when no such move
//! fits, or after `max_moves` (a count: the walk is deterministic).

use std::collections::BTreeSet;

use gapbench_model::Placement;

use super::moves::Delta;
use super::staircase::Staircase;
use super::walk::{replay, Move, Walk};
use crate::eval::state_of;

/// The best removal or insertion so far: `(value, node, task or devices)`, best two nodes.
type BestTwo<T> = Vec<(f64, u32, T)>;

fn offer<T: Copy>(best: &mut BestTwo<T>, value: f64, node: u32, item: T) {
    if best.iter().any(|b| b.1 == node && b.0 <= value) {
        return;
    }
    best.retain(|b| b.1 != node);
    best.push((value, node, item));
    best.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    best.truncate(2);
}

impl Walk<'_> {
    /// Relinks toward `target` (a placement of the same tasks); returns the non-dominated
    /// placements passed through (the start included), at most `keep`.
    pub fn relink(
        mut self,
        target: &[Option<Placement>],
        max_moves: usize,
        keep: usize,
    ) -> Vec<(i64, f64, Vec<Option<Placement>>)> {
        let shapes = self.representatives.len();
        let nodes = self.hosted.len();
        // Tasks of each shape per node: now and in the target.
        let mut have = vec![vec![0i64; shapes]; nodes];
        let mut want = vec![vec![0i64; shapes]; nodes];
        for (t, (now, then)) in self.placement.iter().zip(target).enumerate() {
            let Some(s) = self.shape_of[t] else { continue };
            if let Some(p) = now {
                have[p.node as usize][s] += 1;
            }
            if let Some(p) = then {
                want[p.node as usize][s] += 1;
            }
        }
        let mut surplus: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); shapes];
        let mut deficit: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); shapes];
        for n in 0..nodes {
            for s in 0..shapes {
                let node = n as u32;
                match have[n][s].cmp(&want[n][s]) {
                    std::cmp::Ordering::Greater => surplus[s].insert(node),
                    std::cmp::Ordering::Less => deficit[s].insert(node),
                    std::cmp::Ordering::Equal => false,
                };
            }
        }
        let slope = self.chord_slope(target);
        let start = self.placement.clone();
        let mut staircase = Staircase::default();
        staircase.offer(self.watts, self.frag_milli, 0);
        let mut log: Vec<(usize, Placement)> = Vec::new();
        while log.len() < max_moves {
            let Some(chosen) = self.best_relinking_move(&surplus, &deficit, slope) else {
                break;
            };
            let s = self.shape_of[chosen.task].expect("a relinked task has a shape");
            let from = self.placement[chosen.task].expect("a relinked task is placed");
            self.apply(chosen);
            log.push((chosen.task, chosen.to));
            staircase.offer(self.watts, self.frag_milli, log.len());
            for (node, change) in [(from.node, -1), (chosen.to.node, 1)] {
                let n = node as usize;
                have[n][s] += change;
                surplus[s].remove(&node);
                deficit[s].remove(&node);
                if have[n][s] > want[n][s] {
                    surplus[s].insert(node);
                } else if have[n][s] < want[n][s] {
                    deficit[s].insert(node);
                }
            }
        }
        replay(start, &log, &staircase, keep)
    }

    /// The milli-GPU of fragmentation the target saves per watt it adds (0 if none).
    fn chord_slope(&mut self, target: &[Option<Placement>]) -> f64 {
        let state = state_of(self.snapshot.cluster, self.snapshot.tasks, target);
        let (mut watts, mut frag) = (0i64, 0.0);
        for node in 0..self.hosted.len() as u32 {
            let cost = self.costs.of(node, state.node(node));
            watts += cost.watts;
            frag += cost.frag_milli;
        }
        let (added_watts, saved_frag) = ((watts - self.watts) as f64, self.frag_milli - frag);
        if added_watts > 0.0 && saved_frag > 0.0 {
            saved_frag / added_watts
        } else {
            0.0
        }
    }

    /// The move of least `ΔF + slope·ΔP` of a task off a `surplus` node of its shape onto a
    /// `deficit` node of it.
    fn best_relinking_move(
        &self,
        surplus: &[BTreeSet<u32>],
        deficit: &[BTreeSet<u32>],
        slope: f64,
    ) -> Option<Move> {
        let value = |d: &Delta| d.frag_milli + slope * d.watts as f64;
        let mut best: Option<(f64, Move)> = None;
        for s in 0..surplus.len() {
            if surplus[s].is_empty() || deficit[s].is_empty() {
                continue;
            }
            let mut removals: BestTwo<(usize, Delta)> = Vec::new();
            for &node in &surplus[s] {
                for &(task, delta) in &self.moves[node as usize].removals {
                    if self.shape_of[task] == Some(s) {
                        offer(&mut removals, value(&delta), node, (task, delta));
                    }
                }
            }
            let mut insertions: BestTwo<(gapbench_model::DeviceSet, Delta)> = Vec::new();
            for &node in &deficit[s] {
                for &(devices, delta) in &self.moves[node as usize].insertions[s] {
                    offer(&mut insertions, value(&delta), node, (devices, delta));
                }
            }
            for &(removal_value, from, (task, removal)) in &removals {
                for &(insertion_value, node, (devices, insertion)) in &insertions {
                    let total = removal_value + insertion_value;
                    if node == from || best.as_ref().is_some_and(|b| b.0 <= total) {
                        continue;
                    }
                    let delta = Delta {
                        frag_milli: removal.frag_milli + insertion.frag_milli,
                        watts: removal.watts + insertion.watts,
                    };
                    let to = Placement { node, devices };
                    best = Some((total, Move { task, to, delta }));
                }
            }
        }
        best.map(|(_, m)| m)
    }
}
