//! `manifest.json`: what produced a result folder, so every number traces to a command.

use serde::Serialize;

use crate::workload::InputFingerprint;

#[derive(Debug, Clone, Serialize)]
pub struct Manifest {
    pub tool: &'static str,
    pub version: &'static str,
    pub git_revision: &'static str,
    /// The solver the binary runs, e.g. `HiGHS 1.15.1`: asked of the linked library, which
    /// may be a system one (pkg-config) rather than the source build, and whose version can
    /// move exact results and solve times.
    pub solver: String,
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
            solver: format!("HiGHS {}", gapbench_ilp::highs_version()),
            arguments: std::env::args().collect(),
            inputs,
            seeds,
            settings,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The written manifest names the HiGHS the binary runs, with its three-part version.
    #[test]
    fn manifest_names_the_linked_highs() {
        let manifest = Manifest::new(Vec::new(), vec![42], serde_json::Value::Null);
        let json = serde_json::to_value(&manifest).unwrap();
        let solver = json["solver"].as_str().expect("a solver field");
        let version = solver.strip_prefix("HiGHS ").expect(solver);
        assert_eq!(version, gapbench_ilp::highs_version());
        assert_eq!(version.split('.').count(), 3, "{solver}");
        assert!(
            version.split('.').all(|part| part.parse::<u32>().is_ok()),
            "{solver}"
        );
    }
}
