use gapbench_model::{CpuPowerProfile, GpuModel, NodeType};

use super::*;
use crate::error::BoundError;

/// Two nodes of 2 V100 (30 W idle, 300 W full) and one 16-core socket (15 W idle,
/// 120 W working): 75 W each when idle.
fn two_nodes() -> Cluster {
    nodes(2)
}

/// `count` nodes like [`two_nodes`]'.
fn nodes(count: usize) -> Cluster {
    let node_type = NodeType {
        gpu_model: Some(GpuModel::V100M16),
        gpu_count: 2,
        cpu_milli: 32_000,
        memory_mib: 65_536,
    };
    Cluster::new(
        (0..count).map(|i| (format!("n{i}"), node_type)),
        CpuPowerProfile::Reference,
    )
    .unwrap()
}

fn task(name: &str, gpu_milli: u16, from: f64, to: f64) -> BoundTask {
    let gpus = u8::from(gpu_milli > 0);
    BoundTask {
        task: Task::new(name, 2000, 1024, gpus, gpu_milli),
        start_s: from,
        end_s: to,
        util_permille: 500,
        gpu_memory_permille: 300,
    }
}

/// A (half a GPU, 0–20 s), B (0.6 GPU, 10–30 s), C (CPU only, 0–30 s).
fn three_tasks() -> Vec<BoundTask> {
    vec![
        task("A", 500, 0.0, 20.0),
        task("B", 600, 10.0, 30.0),
        task("C", 0, 0.0, 30.0),
    ]
}

fn bound(tasks: &[BoundTask], power: BoundPower) -> ReplayBound {
    bound_within(tasks, power, &BoundOptions::default()).unwrap()
}

/// The bound of `tasks` on two nodes over 0–30 s under `options`.
fn bound_within(
    tasks: &[BoundTask],
    power: BoundPower,
    options: &BoundOptions,
) -> Result<ReplayBound, BoundError> {
    bound_on(&two_nodes(), tasks, power, options)
}

/// The bound of `tasks` on `cluster` over 0–30 s under `options`.
fn bound_on(
    cluster: &Cluster,
    tasks: &[BoundTask],
    power: BoundPower,
    options: &BoundOptions,
) -> Result<ReplayBound, BoundError> {
    let typical = TypicalPods::default();
    let input = ReplayBoundInput {
        cluster,
        typical: &typical,
        tasks,
        span_s: (0.0, 30.0),
        power,
        reference: &[(0.0, 2000.0)],
    };
    replay_energy_bound(&input, options)
}

fn reservation(idle: IdleBound) -> BoundPower {
    BoundPower {
        gpu: GpuPowerBound::Reservation,
        idle,
        reclocks: false,
        oversubscribed: false,
        chooses_gpu_count: false,
    }
}

/// By hand: while A and C run (0–10 s) and while B and C run (20–30 s), one node holds
/// both at 120 + 300 + 30 = 450 W and the other idles at 75 W; while all three run, A and
/// B cannot share a device (0.5 + 0.6 > 1), so the best node draws 120 + 2·300 = 720 W
/// (splitting wakes a second socket: 900 W). E* = 10·525 + 10·795 + 10·525 = 18,450 J,
/// which the placement "everything on node a" reaches without moving a task.
#[test]
fn two_nodes_three_tasks_meet_the_hand_optimum() {
    let result = bound(&three_tasks(), reservation(IdleBound::AlwaysOn));
    assert_eq!(result.status, BoundStatus::Converged);
    assert_eq!(result.windows.len(), 3);
    let watts: Vec<f64> = result.windows.iter().map(|w| w.watts).collect();
    // The LP's bound meets the optimum up to HiGHS's tolerances (1e-6 relative).
    for (got, want) in watts.iter().zip([525.0, 795.0, 525.0]) {
        assert!(*got <= want && want - got < 1e-5, "{watts:?}");
    }
    assert!(result.energy_j <= 18_450.0 && 18_450.0 - result.energy_j < 1e-3);
}

