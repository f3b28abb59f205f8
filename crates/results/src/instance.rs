//! The instance library's file format (`gapbench gap --export DIR`): one snapshot of an
//! arrival sweep as a self-contained placement problem — node types with counts, task
//! shapes with counts, the power model and the fragment measure with their formulas — and,
//! per objective, the best placement gapbench found with its value, proven bound and
//! status, so another solver can be compared on the same numbers without gapbench.
//!
//! One file per snapshot (policy, seed, checkpoint) holds all three objectives: they share
//! the cluster, the shapes and the models, and differ only in which tasks must be placed
//! (power and fragmentation: exactly the heuristic's placed tasks; allocation: any subset of
//! the arrived ones). `workloads/instances/README.md` documents every field;
//! [`INSTANCE_FORMAT_VERSION`] changes whenever a field changes meaning.
//!
//! This module is data only (it knows no model type); `gapbench_ilp::instance` builds a file
//! from a snapshot and rebuilds the model's cluster, tasks and placements from one.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::declare_row;
use crate::{InputFingerprint, Objective, SolveStatus};

/// The `format` field of every instance file.
pub const INSTANCE_FORMAT: &str = "gapbench-instance";
/// The `format_version` this code writes and reads.
pub const INSTANCE_FORMAT_VERSION: u32 = 1;

/// The feasibility rules every placement obeys, as stated in each file.
pub const PLACEMENT_RULES: &str = "A placement puts tasks on nodes. Per node: the placed tasks' cpu_milli sum to at most the node type's cpu_milli, their memory_mib to at most its memory_mib, and at most 1001 tasks share it. A task with gpu_count = 0 uses no device. A task with gpu_count = k > 0 uses exactly k distinct devices of the node (indices 0..gpu_count-1 of its type), each giving it gpu_milli; the gpu_milli placed on one device sums to at most 1000; the node's gpu_model must be in the task's gpu_models (an empty list allows every model). A task asks either for one device in part (gpu_count = 1, gpu_milli < 1000) or for whole devices (gpu_milli = 1000).";

/// The power model (reference-semantics §6), as stated in each file.
pub const POWER_FORMULA: &str = "Total power (watts) = sum over every node of the cluster, empty ones included, of P_cpu + P_gpu. P_cpu: real_cores = ceil(cpu_milli / 2000) of the node type, sockets = ceil(real_cores / cores_per_socket), idle_cores = floor(cpu_left_milli / 2000) with cpu_left_milli the node type's cpu_milli minus the cpu_milli placed on the node, active = ceil(max(0, real_cores - idle_cores) / cores_per_socket), P_cpu = cpu_socket_idle_watts * (sockets - active) + cpu_socket_full_watts * active. P_gpu = gpu_idle_watts * (devices with nothing placed) + gpu_full_watts * (devices with any gpu_milli placed); 0 for a node without GPUs. All integers.";

/// The fragment measure (FGD, Weng et al. ATC'23; reference-semantics §5.7), as stated in
/// each file.
pub const FRAGMENTATION_FORMULA: &str = "Fragmentation (milli-GPU) = sum over every node n of the cluster, empty ones included, of F(n) = sum over typical pods p of probability_p * frag_p(n). With free_d = 1000 minus the gpu_milli placed on device d of n, free = sum of free_d, cpu_left = the node type's cpu_milli minus the cpu_milli placed on n: frag_p(n) = free when p.gpu_milli = 0, or p.gpu_models is non-empty and the node's gpu_model (none for a CPU-only node) is not in it, or cpu_left < p.cpu_milli, or fewer than p.gpu_count devices have free_d >= p.gpu_milli; otherwise frag_p(n) = sum of free_d over the devices with free_d < p.gpu_milli. Floating point (f64): another implementation agrees to about 1e-9 relative, not bit for bit.";

/// The allocation objective, as stated in each file.
pub const ALLOCATION_FORMULA: &str = "Allocated GPU (milli-GPU) = sum over placed tasks of gpu_count * gpu_milli. Maximised over every subset of the arrived tasks (shape field `arrived`); the placement's power is given as information only.";

/// One instance file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceFile {
    /// Always [`INSTANCE_FORMAT`].
    pub format: String,
    pub format_version: u32,
    /// `<policy slug>-seed<seed>-chk<checkpoint>`: also the file's stem.
    pub name: String,
    pub provenance: Provenance,
    pub placement_rules: String,
    pub node_types: Vec<InstanceNodeType>,
    pub shapes: Vec<InstanceShape>,
    pub power_model: PowerModelSpec,
    pub fragmentation_model: FragmentationModelSpec,
    /// What the online policy itself did at this checkpoint, by the same rulers.
    pub heuristic: HeuristicSolution,
    /// One per objective solved, in the order solved.
    pub problems: Vec<Problem>,
}

