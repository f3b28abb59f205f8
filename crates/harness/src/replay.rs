//! `gapbench replay`: one policy in time mode (tasks arrive at their trace times, wait, run
//! and leave), for one or more seeds, written as `timeline.csv`, `tasks.csv`,
//! `summary.json` and `manifest.json`. The engine is `gapbench_replay` (one engine for every
//! time policy); this module owns where workloads come from, which part of them a replay
//! takes (`Selection`), files and manifests.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use gapbench_model::{Cluster, CpuPowerProfile, InputRules};
use gapbench_replay::eaco_setup::{eaco_cluster, eaco_jobs};
use gapbench_replay::policies::{time_policy_with, PolicySettings};
use gapbench_replay::{
    openb_like_timed, ReplayOptions, ReplayProgress, ReplayResult, Summary, TimedWorkload,
};
use rayon::prelude::*;
use serde::Serialize;

use crate::io::{write_atomic, write_json};
use crate::manifest::Manifest;
use crate::progress::LateProgress;
use crate::workload::{
    adjustment_warnings, fingerprint_file, fingerprint_generated, load_cluster, InputFingerprint,
};

/// Where a replay's cluster and timed tasks come from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum TimedSource {
    /// openb CSVs (each falling back to the embedded openb-like default with its
    /// statistics-drawn times).
    Openb {
        nodes: Option<PathBuf>,
        /// A GPU-model file whose models the node list may use (`--gpu-models`).
        #[serde(skip_serializing_if = "Option::is_none")]
        gpu_models: Option<PathBuf>,
        tasks: Option<PathBuf>,
    },
    /// EaCO's evaluation setup: servers of 8×V100 and its four-model job mix arriving as a
    /// Poisson process (`gapbench_replay::eaco_setup`).
    Eaco {
        servers: usize,
        jobs: usize,
        jobs_per_hour: f64,
    },
}

/// Which part of a cluster and workload a replay takes, for every policy alike: small
/// instances for exact frontiers, contended slices where jobs queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Selection {
    /// Replay on N GPUs only: the first N/8 nodes (file order) of the cluster's most common 8-GPU node type, a contended slice where jobs queue (the setting the PowerFlow and GreenFlow papers evaluate). N is a multiple of 8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<u64>,
    /// Keep only the first N GPU tasks (by arrival), and no CPU-only task: small instances of training jobs for exact frontiers and quick studies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_jobs: Option<usize>,
    /// Leave out tasks that run longer than this, seconds (before --first-jobs): the trace's months-long services dominate mean JCT and a frontier's horizon; budget studies of training jobs cap them \[D\].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_duration_s: Option<f64>,
    /// Keep only the tasks that use GPUs (the training jobs of a budget study); --first-jobs implies it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gpu_tasks_only: bool,
}

impl Selection {
    /// The slice of `cluster` this selection replays on.
    pub fn cluster(&self, cluster: Cluster) -> Result<Cluster> {
        let Some(gpus) = self.gpus else {
            return Ok(cluster);
        };
        if gpus == 0 || gpus % 8 != 0 {
            bail!("--gpus takes a positive multiple of 8 (whole 8-GPU nodes); got {gpus}");
        }
        let mut counts: BTreeMap<gapbench_model::NodeTypeId, usize> = BTreeMap::new();
        for node in &cluster.nodes {
            if cluster.node_types[usize::from(node.type_id)].gpu_count == 8 {
                *counts.entry(node.type_id).or_default() += 1;
            }
        }
        let Some((&common, &available)) = counts
            .iter()
            .max_by_key(|(id, n)| (**n, std::cmp::Reverse(**id)))
        else {
            bail!("--gpus {gpus}: the cluster has no 8-GPU node");
        };
        let wanted = (gpus / 8) as usize;
        let node_type = cluster.node_types[usize::from(common)];
        if wanted > available {
            bail!(
                "--gpus {gpus}: the cluster has {available} nodes of its most common 8-GPU type ({}), {} GPUs",
                node_type.label(),
                8 * available
            );
        }
        let nodes = cluster
            .nodes
            .iter()
            .filter(|n| n.type_id == common)
            .take(wanted)
            .map(|n| (n.name.clone(), node_type));
        cluster.sibling(nodes).map_err(anyhow::Error::msg)
    }

    /// The tasks of `workload` this selection replays.
    pub fn workload(&self, mut workload: TimedWorkload) -> Result<TimedWorkload> {
        if let Some(limit_s) = self.max_duration_s {
            if !(limit_s.is_finite() && limit_s > 0.0) {
                bail!("--max-duration takes a positive number of seconds");
            }
            workload.tasks.retain(|t| t.duration_s <= limit_s);
        }
        if self.gpu_tasks_only || self.first_jobs.is_some() {
            workload.tasks.retain(|t| t.task.gpu_milli > 0);
        }
        if let Some(n) = self.first_jobs {
            workload.tasks.truncate(n);
        }
        if workload.tasks.is_empty() {
            bail!("the selection (--first-jobs, --max-duration, --gpu-tasks-only) leaves no task to replay");
        }
        Ok(workload)
    }
}

