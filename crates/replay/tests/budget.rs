//! Budgeted replay: baselines' hand-checkable energies, budgets respected to within one
//! interval between rounds, clear errors for budgets that cannot work, determinism.

mod support;

use gapbench_model::training::Fidelity;
use gapbench_model::{Cluster, SyntheticGrid};
use gapbench_replay::budget::{
    budget_jobs, default_horizon_s, run_budgeted, Allocator, Budget, BudgetError, BudgetOptions,
    BudgetResult, Forecast, Plan,
};
use gapbench_replay::policies::{ClockFifo, ClockRule, GreenFlowStyle, PowerFlowStyle};
use gapbench_replay::{Qos, TimedWorkload};
use support::{cluster, node_type, timed, workload};

/// 4 nodes × 8 GPUs and 60 jobs over ~2 h: whole-GPU jobs of 1–8 GPUs and GPU-sharing ones.
fn small() -> (Cluster, TimedWorkload) {
    let cluster = cluster(&[node_type(8, 96); 4]);
    let shapes: [(u8, u16); 6] = [
        (1, 1000),
        (1, 500),
        (2, 1000),
        (4, 1000),
        (1, 250),
        (8, 1000),
    ];
    let tasks = (0..60u32)
        .map(|i| {
            let (gpus, milli) = shapes[(i * 7 % 6) as usize];
            let arrival = f64::from(i * 131 % 7200);
            let duration = 600.0 + f64::from(i * 977 % 6600);
            timed(
                &format!("job-{i:02}"),
                4000,
                gpus,
                milli,
                Qos::BestEffort,
                arrival,
                duration,
            )
        })
        .collect();
    (cluster, workload(tasks))
}

fn options(
    cluster: &Cluster,
    workload: &TimedWorkload,
    budget: Budget,
    fidelity: Fidelity,
) -> BudgetOptions {
    let jobs = budget_jobs(cluster, workload, 7, fidelity);
    BudgetOptions {
        budget,
        carbon: Some(SyntheticGrid::CAISO_LIKE.generate("caiso-like", 48, 3)),
        fidelity,
        round_s: 300.0,
        horizon_end_s: default_horizon_s(&jobs),
        seed: 7,
    }
}

fn run(
    allocator: &mut dyn Allocator,
    budget: Budget,
    fidelity: Fidelity,
) -> Result<BudgetResult, BudgetError> {
    let (cluster, workload) = small();
    let options = options(&cluster, &workload, budget, fidelity);
    run_budgeted(&cluster, &workload, allocator, &options)
}

fn full_clock() -> BudgetResult {
    run(
        &mut ClockFifo {
            rule: ClockRule::Full,
        },
        Budget::Unlimited,
        Fidelity::FrequencyOnly,
    )
    .unwrap()
}

#[test]
fn full_clock_fifo_draws_the_trace_energy_and_never_beats_the_trace_duration() {
    let (cluster, workload) = small();
    let result = full_clock();
    let jobs = budget_jobs(&cluster, &workload, 7, Fidelity::FrequencyOnly);
    for (job, outcome) in jobs.iter().zip(&result.jobs) {
        let task = &workload.tasks[job.task as usize];
        let option = job.options[job.trace_option];
        let expected_kwh = task.duration_s * option.watts / 3.6e6;
        assert!(
            (outcome.energy_kwh - expected_kwh).abs() < 1e-9 * expected_kwh.max(1.0),
            "{}",
            outcome.name
        );
        let jct = outcome.jct_s.expect("finished");
        assert!(
            jct >= task.duration_s * (1.0 - 1e-9),
            "{}: {jct} < {}",
            outcome.name,
            task.duration_s
        );
        assert_eq!(outcome.reconfigurations, 0);
    }
    let total: f64 = result.jobs.iter().map(|j| j.energy_kwh).sum();
    assert!((total - result.job_energy_kwh).abs() < 1e-9 * total);
}

#[test]
fn zeus_like_never_draws_more_per_job_than_full_clock() {
    let full = full_clock();
    let zeus = run(
        &mut ClockFifo {
            rule: ClockRule::Zeus { eta: 0.5 },
        },
        Budget::Unlimited,
        Fidelity::FrequencyOnly,
    )
    .unwrap();
    assert!(zeus.job_energy_kwh < full.job_energy_kwh);
    for (z, f) in zeus.jobs.iter().zip(&full.jobs) {
        assert!(z.energy_kwh <= f.energy_kwh * (1.0 + 1e-9), "{}", z.name);
    }
}