/// What produced the file: enough to rerun the command and get the same snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    pub tool: String,
    pub version: String,
    pub git_revision: String,
    /// The command line, as given.
    pub command: Vec<String>,
    /// The node and task lists, each with its SHA-256.
    pub inputs: Vec<InputFingerprint>,
    pub policy: String,
    pub seed: u64,
    /// Tune ratio (`None`: the workload as listed).
    pub tune: Option<f64>,
    pub task_order: String,
    pub node_order: String,
    /// `reference` or `by-gpu-model` (the CPU socket profile the power model uses).
    pub cpu_power_profile: String,
    /// Sub-cluster size when one was drawn; `None` for the whole cluster.
    pub sample_nodes: Option<usize>,
    /// The checkpoint asked for, in % of the cluster's GPU capacity.
    pub checkpoint_pct: f64,
    /// Arrived GPU demand at the cut, in % of the cluster's GPU capacity.
    pub arrived_gpu_pct: f64,
    /// `per-node`, `cg` or `relaxation`.
    pub method: String,
    pub time_limit_s: f64,
    pub mip_rel_gap: f64,
    pub threads: Option<u32>,
}

/// Identical nodes, and the power parameters of each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceNodeType {
    /// How many nodes of the cluster are of this type.
    pub count: usize,
    pub cpu_milli: u32,
    pub memory_mib: u64,
    /// `None` for a CPU-only node.
    pub gpu_model: Option<String>,
    pub gpu_count: u8,
    pub cpu_socket_idle_watts: u32,
    pub cpu_socket_full_watts: u32,
    pub cores_per_socket: u32,
    /// Per device; 0 on a node without GPUs.
    pub gpu_idle_watts: u32,
    pub gpu_full_watts: u32,
    /// P_cpu + P_gpu of an empty node of this type (a check on the formula).
    pub empty_node_watts: i64,
}

/// Interchangeable tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceShape {
    pub cpu_milli: u32,
    pub memory_mib: u64,
    pub gpu_count: u8,
    /// Per device it uses; 0 for CPU-only tasks.
    pub gpu_milli: u16,
    /// Allowed GPU models; empty = any.
    pub gpu_models: Vec<String>,
    /// Tasks of this shape that had arrived at the checkpoint (allocation chooses among them).
    pub arrived: usize,
    /// Of those, the tasks the heuristic placed: power and fragmentation place exactly these.
    pub placed: usize,
}

/// The power model's formula (parameters are per node type).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerModelSpec {
    pub formula: String,
}

/// The fragment measure: its formula and target workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FragmentationModelSpec {
    pub formula: String,
    /// The most popular task shapes of the original trace (before tuning), each with its
    /// probability; they cover `coverage_pct` % of its tasks.
    pub typical_pods: Vec<TypicalPodSpec>,
    /// Distinct task shapes in the original trace.
    pub distinct_shapes: usize,
    pub coverage_pct: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TypicalPodSpec {
    /// As the measure compares it (a 0 request counts as 100).
    pub cpu_milli: u32,
    pub gpu_milli: u16,
    pub gpu_count: u8,
    /// Empty = any model.
    pub gpu_models: Vec<String>,
    /// Tasks of the original trace with this shape.
    pub count: usize,
    pub probability: f64,
}

/// One objective's problem and the best placement gapbench found for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Problem {
    pub objective: Objective,
    /// `minimize` or `maximize`.
    pub sense: String,
    /// `watts`, `milli_gpu`.
    pub unit: String,
    /// Which tasks a placement must hold.
    pub tasks: String,
    pub formula: String,
    pub status: SolveStatus,
    /// What the status proves.
    pub status_meaning: String,
    /// The objective of `placement` (gapbench's incumbent); `None` without a placement.
    pub value: Option<f64>,
    /// Proven bound on the optimum (lower when minimising, upper when maximising).
    pub bound: Option<f64>,
    pub solve_s: f64,
    /// Allocation only: the total power of `placement`.
    pub power_watts: Option<f64>,
    /// The best placement, by node type; empty when the solve found none.
    pub placement: Vec<Configuration>,
}

/// How many nodes of one type hold exactly these tasks. Nodes of a type that no
/// configuration names are empty.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Configuration {
    /// Index into `node_types`.
    pub node_type: usize,
    pub nodes: usize,
    pub tasks: Vec<PlacedTask>,
}

