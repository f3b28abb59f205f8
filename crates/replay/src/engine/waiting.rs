//! The waiting queue: tasks in queue order (what policies see), indexed by refusal class so
//! that a backfilling pass over a long queue costs O(classes), not O(waiting tasks).
//!
//! Every task in the queue has a rank that grows in queue order (`push_back` takes the next
//! rank above every other, `push_front` the next below), so a task is found by binary search
//! and each class keeps its own members ordered by rank.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use crate::policy::RefusalClass;

/// A class of waiting tasks (an index into [`WaitingQueue`]'s interned classes).
pub(super) type ClassId = u32;

#[derive(Debug, Clone)]
pub(super) struct WaitingQueue {
    /// Waiting tasks, in queue order.
    tasks: VecDeque<u32>,
    /// Per task (indexed by task): its rank (increasing along `tasks`) and class while it
    /// waits; a class of `None`: the policy promised nothing for it.
    entry: Vec<Option<(i64, Option<ClassId>)>>,
    next_back: i64,
    next_front: i64,
    classes: HashMap<RefusalClass, ClassId>,
    /// Waiting members of each class with any, by rank; tasks without a class under `None`.
    members: BTreeMap<Option<ClassId>, BTreeSet<(i64, u32)>>,
    /// Per class: the length of the engine's release log when the policy last refused it,
    /// while no member started since (see [`WaitingQueue::refused_at`]).
    refused_at: Vec<Option<usize>>,
}

impl WaitingQueue {
    /// An empty queue for tasks `0..task_count`.
    pub fn new(task_count: usize) -> WaitingQueue {
        WaitingQueue {
            tasks: VecDeque::new(),
            entry: vec![None; task_count],
            next_back: 0,
            next_front: 0,
            classes: HashMap::new(),
            members: BTreeMap::new(),
            refused_at: Vec::new(),
        }
    }

    pub fn tasks(&self) -> &VecDeque<u32> {
        &self.tasks
    }

    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    pub fn front(&self) -> Option<u32> {
        self.tasks.front().copied()
    }

    /// `task` joins at the tail.
    pub fn push_back(&mut self, task: u32, class: Option<RefusalClass>) {
        self.next_back += 1;
        self.tasks.push_back(task);
        self.enter(task, self.next_back, class);
    }

    /// `task` goes back to the head (an undone task).
    pub fn push_front(&mut self, task: u32, class: Option<RefusalClass>) {
        self.next_front -= 1;
        self.tasks.push_front(task);
        self.enter(task, self.next_front, class);
    }

    fn enter(&mut self, task: u32, rank: i64, class: Option<RefusalClass>) {
        let next_id = self.classes.len() as ClassId;
        let id = class.map(|class| *self.classes.entry(class).or_insert(next_id));
        if id == Some(next_id) {
            self.refused_at.push(None);
        }
        debug_assert!(
            self.entry[task as usize].is_none(),
            "task {task} waits once"
        );
        self.entry[task as usize] = Some((rank, id));
        self.members.entry(id).or_default().insert((rank, task));
    }

    /// Takes `task` out of the queue; false if it was not waiting.
    pub fn remove(&mut self, task: u32) -> bool {
        let Some((rank, id)) = self.entry[task as usize] else {
            return false;
        };
        let rank_of = |t: &u32| self.entry[*t as usize].map_or(i64::MAX, |(rank, _)| rank);
        let at = self
            .tasks
            .binary_search_by_key(&rank, rank_of)
            .expect("a waiting task's rank is in the queue");
        self.tasks.remove(at);
        self.entry[task as usize] = None;
        let members = self.members.get_mut(&id).expect("a waiting task's class");
        members.remove(&(rank, task));
        if members.is_empty() {
            self.members.remove(&id);
        }
        true
    }

    /// The refusal class of the waiting `task` (`None`: none, or not waiting).
    pub fn class_of(&self, task: u32) -> Option<ClassId> {
        self.entry[task as usize].and_then(|(_, class)| class)
    }

    /// Where the engine's release log stood when the policy last refused `class`, if no
    /// member of it started since: until a node released after that point could hold the
    /// request, the class is still refused ([`crate::policy::TimePolicy::refusal_class`]).
    pub fn refused_at(&self, class: ClassId) -> Option<usize> {
        self.refused_at[class as usize]
    }

    /// Records that `class` was refused with the release log `released` long (`None`: a
    /// member started, nothing is known).
    pub fn set_refused_at(&mut self, class: ClassId, released: Option<usize>) {
        self.refused_at[class as usize] = released;
    }

    /// The first waiting task of every class (and of the unclassed), as (rank, task, class).
    pub fn class_heads(&self) -> impl Iterator<Item = (i64, u32, Option<ClassId>)> + '_ {
        self.members.iter().filter_map(|(&class, members)| {
            members.first().map(|&(rank, task)| (rank, task, class))
        })
    }

    /// The first waiting task of `class` behind rank `after`, as (rank, task).
    pub fn next_of_class(&self, class: Option<ClassId>, after: i64) -> Option<(i64, u32)> {
        self.members
            .get(&class)?
            .range((after + 1, 0)..)
            .next()
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gapbench_model::Task;

    fn class(gpus: u8) -> Option<RefusalClass> {
        Some(RefusalClass::of_request(&Task::new(
            "t", 1000, 1024, gpus, 1000,
        )))
    }

    #[test]
    fn keeps_queue_order_and_class_members_through_pushes_and_removals() {
        let mut queue = WaitingQueue::new(20);
        queue.push_back(10, class(1));
        queue.push_back(11, class(2));
        queue.push_back(12, class(1));
        queue.push_front(13, None);
        queue.push_back(14, class(1));
        assert_eq!(
            queue.tasks().iter().copied().collect::<Vec<_>>(),
            [13, 10, 11, 12, 14]
        );
        let heads: Vec<u32> = queue.class_heads().map(|(_, task, _)| task).collect();
        let mut sorted = heads.clone();
        sorted.sort();
        assert_eq!(sorted, [10, 11, 13], "one head per class and the unclassed");

        assert!(queue.remove(12));
        assert!(!queue.remove(12), "a task leaves once");
        assert_eq!(
            queue.tasks().iter().copied().collect::<Vec<_>>(),
            [13, 10, 11, 14]
        );
        let (rank_10, _, class_1) = queue.class_heads().find(|h| h.1 == 10).unwrap();
        assert_eq!(
            queue.next_of_class(class_1, rank_10).map(|(_, t)| t),
            Some(14),
            "the removed member is skipped"
        );
        assert!(queue.remove(13) && queue.remove(11));
        assert_eq!(queue.class_heads().count(), 1, "empty classes have no head");
        assert_eq!(queue.front(), Some(10));
        assert_eq!(queue.len(), 2);
    }
}
