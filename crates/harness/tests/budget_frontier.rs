//! Every budgeted policy's point lies on or above the exact frontier of the same jobs on the
//! same GPUs: mean JCT ≥ the Lagrangian bound at the policy's own job energy (resp. carbon).

use gapbench::budget::{BudgetArgs, FidelityArg, ForecastArg};
use gapbench::frontier::{frontier_instance, policy_points, BudgetSetup, FrontierKind};
use gapbench_bounds::frontier::{lagrangian_frontier, LagrangianOptions};
use gapbench_model::{Cluster, CpuPowerProfile, GpuModel, NodeType, Task};
use gapbench_replay::{PodPhase, Qos, TimedTask, TimedWorkload};

/// 2 nodes × 8 V100 and 40 jobs arriving over 2 h (1–4 GPUs and GPU-sharing ones): busy
/// enough that jobs queue.
fn small() -> (Cluster, TimedWorkload) {
    let node = NodeType {
        gpu_model: Some(GpuModel::V100M32),
        gpu_count: 8,
        cpu_milli: 96_000,
        memory_mib: 512 * 1024,
    };
    let cluster = Cluster::new(
        (0..2).map(|i| (format!("n{i}"), node)),
        CpuPowerProfile::Reference,
    )
    .unwrap();
    let shapes: [(u8, u16); 5] = [(1, 1000), (2, 1000), (1, 500), (4, 1000), (1, 300)];
    let mut tasks: Vec<TimedTask> = (0..40u32)
        .map(|i| {
            let (gpus, milli) = shapes[(i * 3 % 5) as usize];
            TimedTask {
                task: Task::new(format!("job-{i:02}"), 2000, 1024, gpus, milli),
                qos: Qos::BestEffort,
                phase: PodPhase::Succeeded,
                arrival_s: f64::from(i * 173 % 7200),
                duration_s: 900.0 + f64::from(i * 613 % 5400),
                left_censored: false,
                right_censored: false,
                profile: None,
            }
        })
        .collect();
    tasks.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
    let workload = TimedWorkload {
        tasks,
        dropped_pending: 0,
        trace_end_s: 20_000.0,
        adjustments: Vec::new(),
    };
    (cluster, workload)
}

fn args(carbon: bool) -> BudgetArgs {
    BudgetArgs {
        carbon: carbon.then(|| "caiso-like".to_string()),
        fidelity: Some(FidelityArg::L1),
        forecast: Some(ForecastArg::Oracle),
        theta: Some(1.0),
        round: Some(300.0),
        ..BudgetArgs::default()
    }
}

fn check(kind: FrontierKind) {
    let (cluster, workload) = small();
    let args = args(kind == FrontierKind::Carbon);
    let setup = BudgetSetup::of(cluster, workload, &args, 9).unwrap();
    let instance = frontier_instance(&setup, kind, 600.0, 600.0).unwrap();
    let frontier = lagrangian_frontier(&instance, &LagrangianOptions::default()).unwrap();
    let points = policy_points(&setup, kind, Some(&frontier), &[0.7, 0.85, 1.0]).unwrap();
    assert_eq!(points.len(), 5);
    let mut budgeted = 0;
    for point in &points {
        if let Some(error) = &point.error {
            // A paced policy may run out at 0.7 × FIFO's spend; it must say so.
            assert!(error.contains("budget"), "{}: {error}", point.policy);
            continue;
        }
        if point.budget.is_some() {
            budgeted += 1;
        }
        let bound = point
            .bound_mean_jct_s
            .expect("its own spend is a feasible budget");
        assert!(bound > 0.0);
        assert!(
            point.mean_jct_s >= bound * (1.0 - 1e-9),
            "{} at {:?}: mean JCT {} below the bound {}",
            point.policy,
            point.budget,
            point.mean_jct_s,
            bound
        );
    }
    assert!(budgeted >= 2, "{points:?}");
}

