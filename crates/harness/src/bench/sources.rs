//! The inputs a matrix resolves to, loaded once and shared by its cells: the sweeps' and
//! gap studies' workloads by trace, the replays' by (source, arrival scale), the budget
//! study's by setup, with their input hashes (which every cell key includes).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use gapbench_model::{CpuPowerProfile, InputRules};
use gapbench_replay::DeadlineFactors;
use serde::{Deserialize, Serialize};

use super::spec::budget::BudgetStudySpec;
use super::spec::{ReplaySpec, DEFAULT_EACO_DEADLINE_FACTOR};
use crate::replay::{ReplayInputs, TimedSource};
use crate::workload::InputFingerprint;

/// The embedded workload's trace name, used when the real traces are absent.
pub const STAND_IN_TRACE: &str = "openb-like";

/// The file of trace `trace` in a traces folder.
pub(crate) fn trace_file(trace: &str) -> String {
    format!("openb_pod_list_{trace}.csv")
}

/// Where a replay's cluster and timed tasks come from, as resolved for a matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ReplaySource {
    /// An openb trace at its real times, on the spec's node list.
    Trace { name: String },
    /// The embedded openb-like workload with times drawn per seed (the real traces absent).
    OpenbLike,
    /// EaCO's evaluation setup on `servers` 8×V100 servers, Burstable deadlines at
    /// `deadline_factor` × the solo duration.
    Eaco {
        servers: usize,
        jobs: usize,
        jobs_per_hour: f64,
        #[serde(default = "default_deadline_factor")]
        deadline_factor: f64,
    },
}

impl ReplaySource {
    /// The name rows and folders use: the trace name, `openb-like`, `eaco-<servers>` (at
    /// the default deadline factor) or `eaco-<servers>-d<σ>`.
    pub fn name(&self) -> String {
        match self {
            ReplaySource::Trace { name } => name.clone(),
            ReplaySource::OpenbLike => STAND_IN_TRACE.to_string(),
            ReplaySource::Eaco {
                servers,
                deadline_factor,
                ..
            } => {
                if *deadline_factor == DEFAULT_EACO_DEADLINE_FACTOR {
                    format!("eaco-{servers}")
                } else {
                    format!("eaco-{servers}-d{deadline_factor}")
                }
            }
        }
    }

    /// The deadline factors a replay of this source runs with.
    pub fn deadline_factors(&self) -> DeadlineFactors {
        match self {
            ReplaySource::Eaco {
                deadline_factor, ..
            } => DeadlineFactors {
                burstable: *deadline_factor,
                ..DeadlineFactors::default()
            },
            _ => DeadlineFactors::default(),
        }
    }

    /// The sources of a replay spec: its traces (or the stand-in when `traces_dir` is
    /// `None`), then one EaCO setup per cluster size.
    pub(crate) fn of_spec(spec: &ReplaySpec, real_traces: bool) -> Vec<ReplaySource> {
        let mut sources: Vec<ReplaySource> = if real_traces {
            spec.traces
                .iter()
                .map(|name| ReplaySource::Trace { name: name.clone() })
                .collect()
        } else if spec.traces.is_empty() {
            Vec::new()
        } else {
            vec![ReplaySource::OpenbLike]
        };
        if let Some(eaco) = &spec.eaco {
            for &servers in &eaco.servers {
                sources.extend(eaco.deadline_factors.iter().map(|&deadline_factor| {
                    ReplaySource::Eaco {
                        servers,
                        jobs: eaco.jobs,
                        jobs_per_hour: eaco.jobs_per_hour,
                        deadline_factor,
                    }
                }));
            }
        }
        sources
    }

