//! EaCO's exact counterpart on real EaCO-setup replays: the proven bound is at most the
//! energy of every policy of the study, under both idle policies, on several seeds.

use gapbench::bench::kinds::eaco_bounds::{bound_input, solve_bound};
use gapbench_replay::eaco_setup::{eaco_cluster, eaco_jobs};
use gapbench_replay::policies::time_policy;
use gapbench_replay::{IdlePolicy, PowerSettings, ReplayOptions};

const POLICIES: [&str; 5] = ["fifo-o", "fifo-packed-o", "gandiva-o", "eaco-o", "eaco-r"];

#[test]
fn the_bound_is_below_every_policys_energy() {
    for (servers, jobs, seed) in [(28, 80, 42), (64, 80, 43), (12, 80, 44)] {
        let cluster = eaco_cluster(servers);
        let workload = eaco_jobs(jobs, 2.0, seed);
        let start = workload.tasks[0].arrival_s;
        for idle in [IdlePolicy::SleepWhenEmpty, IdlePolicy::AlwaysOn] {
            let options = ReplayOptions {
                seed,
                power: PowerSettings {
                    idle,
                    ..PowerSettings::default()
                },
                ..ReplayOptions::default()
            };
            let input = bound_input(&cluster, &workload, &options, |d| d).unwrap();
            let bound = solve_bound(&input).unwrap();
            eprintln!("{servers} servers seed {seed} {idle:?}: {bound:?}");
            for name in POLICIES {
                let mut policy = time_policy(name, &cluster).unwrap();
                let result = gapbench_replay::run(&cluster, &workload, policy.as_mut(), &options);
                let s = result.summary();
                assert_eq!(s.unfinished, 0);
                let energy = s.total_energy_kwh;
                let holds_for_it = if s.deadline_misses == 0 {
                    bound.lower_kwh
                } else {
                    // The bound for this replay's own windows: every job ends by its makespan.
                    let end = start + s.makespan_s;
                    let own = bound_input(&cluster, &workload, &options, |d| d.max(end)).unwrap();
                    solve_bound(&own).unwrap().lower_kwh
                };
                eprintln!(
                    "  {name}: {energy:.1} kWh, {} misses, bound {holds_for_it:.1} gap {:.1} %",
                    s.deadline_misses,
                    100.0 * (energy / holds_for_it - 1.0)
                );
                assert!(
                    holds_for_it <= energy * (1.0 + 1e-9),
                    "{name} {servers} servers seed {seed} {idle:?}: bound {holds_for_it} > energy {energy}"
                );
            }
        }
    }
}
