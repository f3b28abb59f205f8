//! Column generation against exact answers: on openb sub-clusters of nine traces (default,
//! multi-GPU, GPU sharing, GPU-model constraints, CPU-heavy) where the per-node MIP proves
//! optimality, and against brute force on tiny random clusters. The CG bound never
//! passes a proven optimum, its incumbent is a real placement (the checker passes, the
//! value is the placement's own), and where the per-node model is optimal CG finds the
//! same optimum.

mod support;

use gapbench_ilp::{
    check_assignment, heuristic_value, sample_sub_cluster, Method, Objective, Session, Snapshot,
    SolveOptions, SolveReport, SolveStatus,
};
use gapbench_model::testing::openb_traces_dir;
use gapbench_model::workload::{load_nodes_csv, load_tasks_csv};
use gapbench_model::{prepare, CpuPowerProfile, GpuModel, InputRules, NodeOrder, Task, TaskOrder};
use gapbench_online::{run_arrival_sweep, PolicySpec};
use proptest::prelude::*;
use support::{
    brute_force, cg_with_stats, cluster, events_of, node_type, small_task, solve_at, solve_in,
    sweep, tasks_of,
};

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
        !matches!(report.status, SolveStatus::Infeasible),
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

/// One openb sub-cluster to compare on: its trace, the seed of the sub-cluster draw, the
/// shuffle and the node order, its size and the policy whose sweep the snapshots are cut from.
struct Case {
    /// `openb_pod_list_{trace}.csv`
    trace: &'static str,
    seed: u64,
    nodes: usize,
    policy: &'static str,
}

/// What [`compare_with_the_per_node_mip`] saw: how many snapshots and objectives it
/// compared (`solved`: every one, by the overlap of the two intervals), how many of them
/// the per-node MIP solved to a proven optimum (`compared`), at how many CG's incumbent is
/// that optimum (`found`) and at how many CG proved it too (`both_optimal`); the same for
/// fragmentation alone; and how many configurations the later checkpoints started from.
/// Which solves prove their optimum within the clock depends on the machine, so only
/// `solved` and `carried` are asserted; the rest is printed.
#[derive(Debug, Default)]
struct Comparison {
    solved: usize,
    compared: usize,
    found: usize,
    both_optimal: usize,
    frag_compared: usize,
    frag_found: usize,
    frag_both_optimal: usize,
    carried: usize,
}

/// Real openb sub-clusters, the trace tuned to 1.3× the sub-cluster's capacity: at each
/// checkpoint and objective, wherever the per-node model proves its optimum, CG brackets it
/// (bound on the far side, incumbent on the near side), and where CG proves optimality too
/// the two optima are equal. Each checkpoint's CG starts from the columns the previous one
/// used, as in a gap study.
fn compare_with_the_per_node_mip(
    cases: &[Case],
    checkpoints: &[f64],
    options: &SolveOptions,
) -> Comparison {
    let dir = openb_traces_dir();
    let full = load_nodes_csv(
        &dir.join("openb_node_list_gpu_node.csv"),
        CpuPowerProfile::Reference,
    )
    .unwrap();
    let mut seen = Comparison::default();
    for case in cases {
        let tasks = load_tasks_csv(
            &dir.join(format!("openb_pod_list_{}.csv", case.trace)),
            InputRules::Strict,
        )
        .unwrap()
        .tasks;
        let (sub, _) = sample_sub_cluster(&full, case.nodes, case.seed).unwrap();
        let prepared = prepare(
            &tasks,
            &sub,
            TaskOrder::Shuffled,
            Some(1.3),
            NodeOrder::Random,
            case.seed,
        );
        let spec: PolicySpec = case.policy.parse().unwrap();
        let result = events_of(&run_arrival_sweep(&sub, &prepared, &spec));
        let mut session = Session::new();
        for &checkpoint in checkpoints {
            let snapshot = Snapshot::at_checkpoint(&sub, &prepared, &result, checkpoint).unwrap();
            for objective in Objective::ALL {
                let what = format!(
                    "{} seed {} {} nodes {} {checkpoint}% {}",
                    case.trace,
                    case.seed,
                    case.nodes,
                    case.policy,
                    objective.name()
                );
                compare_one(
                    &snapshot,
                    objective,
                    options,
                    &mut session,
                    &what,
                    &mut seen,
                );
            }
        }
    }
    eprintln!("{seen:?}");
    seen
}

