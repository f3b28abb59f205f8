//! The benchmark workloads, in one place: the criterion benchmarks in `benches/` time them,
//! and the `perf-probe` binary runs them under callgrind for `cargo xtask perf`, so both
//! always measure the same code on the same inputs.

use gapbench_model::rng::SimRng;
use gapbench_model::testing::openb_traces_dir;
use gapbench_model::workload::{load_nodes_csv, load_tasks_csv};
use gapbench_model::{
    prepare, Cluster, ClusterState, CpuPowerProfile, InputRules, NodeId, NodeOrder,
    PreparedWorkload, Task, TaskOrder,
};
use gapbench_online::expr::{BEST_FIT_EXPR, GPU_PACKING_EXPR};
use gapbench_online::{run_arrival_sweep, Policy, PolicyKind, PolicyRef, PolicySpec, ScoreContext};

/// The policy specs of the `whole_run` group with their benchmark ids: every registered
/// policy alone, the paper's PWR+FGD mix, and BestFit restated as an expression.
pub fn whole_run_policies() -> Vec<(String, PolicySpec)> {
    let mut specs: Vec<PolicySpec> = PolicyKind::ALL
        .iter()
        .map(|&kind| PolicySpec::solo(kind))
        .collect();
    specs.push("pwr:200,fgd:800".parse().expect("a valid mix"));
    let mut named: Vec<(String, PolicySpec)> =
        specs.into_iter().map(|spec| (spec.slug(), spec)).collect();
    named.push((
        "expr-bestfit".to_string(),
        expression_spec(BEST_FIT_EXPR, "expr"),
    ));
    named
}

fn expression_spec(source: &str, keyword: &str) -> PolicySpec {
    format!("{keyword}:{source}")
        .parse()
        .expect("a valid expression")
}

/// The scorers of the `scoring` group, each with its benchmark id: every registered policy,
/// then BestFit's and GpuPacking's formulas as expressions (`expr-bestfit`,
/// `expr-packing`), to compare an expression's throughput with the native code's.
pub fn scoring_policies() -> Vec<(String, PolicyRef)> {
    let mut policies: Vec<(String, PolicyRef)> = PolicyKind::ALL
        .iter()
        .map(|&kind| (kind.name().to_string(), PolicyRef::Native(kind)))
        .collect();
    for (id, source, keyword) in [
        ("expr-bestfit", BEST_FIT_EXPR, "expr"),
        ("expr-packing", GPU_PACKING_EXPR, "expr-raw"),
    ] {
        let spec = expression_spec(source, keyword);
        policies.push((id.to_string(), spec.terms[0].0.clone()));
    }
    policies
}

/// The real openb GPU cluster and `default` trace (the benchmarks' reference workload).
pub fn openb_default() -> (Cluster, Vec<Task>) {
    let dir = openb_traces_dir();
    let cluster = load_nodes_csv(
        &dir.join("openb_node_list_gpu_node.csv"),
        CpuPowerProfile::Reference,
    )
    .expect("openb node list loads");
    let tasks = load_tasks_csv(&dir.join("openb_pod_list_default.csv"), InputRules::Strict)
        .expect("openb default trace loads")
        .tasks;
    (cluster, tasks)
}

/// The real openb GPU cluster and `default` trace with its real times (time mode).
pub fn openb_default_timed() -> (Cluster, gapbench_replay::TimedWorkload) {
    let dir = openb_traces_dir();
    let (cluster, _) = openb_default();
    let workload = gapbench_replay::TimedWorkload::load_csv(
        &dir.join("openb_pod_list_default.csv"),
        InputRules::Strict,
    )
    .expect("openb default trace loads with its times");
    (cluster, workload)
}

/// The paper's preparation (spec §3: shuffled tasks, tune 1.3, random node order) at seed 42.
pub fn prepare_paper(tasks: &[Task], cluster: &Cluster) -> PreparedWorkload {
    prepare(
        tasks,
        cluster,
        TaskOrder::Shuffled,
        Some(1.3),
        NodeOrder::Random,
        42,
    )
}

/// One whole run: an arrival sweep (preparation included) on the real openb cluster and
/// `default` trace at tune 1.3, seed 42 — the unit the reference simulator needs over an
/// hour for. Returns the number of events, so the work cannot be optimised away.
pub fn whole_run(cluster: &Cluster, tasks: &[Task], spec: &PolicySpec) -> usize {
    let prepared = prepare_paper(tasks, cluster);
    run_arrival_sweep(cluster, &prepared, spec).records.len()
}

/// Scoring throughput's fixture: the real openb cluster at about 70 % GPU allocation (FGD,
/// seed 42) and the next 256 arriving tasks, each with every node it fits on.
pub struct ScoringSnapshot {
    pub cluster: Cluster,
    pub prepared: PreparedWorkload,
    pub state: ClusterState,
    pub probe: Vec<Task>,
    pub feasible: Vec<Vec<NodeId>>,
}

