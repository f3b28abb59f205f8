//! The fixed points of reference-semantics §12, on the real openb data and on the
//! embedded openb-like default.

use gapbench_model::testing::openb_traces_dir;
use gapbench_model::workload::{
    load_nodes_csv, load_tasks_csv, openb_like_cluster, openb_like_tasks,
};
use gapbench_model::{
    prepare, Cluster, ClusterState, CpuPowerProfile, DeviceSet, GpuModel, InputRules,
    MetricsTracker, NodeOrder, Placement, Task, TaskOrder, TypicalPods,
};

fn real_cluster() -> Cluster {
    load_nodes_csv(
        &openb_traces_dir().join("openb_node_list_gpu_node.csv"),
        CpuPowerProfile::Reference,
    )
    .unwrap()
}

fn real_default_tasks() -> Vec<Task> {
    load_tasks_csv(
        &openb_traces_dir().join("openb_pod_list_default.csv"),
        InputRules::Strict,
    )
    .unwrap()
    .tasks
}

fn cluster_power(cluster: &Cluster, state: &ClusterState) -> (i64, i64) {
    let power = MetricsTracker::new(cluster, state, &TypicalPods::default())
        .totals()
        .power;
    (power.cpu_watts, power.gpu_watts)
}

#[test]
fn cluster_totals_match_the_openb_gpu_cluster() {
    for cluster in [
        real_cluster(),
        openb_like_cluster(CpuPowerProfile::Reference),
    ] {
        assert_eq!(cluster.len(), 1213);
        assert_eq!(cluster.gpu_count(), 6212);
        assert_eq!(cluster.gpu_capacity_milli(), 6_212_000);
        assert_eq!(cluster.cpu_capacity_milli(), 107_018_000);
        assert_eq!(cluster.node_types.len(), 15);
    }
}

#[test]
fn empty_cluster_draws_230_100_watts_and_fully_active_1_474_110() {
    for cluster in [
        real_cluster(),
        openb_like_cluster(CpuPowerProfile::Reference),
    ] {
        let empty = ClusterState::empty(&cluster);
        assert_eq!(cluster_power(&cluster, &empty), (55_665, 174_435));
        let mut busy = empty.clone();
        for node in &mut busy.nodes {
            node.cpu_left_milli = 0;
            for left in &mut node.free_gpu_milli_by_device[..usize::from(node.gpu_count)] {
                *left = 999;
            }
        }
        assert_eq!(cluster_power(&cluster, &busy), (445_320, 1_028_790));
    }
}

#[test]
fn a_cpu_task_on_an_idle_g2_node_turns_one_socket_active() {
    let cluster = real_cluster();
    let g2 = (0..cluster.len() as u32)
        .find(|&n| cluster.node_type(n).gpu_model == Some(GpuModel::G2))
        .unwrap();
    assert_eq!(cluster.node_type(g2).cpu_milli, 96_000);
    let mut state = ClusterState::empty(&cluster);
    state.bind(
        &Task::new("cpu-only", 8000, 1024, 0, 0),
        Placement {
            node: g2,
            devices: DeviceSet::EMPTY,
        },
    );
    assert_eq!(cluster_power(&cluster, &state), (55_770, 174_435));
    // A sharing task on a free G2 device adds full − idle of the A10 profile; a second one on
    // the same device adds nothing.
    let share = Task::new("share", 1000, 1024, 1, 300);
    state.bind(
        &share,
        Placement {
            node: g2,
            devices: DeviceSet::single(3),
        },
    );
    assert_eq!(cluster_power(&cluster, &state).1, 174_435 + 120);
    state.bind(
        &share,
        Placement {
            node: g2,
            devices: DeviceSet::single(3),
        },
    );
    assert_eq!(cluster_power(&cluster, &state).1, 174_435 + 120);
    // Releasing both restores idle GPU power.
    state.release(
        &share,
        Placement {
            node: g2,
            devices: DeviceSet::single(3),
        },
    );
    state.release(
        &share,
        Placement {
            node: g2,
            devices: DeviceSet::single(3),
        },
    );
    assert_eq!(cluster_power(&cluster, &state), (55_770, 174_435));
}

