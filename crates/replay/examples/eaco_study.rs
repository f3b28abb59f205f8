//! EaCO vs its Gavel baselines on the EaCO evaluation setup (`eaco_setup`): energy,
//! run time, JTT and active nodes, normalised to FIFO, on 64 and 28 servers.
//!
//!   cargo run --release -p gapbench-replay --example eaco_study [JOBS] [JOBS_PER_HOUR] [SEED] [SIGMA]
//!
//! SIGMA is the jobs' deadline factor (deadline = arrival + SIGMA · solo duration), 1.2 by
//! default.

use gapbench_replay::eaco_setup::{eaco_cluster, eaco_jobs};
use gapbench_replay::policies::{Eaco, EacoConfig, FifoExclusive, FifoPacked, Gandiva};
use gapbench_replay::{
    run, CapacityMode, DeadlineFactors, IdlePolicy, PowerSettings, ReplayOptions, TimePolicy,
};

fn main() {
    let mut args = std::env::args().skip(1);
    let jobs: usize = args.next().map_or(400, |a| a.parse().unwrap());
    let rate: f64 = args.next().map_or(2.0, |a| a.parse().unwrap());
    let seed: u64 = args.next().map_or(42, |a| a.parse().unwrap());
    let sigma: f64 = args.next().map_or(1.2, |a| a.parse().unwrap());
    let workload = eaco_jobs(jobs, rate, seed);
    println!("{jobs} jobs, {rate} jobs/h, seed {seed}, deadline factor {sigma}");
    for idle in [IdlePolicy::SleepWhenEmpty, IdlePolicy::AlwaysOn] {
        for nodes in [64, 28] {
            let cluster = eaco_cluster(nodes);
            let options = ReplayOptions {
                seed,
                deadlines: DeadlineFactors {
                    burstable: sigma,
                    ..DeadlineFactors::default()
                },
                power: PowerSettings {
                    idle,
                    ..PowerSettings::default()
                },
                ..ReplayOptions::default()
            };
            let policies: Vec<Box<dyn TimePolicy>> = vec![
                Box::new(FifoExclusive {
                    capacity: CapacityMode::Oversubscribed,
                }),
                Box::new(FifoPacked {
                    capacity: CapacityMode::Oversubscribed,
                }),
                Box::new(Gandiva::new(CapacityMode::Oversubscribed)),
                Box::new(Eaco::new(EacoConfig::oversubscribed())),
            ];
            println!("\n{idle:?}, {nodes} nodes");
            println!("| policy | energy kWh | energy / FIFO | mean run h | run / FIFO | mean JTT h | JTT / FIFO | mean active nodes | active / FIFO | undos | deadline misses |");
            println!("|---|---|---|---|---|---|---|---|---|---|---|");
            let mut base = None;
            for mut policy in policies {
                let result = run(&cluster, &workload, policy.as_mut(), &options);
                let s = result.summary();
                let runs: Vec<f64> = result
                    .tasks
                    .iter()
                    .filter_map(|t| Some(t.end_s? - t.start_s?))
                    .collect();
                let mean_run_h = runs.iter().sum::<f64>() / runs.len() as f64 / 3600.0;
                let jtt_h = s.jct_s.mean / 3600.0;
                let row = (s.total_energy_kwh, mean_run_h, jtt_h, s.mean_active_nodes);
                let b = *base.get_or_insert(row);
                println!(
                    "| {} | {:.0} | {:.3} | {:.2} | {:.3} | {:.2} | {:.3} | {:.1} | {:.3} | {} | {} |",
                    s.policy, row.0, row.0 / b.0, row.1, row.1 / b.1, row.2, row.2 / b.2,
                    row.3, row.3 / b.3, s.undo_count, s.deadline_misses
                );
            }
        }
    }
}
