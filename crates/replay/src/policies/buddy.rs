//! Buddy placement on real nodes [D, after ElasticFlow's idea, time-and-budgets §3.4]: the
//! device selector of the budgeted policies and their FIFO baselines.
//!
//! - A job of `2^k` whole GPUs goes to the node of an allowed GPU model with CPU, memory and
//!   at least `2^k` fully free devices that has the fewest fully free devices (best fit:
//!   big free blocks stay whole), ties to the node priority order; there it takes an aligned
//!   free block of `2^k` devices, preferring one whose buddy is partly used (splitting a
//!   whole larger block only when needed), else the lowest free devices.
//! - A task sharing a GPU goes best-fit to the device with the least free milli-GPU that
//!   holds it (a partly used leaf before a whole free one), ties to node priority and device.
//! - A CPU-only task takes the first node in priority order with room.
//! - A job already running keeps its devices when its GPU count is unchanged, shrinks
//!   within them, and grows into the aligned block around them when that block is free.
//!
//! [`Planner`] holds a round's tentative takes and releases on top of the live cluster
//! state (a copy of each node it touches, reused from round to round), so a policy can
//! re-plan every job of a round and hand devices from one job to another before the engine
//! applies anything. Every placement it returns fits the state it planned on; the engine
//! checks each again, and the independent checker runs after every event in tests.

use std::collections::HashSet;

use gapbench_model::state::MAX_TASKS_PER_NODE;
use gapbench_model::MAX_GPUS_PER_NODE;
use gapbench_model::{DeviceSet, GpuModelSet, NodeId, NodeState, Placement, Task};

use crate::policy::ReplayView;

/// What a task asks of a node, as it would run (its job configuration's GPU count).
#[derive(Debug, Clone, Copy)]
pub struct Shape<'a> {
    pub cpu_milli: u32,
    pub memory_mib: u64,
    pub gpu_count: u8,
    /// Per device: 1000 for whole GPUs, below for a share of one.
    pub gpu_milli: u16,
    pub gpu_models: &'a GpuModelSet,
}

impl<'a> Shape<'a> {
    pub fn of(task: &'a Task) -> Shape<'a> {
        Shape {
            cpu_milli: task.cpu_milli,
            memory_mib: task.memory_mib,
            gpu_count: task.gpu_count,
            gpu_milli: task.gpu_milli,
            gpu_models: &task.gpu_models,
        }
    }

    /// Everything [`Planner`]'s search reads of the request, to compare and hash.
    pub fn key(&self) -> ShapeKey {
        (
            self.cpu_milli,
            self.memory_mib,
            self.gpu_count,
            self.gpu_milli,
            self.gpu_models.mask(),
        )
    }

    /// The same request on `gpus` GPUs.
    pub fn with_gpus(self, gpus: u8) -> Shape<'a> {
        Shape {
            gpu_count: gpus,
            ..self
        }
    }
}

/// A request as the search sees it: CPU, memory, GPU count, milli-GPU per device, allowed
/// GPU models.
pub type ShapeKey = (u32, u64, u8, u16, u64);

/// A round's tentative view of the cluster's free resources.
#[derive(Debug, Clone, Default)]
pub struct Planner {
    /// Nodes in priority order (lowest rank first).
    order: Vec<NodeId>,
    overlay: Vec<NodeState>,
    /// The round whose copy `overlay[n]` is; other nodes read the live state.
    copied_in: Vec<u32>,
    round: u32,
    /// Requests the search found no place for: each fits no node outside `grown`, since
    /// takes alone never make room. A refused request is looked for on the `grown` nodes
    /// only, which keeps a round over thousands of jobs of a few shapes at O(shapes × nodes)
    /// instead of O(jobs × nodes).
    refused: HashSet<ShapeKey>,
    /// Nodes given something back since requests were refused, in priority order.
    grown: Vec<NodeId>,
    /// Search every request anew (the tests compare with it).
    pub forget_refusals: bool,
}

/// Beyond this many grown nodes the refusals are forgotten (a search of the grown nodes
/// would cost about as much as a search of all).
const MOST_GROWN_NODES: usize = 32;

