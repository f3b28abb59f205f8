//! Exact solve time on a fixed snapshot: a 5-node sub-cluster of the real openb cluster
//! (node-type mix of the full cluster, drawn with seed 42), the `default` trace tuned to
//! 1.3 × its GPU capacity, FGD, at the 100 % checkpoint — one benchmark per objective, each
//! solved to proven optimality (single-threaded HiGHS, so times compare across machines'
//! cores).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use gapbench_ilp::{
    sample_sub_cluster, solve, Method, Objective, Snapshot, SolveOptions, SolveStatus,
};

fn ilp_solve(c: &mut Criterion) {
    let (full, tasks) = gapbench_benches::openb_default();
    let (cluster, _) = sample_sub_cluster(&full, 5, 42).expect("5 of 1213 nodes");
    let prepared = gapbench_benches::prepare_paper(&tasks, &cluster);
    let events = gapbench_benches::fgd_sweep_events(&cluster, &prepared);
    let snapshot = Snapshot::at_checkpoint(&cluster, &prepared, &events, 100.0).expect("snapshot");
    let options = SolveOptions {
        time_limit_s: 300.0,
        threads: Some(1),
        ..SolveOptions::default()
    };
    let mut group = c.benchmark_group("ilp_solve");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(5));
    let (problem, start) = snapshot.problem(&options);
    let solvers = [
        ("min_power", Objective::Power),
        ("max_alloc", Objective::Alloc),
        ("min_frag", Objective::Frag),
    ];
    for (name, objective) in solvers {
        let solved = || solve(&problem, objective, Method::PerNode, &start).expect(name);
        assert_eq!(
            solved().status,
            SolveStatus::Optimal,
            "{name}: the fixed snapshot must solve to optimality"
        );
        group.bench_function(name, |b| b.iter(|| solved().incumbent));
    }
    group.finish();
}

criterion_group!(benches, ilp_solve);
criterion_main!(benches);