impl ScoringSnapshot {
    pub fn new() -> Self {
        let (cluster, tasks) = openb_default();
        let prepared = prepare_paper(&tasks, &cluster);
        let sweep = run_arrival_sweep(&cluster, &prepared, &PolicySpec::solo(PolicyKind::Fgd));
        let capacity = cluster.gpu_capacity_milli();
        let cut = sweep
            .records
            .iter()
            .position(|r| r.metrics.used_gpu_milli * 100 >= 70 * capacity)
            .expect("the sweep reaches 70 %");
        let mut state = ClusterState::empty(&cluster);
        for (task, placement) in sweep.placements_until(cut) {
            state.bind(&prepared.events[task], placement);
        }
        let probe: Vec<Task> = prepared.events[cut..cut + 256].to_vec();
        let feasible = probe
            .iter()
            .map(|task| {
                (0..cluster.len() as NodeId)
                    .filter(|&n| state.fits(&cluster, n, task))
                    .collect()
            })
            .collect();
        ScoringSnapshot {
            cluster,
            prepared,
            state,
            probe,
            feasible,
        }
    }

    /// How many node scores one `score_all` computes.
    pub fn node_scores(&self) -> u64 {
        self.feasible.iter().map(|nodes| nodes.len() as u64).sum()
    }

    /// A fresh, un-memoised instance of `policy` with the run's random stream, ready for
    /// `score_all`.
    pub fn scorer(&self, policy: &PolicyRef) -> Scorer {
        Scorer {
            policy: policy.new_policy(),
            rng: self.prepared.rng.clone(),
        }
    }

    /// Scores every probe task on every node it fits on; returns the wrapping sum of the
    /// scores, so the work cannot be optimised away.
    pub fn score_all(&self, scorer: &mut Scorer) -> i64 {
        let ctx = ScoreContext {
            cluster: &self.cluster,
            state: &self.state,
            typical: &self.prepared.typical,
        };
        let mut sum = 0i64;
        for (task, nodes) in self.probe.iter().zip(&self.feasible) {
            if nodes.len() > 1 {
                scorer.policy.begin_task(nodes, &mut scorer.rng);
            }
            for &node in nodes {
                sum = sum.wrapping_add(scorer.policy.score(&ctx, node, task));
            }
        }
        sum
    }
}

impl Default for ScoringSnapshot {
    fn default() -> Self {
        Self::new()
    }
}

/// A policy and its random stream, scored by [`ScoringSnapshot::score_all`].
pub struct Scorer {
    policy: Box<dyn Policy>,
    rng: SimRng,
}

/// FGD's arrival sweep of `prepared` on `cluster`, as the events an exact snapshot is cut
/// from (the solver side knows no engine).
pub fn fgd_sweep_events(
    cluster: &Cluster,
    prepared: &PreparedWorkload,
) -> Vec<gapbench_ilp::SweepEvent> {
    let spec: PolicySpec = "fgd".parse().expect("fgd is a policy");
    run_arrival_sweep(cluster, prepared, &spec).events()
}

/// An overloaded queue, as Alibaba's serving traces put on the openb GPU nodes: `tasks`
/// tasks of seven request shapes (whole GPUs 1–8, shares of one, CPU-only), one arrival a
/// second, each running 1–10 hours, so that most of them wait. The same on every call.
pub fn overloaded_timed(tasks: usize) -> gapbench_replay::TimedWorkload {
    const SHAPES: [(u8, u16); 7] = [
        (1, 1000),
        (1, 500),
        (2, 1000),
        (4, 1000),
        (8, 1000),
        (0, 0),
        (1, 250),
    ];
    let tasks = (0..tasks)
        .map(|i| {
            // A fixed mixing of the index (no generator: the trace is part of the bench).
            let mixed = (i as u64)
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .rotate_left(17);
            let (gpus, milli) = SHAPES[(mixed % SHAPES.len() as u64) as usize];
            let per_gpu = u32::from(gpus.max(1));
            gapbench_replay::TimedTask {
                task: Task::new(
                    format!("serve-{i:05}"),
                    4000 * per_gpu,
                    8192 * u64::from(per_gpu),
                    gpus,
                    milli,
                ),
                qos: gapbench_replay::Qos::LatencySensitive,
                phase: gapbench_replay::PodPhase::Succeeded,
                arrival_s: i as f64,
                duration_s: 3600.0 + ((mixed >> 8) % 32_400) as f64,
                left_censored: false,
                right_censored: false,
                profile: None,
            }
        })
        .collect::<Vec<_>>();
    let trace_end_s = tasks
        .iter()
        .map(|t| t.arrival_s + t.duration_s)
        .fold(0.0, f64::max);
    gapbench_replay::TimedWorkload {
        tasks,
        dropped_pending: 0,
        trace_end_s,
        adjustments: Vec::new(),
    }
}

/// `nodes` nodes of 8 V100 GPUs each (96 cores, 768 GiB), the overloaded growth case's
/// cluster.
pub fn eight_gpu_nodes(nodes: usize) -> Cluster {
    let mut csv = String::from("sn,cpu_milli,memory_mib,gpu,model\n");
    for n in 0..nodes {
        csv.push_str(&format!("node-{n},96000,786432,8,V100M32\n"));
    }
    gapbench_model::workload::parse_nodes_csv(
        std::path::Path::new("eight-gpu-nodes.csv"),
        csv.as_bytes(),
        CpuPowerProfile::Reference,
    )
    .expect("a valid node list")
}
