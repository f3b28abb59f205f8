//! What `gapbench replay` prints about its replays: a line per seed, then what became of
//! the tasks that did not complete.

use gapbench::replay::ReplaySummary;

/// One line per seed: tasks, cluster and job energy, JCT, waits, makespan, what was left.
pub fn print_table(summary: &ReplaySummary) {
    let carbon = summary
        .runs
        .first()
        .is_some_and(|r| r.summary.carbon_kg.is_some());
    println!(
        "\n{:>6} {:>7} {:>12} {:>10} {:>11} {:>11} {:>11} {:>11} {:>6} {:>7} {:>10} {:>7}{}",
        "seed",
        "tasks",
        "energy kWh",
        "job kWh",
        "mean JCT s",
        "p95 JCT s",
        "mean wait",
        "makespan h",
        "undos",
        "missed",
        "unfinished",
        "failed",
        if carbon {
            "  carbon kg (cluster / job)"
        } else {
            ""
        }
    );
    // An empty sample has no mean: "none", never 0.
    let stat = |d: &gapbench_replay::Distribution, value: f64, decimals: usize| {
        if d.count == 0 {
            "none".to_string()
        } else {
            format!("{value:.decimals$}")
        }
    };
    for run in &summary.runs {
        let s = &run.summary;
        let carbon_kg = match (s.carbon_kg, s.job_carbon_kg) {
            (Some(cluster), Some(job)) => format!(" {cluster:>10.1} / {job:.1}"),
            _ => String::new(),
        };
        println!(
            "{:>6} {:>7} {:>12.1} {:>10.1} {:>11} {:>11} {:>11} {:>11.1} {:>6} {:>7} {:>10} {:>7}{carbon_kg}",
            run.seed,
            s.tasks,
            s.total_energy_kwh,
            s.job_energy_kwh,
            stat(&s.jct_s, s.jct_s.mean, 0),
            stat(&s.jct_s, s.jct_s.p95, 0),
            stat(&s.wait_s, s.wait_s.mean, 1),
            s.makespan_s / 3600.0,
            s.undo_count,
            s.deadline_misses,
            s.unfinished,
            s.failed,
        );
    }
}

/// What became of the tasks that did not complete, and what the loading rules dropped or
/// flagged, per seed when seeds differ (nothing is left unsaid).
pub fn print_fates(summary: &ReplaySummary) {
    for run in summary.runs.iter().filter(|r| r.summary.jct_s.count == 0) {
        println!(
            "seed {}: mean JCT none — {} ({} of {} tasks unfinished, {} failed)",
            run.seed,
            run.summary.jct_s.empty_because,
            run.summary.unfinished,
            run.summary.tasks,
            run.summary.failed
        );
    }
    let Some(first) = summary.runs.first() else {
        return;
    };
    let s = &first.summary;
    if s.dropped_pending + s.left_censored + s.right_censored > 0 {
        println!(
            "workload: {} Pending pod(s) dropped (never ran); {} task(s) already there at the trace start, {} still running at its end (censored)",
            s.dropped_pending, s.left_censored, s.right_censored
        );
    }
    for run in &summary.runs {
        let s = &run.summary;
        let seed = if summary.runs.len() > 1 {
            format!("seed {}: ", run.seed)
        } else {
            String::new()
        };
        for (label, count) in &s.failures {
            let reason = gapbench_model::FailureReason::ALL
                .into_iter()
                .find(|r| r.label() == *label)
                .map_or("", |r| r.describe());
            println!("{seed}{count:>8} failed at arrival  {label:<26} {reason}");
        }
        if s.still_waiting > 0 {
            println!(
                "{seed}{} task(s) still waiting when the replay stopped ({} queue); the longest waited {:.1} h",
                s.still_waiting,
                s.queue,
                s.longest_wait_s.unwrap_or(0.0) / 3600.0
            );
        }
    }
}