#[test]
fn typical_pods_of_the_default_trace_are_35_shapes_covering_95_26_percent() {
    for tasks in [real_default_tasks(), openb_like_tasks()] {
        let typical = TypicalPods::from_tasks(&tasks, 95.0);
        assert_eq!(typical.distinct_shapes, 91);
        assert_eq!(typical.pods.len(), 35);
        assert!(
            (typical.coverage_pct - 95.26).abs() < 0.005,
            "coverage {}",
            typical.coverage_pct
        );
        let top: Vec<(u16, u8, usize)> = typical.pods[..3]
            .iter()
            .map(|p| (p.gpu_milli, p.gpu_count, p.count))
            .collect();
        assert_eq!(top, vec![(810, 1, 1047), (1000, 1, 874), (1000, 1, 599)]);
        assert_eq!(
            (typical.pods[1].cpu_milli, typical.pods[2].cpu_milli),
            (11_300, 11_400)
        );
        let total: f64 = typical.pods.iter().map(|p| p.probability).sum();
        assert!((total - 1.0).abs() < 1e-12);
    }
}

#[test]
fn the_embedded_workload_has_the_default_traces_shapes() {
    let (real, embedded) = (real_default_tasks(), openb_like_tasks());
    assert_eq!(real.len(), 8152);
    let shape = |t: &Task| (t.cpu_milli, t.memory_mib, t.gpu_count, t.gpu_milli);
    let mut real_shapes: Vec<_> = real.iter().map(shape).collect();
    let mut embedded_shapes: Vec<_> = embedded.iter().map(shape).collect();
    real_shapes.sort();
    embedded_shapes.sort();
    assert_eq!(real_shapes, embedded_shapes);
    assert_eq!(
        real.iter()
            .map(|t| u64::from(t.total_gpu_milli()))
            .sum::<u64>(),
        6_086_800
    );
}

#[test]
fn tuning_the_default_trace_to_1_3_appends_about_2_700_clones() {
    let cluster = real_cluster();
    let tasks = real_default_tasks();
    for seed in 42..45 {
        let prepared = prepare(
            &tasks,
            &cluster,
            TaskOrder::Shuffled,
            Some(1.3),
            NodeOrder::Random,
            seed,
        );
        let events = prepared.events.len();
        assert!(
            (10_800..=10_900).contains(&events),
            "seed {seed}: {events} events"
        );
        assert_eq!(events, 8152 + prepared.cloned_tasks);
        let demand: u64 = prepared
            .events
            .iter()
            .map(|t| u64::from(t.total_gpu_milli()))
            .sum();
        assert!(demand as f64 <= 1.3 * 6_212_000.0);
        assert!(prepared.events[8152..]
            .iter()
            .all(|t| t.name.contains("-tuned-")));
    }
}

#[test]
fn multigpu_traces_are_tuned_down() {
    let cluster = real_cluster();
    let tasks = load_tasks_csv(
        &openb_traces_dir().join("openb_pod_list_multigpu50.csv"),
        InputRules::Strict,
    )
    .unwrap()
    .tasks;
    assert_eq!(tasks.len(), 9061);
    let prepared = prepare(
        &tasks,
        &cluster,
        TaskOrder::Shuffled,
        Some(1.3),
        NodeOrder::Random,
        42,
    );
    assert!(prepared.removed_tasks > 0 && prepared.cloned_tasks == 0);
    let demand: u64 = prepared
        .events
        .iter()
        .map(|t| u64::from(t.total_gpu_milli()))
        .sum();
    assert!(demand as f64 <= 1.3 * 6_212_000.0);
}

#[test]
fn explicit_orders_keep_the_input_order() {
    let cluster = real_cluster();
    let tasks = real_default_tasks();
    let prepared = prepare(
        &tasks,
        &cluster,
        TaskOrder::AsListed,
        Some(1.3),
        NodeOrder::AsListed,
        7,
    );
    assert_eq!(prepared.events, tasks);
    assert_eq!(prepared.node_rank, (0..1213).collect::<Vec<u32>>());
}

/// Every shipped openb trace is taken literally: strict input rules accept all of them, so no
/// value of the real data is converted (the warnings of `--input-rules reference` never fire).
#[test]
fn every_shipped_trace_loads_without_conversion() {
    let mut traces = 0;
    for entry in std::fs::read_dir(openb_traces_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with("openb_pod_list_") && name.ends_with(".csv") {
            let list = load_tasks_csv(&path, InputRules::Reference).unwrap();
            assert!(
                list.adjustments.is_empty(),
                "{name}: {:?}",
                list.adjustments
            );
            load_tasks_csv(&path, InputRules::Strict).unwrap();
            traces += 1;
        }
    }
    assert_eq!(traces, 23);
}
