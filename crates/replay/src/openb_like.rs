//! Times for the embedded openb-like default: durations, arrivals and QoS drawn from
//! statistics of the real default trace (`workloads/openb-like/TIME-STATS.md`).

use rand::Rng;

use gapbench_model::workload::openb_like_tasks;
use gapbench_model::Task;

use crate::attributes::task_rng;
use crate::timed_workload::{PodPhase, Qos, TimedTask, TimedWorkload};

const DURATIONS: &str = include_str!("../../../workloads/openb-like/durations.csv");
const ARRIVALS: &str = include_str!("../../../workloads/openb-like/arrivals.csv");
const QOS: &str = include_str!("../../../workloads/openb-like/qos.csv");
/// The real default trace's end (its latest `deletion_time`), seconds.
pub const OPENB_TRACE_END_S: f64 = 12_902_960.0;

/// The kind a task's statistics are kept under.
fn kind(task: &Task) -> &'static str {
    match (task.gpu_count, task.is_share()) {
        (0, _) => "cpu",
        (_, true) => "share",
        (1, false) => "one",
        _ => "multi",
    }
}

/// Rows of an embedded CSV, header skipped, split on commas.
fn rows(table: &'static str) -> impl Iterator<Item = Vec<&'static str>> {
    table
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').map(str::trim).collect())
}

/// Inverse CDF of a percentile table at `p` in [0, 100], interpolating linearly in
/// `map(value)` and mapping back.
fn inverse_cdf(table: &[(f64, f64)], p: f64, map: fn(f64) -> f64, unmap: fn(f64) -> f64) -> f64 {
    let i = table
        .partition_point(|&(q, _)| q <= p)
        .clamp(1, table.len() - 1);
    let ((p0, v0), (p1, v1)) = (table[i - 1], table[i]);
    let t = if p1 > p0 { (p - p0) / (p1 - p0) } else { 0.0 };
    unmap(map(v0) + t.clamp(0.0, 1.0) * (map(v1) - map(v0)))
}

/// The embedded openb-like workload with times: every task of
/// [`gapbench_model::workload::openb_like_tasks`] draws, from its own generator (run seed +
/// name), a percentile for its duration (log-linear between the kind's percentiles), one for
/// its arrival, and a QoS class from its kind's shares. Tasks ending past the trace end are
/// cut there and flagged censored.
pub fn openb_like_timed(seed: u64) -> TimedWorkload {
    let durations: Vec<(&str, f64, f64)> = rows(DURATIONS)
        .map(|r| (r[0], r[1].parse().unwrap(), r[2].parse().unwrap()))
        .collect();
    let arrivals: Vec<(f64, f64)> = rows(ARRIVALS)
        .map(|r| (r[0].parse().unwrap(), r[1].parse().unwrap()))
        .collect();
    let qos_shares: Vec<(&str, Qos, f64)> = rows(QOS)
        .map(|r| {
            (
                r[0],
                Qos::parse(r[1]).expect("embedded qos"),
                r[2].parse().unwrap(),
            )
        })
        .collect();
    let mut tasks: Vec<TimedTask> = openb_like_tasks()
        .into_iter()
        .map(|task| {
            let kind = kind(&task);
            let table: Vec<(f64, f64)> = durations
                .iter()
                .filter(|d| d.0 == kind)
                .map(|d| (d.1, d.2))
                .collect();
            // A per-task stream distinct from the attribute stream of the same name.
            let mut rng = task_rng(seed ^ 0x7469_6d65, &task.name);
            let duration = inverse_cdf(
                &table,
                rng.random_range(0.0..100.0),
                f64::ln_1p,
                f64::exp_m1,
            )
            .round();
            let arrival =
                inverse_cdf(&arrivals, rng.random_range(0.0..100.0), |v| v, |v| v).round();
            let shares: Vec<&(&str, Qos, f64)> =
                qos_shares.iter().filter(|q| q.0 == kind).collect();
            let total: f64 = shares.iter().map(|q| q.2).sum();
            let mut draw = rng.random_range(0.0..total);
            let mut qos = shares.last().expect("every kind has a QoS share").1;
            for share in &shares {
                if draw < share.2 {
                    qos = share.1;
                    break;
                }
                draw -= share.2;
            }
            let censored = arrival + duration >= OPENB_TRACE_END_S;
            TimedTask {
                task,
                qos,
                phase: PodPhase::Running,
                arrival_s: arrival,
                duration_s: if censored {
                    OPENB_TRACE_END_S - arrival
                } else {
                    duration
                },
                left_censored: false,
                right_censored: censored,
                profile: None,
            }
        })
        .collect();
    tasks.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
    TimedWorkload {
        tasks,
        dropped_pending: 0,
        trace_end_s: OPENB_TRACE_END_S,
        adjustments: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openb_like_times_follow_the_tables_and_the_seed() {
        let a = openb_like_timed(7);
        assert_eq!(a, openb_like_timed(7));
        assert_ne!(a, openb_like_timed(8));
        assert_eq!(a.tasks.len(), 8152);
        let mut one_gpu: Vec<f64> = a
            .tasks
            .iter()
            .filter(|t| kind(&t.task) == "one")
            .map(|t| t.duration_s)
            .collect();
        one_gpu.sort_by(f64::total_cmp);
        let median = one_gpu[one_gpu.len() / 2];
        // The real median of one-GPU tasks is 758 s; the draw matches it loosely.
        assert!((600.0..950.0).contains(&median), "median {median}");
        assert!(a
            .tasks
            .iter()
            .all(|t| t.arrival_s + t.duration_s <= OPENB_TRACE_END_S));
    }
}
