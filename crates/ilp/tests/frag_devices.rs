//! Fragmentation by device patterns. The relaxation (`frag_device_bound`): a hand-computed
//! case where it is the optimum and the configuration LP is not, and never above the
//! brute-force optimum on tiny random clusters. The per-node device model
//! (`min_frag_by_devices`): the brute-force optimum itself on tiny random clusters, and the
//! 8-node openb sub-clusters of four traces proven optimal.

mod support;

use gapbench_ilp::{
    check_assignment, frag_device_bound, heuristic_value, min_frag_by_devices, sample_sub_cluster,
    Method, Objective, Snapshot, SolveOptions, SolveStatus,
};
use gapbench_model::testing::openb_traces_dir;
use gapbench_model::workload::{load_nodes_csv, load_tasks_csv};
use gapbench_model::{
    prepare, CpuPowerProfile, GpuModel, GpuModelSet, InputRules, NodeOrder, Task, TaskOrder,
    TypicalPod, TypicalPods,
};
use gapbench_online::{run_arrival_sweep, PolicySpec};
use proptest::prelude::*;
use support::{brute_force, cluster, events_of, node_type, small_task, solve_at, sweep, tasks_of};

fn options() -> SolveOptions {
    SolveOptions {
        time_limit_s: 20.0,
        threads: Some(1),
        ..SolveOptions::default()
    }
}

fn pod(cpu_milli: u32, gpu_milli: u16, gpu_count: u8, probability: f64) -> TypicalPod {
    TypicalPod {
        cpu_milli,
        gpu_milli,
        gpu_count,
        gpu_models: GpuModelSet::any(),
        count: 1,
        probability,
    }
}

/// Two nodes of two GPUs, three tasks of half a GPU; the target workload a CPU-only pod and
/// a whole-GPU pod, ½ each. Fragmentation counts every free milli for the first and, for
/// the second, the free milli of devices not fully free (all of the node's when it has no
/// fully free device). By hand, every placement of the three halves:
/// - two share a device, the third is on the same node (free 0 + 500, no free device:
///   250 + 250) beside an empty node (1,000 + 0): 1,500;
/// - two share a device (free 0 + 1,000: 500 + 0), the third on the other node (free
///   500 + 1,000: 750 + 250): 1,500;
/// - three devices with one half each: 2,000.
///
/// The least is 1,500. The relaxation sees it: the halves need two devices, so at most two
/// are fully free, `P·L − 2·500 = 2,500 − 1,000`. The configuration LP takes 1.5 nodes of
/// "a shared device and a free one" (500 each) and half an empty node: 1,250.
#[test]
fn the_relaxation_counts_the_devices_the_halves_need() {
    let cluster = cluster(&[
        node_type(GpuModel::T4, 2, 16, 64),
        node_type(GpuModel::T4, 2, 16, 64),
    ]);
    let tasks: Vec<Task> = (0..3)
        .map(|i| Task::new(format!("half-{i}"), 1000, 1024, 1, 500))
        .collect();
    let (prepared, events) = sweep(&cluster, &tasks, "fgd");
    let typical = TypicalPods {
        pods: vec![pod(1000, 0, 0, 0.5), pod(1000, 1000, 1, 0.5)],
        distinct_shapes: 2,
        coverage_pct: 100.0,
    };
    let mut snapshot = Snapshot::after_events(&cluster, &prepared, &events, tasks.len()).unwrap();
    snapshot.typical = &typical;
    let bound = frag_device_bound(&snapshot, &options()).unwrap().unwrap();
    assert!((bound - 1500.0).abs() < 1e-6, "device bound {bound}");
    let exact = brute_force(&cluster, &typical, &tasks)
        .min_frag_milli
        .unwrap();
    assert!((exact - 1500.0).abs() < 1e-6, "brute force {exact}");
    // Column generation reports it: proven, whatever its LP says.
    let report = solve_at(
        &snapshot,
        Objective::Frag,
        Method::ColumnGeneration,
        &options(),
    );
    assert_eq!(report.status, SolveStatus::Optimal, "{report:?}");
    assert!((report.bound.unwrap() - 1500.0).abs() < 1e-6);
}

