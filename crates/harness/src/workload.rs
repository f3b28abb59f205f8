//! Where a run's cluster and tasks come from: files the user names, or the embedded
//! openb-like default. Also fingerprints the inputs for the manifest.

use std::path::{Path, PathBuf};

use anyhow::Result;
use gapbench_model::workload::{
    load_nodes_csv, load_tasks_csv, openb_like_cluster, openb_like_tasks, OPENB_LIKE_NODE_TYPES,
    OPENB_LIKE_TASK_SHAPES,
};
use gapbench_model::{Adjustment, Cluster, CpuPowerProfile, InputRules, Task};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A cluster and a task list, with where each came from.
#[derive(Debug, Clone)]
pub struct Workload {
    pub cluster: Cluster,
    pub tasks: Vec<Task>,
    pub inputs: Vec<InputFingerprint>,
}

/// One input, named and hashed so a result can be traced to exactly what produced it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct InputFingerprint {
    pub role: String,
    /// A file path as given, or `embedded:openb-like/…`.
    pub source: String,
    pub sha256: String,
    /// Values the loader converted as the reference simulator does (none for the shipped
    /// traces), so a result says when its input was not taken literally.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adjustments: Vec<Adjustment>,
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
        adjustments: Vec::new(),
    })
}

fn fingerprint_embedded(role: &str, name: &str, text: &str) -> InputFingerprint {
    InputFingerprint {
        role: role.into(),
        source: format!("embedded:{name}"),
        sha256: sha256_hex(text.as_bytes()),
        adjustments: Vec::new(),
    }
}

impl Workload {
    /// Loads `nodes` and `tasks` files, each falling back to the embedded default. Values
    /// the task loader converts under `rules` are recorded in the task input's fingerprint
    /// and printed as warnings (see [`Workload::warnings`]).
    pub fn load(
        nodes: Option<&Path>,
        tasks: Option<&Path>,
        cpu_power: CpuPowerProfile,
        rules: InputRules,
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
                let mut fingerprint = fingerprint_file("tasks", path)?;
                let list = load_tasks_csv(path, rules)?;
                fingerprint.adjustments = list.adjustments;
                inputs.push(fingerprint);
                list.tasks
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

    /// One warning line per kind of converted value, naming the file.
    pub fn warnings(&self) -> Vec<String> {
        self.inputs
            .iter()
            .flat_map(|input| input.adjustments.iter().map(|a| a.warning(&input.source)))
            .collect()
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
