//! One time-mode replay of the full real openb default trace (with its real times) per
//! policy, on the openb GPU cluster. Target: ≤ 1 s per replay on one core.

use criterion::{criterion_group, criterion_main, Criterion};

use gapbench_model::testing::openb_traces_dir;
use gapbench_model::workload::load_nodes_csv;
use gapbench_model::{CpuPowerProfile, InputRules};
use gapbench_online::PolicySpec;
use gapbench_replay::policies::{Eaco, EacoConfig, FifoExclusive, OnlinePolicy};
use gapbench_replay::{run, CapacityMode, ReplayOptions, TimePolicy, TimedWorkload};

fn replays(c: &mut Criterion) {
    let dir = openb_traces_dir();
    let cluster = load_nodes_csv(
        &dir.join("openb_node_list_gpu_node.csv"),
        CpuPowerProfile::Reference,
    )
    .expect("openb nodes load");
    let workload =
        TimedWorkload::load_csv(&dir.join("openb_pod_list_default.csv"), InputRules::Strict)
            .expect("openb default trace loads");
    let options = ReplayOptions::default();
    let mut group = c.benchmark_group("replay_default_trace");
    group.sample_size(10);
    type MakePolicy = Box<dyn Fn() -> Box<dyn TimePolicy>>;
    let mut policies: Vec<(&str, MakePolicy)> = Vec::new();
    for spec in ["fgd", "pwr", "bestfit", "pwr:200,fgd:800"] {
        let parsed: PolicySpec = spec.parse().expect("valid spec");
        let cluster = cluster.clone();
        policies.push((
            spec,
            Box::new(move || Box::new(OnlinePolicy::new(&parsed, &cluster))),
        ));
    }
    policies.push((
        "eaco-r",
        Box::new(|| Box::new(Eaco::new(EacoConfig::reserved()))),
    ));
    policies.push((
        "fifo",
        Box::new(|| {
            Box::new(FifoExclusive {
                capacity: CapacityMode::Reserved,
            })
        }),
    ));
    for (name, make) in &policies {
        group.bench_function(*name, |b| {
            b.iter(|| {
                let mut policy = make();
                run(&cluster, &workload, policy.as_mut(), &options)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, replays);
criterion_main!(benches);
