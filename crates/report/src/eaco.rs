//! REPORT.md's EaCO study: each policy on EaCO's setup next to the paper's headline and
//! against the proven bound of `eaco_bounds.csv` (the least energy of any co-allocation
//! that meets every deadline), and EaCO's energy vs run-time trade-off over the deadline
//! factor σ next to the bound's frontier.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use gapbench_results::eaco_bound::DEADLINE_WINDOWS;
use gapbench_results::table::read_rows;
use gapbench_results::{EacoBoundRow, EacoLpStatus, EACO_BOUNDS_CSV};

use crate::figures::replay_data::{Panel, PolicyMeans};

/// EaCO's published headline [EaCO, §6]: energy vs FIFO on 64 nodes and vs each baseline
/// on 28 nodes, and the bound on the run-time increase.
const EACO_PAPER: &str = "EaCO's paper reports, on its Gavel simulation: total energy −39 % vs FIFO with the mean job run time up by less than 3.23 %; on 28 nodes −39 % / −24.5 % / −8.3 % vs FIFO / FIFO_packed / Gandiva.";

/// The paper's point on the trade-off: (run-time increase %, energy saving %).
pub(crate) const PAPER_POINT: (f64, f64) = (3.23, 39.0);

/// The FIFO baseline of a panel: `fifo` or `fifo-o`.
pub(crate) fn fifo(policies: &[PolicyMeans]) -> Option<&PolicyMeans> {
    policies
        .iter()
        .find(|p| p.policy == "fifo" || p.policy == "fifo-o")
}

/// The rows of `eaco_bounds.csv` (empty when the folder has none).
pub(crate) struct EacoBounds {
    rows: Vec<EacoBoundRow>,
}

impl EacoBounds {
    pub(crate) fn read(dir: &Path) -> Result<EacoBounds> {
        let rows = read_rows::<EacoBoundRow>(&dir.join(EACO_BOUNDS_CSV), &[])?
            .map(|t| t.rows.into_iter().map(|r| r.value).collect())
            .unwrap_or_default();
        Ok(EacoBounds { rows })
    }

    /// The deadline-window rows of a panel, one per seed.
    fn deadline_rows<'a>(&'a self, panel: &'a Panel) -> impl Iterator<Item = &'a EacoBoundRow> {
        self.rows.iter().filter(move |r| {
            r.source == panel.source && r.idle == panel.idle && r.windows == DEADLINE_WINDOWS
        })
    }

    /// σ of a panel's source, when the folder has its bounds.
    pub(crate) fn deadline_factor(&self, panel: &Panel) -> Option<f64> {
        self.deadline_rows(panel).next().map(|r| r.deadline_factor)
    }

    /// Mean over seeds of the bound that holds for `policy`'s replays: per seed the
    /// deadline bound, or the bound up to the policy's makespan where it missed deadlines;
    /// with whether any seed needed the latter.
    pub(crate) fn bound_for(&self, panel: &Panel, policy: &str) -> Option<(f64, bool)> {
        let makespan = format!("makespan:{policy}");
        let mut sum = 0.0;
        let mut count = 0;
        let mut own = false;
        for row in self.deadline_rows(panel) {
            let late = self.rows.iter().find(|r| {
                r.source == row.source
                    && r.idle == row.idle
                    && r.seed == row.seed
                    && r.windows == makespan
            });
            own |= late.is_some();
            sum += late.unwrap_or(row).bound_kwh;
            count += 1;
        }
        (count > 0).then(|| (sum / count as f64, own))
    }

    /// One line on how a panel's deadline bound was proven.
    fn proof_line(&self, panel: &Panel) -> Option<String> {
        let rows: Vec<&EacoBoundRow> = self.deadline_rows(panel).collect();
        let first = rows.first()?;
        let optimal = rows
            .iter()
            .filter(|r| EacoLpStatus::parse(&r.lp_status) == Some(EacoLpStatus::Optimal))
            .count();
        let statuses: Vec<&str> = rows.iter().map(|r| r.lp_status.as_str()).collect();
        let mean = |f: fn(&EacoBoundRow) -> f64| {
            rows.iter().map(|r| f(r)).sum::<f64>() / rows.len() as f64
        };
        Some(format!(
            "Bound (σ = {}): time-indexed pattern LP on {} h slots ({} slots, {} columns, {} rows, {} co-location patterns per server), LP status optimal on {optimal} of {} seeds ({}), certified by weak duality; the per-job closed form alone gives {:.0} kWh, the LP {:.0} kWh.",
            first.deadline_factor,
            first.slot_s.map_or("–".to_string(), |s| format!("{}", s / 3600.0)),
            first.slots,
            first.columns,
            first.rows,
            first.patterns,
            rows.len(),
            statuses.join(", "),
            mean(|r| r.closed_form_kwh),
            mean(|r| r.bound_kwh),
        ))
    }
}

