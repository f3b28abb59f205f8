//! Cluster state bookkeeping on hand-built cases: device sets, the feasibility filter at its
//! exact limits, and bind/release taking and giving back exactly a task's resources.

use gapbench_model::{
    Cluster, ClusterState, CpuPowerProfile, DeviceSet, GpuModel, GpuModelSet, NodeState, NodeType,
    Placement, Task,
};

const V100_PAIR: NodeType = NodeType {
    gpu_model: Some(GpuModel::V100M32),
    gpu_count: 2,
    cpu_milli: 8000,
    memory_mib: 16_384,
};

/// Node 0: 2 × V100M32; node 1: CPU-only; node 2: one T4; node 3: an A100 model, no devices.
fn cluster() -> Cluster {
    let cpu_only = NodeType {
        gpu_model: None,
        gpu_count: 0,
        cpu_milli: 4000,
        memory_mib: 8192,
    };
    let one_t4 = NodeType {
        gpu_model: Some(GpuModel::T4),
        gpu_count: 1,
        cpu_milli: 4000,
        memory_mib: 8192,
    };
    let no_devices = NodeType {
        gpu_model: Some(GpuModel::A100),
        gpu_count: 0,
        cpu_milli: 4000,
        memory_mib: 8192,
    };
    Cluster::new(
        [
            ("v100".to_string(), V100_PAIR),
            ("cpu".to_string(), cpu_only),
            ("t4".to_string(), one_t4),
            ("a100-none".to_string(), no_devices),
        ],
        CpuPowerProfile::Reference,
    )
    .unwrap()
}

#[test]
fn device_sets_are_bit_masks() {
    assert_eq!(DeviceSet::single(3), DeviceSet(0b1000));
    let set = DeviceSet::EMPTY.with(0).with(5).with(5);
    assert_eq!(set, DeviceSet(0b10_0001));
    assert!(set.contains(0) && set.contains(5));
    assert!(!set.contains(1) && !set.contains(4));
    assert_eq!(set.len(), 2);
    assert_eq!(set.iter().collect::<Vec<_>>(), vec![0, 5]);
    assert_eq!(DeviceSet(0xff).iter().count(), 8);
    assert!(DeviceSet::EMPTY.is_empty());
    assert!(!DeviceSet::single(0).is_empty());
    assert_eq!(DeviceSet::EMPTY.len(), 0);
}

