//! Properties of the time-driven engine on small hand-made and random instances.

mod support;

use proptest::prelude::*;

use gapbench_model::Cluster;
use gapbench_replay::energy::{GpuPowerMode, JOULES_PER_KWH};
use gapbench_replay::{
    run, ColocationModel, IdlePolicy, OnFull, PowerSettings, Qos, QueueDiscipline, ReplayOptions,
    TimedTask, TimedWorkload,
};
use support::*;

/// The hand-computed case below: its cluster, its two tasks, and its power and sharing
/// settings (reservation GPU power, sleeping empty nodes, a flat 25 % sharing penalty).
fn hand_case() -> (Cluster, TimedWorkload, ReplayOptions) {
    let cluster = cluster(&[node_type(1, 64), node_type(0, 32)]);
    let workload = workload(vec![
        timed("a", 2000, 1, 500, Qos::BestEffort, 0.0, 100.0),
        timed("b", 40000, 1, 500, Qos::BestEffort, 50.0, 100.0),
    ]);
    let options = ReplayOptions {
        power: PowerSettings {
            gpu_mode: GpuPowerMode::Reservation,
            idle: IdlePolicy::SleepWhenEmpty,
            sleep_fraction: 0.1,
        },
        colocation: ColocationModel {
            per_tenant_penalty: 0.25,
            knee_permille: 1000,
            overload_penalty: 0.0,
            power_eta: [1.0; 4],
        },
        ..ReplayOptions::default()
    };
    (cluster, workload, options)
}

/// One 64-core node with one V100 and one 32-core CPU-only node that stays empty and sleeps.
/// A (2 cores, half a GPU) runs alone on [0, 50); B (40 cores, half the GPU) joins at 50, and
/// with a flat 25 % sharing penalty both run at 1/1.25: A's last 50 s of work take 62.5 s
/// (end 112.5), B has done 50 by then and finishes its last 50 alone (end 162.5).
/// Power (reference model: 2 sockets × 16 cores, idle 15 W / active 120 W; GPU 300 W busy):
/// [0, 50): 1 active socket + 1 idle = 135 W CPU + 300 W GPU;
/// [50, 162.5): 2 active sockets = 240 W + 300 W; the CPU node sleeps at 10 % of 15 W.
#[test]
fn energy_is_the_integral_of_power_on_a_hand_computed_case() {
    let (cluster, workload, hand) = hand_case();
    let options = ReplayOptions {
        record_segments: true,
        check_every_event: true,
        tick_s: Some(40.0),
        ..hand
    };
    let mut policy = policy("fgd", &cluster);
    let result = run(&cluster, &workload, policy.as_mut(), &options);
    assert!(result.violations.is_empty(), "{:?}", result.violations);
    let ends: Vec<f64> = result.tasks.iter().map(|t| t.end_s.unwrap()).collect();
    assert_eq!(ends, [112.5, 162.5]);
    let expected_j = 435.0 * 50.0 + 540.0 * 112.5 + 1.5 * 162.5;
    assert!(
        (result.ledger.cluster.total_j() - expected_j).abs() < 1e-6,
        "{:?}",
        result.ledger.cluster
    );
    assert!((result.ledger.cluster.cpu_j - (135.0 * 50.0 + 240.0 * 112.5)).abs() < 1e-6);
    assert!((result.ledger.cluster.gpu_busy_j - 270.0 * 162.5).abs() < 1e-6);
    assert!((result.ledger.cluster.gpu_idle_j - 30.0 * 162.5).abs() < 1e-6);
    assert!((result.ledger.cluster.sleep_j - 1.5 * 162.5).abs() < 1e-6);
    let summary = result.summary();
    assert!((summary.total_energy_kwh - expected_j / JOULES_PER_KWH).abs() < 1e-12);
    let last = result.timeline.last().unwrap();
    assert_eq!(last.time_s, 162.5);
    assert!((last.energy_kwh - summary.total_energy_kwh).abs() < 1e-12);
    // The GPU node's energy is shared by its tenants; the sleeping node's is nobody's.
    let shared: f64 = result.tasks.iter().map(|t| t.energy_kwh).sum();
    let gpu_node_j = 435.0 * 50.0 + 540.0 * 112.5;
    assert!(
        (shared * JOULES_PER_KWH - gpu_node_j).abs() < 1e-6,
        "{shared}"
    );
    assert_eq!(summary.slowdown.max, 1.125);
    // Ticks sample the energy so far: at 80 s, 50 s at 436.5 W then 30 s at 541.5 W.
    let tick = result
        .timeline
        .iter()
        .find(|r| r.event == "tick" && r.time_s == 80.0)
        .expect("a tick at 80 s");
    let so_far_j = 436.5 * 50.0 + 541.5 * 30.0;
    assert!((tick.energy_kwh * JOULES_PER_KWH - so_far_j).abs() < 1e-6);
    assert_eq!(tick.power_watts, 541.5);
    let ticks: Vec<f64> = result
        .timeline
        .iter()
        .filter(|r| r.event == "tick")
        .map(|r| r.time_s)
        .collect();
    assert_eq!(ticks, [40.0, 80.0, 120.0, 160.0]);
}

