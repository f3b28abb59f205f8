//! Sub-cluster sampling (type mix, determinism, errors) and snapshots of arrival sweeps.

mod support;

use gapbench_ilp::{sample_sub_cluster, type_quota, Snapshot};
use gapbench_model::testing::openb_traces_dir;
use gapbench_model::workload::load_nodes_csv;
use gapbench_model::{CpuPowerProfile, GpuModel, Task};
use proptest::prelude::*;
use support::{cluster, node_type, sweep};

proptest! {
    /// Largest remainder: seats sum to N, never exceed a type's nodes, and stay within one
    /// node of the exact quota — unless the coverage rule gave a zero type its node.
    #[test]
    fn quotas_are_proportional(counts in prop::collection::vec(0usize..600, 1..16), fraction in 0.0f64..1.0) {
        let total: usize = counts.iter().sum();
        prop_assume!(total > 0);
        let n = ((total as f64 * fraction) as usize).clamp(1, total);
        let seats = type_quota(&counts, n).unwrap();
        prop_assert_eq!(seats.iter().sum::<usize>(), n);
        let present = counts.iter().filter(|&&c| c > 0).count();
        for (t, (&seat, &count)) in seats.iter().zip(&counts).enumerate() {
            prop_assert!(seat <= count, "type {t}");
            let quota = n as f64 * count as f64 / total as f64;
            if n < present {
                prop_assert!((seat as f64 - quota).abs() < 1.0 + 1e-9, "type {t}: {seat} vs {quota}");
            } else if count > 0 {
                prop_assert!(seat >= 1, "type {t} left out although N ≥ types");
            }
        }
        prop_assert_eq!(type_quota(&counts, n).unwrap(), seats);
    }
}

#[test]
fn quota_errors_are_clear() {
    assert!(type_quota(&[3, 4], 0)
        .unwrap_err()
        .to_string()
        .contains("at least one node"));
    assert!(type_quota(&[3, 4], 8)
        .unwrap_err()
        .to_string()
        .contains("cannot draw 8 nodes"));
}

#[test]
fn openb_sub_clusters_keep_the_type_mix_and_are_deterministic() {
    let dir = openb_traces_dir();
    let full = load_nodes_csv(
        &dir.join("openb_node_list_gpu_node.csv"),
        CpuPowerProfile::Reference,
    )
    .unwrap();
    let (eight, ids) = sample_sub_cluster(&full, 8, 42).unwrap();
    assert_eq!(eight.len(), 8);
    assert_eq!(ids.len(), 8);
    // 549 of 1213 nodes are 8×G2: 3.6 of 8 → 4 seats; 387 are 2×T4: 2.55 → 3.
    let count = |c: &gapbench_model::Cluster, model: GpuModel, gpus: u8| {
        c.nodes
            .iter()
            .filter(|n| {
                let t = &c.node_types[usize::from(n.type_id)];
                t.gpu_model == Some(model) && t.gpu_count == gpus
            })
            .count()
    };
    assert_eq!(count(&eight, GpuModel::G2, 8), 4);
    assert_eq!(count(&eight, GpuModel::T4, 2), 3);
    for (sub_node, &full_id) in eight.nodes.iter().zip(&ids) {
        assert_eq!(sub_node.name, full.nodes[full_id as usize].name);
    }
    let (again, again_ids) = sample_sub_cluster(&full, 8, 42).unwrap();
    assert_eq!(again_ids, ids);
    assert_eq!(again.nodes, eight.nodes);
    let (_, other_ids) = sample_sub_cluster(&full, 8, 43).unwrap();
    assert_ne!(other_ids, ids, "another seed draws other nodes");
    // Enough nodes for every type: all 15 (distinct) types present.
    let (sixteen, _) = sample_sub_cluster(&full, 16, 42).unwrap();
    assert_eq!(sixteen.node_types.len(), full.node_types.len());
    assert!(sample_sub_cluster(&full, 1214, 42).is_err());
}

#[test]
fn snapshots_take_the_longest_prefix_under_the_checkpoint() {
    let cluster = cluster(&[
        node_type(GpuModel::T4, 2, 16, 64),
        node_type(GpuModel::T4, 2, 16, 64),
    ]);
    // Capacity 4000 milli; cumulative arrived demand 1000, 1500, 1500, 2500, 4500.
    let tasks = vec![
        Task::new("a", 2000, 1024, 1, 1000),
        Task::new("b", 2000, 1024, 1, 500),
        Task::new("c", 2000, 1024, 0, 0),
        Task::new("d", 2000, 1024, 1, 1000),
        Task::new("e", 2000, 1024, 2, 1000),
    ];
    let (prepared, result) = sweep(&cluster, &tasks, "fgd");
    let at = |pct: f64| Snapshot::at_checkpoint(&cluster, &prepared, &result, pct).unwrap();
    assert_eq!(at(0.0).tasks.len(), 0);
    assert_eq!(at(25.0).tasks.len(), 1);
    assert_eq!(
        at(37.5).tasks.len(),
        3,
        "a CPU-only task at the same demand belongs to the checkpoint"
    );
    assert_eq!(at(62.4).tasks.len(), 3);
    assert_eq!(at(62.5).tasks.len(), 4);
    let last = at(500.0);
    assert_eq!(last.tasks.len(), 5);
    assert_eq!(last.checkpoint_pct, 500.0);
    for (i, record) in result.iter().enumerate() {
        assert_eq!(last.heuristic[i], record.placement);
    }
    assert!(Snapshot::at_checkpoint(&cluster, &prepared, &result, -1.0).is_err());
    assert!(Snapshot::at_checkpoint(&cluster, &prepared, &result, f64::NAN).is_err());
    assert!(Snapshot::after_events(&cluster, &prepared, &result, 6).is_err());
    let (other, _) = sweep(&cluster, &tasks[..3], "fgd");
    assert!(Snapshot::at_checkpoint(&cluster, &other, &result, 50.0).is_err());
}