/// A replay's inputs, loaded once for every seed.
pub struct ReplayInputs {
    pub cluster: Cluster,
    pub source: TimedSource,
    /// The task list of a file source (the same for every seed); generated sources draw
    /// theirs per seed.
    file_tasks: Option<TimedWorkload>,
    pub arrival_scale: f64,
    pub selection: Selection,
    pub inputs: Vec<InputFingerprint>,
}

impl ReplayInputs {
    pub fn load(
        source: TimedSource,
        arrival_scale: f64,
        selection: Selection,
        rules: InputRules,
        cpu_power: CpuPowerProfile,
    ) -> Result<ReplayInputs> {
        if !(arrival_scale.is_finite() && arrival_scale > 0.0) {
            bail!("--arrival-scale takes a positive factor such as 10; got {arrival_scale}");
        }
        let mut inputs = Vec::new();
        let (cluster, file_tasks) = match &source {
            TimedSource::Openb {
                nodes,
                gpu_models,
                tasks,
            } => {
                let gpu_models = gpu_models.as_deref();
                let cluster = load_cluster(nodes.as_deref(), gpu_models, cpu_power, &mut inputs)?;
                let tasks = match tasks {
                    Some(path) => {
                        let mut fingerprint = fingerprint_file("tasks", path)?;
                        let workload = TimedWorkload::load_csv(path, rules)?;
                        fingerprint.adjustments = adjustment_warnings(path, &workload.adjustments);
                        inputs.push(fingerprint);
                        Some(workload)
                    }
                    None => {
                        inputs.push(fingerprint_generated(
                            "tasks",
                            "openb-like/task-shapes.csv with times from openb-like/{durations,arrivals,qos}.csv, drawn per seed",
                        ));
                        None
                    }
                };
                (cluster, tasks)
            }
            TimedSource::Eaco {
                servers,
                jobs,
                jobs_per_hour,
            } => {
                if *servers == 0
                    || *jobs == 0
                    || !jobs_per_hour.is_finite()
                    || *jobs_per_hour <= 0.0
                {
                    bail!("the EaCO setup needs at least one server, one job and a positive arrival rate");
                }
                inputs.push(fingerprint_generated(
                    "cluster and tasks",
                    &format!("eaco-setup: {servers} 8xV100 servers, {jobs} jobs at {jobs_per_hour}/h, drawn per seed"),
                ));
                (eaco_cluster(*servers), None)
            }
        };
        Ok(ReplayInputs {
            cluster: selection.cluster(cluster)?,
            source,
            file_tasks,
            arrival_scale,
            selection,
            inputs,
        })
    }

    /// The timed task list of a seed, arrivals compressed by the arrival scale.
    pub fn workload(&self, seed: u64) -> Result<TimedWorkload> {
        let workload = match (&self.file_tasks, &self.source) {
            (Some(tasks), _) => tasks.clone(),
            (
                None,
                TimedSource::Eaco {
                    jobs,
                    jobs_per_hour,
                    ..
                },
            ) => eaco_jobs(*jobs, *jobs_per_hour, seed),
            (None, TimedSource::Openb { .. }) => openb_like_timed(seed),
        };
        let workload = self
            .selection
            .workload(workload)?
            .with_arrival_scale(self.arrival_scale)
            .map_err(anyhow::Error::msg)?;
        crate::limits::check_arrival_span(&workload, &self.arrival_spread_cause())?;
        Ok(workload)
    }

    /// The flags that set how far apart the arrivals are, for a refusal to blame: an EaCO
    /// setup's rate, and `--arrival-scale` where it is not 1.
    fn arrival_spread_cause(&self) -> String {
        let scale = self.arrival_scale;
        match (&self.source, scale == 1.0) {
            (TimedSource::Eaco { jobs_per_hour, .. }, true) => {
                format!("--eaco-jobs-per-hour {jobs_per_hour}")
            }
            (TimedSource::Eaco { jobs_per_hour, .. }, false) => {
                format!("--eaco-jobs-per-hour {jobs_per_hour} with --arrival-scale {scale}")
            }
            (TimedSource::Openb { .. }, false) => format!("--arrival-scale {scale}"),
            (TimedSource::Openb { .. }, true) => "the task list's arrival times".to_string(),
        }
    }

    /// Warnings about converted input values, one line each.
    pub fn warnings(&self) -> Vec<String> {
        self.inputs
            .iter()
            .flat_map(|input| input.adjustments.iter().cloned())
            .collect()
    }
}

/// One seed's replay.
pub struct SeedReplay {
    pub seed: u64,
    pub result: ReplayResult,
    pub elapsed: Duration,
}