#[test]
fn an_empty_node_has_everything_free() {
    let state = NodeState::empty(&V100_PAIR);
    assert_eq!(state.cpu_left_milli, 8000);
    assert_eq!(state.memory_left_mib, 16_384);
    assert_eq!(state.task_count, 0);
    assert_eq!(state.free_gpu_milli(), &[1000, 1000]);
    assert_eq!(
        state.free_gpu_milli_by_device,
        [1000, 1000, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(state.total_free_gpu_milli(), 2000);
    assert_eq!(state.fully_free_gpus(), 2);
}

#[test]
fn free_totals_count_only_existing_devices() {
    let mut state = NodeState::empty(&V100_PAIR);
    state.free_gpu_milli_by_device = [1000, 400, 1000, 1000, 0, 0, 0, 0];
    state.gpu_count = 3;
    assert_eq!(state.total_free_gpu_milli(), 2400);
    assert_eq!(state.fully_free_gpus(), 2);
}

fn with_free(free: &[u16]) -> NodeState {
    let mut state = NodeState::empty(&V100_PAIR);
    state.gpu_count = free.len() as u8;
    state.free_gpu_milli_by_device = [0; 8];
    state.free_gpu_milli_by_device[..free.len()].copy_from_slice(free);
    state
}

#[test]
fn gpu_room_is_a_greedy_scan_that_packs_a_device_before_moving_on() {
    let node = with_free(&[600, 400, 1000]);
    assert!(node.has_gpu_room_for(1, 500));
    // 600 holds one 500, 400 none, 1000 two.
    assert!(node.has_gpu_room_for(3, 500));
    assert!(!node.has_gpu_room_for(4, 500));
    // 1000 holds two 400s (1000 → 600 → 200); 600 one; 400 one.
    assert!(node.has_gpu_room_for(4, 400));
    assert!(!node.has_gpu_room_for(5, 400));
    // Exactly the free amount fits.
    assert!(with_free(&[500]).has_gpu_room_for(1, 500));
    assert!(!with_free(&[499]).has_gpu_room_for(1, 500));
    assert!(!with_free(&[600]).has_gpu_room_for(2, 500));
    assert!(with_free(&[1000]).has_gpu_room_for(1, 400));
}

#[test]
fn a_request_without_gpus_always_has_gpu_room() {
    let no_gpus = with_free(&[]);
    assert!(no_gpus.has_gpu_room_for(0, 500));
    assert!(no_gpus.has_gpu_room_for(2, 0));
    assert!(!no_gpus.has_gpu_room_for(1, 1));
}

#[test]
fn a_task_fits_up_to_the_last_milli_cpu_and_mib() {
    let cluster = cluster();
    let state = ClusterState::empty(&cluster);
    assert!(state.fits(&cluster, 0, &Task::new("exact", 8000, 16_384, 1, 1000)));
    assert!(!state.fits(&cluster, 0, &Task::new("cpu+1", 8001, 0, 0, 0)));
    assert!(!state.fits(&cluster, 0, &Task::new("mib+1", 0, 16_385, 0, 0)));
}

#[test]
fn a_node_holds_at_most_1001_tasks() {
    let cluster = cluster();
    let mut state = ClusterState::empty(&cluster);
    let tiny = Task::new("tiny", 0, 0, 0, 0);
    state.nodes[1].task_count = 1000;
    assert!(state.fits(&cluster, 1, &tiny));
    state.nodes[1].task_count = 1001;
    assert!(!state.fits(&cluster, 1, &tiny));
}

#[test]
fn gpu_tasks_need_a_gpu_node_of_an_allowed_model_with_room() {
    let cluster = cluster();
    let state = ClusterState::empty(&cluster);
    let cpu = Task::new("cpu", 1000, 0, 0, 0);
    let share = Task::new("share", 1000, 0, 1, 500);
    let mut v100_only = share.clone();
    v100_only.gpu_models = GpuModelSet::of(&[GpuModel::V100M32]);
    assert!(state.fits(&cluster, 1, &cpu));
    assert!(!state.fits(&cluster, 1, &share));
    assert!(state.fits(&cluster, 2, &share));
    assert!(!state.fits(&cluster, 3, &share));
    assert!(state.fits(&cluster, 0, &v100_only));
    assert!(!state.fits(&cluster, 2, &v100_only));
    assert!(!state.fits(&cluster, 2, &Task::new("pair", 0, 0, 2, 1000)));
    assert!(state.fits(&cluster, 0, &Task::new("pair", 0, 0, 2, 1000)));
}

#[test]
fn bind_takes_exactly_the_tasks_resources_and_release_gives_them_back() {
    let cluster = cluster();
    let empty = ClusterState::empty(&cluster);
    let mut state = empty.clone();
    let share = Task::new("share", 3000, 4096, 1, 300);
    let pair = Task::new("pair", 1000, 1024, 2, 1000);
    let on_1 = Placement {
        node: 0,
        devices: DeviceSet::single(1),
    };
    let on_both = Placement {
        node: 0,
        devices: DeviceSet::single(0).with(1),
    };
    state.bind(&share, on_1);
    let node = *state.node(0);
    assert_eq!(node.cpu_left_milli, 5000);
    assert_eq!(node.memory_left_mib, 12_288);
    assert_eq!(node.task_count, 1);
    assert_eq!(node.free_gpu_milli(), &[1000, 700]);
    assert_eq!(node.tasks_by_affinity, [1, 0, 0, 0, 0, 0, 0, 0, 0]);
    state.release(&share, on_1);
    assert_eq!(state, empty);

    let mut whole = empty.clone();
    whole.bind(&pair, on_both);
    let node = *whole.node(0);
    assert_eq!(
        (node.cpu_left_milli, node.memory_left_mib, node.task_count),
        (7000, 15_360, 1)
    );
    assert_eq!(node.free_gpu_milli(), &[0, 0]);
    assert_eq!(node.tasks_by_affinity, [0, 0, 1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(whole.nodes[1..], empty.nodes[1..]);
    whole.release(&pair, on_both);
    assert_eq!(whole, empty);
}

#[test]
fn release_of_one_of_two_tasks_keeps_the_other() {
    let cluster = cluster();
    let mut state = ClusterState::empty(&cluster);
    let a = Task::new("a", 2000, 2048, 1, 400);
    let b = Task::new("b", 1000, 1024, 1, 200);
    let on_0 = Placement {
        node: 0,
        devices: DeviceSet::single(0),
    };
    state.bind(&a, on_0);
    state.bind(&b, on_0);
    state.release(&a, on_0);
    let node = *state.node(0);
    assert_eq!(
        (node.cpu_left_milli, node.memory_left_mib, node.task_count),
        (7000, 15_360, 1)
    );
    assert_eq!(node.free_gpu_milli(), &[800, 1000]);
    assert_eq!(node.tasks_by_affinity[0], 1);
}