/// One task of a configuration: its shape and the devices it uses there.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlacedTask {
    /// Index into `shapes`.
    pub shape: usize,
    /// Device indices on the node; empty for a CPU-only task.
    pub devices: Vec<usize>,
}

/// The online policy's own placement and its values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeuristicSolution {
    pub power_watts: f64,
    pub alloc_gpu_milli: f64,
    pub frag_milli: f64,
    pub placement: Vec<Configuration>,
}

/// The text of a status's meaning, for the file.
pub fn status_meaning(status: &SolveStatus) -> &'static str {
    match status {
        SolveStatus::Optimal => "value is optimal: value = bound",
        SolveStatus::GapLimit => "stopped at the requested relative gap: the optimum lies between bound and value",
        SolveStatus::TimeLimitWithIncumbent => "the time limit stopped the solve: the optimum lies between bound and value; more time could move either",
        SolveStatus::LpBound => "the bound is at least the configuration LP's proven optimum; branching in the time left did not close the integer gap between it and value",
        SolveStatus::Infeasible => "no placement satisfies the rules",
        SolveStatus::RelaxationBound => "bound from a by-node-type relaxation; value is the heuristic's own placement",
        SolveStatus::Unsupported(_) => "not solved (see the status text)",
        SolveStatus::Error(_) => "the solve failed (see the status text)",
    }
}

impl InstanceFile {
    /// Reads and checks the header of an instance file. Errors name the file, and for
    /// malformed JSON the line and column.
    pub fn load(path: &Path) -> Result<InstanceFile> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("{}", path.display()))
    }

    /// Parses the text of an instance file (see [`InstanceFile::load`]).
    pub fn parse(text: &str) -> Result<InstanceFile> {
        // The header first, so a file of another format or version says so rather than
        // failing on a field it lacks.
        #[derive(Deserialize)]
        struct Header {
            format: Option<String>,
            format_version: Option<u32>,
        }
        let header: Header = serde_json::from_str(text)?;
        if header.format.as_deref() != Some(INSTANCE_FORMAT) {
            bail!(
                "not a {INSTANCE_FORMAT} file (field `format` is {:?})",
                header.format
            );
        }
        if header.format_version != Some(INSTANCE_FORMAT_VERSION) {
            bail!(
                "{INSTANCE_FORMAT} version {:?}; this gapbench reads version {INSTANCE_FORMAT_VERSION}",
                header.format_version
            );
        }
        Ok(serde_json::from_str(text)?)
    }

    /// The file's JSON text: pretty-printed, with each element of a list of records
    /// (node types, shapes, typical pods, inputs, configurations) on one line, so a
    /// whole-cluster file stays small and each record reads as a row.
    pub fn to_json(&self) -> Result<String> {
        let mut value = serde_json::to_value(self)?;
        let mut rows = Vec::new();
        replace_rows(&mut value, &mut rows)?;
        let pretty = serde_json::to_string_pretty(&value)?;
        let mut text =
            String::with_capacity(pretty.len() + rows.iter().map(String::len).sum::<usize>());
        let mut rest = pretty.as_str();
        let mut replaced = 0;
        while let Some(at) = rest.find(ROW_MARKER) {
            text.push_str(&rest[..at]);
            let after = &rest[at + ROW_MARKER.len()..];
            let digits = after.find('"').context("unterminated row marker")?;
            let row: usize = after[..digits].parse().context("malformed row marker")?;
            text.push_str(rows.get(row).context("row marker out of range")?);
            replaced += 1;
            rest = &after[digits + 1..];
        }
        text.push_str(rest);
        if replaced != rows.len() {
            // A string of the file itself looked like a marker: keep the plain layout.
            text = serde_json::to_string_pretty(self)?;
        }
        text.push('\n');
        Ok(text)
    }

    /// The problem of `objective`, if it was solved.
    pub fn problem(&self, objective: Objective) -> Option<&Problem> {
        self.problems.iter().find(|p| p.objective == objective)
    }

    /// The online policy's own value for `objective`.
    pub fn heuristic_value(&self, objective: Objective) -> f64 {
        match objective {
            Objective::Power => self.heuristic.power_watts,
            Objective::Alloc => self.heuristic.alloc_gpu_milli,
            Objective::Frag => self.heuristic.frag_milli,
        }
    }
}

