//! Every arrival-sweep policy (FGD, PWR, their mixes, the baselines) in time mode, unchanged:
//! an adapter over `online::Scheduler`. A task the scheduler cannot place waits.

use gapbench_model::rng::SimRng;
use gapbench_model::{Cluster, ClusterState, NodeId, Task};
use gapbench_online::{PolicySpec, Scheduler, ScoreContext};

use crate::policy::{Action, CapacityMode, RefusalClass, ReplayView, TimePolicy};

pub struct OnlinePolicy {
    spec: PolicySpec,
    scheduler: Scheduler,
}

impl OnlinePolicy {
    pub fn new(spec: &PolicySpec, cluster: &Cluster) -> Self {
        OnlinePolicy {
            spec: spec.clone(),
            scheduler: Scheduler::new(spec, cluster, &ClusterState::empty(cluster)),
        }
    }
}

impl TimePolicy for OnlinePolicy {
    fn name(&self) -> String {
        self.spec.slug()
    }

    fn schedule(&mut self, view: &ReplayView<'_>, task: u32, rng: &mut SimRng) -> Action {
        let ctx = ScoreContext {
            cluster: view.cluster,
            state: view.state,
            typical: view.typical,
        };
        let timed = &view.tasks[task as usize].task;
        match self.scheduler.choose(&ctx, timed, view.node_rank, rng) {
            Some(placement) => Action::Place {
                task,
                placement,
                capacity: CapacityMode::Reserved,
                observe_after_s: None,
                option: None,
            },
            None => Action::Queue { task },
        }
    }

    /// The scheduler refuses a task only when no node passes the feasibility filter, which
    /// reads the request alone and draws nothing; placements only shrink what is free.
    fn refusal_class(&self, task: &Task) -> Option<RefusalClass> {
        Some(RefusalClass::of_request(task))
    }

    fn node_changed(&mut self, view: &ReplayView<'_>, node: NodeId) {
        self.scheduler.node_changed(view.cluster, view.state, node);
    }
}
