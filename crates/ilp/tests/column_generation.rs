//! Column generation against exact answers: on openb sub-clusters where the per-node MIP
//! proves optimality, and against brute force on tiny random clusters. The CG bound never
//! passes a proven optimum, its incumbent is a real placement (the checker passes, the
//! value is the placement's own), and where the per-node model is optimal CG finds the
//! same optimum.

mod support;

use gapbench_ilp::{
    check_assignment, column_generation, column_generation_carrying, heuristic_value, max_alloc,
    min_frag, min_power, sample_sub_cluster, ColumnCarry, Objective, Snapshot, SolveOptions,
    SolveReport, SolveStatus,
};
use gapbench_model::testing::openb_traces_dir;
use gapbench_model::workload::{load_nodes_csv, load_tasks_csv};
use gapbench_model::{prepare, CpuPowerProfile, GpuModel, InputRules, NodeOrder, Task, TaskOrder};
use gapbench_online::{run_arrival_sweep, PolicySpec};
use proptest::prelude::*;
use support::{brute_force, cluster, events_of, node_type, small_task, sweep, tasks_of};

fn options() -> SolveOptions {
    SolveOptions {
        time_limit_s: 10.0,
        threads: Some(1),
        ..SolveOptions::default()
    }
}

/// The placement is valid and the incumbent is its value; returns (incumbent, bound).
fn checked(snapshot: &Snapshot, report: &SolveReport) -> (f64, f64) {
    assert!(
        !matches!(
            report.status,
            SolveStatus::Error(_) | SolveStatus::Infeasible
        ),
        "{:?}",
        report.status
    );
    check_assignment(snapshot.cluster, snapshot.tasks, &report.placement).unwrap();
    let incumbent = report.incumbent.expect("CG always has an incumbent");
    let own = heuristic_value(
        &Snapshot {
            heuristic: report.placement.clone(),
            ..snapshot.clone()
        },
        report.objective,
    );
    assert_eq!(incumbent, own, "the incumbent is the placement's own value");
    let bound = report.bound.expect("CG always has a bound");
    (incumbent, bound)
}

/// `bound ≤ optimum ≤ incumbent` in the objective's direction.
fn assert_brackets(objective: Objective, bound: f64, optimum: f64, incumbent: f64) {
    let tolerance = 1e-6 * optimum.abs().max(1.0);
    if objective.maximise() {
        assert!(
            bound >= optimum - tolerance,
            "bound {bound} < optimum {optimum}"
        );
        assert!(
            incumbent <= optimum + tolerance,
            "incumbent {incumbent} > optimum {optimum}"
        );
    } else {
        assert!(
            bound <= optimum + tolerance,
            "bound {bound} > optimum {optimum}"
        );
        assert!(
            incumbent >= optimum - tolerance,
            "incumbent {incumbent} < optimum {optimum}"
        );
    }
}

/// Real openb sub-clusters (the default trace, tuned to 1.3× the sub-cluster's capacity):
/// wherever the per-node model proves its optimum, CG brackets it, and where CG proves
/// optimality too the two optima are equal. Price-and-branch proves optimality only when
/// the configuration LP's bound meets an integer solution of the generated columns, so
/// most, not all, comparisons are between two proofs.
#[test]
fn cg_finds_the_per_node_optimum_on_openb_sub_clusters() {
    let dir = openb_traces_dir();
    let full = load_nodes_csv(
        &dir.join("openb_node_list_gpu_node.csv"),
        CpuPowerProfile::Reference,
    )
    .unwrap();
    let tasks = load_tasks_csv(&dir.join("openb_pod_list_default.csv"), InputRules::Strict)
        .unwrap()
        .tasks;
    let (mut compared, mut both_optimal, mut carried) = (0, 0, 0);
    for (seed, nodes, policy) in [(1u64, 6usize, "fgd"), (2, 6, "pwr"), (3, 5, "bestfit")] {
        let (sub, _) = sample_sub_cluster(&full, nodes, seed).unwrap();
        let prepared = prepare(
            &tasks,
            &sub,
            TaskOrder::Shuffled,
            Some(1.3),
            NodeOrder::Random,
            seed,
        );
        let spec: PolicySpec = policy.parse().unwrap();
        let result = events_of(&run_arrival_sweep(&sub, &prepared, &spec));
        // The 100 % solves start from the columns the 60 % ones used, as in a gap study.
        let mut carry = ColumnCarry::new();
        for checkpoint in [60.0, 100.0] {
            let snapshot = Snapshot::at_checkpoint(&sub, &prepared, &result, checkpoint).unwrap();
            for objective in Objective::ALL {
                let exact = match objective {
                    Objective::Power => min_power(&snapshot, &options()),
                    Objective::Alloc => max_alloc(&snapshot, &options()),
                    Objective::Frag => min_frag(&snapshot, &options()),
                };
                let (cg, stats) =
                    column_generation_carrying(&snapshot, objective, &options(), &mut carry);
                carried += stats.carried_columns;
                let (incumbent, bound) = checked(&snapshot, &cg);
                if !exact.status.is_optimal() {
                    continue;
                }
                let optimum = exact.incumbent.unwrap();
                assert_brackets(objective, bound, optimum, incumbent);
                compared += 1;
                if cg.status.is_optimal() {
                    let tolerance = 1e-6 * optimum.abs().max(1.0);
                    assert!(
                        (incumbent - optimum).abs() <= tolerance,
                        "seed {seed} {policy} {checkpoint}% {}: CG {incumbent} != optimum {optimum}",
                        objective.name()
                    );
                    both_optimal += 1;
                } else {
                    eprintln!(
                        "seed {seed} {policy} {checkpoint}% {}: optimum {optimum}, CG [{bound}, {incumbent}] {}",
                        objective.name(),
                        cg.status.label()
                    );
                }
            }
        }
    }
    assert!(
        compared >= 9,
        "only {compared} proven optima to compare with"
    );
    assert!(carried > 0, "no configuration carried from 60 % to 100 %");
    // Observed: 4 of 13 proven by CG too; the rest bracketed (the configuration LP of a
    // 5–6-node cluster has a few % integrality gap).
    assert!(
        both_optimal >= 3,
        "CG proved only {both_optimal} of {compared} optima"
    );
}

