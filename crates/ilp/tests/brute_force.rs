//! Every formulation's optimum equals the optimum found by enumerating every placement, on
//! tiny instances mixing sharing, whole, multi-GPU and CPU-only tasks, GPU-model
//! constraints, memory limits and several CPU sockets; the heuristic placements come from
//! the real arrival-sweep engine.

mod support;

use gapbench_ilp::{
    check_assignment, gap_interval, heuristic_value, Method, Objective, Snapshot, SolveOptions,
    SolveReport, SolveStatus,
};
use gapbench_model::{GpuModel, GpuModelSet, Task};
use proptest::prelude::*;
use support::{
    brute_force, cluster, node_type, per_node_front, small_task, solve_at, sweep, tasks_of,
};

fn options() -> SolveOptions {
    SolveOptions {
        time_limit_s: 20.0,
        threads: Some(1),
        ..SolveOptions::default()
    }
}

fn task(name: &str, vcpus_milli: u32, memory_gib: u64, gpus: u8, milli: u16) -> Task {
    Task::new(name, vcpus_milli, memory_gib * 1024, gpus, milli)
}

/// Solves all three objectives on the whole sweep and compares each with brute force.
fn check_against_brute_force(types: &[gapbench_model::NodeType], tasks: &[Task], policy: &str) {
    let cluster = cluster(types);
    let (prepared, result) = sweep(&cluster, tasks, policy);
    let snapshot = Snapshot::after_events(&cluster, &prepared, &result, tasks.len()).unwrap();
    assert_eq!(snapshot.tasks.len(), tasks.len());
    let placed: Vec<Task> = snapshot
        .placed_tasks()
        .into_iter()
        .map(|i| snapshot.tasks[i].clone())
        .collect();
    let exact_set = brute_force(&cluster, &prepared.typical, &placed);
    let any_subset = brute_force(&cluster, &prepared.typical, snapshot.tasks);
    let options = options();

    let checked = |report: &SolveReport| {
        assert_eq!(report.status, SolveStatus::Optimal, "{report:?}");
        check_assignment(&cluster, snapshot.tasks, &report.placement).unwrap();
        let heuristic = heuristic_value(&snapshot, report.objective);
        let gap = gap_interval(report, heuristic, cluster.gpu_capacity_milli()).unwrap();
        assert_eq!(
            Some(gap.low_pct),
            gap.high_pct,
            "a proven optimum has one gap"
        );
        assert!(
            gap.low_pct >= -1e-9,
            "the heuristic never beats a proven optimum"
        );
    };

    let power = solve_at(&snapshot, Objective::Power, Method::PerNode, &options);
    checked(&power);
    assert_eq!(power.incumbent, exact_set.min_power_watts.map(|w| w as f64));
    assert_eq!(power.bound, power.incumbent);
    // Same tasks placed as the heuristic.
    for (h, s) in snapshot.heuristic.iter().zip(&power.placement) {
        assert_eq!(h.is_some(), s.is_some());
    }

    let frag = solve_at(&snapshot, Objective::Frag, Method::PerNode, &options);
    checked(&frag);
    let expected = exact_set.min_frag_milli.unwrap();
    assert!(
        (frag.incumbent.unwrap() - expected).abs() < 1e-6,
        "min frag {:?} vs brute force {expected}",
        frag.incumbent
    );

    let alloc = solve_at(&snapshot, Objective::Alloc, Method::PerNode, &options);
    checked(&alloc);
    assert_eq!(alloc.incumbent, Some(any_subset.max_alloc_milli as f64));
    assert_eq!(
        alloc.secondary_power_watts,
        Some(any_subset.min_power_at_max_alloc_watts as f64),
        "second stage: least power among the most-allocating placements"
    );

    let front = per_node_front(&snapshot, 4, &options).unwrap();
    let first = front.first().unwrap();
    let last = front.last().unwrap();
    assert_eq!(first.power_watts, power.incumbent.unwrap());
    assert!((last.frag_milli - expected).abs() < 1e-6);
    for pair in front.windows(2) {
        assert!(
            pair[0].power_watts < pair[1].power_watts && pair[0].frag_milli > pair[1].frag_milli,
            "the front holds no dominated point: {front:?}"
        );
    }
    for point in &front {
        assert!(point.power_watts >= first.power_watts);
        assert!(point.frag_milli >= last.frag_milli - 1e-6);
        if let Some(cap) = point.power_cap_watts {
            assert!(point.power_watts <= cap);
        }
    }
}

