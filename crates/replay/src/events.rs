//! The engine's events and their order: time, then completions before observations before
//! arrivals before rounds before ticks, then insertion order. A round at the time of
//! arrivals or completions so sees all of them.

use std::cmp::Ordering;

use crate::policy::RoundKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum EventKind {
    Completion {
        task: u32,
        generation: u32,
    },
    Observation {
        task: u32,
        start: u32,
    },
    Arrival {
        task: u32,
    },
    /// A policy's round. A grid round is always live; of the event rounds only the latest
    /// scheduled one (its generation) is, and none at a grid round's instant.
    Round {
        kind: RoundKind,
        generation: u32,
    },
    Tick,
}

impl EventKind {
    pub fn label(self) -> &'static str {
        match self {
            EventKind::Completion { .. } => "completion",
            EventKind::Observation { .. } => "observation",
            EventKind::Arrival { .. } => "arrival",
            EventKind::Round { .. } => "round",
            EventKind::Tick => "tick",
        }
    }
}

/// A heap entry: time, then kind order, then insertion order.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Event {
    pub time_s: f64,
    pub kind: EventKind,
    pub seq: u64,
}

impl Event {
    pub fn rank(&self) -> u8 {
        match self.kind {
            EventKind::Completion { .. } => 0,
            EventKind::Observation { .. } => 1,
            EventKind::Arrival { .. } => 2,
            EventKind::Round { .. } => 3,
            EventKind::Tick => 4,
        }
    }
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        self.time_s
            .total_cmp(&other.time_s)
            .then(self.rank().cmp(&other.rank()))
            .then(self.seq.cmp(&other.seq))
    }
}
