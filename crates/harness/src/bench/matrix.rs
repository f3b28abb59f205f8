//! The resolved matrix: a spec against the inputs at hand (which traces run, or the
//! embedded stand-in in their place, and every input's hash), and those inputs loaded.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use gapbench_model::{CpuPowerProfile, InputRules};
use serde::{Deserialize, Serialize};

use super::sources::{
    budget_fingerprints, load_budget_inputs, load_replay_workloads, replay_fingerprints,
    trace_file, BudgetInputs, ReplaySource, ReplayWorkloads, STAND_IN_TRACE,
};
use super::spec::BenchSpec;
use super::store::short_hash;
use crate::workload::{InputFingerprint, Workload};

/// The inputs of a matrix, loaded once and shared by every cell.
pub(crate) struct Inputs {
    /// The sweeps' and gap studies' workloads, by trace.
    pub(crate) workloads: BTreeMap<String, Workload>,
    /// The replays' clusters and timed tasks, by (source, arrival scale).
    pub(crate) replays: ReplayWorkloads,
    /// The budget study's, by setup.
    pub(crate) budget: BudgetInputs,
}

/// The resolved matrix: what a results folder was produced from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Matrix {
    pub spec: BenchSpec,
    /// The traces actually run (the embedded stand-in when the real ones are absent).
    pub traces: Vec<String>,
    pub gap_traces: Vec<String>,
    /// True when the embedded openb-like workload stood in for missing traces.
    pub stand_in: bool,
    pub inputs: BTreeMap<String, Vec<InputFingerprint>>,
    /// The command that produced the folder (shown in the report as how to reproduce it).
    #[serde(default)]
    pub command: String,
    /// The time-mode sources actually replayed (`[replay]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replay_sources: Vec<ReplaySource>,
    /// Input hashes of each replay source, by source name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub replay_inputs: BTreeMap<String, Vec<InputFingerprint>>,
    /// Input hashes of the budget study's cluster and trace (`[budget]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub budget_inputs: Vec<InputFingerprint>,
}

impl Matrix {
    /// Resolves a spec against a traces folder, which must hold every file the spec names
    /// (a missing one is an error listing the traces it does hold); `None` runs the embedded
    /// openb-like workload in place of every trace (and the report says so at its top).
    pub(crate) fn resolve(spec: BenchSpec, traces_dir: Option<&Path>) -> Result<(Matrix, Inputs)> {
        let needs_traces = !spec.needed_traces().is_empty();
        let available = match traces_dir {
            Some(dir) if needs_traces => {
                check_traces_folder(dir, &spec)?;
                Some(dir)
            }
            _ => None,
        };
        let (traces, gap_traces, stand_in) = resolved_traces(&spec, available.is_some());
        let workloads = load_sweep_workloads(&spec, available, traces.iter().chain(&gap_traces))?;
        let inputs = workloads
            .iter()
            .map(|(t, w)| (t.clone(), w.inputs.clone()))
            .collect();
        let replay_sources = spec
            .replay
            .as_ref()
            .map(|r| ReplaySource::of_spec(r, available.is_some()))
            .unwrap_or_default();
        let mut matrix = Matrix {
            spec,
            traces,
            gap_traces,
            stand_in,
            inputs,
            command: String::new(),
            replay_sources,
            replay_inputs: BTreeMap::new(),
            budget_inputs: Vec::new(),
        };
        let replays = load_replay_workloads(
            matrix.spec.replay.as_ref(),
            &matrix.replay_sources,
            &matrix.spec.nodes,
            matrix.spec.gpu_models_file.as_deref(),
            available,
        )?;
        matrix.replay_inputs = replay_fingerprints(&replays);
        let budget_files = matrix.spec.budget.as_ref().and_then(|study| {
            let dir = traces_dir?;
            let files = (
                dir.join(&matrix.spec.nodes),
                dir.join(trace_file(&study.trace)),
            );
            (files.0.is_file() && files.1.is_file()).then_some(files)
        });
        let budget = load_budget_inputs(
            matrix.spec.budget.as_ref(),
            budget_files,
            matrix.spec.gpu_models_file.as_deref(),
        )?;
        matrix.budget_inputs = budget_fingerprints(&budget);
        let inputs = Inputs {
            workloads,
            replays,
            budget,
        };
        Ok((matrix, inputs))
    }

