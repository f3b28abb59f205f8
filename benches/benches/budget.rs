//! The exact JCT–energy frontier of budgeted replays: one Lagrangian frontier of a
//! contended day of the real openb default trace (40 GPU jobs on 16 GPUs, 10-minute slots),
//! and one trace-scale frontier by column generation (every GPU job of the default trace at
//! 3× arrivals on 64 GPUs, as paper.toml's `trace-64gpu-x3`: 15-minute slots where busy,
//! up to 6 h where quiet; a fixed amount of work — a 2-price warm start of 5 steps each,
//! then 3 rounds at each of 2 budgets — so the time is comparable across commits), and
//! the same instance's frontier by dual ascent as the budget study computes it (10 steps at
//! the unconstrained end, then 10 at each of 2 budgets: 31 pricing passes).
//! The budgeted replays themselves are timed with every other policy in `replay`.

use criterion::{criterion_group, criterion_main, Criterion};
use gapbench_bounds::frontier::slots::busy_base_slots;
use gapbench_bounds::frontier::{
    ascent_frontier, column_generation_frontier, lagrangian_frontier, AscentOptions, BudgetKind,
    ColumnGenerationOptions, FrontierInstance, FrontierJob, LagrangianOptions, Slots,
};
use gapbench_model::training::Fidelity;
use gapbench_replay::{derive_attributes, JobTable, TrainingTask};

fn budgeted(c: &mut Criterion) {
    let (cluster, workload) = gapbench_benches::openb_default_timed();
    let attributes = derive_attributes(&workload.tasks, 42, &Default::default());
    let table = JobTable::new(&cluster, &workload, &attributes, 42, Fidelity::ElasticGpus);
    let jobs = table.jobs();
    // A contended day of the trace: the first 40 GPU jobs created after 10^7 s that ran
    // 10 minutes to 2 hours, arrivals shifted to 0 and compressed 10×, on 16 GPUs.
    let mut day: Vec<&TrainingTask> = jobs
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
        slots: Slots::uniform(slot_s, 24),
        budget: BudgetKind::Energy,
    };
    let mut group = c.benchmark_group("frontier");
    group.sample_size(10);
    group.bench_function("lagrangian_40_jobs_16_gpus", |b| {
        b.iter(|| lagrangian_frontier(&instance, &LagrangianOptions::default()).expect("valid"))
    });
    group.finish();
}

fn trace_scale(c: &mut Criterion) {
    let (cluster, workload) = gapbench_benches::openb_default_timed();
    let workload = workload.with_arrival_scale(3.0).expect("a positive scale");
    let attributes = derive_attributes(&workload.tasks, 42, &Default::default());
    let table = JobTable::new(&cluster, &workload, &attributes, 42, Fidelity::ElasticGpus);
    let jobs = table.jobs();
    let origin = jobs
        .iter()
        .map(|j| j.arrival_s)
        .fold(f64::INFINITY, f64::min);
    let (gpus, base_s) = (64_000u32, 900.0);
    let held: Vec<(f64, f64, f64)> = jobs
        .iter()
        .map(|j| {
            let from = j.arrival_s - origin;
            let milli = f64::from(j.options[j.trace_option].gpu_milli);
            (from, from + j.trace_duration_s(), milli)
        })
        .collect();
    let horizon_s = held.iter().map(|h| h.1).fold(0.0, f64::max) + base_s;
    let count = (horizon_s / base_s).ceil() as usize;
    let busy = busy_base_slots(held, base_s, count, f64::from(gpus));
    let instance = FrontierInstance {
        jobs: jobs
            .iter()
            .map(|j| {
                let mut job = FrontierJob::of_training(
                    &j.training,
                    j.arrival_s - origin,
                    Fidelity::ElasticGpus,
                );
                for (config, option) in job.configs.iter_mut().zip(&j.options) {
                    config.gpus = option.gpu_milli;
                    config.watts = option.watts;
                }
                job
            })
            .collect(),
        gpus,
        slots: Slots::adaptive(base_s, 21_600.0, horizon_s, &busy),
        budget: BudgetKind::Energy,
    };
    let options = ColumnGenerationOptions {
        warm_start: LagrangianOptions {
            budget_prices: 2,
            subgradient_steps: 5,
        },
        rounds_per_budget: 3,
        tolerance: 0.0,
        time_limit_s: 1e6,
        threads: Some(1),
        progress: false,
    };
    let least = instance.least_budget();
    let budgets = [least * 1.5, least * 2.0];
    let mut group = c.benchmark_group("frontier");
    group.sample_size(10);
    group.bench_function("column_generation_trace_64gpu_x3", |b| {
        b.iter(|| column_generation_frontier(&instance, &budgets, &options).expect("valid"))
    });
    // Where the study's points spend: just above the least budget, up to FIFO's spend.
    let ascent_budgets = [least * 1.02, least * 1.08];
    let ascent = AscentOptions {
        unconstrained_steps: 10,
        steps_per_budget: 10,
        progress: false,
    };
    group.bench_function("ascent_trace_64gpu_x3", |b| {
        b.iter(|| ascent_frontier(&instance, &ascent_budgets, &ascent).expect("valid"))
    });
    group.finish();
}

criterion_group!(benches, budgeted, trace_scale);
criterion_main!(benches);
