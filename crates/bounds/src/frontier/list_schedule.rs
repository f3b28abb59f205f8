//! A schedule of the frontier problem built job by job (list scheduling guided by the
//! master LP): jobs in the order of their mean completion in the LP, each taking the
//! schedule of least reduced cost at the master's prices, `JCT + λ·budget + Σ_t μ_t·gpu_s_t`,
//! among its master columns that still fit (the LP's own timing) and each configuration
//! run as early as the GPU-seconds left in each slot allow, never spending what every
//! later job needs at its most frugal configuration. The slot prices keep a job out of
//! the slots the LP finds dear; under a carbon budget `λ` makes the greener slots cheaper.
//! On `trace-64gpu-x3` pricing the slots took the best schedule found from 4.2–7.3 % above
//! the bound to 1.6–4.1 % at PowerFlow-style's spends (`docs/budgets.md`). The LP's
//! columns rarely fit together as they are; a list schedule always fits, and starts the
//! integer master (`incumbent.rs`) where the policies' replays do not.

use super::known::{column_of_runs, KnownSchedule, Run};
use super::master::ScheduleColumn;
use super::rates::BudgetRates;
use super::FrontierInstance;

/// The list schedule within `budget`, the order taken from the master LP's mix `weights`
/// of `columns`, schedules priced at the master's `(budget_price, gpu_second_price)`
/// (seconds per budget unit, seconds per GPU-second of each slot); `None` when `budget` is
/// below what the jobs need.
pub(crate) fn list_schedule(
    instance: &FrontierInstance,
    columns: &[ScheduleColumn],
    weights: &[f64],
    (budget_price, gpu_second_price): (f64, &[f64]),
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
    let mut of_job: Vec<Vec<&ScheduleColumn>> = vec![Vec::new(); instance.jobs.len()];
    for column in columns {
        of_job[column.job].push(column);
    }
    for j in lp_order(instance, columns, weights) {
        let job = &instance.jobs[j];
        reserve -= frugal[j];
        let affordable = remaining - reserve + 1e-12 * budget;
        let fitting = of_job[j]
            .iter()
            .filter(|column| fits(column, &residual))
            .map(|&column| column.clone());
        let column = (0..job.configs.len())
            .map(|c| earliest(instance, &rates, j, c, &residual))
            .chain(fitting)
            .filter(|column| column.budget_used <= affordable)
            .min_by(|a, b| {
                let cost = |c: &ScheduleColumn| {
                    c.jct_s
                        + budget_price * c.budget_used
                        + c.gpu_seconds
                            .iter()
                            .map(|&(t, gpu_s)| gpu_second_price[t] * gpu_s)
                            .sum::<f64>()
                };
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

/// Whether `column` fits in the GPU-seconds `residual` of its slots.
fn fits(column: &ScheduleColumn, residual: &[f64]) -> bool {
    column
        .gpu_seconds
        .iter()
        .all(|&(t, gpu_seconds)| gpu_seconds <= residual[t])
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontier::{BudgetKind, FrontierJob, JobConfig, Slots};

    /// One job arriving at 0 s on three 100-s slots, running 50 s on all 8 GPUs at 10 W.
    fn instance() -> FrontierInstance {
        FrontierInstance {
            jobs: vec![FrontierJob {
                arrival_s: 0.0,
                iterations: 50.0,
                configs: vec![JobConfig {
                    gpus: 8,
                    iterations_per_s: 1.0,
                    watts: 10.0,
                }],
            }],
            gpus: 8,
            slots: Slots::uniform(100.0, 3),
            budget: BudgetKind::Energy,
        }
    }

    fn column_running_from(instance: &FrontierInstance, from_s: f64) -> ScheduleColumn {
        let runs = [Run {
            from_s,
            to_s: from_s + 50.0,
            config: 0,
        }];
        column_of_runs(instance, &BudgetRates::of(instance), 0, &runs).unwrap()
    }

    /// At slot prices of 0 the job runs as early as it can (JCT 50 s); where the master
    /// prices the first slot above the 200 s a later start costs, it takes the master's
    /// column in the last slot (JCT 250 s), which fits.
    #[test]
    fn the_job_follows_the_masters_slot_prices() {
        let instance = instance();
        let late = column_running_from(&instance, 200.0);
        assert_eq!(late.gpu_seconds, vec![(2, 400.0)]);
        let columns = vec![column_running_from(&instance, 0.0), late.clone()];
        let weights = [0.5, 0.5];
        let budget = 1.0;
        let free = list_schedule(&instance, &columns, &weights, (0.0, &[0.0; 3]), budget)
            .expect("within the budget");
        assert_eq!(free.columns[0].jct_s, 50.0);
        assert_eq!(free.columns[0].gpu_seconds, vec![(0, 400.0)]);
        // 400 GPU-s in slot 0 at 1 s each cost 400 s, more than the 200 s of waiting.
        let dear = list_schedule(
            &instance,
            &columns,
            &weights,
            (0.0, &[1.0, 0.0, 0.0]),
            budget,
        )
        .expect("within the budget");
        assert_eq!(dear.columns[0], late);
    }
}