/// One snapshot and objective of [`compare_with_the_per_node_mip`]. Whatever either solver
/// proves, the optimum lies in both intervals, so they overlap; where the MIP proves it, CG
/// brackets it, and where CG proves it too the two are equal.
fn compare_one(
    snapshot: &Snapshot,
    objective: Objective,
    options: &SolveOptions,
    session: &mut Session,
    what: &str,
    seen: &mut Comparison,
) {
    let exact = solve_at(snapshot, objective, Method::PerNode, options);
    let cg = solve_in(
        session,
        snapshot,
        objective,
        Method::ColumnGeneration,
        options,
    );
    let stats = session.last_stats();
    seen.carried += stats.carried_columns;
    let (incumbent, bound) = checked(snapshot, &cg);
    seen.solved += 1;
    eprintln!(
        "{what}: MIP {} [{:?}, {:?}], CG {} [{bound}, {incumbent}]",
        exact.status.label(),
        exact.bound,
        exact.incumbent,
        cg.status.label()
    );
    if let (Some(exact_bound), Some(exact_incumbent)) = (exact.bound, exact.incumbent) {
        for (bound, incumbent) in [(bound, exact_incumbent), (exact_bound, incumbent)] {
            let tolerance = 1e-6 * incumbent.abs().max(1.0);
            let passes = if objective.maximise() {
                bound < incumbent - tolerance
            } else {
                bound > incumbent + tolerance
            };
            assert!(
                !passes,
                "{what}: a bound {bound} passes an incumbent {incumbent}"
            );
        }
    }
    if !exact.status.is_optimal() {
        return;
    }
    let optimum = exact.incumbent.unwrap();
    assert_brackets(objective, bound, optimum, incumbent);
    let tolerance = 1e-6 * optimum.abs().max(1.0);
    let found = (incumbent - optimum).abs() <= tolerance;
    let both = cg.status.is_optimal();
    assert!(
        found || !both,
        "{what}: CG proved {incumbent}, the MIP proved {optimum}"
    );
    let frag = objective == Objective::Frag;
    seen.compared += 1;
    seen.found += usize::from(found);
    seen.both_optimal += usize::from(both);
    seen.frag_compared += usize::from(frag);
    seen.frag_found += usize::from(frag && found);
    seen.frag_both_optimal += usize::from(frag && both);
}

/// The default trace, three seeds and policies (5–6 nodes, 10 s per solve). Price-and-branch
/// proves optimality only when the configuration LP's bound meets an integer solution of
/// the generated columns, so most, not all, comparisons are between two proofs.
#[test]
fn cg_finds_the_per_node_optimum_on_openb_sub_clusters() {
    let cases = [
        Case {
            trace: "default",
            seed: 1,
            nodes: 6,
            policy: "fgd",
        },
        Case {
            trace: "default",
            seed: 2,
            nodes: 6,
            policy: "pwr",
        },
        Case {
            trace: "default",
            seed: 3,
            nodes: 5,
            policy: "bestfit",
        },
    ];
    let checkpoints = [60.0, 100.0];
    let seen = compare_with_the_per_node_mip(&cases, &checkpoints, &options());
    // Observed on a loaded 2-core machine: 11 proven optima, all found by CG, 4 proven by
    // CG too, the rest bracketed (the configuration LP of a 5–6-node cluster has a few %
    // integrality gap). The MIP proves no fragmentation optimum on these clusters in 10 s.
    assert_every_snapshot_compared(&seen, cases.len() * checkpoints.len());
}

