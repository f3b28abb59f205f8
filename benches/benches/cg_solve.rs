//! Full-cluster column generation: one solve per objective on the real 1,213-node openb
//! cluster, the `default` trace tuned to 1.3 × its GPU capacity, FGD, at the 100 %
//! checkpoint, on 2 threads with a 10 s limit per solve (so one criterion run stays within
//! minutes). A solve ends when its bound closes or the time runs out: allocation converges
//! within the limit here, so its time is the time to converge; power and fragmentation
//! stop at the limit, so theirs guards the overhead around it (setup, integer phase).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use gapbench_ilp::{column_generation, Objective, Snapshot, SolveOptions, SolveStatus};

fn cg_solve(c: &mut Criterion) {
    let (cluster, tasks) = gapbench_benches::openb_default();
    let prepared = gapbench_benches::prepare_paper(&tasks, &cluster);
    let events = gapbench_benches::fgd_sweep_events(&cluster, &prepared);
    let snapshot = Snapshot::at_checkpoint(&cluster, &prepared, &events, 100.0).expect("snapshot");
    let options = SolveOptions {
        time_limit_s: 10.0,
        threads: Some(2),
        ..SolveOptions::default()
    };
    let mut group = c.benchmark_group("cg_solve");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(1));
    group.measurement_time(Duration::from_secs(1));
    for objective in Objective::ALL {
        let report = column_generation(&snapshot, objective, &options);
        assert!(
            !matches!(report.status, SolveStatus::Error(_)),
            "{}: {:?}",
            objective.name(),
            report.status
        );
        group.bench_function(objective.name(), |b| {
            b.iter(|| column_generation(&snapshot, objective, &options).bound)
        });
    }
    group.finish();
}

criterion_group!(benches, cg_solve);
criterion_main!(benches);
