//! Exact lower bounds on mean job completion time (JCT) under an energy or a carbon budget:
//! the JCT–energy and JCT–carbon frontiers that PowerFlow-style and GreenFlow-style
//! allocators are measured against (time-and-budgets §6.2 c, d).
//!
//! The problem, for jobs `j` with arrival `a_j`, work `W_j` (iterations) and configurations
//! `c` (GPU count `n_c`, speed `v_c` iterations/s, power `P_c` watts), on `G` GPUs, time cut
//! into slots `t` of length `Δ_t`: choose how long each job runs in each configuration in each slot,
//! `s[j,c,t] ≥ 0` with `Σ_c s[j,c,t] ≤ avail[j,t]` (the part of slot `t` after `a_j`), so that
//! ```text
//! minimise   Σ_j JCT_j
//! subject to Σ_{t,c} v_c · s[j,c,t] ≥ W_j                      (work)
//!            Σ_{j,c} n_c · s[j,c,t] ≤ G · Δ_t          ∀ t     (GPU-seconds per slot)
//!            Σ_{j,c,t} r[c,t] · s[j,c,t] ≤ B                   (budget)
//! ```
//! with `r[c,t] = P_c / 3.6e6` kWh per second for an energy budget, times the slot's
//! lowest carbon intensity / 1000 for a carbon budget in kg. GPU-seconds per slot, rather
//! than GPUs held per slot, make this a relaxation of every continuous-time schedule: any
//! online policy's run is a feasible point, so a bound here bounds every policy.
//!
//! - [`lagrangian`] dualises the slot capacities (prices `μ_t`) and the budget (price `λ`):
//!   each job then solves its own problem exactly (a convex allocation of its work over
//!   slots, for every possible finishing slot), and every `(λ, μ)` gives a line
//!   `Σ JCT ≥ D(λ, μ) − λ·B` valid for every budget `B`. Subgradient steps on `μ` for a sweep
//!   of `λ` give the whole lower envelope at once.
//! - [`ascent`] pushes the lines up at chosen budgets by a deterministic dual ascent on
//!   `(λ, μ)` together, no LP.
//! - [`colgen`] reaches the best such bound at chosen budgets by column generation over
//!   whole per-job schedules (master LP in `master`, pricing by the same per-job problem,
//!   smoothed towards the best prices so far), warm-started from the Lagrangian sweep or
//!   the ascent: the bound at trace scale (thousands of jobs), with the master LP's value
//!   to say how close it is.
//! - [`slots`] cuts time into slots of any lengths: coarse where the trace is quiet, a
//!   relaxation of the fine grid (the argument is in its doc), so still a valid bound.
//! - [`known`] reads a policy's replay as a schedule of the same problem; with a list
//!   schedule in the LP's order (`list_schedule`) and the master's columns it starts an
//!   integer search (`incumbent`) whose schedule caps the problem's optimum from above, so
//!   a point's gap splits into the bound's side and the policy's.
//! - [`mip`] states the same problem as a time-indexed MIP (binary "unfinished by the end of
//!   slot `t`" per job and slot) and solves it with HiGHS on small instances, to show how
//!   tight the Lagrangian envelope is.
//!
//! Energy counts what jobs draw while running (GPU and host share); the idle power of
//! unused GPUs is not part of the budget, and online points must be measured the same way.

pub mod ascent;
pub mod colgen;
mod hull;
mod incumbent;
pub mod job;
pub mod known;
pub mod lagrangian;
mod list_schedule;
mod master;
pub mod mip;
pub mod rates;
pub mod slots;

use crate::error::BoundError;
use gapbench_model::training::{Fidelity, TrainingJob};
use gapbench_model::CarbonSeries;

pub use ascent::{ascent_frontier, AscentFrontier, AscentOptions};
pub use colgen::{
    bound_status_at, column_generation_frontier, BudgetBound, ColumnGenerationFrontier,
    ColumnGenerationOptions, WarmStart,
};
pub use known::{KnownSchedule, Run};
pub use lagrangian::{lagrangian_frontier, Frontier, FrontierLine, LagrangianOptions};
pub use mip::{min_total_jct, MipFrontierPoint};
pub use slots::Slots;

/// One way to run a job.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobConfig {
    pub gpus: u32,
    pub iterations_per_s: f64,
    pub watts: f64,
}

/// A job of the frontier problem.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontierJob {
    pub arrival_s: f64,
    pub iterations: f64,
    pub configs: Vec<JobConfig>,
}

impl FrontierJob {
    /// A training job of the performance model arriving at `arrival_s`, with every
    /// configuration `fidelity` allows (speed `1/T_it`, power `E_it/T_it`).
    pub fn of_training(job: &TrainingJob, arrival_s: f64, fidelity: Fidelity) -> FrontierJob {
        let configs = job
            .configurations(fidelity)
            .into_iter()
            .map(|config| {
                let cost = job.class.iteration(&job.dvfs, config);
                JobConfig {
                    gpus: u32::from(config.gpus),
                    iterations_per_s: 1.0 / cost.seconds,
                    watts: cost.watts(),
                }
            })
            .collect();
        FrontierJob {
            arrival_s,
            iterations: job.iterations,
            configs,
        }
    }

    /// The least watt-seconds its work needs: every iteration at its most frugal
    /// configuration.
    pub fn least_watt_seconds(&self) -> f64 {
        self.configs
            .iter()
            .map(|c| self.iterations / c.iterations_per_s * c.watts)
            .fold(f64::INFINITY, f64::min)
    }
}

