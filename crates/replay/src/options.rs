//! The settings of one replay.

use gapbench_model::training::Fidelity;
use gapbench_model::CarbonSeries;

use crate::attributes::DeadlineFactors;
use crate::budget::Budget;
use crate::colocation::ColocationModel;
use crate::energy::PowerSettings;

/// Which waiting tasks the policy is offered when resources free.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum QueueDiscipline {
    /// Strict FIFO (Gavel's): the oldest waiting task blocks the ones behind it.
    #[default]
    Fifo,
    /// The first waiting tasks that fit, in arrival order: a task the policy cannot place is
    /// passed over, not waited for.
    Backfill,
}

impl QueueDiscipline {
    pub fn label(self) -> &'static str {
        match self {
            QueueDiscipline::Fifo => "fifo",
            QueueDiscipline::Backfill => "backfill",
        }
    }
}

/// What happens to a task that fits nowhere on arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OnFull {
    /// It waits in the queue.
    #[default]
    Queue,
    /// It fails at once and is never retried (the arrival sweep's semantics).
    Fail,
}

/// The settings of one replay.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayOptions {
    /// Seeds the node priority order, the policy's random choices, the derived task
    /// attributes and the training jobs' workload classes.
    pub seed: u64,
    /// Applies to policies that place waiting tasks one by one; policies that plan in
    /// rounds decide for every waiting task at each round.
    pub on_full: OnFull,
    pub queue: QueueDiscipline,
    pub power: PowerSettings,
    pub colocation: ColocationModel,
    pub deadlines: DeadlineFactors,
    /// The configurations a training job may run in (`L1`: GPU count and clock).
    pub fidelity: Fidelity,
    /// A limit on job energy or its carbon: budgeted policies pace themselves to it, and the
    /// engine stops a replay that spent it with training jobs unfinished.
    pub budget: Budget,
    /// The grid's carbon intensity: with it, every replay keeps a carbon ledger.
    pub carbon: Option<CarbonSeries>,
    /// Extra work (seconds) a task must redo after an undo; 0 = resume from the checkpoint.
    pub restart_overhead_s: f64,
    /// Adds a timeline row every this many seconds (none when `None`).
    pub tick_s: Option<f64>,
    /// Stops the replay at this time (seconds since the trace start).
    pub until_s: Option<f64>,
    /// Runs the independent placement checker after every event (slow; for tests).
    pub check_every_event: bool,
    /// Keeps each task's speed and power history in [`TaskRecord::segments`] (for tests
    /// and for bounds that need who ran when).
    ///
    /// [`TaskRecord::segments`]: crate::TaskRecord::segments
    pub record_segments: bool,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            seed: 42,
            on_full: OnFull::Queue,
            queue: QueueDiscipline::Fifo,
            power: PowerSettings::default(),
            colocation: ColocationModel::default(),
            deadlines: DeadlineFactors::default(),
            fidelity: Fidelity::ElasticGpus,
            budget: Budget::Unlimited,
            carbon: None,
            restart_overhead_s: 0.0,
            tick_s: None,
            until_s: None,
            check_every_event: false,
            record_segments: false,
        }
    }
}