/// Four-node sub-clusters of the multi-GPU traces (20–50 % more whole- and multi-GPU
/// demand), each with its own seed and policy, at 50 % and 100 % arrived, 3 s per solve.
/// The per-node MIP proves fragmentation optima here (few devices, many whole GPUs), so
/// these are the comparisons of fragmentation between two proofs.
#[test]
fn cg_finds_the_per_node_optimum_on_multi_gpu_traces() {
    let cases = [
        case("multigpu50", 4, "pwr"),
        case("multigpu40", 10, "pwr"),
        case("multigpu30", 8, "fgd"),
        case("multigpu20", 11, "bestfit"),
    ];
    let checkpoints = [50.0, 100.0];
    let seen = compare_with_the_per_node_mip(&cases, &checkpoints, &short_options());
    // Observed on a loaded 2-core machine: 22 proven optima, 21 found by CG, 13 proven by
    // CG too; fragmentation: 6 proven optima, 5 found, 2 proven by CG too.
    assert_every_snapshot_compared(&seen, cases.len() * checkpoints.len());
}

/// Four-node sub-clusters of three more traces: every sharing task at full GPU demand
/// (`gpushare100`), GPU-model constraints on a tenth and a third of the GPU tasks
/// (`gpuspec10`, `gpuspec33`), a larger share of CPU-only tasks (`cpu250`).
#[test]
fn cg_finds_the_per_node_optimum_on_sharing_constrained_and_cpu_heavy_traces() {
    let cases = [
        case("gpushare100", 5, "fgd"),
        case("gpuspec33", 7, "random"),
        case("gpuspec10", 12, "fgd"),
        case("cpu250", 6, "bestfit"),
    ];
    let checkpoints = [50.0, 100.0];
    let seen = compare_with_the_per_node_mip(&cases, &checkpoints, &short_options());
    // Observed on a loaded 2-core machine: 12 proven optima, 11 found by CG, 6 proven by CG
    // too. The MIP proves no fragmentation optimum here within 3 s on a loaded machine (on
    // an idle one, `gpuspec33` at 50 % in 2 s, which CG proves too).
    assert_every_snapshot_compared(&seen, cases.len() * checkpoints.len());
}

/// A four-node sub-cluster of `openb_pod_list_{trace}.csv`.
fn case(trace: &'static str, seed: u64, policy: &'static str) -> Case {
    Case {
        trace,
        seed,
        nodes: 4,
        policy,
    }
}

fn short_options() -> SolveOptions {
    SolveOptions {
        time_limit_s: 3.0,
        ..options()
    }
}