/// The bench's budget study on a slice of the real default trace (jobs of day 114 on, so
/// the frontier's clock and carbon series start late): every point of every policy lies on
/// or above the frontier, and the speed-up column is FIFO's JCT over the point's.
#[test]
fn the_budget_study_on_the_real_trace_keeps_every_point_above_its_frontier() {
    use gapbench::bench::kinds::run_budget_study;
    use gapbench::bench::spec::budget::BudgetStudySpec;
    use gapbench_results::table::read_rows;
    use gapbench_results::{BudgetFrontierRow, BudgetPointRow};
    let dir = gapbench_model::testing::openb_traces_dir();
    let spec: BudgetStudySpec = toml::from_str(
        r#"
trace = "default"
seeds = [42]
fractions = [0.9, 1.0, 1.2]
frontier_prices = 8
frontier_steps = 30
setups = [{ name = "slice", gpus = 8, arrival_scale = 4, first_jobs = 40, max_duration_s = 86400, frontier = true }]
"#,
    )
    .unwrap();
    spec.validate().unwrap();
    let out = std::env::temp_dir().join(format!("gapbench-budget-study-{}", std::process::id()));
    let files = (
        dir.join("openb_node_list_gpu_node.csv"),
        dir.join("openb_pod_list_default.csv"),
    );
    let cells = run_budget_study(&spec, Some(files), &out).unwrap();
    assert_eq!(
        cells,
        2 + 2 * (1 + 3),
        "FIFO, Zeus, and per kind a frontier and three budgets"
    );
    let points = read_rows::<BudgetPointRow>(&out.join("budget_points.csv"), &[])
        .unwrap()
        .unwrap();
    let mut drawn = 0;
    for row in &points.rows {
        let p = &row.value;
        assert_eq!(p.jobs, 40);
        let Some(jct) = p.mean_jct_s else {
            assert!(p.error.contains("budget"), "{p:?}");
            continue;
        };
        drawn += 1;
        let bound = p.bound_mean_jct_s.expect("a frontier was asked for");
        assert!(jct >= bound * (1.0 - 1e-9), "{p:?}");
        let speedup = p.jct_speedup_vs_fifo.unwrap();
        assert!((speedup * jct - p.fifo_mean_jct_s).abs() <= 1e-6 * p.fifo_mean_jct_s);
    }
    assert!(drawn >= 8, "{drawn} points");
    let frontier = read_rows::<BudgetFrontierRow>(&out.join("budget_frontier.csv"), &[])
        .unwrap()
        .unwrap();
    // The envelope never rises with a larger budget.
    for kind in ["energy", "carbon"] {
        let line: Vec<&BudgetFrontierRow> = frontier
            .rows
            .iter()
            .map(|r| &r.value)
            .filter(|r| r.kind == kind)
            .collect();
        assert!(line.len() > 10, "{kind}");
        assert!(line
            .windows(2)
            .all(|w| w[1].budget > w[0].budget
                && w[1].mean_jct_bound_s <= w[0].mean_jct_bound_s + 1e-6));
    }
    std::fs::remove_dir_all(&out).unwrap();
}

/// Runs a budget study (`spec`, TOML) on the real default trace in a fresh folder named
/// after `name`; returns the points that have a mean JCT (a replay without one failed for
/// its budget and says so), each checked on or above its bound with a gap.
fn trace_study_points(spec: &str, name: &str) -> Vec<gapbench_results::BudgetPointRow> {
    use gapbench::bench::kinds::run_budget_study;
    use gapbench::bench::spec::budget::BudgetStudySpec;
    use gapbench_results::table::read_rows;
    use gapbench_results::BudgetPointRow;
    let dir = gapbench_model::testing::openb_traces_dir();
    let spec: BudgetStudySpec = toml::from_str(spec).unwrap();
    spec.validate().unwrap();
    let out = std::env::temp_dir().join(format!("gapbench-{name}-{}", std::process::id()));
    let files = (
        dir.join("openb_node_list_gpu_node.csv"),
        dir.join("openb_pod_list_default.csv"),
    );
    run_budget_study(&spec, Some(files), &out).unwrap();
    let points = read_rows::<BudgetPointRow>(&out.join("budget_points.csv"), &[])
        .unwrap()
        .unwrap();
    std::fs::remove_dir_all(&out).unwrap();
    let mut measured = Vec::new();
    for row in points.rows {
        let p = row.value;
        let Some(jct) = p.mean_jct_s else {
            assert!(p.error.contains("budget"), "{p:?}");
            continue;
        };
        let bound = p.bound_mean_jct_s.expect("a frontier was asked for");
        assert!(bound > 0.0 && jct >= bound * (1.0 - 1e-9), "{p:?}");
        assert!(p.gap.is_some_and(|g| g >= -1e-9), "{p:?}");
        measured.push(p);
    }
    measured
}

/// `trace-64gpu-x3` of `workloads/paper.toml` (the whole trace's GPU jobs on 64 GPUs at 3×
/// arrivals), sliced to its first 600 GPU jobs for test time, with the study-level route to
/// a tightened frontier (`frontier_budgets`): column generation over quiet-merged slots at
/// budgets around FIFO's spend, warm-started from the Lagrangian sweep. Every point of every policy lies on or above it, and every point has a
/// bound status; where column generation reports an LP limit the bound lies below it.
#[test]
fn the_trace_scale_setup_keeps_every_point_above_its_column_generation_frontier() {
    let points = trace_study_points(
        r#"
trace = "default"
seeds = [42]
fractions = [0.95, 1.0, 1.2]
queue = "backfill"
frontier_prices = 3
frontier_steps = 10
frontier_budgets = 3
frontier_rounds = 8
frontier_seconds = 40
setups = [{ name = "trace-64gpu-x3-first600", gpus = 64, arrival_scale = 3, first_jobs = 600, frontier = true, slot_s = 900, quiet_slot_s = 21600 }]
"#,
        "budget-colgen",
    );
    for p in &points {
        assert!(
            ["converged", "open", "outside"].contains(&p.bound_status.as_str()),
            "{p:?}"
        );
        if let (Some(bound), Some(limit)) = (p.bound_mean_jct_s, p.bound_lp_mean_jct_s) {
            assert!(bound <= limit * (1.0 + 1e-6), "{p:?}");
        }
    }
    assert!(points.len() >= 8, "{} points", points.len());
}