/// Asleep at 10 % of idle, the empty node draws 7.5 W: E* = 10·(450 + 7.5)·2 +
/// 10·(720 + 7.5) = 16,425 J.
#[test]
fn a_sleeping_empty_node_costs_its_sleep_power() {
    let power = reservation(IdleBound::SleepWhenEmpty {
        sleep_fraction: 0.1,
    });
    let result = bound(&three_tasks(), power);
    assert_eq!(result.status, BoundStatus::Converged);
    let e = result.energy_j;
    assert!(e <= 16_425.0 && 16_425.0 - e < 1e-3, "{result:?}");
}

/// Re-clocking policies are charged dynamic power at the lowest clock only: V100's
/// `0.6^2.5` of 270 W, rounded down (75 W per working device).
#[test]
fn a_reclocking_policy_is_charged_the_lowest_clock() {
    let power = BoundPower {
        reclocks: true,
        ..reservation(IdleBound::AlwaysOn)
    };
    let result = bound(&three_tasks(), power);
    let dynamic = (270.0 * 0.6f64.powf(2.5)).floor();
    let middle = 75.0 + 120.0 + 2.0 * (30.0 + dynamic);
    assert!(
        (result.windows[1].watts - middle).abs() < 1e-5,
        "{result:?}"
    );
}

/// Utilisation mode: the static part (sockets and idle GPUs) plus each GPU task's floor
/// `270 W · min(η_min·U, m)`: with U = 0.5 and η_min = 0.6, 81 W for A and for B, less
/// the milliwatt kept for the replay's rounding.
#[test]
fn utilisation_mode_adds_each_tasks_dynamic_floor() {
    let power = BoundPower {
        gpu: GpuPowerBound::Utilisation {
            eta_min: 0.6,
            eta_alone: 1.0,
        },
        ..reservation(IdleBound::AlwaysOn)
    };
    let result = bound(&three_tasks(), power);
    let floor = 80.999;
    let first = 75.0 + 120.0 + 60.0 + floor;
    let middle = 75.0 + 120.0 + 60.0 + 2.0 * floor;
    assert!((result.windows[0].watts - first).abs() < 1e-5, "{result:?}");
    assert!(
        (result.windows[1].watts - middle).abs() < 1e-5,
        "{result:?}"
    );
}

/// With no time at all, every window keeps the empty cluster's power: still a bound.
#[test]
fn no_time_leaves_the_empty_cluster_floor() {
    let cluster = two_nodes();
    let typical = TypicalPods::default();
    let tasks = three_tasks();
    let input = ReplayBoundInput {
        cluster: &cluster,
        typical: &typical,
        tasks: &tasks,
        span_s: (0.0, 30.0),
        power: reservation(IdleBound::AlwaysOn),
        reference: &[],
    };
    let options = BoundOptions {
        time_limit_s: 0.0,
        ..BoundOptions::default()
    };
    let result = replay_energy_bound(&input, &options).unwrap();
    assert_eq!(result.status, BoundStatus::TimeLimit);
    assert!((result.energy_j - 30.0 * 150.0).abs() < 1e-6);
}

#[test]
fn a_task_that_is_no_interval_is_refused() {
    let cluster = two_nodes();
    let typical = TypicalPods::default();
    let tasks = vec![task("A", 500, 5.0, f64::NAN)];
    let input = ReplayBoundInput {
        cluster: &cluster,
        typical: &typical,
        tasks: &tasks,
        span_s: (0.0, 30.0),
        power: reservation(IdleBound::AlwaysOn),
        reference: &[],
    };
    let error = replay_energy_bound(&input, &BoundOptions::default()).unwrap_err();
    assert!(
        matches!(error, BoundError::Input(ref e) if e.contains("task A")),
        "{error:?}"
    );
}

