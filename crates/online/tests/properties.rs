//! Properties of every policy on random small clusters and workloads: placements pass the
//! independent checker, failed tasks really fit nowhere, metrics equal a from-scratch
//! recomputation, and memoised scoring changes nothing.

use gapbench_model::{
    check_placements, prepare, Cluster, ClusterState, CpuPowerProfile, GpuModel, GpuModelSet,
    MetricsTracker, NodeOrder, NodeType, Task, TaskOrder,
};
use gapbench_online::{
    run_arrival_sweep, run_arrival_sweep_with, PolicyKind, PolicySpec, Scheduler, SweepResult,
};
use proptest::prelude::*;

const MODELS: [GpuModel; 4] = [
    GpuModel::T4,
    GpuModel::G2,
    GpuModel::P100,
    GpuModel::V100M32,
];

fn node_type() -> impl Strategy<Value = NodeType> {
    (
        0..MODELS.len(),
        prop_oneof![Just(0u8), Just(1), Just(2), Just(4), Just(8)],
        1u32..=64,
        1u64..=256,
    )
        .prop_map(|(model, gpu_count, vcpus, memory_gib)| NodeType {
            gpu_model: (gpu_count > 0).then_some(MODELS[model]),
            gpu_count,
            cpu_milli: vcpus * 1000,
            memory_mib: memory_gib * 1024,
        })
}

fn task() -> impl Strategy<Value = (u32, u64, u8, u16, u16)> {
    let gpus = prop_oneof![
        2 => Just((0u8, 0u16)),
        4 => (1u16..1000).prop_map(|milli| (1u8, milli)),
        3 => Just((1u8, 1000u16)),
        1 => prop_oneof![Just(2u8), Just(4), Just(8)].prop_map(|count| (count, 1000u16)),
    ];
    (1u32..=16_000, 0u64..=65_536, gpus, 0u16..16)
        .prop_map(|(cpu, mem, (count, milli), spec)| (cpu, mem, count, milli, spec))
}

fn instance() -> impl Strategy<Value = (Cluster, Vec<Task>)> {
    (
        prop::collection::vec(node_type(), 1..6),
        prop::collection::vec(task(), 1..40),
    )
        .prop_map(|(types, raw_tasks)| {
            let cluster = Cluster::new(
                types
                    .into_iter()
                    .enumerate()
                    .map(|(i, t)| (format!("n{i}"), t)),
                CpuPowerProfile::Reference,
            )
            .unwrap();
            let tasks = raw_tasks
                .into_iter()
                .enumerate()
                .map(|(i, (cpu, mem, count, milli, spec_bits))| {
                    let mut task = Task::new(format!("t{i:02}"), cpu, mem, count, milli);
                    // Constrain about a quarter of GPU tasks to a subset of models.
                    if !task.is_cpu_only() && spec_bits % 4 == 0 {
                        let allowed: Vec<GpuModel> = MODELS
                            .iter()
                            .enumerate()
                            .filter(|(b, _)| spec_bits & (1 << b) != 0)
                            .map(|(_, m)| *m)
                            .collect();
                        task.gpu_models = GpuModelSet::of(if allowed.is_empty() {
                            &MODELS[..1]
                        } else {
                            &allowed
                        });
                    }
                    task
                })
                .collect();
            (cluster, tasks)
        })
}

fn every_policy() -> Vec<PolicySpec> {
    let mut specs: Vec<PolicySpec> = PolicyKind::ALL
        .iter()
        .map(|&k| PolicySpec::solo(k))
        .collect();
    specs.push("pwr:200,fgd:800".parse().unwrap());
    specs.push("bestfit:300,clustering:700".parse().unwrap());
    // Expressions: memoisable (power and fragment deltas), not memoisable (memory), raw, mixed.
    specs.push(
        "expr:-power_delta_w - frag_delta_milli / 1000"
            .parse()
            .unwrap(),
    );
    specs.push(
        "expr:mem_free_after_mib / 1024 - gpu_free_after_milli"
            .parse()
            .unwrap(),
    );
    specs.push(
        "expr-raw:if(taken_idle_gpus > 0, 40, 100 - taken_free_pct / 10)"
            .parse()
            .unwrap(),
    );
    specs.push(
        "pwr:300,expr{fit_gpus * 10 + dot_product}:700"
            .parse()
            .unwrap(),
    );
    specs
}

/// Replays a sweep from scratch and checks every event against it.
fn check_sweep(
    cluster: &Cluster,
    events: &[Task],
    typical: &gapbench_model::TypicalPods,
    result: &SweepResult,
) -> Result<(), TestCaseError> {
    let violations = check_placements(
        cluster,
        result
            .placements_until(result.records.len())
            .map(|(t, p)| (&events[t], p)),
    );
    prop_assert!(violations.is_empty(), "violations: {:?}", violations);
    let mut state = ClusterState::empty(cluster);
    for record in &result.records {
        let task = &events[record.task as usize];
        match record.placement {
            Some(placement) => {
                prop_assert!(
                    state.fits(cluster, placement.node, task),
                    "{} placed where it does not fit",
                    task.name
                );
                state.bind(task, placement);
            }
            None => {
                for node in 0..cluster.len() as u32 {
                    prop_assert!(
                        !state.fits(cluster, node, task),
                        "{} failed but fits node {}",
                        task.name,
                        node
                    );
                }
            }
        }
        let from_scratch = MetricsTracker::new(cluster, &state, typical).totals();
        prop_assert_eq!(record.metrics, from_scratch);
    }
    prop_assert_eq!(&state, &result.final_state);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_policy_places_validly_and_measures_exactly((cluster, tasks) in instance(), seed in 0u64..1000, tuned in any::<bool>()) {
        let tune = tuned.then_some(1.3);
        let prepared = prepare(&tasks, &cluster, TaskOrder::Shuffled, tune, NodeOrder::Random, seed);
        for spec in every_policy() {
            let result = run_arrival_sweep(&cluster, &prepared, &spec);
            check_sweep(&cluster, &prepared.events, &prepared.typical, &result)?;
        }
    }

    #[test]
    fn memoised_scoring_gives_the_same_sweep((cluster, tasks) in instance(), seed in 0u64..1000) {
        let prepared = prepare(&tasks, &cluster, TaskOrder::Shuffled, None, NodeOrder::Random, seed);
        for spec in every_policy() {
            let memoised = run_arrival_sweep(&cluster, &prepared, &spec);
            let plain = run_arrival_sweep_with(&cluster, &prepared, Scheduler::with_memo(&spec, &cluster, &ClusterState::empty(&cluster), false));
            prop_assert_eq!(&memoised.records, &plain.records);
        }
    }
}