#[derive(Debug, Clone)]
struct Instance {
    nodes: Vec<(u8, u32)>,
    tasks: Vec<TimedTask>,
}

fn instance() -> impl Strategy<Value = Instance> {
    let nodes = prop::collection::vec((prop::sample::select(vec![1u8, 2, 4]), 8u32..33), 1..4);
    let task = (
        0u32..6,
        prop::sample::select(vec![200u16, 300, 500, 700, 1000]),
        1u32..8,
        0u32..4,
        0u32..2000,
        1u32..3000,
    );
    (nodes, prop::collection::vec(task, 1..25)).prop_map(|(nodes, raw)| {
        let tasks = raw
            .into_iter()
            .enumerate()
            .map(|(i, (kind, milli, cores, qos, arrival, duration))| {
                let (gpus, gpu_milli) = match kind {
                    0 => (0, 0),
                    1 => (2, 1000),
                    _ => (1, milli),
                };
                let qos = [
                    Qos::LatencySensitive,
                    Qos::Burstable,
                    Qos::BestEffort,
                    Qos::BestEffort,
                ][qos as usize];
                timed(
                    &format!("t{i:02}"),
                    cores * 1000,
                    gpus,
                    gpu_milli,
                    qos,
                    f64::from(arrival),
                    f64::from(duration),
                )
            })
            // Every task fits an empty node of the cluster, so none waits forever.
            .filter(|t| {
                nodes
                    .iter()
                    .any(|&(g, c)| t.task.gpu_count <= g && t.task.cpu_milli <= c * 1000)
            })
            .collect();
        Instance { nodes, tasks }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// For every policy: the checker passes after every event; every task completes exactly
    /// when its speed history has done its work; first starts follow arrival order (strict
    /// FIFO); energy equals the step integral of the power curve; a rerun is identical.
    #[test]
    fn every_policy_conserves_work_and_keeps_placements_valid(instance in instance()) {
        prop_assume!(!instance.tasks.is_empty());
        let types: Vec<_> = instance.nodes.iter().map(|&(g, c)| node_type(g, c)).collect();
        let cluster = cluster(&types);
        let workload = workload(instance.tasks.clone());
        let options = ReplayOptions {
            record_segments: true,
            check_every_event: true,
            colocation: ColocationModel::harsh(),
            restart_overhead_s: 0.0,
            ..ReplayOptions::default()
        };
        for name in policies() {
            let mut p = policy(name, &cluster);
            let result = run(&cluster, &workload, p.as_mut(), &options);
            prop_assert!(result.violations.is_empty(), "{name}: {:?}", result.violations);
            let mut last_start = f64::NEG_INFINITY;
            for t in &result.tasks {
                let end = t.end_s.unwrap_or_else(|| panic!("{name}: {} never ended", t.name));
                let done: f64 = t.segments.iter().map(|s| s.work_s()).sum();
                prop_assert!((done - t.duration_s).abs() <= 1e-6 * (1.0 + t.duration_s),
                    "{name}: {} did {done} of {}", t.name, t.duration_s);
                prop_assert_eq!(t.segments.last().map(|s| s.to_s), Some(end));
                prop_assert!(t.segments.windows(2).all(|w| w[0].to_s <= w[1].from_s));
                // Job energy is the integral of the segments' job power.
                let job_j: f64 = t.segments.iter().map(|s| s.job_watts * (s.to_s - s.from_s)).sum();
                prop_assert!((job_j / JOULES_PER_KWH - t.job_energy_kwh).abs() <= 1e-9 * (1.0 + job_j),
                    "{name}: {}", t.name);
                let start = t.start_s.unwrap();
                if !plans_in_rounds(name) {
                    prop_assert!(start >= last_start, "{name}: {} started before an earlier arrival", t.name);
                }
                last_start = start;
            }
            let summary = result.summary();
            prop_assert_eq!(summary.completed, workload.tasks.len());
            let last = result.timeline.last().unwrap();
            prop_assert!((last.energy_kwh - summary.total_energy_kwh).abs() < 1e-12);
            // Power is constant between rows: the rows' step integral is the energy.
            let integral_j: f64 = result
                .timeline
                .windows(2)
                .map(|w| w[0].power_watts * (w[1].time_s - w[0].time_s))
                .sum();
            prop_assert!((integral_j - result.ledger.cluster.total_j()).abs() <= 1e-9 * (1.0 + integral_j),
                "{name}: ∫power {integral_j} J vs {} J", result.ledger.cluster.total_j());
            let job_integral_j: f64 = result
                .timeline
                .windows(2)
                .map(|w| w[0].job_power_watts * (w[1].time_s - w[0].time_s))
                .sum();
            prop_assert!((job_integral_j - result.ledger.job_energy_j).abs() <= 1e-6 * (1.0 + job_integral_j),
                "{name}: ∫job power {job_integral_j} J vs {} J", result.ledger.job_energy_j);
            let per_task_j: f64 = result.tasks.iter().map(|t| t.job_energy_kwh * JOULES_PER_KWH).sum();
            prop_assert!((per_task_j - result.ledger.job_energy_j).abs() <= 1e-6 * (1.0 + per_task_j));
            prop_assert_eq!(last.queue_length, 0);
            let mut again = policy(name, &cluster);
            let rerun = run(&cluster, &workload, again.as_mut(), &options);
            prop_assert_eq!(&rerun.tasks, &result.tasks);
            prop_assert_eq!(&rerun.timeline, &result.timeline);
        }
    }

    /// Under `OnFull::Fail` nothing waits: a task starts at its arrival or fails.
    #[test]
    fn on_full_fail_keeps_the_sweeps_semantics(instance in instance()) {
        prop_assume!(!instance.tasks.is_empty());
        let types: Vec<_> = instance.nodes.iter().map(|&(g, c)| node_type(g, c)).collect();
        let cluster = cluster(&types);
        let workload = workload(instance.tasks.clone());
        let options = ReplayOptions { on_full: OnFull::Fail, check_every_event: true, ..ReplayOptions::default() };
        let mut p = policy("fgd", &cluster);
        let result = run(&cluster, &workload, p.as_mut(), &options);
        prop_assert!(result.violations.is_empty());
        for t in &result.tasks {
            prop_assert!(t.failed() != t.start_s.is_some());
            if let Some(start) = t.start_s {
                prop_assert_eq!(start, t.arrival_s);
            }
        }
        prop_assert!(result.timeline.iter().all(|r| r.queue_length == 0));
    }
}

/// `until_s` stops the replay: energy up to that time exactly, unfinished tasks keep the
/// work they have left (the hand case above, stopped at 100 s).
#[test]
fn until_stops_with_exact_energy_and_remaining_work() {
    let (cluster, workload, hand) = hand_case();
    let options = ReplayOptions {
        until_s: Some(100.0),
        ..hand
    };
    let mut policy = policy("fgd", &cluster);
    let result = run(&cluster, &workload, policy.as_mut(), &options);
    assert_eq!(result.end_s, 100.0);
    let expected_j = 436.5 * 50.0 + 541.5 * 50.0;
    assert!((result.ledger.cluster.total_j() - expected_j).abs() < 1e-6);
    let left: Vec<f64> = result.tasks.iter().map(|t| t.remaining_work_s).collect();
    assert_eq!(left, [10.0, 60.0]);
    let summary = result.summary();
    assert_eq!((summary.completed, summary.unfinished), (0, 2));
}

/// One node of 2 GPUs: A holds one GPU until 100 s; B (2 GPUs) arrives at 10 s and must wait
/// for A; C (1 GPU) arrives at 20 s. Strict FIFO keeps C behind B (C starts after B ends, at
/// 200 s); backfilling starts C on the free GPU at once, and B still starts when A leaves
/// only if C is gone, so B waits for C (C ends at 120 s, B starts then).
#[test]
fn backfill_passes_over_a_blocked_head_and_fifo_does_not() {
    let cluster = cluster(&[node_type(2, 32)]);
    let workload = workload(vec![
        timed("a", 1000, 1, 1000, Qos::BestEffort, 0.0, 100.0),
        timed("b", 1000, 2, 1000, Qos::BestEffort, 10.0, 100.0),
        timed("c", 1000, 1, 1000, Qos::BestEffort, 20.0, 100.0),
    ]);
    let starts = |queue| {
        let options = ReplayOptions {
            queue,
            check_every_event: true,
            ..ReplayOptions::default()
        };
        let mut p = policy("fgd", &cluster);
        let result = run(&cluster, &workload, p.as_mut(), &options);
        assert!(result.violations.is_empty());
        assert_eq!(result.summary().completed, 3);
        result
            .tasks
            .iter()
            .map(|t| t.start_s.unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(starts(QueueDiscipline::Fifo), [0.0, 100.0, 200.0]);
    assert_eq!(starts(QueueDiscipline::Backfill), [0.0, 120.0, 20.0]);
}

/// A stopped replay says who still waits and for how long.
#[test]
fn tasks_still_waiting_at_the_end_are_counted_with_the_longest_wait() {
    let cluster = cluster(&[node_type(1, 32)]);
    let workload = workload(vec![
        timed("a", 1000, 1, 1000, Qos::BestEffort, 0.0, 1000.0),
        timed("b", 1000, 1, 1000, Qos::BestEffort, 10.0, 100.0),
        timed("c", 1000, 1, 1000, Qos::BestEffort, 30.0, 100.0),
    ]);
    let options = ReplayOptions {
        until_s: Some(500.0),
        ..ReplayOptions::default()
    };
    let mut p = policy("fgd", &cluster);
    let summary = run(&cluster, &workload, p.as_mut(), &options).summary();
    assert_eq!((summary.unfinished, summary.still_waiting), (3, 2));
    assert_eq!(summary.longest_wait_s, Some(490.0));
}

/// A replay where no task completed has no JCT: summary.json says "none" and why, never a
/// mean of 0 (issue: all-unfinished showed mean JCT 0).
#[test]
fn a_replay_with_nothing_completed_says_none_and_why() {
    let (cluster, workload, hand) = hand_case();
    let options = ReplayOptions {
        until_s: Some(60.0),
        ..hand
    };
    let mut policy = policy("fgd", &cluster);
    let result = run(&cluster, &workload, policy.as_mut(), &options);
    let summary = result.summary();
    assert_eq!((summary.completed, summary.unfinished), (0, 2));
    assert_eq!(summary.jct_s.mean(), None);
    let mut json = Vec::new();
    result.write_summary_json(&mut json).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(json["jct_s"], "none: no task completed");
    assert_eq!(json["slowdown"], "none: no task completed");
    assert_eq!(json["wait_s"]["count"], 2, "both started");
    assert_eq!(json["job_jct_s"], "none: no training job completed");
}

/// Numbers that overflow are said to be unbounded, with the likely cause, never `null`.
#[test]
fn non_finite_results_are_unbounded_not_null() {
    let cluster = cluster(&[node_type(1, 32)]);
    let workload = workload(vec![timed(
        "forever",
        1000,
        1,
        1000,
        Qos::BestEffort,
        0.0,
        1e308,
    )]);
    let mut p = policy("fgd", &cluster);
    let result = run(&cluster, &workload, p.as_mut(), &ReplayOptions::default());
    assert!(result.ledger.cluster.total_kwh().is_infinite());
    let mut json = Vec::new();
    result.write_summary_json(&mut json).unwrap();
    let text = String::from_utf8(json).unwrap();
    assert!(!text.contains("null"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let energy = json["total_energy_kwh"].as_str().unwrap();
    assert!(
        energy.starts_with("unbounded: ") && energy.contains("--arrival-scale"),
        "{energy}"
    );
}

/// Delegates everything to `inner` but makes no refusal promise, so a backfilling pass
/// offers every waiting task as it did before refusal classes existed.
struct NoPromise(Box<dyn gapbench_replay::TimePolicy>);

impl gapbench_replay::TimePolicy for NoPromise {
    fn name(&self) -> String {
        self.0.name()
    }
    fn schedule(
        &mut self,
        view: &gapbench_replay::ReplayView<'_>,
        task: u32,
        rng: &mut gapbench_model::rng::SimRng,
    ) -> gapbench_replay::Action {
        self.0.schedule(view, task, rng)
    }
    fn capacity(&self) -> gapbench_replay::CapacityMode {
        self.0.capacity()
    }
    fn node_changed(&mut self, view: &gapbench_replay::ReplayView<'_>, node: u32) {
        self.0.node_changed(view, node)
    }
}

/// An overloaded queue (three nodes, 300 tasks of six shapes arriving far faster than
/// they leave): with refusal classes — a refused class is not offered again in the same
/// pass, nor in a later one until a node that could hold it is released — every task
/// starts exactly when offering every waiting task does, backfilling or strict FIFO, for
/// the policies that promise it, the random one (whose draws must not move) included.
#[test]
fn backfill_with_refusal_classes_starts_every_task_as_offering_every_task_does() {
    let cluster = cluster(&[node_type(2, 32), node_type(4, 64), node_type(8, 96)]);
    let shapes = [(1, 1000), (1, 500), (2, 1000), (4, 1000), (0, 0), (1, 250)];
    let tasks = (0..300)
        .map(|i| {
            let (gpus, milli) = shapes[(i * 7 + i / 5) % shapes.len()];
            let cpu = 2000 + 1000 * (i % 3) as u32;
            let duration = 50.0 + ((i * 37) % 400) as f64;
            timed(
                &format!("t{i}"),
                cpu,
                gpus,
                milli,
                Qos::BestEffort,
                i as f64,
                duration,
            )
        })
        .collect();
    let workload = workload(tasks);
    for queue in [QueueDiscipline::Backfill, QueueDiscipline::Fifo] {
        let options = ReplayOptions {
            queue,
            check_every_event: true,
            ..ReplayOptions::default()
        };
        refusal_classes_change_no_start(&cluster, &workload, &options);
    }
}

fn refusal_classes_change_no_start(
    cluster: &Cluster,
    workload: &TimedWorkload,
    options: &ReplayOptions,
) {
    for name in ["fgd", "pwr", "random", "bestfit", "pwr:200,fgd:800", "fifo"] {
        let promised = policy(name, cluster);
        assert!(
            promised.refusal_class(&workload.tasks[0].task).is_some(),
            "{name} promises refusal classes"
        );
        let with_classes = run(cluster, workload, policy(name, cluster).as_mut(), options);
        let mut every_task = NoPromise(policy(name, cluster));
        let offered_all = run(cluster, workload, &mut every_task, options);
        assert!(with_classes.violations.is_empty(), "{name}");
        let waited = offered_all
            .tasks
            .iter()
            .filter(|t| t.start_s.is_some_and(|s| s > t.arrival_s))
            .count();
        assert!(
            waited > 100,
            "{name}: the queue is long ({waited} tasks waited)"
        );
        assert_eq!(with_classes.tasks, offered_all.tasks, "{name}");
        assert_eq!(with_classes.timeline, offered_all.timeline, "{name}");
    }
}
