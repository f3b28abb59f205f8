//! A snapshot: the exact objects an arrival sweep saw at a checkpoint — the cluster, the
//! tasks that had arrived, and where the heuristic put each of them.

use gapbench_model::{
    check_placements, Cluster, Placement, PreparedWorkload, SweepEvent, Task, TypicalPods,
};

use crate::error::SolveError;
use crate::shapes::Shapes;
use crate::solve::SolveOptions;

/// What an online policy faced and did up to a checkpoint of an arrival sweep. Borrows the
/// simulator's own cluster, task list and typical pods: nothing is re-parsed or copied, so
/// the solver answers for exactly the task set the heuristic saw.
#[derive(Debug, Clone)]
pub struct Snapshot<'a> {
    pub cluster: &'a Cluster,
    /// The FGD target workload the fragmentation measure uses (spec §5.7).
    pub typical: &'a TypicalPods,
    /// Arrived tasks in arrival order: the prefix of `PreparedWorkload::events`.
    pub tasks: &'a [Task],
    /// The heuristic's placement of each arrived task; `None` for a task that failed.
    pub heuristic: Vec<Option<Placement>>,
    /// The checkpoint: arrived GPU demand as a percentage of cluster GPU capacity.
    pub checkpoint_pct: f64,
}

impl<'a> Snapshot<'a> {
    /// The state of `sweep` when arrived GPU demand reaches `checkpoint_pct` % of the
    /// cluster's GPU capacity: the longest prefix of events whose cumulative arrived GPU
    /// milli is ≤ `checkpoint_pct/100 × capacity` (the same rule as the integer-percent grid).
    ///
    /// Errors when the sweep does not belong to `prepared` (different event count) or the
    /// checkpoint is not a finite non-negative number.
    pub fn at_checkpoint(
        cluster: &'a Cluster,
        prepared: &'a PreparedWorkload,
        sweep: &[SweepEvent],
        checkpoint_pct: f64,
    ) -> Result<Self, SolveError> {
        if !checkpoint_pct.is_finite() || checkpoint_pct < 0.0 {
            return Err(SolveError::Problem(format!(
                "checkpoint {checkpoint_pct} % is not a non-negative percentage"
            )));
        }
        let limit_milli = checkpoint_pct / 100.0 * cluster.gpu_capacity_milli() as f64;
        let events = sweep.partition_point(|r| r.arrived_gpu_milli as f64 <= limit_milli);
        let mut snapshot = Self::after_events(cluster, prepared, sweep, events)?;
        snapshot.checkpoint_pct = checkpoint_pct;
        Ok(snapshot)
    }

    /// The state of `sweep` after its first `events` events; `checkpoint_pct` is set to the
    /// arrived GPU demand then, in % of cluster GPU capacity (0 for a cluster without GPUs).
    pub fn after_events(
        cluster: &'a Cluster,
        prepared: &'a PreparedWorkload,
        sweep: &[SweepEvent],
        events: usize,
    ) -> Result<Self, SolveError> {
        if sweep.len() != prepared.events.len() {
            return Err(SolveError::Problem(format!(
                "the sweep has {} events but the workload {}: they do not belong together",
                sweep.len(),
                prepared.events.len()
            )));
        }
        if events > sweep.len() {
            return Err(SolveError::Problem(format!(
                "{events} events asked for, the sweep has {}",
                sweep.len()
            )));
        }
        let arrived = events
            .checked_sub(1)
            .map_or(0, |last| sweep[last].arrived_gpu_milli);
        let capacity = cluster.gpu_capacity_milli();
        let checkpoint_pct = if capacity > 0 {
            100.0 * arrived as f64 / capacity as f64
        } else {
            0.0
        };
        let mut heuristic = vec![None; events];
        for event in &sweep[..events] {
            if let Some(placement) = event.placement {
                heuristic[event.task] = Some(placement);
            }
        }
        Ok(Snapshot {
            cluster,
            typical: &prepared.typical,
            tasks: &prepared.events[..events],
            heuristic,
            checkpoint_pct,
        })
    }

    /// A snapshot from explicit parts (tests, hand-made instances). The placement must be
    /// valid: it is checked here.
    pub fn new(
        cluster: &'a Cluster,
        typical: &'a TypicalPods,
        tasks: &'a [Task],
        heuristic: Vec<Option<Placement>>,
        checkpoint_pct: f64,
    ) -> Result<Self, SolveError> {
        let snapshot = Snapshot {
            cluster,
            typical,
            tasks,
            heuristic,
            checkpoint_pct,
        };
        snapshot.check()?;
        Ok(snapshot)
    }

    /// Runs the independent checker on the heuristic's placement.
    pub fn check(&self) -> Result<(), SolveError> {
        if self.heuristic.len() != self.tasks.len() {
            return Err(SolveError::Problem(format!(
                "{} placements for {} tasks",
                self.heuristic.len(),
                self.tasks.len()
            )));
        }
        check_assignment(self.cluster, self.tasks, &self.heuristic)
    }

    /// The shapes of the tasks `task_ids` once `options` and the snapshot are checked: the
    /// first step of every solve.
    pub(crate) fn checked_shapes(
        &self,
        options: &SolveOptions,
        task_ids: impl IntoIterator<Item = usize>,
    ) -> Result<Shapes, String> {
        options.validate()?;
        self.check()?;
        Shapes::group(self.tasks, task_ids)
    }

    /// Indices of the tasks the heuristic placed, in arrival order.
    pub fn placed_tasks(&self) -> Vec<usize> {
        (0..self.tasks.len())
            .filter(|&i| self.heuristic[i].is_some())
            .collect()
    }
}

/// `check_placements` on a per-task assignment, as one readable error.
pub fn check_assignment(
    cluster: &Cluster,
    tasks: &[Task],
    assignment: &[Option<Placement>],
) -> Result<(), SolveError> {
    let violations = check_placements(
        cluster,
        tasks
            .iter()
            .zip(assignment)
            .filter_map(|(task, placement)| placement.map(|p| (task, p))),
    );
    if violations.is_empty() {
        return Ok(());
    }
    let shown: Vec<String> = violations.iter().take(5).map(|v| v.to_string()).collect();
    Err(SolveError::Problem(format!(
        "{} placement violation(s): {}{}",
        violations.len(),
        shown.join("; "),
        if violations.len() > 5 { "; …" } else { "" }
    )))
}
