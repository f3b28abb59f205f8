//! Scoring throughput: raw node scores per second for each policy (and for BestFit's and
//! GpuPacking's formulas as score expressions), without memoisation,
//! on a snapshot of the real openb cluster at about 70 % GPU allocation (see
//! `gapbench_benches::ScoringSnapshot`).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gapbench_benches::{scoring_policies, ScoringSnapshot};

fn scoring(c: &mut Criterion) {
    let snapshot = ScoringSnapshot::new();
    let mut group = c.benchmark_group("scoring");
    group.sample_size(20);
    group.throughput(Throughput::Elements(snapshot.node_scores()));
    for (id, policy) in scoring_policies() {
        let mut scorer = snapshot.scorer(&policy);
        group.bench_function(id, |b| b.iter(|| snapshot.score_all(&mut scorer)));
    }
    group.finish();
}

criterion_group!(benches, scoring);
criterion_main!(benches);
