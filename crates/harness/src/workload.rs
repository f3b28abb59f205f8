//! Where a run's cluster and tasks come from: files the user names, or the embedded
//! openb-like default. Also fingerprints the inputs for the manifest.

use std::path::{Path, PathBuf};

use anyhow::Result;
use gapbench_model::workload::{
    load_nodes_csv, load_tasks_csv, openb_like_cluster, openb_like_tasks, OPENB_LIKE_NODE_TYPES,
    OPENB_LIKE_TASK_SHAPES,
};
use gapbench_model::{Cluster, CpuPowerProfile, Task};
use sha2::{Digest, Sha256};

pub use gapbench_results::InputFingerprint;

/// A cluster and a task list, with where each came from.
#[derive(Debug, Clone)]
pub struct Workload {
    pub cluster: Cluster,
    pub tasks: Vec<Task>,
    pub inputs: Vec<InputFingerprint>,
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn fingerprint_file(role: &str, path: &Path) -> Result<InputFingerprint> {
    let bytes =
        std::fs::read(path).map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", path.display()))?;
    Ok(InputFingerprint {
        role: role.into(),
        source: path.display().to_string(),
        sha256: sha256_hex(&bytes),
    })
}

fn fingerprint_embedded(role: &str, name: &str, text: &str) -> InputFingerprint {
    InputFingerprint {
        role: role.into(),
        source: format!("embedded:{name}"),
        sha256: sha256_hex(text.as_bytes()),
    }
}

impl Workload {
    /// Loads `nodes` and `tasks` files, each falling back to the embedded default.
    pub fn load(
        nodes: Option<&Path>,
        tasks: Option<&Path>,
        cpu_power: CpuPowerProfile,
    ) -> Result<Workload> {
        let mut inputs = Vec::new();
        let cluster = match nodes {
            Some(path) => {
                inputs.push(fingerprint_file("nodes", path)?);
                load_nodes_csv(path, cpu_power)?
            }
            None => {
                inputs.push(fingerprint_embedded(
                    "nodes",
                    "openb-like/node-types.csv",
                    OPENB_LIKE_NODE_TYPES,
                ));
                openb_like_cluster(cpu_power)
            }
        };
        let task_list = match tasks {
            Some(path) => {
                inputs.push(fingerprint_file("tasks", path)?);
                load_tasks_csv(path)?
            }
            None => {
                inputs.push(fingerprint_embedded(
                    "tasks",
                    "openb-like/task-shapes.csv",
                    OPENB_LIKE_TASK_SHAPES,
                ));
                openb_like_tasks()
            }
        };
        Ok(Workload {
            cluster,
            tasks: task_list,
            inputs,
        })
    }

    /// A one-line description for terminals and reports.
    pub fn describe(&self) -> String {
        let sources: Vec<String> = self
            .inputs
            .iter()
            .map(|i| format!("{} {}", i.role, i.source))
            .collect();
        format!(
            "{} nodes ({} GPUs), {} tasks [{}]",
            self.cluster.len(),
            self.cluster.gpu_count(),
            self.tasks.len(),
            sources.join("; ")
        )
    }
}

/// The openb trace folder a user most likely has: `../shared/traces/openb` or `GAPBENCH_TRACES`.
pub fn default_traces_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("GAPBENCH_TRACES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("../shared/traces/openb"));
    dir.join("openb_node_list_gpu_node.csv")
        .is_file()
        .then_some(dir)
}
