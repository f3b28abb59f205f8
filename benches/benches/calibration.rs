//! A fixed CPU workload that does not depend on gapbench's code: `cargo xtask perf` divides
//! every benchmark by it, so a slower or busier machine does not read as a regression.

use criterion::{criterion_group, criterion_main, Criterion};

/// Sorts 200,000 pseudo-random integers (a fixed linear congruential sequence) and folds them:
/// branchy, cache-using integer work of the same flavour as scheduling.
fn sort_and_fold() -> u64 {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut values: Vec<u64> = (0..200_000)
        .map(|_| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            state >> 17
        })
        .collect();
    values.sort_unstable();
    values.iter().fold(0u64, |acc, &v| acc.rotate_left(5) ^ v)
}

fn calibration(c: &mut Criterion) {
    let mut group = c.benchmark_group("calibration");
    group.sample_size(20);
    group.bench_function("sort_and_fold", |b| b.iter(sort_and_fold));
    group.finish();
}

criterion_group!(benches, calibration);
criterion_main!(benches);