#[test]
fn two_nodes_mixed_shapes() {
    let types = [
        node_type(GpuModel::T4, 2, 16, 64),
        node_type(GpuModel::V100M16, 4, 64, 128),
    ];
    let tasks = [
        task("share-a", 4000, 8, 1, 500),
        task("cpu-big", 40_000, 16, 0, 0),
        task("share-b", 2000, 4, 1, 300),
        task("multi", 8000, 16, 2, 1000),
        task("whole", 6000, 8, 1, 1000),
        task("share-c", 2000, 4, 1, 700),
        task("cpu-small", 3000, 2, 0, 0),
    ];
    for policy in ["fgd", "pwr", "bestfit", "pwr:200,fgd:800"] {
        check_against_brute_force(&types, &tasks, policy);
    }
}

#[test]
fn three_nodes_with_model_constraint_and_memory_limit() {
    let types = [
        node_type(GpuModel::T4, 1, 8, 32),
        node_type(GpuModel::G2, 2, 96, 384),
        node_type(GpuModel::T4, 1, 8, 32),
    ];
    let mut only_t4 = task("t4-only", 2000, 4, 1, 600);
    only_t4.gpu_models = GpuModelSet::of(&[GpuModel::T4]);
    let tasks = [
        task("share-a", 1000, 30, 1, 450),
        only_t4,
        task("whole", 4000, 8, 1, 1000),
        task("share-b", 1000, 2, 1, 550),
        task("cpu-wide", 60_000, 64, 0, 0),
        task("share-c", 7000, 2, 1, 200),
        task("multi", 4000, 16, 2, 1000),
    ];
    for policy in ["fgd", "pwr", "bestfit", "packing"] {
        check_against_brute_force(&types, &tasks, policy);
    }
}

#[test]
fn overloaded_cluster_where_tasks_fail() {
    // More demand than capacity: the heuristic leaves tasks out, the allocation optimum
    // chooses which.
    let types = [
        node_type(GpuModel::P100, 2, 16, 64),
        node_type(GpuModel::P100, 2, 16, 64),
    ];
    let tasks = [
        task("share-a", 2000, 4, 1, 600),
        task("share-b", 2000, 4, 1, 600),
        task("share-c", 2000, 4, 1, 450),
        task("multi-a", 4000, 8, 2, 1000),
        task("share-d", 2000, 4, 1, 350),
        task("whole-a", 2000, 4, 1, 1000),
        task("share-e", 9000, 4, 1, 400),
    ];
    for policy in ["fgd", "pwr", "bestfit", "dotprod"] {
        check_against_brute_force(&types, &tasks, policy);
    }
}

fn small_node_type() -> impl Strategy<Value = gapbench_model::NodeType> {
    (
        prop_oneof![Just(GpuModel::T4), Just(GpuModel::P100), Just(GpuModel::G2)],
        0u8..=2,
        prop_oneof![Just(8u32), Just(16), Just(40), Just(64)],
        prop_oneof![Just(16u64), Just(64)],
    )
        .prop_map(|(model, gpus, vcpus, gib)| node_type(model, gpus, vcpus, gib))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Random tiny instances: every formulation equals brute force.
    #[test]
    fn random_tiny_instances_match_brute_force(
        types in prop::collection::vec(small_node_type(), 2..=3),
        raw in prop::collection::vec(small_task(), 1..=6),
        policy in prop_oneof![Just("fgd"), Just("pwr"), Just("bestfit"), Just("pwr:200,fgd:800"), Just("random")],
    ) {
        let tasks = tasks_of(raw, &[GpuModel::T4, GpuModel::G2]);
        check_against_brute_force(&types, &tasks, policy);
    }
}

#[test]
fn objectives_parse_and_name_round_trip() {
    for objective in Objective::ALL {
        assert_eq!(Objective::parse(objective.name()), Some(objective));
    }
    assert_eq!(Objective::parse("energy"), None);
}
