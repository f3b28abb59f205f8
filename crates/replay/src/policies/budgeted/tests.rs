//! Skipping repeated rounds, remembering refused requests and keeping the waiting tasks in
//! order between rounds change nothing: the budgeted policies replay the real openb default
//! trace (and an overloaded one) with and without all three, and every output file is
//! identical.

use gapbench_model::testing::openb_traces_dir;
use gapbench_model::workload::load_nodes_csv;
use gapbench_model::{Cluster, CpuPowerProfile, InputRules, SyntheticGrid};

use super::BudgetedRounds;
use crate::budget::Forecast;
use crate::policies::{ClockFifo, ClockRule, GreenFlowStyle, PowerFlowStyle};
use crate::policy::{RoundKind, TimePolicy};
use crate::{run, Budget, IdlePolicy, ReplayOptions, ReplayResult, TimedWorkload};

fn load() -> (Cluster, TimedWorkload) {
    let dir = openb_traces_dir();
    let cluster = load_nodes_csv(
        &dir.join("openb_node_list_gpu_node.csv"),
        CpuPowerProfile::Reference,
    )
    .expect("openb nodes load");
    let workload =
        TimedWorkload::load_csv(&dir.join("openb_pod_list_default.csv"), InputRules::Strict)
            .expect("openb default trace loads");
    (cluster, workload)
}

fn files(result: &ReplayResult) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    result.write_timeline_csv(&mut a).unwrap();
    result.write_tasks_csv(&mut b).unwrap();
    result.write_summary_json(&mut c).unwrap();
    (a, b, c)
}

/// Replays with `make(skip)`'s policy both ways; returns the rounds skipped.
fn compare<P: TimePolicy>(
    label: &str,
    cluster: &Cluster,
    workload: &TimedWorkload,
    options: &ReplayOptions,
    make: impl Fn() -> P,
    rounds: impl Fn(&mut P) -> &mut BudgetedRounds,
) -> u64 {
    let mut skipping = make();
    let mut planning = make();
    rounds(&mut planning).without_shortcuts();
    let with = run(cluster, workload, &mut skipping, options);
    let without = run(cluster, workload, &mut planning, options);
    assert_eq!(rounds(&mut planning).skipped_rounds, 0, "{label}");
    assert!(with.violations.is_empty(), "{label}: {:?}", with.violations);
    assert_eq!(with.stopped_early, without.stopped_early, "{label}");
    assert!(files(&with) == files(&without), "{label}: outputs differ");
    rounds(&mut skipping).skipped_rounds
}

#[test]
fn skipping_repeated_rounds_changes_no_output_on_the_real_trace() {
    let (cluster, workload) = load();
    let base = ReplayOptions {
        carbon: Some(SyntheticGrid::CAISO_LIKE.generate("caiso-like", 24 * 160, 42)),
        ..ReplayOptions::default()
    };
    let fifo = run(
        &cluster,
        &workload,
        &mut ClockFifo::new(ClockRule::Full),
        &base,
    )
    .summary();
    for idle in [IdlePolicy::AlwaysOn, IdlePolicy::SleepWhenEmpty] {
        let mut options = base.clone();
        options.power.idle = idle;
        // At full-clock FIFO's job energy (the benchmark's budget) and 5 % above it, a
        // shorter round period.
        for (scale, round_s) in [(1.0, 300.0), (1.05, 60.0)] {
            let options = ReplayOptions {
                budget: Budget::EnergyKwh(scale * fifo.job_energy_kwh),
                ..options.clone()
            };
            let skipped = compare(
                &format!("powerflow {idle:?} ×{scale} Δ{round_s}"),
                &cluster,
                &workload,
                &options,
                || PowerFlowStyle::new(round_s, None),
                |p| &mut p.rounds,
            );
            assert!(skipped > 10_000, "powerflow skipped only {skipped} rounds");
        }
        let options = ReplayOptions {
            budget: Budget::CarbonKg(fifo.job_carbon_kg.expect("a carbon series")),
            ..options.clone()
        };
        for forecast in [Forecast::Oracle, Forecast::Myopic] {
            let skipped = compare(
                &format!("greenflow {idle:?} {forecast:?}"),
                &cluster,
                &workload,
                &options,
                || GreenFlowStyle::new(forecast, 1.0),
                |p| &mut p.rounds,
            );
            assert!(skipped > 10_000, "greenflow skipped only {skipped} rounds");
        }
    }
}

