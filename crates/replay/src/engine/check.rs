//! The independent placement checker after an event (tests and `check_every_event`).

use gapbench_model::{check_placements, NodeId, Placement, Task};

use super::Replay;
use crate::policy::CapacityMode;

impl Replay<'_> {
    /// The independent checker on every running task's reservation. Oversubscribed tasks
    /// reserve CPU and memory only, so their GPU side is checked here: devices that exist,
    /// an allowed GPU model, and tenants' peak memory within each device.
    pub(super) fn check(&mut self) {
        let mut running: Vec<(Task, Placement)> = Vec::new();
        for &t in &self.running {
            let placement = self.progress[t as usize]
                .placement
                .expect("running tasks are placed");
            match self.runs[t as usize].capacity {
                CapacityMode::Reserved => running.push((self.bound_task(t), placement)),
                CapacityMode::Oversubscribed => {
                    let node_type = self.cluster.node_type(placement.node);
                    let timed = self.running_task(t);
                    let devices_ok = placement.devices.len() == usize::from(timed.gpu_count)
                        && placement
                            .devices
                            .iter()
                            .all(|d| d < usize::from(node_type.gpu_count));
                    let model_ok = timed.is_cpu_only()
                        || node_type
                            .gpu_model
                            .is_some_and(|m| timed.gpu_models.allows(m));
                    if !(devices_ok && model_ok) {
                        self.violations.push(format!(
                            "at {} s: task {} has a bad GPU set on node {}",
                            self.now_s, timed.name, placement.node
                        ));
                    }
                    let cpu_only = Placement {
                        node: placement.node,
                        devices: gapbench_model::DeviceSet::EMPTY,
                    };
                    running.push((self.bound_task(t), cpu_only));
                }
            }
        }
        for node in 0..self.cluster.len() as NodeId {
            for (device, load) in self.devices.node(node).iter().enumerate() {
                if load.memory_permille > 1000 {
                    self.violations.push(format!(
                        "at {} s: node {node} device {device} holds {} ‰ of its memory",
                        self.now_s, load.memory_permille
                    ));
                }
            }
        }
        for violation in check_placements(self.cluster, running.iter().map(|(t, p)| (t, *p))) {
            self.violations
                .push(format!("at {} s: {violation}", self.now_s));
        }
    }
}