/// A hand-made case: two 2×T4 nodes, four half-GPU tasks. Least power puts all four on
/// one node's two devices (one node idle); CG proves it.
#[test]
fn cg_proves_a_hand_computed_power_optimum() {
    let types = vec![node_type(GpuModel::T4, 2, 16, 64); 2];
    let cluster = cluster(&types);
    let tasks: Vec<Task> = (0..4)
        .map(|i| Task::new(format!("half{i}"), 2000, 1024, 1, 500))
        .collect();
    let (prepared, result) = sweep(&cluster, &tasks, "random");
    let snapshot = Snapshot::after_events(&cluster, &prepared, &result, tasks.len()).unwrap();
    let report = column_generation(&snapshot, Objective::Power, &options());
    let (incumbent, bound) = checked(&snapshot, &report);
    let brute = brute_force(&cluster, &prepared.typical, &tasks);
    assert_eq!(incumbent, brute.min_power_watts.unwrap() as f64);
    assert_eq!(report.status, SolveStatus::Optimal);
    assert_eq!(bound, incumbent);
    // One node works (its two devices full), the other idles.
    let nodes: std::collections::BTreeSet<u32> =
        report.placement.iter().flatten().map(|p| p.node).collect();
    assert_eq!(nodes.len(), 1);
}

/// Three single-GPU nodes, three 400-milli tasks: two share a device, so the least power
/// has two busy devices, but the configuration LP takes 1.5 nodes of the pair. Column
/// generation converges, its bound is that LP optimum, and the status says the integer gap
/// is left open (`lp_bound`), not that time or a requested gap stopped it; asked for a
/// gap that wide, it stops at `gap_limit`.
#[test]
fn a_converged_solve_with_an_integer_gap_says_lp_bound() {
    let types = vec![node_type(GpuModel::T4, 1, 16, 64); 3];
    let cluster = cluster(&types);
    let tasks: Vec<Task> = (0..3)
        .map(|i| Task::new(format!("share{i}"), 2000, 1024, 1, 400))
        .collect();
    let (prepared, result) = sweep(&cluster, &tasks, "random");
    let snapshot = Snapshot::after_events(&cluster, &prepared, &result, tasks.len()).unwrap();
    let report = column_generation(&snapshot, Objective::Power, &options());
    let (incumbent, bound) = checked(&snapshot, &report);
    let brute = brute_force(&cluster, &prepared.typical, &tasks);
    assert_eq!(incumbent, brute.min_power_watts.unwrap() as f64);
    // A node at work costs 165 W more than idle (a socket, 120 − 15 W; a T4, 70 − 10 W):
    // the LP saves half a node, 82.5 W, and watts are whole (the bound rounds up).
    assert_eq!(
        incumbent - bound,
        82.0,
        "bound {bound}, incumbent {incumbent}"
    );
    assert_eq!(report.status, SolveStatus::LpBound);
    let relaxed = SolveOptions {
        mip_rel_gap: 0.5,
        ..options()
    };
    let report = column_generation(&snapshot, Objective::Power, &relaxed);
    assert_eq!(report.status, SolveStatus::GapLimit);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Tiny random clusters (some nodes identical): the CG bound never passes the
    /// brute-force optimum, the incumbent never beats it, the placement passes the checker.
    #[test]
    fn cg_bound_never_passes_the_brute_force_optimum(
        kinds in prop::collection::vec(0usize..3, 2..=4),
        raw in prop::collection::vec(small_task(), 1..=6),
        policy in prop_oneof![Just("fgd"), Just("pwr"), Just("bestfit"), Just("random")],
    ) {
        let menu = [
            node_type(GpuModel::T4, 2, 16, 64),
            node_type(GpuModel::G2, 1, 40, 64),
            node_type(GpuModel::P100, 0, 8, 16),
        ];
        let types: Vec<_> = kinds.iter().map(|&k| menu[k]).collect();
        let cluster = cluster(&types);
        let tasks = tasks_of(raw, &[GpuModel::T4]);
        let (prepared, result) = sweep(&cluster, &tasks, policy);
        let snapshot = Snapshot::after_events(&cluster, &prepared, &result, tasks.len()).unwrap();
        let brute = brute_force(&cluster, &prepared.typical, snapshot.tasks);
        // Power and fragmentation place exactly the heuristic's placed tasks.
        let placed: Vec<Task> = snapshot
            .placed_tasks()
            .into_iter()
            .map(|i| snapshot.tasks[i].clone())
            .collect();
        let brute_placed = brute_force(&cluster, &prepared.typical, &placed);
        for objective in Objective::ALL {
            let report = column_generation(&snapshot, objective, &options());
            let (incumbent, bound) = checked(&snapshot, &report);
            let optimum = match objective {
                Objective::Power => brute_placed.min_power_watts.unwrap() as f64,
                Objective::Frag => brute_placed.min_frag_milli.unwrap(),
                Objective::Alloc => brute.max_alloc_milli as f64,
            };
            assert_brackets(objective, bound, optimum, incumbent);
        }
    }
}