fn relative(x: f64, base: Option<f64>) -> String {
    match base {
        Some(b) if b > 0.0 => format!("{:+.1} %", 100.0 * (x / b - 1.0)),
        _ => "–".to_string(),
    }
}

/// The EaCO study: per panel at the default σ a table with the bound, then the σ sweep.
pub(crate) fn eaco_section(
    out: &mut String,
    dir: &Path,
    panels: &[&(Panel, Vec<PolicyMeans>)],
) -> Result<()> {
    let bounds = EacoBounds::read(dir)?;
    writeln!(out, "## EaCO study\n")?;
    writeln!(out, "{EACO_PAPER} Below, the same comparison on gapbench's rebuild of the setup (8×V100 servers, the four-model job mix, Poisson arrivals): each value relative to FIFO (`x / FIFO − 1`); run time = end − first start of completed jobs; means over seeds.\n")?;
    if !bounds.rows.is_empty() {
        writeln!(out, "**Bound** = a proven lower bound on the cluster energy of ANY co-allocation of the same jobs on the same servers that ends every job by its deadline (arrival + σ × solo duration), under the replay's own accounting: co-location slowdown, sublinear GPU power, CPU sockets, idle or sleep power (`gapbench_ilp::eaco_bound`: the larger of a per-job closed form and a time-indexed pattern LP, certified by weak duality; the replay harness builds its numbers, `eaco_bounds.csv`). gap = (E − bound) / bound. Where a policy missed deadlines on a seed (marked *), its bound on that seed lets every job end by the policy's own makespan, so it holds for that replay too.\n")?;
    }
    let mut headline = Vec::new();
    let default_panels: Vec<_> = panels
        .iter()
        .filter(|(p, _)| !p.is_eaco_sweep_point())
        .collect();
    for (panel, policies) in &default_panels {
        policy_table(out, &bounds, panel, policies)?;
        let base = fifo(policies);
        let eaco = policies.iter().find(|p| p.policy == "eaco-o");
        if let (Some(e), Some(b)) = (eaco, base) {
            let versus = |name: &str| {
                policies
                    .iter()
                    .find(|p| p.policy == name || p.policy == format!("{name}-o"))
                    .map(|p| relative(e.mean.energy_kwh, Some(p.mean.energy_kwh)))
                    .unwrap_or_else(|| "–".to_string())
            };
            headline.push(format!(
                "{}: EaCO-O energy {} vs FIFO, {} vs FIFO_packed, {} vs Gandiva; run time {}",
                panel.title(),
                relative(e.mean.energy_kwh, Some(b.mean.energy_kwh)),
                versus("fifo-packed"),
                versus("gandiva"),
                relative(e.mean.mean_run_s, Some(b.mean.mean_run_s)),
            ));
        }
    }
    if !headline.is_empty() {
        writeln!(out, "Next to the paper's headline:\n")?;
        for line in headline {
            writeln!(out, "- {line}")?;
        }
        writeln!(out, "\nWhy the numbers differ: the paper does not name its trace, so jobs here are a Poisson stream of the four profiled models on whole servers (`eaco_setup`); EaCO saves energy mainly by letting emptied servers sleep, so its saving depends on the sleep power (a stated share of idle power) and on how loaded the cluster is — under `always-on` only the sublinear co-location power remains; our Gandiva is the simplified one of the spec (time-and-budgets §2.5).\n")?;
    }
    tradeoff_section(out, &bounds, panels)
}

