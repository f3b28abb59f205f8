//! The exact JCT–energy frontier of budgeted replays: one Lagrangian frontier of a
//! contended day of the real openb default trace (40 GPU jobs on 16 GPUs, 10-minute slots).
//! The budgeted replays themselves are timed with every other policy in `replay`.

use criterion::{criterion_group, criterion_main, Criterion};
use gapbench_ilp::frontier::{
    lagrangian_frontier, BudgetKind, FrontierInstance, FrontierJob, LagrangianOptions, Slots,
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

criterion_group!(benches, budgeted);
criterion_main!(benches);