/// An overloaded queue of training jobs: 400 of 1–8 GPUs on four 8-GPU nodes, arriving ten
/// seconds apart, hours long.
fn overloaded_four_nodes() -> (Cluster, TimedWorkload) {
    let mut csv = String::from("sn,cpu_milli,memory_mib,gpu,model\n");
    for n in 0..4 {
        csv.push_str(&format!("node-{n},96000,786432,8,V100M32\n"));
    }
    let cluster = gapbench_model::workload::parse_nodes_csv(
        std::path::Path::new("four-nodes.csv"),
        csv.as_bytes(),
        CpuPowerProfile::Reference,
    )
    .expect("a valid node list");
    let mut tasks = String::from(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n",
    );
    for i in 0..400u64 {
        let gpus = [1, 2, 4, 8, 1, 2][(i % 6) as usize];
        let start = 10 * i;
        let end = start + 3_600 + (i * 7_919) % 20_000;
        tasks.push_str(&format!(
            "job-{i},{},{},{gpus},1000,,LS,Succeeded,{start},{end},{start}\n",
            4000 * gpus,
            8192 * gpus
        ));
    }
    let workload = TimedWorkload::parse_csv(
        std::path::Path::new("overloaded.csv"),
        tasks.as_bytes(),
        InputRules::Strict,
    )
    .expect("a valid task list");
    (cluster, workload)
}

/// On the overloaded queue most rounds find no place for most jobs and upgrades are tried
/// and refused, where remembering refusals saves the searches, and event rounds walk only
/// the head of the waiting index.
#[test]
fn remembering_refusals_changes_no_output_on_an_overloaded_queue() {
    let (cluster, workload) = overloaded_four_nodes();
    let options = ReplayOptions {
        budget: Budget::EnergyKwh(1e9),
        check_every_event: true,
        ..ReplayOptions::default()
    };
    compare(
        "powerflow overloaded",
        &cluster,
        &workload,
        &options,
        || PowerFlowStyle::new(300.0, None),
        |p| &mut p.rounds,
    );
}

/// PowerFlow-style with every round's kind and actions recorded.
struct Recording {
    inner: PowerFlowStyle,
    grid_round_times: Vec<f64>,
    event_rounds: usize,
    /// Undos and reconfigurations asked for in event rounds.
    moved_in_event_rounds: usize,
    started_in_event_rounds: usize,
}

impl TimePolicy for Recording {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn round_period_s(&self) -> Option<f64> {
        self.inner.round_period_s()
    }

    fn on_round(
        &mut self,
        view: &crate::ReplayView<'_>,
        kind: RoundKind,
        rng: &mut gapbench_model::rng::SimRng,
    ) -> Vec<crate::Action> {
        let actions = self.inner.on_round(view, kind, rng);
        match kind {
            RoundKind::Grid => self.grid_round_times.push(view.now_s),
            RoundKind::Events => {
                self.event_rounds += 1;
                for action in &actions {
                    match action {
                        crate::Action::Place { .. } => self.started_in_event_rounds += 1,
                        _ => self.moved_in_event_rounds += 1,
                    }
                }
            }
        }
        actions
    }
}

/// Grid rounds re-plan every Δ from the first arrival whatever else happens (an arrival
/// every ten seconds here), and the rounds right after arrivals and completions start
/// waiting jobs but never move a running one.
#[test]
fn grid_rounds_keep_their_period_and_event_rounds_move_nothing_that_runs() {
    let (cluster, workload) = overloaded_four_nodes();
    let options = ReplayOptions {
        budget: Budget::EnergyKwh(1e9),
        check_every_event: true,
        ..ReplayOptions::default()
    };
    let mut policy = Recording {
        inner: PowerFlowStyle::new(300.0, None),
        grid_round_times: Vec::new(),
        event_rounds: 0,
        moved_in_event_rounds: 0,
        started_in_event_rounds: 0,
    };
    let result = run(&cluster, &workload, &mut policy, &options);
    assert!(result.violations.is_empty(), "{:?}", result.violations);
    assert_eq!(policy.moved_in_event_rounds, 0);
    assert!(
        policy.event_rounds > 400,
        "{} event rounds",
        policy.event_rounds
    );
    assert!(policy.started_in_event_rounds > 0);
    let first = workload.tasks[0].arrival_s;
    let times = &policy.grid_round_times;
    assert_eq!(
        times[0], first,
        "the first grid round is at the first arrival"
    );
    for (k, &t) in times.iter().enumerate() {
        assert_eq!(t, first + k as f64 * 300.0, "grid round {k}");
    }
    let last_end = result
        .tasks
        .iter()
        .filter_map(|t| t.end_s)
        .fold(first, f64::max);
    assert!(
        *times.last().unwrap() + 300.0 >= last_end,
        "grid rounds until the last task ends"
    );
}
