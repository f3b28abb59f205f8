//! What the machine can hold: checks made before a flag's value turns into a large
//! allocation, so a value that would need more memory than there is gets an error naming
//! the limit and why, instead of an out-of-memory abort (exit 134) minutes later.
//!
//! Each check multiplies a count the flag decides (task arrivals, timeline rows, rounds,
//! slots, servers) by the bytes one such item costs, measured with `/usr/bin/time -v` on
//! the default trace (peak RSS over two sizes, divided by the items added) and rounded up
//! about twofold, and compares it with the memory budget: half of what the system reports
//! available, leaving the rest to the system and to other programs.

use anyhow::{bail, Result};

/// An arrival sweep's event in memory: the prepared task, its record and its `curve.csv`
/// row (measured 478 bytes, tune 1.3 → 52 on the embedded default).
pub const SWEEP_EVENT_BYTES: f64 = 512.0;
/// A replayed task or job of one seed, its records and output rows (measured about 400
/// bytes per openb task and 860 per EaCO job; `replay` holds every seed's until the end).
pub const REPLAY_TASK_BYTES: f64 = 1024.0;
/// A timeline row of `--tick` sampling (measured 146 bytes).
pub const TICK_ROW_BYTES: f64 = 160.0;
/// A round of a budgeted replay (measured 106 bytes).
pub const ROUND_BYTES: f64 = 128.0;
/// A slot of the frontier problem: the slot prices, subgradient, budget rates and a job's
/// schedule segments over the slots.
pub const FRONTIER_SLOT_BYTES: f64 = 256.0;
/// A budget of the frontier's sweep and its row.
pub const FRONTIER_POINT_BYTES: f64 = 128.0;
/// A server of the EaCO setup: its node, state and power model (measured 575 bytes).
pub const EACO_SERVER_BYTES: f64 = 1024.0;

/// Refuses an EaCO setup of `servers` servers and `jobs` jobs per seed, `seeds` seeds held
/// at once, beyond the memory budget; `flags` names the servers' and jobs' flags.
pub fn check_eaco_setup(servers: usize, jobs: usize, seeds: usize, flags: [&str; 2]) -> Result<()> {
    let [servers_flag, jobs_flag] = flags;
    ensure_fits(
        &format!("{servers_flag} {servers} builds that many 8-GPU servers"),
        servers as f64,
        EACO_SERVER_BYTES,
        "servers",
    )?;
    ensure_fits(
        &format!("{jobs_flag} {jobs} draws that many jobs for each of {seeds} seed(s)"),
        jobs as f64 * seeds as f64,
        REPLAY_TASK_BYTES,
        "jobs",
    )
}

/// Refuses a `gapbench replay` whose results would not fit: it holds every seed's until
/// the end, each with its tasks (those of `workload`, the first seed's), `--tick`'s
/// timeline rows over the replay's span and, for a budgeted policy, its `--round`s.
pub fn check_replay(
    workload: &gapbench_replay::TimedWorkload,
    seed_count: usize,
    tick_s: Option<f64>,
    round_s: Option<f64>,
) -> Result<()> {
    if seed_count == 0 {
        return Ok(());
    }
    let first = workload.tasks.first().map_or(0.0, |t| t.arrival_s);
    let end = workload
        .tasks
        .iter()
        .map(|t| t.arrival_s + t.duration_s)
        .fold(first, f64::max);
    let (span_s, tasks, seeds) = (end - first, workload.tasks.len() as f64, seed_count as f64);
    ensure_fits(
        &format!("{seeds} seed(s) of {tasks} tasks, every seed's results held until the end"),
        seeds * tasks,
        REPLAY_TASK_BYTES,
        "replayed tasks",
    )?;
    if let Some(tick) = tick_s {
        let rows = span_s / tick;
        ensure_fits(
            &format!(
                "--tick {tick} samples the timeline {} times over the replay's {span_s:.0} s, per seed",
                human_count(rows)
            ),
            rows * seeds,
            TICK_ROW_BYTES,
            "timeline rows",
        )?;
    }
    if let Some(round) = round_s {
        let rounds = span_s / round;
        ensure_fits(
            &format!(
                "--round {round} re-plans {} times over the replay's {span_s:.0} s",
                human_count(rounds)
            ),
            rounds,
            ROUND_BYTES,
            "rounds",
        )?;
    }
    Ok(())
}

