//! Waiting queues that stay cheap when long: an overloaded trace (20,000 tasks of seven
//! shapes, one a second, 1–10 hours each, on the openb GPU cluster: most of them wait)
//! replayed with a strict FIFO queue and with backfilling, for Gavel's FIFO, FGD and PWR,
//! and PowerFlow-style with an ample budget. Targets: backfilling within 3× strict FIFO's
//! time per policy, PowerFlow-style within a minute.
//!
//! The growth group replays 1k–16k waiting 8-GPU tasks on 8 nodes with backfilling (FGD):
//! with refusal classes the time grows linearly, where offering every waiting task at every
//! completion grew as n^1.85.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use gapbench_replay::policies::time_policy;
use gapbench_replay::{run, Budget, QueueDiscipline, ReplayOptions, TimedWorkload};

fn overloaded(c: &mut Criterion) {
    let (cluster, _) = gapbench_benches::openb_default();
    let workload = gapbench_benches::overloaded_timed(20_000);
    let mut group = c.benchmark_group("replay_overloaded_20k");
    group.sample_size(10);
    for name in ["fifo", "fgd", "pwr"] {
        for queue in [QueueDiscipline::Fifo, QueueDiscipline::Backfill] {
            let options = ReplayOptions {
                queue,
                ..ReplayOptions::default()
            };
            group.bench_function(format!("{name}/{}", queue.label()), |b| {
                b.iter(|| {
                    let mut policy = time_policy(name, &cluster).expect("a known policy");
                    run(&cluster, &workload, policy.as_mut(), &options)
                })
            });
        }
    }
    // PowerFlow-style with an ample budget: a full re-plan every round period (300 s), and
    // after each arrival and completion an event round that walks only the head of the
    // waiting jobs.
    let ample = ReplayOptions {
        budget: Budget::EnergyKwh(1e12),
        ..ReplayOptions::default()
    };
    group.bench_function("powerflow@ample", |b| {
        b.iter(|| {
            let mut policy = time_policy("powerflow", &cluster).expect("a known policy");
            run(&cluster, &workload, policy.as_mut(), &ample)
        })
    });
    group.finish();
}

/// `tasks` 8-GPU tasks arriving a second apart, each running 10 hours.
fn eight_gpu_tasks(tasks: usize) -> TimedWorkload {
    let mut workload = gapbench_benches::overloaded_timed(tasks);
    for timed in &mut workload.tasks {
        timed.task.gpu_count = 8;
        timed.task.gpu_milli = 1000;
        timed.task.cpu_milli = 32_000;
        timed.task.memory_mib = 65_536;
        timed.duration_s = 36_000.0;
    }
    workload.trace_end_s = workload.tasks.last().map_or(0.0, |t| t.arrival_s) + 36_000.0;
    workload
}

fn growth(c: &mut Criterion) {
    let cluster = gapbench_benches::eight_gpu_nodes(8);
    let options = ReplayOptions {
        queue: QueueDiscipline::Backfill,
        ..ReplayOptions::default()
    };
    let mut group = c.benchmark_group("backfill_growth_8_nodes");
    group.sample_size(10);
    for tasks in [1_000, 2_000, 4_000, 8_000, 16_000] {
        let workload = eight_gpu_tasks(tasks);
        group.bench_with_input(BenchmarkId::from_parameter(tasks), &workload, |b, w| {
            b.iter(|| {
                let mut policy = time_policy("fgd", &cluster).expect("a known policy");
                run(&cluster, w, policy.as_mut(), &options)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, overloaded, growth);
criterion_main!(benches);