declare_row! {
    /// One instance and objective of an instance library (one row of `--export`'s
    /// `index.csv`): the set's values and bounds at a glance (and diff between versions).
    #[derive(Debug, Clone, PartialEq, Serialize)]
    pub struct IndexRow in "index.csv" {
        /// The instance file's name.
        name: String [Text, ""],
        /// The policy whose snapshot it is.
        policy: String [Text, ""],
        /// The seed.
        seed: u64 [Plain, ""],
        /// Sub-cluster size when one was drawn; empty for the whole cluster.
        sample_nodes: Option<usize> [Plain, ""],
        /// The checkpoint asked for, % of the cluster's GPU capacity.
        checkpoint_pct: f64 [Fixed(0), "%"],
        /// Arrived GPU demand at the cut, % of the cluster's GPU capacity.
        arrived_gpu_pct: f64 [Fixed(2), "%"],
        /// `power`, `alloc` or `frag`.
        objective: Objective [Plain, ""],
        /// `minimize` or `maximize`.
        sense: String [Text, ""],
        /// `watts` or `milli_gpu`.
        unit: String [Text, ""],
        /// How gapbench's solve ended (a solver status label).
        status: SolveStatus [Text, ""],
        /// The objective of gapbench's best placement (empty without one).
        value: Option<f64> [Fixed(3), "W | milli-GPU"],
        /// Proven bound on the optimum (lower when minimising, upper when maximising).
        bound: Option<f64> [Fixed(3), "W | milli-GPU"],
        /// The policy's own value.
        heuristic_value: f64 [Fixed(3), "W | milli-GPU"],
        /// Wall-clock time of the solve.
        solve_s: f64 [Fixed(1), "s"],
    }
}

/// A library's `index.csv` ([`IndexRow`]s), instances by name.
pub fn index_csv(files: &[InstanceFile]) -> String {
    let mut sorted: Vec<&InstanceFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let mut rows = Vec::new();
    for file in sorted {
        let p = &file.provenance;
        for problem in &file.problems {
            rows.push(IndexRow {
                name: file.name.clone(),
                policy: p.policy.clone(),
                seed: p.seed,
                sample_nodes: p.sample_nodes,
                checkpoint_pct: p.checkpoint_pct,
                arrived_gpu_pct: p.arrived_gpu_pct,
                objective: problem.objective,
                sense: problem.sense.clone(),
                unit: problem.unit.clone(),
                status: problem.status.clone(),
                value: problem.value,
                bound: problem.bound,
                heuristic_value: file.heuristic_value(problem.objective),
                solve_s: problem.solve_s,
            });
        }
    }
    IndexRow::csv(&rows)
}

/// Lists whose elements are written one per line.
const ROW_LISTS: [&str; 5] = [
    "node_types",
    "shapes",
    "typical_pods",
    "inputs",
    "placement",
];
/// What stands for a row in the pretty text until it is replaced by the row's own JSON:
/// the string `"\u{1}row:N"` as serde_json writes it (control characters escaped).
const ROW_MARKER: &str = "\"\\u0001row:";

