//! The time-mode sections of `REPORT.md`: what was replayed, energy and job times per
//! policy on the traces; the EaCO study is [`crate::eaco`].

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use gapbench_results::matrix::ReplayDescription;
use gapbench_results::{ReplayBoundStatus, REPLAY_RUNS_CSV};

use crate::eaco::fifo;
use crate::figures::replay_data::{read_replay_runs, Panel, PolicyMeans};

/// The replay lines of "What ran".
pub(crate) fn what_ran(out: &mut String, replay: &ReplayDescription) -> Result<()> {
    let mut sources: Vec<String> = replay.traces.clone();
    if let Some(eaco) = &replay.eaco {
        for servers in &eaco.servers {
            let sigmas: Vec<String> = eaco.deadline_factors.iter().map(f64::to_string).collect();
            let sweep = if sigmas.len() > 1 {
                format!(", deadline factors σ = {}", sigmas.join(", "))
            } else {
                String::new()
            };
            sources.push(format!(
                "eaco-{servers} ({servers} 8×V100 servers, {} jobs at {}/h{sweep})",
                eaco.jobs, eaco.jobs_per_hour
            ));
        }
    }
    let seeds = replay.seeds.expand()?;
    let scales: Vec<String> = replay.arrival_scales.iter().map(f64::to_string).collect();
    writeln!(out, "- time mode (replays): sources {}", sources.join(", "))?;
    writeln!(out, "  - policies: {}", replay.policies.join("; "))?;
    writeln!(
        out,
        "  - seeds {}; arrival scales {}; idle {} (sleep at {} % of idle power)",
        seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        scales.join(", "),
        replay.idle.join(", "),
        replay.sleep_fraction * 100.0
    )?;
    Ok(())
}

/// The time-mode tables, when the folder has `replay_runs.csv`.
pub(crate) fn sections(out: &mut String, dir: &Path) -> Result<()> {
    let Some(runs) = read_replay_runs(&dir.join(REPLAY_RUNS_CSV))? else {
        return Ok(());
    };
    // EaCO's setup gets its own study when a FIFO baseline ran on it.
    let (eaco, traces): (Vec<_>, Vec<_>) = runs
        .panels
        .iter()
        .partition(|(p, policies)| p.is_eaco() && fifo(policies).is_some());
    if !traces.is_empty() {
        writeln!(out, "## Time mode: energy and job completion\n")?;
        writeln!(out, "Every time policy runs in one engine on the same nodes: tasks arrive at their trace times, wait when nothing fits, run (slowed by co-location; at the clock and GPU count the policy chose) and leave. Energy is the same accounting for all: cluster energy integrated exactly over the replay, every node included, idle and asleep (split into GPU busy, GPU idle, CPU and sleep); job energy (its own column) is what the training jobs drew by the training model, the quantity budgets limit (`powerflow@F`, `greenflow@F`: a budget of F × full-clock FIFO's job energy, resp. carbon, on the same replay). Cluster energy runs until each replay's last task ends (its makespan): a policy that stretches the longest tasks keeps every idle node drawing longer. JCT = end − arrival of completed tasks; active nodes = time-weighted mean of nodes with at least one task. Means over seeds; `unfinished` counts tasks still waiting or running when the replay stopped, summed over seeds.\n")?;
        for (panel, policies) in traces {
            trace_table(out, panel, policies)?;
        }
    }
    if !eaco.is_empty() {
        crate::eaco::eaco_section(out, dir, &eaco)?;
    }
    Ok(())
}

