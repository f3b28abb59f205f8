//! The walks on a hand instance whose front is known.
//!
//! Four nodes of 64 vCPU (two Xeon E5-2682 v4 sockets: 15 W idle, 120 W working, 16 cores
//! each) and one G2 GPU (30 W idle); tasks A of 40 and B of 20 vCPU, two of each; one
//! typical pod of 8 vCPU and one GPU. A node holding A and B has 4 vCPU left, so its GPU is
//! a fragment (1,000 milli-GPU); a node holding A alone draws 240 W, B alone 135 W, nothing
//! 30 W. The front: A+B, A+B (660 W, 2,000), one B moved to an empty node (765 W, 1,000),
//! both moved (870 W, 0): no placement of 660 W or less has less fragmentation, none below
//! 765 W less than 1,000.

use gapbench_model::{
    Cluster, CpuPowerProfile, DeviceSet, GpuModel, GpuModelSet, NodeType, Placement, Task,
    TypicalPod, TypicalPods,
};

use super::cap_context::Measured;
use super::walk::{relink_from, walk_from, Toward};
use super::{reported_caps, CapOutcome, Found};
use crate::snapshot::{check_assignment, Snapshot};

fn cluster() -> Cluster {
    let node_type = NodeType {
        gpu_model: Some(GpuModel::G2),
        gpu_count: 1,
        cpu_milli: 64_000,
        memory_mib: 256 * 1024,
    };
    Cluster::new(
        (0..4).map(|n| (format!("n{n}"), node_type)),
        CpuPowerProfile::Reference,
    )
    .unwrap()
}

fn typical() -> TypicalPods {
    TypicalPods {
        pods: vec![TypicalPod {
            cpu_milli: 8_000,
            gpu_milli: 1000,
            gpu_count: 1,
            gpu_models: GpuModelSet::any(),
            count: 1,
            probability: 1.0,
        }],
        distinct_shapes: 1,
        coverage_pct: 100.0,
    }
}

fn tasks() -> Vec<Task> {
    [
        ("a0", 40_000),
        ("b0", 20_000),
        ("a1", 40_000),
        ("b1", 20_000),
    ]
    .into_iter()
    .map(|(name, cpu)| Task::new(name, cpu, 1024, 0, 0))
    .collect()
}

fn on(nodes: [u32; 4]) -> Vec<Option<Placement>> {
    nodes
        .into_iter()
        .map(|node| {
            Some(Placement {
                node,
                devices: DeviceSet::EMPTY,
            })
        })
        .collect()
}

/// The snapshot of the hand instance, its heuristic placement `placement`.
fn snapshot<'a>(
    cluster: &'a Cluster,
    typical: &'a TypicalPods,
    tasks: &'a [Task],
    placement: &[Option<Placement>],
) -> Snapshot<'a> {
    Snapshot {
        cluster,
        typical,
        tasks,
        heuristic: placement.to_vec(),
        checkpoint_pct: 100.0,
    }
}

fn costs(found: &[Measured]) -> Vec<(f64, f64)> {
    found
        .iter()
        .map(|m| (m.power_watts, m.frag_milli.round()))
        .collect()
}

/// Every placement valid, none dominating another.
fn assert_valid_and_non_dominated(snapshot: &Snapshot, found: &[Measured]) {
    for (i, m) in found.iter().enumerate() {
        check_assignment(snapshot.cluster, snapshot.tasks, &m.placement).unwrap();
        for (j, other) in found.iter().enumerate() {
            let dominates = other.power_watts <= m.power_watts && other.frag_milli < m.frag_milli;
            assert!(
                i == j || !dominates,
                "{:?} dominates {:?}",
                costs(&found[j..=j]),
                costs(&found[i..=i])
            );
        }
    }
}

