//! `replay_runs.csv` and `replay_timeline.csv` as the time-mode figures and report
//! sections need them: rows grouped by panel (source, arrival scale, idle policy), and
//! means over seeds per policy.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Result};
use gapbench_results::table::read_rows;
use gapbench_results::{ReplayBoundStatus, ReplayKey, ReplayRunRow, ReplayTimelineRow};

/// What one panel of time-mode results shares: the source, its arrival scale and idle
/// policy. Ordered by source (natural order), then scale, then idle.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Panel {
    pub(crate) source: String,
    pub(crate) nodes: usize,
    pub(crate) arrival_scale: f64,
    pub(crate) idle: String,
}

impl Panel {
    /// The panel of a row at `line` of `path`; an arrival scale that is not a positive
    /// number (which no replay has, and which would equal no panel, NaN included) is refused.
    fn of_row(path: &Path, line: u64, key: &ReplayKey) -> Result<Panel> {
        if !(key.arrival_scale.is_finite() && key.arrival_scale > 0.0) {
            bail!(
                "{}: line {line}: column `arrival_scale`: {} is not a positive factor",
                path.display(),
                key.arrival_scale
            );
        }
        Ok(Panel::of(key))
    }

    fn of(key: &ReplayKey) -> Panel {
        Panel {
            source: key.source.clone(),
            nodes: key.nodes,
            arrival_scale: key.arrival_scale,
            idle: key.idle.clone(),
        }
    }

    /// `default, always-on` (with `×10 arrivals` when the scale is not 1).
    pub(crate) fn title(&self) -> String {
        let scale = if (self.arrival_scale - 1.0).abs() < 1e-12 {
            String::new()
        } else {
            format!(", arrivals ×{}", self.arrival_scale)
        };
        format!("{}, {}{scale}", self.source, self.idle)
    }

    pub(crate) fn is_eaco(&self) -> bool {
        self.source.starts_with("eaco-")
    }

    /// An EaCO source of a deadline-factor sweep at a σ other than the default
    /// (`eaco-<servers>-d<σ>`): shown in the trade-off, not in the per-setup tables and bars.
    pub(crate) fn is_eaco_sweep_point(&self) -> bool {
        self.is_eaco() && self.source.contains("-d")
    }
}

/// The mean over seeds of one policy's replays in a panel.
#[derive(Debug, Clone)]
pub(crate) struct PolicyMeans {
    pub(crate) policy: String,
    pub(crate) seeds: usize,
    /// Field-wise means of the numeric columns (the key is the first seed's).
    pub(crate) mean: ReplayRunRow,
}

/// The rows of `replay_runs.csv`, in file order (spec order), grouped by panel and policy.
pub(crate) struct ReplayRuns {
    pub(crate) panels: Vec<(Panel, Vec<PolicyMeans>)>,
}

/// Reads `replay_runs.csv`; `None` when absent or empty.
pub(crate) fn read_replay_runs(path: &Path) -> Result<Option<ReplayRuns>> {
    let Some(table) = read_rows::<ReplayRunRow>(path, &[])? else {
        return Ok(None);
    };
    let mut panels: Vec<(Panel, Vec<Vec<ReplayRunRow>>)> = Vec::new();
    for row in table.rows {
        let panel = Panel::of_row(path, row.line, &row.value.key)?;
        let index = match panels.iter().position(|(p, _)| *p == panel) {
            Some(i) => i,
            None => {
                panels.push((panel, Vec::new()));
                panels.len() - 1
            }
        };
        let groups = &mut panels[index].1;
        match groups
            .iter_mut()
            .find(|g| g[0].key.policy == row.value.key.policy)
        {
            Some(group) => group.push(row.value),
            None => groups.push(vec![row.value]),
        }
    }
    Ok(Some(ReplayRuns {
        panels: panels
            .into_iter()
            .map(|(panel, groups)| (panel, groups.iter().map(|g| means(g)).collect()))
            .collect(),
    }))
}