/// Every objective of every one of `snapshots` was compared (each assertion of
/// [`compare_one`] ran on it), and configurations were carried between checkpoints. How
/// many optima either solver proved within its clock is printed, never asserted: on a
/// slower machine fewer proofs come in time, and that is no defect of either.
fn assert_every_snapshot_compared(seen: &Comparison, snapshots: usize) {
    eprintln!(
        "[proven optima, found by CG, proven by CG]: {:?}, of fragmentation: {:?}",
        [seen.compared, seen.found, seen.both_optimal],
        [seen.frag_compared, seen.frag_found, seen.frag_both_optimal]
    );
    assert_eq!(seen.solved, snapshots * Objective::ALL.len(), "{seen:?}");
    assert!(
        seen.carried > 0,
        "no configuration carried between checkpoints"
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
    let report = solve_at(
        &snapshot,
        Objective::Power,
        Method::ColumnGeneration,
        &options(),
    );
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
/// has two busy devices, but the configuration LP takes 1.5 nodes of the pair (82 W below
/// the optimum: a node at work costs 165 W more than idle — a socket, 120 − 15 W; a T4,
/// 70 − 10 W — and watts are whole). Column generation converges with that integer gap;
/// branching on the number of nodes at work (≤ 1: one device cannot hold 1,200 milli; ≥ 2:
/// the LP is integral) closes it, so the status is `optimal`. Asked for a gap that wide,
/// it stops at `gap_limit` without branching.
#[test]
fn branching_closes_the_integer_gap_of_a_converged_lp() {
    let types = vec![node_type(GpuModel::T4, 1, 16, 64); 3];
    let cluster = cluster(&types);
    let tasks: Vec<Task> = (0..3)
        .map(|i| Task::new(format!("share{i}"), 2000, 1024, 1, 400))
        .collect();
    let (prepared, result) = sweep(&cluster, &tasks, "random");
    let snapshot = Snapshot::after_events(&cluster, &prepared, &result, tasks.len()).unwrap();
    let (report, stats) = cg_with_stats(&snapshot, Objective::Power, &options());
    let (incumbent, bound) = checked(&snapshot, &report);
    let brute = brute_force(&cluster, &prepared.typical, &tasks);
    assert_eq!(incumbent, brute.min_power_watts.unwrap() as f64);
    assert!(stats.converged);
    assert_eq!(
        incumbent - stats.lp_value.ceil(),
        82.0,
        "the LP {} is half a node below {incumbent}",
        stats.lp_value
    );
    assert!(stats.branch_nodes >= 2, "{} tree nodes", stats.branch_nodes);
    assert_eq!(report.status, SolveStatus::Optimal);
    assert_eq!(bound, incumbent);
    let relaxed = SolveOptions {
        mip_rel_gap: 0.5,
        ..options()
    };
    let (report, stats) = cg_with_stats(&snapshot, Objective::Power, &relaxed);
    assert_eq!(report.status, SolveStatus::GapLimit);
    assert_eq!(stats.branch_nodes, 0);
}

/// The paper bench's 8-node sub-cluster (default trace, seed 42), PWR's placement at 80 %
/// arrived, least power: column generation converges 2.2 % below the placement it finds,
/// branching on node and task counts per type leaves leaves whose counts are integral but
/// whose configurations are not (measured: 5 tree nodes, the incumbent 6,950 W, the bound
/// 6,795 W), so the status says exactly that: `lp_bound`, the bound proven, the integer gap
/// open — never `optimal`, never `gap_limit` at `--mip-gap 0`. The LP's convergence is
/// what the status rests on, so pricing is capped by rounds, not by the clock (each exact
/// pricing call stops at its node and scan budgets), and the clock is a safety net: measured
/// on a loaded 2-core machine, pricing converged in 29 exact rounds and 0.47 s of its share
/// (at least half of the 30 s); branching then spent what was left (18 s, 9 tree nodes)
/// without closing the gap, as it did within the 10 s this test had before.
#[test]
fn an_integer_gap_branching_cannot_close_says_lp_bound() {
    let dir = openb_traces_dir();
    let full = load_nodes_csv(
        &dir.join("openb_node_list_gpu_node.csv"),
        CpuPowerProfile::Reference,
    )
    .unwrap();
    let tasks = load_tasks_csv(&dir.join("openb_pod_list_default.csv"), InputRules::Strict)
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
    let spec: PolicySpec = "pwr".parse().unwrap();
    let result = events_of(&run_arrival_sweep(&sub, &prepared, &spec));
    let snapshot = Snapshot::at_checkpoint(&sub, &prepared, &result, 80.0).unwrap();
    let capped = SolveOptions {
        time_limit_s: 30.0,
        max_pricing_rounds: Some(100),
        ..options()
    };
    let (report, stats) = cg_with_stats(&snapshot, Objective::Power, &capped);
    eprintln!("{stats:?}");
    let (incumbent, bound) = checked(&snapshot, &report);
    assert!(
        stats.converged,
        "the LP converges within {} exact pricing rounds",
        stats.exact_rounds
    );
    assert!(stats.branch_nodes >= 1, "the tree ran");
    assert!(bound < incumbent, "bound {bound}, incumbent {incumbent}");
    assert_eq!(report.status, SolveStatus::LpBound);
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
            let report = solve_at(&snapshot, objective, Method::ColumnGeneration, &options());
            let (incumbent, bound) = checked(&snapshot, &report);
            let optimum = match objective {
                Objective::Power => brute_placed.min_power_watts.unwrap() as f64,
                Objective::Frag => brute_placed.min_frag_milli.unwrap(),
                Objective::Alloc => brute.max_alloc_milli as f64,
            };
            assert_brackets(objective, bound, optimum, incumbent);
            // A proof is a proof: `optimal` (branching included) means the optimum.
            if report.status == SolveStatus::Optimal {
                let tolerance = 1e-6 * optimum.abs().max(1.0);
                prop_assert!(
                    (incumbent - optimum).abs() <= tolerance,
                    "{} proved {incumbent}, brute force {optimum}",
                    objective.name()
                );
            }
        }
    }
}
