//! The restricted master LP of column generation (`colgen`), kept in one HiGHS instance
//! that grows by columns and changes only a bound between budgets:
//!
//! ```text
//! min  Σ_k jct_k·x_k / 3600                                   (hours, for scaling)
//! s.t. Σ_{k of job j} x_k = 1                       ∀ j        (convexity, dual π_j)
//!      Σ_k gpu_s[k,t]·x_k / cap_t ≤ 1               ∀ t        (GPU-seconds, dual −μ_t·cap_t)
//!      Σ_k budget_k·x_k / B_ref − y ≤ 0                        (budget, dual −λ·B_ref)
//!      x ≥ 0,  0 ≤ y ≤ B / B_ref
//! ```
//! The budget enters as the bound of the column `y`, so moving to another budget changes a
//! bound, not the matrix, and keeps the basis. Rows are scaled to order 1; the duals are
//! returned unscaled (seconds per GPU-second, seconds per budget unit).

use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use super::job::JobSchedule;
use super::rates::BudgetRates;
use super::FrontierInstance;
use crate::error::BoundError;
use highs::{Col, ColProblem, HighsModelStatus, Model, Row, Sense};

/// A column of the master: one whole schedule of one job.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ScheduleColumn {
    pub job: usize,
    pub jct_s: f64,
    pub budget_used: f64,
    /// `(slot, GPU-seconds)`, slots of the horizon only.
    pub gpu_seconds: Vec<(usize, f64)>,
}

impl ScheduleColumn {
    /// Job `j` waiting out the horizon, then running its most frugal configuration (no
    /// slot capacity used): a schedule at every budget at or above the least one.
    pub(crate) fn after_horizon(
        instance: &FrontierInstance,
        rates: &BudgetRates,
        j: usize,
    ) -> ScheduleColumn {
        let job = &instance.jobs[j];
        let waited_s = (instance.slots.horizon_s() - job.arrival_s).max(0.0);
        let rate = rates.after_horizon;
        let (run_s, budget_used) = job
            .configs
            .iter()
            .map(|c| {
                let run_s = job.iterations / c.iterations_per_s;
                (run_s, run_s * c.watts * rate)
            })
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.total_cmp(&b.0)))
            .expect("a validated job has a configuration");
        ScheduleColumn {
            job: j,
            jct_s: waited_s + run_s,
            budget_used,
            gpu_seconds: Vec::new(),
        }
    }
}

pub(crate) struct ScheduleMaster {
    model: Option<Model>,
    convexity: Vec<Row>,
    capacity: Vec<Row>,
    capacity_scale: Vec<f64>,
    budget_row: Row,
    budget_scale: f64,
    spend: Col,
    /// Every column, in the order added (the order of [`MasterDuals::weights`]).
    pub columns: Vec<ScheduleColumn>,
}

/// The master's optimum: its value and unscaled duals.
pub(crate) struct MasterDuals {
    pub total_jct_s: f64,
    /// π_j, seconds.
    pub job: Vec<f64>,
    /// μ_t ≥ 0, seconds per GPU-second.
    pub gpu_second: Vec<f64>,
    /// λ ≥ 0, seconds per budget unit.
    pub budget: f64,
    /// `x_k` of each column, in the order added: the LP's mix of schedules.
    pub weights: Vec<f64>,
}

const HOURS: f64 = 1.0 / 3600.0;

impl ScheduleMaster {
    /// Rows for `jobs` jobs and slots of `capacity` GPU-seconds; budgets scaled by
    /// `budget_scale` (a typical budget).
    pub fn new(
        jobs: usize,
        capacity: &[f64],
        budget_scale: f64,
        threads: Option<u32>,
    ) -> Result<Self, BoundError> {
        let mut problem = ColProblem::default();
        let convexity: Vec<Row> = (0..jobs).map(|_| problem.add_row(1.0..=1.0)).collect();
        let capacity_rows: Vec<Row> = capacity.iter().map(|_| problem.add_row(..=1.0)).collect();
        let budget_row = problem.add_row(..=0.0);
        let mut model = problem
            .try_optimise(Sense::Minimise)
            .map_err(|e| format!("HiGHS rejected the frontier master: {e:?}"))?;
        let spend = model
            .try_add_column(0.0, 0.0..=0.0, [(budget_row, -1.0)])
            .map_err(|e| format!("HiGHS refused the spend column: {e:?}"))?;
        model.make_quiet();
        if let Some(threads) = threads {
            model
                .try_set_option("threads", threads as i32)
                .map_err(|e| format!("HiGHS option threads: {e:?}"))?;
        }
        Ok(ScheduleMaster {
            model: Some(model),
            convexity,
            capacity: capacity_rows,
            capacity_scale: capacity.iter().map(|c| 1.0 / c).collect(),
            budget_row,
            budget_scale: 1.0 / budget_scale,
            spend,
            columns: Vec::new(),
        })
    }

    /// Sets the budget `B` (the bound of the spend column).
    pub fn set_budget(&mut self, budget: f64) {
        let model = self.model.as_mut().expect("master present between solves");
        model.change_column_bounds(self.spend, 0.0..=budget * self.budget_scale);
    }