fn means(rows: &[ReplayRunRow]) -> PolicyMeans {
    let n = rows.len() as f64;
    let mean = |f: fn(&ReplayRunRow) -> f64| rows.iter().map(f).sum::<f64>() / n;
    let total = |f: fn(&ReplayRunRow) -> usize| rows.iter().map(f).sum::<usize>();
    let first = &rows[0];
    PolicyMeans {
        policy: first.key.policy.clone(),
        seeds: rows.len(),
        mean: ReplayRunRow {
            key: first.key.clone(),
            tasks: total(|r| r.tasks),
            completed: total(|r| r.completed),
            failed: total(|r| r.failed),
            unfinished: total(|r| r.unfinished),
            energy_kwh: mean(|r| r.energy_kwh),
            gpu_busy_kwh: mean(|r| r.gpu_busy_kwh),
            gpu_idle_kwh: mean(|r| r.gpu_idle_kwh),
            cpu_kwh: mean(|r| r.cpu_kwh),
            sleep_kwh: mean(|r| r.sleep_kwh),
            mean_power_w: mean(|r| r.mean_power_w),
            mean_jct_s: mean(|r| r.mean_jct_s),
            p50_jct_s: mean(|r| r.p50_jct_s),
            p95_jct_s: mean(|r| r.p95_jct_s),
            p99_jct_s: mean(|r| r.p99_jct_s),
            mean_wait_s: mean(|r| r.mean_wait_s),
            mean_run_s: mean(|r| r.mean_run_s),
            makespan_s: mean(|r| r.makespan_s),
            mean_active_nodes: mean(|r| r.mean_active_nodes),
            undos: rows.iter().map(|r| r.undos).sum(),
            deadline_misses: total(|r| r.deadline_misses),
            job_energy_kwh: mean(|r| r.job_energy_kwh),
            carbon_kg: mean_of(rows, |r| r.carbon_kg),
            job_carbon_kg: mean_of(rows, |r| r.job_carbon_kg),
            stopped_early: rows
                .iter()
                .filter(|r| !r.stopped_early.is_empty())
                .map(|r| format!("seed {}: {}", r.key.seed, r.stopped_early))
                .collect::<Vec<_>>()
                .join("; "),
            bound_kwh: mean_of(rows, |r| r.bound_kwh),
            bound_lp_kwh: mean_of(rows, |r| r.bound_lp_kwh),
            // The weakest status of the seeds (`ReplayBoundStatus::weakness`).
            bound_status: rows
                .iter()
                .map(|r| r.bound_status.as_str())
                .max_by_key(|s| ReplayBoundStatus::parse(s).map_or(u8::MAX, |s| s.weakness()))
                .unwrap_or(ReplayBoundStatus::Converged.label())
                .to_string(),
            bound_gap: mean_of(rows, |r| r.bound_gap),
        },
    }
}

/// The mean of an optional column: present only when every seed has it.
fn mean_of(rows: &[ReplayRunRow], f: fn(&ReplayRunRow) -> Option<f64>) -> Option<f64> {
    let values: Option<Vec<f64>> = rows.iter().map(f).collect();
    values.map(|v| v.iter().sum::<f64>() / v.len() as f64)
}

/// One policy's timeline in a panel: its smallest seed's samples `(hours, power kW, active
/// nodes)` (replays of different seeds end at different times, so they are not averaged).
pub(crate) struct TimelineSeries {
    pub(crate) policy: String,
    pub(crate) seed: u64,
    pub(crate) points: Vec<(f64, f64, f64)>,
    /// The replay's energy bound as power `(hours, kW)`, when it has one.
    pub(crate) bound_kw: Vec<(f64, f64)>,
}

/// Each panel's timelines, in file order.
pub(crate) type Timelines = Vec<(Panel, Vec<TimelineSeries>)>;

/// Reads `replay_timeline.csv` grouped by panel, in file order; `None` when absent or empty.
pub(crate) fn read_replay_timeline(path: &Path) -> Result<Option<Timelines>> {
    let Some(table) = read_rows::<ReplayTimelineRow>(path, &[])? else {
        return Ok(None);
    };
    let mut panels: Timelines = Vec::new();
    let mut smallest_seed: BTreeMap<(usize, String), u64> = BTreeMap::new();
    for row in &table.rows {
        let key = &row.value.key;
        let panel = Panel::of_row(path, row.line, key)?;
        let index = match panels.iter().position(|(p, _)| *p == panel) {
            Some(i) => i,
            None => {
                panels.push((panel, Vec::new()));
                panels.len() - 1
            }
        };
        let seed = smallest_seed
            .entry((index, key.policy.clone()))
            .or_insert(key.seed);
        *seed = (*seed).min(key.seed);
    }
    for row in &table.rows {
        let r = &row.value;
        let index = panels
            .iter()
            .position(|(p, _)| *p == Panel::of(&r.key))
            .expect("every panel was collected");
        if smallest_seed[&(index, r.key.policy.clone())] != r.key.seed {
            continue;
        }
        let series = &mut panels[index].1;
        let point = (
            r.time_s / 3600.0,
            r.power_w / 1000.0,
            f64::from(r.active_nodes),
        );
        let bound = r.bound_power_w.map(|w| (point.0, w / 1000.0));
        match series.iter_mut().find(|s| s.policy == r.key.policy) {
            Some(s) => {
                s.points.push(point);
                s.bound_kw.extend(bound);
            }
            None => series.push(TimelineSeries {
                policy: r.key.policy.clone(),
                seed: r.key.seed,
                points: vec![point],
                bound_kw: bound.into_iter().collect(),
            }),
        }
    }
    Ok(Some(panels))
}