fn policy_table(
    out: &mut String,
    bounds: &EacoBounds,
    panel: &Panel,
    policies: &[PolicyMeans],
) -> Result<()> {
    writeln!(out, "### {} ({} servers)\n", panel.title(), panel.nodes)?;
    writeln!(out, "| policy | energy kWh | energy vs FIFO | bound kWh | gap | mean run h | run vs FIFO | mean JCT h | JCT vs FIFO | mean active nodes | undos | deadline misses | unfinished | seeds |")?;
    writeln!(
        out,
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    )?;
    let base = fifo(policies);
    for p in policies {
        let m = &p.mean;
        let (bound, gap) = match bounds.bound_for(panel, &p.policy) {
            Some((lb, own)) => {
                let mark = if own { "*" } else { "" };
                (
                    format!("{lb:.0}{mark}"),
                    format!("{:+.1} %", 100.0 * (m.energy_kwh - lb) / lb),
                )
            }
            None => ("–".to_string(), "–".to_string()),
        };
        writeln!(
            out,
            "| {} | {:.0} | {} | {bound} | {gap} | {:.2} | {} | {:.2} | {} | {:.1} | {} | {} | {} | {} |",
            p.policy,
            m.energy_kwh,
            relative(m.energy_kwh, base.map(|b| b.mean.energy_kwh)),
            m.mean_run_s / 3600.0,
            relative(m.mean_run_s, base.map(|b| b.mean.mean_run_s)),
            m.mean_jct_s / 3600.0,
            relative(m.mean_jct_s, base.map(|b| b.mean.mean_jct_s)),
            m.mean_active_nodes,
            m.undos,
            m.deadline_misses,
            m.unfinished,
            p.seeds
        )?;
    }
    writeln!(out)?;
    if let Some(line) = bounds.proof_line(panel) {
        writeln!(out, "{line}\n")?;
    }
    Ok(())
}

/// One point of the trade-off: a panel at one σ.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TradeoffPoint {
    pub(crate) servers: usize,
    pub(crate) idle: String,
    pub(crate) deadline_factor: f64,
    /// EaCO-O vs FIFO, %: energy saving (positive = less) and run-time increase.
    pub(crate) eaco_saving_pct: f64,
    pub(crate) eaco_run_increase_pct: f64,
    pub(crate) eaco_misses: usize,
    /// The most any co-allocation meeting every deadline saves vs FIFO: `1 − bound / E_FIFO`.
    pub(crate) bound_saving_pct: f64,
    pub(crate) seeds: usize,
}

/// The trade-off points of every EaCO panel with FIFO, EaCO-O and a deadline bound, by
/// (servers descending, idle, σ).
pub(crate) fn tradeoff_points(
    bounds: &EacoBounds,
    panels: &[&(Panel, Vec<PolicyMeans>)],
) -> Vec<TradeoffPoint> {
    let mut points: Vec<TradeoffPoint> = panels
        .iter()
        .filter_map(|(panel, policies)| {
            let base = fifo(policies)?;
            let eaco = policies.iter().find(|p| p.policy == "eaco-o")?;
            let sigma = bounds.deadline_factor(panel)?;
            let (lb, _) = bounds.bound_for(panel, DEADLINE_WINDOWS)?;
            let (e_fifo, run_fifo) = (base.mean.energy_kwh, base.mean.mean_run_s);
            Some(TradeoffPoint {
                servers: panel.nodes,
                idle: panel.idle.clone(),
                deadline_factor: sigma,
                eaco_saving_pct: 100.0 * (1.0 - eaco.mean.energy_kwh / e_fifo),
                eaco_run_increase_pct: 100.0 * (eaco.mean.mean_run_s / run_fifo - 1.0),
                eaco_misses: eaco.mean.deadline_misses,
                bound_saving_pct: 100.0 * (1.0 - lb / e_fifo),
                seeds: eaco.seeds,
            })
        })
        .collect();
    points.sort_by(|a, b| {
        b.servers
            .cmp(&a.servers)
            .then_with(|| a.idle.cmp(&b.idle))
            .then_with(|| a.deadline_factor.total_cmp(&b.deadline_factor))
    });
    points
}

