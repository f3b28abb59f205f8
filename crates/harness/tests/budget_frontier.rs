//! Every budgeted policy's point lies on or above the exact frontier of the same jobs on the
//! same GPUs: mean JCT ≥ the Lagrangian bound at the policy's own job energy (resp. carbon).

use gapbench::budget::{BudgetArgs, BudgetSetup, FidelityArg, ForecastArg};
use gapbench::frontier::{frontier_instance, policy_points, FrontierKind};
use gapbench_ilp::frontier::{lagrangian_frontier, LagrangianOptions};
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
                censored: false,
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
        budget_energy: None,
        budget_carbon: None,
        carbon: carbon.then(|| "caiso-like".to_string()),
        fidelity: FidelityArg::L1,
        forecast: ForecastArg::Oracle,
        forecast_noise: 0.15,
        theta: 1.0,
        eta: 0.5,
        round: 300.0,
        horizon: None,
        first_jobs: None,
    }
}

fn check(kind: FrontierKind) {
    let (cluster, workload) = small();
    let args = args(kind == FrontierKind::Carbon);
    let setup = BudgetSetup::new(&cluster, &workload, &args, 9).unwrap();
    let instance = frontier_instance(&setup, kind, 600.0).unwrap();
    let frontier = lagrangian_frontier(&instance, &LagrangianOptions::default()).unwrap();
    let points = policy_points(&setup, &args, &workload, kind, &frontier, 9).unwrap();
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

#[test]
fn every_energy_point_lies_on_or_above_the_jct_energy_frontier() {
    check(FrontierKind::Energy);
}

#[test]
fn every_carbon_point_lies_on_or_above_the_jct_carbon_frontier() {
    check(FrontierKind::Carbon);
}