/// The per-node MIP of each window proves the hand optima: always-on 525, 795, 525 W;
/// asleep at 10 % of idle 457.5, 727.5, 457.5 W (the empty node at 7.5 W).
#[test]
fn the_window_mip_proves_the_hand_optima() {
    let cluster = two_nodes();
    let typical = TypicalPods::default();
    let tasks = three_tasks();
    let cases = [
        (IdleBound::AlwaysOn, [525.0, 795.0, 525.0]),
        (
            IdleBound::SleepWhenEmpty {
                sleep_fraction: 0.1,
            },
            [457.5, 727.5, 457.5],
        ),
    ];
    for (idle, want) in cases {
        let input = ReplayBoundInput {
            cluster: &cluster,
            typical: &typical,
            tasks: &tasks,
            span_s: (0.0, 30.0),
            power: reservation(idle),
            reference: &[(0.0, 2000.0)],
        };
        for ((from, to), want) in [(0.0, 10.0), (10.0, 20.0), (20.0, 30.0)]
            .into_iter()
            .zip(want)
        {
            let mip = window_mip(&input, from, to, &SolveOptions::default()).unwrap();
            assert!(mip.optimal, "{idle:?} {from}..{to}: {mip:?}");
            assert!((mip.bound_watts - want).abs() < 1e-6, "{idle:?}: {mip:?}");
            assert_eq!(
                (mip.tasks, mip.packed),
                (2 + usize::from(from == 10.0), mip.tasks)
            );
        }
    }
}

/// A cap of no exact pricing round would leave column generation nothing to prove with:
/// refused, like no window.
#[test]
fn a_cap_of_no_round_is_refused() {
    let options = BoundOptions {
        max_pricing_rounds: Some(0),
        ..BoundOptions::default()
    };
    let power = reservation(IdleBound::AlwaysOn);
    let error = bound_within(&three_tasks(), power, &options).unwrap_err();
    assert!(
        matches!(error, BoundError::Input(ref e) if e.contains("exact pricing round")),
        "{error:?}"
    );
}

/// A cap that does not bind changes nothing: the hand case converges within one exact
/// round per window, with the same windows and watts as without a cap.
#[test]
fn a_cap_that_does_not_bind_leaves_the_converged_bound() {
    let capped = BoundOptions {
        max_pricing_rounds: Some(1),
        ..BoundOptions::default()
    };
    let power = reservation(IdleBound::AlwaysOn);
    let capped = bound_within(&three_tasks(), power, &capped).unwrap();
    let free = bound(&three_tasks(), power);
    assert_eq!(capped.status, BoundStatus::Converged);
    assert_eq!(capped.windows, free.windows);
}

/// Three whole-GPU tasks on three sleeping nodes (5 % of 75 W: 3.75 W asleep). A node with
/// two of them draws 120 + 2·300 = 720 W, with one 120 + 300 + 30 = 450 W, so per task
/// the pair is cheaper and the configuration LP wakes one and a half nodes of pairs:
/// 3·3.75 + 1.5·(720 − 3.75) = 1,085.625 W. Whole nodes wake: a pair and a single,
/// 3·3.75 + (720 − 3.75) + (450 − 3.75) = 1,173.75 W, the window's integer optimum, which
/// branching on the nodes at work proves (its `≥ 2` branch is that placement).
#[test]
fn branching_proves_the_least_power_of_whole_wake_ups() {
    let tasks: Vec<BoundTask> = ["A", "B", "C"]
        .into_iter()
        .map(|name| task(name, 1000, 0.0, 30.0))
        .collect();
    let power = reservation(IdleBound::SleepWhenEmpty {
        sleep_fraction: 0.05,
    });
    let lp_only = bound_on(&nodes(3), &tasks, power, &BoundOptions::default()).unwrap();
    let branching = BoundOptions {
        max_branch_nodes: Some(10),
        max_pricing_rounds: Some(20),
        ..BoundOptions::default()
    };
    let integer = bound_on(&nodes(3), &tasks, power, &branching).unwrap();
    let watts = |b: &ReplayBound| b.energy_j / 30.0;
    assert_eq!(lp_only.status, BoundStatus::Converged);
    assert!((watts(&lp_only) - 1_085.625).abs() < 1e-4, "{lp_only:?}");
    assert_eq!(integer.status, BoundStatus::Integer, "{integer:?}");
    assert!((watts(&integer) - 1_173.75).abs() < 1e-4, "{integer:?}");
    assert!((integer.lp_energy_j - lp_only.energy_j).abs() < 1e-3);
    assert!(integer
        .windows
        .iter()
        .all(|w| w.integer && w.watts >= w.lp_watts));
}
