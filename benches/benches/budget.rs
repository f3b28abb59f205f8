//! Budgeted replay and exact frontier on the real openb default trace: one PowerFlow-style
//! replay of the whole trace (its GPU jobs as training jobs, budget = full-clock FIFO's job
//! energy, L1) and one GreenFlow-style replay (CAISO-like carbon, oracle forecast, budget =
//! FIFO's carbon); one Lagrangian JCT–energy frontier of a contended day of the trace (40
//! GPU jobs on 16 GPUs, 10-minute slots).

use criterion::{criterion_group, criterion_main, Criterion};
use gapbench_ilp::frontier::{
    lagrangian_frontier, BudgetKind, FrontierInstance, FrontierJob, LagrangianOptions,
};
use gapbench_model::training::Fidelity;
use gapbench_model::SyntheticGrid;
use gapbench_replay::budget::{
    budget_jobs, default_horizon_s, run_budgeted, trace_end_s, Budget, BudgetOptions, Forecast,
};
use gapbench_replay::policies::{ClockFifo, ClockRule, GreenFlowStyle, PowerFlowStyle};

fn budgeted(c: &mut Criterion) {
    let (cluster, workload) = gapbench_benches::openb_default_timed();
    let jobs = budget_jobs(&cluster, &workload, 42, Fidelity::ElasticGpus);
    let hours = (trace_end_s(&jobs) / 3600.0).ceil() as usize + 24;
    let options = BudgetOptions {
        budget: Budget::Unlimited,
        carbon: Some(SyntheticGrid::CAISO_LIKE.generate("caiso-like", hours, 42)),
        fidelity: Fidelity::ElasticGpus,
        round_s: 300.0,
        horizon_end_s: default_horizon_s(&jobs),
        seed: 42,
    };
    let fifo = run_budgeted(
        &cluster,
        &workload,
        &mut ClockFifo {
            rule: ClockRule::Full,
        },
        &options,
    )
    .expect("FIFO finishes");
    let energy = BudgetOptions {
        budget: Budget::EnergyKwh(fifo.job_energy_kwh),
        ..options.clone()
    };
    let carbon = BudgetOptions {
        budget: Budget::CarbonKg(fifo.carbon_kg),
        ..options.clone()
    };
    let mut group = c.benchmark_group("budgeted_default_trace");
    group.sample_size(10);
    group.bench_function("powerflow", |b| {
        b.iter(|| run_budgeted(&cluster, &workload, &mut PowerFlowStyle, &energy).expect("runs"))
    });
    group.bench_function("greenflow-oracle", |b| {
        b.iter(|| {
            let mut policy = GreenFlowStyle::new(Forecast::Oracle, 1.0);
            run_budgeted(&cluster, &workload, &mut policy, &carbon).expect("runs")
        })
    });
    group.finish();

    // A contended day of the trace: the first 40 GPU jobs created after 10^7 s that ran
    // 10 minutes to 2 hours, arrivals shifted to 0 and compressed 10×, on 16 GPUs.
    let mut day: Vec<&gapbench_replay::budget::BudgetJob> = jobs
        .iter()
        .filter(|j| {
            let duration = workload.tasks[j.task as usize].duration_s;
            j.arrival_s >= 1e7 && (600.0..=7200.0).contains(&duration)
        })
        .take(40)
        .collect();
    day.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
    let t0 = day[0].arrival_s;
    let slot_s = 600.0;
    let instance = FrontierInstance {
        jobs: day
            .iter()
            .map(|j| {
                FrontierJob::of_training(
                    &j.training,
                    (j.arrival_s - t0) / 10.0,
                    Fidelity::ElasticGpus,
                )
            })
            .collect(),
        gpus: 16,
        slot_s,
        horizon_slots: 24,
        budget: BudgetKind::Energy,
    };
    let mut group = c.benchmark_group("frontier");
    group.sample_size(10);
    group.bench_function("lagrangian_40_jobs_16_gpus", |b| {
        b.iter(|| lagrangian_frontier(&instance, &LagrangianOptions::default()).expect("valid"))
    });
    group.finish();
}

criterion_group!(benches, budgeted);
criterion_main!(benches);
