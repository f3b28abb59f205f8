//! A schedule of the frontier problem built job by job (list scheduling guided by the
//! master LP): jobs in the order of their mean completion in the LP, each in the
//! configuration that minimises `JCT + λ·budget` at the master's budget price `λ`, run as
//! early as the GPU-seconds left in each slot allow, and never spending what every later
//! job needs at its most frugal configuration. The LP's columns rarely fit together as
//! they are; a list schedule always fits, and starts the integer master
//! (`incumbent.rs`) where the policies' replays do not.

use super::known::{column_of_runs, KnownSchedule, Run};
use super::master::ScheduleColumn;
use super::rates::BudgetRates;
use super::FrontierInstance;

/// The list schedule within `budget`, the order taken from the master LP's mix `weights`
/// of `columns`, configurations priced at `budget_price` (seconds per budget unit); `None`
/// when `budget` is below what the jobs need.
pub(crate) fn list_schedule(
    instance: &FrontierInstance,
    columns: &[ScheduleColumn],
    weights: &[f64],
    budget_price: f64,
    budget: f64,
) -> Option<KnownSchedule> {
    let rates = BudgetRates::of(instance);
    let frugal: Vec<f64> = instance
        .jobs
        .iter()
        .map(|job| job.least_watt_seconds() * rates.lowest)
        .collect();
    let mut reserve: f64 = frugal.iter().sum();
    let mut remaining = budget;
    if reserve > budget * (1.0 + 1e-12) {
        return None;
    }
    let mut residual: Vec<f64> = (0..instance.slots.count())
        .map(|t| instance.capacity(t))
        .collect();
    let mut chosen: Vec<Option<ScheduleColumn>> = vec![None; instance.jobs.len()];
    for j in lp_order(instance, columns, weights) {
        let job = &instance.jobs[j];
        reserve -= frugal[j];
        let affordable = remaining - reserve + 1e-12 * budget;
        let column = (0..job.configs.len())
            .map(|c| earliest(instance, &rates, j, c, &residual))
            .filter(|column| column.budget_used <= affordable)
            .min_by(|a, b| {
                let cost = |c: &ScheduleColumn| c.jct_s + budget_price * c.budget_used;
                cost(a).total_cmp(&cost(b))
            })
            .unwrap_or_else(|| ScheduleColumn::after_horizon(instance, &rates, j));
        for &(t, gpu_seconds) in &column.gpu_seconds {
            residual[t] -= gpu_seconds;
        }
        remaining -= column.budget_used;
        chosen[j] = Some(column);
    }
    Some(KnownSchedule {
        columns: chosen.into_iter().map(|c| c.expect("every job")).collect(),
    })
}

/// Jobs by their mean completion in the LP (arrival + the weighted mean of their columns'
/// JCTs), then by index.
fn lp_order(
    instance: &FrontierInstance,
    columns: &[ScheduleColumn],
    weights: &[f64],
) -> Vec<usize> {
    let jobs = instance.jobs.len();
    let (mut weight, mut jct) = (vec![0.0; jobs], vec![0.0; jobs]);
    for (column, &w) in columns.iter().zip(weights) {
        if w > 0.0 {
            weight[column.job] += w;
            jct[column.job] += w * column.jct_s;
        }
    }
    let completion: Vec<f64> = (0..jobs)
        .map(|j| {
            let mean = if weight[j] > 0.0 {
                jct[j] / weight[j]
            } else {
                f64::INFINITY
            };
            instance.jobs[j].arrival_s + mean
        })
        .collect();
    let mut order: Vec<usize> = (0..jobs).collect();
    order.sort_by(|&a, &b| completion[a].total_cmp(&completion[b]).then(a.cmp(&b)));
    order
}

/// Job `j` in configuration `config` from its arrival, in each slot as long as its time
/// there and the GPU-seconds `residual` allow, the rest after the horizon.
fn earliest(
    instance: &FrontierInstance,
    rates: &BudgetRates,
    j: usize,
    config: usize,
    residual: &[f64],
) -> ScheduleColumn {
    let job = &instance.jobs[j];
    let run = job.configs[config];
    let mut left_s = job.iterations / run.iterations_per_s;
    let mut runs = Vec::new();
    for (t, &free) in residual.iter().enumerate().skip(instance.arrival_slot(job)) {
        let seconds = instance
            .available_s(job, t)
            .min(free / f64::from(run.gpus))
            .max(0.0);
        if seconds <= 0.0 {
            continue;
        }
        let from_s = instance.slots.start_s(t).max(job.arrival_s);
        let take = seconds.min(left_s);
        runs.push(Run {
            from_s,
            to_s: from_s + take,
            config,
        });
        left_s -= take;
        if left_s <= 0.0 {
            break;
        }
    }
    if left_s > 0.0 {
        let from_s = instance.slots.horizon_s().max(job.arrival_s);
        runs.push(Run {
            from_s,
            to_s: from_s + left_s,
            config,
        });
    }
    column_of_runs(instance, rates, j, &runs).expect("runs built within the job's own time")
}