/// CPU strands a device: one node of two GPUs and 8 vCPU holds a whole-GPU task of 7 vCPU;
/// the one typical pod asks a whole GPU and 2 vCPU, which the free device could take but
/// the 1 vCPU left cannot, so the free device's 1,000 milli are all fragment. Forgetting
/// CPU would credit it (a bound of 0); the relaxation's CPU levels do not.
#[test]
fn the_relaxation_sees_cpu_strand_a_device() {
    let cluster = cluster(&[node_type(GpuModel::P100, 2, 8, 64)]);
    let tasks = vec![Task::new("cpu-heavy", 7000, 1024, 1, 1000)];
    let (prepared, events) = sweep(&cluster, &tasks, "fgd");
    let typical = TypicalPods {
        pods: vec![pod(2000, 1000, 1, 1.0)],
        distinct_shapes: 1,
        coverage_pct: 100.0,
    };
    let mut snapshot = Snapshot::after_events(&cluster, &prepared, &events, tasks.len()).unwrap();
    snapshot.typical = &typical;
    let bound = frag_device_bound(&snapshot, &options()).unwrap().unwrap();
    let exact = brute_force(&cluster, &typical, &tasks)
        .min_frag_milli
        .unwrap();
    assert!((exact - 1000.0).abs() < 1e-6, "brute force {exact}");
    assert!((bound - 1000.0).abs() < 1e-6, "device bound {bound}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Tiny random clusters mixing shares, whole and multi-GPU tasks, CPU-only tasks and
    /// GPU-model constraints, memory bounding too: the relaxation never passes the least
    /// fragmentation, and the per-node device model is exact: it proves the brute-force
    /// optimum, and its placement passes the checker at that value.
    #[test]
    fn the_device_programs_against_brute_force(
        kinds in prop::collection::vec(0usize..4, 2..=4),
        raw in prop::collection::vec(small_task(), 1..=6),
        policy in prop_oneof![Just("fgd"), Just("pwr"), Just("bestfit"), Just("random")],
    ) {
        let menu = [
            node_type(GpuModel::T4, 2, 16, 64),
            node_type(GpuModel::G2, 1, 40, 64),
            node_type(GpuModel::P100, 2, 8, 16),
            node_type(GpuModel::G2, 0, 16, 64),
        ];
        let types: Vec<_> = kinds.iter().map(|&k| menu[k]).collect();
        let cluster = cluster(&types);
        let tasks = tasks_of(raw, &[GpuModel::T4, GpuModel::G2]);
        let (prepared, events) = sweep(&cluster, &tasks, policy);
        let snapshot = Snapshot::after_events(&cluster, &prepared, &events, tasks.len()).unwrap();
        let placed: Vec<Task> = snapshot
            .placed_tasks()
            .into_iter()
            .map(|i| snapshot.tasks[i].clone())
            .collect();
        let exact = brute_force(&cluster, &prepared.typical, &placed).min_frag_milli.unwrap();
        let bound = frag_device_bound(&snapshot, &options()).unwrap().unwrap();
        prop_assert!(bound <= exact + 1e-6 * exact.max(1.0), "bound {} > optimum {}", bound, exact);
        let report = min_frag_by_devices(&snapshot, &options());
        prop_assert_eq!(&report.status, &SolveStatus::Optimal, "{:?}", report);
        check_assignment(&cluster, snapshot.tasks, &report.placement).unwrap();
        let value = heuristic_value(
            &Snapshot { heuristic: report.placement.clone(), ..snapshot.clone() },
            Objective::Frag,
        );
        let tolerance = 1e-6 * exact.max(1.0);
        prop_assert!((value - exact).abs() <= tolerance, "model {} optimum {}", value, exact);
        prop_assert_eq!(report.incumbent, Some(value));
    }
}

/// The paper bench's 8-node sub-clusters (seed 42, FGD, the trace tuned to 1.3× their
/// capacity) of four traces: at each checkpoint the per-node device model proves the least
/// fragmentation (`optimal`), its placement passes the checker, and the device
/// relaxation's bound lies at or below it. Before the device programs these were
/// `lp_bound`, their configuration LP 3–17 % below (default at 80 %: [2,608.6, 2,942.6]);
/// `gpuspec33`, where CPU strands devices on single nodes, stayed open under the relaxation
/// alone (100 %: [0.47, 0.92] %). The proof is work-limited (HiGHS's node limit): the time
/// limit here is a safety net, over 70× what the model took on a 2-core machine (at most
/// 8.3 s).
#[test]
fn eight_node_sub_clusters_are_proven() {
    let cases: [(&str, &[f64]); 4] = [
        ("default", &[50.0, 80.0, 100.0, 130.0]),
        ("gpushare40", &[50.0, 80.0, 100.0, 125.0]),
        ("multigpu50", &[50.0, 80.0, 100.0, 125.0]),
        ("gpuspec33", &[50.0, 80.0, 100.0, 125.0]),
    ];
    let dir = openb_traces_dir();
    let full = load_nodes_csv(
        &dir.join("openb_node_list_gpu_node.csv"),
        CpuPowerProfile::Reference,
    )
    .unwrap();
    let limits = SolveOptions {
        time_limit_s: 600.0,
        ..options()
    };
    for (trace, checkpoints) in cases {
        let tasks = load_tasks_csv(
            &dir.join(format!("openb_pod_list_{trace}.csv")),
            InputRules::Strict,
        )
        .unwrap()
        .tasks;
        let (sub, _) = sample_sub_cluster(&full, 8, 42).unwrap();
        let prepared = prepare(
            &tasks,
            &sub,
            TaskOrder::Shuffled,
            Some(1.3),
            NodeOrder::Random,
            42,
        );
        let spec: PolicySpec = "fgd".parse().unwrap();
        let events = events_of(&run_arrival_sweep(&sub, &prepared, &spec));
        for &checkpoint in checkpoints {
            let snapshot = Snapshot::at_checkpoint(&sub, &prepared, &events, checkpoint).unwrap();
            let report = min_frag_by_devices(&snapshot, &limits);
            let what = format!("{trace} {checkpoint} %");
            check_assignment(&sub, snapshot.tasks, &report.placement).unwrap();
            let value = heuristic_value(
                &Snapshot {
                    heuristic: report.placement.clone(),
                    ..snapshot.clone()
                },
                Objective::Frag,
            );
            assert_eq!(report.incumbent, Some(value), "{what}");
            let bound = frag_device_bound(&snapshot, &limits).unwrap().unwrap();
            assert!(bound <= value * (1.0 + 1e-9), "{what}: {bound} > {value}");
            assert_eq!(report.status, SolveStatus::Optimal, "{what}: {report:?}");
        }
    }
}
