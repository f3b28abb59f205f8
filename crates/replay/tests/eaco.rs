//! EaCO on its own evaluation setup (`eaco_setup`): it packs jobs onto fewer servers and
//! so saves energy when empty servers sleep, without breaking deadlines or placements.

use gapbench_replay::eaco_setup::{eaco_cluster, eaco_jobs};
use gapbench_replay::policies::{Eaco, EacoConfig, FifoExclusive};
use gapbench_replay::{run, CapacityMode, IdlePolicy, PowerSettings, ReplayOptions};

#[test]
fn eaco_saves_energy_over_fifo_on_the_eaco_setup() {
    let cluster = eaco_cluster(32);
    let workload = eaco_jobs(150, 2.0, 7);
    let options = ReplayOptions {
        power: PowerSettings {
            idle: IdlePolicy::SleepWhenEmpty,
            ..PowerSettings::default()
        },
        check_every_event: true,
        ..ReplayOptions::default()
    };
    let fifo = run(
        &cluster,
        &workload,
        &mut FifoExclusive {
            capacity: CapacityMode::Oversubscribed,
        },
        &options,
    );
    let eaco = run(
        &cluster,
        &workload,
        &mut Eaco::new(EacoConfig::oversubscribed()),
        &options,
    );
    assert!(fifo.violations.is_empty() && eaco.violations.is_empty());
    let (f, e) = (fifo.summary(), eaco.summary());
    assert_eq!(e.completed, workload.tasks.len());
    assert!(e.total_energy_kwh < f.total_energy_kwh, "{e:?} vs {f:?}");
    assert!(e.mean_active_nodes < f.mean_active_nodes);
    // Co-location slows jobs, but EaCO keeps every tenant within its deadline (σ = 1.2)
    // unless waiting already made it late.
    assert!(e.slowdown.max <= 1.2 + 1e-9, "{:?}", e.slowdown);
    assert!(e.slowdown.mean > 1.0);
}
