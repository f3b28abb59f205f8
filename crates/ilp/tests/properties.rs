//! Invariants on random small instances, with heuristic placements from the real
//! arrival-sweep engine: every solver placement passes the independent checker, the solver
//! is never worse than the heuristic it started from, and the heuristic never beats a
//! proven bound — power never below the lower bound, allocation never above the upper
//! bound, fragmentation never below its lower bound. The by-type relaxation bounds are
//! never tighter than what the exact model achieves.

mod support;

use gapbench_ilp::{
    check_assignment, gap_interval, heuristic_value, Method, Objective, Session, Snapshot,
    SolveError, SolveOptions, SolveReport, SolveStatus,
};
use gapbench_model::{GpuModel, NodeType, Task};
use proptest::prelude::*;
use support::{cluster, node_type, solve_at, sweep, try_solve_in};

const TYPES: [(GpuModel, u8, u32, u64); 5] = [
    (GpuModel::G2, 8, 96, 384),
    (GpuModel::T4, 2, 104, 512),
    (GpuModel::P100, 2, 16, 120),
    (GpuModel::V100M16, 4, 32, 128),
    (GpuModel::G3, 8, 128, 768),
];

/// openb-like task shapes: (milli-CPU, GiB, GPUs, milli-GPU per GPU).
const SHAPES: [(u32, u64, u8, u16); 10] = [
    (3150, 8, 1, 810),
    (11_300, 40, 1, 1000),
    (6000, 12, 1, 460),
    (4000, 15, 1, 470),
    (8000, 30, 1, 320),
    (32_000, 60, 0, 0),
    (12_000, 40, 2, 1000),
    (24_000, 100, 4, 1000),
    (2000, 4, 1, 230),
    (16_000, 64, 8, 1000),
];

fn instance() -> impl Strategy<Value = (Vec<NodeType>, Vec<Task>)> {
    (
        prop::collection::vec(0..TYPES.len(), 2..=4),
        prop::collection::vec((0..SHAPES.len(), 0u32..3), 4..=18),
    )
        .prop_map(|(types, shapes)| {
            let types = types
                .into_iter()
                .map(|t| {
                    let (model, gpus, vcpus, gib) = TYPES[t];
                    node_type(model, gpus, vcpus, gib)
                })
                .collect();
            let tasks = shapes
                .into_iter()
                .enumerate()
                .map(|(i, (s, jitter))| {
                    let (cpu, gib, gpus, milli) = SHAPES[s];
                    Task::new(
                        format!("t{i:02}"),
                        cpu + 500 * jitter,
                        gib * 1024,
                        gpus,
                        milli,
                    )
                })
                .collect();
            (types, tasks)
        })
}

fn options() -> SolveOptions {
    SolveOptions {
        time_limit_s: 10.0,
        threads: Some(1),
        ..SolveOptions::default()
    }
}

