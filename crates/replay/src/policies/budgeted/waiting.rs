//! The waiting tasks of a budgeted policy in the order an event round admits them, kept
//! from round to round, so that a round right after an arrival or a completion walks only
//! the head of a long queue instead of sorting all of it.
//!
//! Two sets: training jobs by admission key (solo time at the frugal configuration, then
//! task: a waiting job makes no progress, so its key does not change while it waits), and
//! the other tasks in queue order (they arrive in task order and are never undone). Each
//! set counts its waiting tasks per request shape, so that a walk stops once every shape
//! that waits was refused: no later task of a refused shape fits, since admission only
//! takes.
//!
//! The sets follow the engine's queue without reading all of it: tasks that arrived since
//! the last round are at the queue's tail; the tasks a round places leave them; a grid round
//! (which may undo and move anything) makes them stale, and the next event round reads the
//! whole queue once.

use std::collections::{BTreeSet, HashMap};

use super::round::{admission_key, ActiveJob};
use crate::policies::buddy::{Shape, ShapeKey};
use crate::policy::ReplayView;

/// Waiting tasks by walk order, with how many wait per shape.
#[derive(Debug, Clone, Default)]
pub(super) struct ShapedSet {
    /// (walk key, task): the admission key for jobs, 0 for the others (task order).
    order: BTreeSet<(u64, u32)>,
    shapes: HashMap<ShapeKey, u32>,
}

impl ShapedSet {
    fn insert(&mut self, key: u64, task: u32, shape: ShapeKey) {
        if self.order.insert((key, task)) {
            *self.shapes.entry(shape).or_insert(0) += 1;
        }
    }

    fn remove(&mut self, key: u64, task: u32, shape: ShapeKey) {
        if self.order.remove(&(key, task)) {
            let count = self.shapes.get_mut(&shape).expect("a counted shape");
            *count -= 1;
            if *count == 0 {
                self.shapes.remove(&shape);
            }
        }
    }

    fn clear(&mut self) {
        self.order.clear();
        self.shapes.clear();
    }

    /// Walks the tasks in order, offering each whose shape was not yet refused to `offer`
    /// (`true`: it was taken, and goes to `taken` with its walk key); stops once every
    /// waiting shape was refused.
    pub fn walk(
        &self,
        shape_of: impl Fn(u32) -> ShapeKey,
        mut offer: impl FnMut(u32) -> bool,
        taken: &mut Vec<(u64, u32)>,
    ) {
        let mut refused: Vec<ShapeKey> = Vec::new();
        for &(key, task) in &self.order {
            if refused.len() == self.shapes.len() {
                break;
            }
            let shape = shape_of(task);
            if refused.contains(&shape) {
                continue;
            }
            if offer(task) {
                taken.push((key, task));
            } else {
                refused.push(shape);
            }
        }
    }
}

/// The waiting training jobs and other tasks of a budgeted policy.
#[derive(Debug, Clone, Default)]
pub(super) struct WaitingIndex {
    pub jobs: ShapedSet,
    pub others: ShapedSet,
    /// Tasks `0..seen_arrived` had arrived at the last round.
    seen_arrived: usize,
    /// Whether the sets must be read again from the whole queue.
    stale: bool,
    /// Read the whole queue at every round (the tests compare with it).
    pub rebuild_every_round: bool,
}

impl WaitingIndex {
    /// After a grid round: its undos and moves change the queue in ways the sets do not
    /// follow.
    pub fn mark_stale(&mut self) {
        self.stale = true;
    }

    /// Brings the sets up to the queue of `view`.
    pub fn sync(&mut self, view: &ReplayView<'_>) {
        if self.stale || self.rebuild_every_round || self.seen_arrived == 0 {
            self.jobs.clear();
            self.others.clear();
            for &task in view.queue {
                self.insert(view, task);
            }
            self.stale = false;
        } else {
            // Arrivals since the last round joined the queue's tail, in task order.
            for &task in view.queue.iter().rev() {
                if (task as usize) < self.seen_arrived {
                    break;
                }
                self.insert(view, task);
            }
        }
        self.seen_arrived = view.arrived;
    }

    fn insert(&mut self, view: &ReplayView<'_>, task: u32) {
        let shape = admission_shape(view, task).key();
        match ActiveJob::of(view, task) {
            Some(job) => self.jobs.insert(admission_key(&job).0, task, shape),
            None => self.others.insert(0, task, shape),
        }
    }

    /// Takes out a waiting task that a round places (`key`: its walk key).
    pub fn remove(&mut self, view: &ReplayView<'_>, key: u64, task: u32) {
        let shape = admission_shape(view, task).key();
        let set = match view.jobs.of(task) {
            Some(_) => &mut self.jobs,
            None => &mut self.others,
        };
        set.remove(key, task, shape);
    }
}

/// The request a waiting task is admitted with: a training job's at its frugal GPU count,
/// any other task's as it is.
pub(super) fn admission_shape<'a>(view: &ReplayView<'a>, task: u32) -> Shape<'a> {
    let request = Shape::of(&view.tasks[task as usize].task);
    match view.jobs.of(task) {
        Some(job) => request.with_gpus(job.options[job.frugal_option].config.gpus),
        None => request,
    }
}
