//! A replay cell and its record: the data the replay kind and the EaCO bounds beside it
//! share.

use gapbench_results::{ReplayRunRow, ReplayTimelineRow};
use serde::{Deserialize, Serialize};

use crate::bench::sources::ReplaySource;

/// One replay of the matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayCell {
    pub source: ReplaySource,
    pub arrival_scale: f64,
    /// `always-on` or `sleep-when-empty`.
    pub idle: String,
    pub policy: String,
    pub seed: u64,
}

/// A finished replay: its totals and its downsampled timeline, as typed rows.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct ReplayRecord {
    pub(crate) key: String,
    pub(crate) run: ReplayRunRow,
    pub(crate) timeline: Vec<ReplayTimelineRow>,
}

impl ReplayCell {
    /// `what source policy seed N`, for errors (`replay default fgd seed 42`).
    pub(crate) fn describe(&self, what: &str) -> String {
        format!(
            "{what} {} {} seed {}",
            self.source.name(),
            self.policy,
            self.seed
        )
    }
}