/// Replaces every element of a [`ROW_LISTS`] list by a marker string and keeps its
/// one-line JSON in `rows`.
fn replace_rows(value: &mut serde_json::Value, rows: &mut Vec<String>) -> Result<()> {
    match value {
        serde_json::Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                match child {
                    serde_json::Value::Array(items) if ROW_LISTS.contains(&key.as_str()) => {
                        for item in items {
                            rows.push(serde_json::to_string(item)?);
                            *item =
                                serde_json::Value::String(format!("\u{1}row:{}", rows.len() - 1));
                        }
                    }
                    child => replace_rows(child, rows)?,
                }
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                replace_rows(item, rows)?;
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> InstanceFile {
        let placement = vec![Configuration {
            node_type: 0,
            nodes: 2,
            tasks: vec![
                PlacedTask {
                    shape: 0,
                    devices: vec![0],
                },
                PlacedTask {
                    shape: 1,
                    devices: vec![],
                },
            ],
        }];
        InstanceFile {
            format: INSTANCE_FORMAT.into(),
            format_version: INSTANCE_FORMAT_VERSION,
            name: "pwr200-fgd800-seed42-chk50".into(),
            provenance: Provenance {
                tool: "gapbench".into(),
                version: "0".into(),
                git_revision: "abc".into(),
                command: vec!["gapbench".into(), "gap".into()],
                inputs: Vec::new(),
                policy: "pwr:200,fgd:800".into(),
                seed: 42,
                tune: Some(1.3),
                task_order: "shuffled".into(),
                node_order: "random".into(),
                cpu_power_profile: "reference".into(),
                sample_nodes: None,
                checkpoint_pct: 50.0,
                arrived_gpu_pct: 49.5,
                method: "cg".into(),
                time_limit_s: 10.0,
                mip_rel_gap: 0.0,
                threads: Some(2),
            },
            placement_rules: PLACEMENT_RULES.into(),
            node_types: vec![InstanceNodeType {
                count: 3,
                cpu_milli: 32000,
                memory_mib: 65536,
                gpu_model: Some("T4".into()),
                gpu_count: 2,
                cpu_socket_idle_watts: 15,
                cpu_socket_full_watts: 120,
                cores_per_socket: 16,
                gpu_idle_watts: 10,
                gpu_full_watts: 70,
                empty_node_watts: 35,
            }],
            shapes: vec![
                InstanceShape {
                    cpu_milli: 4000,
                    memory_mib: 1024,
                    gpu_count: 1,
                    gpu_milli: 500,
                    gpu_models: vec![],
                    arrived: 3,
                    placed: 2,
                },
                InstanceShape {
                    cpu_milli: 2000,
                    memory_mib: 512,
                    gpu_count: 0,
                    gpu_milli: 0,
                    gpu_models: vec!["T4".into()],
                    arrived: 2,
                    placed: 2,
                },
            ],
            power_model: PowerModelSpec {
                formula: POWER_FORMULA.into(),
            },
            fragmentation_model: FragmentationModelSpec {
                formula: FRAGMENTATION_FORMULA.into(),
                typical_pods: vec![TypicalPodSpec {
                    cpu_milli: 4000,
                    gpu_milli: 500,
                    gpu_count: 1,
                    gpu_models: vec![],
                    count: 7,
                    probability: 1.0,
                }],
                distinct_shapes: 1,
                coverage_pct: 100.0,
            },
            heuristic: HeuristicSolution {
                power_watts: 400.0,
                alloc_gpu_milli: 1000.0,
                frag_milli: 1234.5,
                placement: placement.clone(),
            },
            problems: vec![Problem {
                objective: Objective::Power,
                sense: "minimize".into(),
                unit: "watts".into(),
                tasks: "place exactly `placed` tasks of every shape".into(),
                formula: POWER_FORMULA.into(),
                status: SolveStatus::LpBound,
                status_meaning: status_meaning(&SolveStatus::LpBound).into(),
                value: Some(400.0),
                bound: Some(390.5),
                solve_s: 1.25,
                power_watts: None,
                placement,
            }],
        }
    }

    #[test]
    fn a_file_reads_back_equal_with_one_record_per_line() {
        let file = sample();
        let text = file.to_json().unwrap();
        assert_eq!(InstanceFile::parse(&text).unwrap(), file);
        // Each configuration and shape is one line of its own.
        let configuration_lines = text
            .lines()
            .filter(|l| l.trim_start().starts_with("{\"node_type\":0,\"nodes\":2,"))
            .count();
        assert_eq!(configuration_lines, 2, "{text}");
        assert_eq!(
            text.lines()
                .filter(|l| l.trim_start().starts_with("{\"arrived\":"))
                .count(),
            2
        );
    }

    #[test]
    fn another_format_or_version_is_named_in_the_error() {
        let mut value = serde_json::to_value(sample()).unwrap();
        value["format_version"] = serde_json::json!(INSTANCE_FORMAT_VERSION + 1);
        let error = InstanceFile::parse(&value.to_string())
            .unwrap_err()
            .to_string();
        assert!(error.contains("version"), "{error}");
        value["format"] = serde_json::json!("something-else");
        let error = InstanceFile::parse(&value.to_string())
            .unwrap_err()
            .to_string();
        assert!(error.contains("not a gapbench-instance file"), "{error}");
        let error = InstanceFile::parse("{\n  \"format\": ")
            .unwrap_err()
            .to_string();
        assert!(error.contains("line 2"), "{error}");
    }

    #[test]
    fn a_file_on_disk_that_fails_names_its_path() {
        let dir = std::env::temp_dir().join(format!("gapbench-instance-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("broken.json");
        std::fs::write(
            &path,
            "{\"format\": \"gapbench-instance\", \"format_version\": 1}",
        )
        .unwrap();
        let error = format!("{:#}", InstanceFile::load(&path).unwrap_err());
        assert!(error.contains("broken.json"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_index_has_one_row_per_objective_with_the_mix_quoted() {
        let index = index_csv(&[sample()]);
        let mut lines = index.lines();
        assert_eq!(
            lines.next(),
            Some("name,policy,seed,sample_nodes,checkpoint_pct,arrived_gpu_pct,objective,sense,unit,status,value,bound,heuristic_value,solve_s")
        );
        assert_eq!(
            lines.next(),
            Some("pwr200-fgd800-seed42-chk50,\"pwr:200,fgd:800\",42,,50,49.50,power,minimize,watts,lp_bound,400.000,390.500,400.000,1.2")
        );
        assert_eq!(lines.next(), None);
    }
}
