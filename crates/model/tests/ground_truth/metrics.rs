//! Cluster metrics kept incrementally: hand-computed totals after each change, equal to a
//! recomputation from scratch.

use gapbench_model::{
    ClusterMetrics, ClusterState, DeviceSet, GpuModelSet, MetricsTracker, NodePower, Placement,
    Task, TypicalPod, TypicalPods,
};

/// One typical task: 1 vCPU and half a GPU, of any model.
fn half_gpu_workload() -> TypicalPods {
    TypicalPods {
        pods: vec![TypicalPod {
            cpu_milli: 1000,
            gpu_milli: 500,
            gpu_count: 1,
            gpu_models: GpuModelSet::any(),
            count: 1,
            probability: 1.0,
        }],
        distinct_shapes: 1,
        coverage_pct: 100.0,
    }
}

use super::two_node_cluster as cluster;

fn on(node: u32, devices: DeviceSet) -> Placement {
    Placement { node, devices }
}

/// (used GPU, used CPU, used nodes, used GPUs, CPU watts, GPU watts, frag, idle, Q3).
fn summary(m: ClusterMetrics) -> (u64, u64, u32, u32, i64, i64, f64, f64, f64) {
    (
        m.used_gpu_milli,
        m.used_cpu_milli,
        m.used_nodes,
        m.used_gpus,
        m.power.cpu_watts,
        m.power.gpu_watts,
        m.frag_gpu_milli(),
        m.idle_gpu_milli(),
        m.q3_gpu_milli(),
    )
}

#[test]
fn an_empty_cluster_is_unused_idle_and_unfragmented() {
    let cluster = cluster();
    let state = ClusterState::empty(&cluster);
    let totals = MetricsTracker::new(&cluster, &state, &half_gpu_workload()).totals();
    // Two idle sockets (15 W each), two idle V100s (30 W each); all 2000 free milli usable.
    assert_eq!(summary(totals), (0, 0, 0, 0, 30, 60, 0.0, 2000.0, 2000.0));
    assert_eq!(totals.frag_ratio_pct(), 0.0);
}

#[test]
fn totals_follow_binds_and_releases_and_equal_a_recomputation() {
    let cluster = cluster();
    let typical = half_gpu_workload();
    let mut state = ClusterState::empty(&cluster);
    let mut tracker = MetricsTracker::new(&cluster, &state, &typical);
    let big_share = Task::new("big-share", 3000, 0, 1, 800);
    let cpu_only = Task::new("cpu-only", 2000, 0, 0, 0);
    state.bind(&big_share, on(0, DeviceSet::single(1)));
    tracker.node_changed(&cluster, &state, &typical, 0);
    state.bind(&cpu_only, on(1, DeviceSet::EMPTY));
    tracker.node_changed(&cluster, &state, &typical, 1);
    // Node 0: 5000 milli-CPU left = 2 idle of 4 cores, its socket active (120 W); device 1
    // busy (300 W), device 0 idle (30 W). Device 1's 200 left is too small for half a GPU.
    // Node 1: 1 of 2 cores works, its socket active (120 W). Both nodes are used.
    let totals = tracker.totals();
    assert_eq!(
        summary(totals),
        (800, 5000, 2, 2, 240, 330, 200.0, 1200.0, 1000.0)
    );
    assert_eq!(totals.q124_gpu_milli(), 200.0);
    assert!((totals.frag_ratio_pct() - 100.0 / 6.0).abs() < 1e-12);
    assert_eq!(
        tracker.node_power(0),
        NodePower {
            cpu_watts: 120,
            gpu_watts: 330
        }
    );
    assert_eq!(
        totals,
        MetricsTracker::new(&cluster, &state, &typical).totals()
    );

    // A second change on each node, so each update removes a non-zero old value.
    let small_share = Task::new("small-share", 1000, 0, 1, 100);
    state.bind(&small_share, on(0, DeviceSet::single(0)));
    tracker.node_changed(&cluster, &state, &typical, 0);
    state.release(&cpu_only, on(1, DeviceSet::EMPTY));
    tracker.node_changed(&cluster, &state, &typical, 1);
    let totals = tracker.totals();
    assert_eq!(
        summary(totals),
        (900, 4000, 1, 2, 135, 600, 200.0, 1100.0, 900.0)
    );
    assert_eq!(
        totals,
        MetricsTracker::new(&cluster, &state, &typical).totals()
    );
}

#[test]
fn a_cluster_with_no_free_gpu_has_a_zero_fragmentation_ratio() {
    let cluster = cluster();
    let mut state = ClusterState::empty(&cluster);
    let pair = Task::new("pair", 0, 0, 2, 1000);
    state.bind(&pair, on(0, DeviceSet::single(0).with(1)));
    let totals = MetricsTracker::new(&cluster, &state, &half_gpu_workload()).totals();
    assert_eq!(totals.idle_gpu_milli(), 0.0);
    assert_eq!(totals.frag_ratio_pct(), 0.0);
    // GPUs taken but no CPU: the node is used, its socket stays idle.
    assert_eq!(summary(totals), (2000, 0, 1, 2, 30, 600, 0.0, 0.0, 0.0));
}
