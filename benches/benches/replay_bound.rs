//! The energy bound of one replay (`gapbench_ilp::replay_bound`, through the harness's
//! conversion of a replay): PWR on the full real openb default trace at its real times,
//! sleep-when-empty, utilisation GPU power, with `gapbench replay --bound`'s defaults
//! (48 windows, 60 s). Target: ≤ 60 s on 2 cores (it takes one).

use criterion::{criterion_group, criterion_main, Criterion};
use gapbench::replay_bound::{
    bound_options, replay_bound, BoundRequest, DEFAULT_BOUND_TIME_LIMIT_S, DEFAULT_BOUND_WINDOWS,
};
use gapbench_replay::policies::time_policy;
use gapbench_replay::{run, IdlePolicy, PowerSettings, ReplayOptions};

fn one_replay_bound(c: &mut Criterion) {
    let (cluster, workload) = gapbench_benches::openb_default_timed();
    let options = ReplayOptions {
        power: PowerSettings {
            idle: IdlePolicy::SleepWhenEmpty,
            ..PowerSettings::default()
        },
        ..ReplayOptions::default()
    };
    let mut policy = time_policy("pwr", &cluster).expect("a known policy");
    let result = run(&cluster, &workload, policy.as_mut(), &options);
    let request = BoundRequest {
        cluster: &cluster,
        workload: &workload,
        result: &result,
        policy: "pwr",
        power: &options.power,
        colocation: &options.colocation,
        options: bound_options(DEFAULT_BOUND_TIME_LIMIT_S, DEFAULT_BOUND_WINDOWS),
    };
    let mut group = c.benchmark_group("replay_bound_default_trace");
    group.sample_size(10);
    group.bench_function("pwr_sleep_when_empty", |b| {
        b.iter(|| replay_bound(&request, None).expect("a bound"))
    });
    group.finish();
}

criterion_group!(benches, one_replay_bound);
criterion_main!(benches);
