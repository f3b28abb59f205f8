//! A replay's energy bound under a round cap (`[replay.bound] max_pricing_rounds`): the cap,
//! not the clock, stops its windows' column generation, so the bound is the same on every
//! run, alone or beside other work, and still at most the replay's energy.

use gapbench::replay::{ReplayInputs, Selection, TimedSource};
use gapbench::replay_bound::{bound_options, replay_bound, BoundRecord, BoundRequest};
use gapbench_model::testing::openb_traces_dir;
use gapbench_replay::policies::time_policy;
use gapbench_replay::{IdlePolicy, PowerSettings, ReplayOptions};

/// The record without its run time (the one field the clock decides).
fn without_time(mut record: BoundRecord) -> BoundRecord {
    record.seconds = 0.0;
    record
}

/// The whole default trace at its real times on the whole cluster, PWR, sleep-when-empty,
/// seed 42, 8 windows, one exact pricing round per window: the cap binds (`round_limit`;
/// always-on, PWR's 8 windows converge within one round); the
/// bound is the same computed alone and computed twice at once on two threads (each then
/// slower on the clock), and at most the replay's energy.
#[test]
fn a_round_capped_bound_repeats_and_holds() {
    let traces = openb_traces_dir();
    let inputs = ReplayInputs::load(
        TimedSource::Openb {
            nodes: Some(traces.join("openb_node_list_gpu_node.csv")),
            gpu_models: None,
            tasks: Some(traces.join("openb_pod_list_default.csv")),
        },
        1.0,
        Selection::default(),
        gapbench_model::InputRules::Reference,
        gapbench_model::CpuPowerProfile::Reference,
    )
    .unwrap();
    let workload = inputs.workload(42).unwrap();
    let options = ReplayOptions {
        power: PowerSettings {
            idle: IdlePolicy::SleepWhenEmpty,
            ..PowerSettings::default()
        },
        ..ReplayOptions::default()
    };
    let mut policy = time_policy("pwr", &inputs.cluster).unwrap();
    let result = gapbench_replay::run(&inputs.cluster, &workload, policy.as_mut(), &options);
    let request = BoundRequest {
        cluster: &inputs.cluster,
        workload: &workload,
        result: &result,
        policy: "pwr",
        power: &options.power,
        colocation: &options.colocation,
        // A safety net the cap must not reach: 600 s, 100 s per window.
        options: bound_options(600.0, 8, Some(1), None),
    };
    let alone = without_time(replay_bound(&request, None).unwrap());
    assert_eq!(alone.status, "round_limit", "{alone:?}");
    assert_eq!(alone.windows.len(), 8);
    let energy_kwh = result.ledger.cluster.total_kwh();
    assert!(
        alone.energy_kwh > 0.0 && alone.energy_kwh <= energy_kwh * (1.0 + 1e-9),
        "bound {} kWh above the replay's {energy_kwh} kWh",
        alone.energy_kwh
    );
    let (first, second) = std::thread::scope(|scope| {
        let first = scope.spawn(|| replay_bound(&request, None).unwrap());
        let second = scope.spawn(|| replay_bound(&request, None).unwrap());
        (first.join().unwrap(), second.join().unwrap())
    });
    assert_eq!(without_time(first), alone);
    assert_eq!(without_time(second), alone);
}
