//! Each policy's score and GPU choice against cases computed by hand from the formulas of
//! reference-semantics §5.

use gapbench_model::{
    Cluster, ClusterState, CpuPowerProfile, DeviceSet, GpuModel, GpuModelSet, NodeType, Task,
    TypicalPod, TypicalPods,
};
use gapbench_online::selection::select_devices;
use gapbench_online::{new_policy, GpuSelection, PolicyKind, ScoreContext};

/// One node of `node_type`; `free` sets its per-device free milli; `cpu_left` its free CPU.
fn one_node(node_type: NodeType, cpu_left: u32, free: &[u16]) -> (Cluster, ClusterState) {
    let cluster =
        Cluster::new([("n0".to_string(), node_type)], CpuPowerProfile::Reference).unwrap();
    let mut state = ClusterState::empty(&cluster);
    state.nodes[0].cpu_left_milli = cpu_left;
    state.nodes[0].free_gpu_milli_by_device[..free.len()].copy_from_slice(free);
    (cluster, state)
}

fn score(
    kind: PolicyKind,
    cluster: &Cluster,
    state: &ClusterState,
    typical: &TypicalPods,
    task: &Task,
) -> i64 {
    new_policy(kind).score(
        &ScoreContext {
            cluster,
            state,
            typical,
        },
        0,
        task,
    )
}

fn g2() -> NodeType {
    NodeType {
        gpu_model: Some(GpuModel::G2),
        gpu_count: 8,
        cpu_milli: 96_000,
        memory_mib: 393_216,
    }
}

fn t4x4() -> NodeType {
    NodeType {
        gpu_model: Some(GpuModel::T4),
        gpu_count: 4,
        cpu_milli: 64_000,
        memory_mib: 262_144,
    }
}

#[test]
fn dot_product_and_best_fit() {
    // cpu_left 64000, free GPU 4000 (of 4 T4); task 8 vCPU + one whole GPU.
    let (cluster, state) = one_node(t4x4(), 64_000, &[1000; 4]);
    let task = Task::new("t", 8000, 0, 1, 1000);
    let none = TypicalPods::default();
    // d = 0.5·0.0625 + 0.5·0.125 = 0.09375; 100·(1 − d/2) = 95.3125 → 95.
    assert_eq!(
        score(PolicyKind::DotProduct, &cluster, &state, &none, &task),
        95
    );
    // 1 − (56000/128000·0.5 + 3000/8000·0.5) = 0.59375 → 59.
    assert_eq!(
        score(PolicyKind::BestFit, &cluster, &state, &none, &task),
        59
    );
    // DotProduct is 0 when the CPU does not fit.
    let big = Task::new("big", 65_000, 0, 1, 1000);
    assert_eq!(
        score(PolicyKind::DotProduct, &cluster, &state, &none, &big),
        0
    );
}

#[test]
fn gpu_clustering_rewards_nodes_of_one_kind() {
    let (cluster, mut state) = one_node(t4x4(), 64_000, &[1000, 1000, 700, 300]);
    let none = TypicalPods::default();
    let share = Task::new("s", 1000, 0, 1, 300);
    let whole = Task::new("w", 1000, 0, 1, 1000);
    // base = 25·(8000 − 3000)/8000 = 15 (integer).
    assert_eq!(
        score(PolicyKind::GpuClustering, &cluster, &state, &none, &share),
        15 + 25
    );
    state.nodes[0].tasks_by_affinity[0] = 2;
    assert_eq!(
        score(PolicyKind::GpuClustering, &cluster, &state, &none, &share),
        15 + 75
    );
    assert_eq!(
        score(PolicyKind::GpuClustering, &cluster, &state, &none, &whole),
        15
    );
    state.nodes[0].tasks_by_affinity[1] = 1;
    assert_eq!(
        score(PolicyKind::GpuClustering, &cluster, &state, &none, &share),
        15 + 50
    );
    assert_eq!(
        score(
            PolicyKind::GpuClustering,
            &cluster,
            &state,
            &none,
            &Task::new("c", 1, 0, 0, 0)
        ),
        0
    );
}

