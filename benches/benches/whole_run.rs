//! Whole-run time: one arrival sweep (preparation included) on the real openb cluster and
//! `default` trace at tune 1.3, seed 42 — the unit the reference simulator needs over an
//! hour for.

use criterion::{criterion_group, criterion_main, Criterion};
use gapbench_model::{prepare, NodeOrder, TaskOrder};
use gapbench_online::{run_arrival_sweep, PolicySpec};

fn whole_run(c: &mut Criterion) {
    let (cluster, tasks) = gapbench_benches::openb_default();
    let mut group = c.benchmark_group("whole_run");
    group.sample_size(10);
    gapbench_benches::bench_calibration(&mut group);
    for policy in [
        "fgd",
        "pwr",
        "bestfit",
        "pwr:200,fgd:800",
        "random",
        "dotprod",
        "clustering",
        "packing",
    ] {
        let spec: PolicySpec = policy.parse().unwrap();
        group.bench_function(spec.slug(), |b| {
            b.iter(|| {
                let prepared = prepare(
                    &tasks,
                    &cluster,
                    TaskOrder::Shuffled,
                    Some(1.3),
                    NodeOrder::Random,
                    42,
                );
                run_arrival_sweep(&cluster, &prepared, &spec).records.len()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, whole_run);
criterion_main!(benches);
