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
//!
//! The slot rows are held differenced: with a slack `s_t ≥ 0` each, row `t` is stored as
//! row `t` minus row `t − 1` (an invertible map of the equality system, so the same LP).
//! A scaled coefficient `gpu_s[k,t]/cap_t` is the share of the slot's GPUs the schedule
//! holds, constant while a job runs one configuration; differenced, a job running for a
//! week has a few entries instead of one per slot. On `trace-64gpu-x3` (1,411 slots) the
//! longest schedules span 1,407 slots and one in a hundred spans 996: their dense columns
//! were most of the master's 1.23 million entries. The slot duals are undifferenced back
//! (`y_t = y'_t − y'_{t+1}`).

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
    /// The differenced slot rows (module doc).
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
        // Row 0 is the first slot's own (share ≤ 1); every later one is its difference from
        // the slot before, whose right-hand sides cancel.
        let capacity_rows: Vec<Row> = (0..capacity.len())
            .map(|t| {
                let share = if t == 0 { 1.0 } else { 0.0 };
                problem.add_row(share..=share)
            })
            .collect();
        let budget_row = problem.add_row(..=0.0);
        // The slacks, in slot order and before every other column.
        for (t, row) in capacity_rows.iter().enumerate() {
            let mut factors = vec![(*row, 1.0)];
            if let Some(next) = capacity_rows.get(t + 1) {
                factors.push((*next, -1.0));
            }
            problem.add_column(0.0, 0.0.., factors);
        }
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
        let mut factors = Vec::with_capacity(8);
        factors.push((self.convexity[column.job], 1.0));
        let shares = column
            .gpu_seconds
            .iter()
            .map(|&(slot, seconds)| (slot, seconds * self.capacity_scale[slot]));
        for (slot, change) in differenced(shares, self.capacity.len()) {
            factors.push((self.capacity[slot], change));
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
    /// crossover: on `trace-64gpu-x3` (30,902 columns, differenced rows) a cold
    /// interior-point solve takes about 3 s at every budget, while simplex re-solves from the
    /// previous basis take 0.2 s after a small budget change but 44–88 s after a larger
    /// one; interior duals are central, which also steadies the pricing. Where it stops
    /// short of its tolerances, the simplex method solves again.
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
                let differenced = &duals[jobs..jobs + slots];
                Solved::Optimal(MasterDuals {
                    total_jct_s: solved.objective_value() / HOURS,
                    job: duals[..jobs].iter().map(|d| d / HOURS).collect(),
                    gpu_second: (0..slots)
                        .map(|t| {
                            let dual = differenced[t] - differenced.get(t + 1).unwrap_or(&0.0);
                            (-dual).max(0.0) * self.capacity_scale[t] / HOURS
                        })
                        .collect(),
                    budget: (-duals[jobs + slots]).max(0.0) * self.budget_scale / HOURS,
                    // The slacks and the spend column come first.
                    weights: solution.columns()[slots + 1..].to_vec(),
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

/// A column's slot shares `(slot, share)` as coefficients of the differenced rows: each
/// slot's share minus the slot before's, where they differ (a share starts, changes or
/// ends), for slots below `slots`. Differences within 1e-12 (equal shares computed
/// differently) are left out.
fn differenced(shares: impl Iterator<Item = (usize, f64)>, slots: usize) -> Vec<(usize, f64)> {
    let mut merged: Vec<(usize, f64)> = Vec::new();
    let mut sorted: Vec<(usize, f64)> = shares.collect();
    sorted.sort_by_key(|&(slot, _)| slot);
    for (slot, share) in sorted {
        match merged.last_mut() {
            Some((last, total)) if *last == slot => *total += share,
            _ => merged.push((slot, share)),
        }
    }
    merged.retain(|&(_, share)| share > 1e-12);
    let mut changes: Vec<(usize, f64)> = Vec::with_capacity(4);
    let mut push = |slot: usize, change: f64| {
        if slot < slots && change.abs() > 1e-12 {
            changes.push((slot, change));
        }
    };
    let mut previous: Option<(usize, f64)> = None;
    for &(slot, share) in &merged {
        let before = match previous {
            Some((t, before)) if t + 1 == slot => before,
            Some((t, before)) => {
                push(t + 1, -before);
                0.0
            }
            None => 0.0,
        };
        push(slot, share - before);
        previous = Some((slot, share));
    }
    if let Some((t, before)) = previous {
        push(t + 1, -before);
    }
    changes
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

#[cfg(test)]
mod tests {
    use super::differenced;

    /// Summing the differences slot by slot gives back every share, and zero elsewhere.
    fn undifferenced(changes: &[(usize, f64)], slots: usize) -> Vec<f64> {
        let mut shares = vec![0.0; slots];
        let mut running = 0.0;
        for (t, share) in shares.iter_mut().enumerate() {
            running += changes
                .iter()
                .filter(|&&(slot, _)| slot == t)
                .map(|&(_, change)| change)
                .sum::<f64>();
            *share = running;
        }
        shares
    }

    #[test]
    fn differenced_shares_sum_back_to_the_shares() {
        let slots = 12;
        // A partial first slot, a run at one share, a change, a gap, a repeated slot (one
        // share), and a run to the last slot.
        let shares = [
            (1, 0.25),
            (2, 0.5),
            (3, 0.5),
            (4, 0.5),
            (5, 0.125),
            (8, 0.5),
            (7, 0.25),
            (7, 0.25),
            (9, 0.5),
            (10, 0.5),
            (11, 0.5),
        ];
        let changes = differenced(shares.iter().copied(), slots);
        let mut expected = vec![0.0; slots];
        for &(t, share) in &shares {
            expected[t] += share;
        }
        assert_eq!(undifferenced(&changes, slots), expected);
        // A constant run costs two entries at most, however long: here changes at slots 1,
        // 2, 5, 6 and 7 (0.5 from 7 to 11 in one run), and none after the last slot.
        assert_eq!(changes.len(), 5, "{changes:?}");
    }

    #[test]
    fn a_run_that_ends_before_the_last_slot_is_closed() {
        let changes = differenced([(0, 1.0), (1, 1.0), (2, 1.0)].into_iter(), 6);
        assert_eq!(changes, vec![(0, 1.0), (3, -1.0)]);
        assert_eq!(
            undifferenced(&changes, 6),
            vec![1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
        );
    }
}
