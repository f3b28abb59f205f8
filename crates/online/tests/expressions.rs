//! Score expressions against the native policies they restate: given BestFit's and
//! GpuPacking's formulas, an expression places every task exactly where the native policy
//! does — on the real openb default trace (seed 42, the paper's preparation) and on random
//! small clusters — and each feature has the value computed by hand.

use gapbench_model::testing::openb_traces_dir;
use gapbench_model::workload::{load_nodes_csv, load_tasks_csv};
use gapbench_model::{
    prepare, Cluster, ClusterState, CpuPowerProfile, GpuModel, GpuModelSet, InputRules, NodeOrder,
    NodeType, Task, TaskOrder, TypicalPod, TypicalPods,
};
use gapbench_online::expr::{BEST_FIT_EXPR, GPU_PACKING_EXPR};
use gapbench_online::{run_arrival_sweep, ExprScale, PolicySpec, ScoreContext, ScoreExpr};
use proptest::prelude::*;

/// (native spec, the same policy as an expression) pairs.
fn restatements() -> Vec<(&'static str, String)> {
    vec![
        ("bestfit", format!("expr:{BEST_FIT_EXPR}")),
        ("packing", format!("expr-raw:{GPU_PACKING_EXPR}")),
        // In a mix: normalised like BestFit, GPUs chosen by the heavier term (best fit).
        (
            "pwr:200,bestfit:800",
            format!("pwr:200,expr{{{BEST_FIT_EXPR}}}:800"),
        ),
    ]
}

#[test]
fn expressions_place_like_bestfit_and_packing_on_the_real_default_trace() {
    let dir = openb_traces_dir();
    let cluster = load_nodes_csv(
        &dir.join("openb_node_list_gpu_node.csv"),
        CpuPowerProfile::Reference,
    )
    .unwrap();
    let tasks = load_tasks_csv(&dir.join("openb_pod_list_default.csv"), InputRules::Strict)
        .unwrap()
        .tasks;
    let prepared = prepare(
        &tasks,
        &cluster,
        TaskOrder::Shuffled,
        Some(1.3),
        NodeOrder::Random,
        42,
    );
    for (native, expression) in restatements() {
        let native_spec: PolicySpec = native.parse().unwrap();
        let expr_spec: PolicySpec = expression.parse().unwrap();
        let a = run_arrival_sweep(&cluster, &prepared, &native_spec);
        let b = run_arrival_sweep(&cluster, &prepared, &expr_spec);
        let placed = a.records.iter().filter(|r| r.placement.is_some()).count();
        assert!(placed > 8_000, "{native}: only {placed} placed");
        let first_difference = a
            .records
            .iter()
            .zip(&b.records)
            .position(|(x, y)| x.placement != y.placement);
        assert_eq!(
            first_difference, None,
            "{expression} places differently from {native}"
        );
        assert_eq!(a.records, b.records, "{native}: the metrics differ");
    }
}

fn node_type() -> impl Strategy<Value = NodeType> {
    (
        prop_oneof![Just(0u8), Just(1), Just(2), Just(4), Just(8)],
        1u32..=64,
    )
        .prop_map(|(gpu_count, vcpus)| NodeType {
            gpu_model: (gpu_count > 0).then_some(GpuModel::T4),
            gpu_count,
            cpu_milli: vcpus * 1000,
            memory_mib: 1 << 18,
        })
}