    pub fn add(&mut self, column: &ScheduleColumn) -> Result<(), BoundError> {
        let model = self.model.as_mut().expect("master present between solves");
        let mut factors = Vec::with_capacity(column.gpu_seconds.len() + 2);
        factors.push((self.convexity[column.job], 1.0));
        for &(slot, seconds) in &column.gpu_seconds {
            let scaled = seconds * self.capacity_scale[slot];
            if scaled > 1e-12 {
                factors.push((self.capacity[slot], scaled));
            }
        }
        let budget = column.budget_used * self.budget_scale;
        if budget > 0.0 {
            factors.push((self.budget_row, budget));
        }
        model
            .try_add_column(column.jct_s * HOURS, 0.0.., factors)
            .map_err(|e| format!("HiGHS refused a schedule column: {e:?}"))?;
        self.columns.push(column.clone());
        Ok(())
    }

    /// Solves within `time_limit_s`; `None` when time ran out. By interior point without
    /// crossover: on `trace-64gpu-x3` (34,556 columns) simplex re-solves from the previous
    /// basis after a budget change took 55–91 s, a cold interior-point solve 21–24 s; its
    /// duals are central, which also steadies the pricing. Where it stops short of its
    /// tolerances, the simplex method solves again.
    pub fn solve(&mut self, time_limit_s: f64) -> Result<Option<MasterDuals>, BoundError> {
        let clock = std::time::Instant::now();
        match self.solve_by("ipm", time_limit_s)? {
            Solved::Optimal(duals) => Ok(Some(duals)),
            Solved::OutOfTime => Ok(None),
            Solved::Other(_) => {
                let left = time_limit_s - clock.elapsed().as_secs_f64();
                if left <= 0.0 {
                    return Ok(None);
                }
                match self.solve_by("simplex", left)? {
                    Solved::Optimal(duals) => Ok(Some(duals)),
                    Solved::OutOfTime => Ok(None),
                    Solved::Other(status) => Err(BoundError::Solver(format!(
                        "the frontier master ended with status {status:?}"
                    ))),
                }
            }
        }
    }

    /// One solve by HiGHS's `solver` (`ipm` or `simplex`).
    fn solve_by(&mut self, solver: &str, time_limit_s: f64) -> Result<Solved, BoundError> {
        let mut model = self.model.take().expect("master present between solves");
        gapbench_ilp::solver::set_time_limit(&mut model, time_limit_s)?;
        for (option, value) in [("solver", solver), ("run_crossover", "off")] {
            model
                .try_set_option(option, value)
                .map_err(|e| format!("HiGHS option {option}: {e:?}"))?;
        }
        let solved = model
            .try_solve()
            .map_err(|e| format!("HiGHS failed on the frontier master: {e:?}"))?;
        let result = match solved.status() {
            HighsModelStatus::ReachedTimeLimit => Solved::OutOfTime,
            HighsModelStatus::Optimal => {
                let solution = solved.get_solution();
                let duals = solution.dual_rows();
                let jobs = self.convexity.len();
                let slots = self.capacity.len();
                Solved::Optimal(MasterDuals {
                    total_jct_s: solved.objective_value() / HOURS,
                    job: duals[..jobs].iter().map(|d| d / HOURS).collect(),
                    gpu_second: (0..slots)
                        .map(|t| (-duals[jobs + t]).max(0.0) * self.capacity_scale[t] / HOURS)
                        .collect(),
                    budget: (-duals[jobs + slots]).max(0.0) * self.budget_scale / HOURS,
                    // The spend column comes first.
                    weights: solution.columns()[1..].to_vec(),
                })
            }
            other => Solved::Other(other),
        };
        self.model = Some(Model::from(solved));
        Ok(result)
    }
}

/// How one solve of the master ended.
enum Solved {
    Optimal(MasterDuals),
    OutOfTime,
    Other(HighsModelStatus),
}

fn column_of(job: usize, schedule: JobSchedule) -> ScheduleColumn {
    ScheduleColumn {
        job,
        jct_s: schedule.jct_s,
        budget_used: schedule.budget_used,
        gpu_seconds: schedule.gpu_seconds,
    }
}

/// Columns, none twice: those already in the master (by hash) and those waiting to go in.
#[derive(Default)]
pub(crate) struct ColumnSet {
    seen: HashSet<u64>,
    pending: Vec<ScheduleColumn>,
}

impl ColumnSet {
    /// Keeps job `job`'s `schedule` unless an identical column is in; true when kept.
    pub(crate) fn insert(&mut self, job: usize, schedule: JobSchedule) -> bool {
        self.insert_column(column_of(job, schedule))
    }

    pub(crate) fn insert_column(&mut self, column: ScheduleColumn) -> bool {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        column.job.hash(&mut hasher);
        column.jct_s.to_bits().hash(&mut hasher);
        column.budget_used.to_bits().hash(&mut hasher);
        for &(slot, seconds) in &column.gpu_seconds {
            slot.hash(&mut hasher);
            seconds.to_bits().hash(&mut hasher);
        }
        let new = self.seen.insert(hasher.finish());
        if new {
            self.pending.push(column);
        }
        new
    }

    /// Takes in `other`'s columns not already here.
    pub(crate) fn absorb(&mut self, other: ColumnSet) {
        for column in other.pending {
            self.insert_column(column);
        }
    }

    /// Columns kept and not yet in a master.
    pub(crate) fn len(&self) -> usize {
        self.pending.len()
    }

    /// Adds the waiting columns to `master`; how many.
    pub(crate) fn flush(&mut self, master: &mut ScheduleMaster) -> Result<usize, BoundError> {
        let added = self.pending.len();
        for column in self.pending.drain(..) {
            master.add(&column)?;
        }
        Ok(added)
    }
}
