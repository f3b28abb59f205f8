//! One time-mode replay of the full real openb default trace (with its real times) per
//! policy, on the openb GPU cluster. Target: ≤ 1 s per replay on one core.

use criterion::{criterion_group, criterion_main, Criterion};
use gapbench_replay::policies::time_policy;
use gapbench_replay::{run, ReplayOptions};

/// The policies timed: the sweep's main ones through the online adapter, EaCO-R, and FIFO.
const REPLAY_POLICIES: [&str; 6] = ["fgd", "pwr", "bestfit", "pwr:200,fgd:800", "eaco-r", "fifo"];

fn replays(c: &mut Criterion) {
    let (cluster, workload) = gapbench_benches::openb_default_timed();
    let options = ReplayOptions::default();
    let mut group = c.benchmark_group("replay_default_trace");
    group.sample_size(10);
    for name in REPLAY_POLICIES {
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut policy = time_policy(name, &cluster).expect("a known policy");
                run(&cluster, &workload, policy.as_mut(), &options)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, replays);
criterion_main!(benches);
