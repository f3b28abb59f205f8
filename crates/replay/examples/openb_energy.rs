//! Energy and JCT of every sweep policy, EaCO and the Gavel baselines on the real openb
//! default trace with its real times, always-on and sleep-when-empty.
//!
//!   cargo run --release -p gapbench-replay --example openb_energy [ARRIVAL_SCALE]

use std::time::Instant;

use gapbench_model::testing::openb_traces_dir;
use gapbench_model::workload::load_nodes_csv;
use gapbench_model::{CpuPowerProfile, InputRules};
use gapbench_replay::policies::{
    Eaco, EacoConfig, FifoExclusive, FifoPacked, Gandiva, OnlinePolicy,
};
use gapbench_replay::{
    run, CapacityMode, IdlePolicy, PowerSettings, ReplayOptions, TimePolicy, TimedWorkload,
};

fn main() {
    let scale: f64 = std::env::args()
        .nth(1)
        .map_or(1.0, |s| s.parse().expect("a number"));
    let dir = openb_traces_dir();
    let cluster = load_nodes_csv(
        &dir.join("openb_node_list_gpu_node.csv"),
        CpuPowerProfile::Reference,
    )
    .expect("nodes");
    let workload =
        TimedWorkload::load_csv(&dir.join("openb_pod_list_default.csv"), InputRules::Strict)
            .expect("tasks")
            .with_arrival_scale(scale)
            .expect("scale");
    println!(
        "{} tasks ({} Pending dropped, {} censored), arrival scale {scale}",
        workload.tasks.len(),
        workload.dropped_pending,
        workload.tasks.iter().filter(|t| t.right_censored).count()
    );
    println!("| idle | policy | energy kWh | GPU busy | GPU idle | CPU | sleep | mean active nodes | mean JCT s | p99 JCT s | mean wait s | p99 wait s | mean slowdown | undos | deadline misses | unfinished | s |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for idle in [IdlePolicy::AlwaysOn, IdlePolicy::SleepWhenEmpty] {
        let options = ReplayOptions {
            power: PowerSettings {
                idle,
                ..PowerSettings::default()
            },
            ..ReplayOptions::default()
        };
        let mut policies: Vec<Box<dyn TimePolicy>> = [
            "fgd",
            "pwr",
            "bestfit",
            "packing",
            "pwr:200,fgd:800",
            "random",
        ]
        .iter()
        .map(|s| Box::new(OnlinePolicy::new(&s.parse().unwrap(), &cluster)) as Box<dyn TimePolicy>)
        .collect();
        policies.push(Box::new(Eaco::new(EacoConfig::reserved())));
        policies.push(Box::new(Eaco::new(EacoConfig::oversubscribed())));
        policies.push(Box::new(FifoExclusive {
            capacity: CapacityMode::Reserved,
        }));
        policies.push(Box::new(FifoPacked {
            capacity: CapacityMode::Reserved,
        }));
        policies.push(Box::new(Gandiva::new(CapacityMode::Reserved)));
        for mut policy in policies {
            let t0 = Instant::now();
            let result = run(&cluster, &workload, policy.as_mut(), &options);
            let secs = t0.elapsed().as_secs_f64();
            let s = result.summary();
            println!(
                "| {idle:?} | {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.1} | {:.0} | {:.0} | {:.0} | {:.0} | {:.4} | {} | {} | {} | {secs:.2} |",
                s.policy, s.total_energy_kwh, s.gpu_busy_kwh, s.gpu_idle_kwh, s.cpu_kwh, s.sleep_kwh,
                s.mean_active_nodes, s.jct_s.mean, s.jct_s.p99, s.wait_s.mean, s.wait_s.p99,
                s.slowdown.mean, s.undo_count, s.deadline_misses, s.unfinished
            );
        }
    }
}
