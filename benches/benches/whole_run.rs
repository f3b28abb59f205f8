//! Whole-run time per policy: one arrival sweep, preparation included, on the real openb
//! cluster and `default` trace (see `gapbench_benches::whole_run`).

use criterion::{criterion_group, criterion_main, Criterion};
use gapbench_benches::{openb_default, whole_run, whole_run_policies};

fn whole_runs(c: &mut Criterion) {
    let (cluster, tasks) = openb_default();
    let mut group = c.benchmark_group("whole_run");
    group.sample_size(10);
    for (id, spec) in whole_run_policies() {
        group.bench_function(id, |b| b.iter(|| whole_run(&cluster, &tasks, &spec)));
    }
    group.finish();
}

criterion_group!(benches, whole_runs);
criterion_main!(benches);