#[test]
fn gpu_packing_prefers_used_gpus() {
    let none = TypicalPods::default();
    let (cluster, state) = one_node(t4x4(), 64_000, &[1000, 1000, 300, 1000]);
    // Share 200: the fitting device with least free is 300 → 100 − (300·100/1000)/10 = 97.
    assert_eq!(
        score(
            PolicyKind::GpuPacking,
            &cluster,
            &state,
            &none,
            &Task::new("s", 1, 0, 1, 200)
        ),
        97
    );
    // Whole GPU: takes a fully free device → max(50 − 1, 33) = 49.
    assert_eq!(
        score(
            PolicyKind::GpuPacking,
            &cluster,
            &state,
            &none,
            &Task::new("w", 1, 0, 1, 1000)
        ),
        49
    );
    // An idle 8-GPU node: max(33 − 8, 8) = 25.
    let (cluster, state) = one_node(g2(), 96_000, &[1000; 8]);
    assert_eq!(
        score(
            PolicyKind::GpuPacking,
            &cluster,
            &state,
            &none,
            &Task::new("w", 1, 0, 1, 1000)
        ),
        25
    );
}

#[test]
fn pwr_counts_the_socket_and_the_gpu_it_wakes() {
    let none = TypicalPods::default();
    let (cluster, state) = one_node(g2(), 96_000, &[1000; 8]);
    // One socket turns active (+105 W), one G2 device leaves idle (+120 W).
    assert_eq!(
        score(
            PolicyKind::Pwr,
            &cluster,
            &state,
            &none,
            &Task::new("s", 8000, 0, 1, 500)
        ),
        -225
    );
    // On a node whose first socket is active and device 5 already in use: 0 W.
    let (cluster, mut state) = one_node(
        g2(),
        80_000,
        &[1000, 1000, 1000, 1000, 1000, 400, 1000, 1000],
    );
    state.nodes[0].cpu_left_milli = 80_000;
    assert_eq!(
        score(
            PolicyKind::Pwr,
            &cluster,
            &state,
            &none,
            &Task::new("s", 2000, 0, 1, 300)
        ),
        0
    );
    let ctx = ScoreContext {
        cluster: &cluster,
        state: &state,
        typical: &none,
    };
    let mut rng = gapbench_model::rng::seeded(1);
    let devices = select_devices(
        GpuSelection::Pwr,
        &ctx,
        0,
        &Task::new("s", 2000, 0, 1, 300),
        &mut rng,
    );
    assert_eq!(devices, DeviceSet::single(5));
}

#[test]
fn fgd_follows_the_fragmentation_gradient() {
    // Target workload: one typical task (1 vCPU, 500 milli × 1) with probability 1.
    let typical = TypicalPods {
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
    };
    let t4x2 = NodeType {
        gpu_model: Some(GpuModel::T4),
        gpu_count: 2,
        cpu_milli: 8000,
        memory_mib: 65_536,
    };
    // Empty node: F = 0. A 600-milli share leaves [400, 1000]: the 400 is a Q2 fragment,
    // F' = 400 → trunc(100·sigmoid(−0.4)) = trunc(40.13) = 40.
    let (cluster, state) = one_node(t4x2, 8000, &[1000, 1000]);
    let share600 = Task::new("s", 1000, 0, 1, 600);
    assert_eq!(
        score(PolicyKind::Fgd, &cluster, &state, &typical, &share600),
        40
    );
    // From [400, 1000]: 300 on device 0 leaves F' = 100 (gain 300 → trunc(57.44) = 57);
    // on device 1 F' stays 400 (→ 50). FGD scores 57 and selects device 0.
    let (cluster, state) = one_node(t4x2, 7000, &[400, 1000]);
    let share300 = Task::new("s", 1000, 0, 1, 300);
    assert_eq!(
        score(PolicyKind::Fgd, &cluster, &state, &typical, &share300),
        57
    );
    let ctx = ScoreContext {
        cluster: &cluster,
        state: &state,
        typical: &typical,
    };
    let mut rng = gapbench_model::rng::seeded(1);
    assert_eq!(
        select_devices(GpuSelection::Fgd, &ctx, 0, &share300, &mut rng),
        DeviceSet::single(0)
    );
    // Best-fit selection also picks the fullest fitting device; whole tasks the first free one.
    assert_eq!(
        select_devices(GpuSelection::Best, &ctx, 0, &share300, &mut rng),
        DeviceSet::single(0)
    );
    assert_eq!(
        select_devices(
            GpuSelection::Fgd,
            &ctx,
            0,
            &Task::new("w", 1, 0, 1, 1000),
            &mut rng
        ),
        DeviceSet::single(1)
    );
    // A CPU-only task that leaves too little CPU for the typical task turns all free GPU
    // into a Q4 fragment (GPU fits, CPU does not): F' = 1400 → trunc(100·sigmoid(−1.0)) = 26.
    assert_eq!(
        score(
            PolicyKind::Fgd,
            &cluster,
            &state,
            &typical,
            &Task::new("c", 6500, 0, 0, 0)
        ),
        26
    );
}