/// Refuses arrivals stretched past 100 years after the first (`--arrival-scale` below 1
/// spreads them out, and so does a slow EaCO arrival rate): a replay that long integrates
/// idle power into absurd energies. `cause` names the flags that spread them.
pub fn check_arrival_span(workload: &gapbench_replay::TimedWorkload, cause: &str) -> Result<()> {
    let arrivals = workload.tasks.iter().map(|t| t.arrival_s);
    let (first, last) = arrivals.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), a| {
        (lo.min(a), hi.max(a))
    });
    let max_s = gapbench_model::workload::MAX_TIME_S as f64;
    if last - first > max_s {
        bail!(
            "{cause} stretches the arrivals over {:.3e} s ({:.1e} years), more than 100 years ({max_s} s)",
            last - first,
            (last - first) / 31_557_600.0
        );
    }
    Ok(())
}

/// Where the system does not say how much memory is available.
const FALLBACK_AVAILABLE_BYTES: u64 = 8 << 30;

/// What the system reports available (`MemAvailable` in `/proc/meminfo`), or 8 GiB where
/// it does not say.
pub fn available_memory_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib * 1024)
        })
        .unwrap_or(FALLBACK_AVAILABLE_BYTES)
}

/// The memory a command may plan to use: half of what is available.
pub fn memory_budget_bytes() -> f64 {
    available_memory_bytes() as f64 / 2.0
}

/// Refuses `count` items of `bytes_each` when they exceed the memory budget. `what` says
/// which value decides the count and what the items are (`--tick 1e-9 samples the
/// timeline 1.3e16 times`), `items` names them for the limit (`timeline rows`).
pub fn ensure_fits(what: &str, count: f64, bytes_each: f64, items: &str) -> Result<()> {
    let budget = memory_budget_bytes();
    let needed = count * bytes_each;
    if !needed.is_finite() || needed > budget {
        bail!(
            "{what}: about {} of memory at {bytes_each:.0} bytes each, more than this machine can spare ({}, half of what is available), which holds about {} {items}",
            human_bytes(needed),
            human_bytes(budget),
            human_count(budget / bytes_each)
        );
    }
    Ok(())
}

/// `3.2 GB`, `512 MB`, `1.6e6 TB`.
fn human_bytes(bytes: f64) -> String {
    match bytes {
        b if !b.is_finite() => "unbounded".to_string(),
        b if b >= 1e15 => format!("{:.1e} TB", b / 1e12),
        b if b >= 1e12 => format!("{:.1} TB", b / 1e12),
        b if b >= 1e9 => format!("{:.1} GB", b / 1e9),
        b => format!("{:.0} MB", b / 1e6),
    }
}

/// `41,000,000` below a trillion, `1.3e16` above.
pub fn human_count(count: f64) -> String {
    if !count.is_finite() || count >= 1e12 {
        return format!("{count:.1e}");
    }
    let digits = format!("{:.0}", count.floor());
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    grouped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_beyond_the_budget_are_refused_with_the_limit() {
        let budget = memory_budget_bytes();
        assert!(budget > 0.0);
        ensure_fits("small", 1000.0, 100.0, "things").unwrap();
        let error = ensure_fits(
            "--tick 1e-9 samples the timeline 1.3e16 times",
            1.3e16,
            160.0,
            "timeline rows",
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with("--tick 1e-9 samples the timeline 1.3e16 times: about 2.1e6 TB"),
            "{error}"
        );
        assert!(error.contains("timeline rows"), "{error}");
        assert!(ensure_fits("nan", f64::NAN, 1.0, "x").is_err());
        assert_eq!(human_count(41_000_000.4), "41,000,000");
        assert_eq!(human_count(999.0), "999");
    }
}
