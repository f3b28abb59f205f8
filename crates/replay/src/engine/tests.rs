//! The engine's own unit tests (they reach into its private state).

use super::*;
use crate::timed_workload::{PodPhase, Qos, TimedTask};
use gapbench_model::{CpuPowerProfile, DeviceSet, GpuModel, NodeType, Placement};

struct Idle;

impl TimePolicy for Idle {
    fn name(&self) -> String {
        "idle".to_string()
    }
    fn schedule(&mut self, _: &ReplayView<'_>, task: u32, _: &mut SimRng) -> Action {
        Action::Queue { task }
    }
}

fn task(name: &str, gpu_milli: u16) -> TimedTask {
    TimedTask {
        task: Task::new(name, 3000, 4096, 1, gpu_milli),
        qos: Qos::BestEffort,
        phase: PodPhase::Running,
        arrival_s: 0.0,
        duration_s: 500.0,
        left_censored: false,
        right_censored: false,
        profile: None,
    }
}

/// Everything an undo must give back, compared exactly.
#[allow(clippy::type_complexity)]
fn snapshot(
    r: &Replay<'_>,
) -> (
    ClusterState,
    DeviceTable,
    PowerSplit,
    Vec<PowerSplit>,
    gapbench_model::ClusterMetrics,
    Vec<u64>,
    u32,
    Vec<(f64, Option<Placement>)>,
    i64,
) {
    (
        r.state.clone(),
        r.devices.clone(),
        r.power,
        r.node_power.clone(),
        r.tracker.totals(),
        r.node_weight.clone(),
        r.active_nodes,
        r.progress
            .iter()
            .map(|p| (p.slowdown, p.placement))
            .collect(),
        r.job_power_mw,
    )
}

#[test]
fn undo_restores_the_state_exactly() {
    let node = NodeType {
        gpu_model: Some(GpuModel::V100M32),
        gpu_count: 2,
        cpu_milli: 32000,
        memory_mib: 65536,
    };
    let cluster = Cluster::new(
        [("n0".to_string(), node), ("n1".to_string(), node)],
        CpuPowerProfile::Reference,
    )
    .unwrap();
    let workload = TimedWorkload {
        tasks: vec![
            task("a", 300),
            task("b", 500),
            task("c", 200),
            task("d", 1000),
        ],
        dropped_pending: 0,
        trace_end_s: 500.0,
        adjustments: Vec::new(),
    };
    let options = ReplayOptions::default();
    for capacity in [CapacityMode::Reserved, CapacityMode::Oversubscribed] {
        let (mut replay, _) = Replay::new(&cluster, &workload, &options);
        let mut policy = Idle;
        let on = |node, device| Placement {
            node,
            devices: DeviceSet::single(device),
        };
        replay.start(0, on(0, 0), capacity, None, &mut policy);
        replay.start(1, on(0, 0), capacity, None, &mut policy);
        replay.start(3, on(0, 1), capacity, None, &mut policy);
        replay.advance(120.0);
        let before = snapshot(&replay);
        replay.start(2, on(0, 0), capacity, None, &mut policy);
        assert_ne!(snapshot(&replay), before, "the placement changed something");
        assert!(
            replay.progress[0].slowdown > 1.03,
            "three tenants slow each other"
        );
        replay.stop(2, &mut policy);
        assert_eq!(snapshot(&replay), before);
    }
}