/// Checks one report against the heuristic's value of its objective.
fn check(snapshot: &Snapshot, report: &SolveReport) {
    assert!(
        !matches!(report.status, SolveStatus::Infeasible),
        "{:?}",
        report.status
    );
    check_assignment(snapshot.cluster, snapshot.tasks, &report.placement).unwrap();
    let heuristic = heuristic_value(snapshot, report.objective);
    let incumbent = report
        .incumbent
        .expect("warm-started solves always have an incumbent");
    let bound = report.bound.expect("the solves here end with a bound");
    // The reported incumbent is the placement's own value.
    assert_eq!(
        incumbent,
        heuristic_value(
            &Snapshot {
                heuristic: report.placement.clone(),
                ..snapshot.clone()
            },
            report.objective
        )
    );
    let tolerance = 1e-6 * heuristic.abs().max(1.0);
    match report.objective {
        Objective::Alloc => {
            assert!(incumbent >= heuristic, "solver worse than its warm start");
            assert!(bound >= incumbent);
            assert!(
                heuristic <= bound,
                "heuristic allocation above the proven maximum"
            );
        }
        Objective::Power | Objective::Frag => {
            assert!(
                incumbent <= heuristic + tolerance,
                "solver worse than its warm start"
            );
            assert!(bound <= incumbent + tolerance);
            assert!(
                heuristic >= bound - tolerance,
                "heuristic below the proven bound"
            );
        }
    }
    let gap = gap_interval(report, heuristic, snapshot.cluster.gpu_capacity_milli()).unwrap();
    assert!(gap.low_pct >= -1e-6);
    assert!(gap.high_pct.unwrap() >= gap.low_pct - 1e-9);
    if report.status.is_optimal() {
        assert_eq!(Some(gap.low_pct), gap.high_pct);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn bounds_hold_for_real_sweeps(
        (types, tasks) in instance(),
        policy in prop_oneof![Just("fgd"), Just("pwr"), Just("bestfit"), Just("pwr:200,fgd:800"), Just("packing")],
        checkpoint in 30.0f64..160.0,
    ) {
        let cluster = cluster(&types);
        let (prepared, result) = sweep(&cluster, &tasks, policy);
        let snapshot = Snapshot::at_checkpoint(&cluster, &prepared, &result, checkpoint).unwrap();
        let options = options();

        let power = solve_at(&snapshot, Objective::Power, Method::PerNode, &options);
        check(&snapshot, &power);
        let alloc = solve_at(&snapshot, Objective::Alloc, Method::PerNode, &options);
        check(&snapshot, &alloc);
        let frag = solve_at(&snapshot, Objective::Frag, Method::PerNode, &options);
        check(&snapshot, &frag);

        // The relaxation bounds are valid, so never tighter than a feasible placement.
        let relaxed = solve_at(&snapshot, Objective::Power, Method::Relaxation, &options);
        prop_assert_eq!(&relaxed.status, &SolveStatus::RelaxationBound);
        prop_assert!(relaxed.bound.unwrap() <= power.incumbent.unwrap());
        let relaxed = solve_at(&snapshot, Objective::Alloc, Method::Relaxation, &options);
        prop_assert_eq!(&relaxed.status, &SolveStatus::RelaxationBound);
        prop_assert!(relaxed.bound.unwrap() >= alloc.incumbent.unwrap());
    }
}

/// The same snapshot solved twice gives the same report (placement included): the model is
/// built deterministically and HiGHS is deterministic when it proves optimality.
#[test]
fn solves_are_deterministic() {
    let types = [
        node_type(GpuModel::G2, 8, 96, 384),
        node_type(GpuModel::T4, 2, 104, 512),
        node_type(GpuModel::G2, 8, 96, 384),
    ];
    let tasks: Vec<Task> = SHAPES
        .iter()
        .cycle()
        .take(14)
        .enumerate()
        .map(|(i, &(cpu, gib, gpus, milli))| {
            Task::new(format!("t{i:02}"), cpu, gib * 1024, gpus, milli)
        })
        .collect();
    let cluster = cluster(&types);
    let (prepared, result) = sweep(&cluster, &tasks, "fgd");
    let snapshot = Snapshot::after_events(&cluster, &prepared, &result, tasks.len()).unwrap();
    for objective in Objective::ALL {
        let a = solve_at(&snapshot, objective, Method::PerNode, &options());
        let b = solve_at(&snapshot, objective, Method::PerNode, &options());
        assert_eq!(a.status, SolveStatus::Optimal, "{objective:?}");
        assert_eq!(
            (a.incumbent, a.bound, &a.placement),
            (b.incumbent, b.bound, &b.placement)
        );
    }
}

/// A snapshot whose placement breaks the rules is refused, not solved.
#[test]
fn invalid_heuristic_placement_is_an_error() {
    let cluster = cluster(&[node_type(GpuModel::T4, 1, 8, 32)]);
    let typical = gapbench_model::TypicalPods::default();
    let tasks = vec![Task::new("big", 16_000, 1024, 1, 500)];
    let placement = vec![Some(gapbench_model::Placement {
        node: 0,
        devices: gapbench_model::DeviceSet::single(0),
    })];
    assert!(Snapshot::new(&cluster, &typical, &tasks, placement.clone(), 100.0).is_err());
    let snapshot = Snapshot {
        cluster: &cluster,
        typical: &typical,
        tasks: &tasks,
        heuristic: placement,
        checkpoint_pct: 100.0,
    };
    let mut session = Session::new();
    let error = try_solve_in(
        &mut session,
        &snapshot,
        Objective::Power,
        Method::PerNode,
        &options(),
    )
    .unwrap_err();
    assert!(
        matches!(error, SolveError::Problem(ref e) if e.contains("CPU")),
        "{error:?}"
    );
}
