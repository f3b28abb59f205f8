//! The settings of one replay.

use crate::attributes::DeadlineFactors;
use crate::colocation::ColocationModel;
use crate::energy::PowerSettings;
use crate::engine::QueueDiscipline;

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
    /// Seeds the node priority order, the policy's random choices and the derived task
    /// attributes.
    pub seed: u64,
    pub on_full: OnFull,
    pub queue: QueueDiscipline,
    pub power: PowerSettings,
    pub colocation: ColocationModel,
    pub deadlines: DeadlineFactors,
    /// Extra work (seconds) a task must redo after an undo; 0 = resume from the checkpoint.
    pub restart_overhead_s: f64,
    /// Adds a timeline row every this many seconds (none when `None`).
    pub tick_s: Option<f64>,
    /// Stops the replay at this time (seconds since the trace start).
    pub until_s: Option<f64>,
    /// Runs the independent placement checker after every event (slow; for tests).
    pub check_every_event: bool,
    /// Keeps each task's speed history in [`TaskRecord::segments`] (for tests).
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
            restart_overhead_s: 0.0,
            tick_s: None,
            until_s: None,
            check_every_event: false,
            record_segments: false,
        }
    }
}