fn trace_table(out: &mut String, panel: &Panel, policies: &[PolicyMeans]) -> Result<()> {
    writeln!(out, "### {} ({} nodes)\n", panel.title(), panel.nodes)?;
    let carbon = policies.iter().all(|p| p.mean.carbon_kg.is_some());
    let carbon_head = if carbon {
        " cluster / job carbon kg |"
    } else {
        ""
    };
    let bounded = policies.iter().any(|p| p.mean.bound_kwh.is_some());
    let bound_head = if bounded {
        " energy bound kWh | of which LP kWh | gap ≤ |"
    } else {
        ""
    };
    writeln!(out, "| policy | energy kWh |{bound_head} job energy kWh | GPU busy / idle / CPU / sleep kWh |{carbon_head} mean JCT h | p95 JCT h | mean wait min | makespan h | mean active nodes | undos | deadline misses | unfinished | seeds |")?;
    writeln!(
        out,
        "|---|---|{}---|---|{}---|---|---|---|---|---|---|---|---|",
        if bounded { "---|---|---|" } else { "" },
        if carbon { "---|" } else { "" }
    )?;
    for p in policies {
        let m = &p.mean;
        let carbon_cells = match (carbon, m.carbon_kg, m.job_carbon_kg) {
            (true, Some(cluster), Some(job)) => format!(" {cluster:.1} / {job:.1} |"),
            _ => String::new(),
        };
        let bound_cells = if bounded {
            bound_cells(m)
        } else {
            String::new()
        };
        writeln!(
            out,
            "| {} | {:.1} |{bound_cells} {:.1} | {:.1} / {:.1} / {:.1} / {:.1} |{carbon_cells} {} | {} | {} | {:.1} | {:.1} | {} | {} | {} | {} |",
            p.policy,
            m.energy_kwh,
            m.job_energy_kwh,
            m.gpu_busy_kwh,
            m.gpu_idle_kwh,
            m.cpu_kwh,
            m.sleep_kwh,
            stat(m.mean_jct_s / 3600.0, 3),
            stat(m.p95_jct_s / 3600.0, 3),
            stat(m.mean_wait_s / 60.0, 2),
            m.makespan_s / 3600.0,
            m.mean_active_nodes,
            m.undos,
            m.deadline_misses,
            m.unfinished,
            p.seeds
        )?;
    }
    if let Some(best) = policies
        .iter()
        .min_by(|a, b| a.mean.energy_kwh.total_cmp(&b.mean.energy_kwh))
    {
        writeln!(out, "\nLeast energy: {}.\n", best.policy)?;
    } else {
        writeln!(out)?;
    }
    if bounded {
        bound_note(out, policies)?;
    }
    for p in policies.iter().filter(|p| !p.mean.stopped_early.is_empty()) {
        writeln!(
            out,
            "- {} stopped early: {}",
            p.policy, p.mean.stopped_early
        )?;
    }
    Ok(())
}

/// The energy bound's cells: its mean over seeds (`*` when some seed's column generation
/// stopped at its time limit, `†` at its round cap: still a bound) and the mean gap
/// `(E − LB)/LB`.
fn bound_cells(m: &gapbench_results::ReplayRunRow) -> String {
    match (m.bound_kwh, m.bound_gap) {
        (Some(bound), Some(gap)) => {
            let status =
                ReplayBoundStatus::parse(&m.bound_status).unwrap_or(ReplayBoundStatus::TimeLimit);
            let limited = status.mark().map_or("", |(symbol, _)| symbol);
            let lp = m
                .bound_lp_kwh
                .map_or("—".to_string(), |lp| format!("{lp:.1}"));
            format!(" {bound:.1}{limited} | {lp} | {:.2} % |", 100.0 * gap)
        }
        _ => " — | — | — |".to_string(),
    }
}

/// What the bound is, and how tight it is: the least gap of any policy.
fn bound_note(out: &mut String, policies: &[PolicyMeans]) -> Result<()> {
    writeln!(out, "Energy bound: no placement of the same tasks at this replay's own start and end times uses less energy, even one free to move tasks between windows (`gapbench_ilp::replay_bound`: per window, the least power of the tasks running throughout it, under the replay's power model: column generation's configuration-LP bound (*of which LP*), raised by branch and price on nodes and sockets at work towards the least power of integer wake-ups, so `bound − LP` is what integer wake-ups add (the part of the LP's integrality gap the trees proved) and `energy − bound` the most that is the policy's; a policy that re-clocks, shares devices beyond reservations or chooses GPU counts is bounded with those levers relaxed; tasks undone or moved while running are left out). A policy that delays or stretches tasks is bounded on its own times. Gap ≤ is `(E − bound)/bound`, mean over seeds; `‡`: some window's branch and price stopped at its node cap or could not split further (`branch_limit`: the bound lies between the LP's and the integer optimum, the same on every run); `†`: some window's column generation stopped at its round cap (`round_limit`: the bound holds and is the same on every run); `*`: some window's column generation stopped at its time limit (`time_limit`: the bound holds, its last digits may differ between runs).")?;
    if let Some(tightest) = policies
        .iter()
        .filter_map(|p| Some((p, p.mean.bound_gap?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
    {
        writeln!(
            out,
            "The bound's own tightness: {} is within {:.2} % of it, so the bound is at most that far below the true optimum of its schedule.\n",
            tightest.0.policy,
            100.0 * tightest.1
        )?;
    }
    Ok(())
}

/// A statistic, or `none` when no task completed (started) to have one.
fn stat(value: f64, decimals: usize) -> String {
    if value.is_finite() {
        format!("{value:.decimals$}")
    } else {
        "none".to_string()
    }
}