    /// A short hash of a result's kind, the tool version, policy (or policies), seed, tune
    /// ratio, `extra` settings and the trace's input hashes: two results with equal keys are
    /// the same.
    pub(crate) fn key(
        &self,
        kind: &str,
        trace: &str,
        policy: &str,
        seed: u64,
        extra: &str,
    ) -> String {
        let head = format!(
            "{kind}|{}|{policy}|{seed}|{}|",
            env!("CARGO_PKG_VERSION"),
            self.spec.tune
        );
        let inputs = self.inputs.get(trace).into_iter().flatten();
        short_hash([head.as_str(), extra], inputs.map(|i| i.sha256.as_str()))
    }

    /// Refuses a matrix read back from a folder (a shard to merge) that is not what its spec
    /// resolves to: an invalid spec, traces or replay sources other than the spec's, or a
    /// trace without input hashes. A damaged `matrix.json` that lost its traces would
    /// otherwise merge as complete with no cell at all.
    pub fn check_resolved(&self) -> Result<()> {
        self.spec.validate()?;
        let names_traces = !self.spec.needed_traces().is_empty();
        if self.stand_in && !names_traces {
            bail!("the embedded workload stood in, yet the spec names no trace");
        }
        let real_traces = names_traces && !self.stand_in;
        let (traces, gap_traces, _) = resolved_traces(&self.spec, real_traces);
        if (&traces, &gap_traces) != (&self.traces, &self.gap_traces) {
            bail!(
                "traces {:?} and gap traces {:?} are not those its spec runs ({traces:?}, {gap_traces:?})",
                self.traces,
                self.gap_traces
            );
        }
        let sources = self
            .spec
            .replay
            .as_ref()
            .map(|r| ReplaySource::of_spec(r, real_traces))
            .unwrap_or_default();
        if sources != self.replay_sources {
            bail!("its replay sources are not those its spec runs");
        }
        if let Some(trace) = traces
            .iter()
            .chain(&gap_traces)
            .find(|t| !self.inputs.contains_key(*t))
        {
            bail!("trace `{trace}` has no input hashes");
        }
        if let Some(source) = sources
            .iter()
            .find(|s| !self.replay_inputs.contains_key(&s.name()))
        {
            bail!("replay source `{}` has no input hashes", source.name());
        }
        Ok(())
    }

    /// Whether two folders ran the same matrix (whatever the command line was).
    pub fn same_runs(&self, other: &Matrix) -> bool {
        (
            &self.spec,
            &self.traces,
            &self.gap_traces,
            self.stand_in,
            &self.inputs,
            (
                &self.replay_sources,
                &self.replay_inputs,
                &self.budget_inputs,
            ),
        ) == (
            &other.spec,
            &other.traces,
            &other.gap_traces,
            other.stand_in,
            &other.inputs,
            (
                &other.replay_sources,
                &other.replay_inputs,
                &other.budget_inputs,
            ),
        )
    }
}

/// The traces a spec runs (sweeps', gap studies') and whether the embedded stand-in runs in
/// their place: the spec's own with `real_traces`, else the stand-in for each kind of study
/// that names a trace.
/// The sweep workload of each trace: the spec's node list (with its GPU-model file) and
/// the trace from `available`, else the embedded openb-like default.
fn load_sweep_workloads<'t>(
    spec: &BenchSpec,
    available: Option<&Path>,
    traces: impl Iterator<Item = &'t String>,
) -> Result<BTreeMap<String, Workload>> {
    let mut workloads = BTreeMap::new();
    for trace in traces {
        if workloads.contains_key(trace) {
            continue;
        }
        let (nodes, tasks) = match available {
            Some(dir) => (
                Some(dir.join(&spec.nodes)),
                Some(dir.join(trace_file(trace))),
            ),
            None => (None, None),
        };
        let gpu_models = available.and(spec.gpu_models_file.as_deref());
        let workload = Workload::load(
            nodes.as_deref(),
            gpu_models,
            tasks.as_deref(),
            CpuPowerProfile::Reference,
            InputRules::Reference,
        )?;
        workload.require_gpus()?;
        workloads.insert(trace.clone(), workload);
    }
    Ok(workloads)
}

