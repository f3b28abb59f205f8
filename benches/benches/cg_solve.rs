//! Full-cluster column generation: one solve per objective on the real 1,213-node openb
//! cluster, the `default` trace tuned to 1.3 × its GPU capacity (seed 42), FGD, at the
//! 100 % checkpoint, on 2 threads with the paper bench's 10 s limit per solve
//! (`workloads/paper.toml`, `[gaps.full_cluster]`). Ten samples of one solve each (criterion's
//! flat sampling, since a solve outlasts the 1 s target) and a warm-up solve: up to two
//! minutes per objective. A solve ends when its bound closes or the time runs out, so its
//! time is the time to converge when it converges, and otherwise guards the overhead around
//! the limit (setup, integer phase). The set-up solve prints what a solve proves (status,
//! bound, incumbent, gap, columns, rounds), so each time is read with the quality it buys.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use gapbench_ilp::{relative_gap, solve, Method, Objective, Session, Snapshot, SolveOptions};

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
    let (problem, start) = snapshot.problem(&options);
    let method = Method::ColumnGeneration;
    for objective in Objective::ALL {
        let mut session = Session::new();
        let report = session
            .solve(&problem, objective, method, &start)
            .unwrap_or_else(|e| panic!("{}: {e}", objective.name()));
        let stats = session.last_stats();
        let (incumbent, bound) = (report.incumbent.unwrap_or(f64::NAN), report.bound);
        eprintln!(
            "cg_solve/{}: {} in {:.1} s, bound {bound:?}, incumbent {incumbent}, gap {:.3} %, {} columns, {} rounds",
            objective.name(),
            report.status.label(),
            report.solve_seconds,
            bound.map_or(f64::INFINITY, |b| 100.0 * relative_gap(incumbent, b)),
            stats.columns,
            stats.iterations
        );
        group.bench_function(objective.name(), |b| {
            b.iter(|| solve(&problem, objective, method, &start).map(|r| r.bound))
        });
    }
    group.finish();
}

criterion_group!(benches, cg_solve);
criterion_main!(benches);