fn tradeoff_section(
    out: &mut String,
    bounds: &EacoBounds,
    panels: &[&(Panel, Vec<PolicyMeans>)],
) -> Result<()> {
    let points = tradeoff_points(bounds, panels);
    if points.len() < 2 {
        return Ok(());
    }
    writeln!(out, "### EaCO's trade-off over the deadline factor σ\n")?;
    writeln!(out, "EaCO-O with Burstable deadlines at σ × the solo duration, against FIFO on the same jobs (FIFO ignores deadlines); \"most any schedule saves\" = 1 − bound / FIFO's energy: no co-allocation that ends every job within σ × its solo time of its arrival saves more. Figure: `figures/eaco_tradeoff_<idle>.png`.\n")?;
    writeln!(out, "| servers | idle | σ | EaCO-O energy saving | EaCO-O run-time increase | EaCO-O deadline misses | most any schedule saves | EaCO-O gap to it (points) | seeds |")?;
    writeln!(out, "|---|---|---|---|---|---|---|---|---|")?;
    for p in &points {
        writeln!(
            out,
            "| {} | {} | {} | {:.1} % | {:+.1} % | {} | {:.1} % | {:.1} | {} |",
            p.servers,
            p.idle,
            p.deadline_factor,
            p.eaco_saving_pct,
            p.eaco_run_increase_pct,
            p.eaco_misses,
            p.bound_saving_pct,
            p.bound_saving_pct - p.eaco_saving_pct,
            p.seeds
        )?;
    }
    writeln!(out)?;
    paper_verdict(out, &points)
}

/// Which of the paper's two numbers (−39 % energy, < 3.23 % run time) the rebuild cannot
/// reach together, from the bound at the smallest σ that allows 3.23 %.
fn paper_verdict(out: &mut String, points: &[TradeoffPoint]) -> Result<()> {
    let (run_pct, saving_pct) = PAPER_POINT;
    for p in points.iter().filter(|p| p.idle == "sleep-when-empty") {
        let allows = (p.deadline_factor - 1.0) * 100.0 <= run_pct + 1e-9;
        let tightest = points
            .iter()
            .filter(|q| {
                q.servers == p.servers
                    && q.idle == p.idle
                    && (q.deadline_factor - 1.0) * 100.0 <= run_pct + 1e-9
            })
            .map(|q| q.deadline_factor)
            .fold(f64::NEG_INFINITY, f64::max);
        if !allows || p.deadline_factor != tightest {
            continue;
        }
        let first_enough = points
            .iter()
            .filter(|q| {
                q.servers == p.servers && q.idle == p.idle && q.bound_saving_pct >= saving_pct
            })
            .map(|q| q.deadline_factor)
            .fold(f64::INFINITY, f64::min);
        let needs = if first_enough.is_finite() {
            format!("the bound first allows a {saving_pct} % saving at σ = {first_enough}")
        } else {
            format!("no swept σ lets any schedule save {saving_pct} %")
        };
        if p.bound_saving_pct < saving_pct {
            writeln!(out, "- {} servers, sleep-when-empty: with every job within {:.1} % of its solo time (σ = {}), no co-allocation saves more than {:.1} % vs FIFO (proven), so the paper's −{saving_pct} % energy and < {run_pct} % run time cannot both hold here; {needs}. EaCO-O saves {:.1} % at {:+.1} % run time. Why: in the calibrated model (spec §2.4) a second tenant already slows every tenant by 3 % (c1 = 0.03) and a third by 6 %, so a job allowed 3.2 % can spend only part of its life shared, mostly in pairs, and a pair saves only the sublinear share of its dynamic power and one server's static power; EaCO's paper measured its < 3.23 % in Gavel with its own pairwise throughput table, not under these slowdowns.", p.servers, (p.deadline_factor - 1.0) * 100.0, p.deadline_factor, p.bound_saving_pct, p.eaco_saving_pct, p.eaco_run_increase_pct)?;
        } else {
            writeln!(out, "- {} servers, sleep-when-empty: at σ = {} the bound allows up to {:.1} % saving vs FIFO, so the paper's pair of numbers is not excluded by the model; EaCO-O reaches {:.1} % at {:+.1} % run time, {:.1} points short of the bound.", p.servers, p.deadline_factor, p.bound_saving_pct, p.eaco_saving_pct, p.eaco_run_increase_pct, p.bound_saving_pct - p.eaco_saving_pct)?;
        }
    }
    writeln!(out)?;
    Ok(())
}