fn task() -> impl Strategy<Value = (u32, u8, u16)> {
    (
        0u32..=16_000,
        prop_oneof![Just(0u8), Just(1), Just(2), Just(4)],
        prop_oneof![Just(1000u16), 50u16..=999],
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn expressions_place_like_their_native_policies_on_random_clusters(
        types in prop::collection::vec(node_type(), 1..10),
        raw in prop::collection::vec(task(), 1..60),
        seed in 0u64..1000,
    ) {
        let cluster = Cluster::new(
            types.into_iter().enumerate().map(|(i, t)| (format!("n{i}"), t)),
            CpuPowerProfile::Reference,
        ).unwrap();
        let tasks: Vec<Task> = raw
            .into_iter()
            .enumerate()
            .map(|(i, (cpu, count, milli))| {
                // Multi-GPU tasks take whole GPUs, as in the traces.
                let milli = if count > 1 { 1000 } else { milli };
                Task::new(format!("t{i}"), cpu, 1024, count, milli)
            })
            .collect();
        let prepared = prepare(&tasks, &cluster, TaskOrder::Shuffled, Some(1.3), NodeOrder::Random, seed);
        for (native, expression) in restatements() {
            let a = run_arrival_sweep(&cluster, &prepared, &native.parse().unwrap());
            let b = run_arrival_sweep(&cluster, &prepared, &expression.parse().unwrap());
            prop_assert_eq!(&a.records, &b.records, "{} vs {}", native, expression);
        }
    }
}

/// The template for a policy's hand-computed test: one node in a state set by hand, one
/// task, the values worked out from the definitions.
#[test]
fn features_have_their_hand_computed_values() {
    // A G2 node with 8 GPUs (the reference's power profile), 32 vCPUs left, devices free
    // [1000, 400, 1000, 700, 1000, 1000, 0, 1000]; a task of 4 vCPUs and 300 milli of one GPU.
    let node_type = NodeType {
        gpu_model: Some(GpuModel::G2),
        gpu_count: 8,
        cpu_milli: 96_000,
        memory_mib: 393_216,
    };
    let cluster =
        Cluster::new([("n0".to_string(), node_type)], CpuPowerProfile::Reference).unwrap();
    let mut state = ClusterState::empty(&cluster);
    state.nodes[0].cpu_left_milli = 32_000;
    state.nodes[0].memory_left_mib = 100_000;
    state.nodes[0].free_gpu_milli_by_device = [1000, 400, 1000, 700, 1000, 1000, 0, 1000];
    let typical = TypicalPods {
        pods: vec![TypicalPod {
            cpu_milli: 1000,
            gpu_milli: 500,
            gpu_count: 1,
            gpu_models: GpuModelSet::any(),
            count: 1,
            probability: 1.0,
        }],
        distinct_shapes: 1,
        coverage_pct: 100.0,
    };
    let ctx = ScoreContext {
        cluster: &cluster,
        state: &state,
        typical: &typical,
    };
    let task = Task::new("t", 4000, 2048, 1, 300);
    let value = |text: &str| {
        ScoreExpr::parse(text, ExprScale::MinMax)
            .unwrap()
            .value(&ctx, 0, &task)
    };
    assert_eq!(value("task_gpu_total_milli"), 300.0);
    assert_eq!(value("gpu_free_milli"), 6100.0);
    assert_eq!(value("idle_gpus"), 5.0);
    // Best fit takes device 1 (400 free, the least that fits): 40 % free before, not idle.
    assert_eq!(value("fit_gpus"), 7.0);
    assert_eq!(value("taken_free_pct"), 40.0);
    assert_eq!(value("taken_idle_gpus"), 0.0);
    assert_eq!(value("idle_gpus_after"), 5.0);
    assert_eq!(value("cpu_free_after_milli"), 28_000.0);
    assert_eq!(value("gpu_free_after_milli"), 5800.0);
    assert_eq!(value("mem_free_after_mib"), 97_952.0);
    assert_eq!(value("gpu_model == G2 and node_gpus == 8"), 1.0);
    // n·q = 32000/128000 · 4000/128000 + 6100/8000 · 300/8000.
    let dot = 0.25 * (4000.0 / 128_000.0) + 6100.0 / 8000.0 * (300.0 / 8000.0);
    assert!((value("dot_product") - dot).abs() < 1e-15);
    // Power (reference CPU profile: 15 W idle, 120 W busy per 16-core socket; 48 real cores,
    // 3 sockets): 32 busy cores keep 2 sockets busy, 34 need 3: +105 W. The share on a
    // partially used device adds no GPU step, so that is the least over the devices.
    assert_eq!(value("power_delta_w"), 105.0);
    // Fragment for the typical task (500 milli): F(n) = 400 (the 400- and 0-milli devices
    // cannot take it). On device 1 (400 → 100) F' = 100: −300, the least (device 0 keeps
    // F' = 400; device 3, 700 → 400, makes it 800).
    assert_eq!(value("frag_delta_milli"), -300.0);
    let memo = |text: &str| ScoreExpr::parse(text, ExprScale::Raw).unwrap().memoizable();
    assert!(memo("frag_delta_milli + taken_free_pct"));
    assert!(!memo("mem_free_mib"));
    assert!(!memo("task_mem_mib"));
}

/// An expression that is NaN or ±∞ on some node (here every CPU-only node has no idle GPU)
/// ran silently, NaN scored as 0: the sweep now counts such scores and names the first.
#[test]
fn non_finite_scores_are_counted_and_the_first_is_named() {
    let cpu_only = NodeType {
        gpu_model: None,
        gpu_count: 0,
        cpu_milli: 64_000,
        memory_mib: 1 << 18,
    };
    let cluster = Cluster::new(
        (0..3).map(|i| (format!("n{i}"), cpu_only)),
        CpuPowerProfile::Reference,
    )
    .unwrap();
    let tasks: Vec<Task> = (0..4)
        .map(|i| Task::new(format!("t{i}"), 1000 * (i + 1), 1024, 0, 0))
        .collect();
    let prepared = prepare(
        &tasks,
        &cluster,
        TaskOrder::Shuffled,
        None,
        NodeOrder::Random,
        7,
    );
    let sweep = |spec: &str| run_arrival_sweep(&cluster, &prepared, &spec.parse().unwrap());
    for (spec, value) in [
        ("expr:100 / idle_gpus", "inf"),
        (
            "pwr:100,expr{idle_gpus / idle_gpus - cpu_free_milli}:300",
            "NaN",
        ),
    ] {
        let result = sweep(spec);
        assert_eq!(result.non_finite_scores.len(), 1, "{spec}");
        let found = &result.non_finite_scores[0];
        // Each task has a shape of its own and three feasible nodes: at least one
        // evaluation each (memoisation shares one among nodes in the same state).
        assert!(found.count >= 4, "{spec}: {found:?}");
        let text = &found.first;
        assert!(
            text.contains(&format!(" gave {value} for task `t")),
            "{text}"
        );
        assert!(text.contains("on node `n"), "{text}");
        assert!(text.starts_with("expr:"), "{text}");
    }
    assert!(sweep("expr:100 / (idle_gpus + 1)")
        .non_finite_scores
        .is_empty());
}
