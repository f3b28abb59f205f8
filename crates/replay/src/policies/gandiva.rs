//! A **simplified** Gandiva, as EaCO's Gavel baseline (spec §2.5 [D]): exclusive GPUs first;
//! when the queue head finds none, it is packed with a uniformly random running task whose
//! device it can share (one other tenant, summed actual utilisation below 100 %); when a
//! task completes, one packed task that could now run alone is unpacked (an undo followed by
//! an exclusive placement; its progress is kept). Real Gandiva also time-slices, migrates
//! for locality and uses introspective feedback; none of that is modelled.

use std::collections::BTreeSet;

use gapbench_model::rng::{uniform_index, SimRng};
use gapbench_model::{NodeId, Placement};

use crate::policies::fifo_packed::pair_devices;
use crate::policies::gpu_sets::{first_exclusive, host_fits};
use crate::policy::{Action, CapacityMode, ReplayView, TimePolicy};

pub struct Gandiva {
    pub capacity: CapacityMode,
    /// Tasks currently packed with another.
    packed: BTreeSet<u32>,
    candidates: Vec<Placement>,
}

impl Gandiva {
    pub fn new(capacity: CapacityMode) -> Self {
        Gandiva {
            capacity,
            packed: BTreeSet::new(),
            candidates: Vec::new(),
        }
    }
}

impl TimePolicy for Gandiva {
    fn name(&self) -> String {
        format!("gandiva{}", self.capacity.name_suffix())
    }

    fn capacity(&self) -> CapacityMode {
        self.capacity
    }

    fn schedule(&mut self, view: &ReplayView<'_>, task: u32, rng: &mut SimRng) -> Action {
        self.packed.remove(&task);
        let capacity = self.capacity;
        let place = |placement| Action::Place {
            task,
            placement,
            capacity,
            observe_after_s: None,
            option: None,
        };
        if let Some(placement) = first_exclusive(view, task) {
            return place(placement);
        }
        let timed = &view.tasks[task as usize].task;
        if timed.is_cpu_only() {
            return Action::Queue { task };
        }
        self.candidates.clear();
        for node in 0..view.cluster.len() as NodeId {
            if host_fits(view, node, timed) {
                if let Some(devices) = pair_devices(view, node, task, capacity, |sum| sum < 1000) {
                    self.candidates.push(Placement { node, devices });
                }
            }
        }
        if self.candidates.is_empty() {
            return Action::Queue { task };
        }
        let placement = self.candidates[uniform_index(rng, self.candidates.len())];
        self.packed.insert(task);
        for device in placement.devices.iter() {
            self.packed
                .extend(&view.devices.device(placement.node, device).tenants);
        }
        place(placement)
    }

    fn on_completion(&mut self, view: &ReplayView<'_>, task: u32) -> Vec<Action> {
        self.packed.remove(&task);
        // Forget tasks no longer sharing a device.
        self.packed.retain(|&t| {
            view.progress[t as usize].placement.is_some_and(|p| {
                p.devices
                    .iter()
                    .any(|d| view.devices.device(p.node, d).tenants.len() > 1)
            })
        });
        // Its own devices have tenants, so an exclusive set is always elsewhere.
        let unpack = self
            .packed
            .iter()
            .copied()
            .find(|&t| first_exclusive(view, t).is_some());
        match unpack {
            Some(t) => {
                self.packed.remove(&t);
                vec![Action::Undo { task: t }]
            }
            None => Vec::new(),
        }
    }
}