#[test]
fn the_walk_from_the_least_power_placement_finds_the_known_front() {
    let (cluster, typical, tasks) = (cluster(), typical(), tasks());
    let least_power = on([0, 0, 1, 1]);
    let snapshot = snapshot(&cluster, &typical, &tasks, &least_power);
    let found = walk_from(&snapshot, &least_power, Toward::LessFrag, f64::INFINITY).unwrap();
    assert_valid_and_non_dominated(&snapshot, &found);
    assert_eq!(
        costs(&found),
        vec![(660.0, 2000.0), (765.0, 1000.0), (870.0, 0.0)]
    );
    // Under a cap of 800 W the walk stops at the intermediate point.
    let capped = walk_from(&snapshot, &least_power, Toward::LessFrag, 800.0).unwrap();
    assert_valid_and_non_dominated(&snapshot, &capped);
    assert!(capped.iter().all(|m| m.power_watts <= 800.0));
    assert_eq!(costs(&capped).last(), Some(&(765.0, 1000.0)));
}

#[test]
fn relinking_the_two_ends_passes_through_the_intermediate_point() {
    let (cluster, typical, tasks) = (cluster(), typical(), tasks());
    let (least_power, least_frag) = (on([0, 0, 1, 1]), on([0, 2, 1, 3]));
    let snapshot = snapshot(&cluster, &typical, &tasks, &least_power);
    let found = relink_from(&snapshot, &least_power, &least_frag).unwrap();
    assert_valid_and_non_dominated(&snapshot, &found);
    assert!(
        costs(&found).contains(&(765.0, 1000.0)),
        "{:?}",
        costs(&found)
    );
    assert_eq!(costs(&found).last(), Some(&(870.0, 0.0)));
    // And back: toward less power.
    let back = walk_from(&snapshot, &least_frag, Toward::LessPower, f64::INFINITY).unwrap();
    assert_valid_and_non_dominated(&snapshot, &back);
    assert!(
        costs(&back).contains(&(660.0, 2000.0)),
        "{:?}",
        costs(&back)
    );
}

fn found_at(power_watts: f64, frag_milli: f64) -> Found {
    Found::walked(Measured {
        placement: Vec::new(),
        power_watts,
        frag_milli,
    })
}

#[test]
fn the_front_reports_distinct_points_solved_caps_first_then_the_middles_of_its_longest_steps() {
    // A staircase of seven placements (a dominated one aside), power and fragmentation
    // each spanning 60 units.
    let found: Vec<Found> = [
        (100.0, 160.0),
        (110.0, 150.0),
        (120.0, 140.0),
        (130.0, 130.0),
        (135.0, 155.0),
        (140.0, 120.0),
        (150.0, 110.0),
        (160.0, 100.0),
    ]
    .into_iter()
    .map(|(p, f)| found_at(p, f))
    .collect();
    let outcome = |seconds| CapOutcome {
        converged: false,
        seconds,
    };
    // Solved caps whose point is an end's (105: the least-power placement's; 170: the
    // least fragmentation's), one whose point a lower cap shows (138 after 130), and a
    // new one (130).
    let solved = vec![
        (105.0, outcome(1.0)),
        (130.0, outcome(2.0)),
        (138.0, outcome(3.0)),
        (170.0, outcome(4.0)),
    ];
    let reported = reported_caps(&found, &solved, 100.0, 3);
    let caps: Vec<(f64, Option<f64>)> = reported
        .iter()
        .map(|(cap, o)| (*cap, o.map(|o| o.seconds)))
        .collect();
    // 130 solved; then the middle of the longest step: 100–130 and 130–160 are as long,
    // so the first, where 110 and 120 are as near its middle (the first by power); then
    // 130–160, the longest step left with a candidate, where 140 and 150 tie the same way.
    assert_eq!(
        caps,
        vec![(110.0, None), (130.0, Some(2.0)), (140.0, None)],
        "{caps:?}"
    );
    // Never more than the staircase has.
    let all = reported_caps(&found, &solved, 100.0, 10);
    assert_eq!(all.len(), 5, "seven staircase points, two of them the ends");
    let mut powers: Vec<f64> = all.iter().map(|(cap, _)| *cap).collect();
    powers.dedup();
    assert_eq!(powers, vec![110.0, 120.0, 130.0, 140.0, 150.0]);
}