impl Planner {
    /// Starts a new plan on the live state of `view`.
    pub fn begin(&mut self, view: &ReplayView<'_>) {
        if self.order.len() != view.cluster.len() {
            let mut order: Vec<NodeId> = (0..view.cluster.len() as NodeId).collect();
            order.sort_by_key(|&n| view.node_rank[n as usize]);
            self.order = order;
            self.overlay = vec![*view.state.node(0); view.cluster.len()];
            self.copied_in = vec![0; view.cluster.len()];
        }
        self.round += 1;
        self.refused.clear();
        self.grown.clear();
    }

    /// `node` as planned: its copy if the plan changed it, else the live state.
    fn node<'s>(&'s self, view: &'s ReplayView<'_>, node: NodeId) -> &'s NodeState {
        if self.copied_in[node as usize] == self.round {
            &self.overlay[node as usize]
        } else {
            view.state.node(node)
        }
    }

    fn node_mut(&mut self, view: &ReplayView<'_>, node: NodeId) -> &mut NodeState {
        let n = node as usize;
        if self.copied_in[n] != self.round {
            self.overlay[n] = *view.state.node(node);
            self.copied_in[n] = self.round;
        }
        &mut self.overlay[n]
    }

    /// Gives back `task`'s resources on `placement` in the plan.
    pub fn release(&mut self, view: &ReplayView<'_>, task: &Shape<'_>, placement: Placement) {
        self.grow(view, placement.node);
        self.give_back(view, task, placement);
    }

    /// Notes that `node` gets something back, for the refused requests.
    fn grow(&mut self, view: &ReplayView<'_>, node: NodeId) {
        if self.refused.is_empty() || self.grown.contains(&node) {
            return;
        }
        if self.grown.len() == MOST_GROWN_NODES {
            self.refused.clear();
            self.grown.clear();
            return;
        }
        self.insert_grown(view, node);
    }

    /// Puts `node` among the grown nodes, in priority order.
    fn insert_grown(&mut self, view: &ReplayView<'_>, node: NodeId) {
        let rank = |n: &NodeId| view.node_rank[*n as usize];
        let at = self.grown.partition_point(|n| rank(n) < rank(&node));
        self.grown.insert(at, node);
    }

    /// Gives back `task`'s resources on `placement` in the plan, refusals untouched.
    fn give_back(&mut self, view: &ReplayView<'_>, task: &Shape<'_>, placement: Placement) {
        let state = self.node_mut(view, placement.node);
        state.cpu_left_milli += task.cpu_milli;
        state.memory_left_mib += task.memory_mib;
        state.task_count -= 1;
        for device in placement.devices.iter() {
            state.free_gpu_milli_by_device[device] += task.gpu_milli;
        }
    }

    /// Takes `task`'s resources on `placement` in the plan.
    pub fn bind(&mut self, view: &ReplayView<'_>, task: &Shape<'_>, placement: Placement) {
        let state = self.node_mut(view, placement.node);
        state.cpu_left_milli -= task.cpu_milli;
        state.memory_left_mib -= task.memory_mib;
        state.task_count += 1;
        for device in placement.devices.iter() {
            state.free_gpu_milli_by_device[device] -= task.gpu_milli;
        }
    }

    /// Finds a placement for `task` (as it would run: its GPU count and share) by the buddy
    /// rules, near `near` (the job's current placement) when it can, and takes it in the
    /// plan. `None` (nothing taken) when no node holds it now.
    pub fn take(
        &mut self,
        view: &ReplayView<'_>,
        task: &Shape<'_>,
        near: Option<Placement>,
    ) -> Option<Placement> {
        let placement = match near.and_then(|p| self.near(view, task, p)) {
            Some(placement) => placement,
            None => self.search_unless_refused(view, task)?,
        };
        self.bind(view, task, placement);
        Some(placement)
    }

    /// A running job's move to `new` (another GPU count): `at` is given back, then `new` is
    /// taken near it by [`take`](Self::take); when nothing holds `new`, `at` is taken again
    /// and the plan is exactly as it was (no node counts as grown).
    pub fn resize(
        &mut self,
        view: &ReplayView<'_>,
        old: &Shape<'_>,
        at: Placement,
        new: &Shape<'_>,
    ) -> Option<Placement> {
        self.give_back(view, old, at);
        let grown = !self.refused.is_empty() && !self.grown.contains(&at.node);
        if grown {
            self.insert_grown(view, at.node);
        }
        let placement = match self.near(view, new, at) {
            Some(placement) => Some(placement),
            None => self.search_unless_refused(view, new),
        };
        if grown {
            self.grown.retain(|&n| n != at.node);
        }
        match placement {
            Some(p) => {
                // `at`'s node may keep more free than before (a move, or a smaller request).
                self.grow(view, at.node);
                self.bind(view, new, p);
                Some(p)
            }
            None => {
                self.bind(view, old, at);
                None
            }
        }
    }

    /// [`search`](Self::search), unless the same request already found nothing: then only
    /// the grown nodes can hold it.
    fn search_unless_refused(
        &mut self,
        view: &ReplayView<'_>,
        task: &Shape<'_>,
    ) -> Option<Placement> {
        let grown = std::mem::take(&mut self.grown);
        let found = self.search_unless_refused_in(view, task, &grown);
        self.grown = grown;
        found
    }

    fn search_unless_refused_in(
        &mut self,
        view: &ReplayView<'_>,
        task: &Shape<'_>,
        grown: &[NodeId],
    ) -> Option<Placement> {
        if self.forget_refusals {
            return self.search(view, task, &self.order);
        }
        if self.refused.contains(&task.key()) {
            return self.search(view, task, grown);
        }
        let found = self.search(view, task, &self.order);
        if found.is_none() {
            self.refused.insert(task.key());
        }
        found
    }

    /// Whether `task` may go on `node` apart from which devices: host resources, GPU model
    /// and device count.
    fn host_fits(&self, view: &ReplayView<'_>, node: NodeId, task: &Shape<'_>) -> bool {
        host_fits(view, node, self.node(view, node), task)
    }

    /// The devices of `node` fully free in the plan.
    fn free_devices(&self, view: &ReplayView<'_>, node: NodeId) -> DeviceSet {
        fully_free(self.node(view, node))
    }

    /// The job's own devices (or the aligned block around or within them) on its node.
    fn near(&self, view: &ReplayView<'_>, task: &Shape<'_>, near: Placement) -> Option<Placement> {
        let node = near.node;
        if !self.host_fits(view, node, task) {
            return None;
        }
        let state = self.node(view, node);
        let wanted = usize::from(task.gpu_count);
        if task.gpu_milli == 0 {
            return Some(Placement {
                node,
                devices: DeviceSet::EMPTY,
            });
        }
        if task.gpu_milli < 1000 {
            let device = near.devices.iter().next()?;
            return (state.free_gpu_milli_by_device[device] >= task.gpu_milli).then_some(
                Placement {
                    node,
                    devices: DeviceSet::single(device),
                },
            );
        }
        let free = self.free_devices(view, node);
        let own = DeviceSet(near.devices.0 & free.0);
        if own.len() == wanted && own == near.devices {
            return Some(near);
        }
        if wanted < own.len() {
            // Shrink within its own devices: an aligned sub-block, else its lowest ones.
            let devices = aligned_blocks(wanted, usize::from(state.gpu_count))
                .find(|block| block.0 & own.0 == block.0)
                .unwrap_or_else(|| lowest(own, wanted));
            return Some(Placement { node, devices });
        }
        // Grow into a free aligned block that holds its devices.
        aligned_blocks(wanted, usize::from(state.gpu_count))
            .find(|block| block.0 & near.devices.0 == near.devices.0 && block.0 & free.0 == block.0)
            .map(|devices| Placement { node, devices })
    }

    /// The best-fit node and devices for `task` anywhere.
    /// The best node of `nodes` (in priority order) by the rules above.
    fn search(
        &self,
        view: &ReplayView<'_>,
        task: &Shape<'_>,
        nodes: &[NodeId],
    ) -> Option<Placement> {
        if task.gpu_milli == 0 {
            return nodes
                .iter()
                .find(|&&n| self.host_fits(view, n, task))
                .map(|&node| Placement {
                    node,
                    devices: DeviceSet::EMPTY,
                });
        }
        if task.gpu_milli < 1000 {
            return self.search_share(view, task, nodes);
        }
        // The node with the fewest fully free devices that holds the block, first in
        // priority order among equals. The device count is checked first: it is cheaper
        // than the host and rules out most nodes.
        let wanted = usize::from(task.gpu_count);
        let mut best: Option<(usize, NodeId, DeviceSet)> = None;
        for &node in nodes {
            let state = self.node(view, node);
            let free = fully_free(state);
            if free.len() < wanted || best.is_some_and(|(k, _, _)| free.len() >= k) {
                continue;
            }
            if !host_fits(view, node, state, task) {
                continue;
            }
            best = Some((free.len(), node, free));
            if free.len() == wanted {
                break;
            }
        }
        let (_, node, free) = best?;
        let gpu_count = usize::from(self.node(view, node).gpu_count);
        Some(Placement {
            node,
            devices: buddy_block(free, wanted, gpu_count),
        })
    }

    /// The device with the least free milli-GPU that holds the share: the least
    /// `(free, node priority, device)`. A node is only looked at closer (its host) when one
    /// of its devices would improve on the best so far.
    fn search_share(
        &self,
        view: &ReplayView<'_>,
        task: &Shape<'_>,
        nodes: &[NodeId],
    ) -> Option<Placement> {
        let mut best: Option<(u16, NodeId, usize)> = None;
        for &node in nodes {
            let state = self.node(view, node);
            let below = best.map_or(u16::MAX, |(f, _, _)| f);
            let Some((free, device)) = least_holding(state, task.gpu_milli, below) else {
                continue;
            };
            if !host_fits(view, node, state, task) {
                continue;
            }
            best = Some((free, node, device));
            if free == task.gpu_milli {
                break;
            }
        }
        best.map(|(_, node, device)| Placement {
            node,
            devices: DeviceSet::single(device),
        })
    }
}