fn resolved_traces(spec: &BenchSpec, real_traces: bool) -> (Vec<String>, Vec<String>, bool) {
    if real_traces {
        let gap_traces = spec.gaps.as_ref().map(|g| g.traces.clone());
        (spec.traces.clone(), gap_traces.unwrap_or_default(), false)
    } else if spec.needed_traces().is_empty() {
        (Vec::new(), Vec::new(), false)
    } else {
        let stand_in = || vec![STAND_IN_TRACE.to_string()];
        let traces = if spec.traces.is_empty() {
            Vec::new()
        } else {
            stand_in()
        };
        let gap_traces = spec.gaps.as_ref().map(|_| stand_in()).unwrap_or_default();
        (traces, gap_traces, true)
    }
}

/// Refuses a traces folder that lacks a file the spec names: running something else in
/// its place (as the embedded stand-in once did, for every trace) would be a silent
/// substitution.
fn check_traces_folder(dir: &Path, spec: &BenchSpec) -> Result<()> {
    if !dir.is_dir() {
        bail!(
            "traces folder {} does not exist (give --traces DIR, or --stand-in to run the embedded openb-like workload instead)",
            dir.display()
        );
    }
    let mut missing: Vec<String> = Vec::new();
    if !dir.join(&spec.nodes).is_file() {
        missing.push(format!("node list {}", spec.nodes));
    }
    for trace in spec.needed_traces() {
        if !dir.join(trace_file(&trace)).is_file() {
            missing.push(format!("trace `{trace}` ({})", trace_file(&trace)));
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let mut available: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot list", dir.display()))?
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().to_string_lossy().into_owned();
            let trace = name.strip_prefix("openb_pod_list_")?.strip_suffix(".csv")?;
            Some(trace.to_string())
        })
        .collect();
    available.sort();
    bail!(
        "{} lacks {}; available: {}",
        dir.display(),
        missing.join(", "),
        if available.is_empty() {
            "no openb_pod_list_*.csv at all".to_string()
        } else {
            available.join(", ")
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spec whose node list is in Alibaba's 2026 format resolves with the GPU-model file
    /// it names: every workload's cluster has the file's models, and the file is among the
    /// inputs the cell keys hash.
    #[test]
    fn a_spec_naming_a_gpu_model_file_loads_its_node_list_with_it() {
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/spot-gpu-2026");
        let dir = std::env::temp_dir().join(format!("gapbench-matrix-gpu-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(example.join("nodes.csv"), dir.join("spot-nodes.csv")).unwrap();
        let tasks: String = (0..40)
            .map(|i| format!("t{i},4000,16384,1,{}\n", 250 * (1 + i % 4)))
            .collect();
        let header = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n";
        std::fs::write(
            dir.join("openb_pod_list_small.csv"),
            format!("{header}{tasks}"),
        )
        .unwrap();
        let text = "name = \"spot\"\nnodes = \"spot-nodes.csv\"\ngpu_models = \"gpu-models.csv\"\n\
                    traces = [\"small\"]\npolicies = [\"fgd\"]\nseeds = [1]\n";
        let spec = BenchSpec::parse(&example.join("spot.toml"), text).unwrap();
        let (matrix, inputs) = Matrix::resolve(spec, Some(&dir)).unwrap();
        let workload = &inputs.workloads["small"];
        assert_eq!(workload.cluster.gpu_count(), 207);
        let h800 = gapbench_model::GpuModel::parse("H800").unwrap();
        assert_eq!(
            workload.cluster.gpu_models.power(h800).unwrap().full_watts,
            700
        );
        assert!(matrix.inputs["small"]
            .iter()
            .any(|i| i.role == "gpu-models"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