    /// Loads the source's cluster and tasks at `arrival_scale`.
    pub(crate) fn load(
        &self,
        traces_dir: Option<&Path>,
        nodes_file: &str,
        gpu_models: Option<&Path>,
        arrival_scale: f64,
    ) -> Result<ReplayInputs> {
        let source = match self {
            ReplaySource::Trace { name } => {
                let dir = traces_dir.context("a trace source needs the traces folder")?;
                TimedSource::Openb {
                    nodes: Some(dir.join(nodes_file)),
                    gpu_models: gpu_models.map(Path::to_path_buf),
                    tasks: Some(dir.join(trace_file(name))),
                }
            }
            ReplaySource::OpenbLike => TimedSource::Openb {
                nodes: None,
                gpu_models: None,
                tasks: None,
            },
            ReplaySource::Eaco {
                servers,
                jobs,
                jobs_per_hour,
                ..
            } => TimedSource::Eaco {
                servers: *servers,
                jobs: *jobs,
                jobs_per_hour: *jobs_per_hour,
            },
        };
        ReplayInputs::load(
            source,
            arrival_scale,
            crate::replay::Selection::default(),
            InputRules::Reference,
            CpuPowerProfile::Reference,
        )
    }
}

fn default_deadline_factor() -> f64 {
    DEFAULT_EACO_DEADLINE_FACTOR
}

/// The loaded inputs of every (source, arrival scale) of a matrix, shared by its cells.
pub(crate) type ReplayWorkloads = BTreeMap<(String, u64), ReplayInputs>;

pub(crate) fn scale_key(arrival_scale: f64) -> u64 {
    arrival_scale.to_bits()
}

/// Loads each (source, arrival scale) once.
pub(crate) fn load_replay_workloads(
    spec: Option<&ReplaySpec>,
    sources: &[ReplaySource],
    nodes_file: &str,
    gpu_models: Option<&Path>,
    traces_dir: Option<&Path>,
) -> Result<ReplayWorkloads> {
    let mut workloads = ReplayWorkloads::new();
    let Some(spec) = spec else {
        return Ok(workloads);
    };
    for source in sources {
        for &scale in &spec.arrival_scales {
            let inputs = source.load(traces_dir, nodes_file, gpu_models, scale)?;
            workloads.insert((source.name(), scale_key(scale)), inputs);
        }
    }
    Ok(workloads)
}

/// The input fingerprints of every replay source (file hashes or generator descriptions).
pub(crate) fn replay_fingerprints(
    workloads: &ReplayWorkloads,
) -> BTreeMap<String, Vec<InputFingerprint>> {
    workloads
        .iter()
        .map(|((source, _), inputs)| (source.clone(), inputs.inputs.clone()))
        .collect()
}

/// The loaded inputs of each budget setup, by name.
pub(crate) type BudgetInputs = BTreeMap<String, ReplayInputs>;

/// Loads every setup's cluster and workload once. `files` are the node list and the trace;
/// without them the embedded openb-like workload (with drawn times) stands in.
pub(crate) fn load_budget_inputs(
    spec: Option<&BudgetStudySpec>,
    files: Option<(PathBuf, PathBuf)>,
    gpu_models: Option<&Path>,
) -> Result<BudgetInputs> {
    let Some(spec) = spec else {
        return Ok(BudgetInputs::new());
    };
    spec.setups
        .iter()
        .map(|setup| {
            let inputs = ReplayInputs::load(
                TimedSource::Openb {
                    nodes: files.as_ref().map(|f| f.0.clone()),
                    gpu_models: files.as_ref().and(gpu_models.map(Path::to_path_buf)),
                    tasks: files.as_ref().map(|f| f.1.clone()),
                },
                setup.arrival_scale,
                setup.selection(),
                InputRules::Reference,
                CpuPowerProfile::Reference,
            )
            .with_context(|| format!("[budget] setup `{}`", setup.name))?;
            Ok((setup.name.clone(), inputs))
        })
        .collect()
}

/// The input hashes of a budget study (the same files for every setup).
pub(crate) fn budget_fingerprints(inputs: &BudgetInputs) -> Vec<InputFingerprint> {
    inputs
        .values()
        .next()
        .map(|i| i.inputs.clone())
        .unwrap_or_default()
}