/// Whether `task` may go on `node`, whose plan is `state`, apart from which devices: host
/// resources, GPU model and device count.
fn host_fits(view: &ReplayView<'_>, node: NodeId, state: &NodeState, task: &Shape<'_>) -> bool {
    if task.cpu_milli > state.cpu_left_milli
        || task.memory_mib > state.memory_left_mib
        || state.task_count + 1 > MAX_TASKS_PER_NODE
    {
        return false;
    }
    if task.gpu_milli == 0 {
        return true;
    }
    let node_type = view.cluster.node_type(node);
    node_type
        .gpu_model
        .is_some_and(|model| task.gpu_models.allows(model))
        && node_type.gpu_count >= task.gpu_count
}

/// The devices of `state` fully free.
fn fully_free(state: &NodeState) -> DeviceSet {
    state
        .free_gpu_milli()
        .iter()
        .enumerate()
        .fold(DeviceSet::EMPTY, |set, (d, &free)| {
            if free == 1000 {
                set.with(d)
            } else {
                set
            }
        })
}

/// The device of `state` with the least free milli-GPU at least `milli` and below `below`
/// (the lowest such device among equals), with its free milli-GPU.
///
/// Most nodes have none (their devices are fully free or fully taken once a partly used
/// one was found), so all devices are tested at once first: the free milli-GPU of the eight
/// devices as 16-bit lanes of one word, every lane below `0x8000`, so `(x | 0x8000) − m`
/// keeps its top bit exactly when `x ≥ m`, with no borrow between lanes.
fn least_holding(state: &NodeState, milli: u16, below: u16) -> Option<(u16, usize)> {
    const TOP: u128 = 0x8000_8000_8000_8000_8000_8000_8000_8000;
    const ONES: u128 = 0x0001_0001_0001_0001_0001_0001_0001_0001;
    if below == 0 {
        return None;
    }
    let lanes = state
        .free_gpu_milli_by_device
        .iter()
        .rev()
        .fold(0u128, |word, &free| (word << 16) | u128::from(free));
    // The lanes of the node's devices.
    const IN_USE: [u128; MAX_GPUS_PER_NODE + 1] = {
        let mut masks = [0u128; MAX_GPUS_PER_NODE + 1];
        let mut n = 1;
        while n <= MAX_GPUS_PER_NODE {
            masks[n] = (masks[n - 1] << 16) | 0xffff;
            n += 1;
        }
        masks
    };
    let in_use = IN_USE[usize::from(state.gpu_count).min(MAX_GPUS_PER_NODE)];
    // The quick test needs every lane and both bounds below 0x8000 (free milli-GPU are at
    // most 1000); otherwise every device is looked at.
    if lanes & TOP == 0 && milli <= 0x8000 && below <= 0x8000 {
        let at_least_milli = ((lanes | TOP) - ONES * u128::from(milli)) & TOP;
        let under_below = (((ONES * u128::from(below - 1)) | TOP) - lanes) & TOP;
        if at_least_milli & under_below & in_use == 0 {
            return None;
        }
    }
    let mut best: Option<(u16, usize)> = None;
    for (d, &free) in state.free_gpu_milli().iter().enumerate() {
        if free >= milli && free < best.map_or(below, |(f, _)| f) {
            best = Some((free, d));
        }
    }
    best
}