/// What the budget limits.
#[derive(Debug, Clone, PartialEq)]
pub enum BudgetKind {
    /// Energy, in kWh.
    Energy,
    /// Carbon, in kgCO2e, with the grid's intensity over time.
    Carbon(CarbonSeries),
}

/// Jobs on a pool of GPUs, time cut into slots.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontierInstance {
    pub jobs: Vec<FrontierJob>,
    pub gpus: u32,
    /// Slots with a capacity ([`Slots`]: any lengths); after them capacity is unlimited (a
    /// relaxation that keeps every job finishable, so the bound never depends on a guessed
    /// horizon being enough).
    pub slots: Slots,
    pub budget: BudgetKind,
}

impl FrontierInstance {
    /// Errors on an instance the bound cannot be computed for, naming the job.
    pub fn validate(&self) -> Result<(), BoundError> {
        if self.slots.is_empty() {
            return Err(BoundError::Input("the horizon has no slot".into()));
        }
        if self.gpus == 0 {
            return Err(BoundError::Input("the GPU pool is empty".into()));
        }
        for (j, job) in self.jobs.iter().enumerate() {
            if !(job.arrival_s.is_finite() && job.arrival_s >= 0.0) {
                return Err(BoundError::Input(format!(
                    "job {j}: arrival {} s is not a time",
                    job.arrival_s
                )));
            }
            if !(job.iterations.is_finite() && job.iterations > 0.0) {
                return Err(BoundError::Input(format!(
                    "job {j}: work {} must be positive",
                    job.iterations
                )));
            }
            if job.configs.is_empty() {
                return Err(BoundError::Input(format!("job {j} has no configuration")));
            }
            for config in &job.configs {
                let usable = config.iterations_per_s.is_finite()
                    && config.iterations_per_s > 0.0
                    && config.watts.is_finite()
                    && config.watts >= 0.0
                    && config.gpus >= 1
                    && config.gpus <= self.gpus;
                if !usable {
                    return Err(BoundError::Input(format!(
                        "job {j}: configuration {config:?} cannot run on {} GPUs",
                        self.gpus
                    )));
                }
            }
        }
        Ok(())
    }

    /// Budget units per watt-second in each slot, and after the horizon: 1/3.6e6 kWh for an
    /// energy budget; times the slot's lowest carbon intensity / 1000 (kg) for a carbon
    /// budget (the whole series' lowest after the horizon), so the carbon charged never
    /// exceeds the carbon emitted wherever in the slot the work runs.
    pub fn budget_per_watt_second(&self) -> (Vec<f64>, f64) {
        const KWH_PER_JOULE: f64 = 1.0 / 3.6e6;
        match &self.budget {
            BudgetKind::Energy => (vec![KWH_PER_JOULE; self.slots.count()], KWH_PER_JOULE),
            BudgetKind::Carbon(series) => {
                let per_slot = (0..self.slots.count())
                    .map(|t| {
                        let (from, to) = (self.slots.start_s(t), self.slots.end_s(t));
                        KWH_PER_JOULE * lowest_intensity(series, from, to) / 1000.0
                    })
                    .collect();
                let lowest = series
                    .g_per_kwh
                    .iter()
                    .copied()
                    .fold(f64::INFINITY, f64::min);
                (per_slot, KWH_PER_JOULE * lowest / 1000.0)
            }
        }
    }

    /// Seconds of slot `t` (of the horizon) that job `j` can use (0 before its arrival).
    pub fn available_s(&self, job: &FrontierJob, slot: usize) -> f64 {
        let (start, end) = (self.slots.start_s(slot), self.slots.end_s(slot));
        (end - job.arrival_s.max(start)).clamp(0.0, end - start)
    }

    /// The slot a job arrives in ([`Slots::count`] after the horizon).
    pub fn arrival_slot(&self, job: &FrontierJob) -> usize {
        self.slots.slot_of(job.arrival_s)
    }

    /// GPU-seconds slot `t` holds: `G · |t|`.
    pub fn capacity(&self, slot: usize) -> f64 {
        f64::from(self.gpus) * self.slots.length_s(slot)
    }

    /// The least budget any schedule needs: every job's work at its most frugal
    /// configuration, charged at the lowest rate any slot has. Below it no schedule exists.
    pub fn least_budget(&self) -> f64 {
        let (per_slot, after) = self.budget_per_watt_second();
        let cheapest = per_slot.iter().copied().fold(after, f64::min);
        self.jobs
            .iter()
            .map(|job| job.least_watt_seconds() * cheapest)
            .sum()
    }
}

/// The lowest intensity of a step series over `[from_s, to_s)`.
fn lowest_intensity(series: &CarbonSeries, from_s: f64, to_s: f64) -> f64 {
    let mut lowest = series.at(from_s);
    let mut t = from_s;
    loop {
        // The start of the next step after `t`, in absolute time.
        let period_start = (t / series.period_s).floor() * series.period_s;
        let within = t - period_start;
        let k = series.start_s.partition_point(|&s| s <= within);
        let next = match series.start_s.get(k) {
            Some(&s) => period_start + s,
            None => period_start + series.period_s,
        };
        if next >= to_s {
            return lowest;
        }
        lowest = lowest.min(series.at(next));
        t = next;
    }
}
