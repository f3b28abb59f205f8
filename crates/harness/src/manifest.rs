//! `manifest.json`: what produced a result folder, so every number traces to a command.

use serde::Serialize;

use crate::workload::InputFingerprint;

#[derive(Debug, Clone, Serialize)]
pub struct Manifest {
    pub tool: &'static str,
    pub version: &'static str,
    pub git_revision: &'static str,
    /// The command line, as given.
    pub arguments: Vec<String>,
    pub inputs: Vec<InputFingerprint>,
    pub seeds: Vec<u64>,
    /// Run settings as resolved (defaults filled in).
    pub settings: serde_json::Value,
}

impl Manifest {
    pub fn new(
        inputs: Vec<InputFingerprint>,
        seeds: Vec<u64>,
        settings: serde_json::Value,
    ) -> Self {
        Manifest {
            tool: "gapbench",
            version: env!("CARGO_PKG_VERSION"),
            git_revision: env!("GAPBENCH_GIT_REVISION"),
            arguments: std::env::args().collect(),
            inputs,
            seeds,
            settings,
        }
    }
}