/// `trace-64gpu-x3` with the dual ascent alone at every point's own spend (`ascent_steps`
/// without `column_generation`; 15-minute slots where busy, up to 6 h where quiet, the
/// paper's fractions and steps), sliced to its first 600 GPU jobs for test time: every
/// point of every policy, energy and carbon, lies on or above the frontier, with a gap.
#[test]
fn the_trace_scale_setup_keeps_every_point_above_its_dual_ascent_frontier() {
    let points = trace_study_points(
        r#"
trace = "default"
seeds = [42]
fractions = [0.95, 1.0, 1.1, 1.2]
queue = "backfill"
setups = [{ name = "trace-64gpu-x3-first600", gpus = 64, arrival_scale = 3, first_jobs = 600, frontier = true, slot_s = 900, quiet_slot_s = 21600, ascent_steps = 15 }]
"#,
        "budget-ascent",
    );
    assert!(points.iter().all(|p| p.bound_status == "lagrangian"));
    assert!(points.len() >= 10, "{} points", points.len());
}

/// `trace-64gpu-x3` as `workloads/paper.toml` computes its frontier (the dual ascent at
/// every point's own spend, tightened there by stabilised column generation over 30-minute
/// slots where busy, up to 6 h where quiet), sliced to its first 600 GPU jobs for test
/// time: every point, energy and carbon, is `converged` — its bound within 0.5 % of the
/// master LP — and lies at or below that LP value (up to the interior point's tolerance),
/// and the schedule found lies between the bound and the point's JCT. Rounds limit the
/// work; the wall-clock safety net (an hour) is far beyond these seconds.
#[test]
fn the_paper_trace_setup_converges_at_every_point() {
    let points = trace_study_points(
        r#"
trace = "default"
seeds = [42]
fractions = [0.95, 1.0, 1.1, 1.2]
queue = "backfill"
frontier_seconds = 3600
setups = [{ name = "trace-64gpu-x3-first600", gpus = 64, arrival_scale = 3, first_jobs = 600, frontier = true, slot_s = 1800, quiet_slot_s = 21600, ascent_steps = 15, column_generation = true, incumbent_nodes = 0 }]
"#,
        "budget-ascent-colgen",
    );
    for p in &points {
        assert_eq!(p.bound_status, "converged", "{p:?}");
        let (bound, limit) = (p.bound_mean_jct_s.unwrap(), p.bound_lp_mean_jct_s.unwrap());
        // The master is solved by interior point to a relative tolerance near 1e-8.
        assert!(bound <= limit * (1.0 + 1e-6), "{p:?}");
        assert!(limit - bound <= 0.005 * limit, "{p:?}");
        // The schedule found (a list schedule or a replay) lies between the bound and the
        // point's own JCT.
        let schedule = p
            .schedule_mean_jct_s
            .expect("a schedule within the point's spend");
        assert!(bound <= schedule * (1.0 + 1e-9), "{p:?}");
        assert!(schedule <= p.mean_jct_s.unwrap() * (1.0 + 1e-9), "{p:?}");
    }
    assert!(points.len() >= 10, "{} points", points.len());
}

/// `slice-8gpu` of `workloads/paper.toml` (100 jobs queueing on 8 GPUs; column generation
/// from the ascent, then the best schedule found: a list schedule in the LP's order or the
/// points' own replays, here with 5 branch-and-bound nodes on top where the paper asks
/// none): at every point, energy and carbon, the schedule found lies between the bound and
/// the point's own mean JCT — the replay is itself a schedule of the problem, counted at
/// no more than its JCT and within its spend — so the gap splits into the bound's side and
/// the policy's. The node cap, not the clock, limits the search.
#[test]
fn the_paper_slice_splits_every_gap_at_a_schedule_found() {
    let points = trace_study_points(
        r#"
trace = "default"
seeds = [42]
fractions = [0.95, 1.0, 1.1, 1.2]
queue = "backfill"
frontier_seconds = 3600
setups = [{ name = "slice-8gpu", gpus = 8, arrival_scale = 4, first_jobs = 100, max_duration_s = 86400, frontier = true, ascent_steps = 15, column_generation = true, incumbent_nodes = 5 }]
"#,
        "budget-slice-incumbent",
    );
    for p in &points {
        let (bound, jct) = (p.bound_mean_jct_s.unwrap(), p.mean_jct_s.unwrap());
        let schedule = p
            .schedule_mean_jct_s
            .expect("the point's own replay is a schedule");
        assert!(bound <= schedule * (1.0 + 1e-9), "{p:?}");
        assert!(schedule <= jct * (1.0 + 1e-9), "{p:?}");
    }
    assert!(points.len() >= 8, "{} points", points.len());
}

#[test]
fn every_energy_point_lies_on_or_above_the_jct_energy_frontier() {
    check(FrontierKind::Energy);
}

#[test]
fn every_carbon_point_lies_on_or_above_the_jct_carbon_frontier() {
    check(FrontierKind::Carbon);
}