#[test]
fn powerflow_stays_within_its_energy_budget_and_finishes_every_job() {
    let base = full_clock().job_energy_kwh;
    for fidelity in [Fidelity::FrequencyOnly, Fidelity::ElasticGpus] {
        let mut previous_jct = f64::INFINITY;
        for fraction in [0.7, 0.85, 1.0] {
            let budget = fraction * base;
            let result = run(&mut PowerFlowStyle, Budget::EnergyKwh(budget), fidelity)
                .unwrap_or_else(|e| panic!("{fidelity:?} at {fraction}: {e}"));
            assert!(result.jobs.iter().all(|j| j.end_s.is_some()));
            assert!(
                result.job_energy_kwh <= budget + result.max_interval_spend,
                "{fidelity:?} at {fraction}: {} kWh over {budget} kWh",
                result.job_energy_kwh
            );
            // A larger budget never makes it much slower (paced greedy, not exact).
            assert!(
                result.mean_jct_s <= previous_jct * 1.05,
                "{fidelity:?} at {fraction}"
            );
            previous_jct = result.mean_jct_s;
        }
    }
}

#[test]
fn greenflow_stays_within_its_carbon_budget_under_every_forecast() {
    let base = full_clock().carbon_kg;
    for forecast in [
        Forecast::Myopic,
        Forecast::Oracle,
        Forecast::Noisy {
            sigma: 0.15,
            seed: 5,
        },
    ] {
        for fraction in [0.7, 1.0] {
            let budget = fraction * base;
            let result = run(
                &mut GreenFlowStyle::new(forecast, 1.0),
                Budget::CarbonKg(budget),
                Fidelity::ElasticGpus,
            )
            .unwrap_or_else(|e| panic!("{forecast:?} at {fraction}: {e}"));
            assert!(result.jobs.iter().all(|j| j.end_s.is_some()));
            assert!(
                result.carbon_kg <= budget + result.max_interval_spend,
                "{forecast:?} at {fraction}: {} kg over {budget} kg",
                result.carbon_kg
            );
        }
    }
}

#[test]
fn a_budget_below_the_least_energy_is_refused_with_the_numbers() {
    let (cluster, workload) = small();
    let jobs = budget_jobs(&cluster, &workload, 7, Fidelity::ElasticGpus);
    let least_kwh: f64 = jobs
        .iter()
        .map(|j| j.least_joules(j.training.iterations))
        .sum::<f64>()
        / 3.6e6;
    let error = run(
        &mut PowerFlowStyle,
        Budget::EnergyKwh(0.9 * least_kwh),
        Fidelity::ElasticGpus,
    )
    .unwrap_err();
    assert!(matches!(error, BudgetError::TooSmall { .. }), "{error}");
    let text = error.to_string();
    assert!(text.contains("too small") && text.contains("kWh"), "{text}");
    // Just above the least energy: either it finishes within budget or it says it ran out.
    match run(
        &mut PowerFlowStyle,
        Budget::EnergyKwh(1.01 * least_kwh),
        Fidelity::ElasticGpus,
    ) {
        Ok(result) => {
            assert!(result.job_energy_kwh <= 1.01 * least_kwh + result.max_interval_spend)
        }
        Err(error) => assert!(matches!(error, BudgetError::Exhausted { .. }), "{error}"),
    }
}

#[test]
fn a_job_larger_than_every_node_is_a_clear_error() {
    let cluster = cluster(&[node_type(4, 96); 2]);
    let workload = workload(vec![timed(
        "big",
        1000,
        8,
        1000,
        Qos::BestEffort,
        0.0,
        100.0,
    )]);
    let options = options(
        &cluster,
        &workload,
        Budget::Unlimited,
        Fidelity::FrequencyOnly,
    );
    let error = run_budgeted(&cluster, &workload, &mut PowerFlowStyle, &options).unwrap_err();
    assert!(error.to_string().contains("big"), "{error}");
}

#[test]
fn budgeted_replays_are_deterministic() {
    let base = full_clock().job_energy_kwh;
    let a = run(
        &mut PowerFlowStyle,
        Budget::EnergyKwh(0.8 * base),
        Fidelity::ElasticGpus,
    )
    .unwrap();
    let b = run(
        &mut PowerFlowStyle,
        Budget::EnergyKwh(0.8 * base),
        Fidelity::ElasticGpus,
    )
    .unwrap();
    assert_eq!(a, b);
}

/// Plans every job at its trace configuration without taking GPUs from the pool.
struct TakesNothing;

impl Allocator for TakesNothing {
    fn name(&self) -> String {
        "takes-nothing".into()
    }

    fn allocate(&mut self, round: &gapbench_replay::budget::Round<'_>) -> Plan {
        Plan {
            options: round
                .active
                .iter()
                .map(|a| Some(round.jobs[a.job as usize].trace_option))
                .collect(),
            pool: round.pool.clone(),
        }
    }
}

#[test]
fn a_plan_whose_pool_does_not_hold_its_gpus_is_refused() {
    let error = run(
        &mut TakesNothing,
        Budget::Unlimited,
        Fidelity::FrequencyOnly,
    )
    .unwrap_err();
    assert!(
        error.to_string().contains("did not take from the pool"),
        "{error}"
    );
}
