//! Gavel's default baseline as EaCO evaluates it: FIFO with exclusive GPUs. The queue head
//! gets the lowest-id node with enough untenanted devices, or waits.

use gapbench_model::rng::SimRng;
use gapbench_model::Task;

use crate::policies::gpu_sets::first_exclusive;
use crate::policy::{Action, CapacityMode, RefusalClass, ReplayView, TimePolicy};

pub struct FifoExclusive {
    pub capacity: CapacityMode,
}

impl TimePolicy for FifoExclusive {
    fn name(&self) -> String {
        format!("fifo{}", self.capacity.name_suffix())
    }

    fn capacity(&self) -> CapacityMode {
        self.capacity
    }

    /// A refusal means no node has the request's CPU, memory and task slot and enough
    /// untenanted devices of an allowed model: placements only take those away.
    fn refusal_class(&self, task: &Task) -> Option<RefusalClass> {
        Some(RefusalClass::of_request(task))
    }

    fn schedule(&mut self, view: &ReplayView<'_>, task: u32, _rng: &mut SimRng) -> Action {
        match first_exclusive(view, task) {
            Some(placement) => Action::Place {
                task,
                placement,
                capacity: self.capacity,
                observe_after_s: None,
                option: None,
            },
            None => Action::Queue { task },
        }
    }
}