/// The aligned blocks of `size` devices on a node of `gpu_count` (none when `size` is not
/// a power of two).
fn aligned_blocks(size: usize, gpu_count: usize) -> impl Iterator<Item = DeviceSet> {
    let valid = size.is_power_of_two() && size <= gpu_count;
    (0..gpu_count)
        .step_by(size.max(1))
        .filter(move |&start| valid && start + size <= gpu_count)
        .map(move |start| DeviceSet((((1u16 << size) - 1) << start) as u8))
}

/// The `wanted` lowest devices of `set`.
fn lowest(set: DeviceSet, wanted: usize) -> DeviceSet {
    set.iter()
        .take(wanted)
        .fold(DeviceSet::EMPTY, |s, d| s.with(d))
}

/// `wanted` devices of the free set `free`: an aligned free block whose buddy is partly
/// used if there is one, else the lowest aligned free block, else the lowest free devices.
fn buddy_block(free: DeviceSet, wanted: usize, gpu_count: usize) -> DeviceSet {
    let blocks: Vec<DeviceSet> = aligned_blocks(wanted, gpu_count)
        .filter(|block| block.0 & free.0 == block.0)
        .collect();
    let buddy_used = |block: &DeviceSet| {
        let start = block.0.trailing_zeros() as usize;
        let buddy_start = start ^ wanted;
        buddy_start + wanted <= gpu_count
            && (buddy_start..buddy_start + wanted).any(|d| !free.contains(d))
    };
    blocks
        .iter()
        .copied()
        .find(buddy_used)
        .or_else(|| blocks.first().copied())
        .unwrap_or_else(|| lowest(free, wanted))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_and_prefer_a_used_buddy() {
        let blocks: Vec<u8> = aligned_blocks(2, 8).map(|b| b.0).collect();
        assert_eq!(blocks, [0b11, 0b1100, 0b11_0000, 0b1100_0000]);
        assert_eq!(aligned_blocks(4, 6).count(), 1);
        assert_eq!(aligned_blocks(3, 8).count(), 0);
        // Devices 0 and 4..8 free: the free 2-blocks 4..6 and 6..8 are each other's free
        // buddies, so the lowest is taken.
        let free = DeviceSet(0b1111_0001);
        assert_eq!(buddy_block(free, 2, 8), DeviceSet(0b11_0000));
        // Devices 0, 2, 3 free: 2..4 has a used buddy (1), so it goes there.
        assert_eq!(buddy_block(DeviceSet(0b1101), 2, 8), DeviceSet(0b1100));
        // No aligned block free: the lowest free devices.
        assert_eq!(buddy_block(DeviceSet(0b0110), 2, 8), DeviceSet(0b0110));
        assert_eq!(buddy_block(DeviceSet(0b1011_0100), 1, 8), DeviceSet(0b100));
    }
}
