//! The real openb default trace with its real times.

mod support;

use gapbench_model::testing::openb_traces_dir;
use gapbench_model::workload::load_nodes_csv;
use gapbench_model::{ClusterState, CpuPowerProfile, InputRules};
use gapbench_replay::{run, ReplayOptions, TimedWorkload};
use support::{policies, policy};

fn load() -> (gapbench_model::Cluster, TimedWorkload) {
    let dir = openb_traces_dir();
    let cluster = load_nodes_csv(
        &dir.join("openb_node_list_gpu_node.csv"),
        CpuPowerProfile::Reference,
    )
    .expect("openb nodes load");
    let workload =
        TimedWorkload::load_csv(&dir.join("openb_pod_list_default.csv"), InputRules::Strict)
            .expect("openb default trace loads");
    (cluster, workload)
}

#[test]
fn the_default_trace_loads_by_the_stated_rules() {
    let (_, workload) = load();
    // 8,152 pods, of which 897 Pending (never scheduled) are dropped.
    assert_eq!(workload.tasks.len() + workload.dropped_pending, 8152);
    assert_eq!(workload.dropped_pending, 897);
    assert_eq!(workload.trace_end_s, 12_902_960.0);
    assert_eq!(
        workload.tasks.iter().filter(|t| t.right_censored).count(),
        34
    );
    assert!(workload.tasks.iter().all(|t| !t.left_censored));
    assert!(workload
        .tasks
        .windows(2)
        .all(|w| w[0].arrival_s <= w[1].arrival_s));
}

/// Every policy on the whole trace: everything completes, the cluster ends empty, and a
/// rerun gives identical files.
#[test]
fn every_policy_replays_the_whole_trace() {
    let (cluster, workload) = load();
    let options = ReplayOptions::default();
    for name in policies() {
        let mut p = policy(name, &cluster);
        let result = run(&cluster, &workload, p.as_mut(), &options);
        let summary = result.summary();
        assert_eq!(summary.completed, workload.tasks.len(), "{name}");
        assert_eq!(result.final_state, ClusterState::empty(&cluster), "{name}");
        assert!(summary.total_energy_kwh > 0.0);
        let files = |r: &gapbench_replay::ReplayResult| {
            let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
            r.write_timeline_csv(&mut a).unwrap();
            r.write_tasks_csv(&mut b).unwrap();
            r.write_summary_json(&mut c).unwrap();
            (a, b, c)
        };
        let mut again = policy(name, &cluster);
        let rerun = run(&cluster, &workload, again.as_mut(), &options);
        assert!(files(&rerun) == files(&result), "{name}: rerun differs");
    }
}

/// A loaded cluster (every 10th openb node, the first 3,000 tasks with arrivals compressed
/// 1,000×): tasks queue, and the independent checker passes after every event for every
/// policy.
#[test]
fn a_loaded_cluster_keeps_every_placement_valid() {
    let (full, mut workload) = load();
    let nodes = full
        .nodes
        .iter()
        .step_by(10)
        .map(|n| (n.name.clone(), full.node_types[usize::from(n.type_id)]));
    let cluster = gapbench_model::Cluster::new(nodes, CpuPowerProfile::Reference).unwrap();
    workload.tasks.truncate(3000);
    // Keep tasks some node of the small cluster can host, so none waits forever.
    workload.tasks.retain(|t| {
        (0..cluster.len() as u32).any(|n| ClusterState::empty(&cluster).fits(&cluster, n, &t.task))
    });
    let workload = workload.with_arrival_scale(1000.0).unwrap();
    let options = ReplayOptions {
        check_every_event: true,
        ..ReplayOptions::default()
    };
    let mut queued_somewhere = false;
    for name in ["fgd", "eaco-r", "eaco-o", "fifo", "gandiva-o"] {
        let mut p = policy(name, &cluster);
        let result = run(&cluster, &workload, p.as_mut(), &options);
        assert!(
            result.violations.is_empty(),
            "{name}: {:?}",
            &result.violations[..1]
        );
        assert_eq!(result.summary().completed, workload.tasks.len(), "{name}");
        queued_somewhere |= result.timeline.iter().any(|r| r.queue_length > 0);
    }
    assert!(
        queued_somewhere,
        "the compressed trace should make tasks wait"
    );
}
