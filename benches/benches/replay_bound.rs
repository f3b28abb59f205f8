//! The energy bound of one replay (`gapbench_bounds::replay_bound`): PWR on the full real
//! openb default trace at its real times, sleep-when-empty, utilisation GPU power, with
//! `gapbench replay --bound`'s defaults (48 windows, 60 s; its input built as the harness's
//! `replay_bound::bound_tasks` builds it: every task from its start to its end).
//! Target: ≤ 60 s on 2 cores for each, the LP bound (3 pricing rounds per window) and the
//! integer one (`gapbench replay --bound`'s defaults: 60 rounds, 20 tree nodes per window).

use criterion::{criterion_group, criterion_main, Criterion};
use gapbench_bounds::replay_bound::{
    replay_energy_bound, BoundOptions, BoundPower, BoundTask, GpuPowerBound, IdleBound,
    ReplayBoundInput,
};
use gapbench_model::TypicalPods;
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
    let tasks: Vec<BoundTask> = workload
        .tasks
        .iter()
        .zip(&result.tasks)
        .filter_map(|(timed, record)| {
            Some(BoundTask {
                task: timed.task.clone(),
                start_s: record.start_s?,
                end_s: record.end_s.unwrap_or(result.end_s),
                util_permille: record.attributes.util_permille,
                gpu_memory_permille: record.attributes.gpu_memory_permille,
            })
        })
        .collect();
    let reference: Vec<(f64, f64)> = result
        .timeline
        .iter()
        .map(|row| (row.time_s, row.power_watts))
        .collect();
    let typical = TypicalPods::default();
    let eta = &options.colocation.power_eta;
    let input = ReplayBoundInput {
        cluster: &cluster,
        typical: &typical,
        tasks: &tasks,
        span_s: (result.start_s, result.end_s),
        power: BoundPower {
            gpu: GpuPowerBound::Utilisation {
                eta_min: eta.iter().copied().fold(f64::INFINITY, f64::min),
                eta_alone: eta[0],
            },
            idle: IdleBound::SleepWhenEmpty {
                sleep_fraction: options.power.sleep_fraction,
            },
            reclocks: false,
            oversubscribed: false,
            chooses_gpu_count: false,
        },
        reference: &reference,
    };
    let lp_options = BoundOptions {
        time_limit_s: 60.0,
        max_windows: 48,
        initial_windows: 8,
        window_time_limit_s: 10.0,
        // The paper bench's cap: the timed work is the same on every run.
        max_pricing_rounds: Some(3),
        max_branch_nodes: None,
    };
    // `gapbench replay --bound`'s defaults (the harness's `DEFAULT_BOUND_PRICING_ROUNDS`
    // and `DEFAULT_BOUND_BRANCH_NODES`): the LP solved in every window, then 20
    // branch-and-price tree nodes per window towards integer wake-ups.
    let integer_options = BoundOptions {
        max_pricing_rounds: Some(60),
        max_branch_nodes: Some(20),
        ..lp_options
    };
    let mut group = c.benchmark_group("replay_bound_default_trace");
    group.sample_size(10);
    group.bench_function("pwr_sleep_when_empty", |b| {
        b.iter(|| replay_energy_bound(&input, &lp_options).expect("a bound"))
    });
    group.bench_function("pwr_sleep_when_empty_integer", |b| {
        b.iter(|| replay_energy_bound(&input, &integer_options).expect("a bound"))
    });
    group.finish();
}

criterion_group!(benches, one_replay_bound);
criterion_main!(benches);
