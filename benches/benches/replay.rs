//! One time-mode replay of the full real openb default trace (with its real times) per
//! policy, on the openb GPU cluster, in the one engine: the sweep's main policies through
//! the online adapter, EaCO-R/O, Gavel's FIFO, FIFO_packed and Gandiva, the budgeted
//! policies' baselines, and PowerFlow-style (GreenFlow-style) at full-clock FIFO's job
//! energy (carbon, CAISO-like series).
//! Target: ≤ 0.5 s per replay on one core, budgeted ones included.

use criterion::{criterion_group, criterion_main, Criterion};
use gapbench_model::SyntheticGrid;
use gapbench_replay::policies::time_policy;
use gapbench_replay::{run, Budget, ReplayOptions};

/// The policies timed without a budget.
const REPLAY_POLICIES: [&str; 11] = [
    "fgd",
    "pwr",
    "bestfit",
    "pwr:200,fgd:800",
    "eaco-r",
    "eaco-o",
    "fifo",
    "fifo-packed",
    "gandiva",
    "fifo-full-clock",
    "zeus",
];

fn replays(c: &mut Criterion) {
    let (cluster, workload) = gapbench_benches::openb_default_timed();
    let hours = 24 * 160;
    let options = ReplayOptions {
        carbon: Some(SyntheticGrid::CAISO_LIKE.generate("caiso-like", hours, 42)),
        ..ReplayOptions::default()
    };
    let once = |name: &str, options: &ReplayOptions| {
        let mut policy = time_policy(name, &cluster).expect("a known policy");
        run(&cluster, &workload, policy.as_mut(), options)
    };
    let fifo = once("fifo-full-clock", &options).summary();
    let budgeted = [
        ("powerflow", Budget::EnergyKwh(fifo.job_energy_kwh)),
        (
            "greenflow",
            Budget::CarbonKg(fifo.job_carbon_kg.expect("a series")),
        ),
    ];
    let mut group = c.benchmark_group("replay_default_trace");
    group.sample_size(10);
    for name in REPLAY_POLICIES {
        group.bench_function(name, |b| b.iter(|| once(name, &options)));
    }
    for (name, budget) in budgeted {
        let options = ReplayOptions {
            budget,
            ..options.clone()
        };
        assert_eq!(once(name, &options).stopped_early, None, "{name}");
        group.bench_function(format!("{name}@1.0"), |b| b.iter(|| once(name, &options)));
    }
    group.finish();
}

criterion_group!(benches, replays);
criterion_main!(benches);