/// Replays `policy` for every seed, in parallel (each replay sequential and
/// deterministic); results in seed order. A replay that runs more than a few seconds shows
/// its progress in tasks done (a bar on terminals, a line every tenth elsewhere).
pub fn run_replays(
    inputs: &ReplayInputs,
    policy: &str,
    settings: &PolicySettings,
    options: &ReplayOptions,
    seeds: &[u64],
) -> Result<Vec<SeedReplay>> {
    // Fail on a bad policy name before starting anything.
    time_policy_with(policy, &inputs.cluster, settings).map_err(anyhow::Error::msg)?;
    // Made side by side (a generated job stream per seed), before any replay starts: the
    // progress counts the tasks of them all.
    let workloads: Vec<TimedWorkload> = seeds
        .par_iter()
        .map(|&seed| inputs.workload(seed))
        .collect::<Result<_>>()?;
    let tasks = workloads.iter().map(|w| w.tasks.len()).sum();
    let progress = LateProgress::new(tasks, &format!("tasks done, {policy} replay"));
    let runs = seeds
        .par_iter()
        .zip(&workloads)
        .map(|(&seed, workload)| -> Result<SeedReplay> {
            let mut policy = time_policy_with(policy, &inputs.cluster, &settings.for_seed(seed))
                .map_err(anyhow::Error::msg)?;
            let options = ReplayOptions {
                seed,
                ..options.clone()
            };
            let clock = Instant::now();
            let mut reported = 0;
            let result = gapbench_replay::run_observed(
                &inputs.cluster,
                workload,
                policy.as_mut(),
                &options,
                &mut |now: ReplayProgress| {
                    progress.inc((now.done_tasks - reported) as u64);
                    reported = now.done_tasks;
                },
            );
            Ok(SeedReplay {
                seed,
                result,
                elapsed: clock.elapsed(),
            })
        })
        .collect::<Result<Vec<_>>>();
    progress.finish_and_clear();
    runs
}

/// `summary.json` of a replay over seeds.
#[derive(Debug, Clone, Serialize)]
pub struct ReplaySummary {
    pub policy: String,
    pub seeds: Vec<u64>,
    pub runs: Vec<SeedSummary>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SeedSummary {
    pub seed: u64,
    #[serde(flatten)]
    pub summary: Summary,
}

/// Writes `timeline.csv`, `tasks.csv` and `summary.json` (per seed under `seed-N/` when
/// `per_seed_folders`), a `summary.json` over seeds, and `manifest.json`.
pub fn write_replay_outputs(
    out: &Path,
    inputs: &ReplayInputs,
    settings: &serde_json::Value,
    runs: &[SeedReplay],
    per_seed_folders: bool,
) -> Result<ReplaySummary> {
    let mut summaries = Vec::new();
    for run in runs {
        let folder = if per_seed_folders {
            out.join(format!("seed-{}", run.seed))
        } else {
            out.to_path_buf()
        };
        let mut timeline = Vec::new();
        run.result.write_timeline_csv(&mut timeline)?;
        write_atomic(&folder.join("timeline.csv"), &timeline)?;
        let mut tasks = Vec::new();
        run.result.write_tasks_csv(&mut tasks)?;
        write_atomic(&folder.join("tasks.csv"), &tasks)?;
        let summary = run.result.summary();
        if per_seed_folders {
            write_json(&folder.join("summary.json"), &summary)?;
        }
        summaries.push(SeedSummary {
            seed: run.seed,
            summary,
        });
    }
    let summary = ReplaySummary {
        policy: runs
            .first()
            .map_or_else(String::new, |r| r.result.policy.clone()),
        seeds: runs.iter().map(|r| r.seed).collect(),
        runs: summaries,
    };
    write_json(&out.join("summary.json"), &summary)?;
    let mut settings = settings.clone();
    if let Some(run) = runs.first() {
        // What the loading rules dropped and flagged (the same for every seed of a file).
        let s = run.result.summary();
        settings["workload"] = serde_json::json!({
            "tasks": s.tasks,
            "dropped_pending": s.dropped_pending,
            "left_censored": s.left_censored,
            "right_censored": s.right_censored,
        });
    }
    let manifest = Manifest::new(inputs.inputs.clone(), summary.seeds.clone(), settings);
    write_json(&out.join("manifest.json"), &manifest)?;
    Ok(summary)
}

/// The training jobs a replay of `seed` with `options` runs: its workload's GPU tasks that
/// fit some node of the empty cluster (the others fail at arrival).
pub fn training_jobs(
    cluster: &Cluster,
    workload: &TimedWorkload,
    options: &ReplayOptions,
    seed: u64,
) -> gapbench_replay::JobTable {
    let attributes = gapbench_replay::derive_attributes(&workload.tasks, seed, &options.deadlines);
    let mut jobs =
        gapbench_replay::JobTable::new(cluster, workload, &attributes, seed, options.fidelity);
    jobs.retain(|job| {
        let task = &workload.tasks[job.task as usize].task;
        gapbench_model::FailureReason::of(cluster, task) == gapbench_model::FailureReason::NoRoomNow
    });
    jobs
}

/// Refuses a budget below the least any schedule of the seed's jobs must spend (or a carbon
/// budget without a series), before anything runs.
pub fn check_budget(inputs: &ReplayInputs, options: &ReplayOptions, seed: u64) -> Result<()> {
    let workload = inputs.workload(seed)?;
    let jobs = training_jobs(&inputs.cluster, &workload, options, seed);
    gapbench_replay::budget::check_budget(jobs.jobs(), &options.budget, options.carbon.as_ref())
        .map_err(|e| anyhow::anyhow!("seed {seed}: {e}"))
}
