//! `gapbench replay`: one policy in time mode (tasks arrive at their trace times, wait, run
//! and leave), for one or more seeds, written as `timeline.csv`, `tasks.csv`,
//! `summary.json` and `manifest.json`. The engine is `gapbench_replay`; this module owns
//! where workloads come from, files and manifests.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use gapbench_model::{Cluster, CpuPowerProfile, InputRules};
use gapbench_replay::eaco_setup::{eaco_cluster, eaco_jobs};
use gapbench_replay::policies::time_policy;
use gapbench_replay::{openb_like_timed, ReplayOptions, ReplayResult, Summary, TimedWorkload};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::Serialize;

use crate::io::{write_atomic, write_json};
use crate::manifest::Manifest;
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

/// A replay's inputs, loaded once for every seed.
pub struct ReplayInputs {
    pub cluster: Cluster,
    pub source: TimedSource,
    /// The task list of a file source (the same for every seed); generated sources draw
    /// theirs per seed.
    file_tasks: Option<TimedWorkload>,
    pub arrival_scale: f64,
    pub inputs: Vec<InputFingerprint>,
}

impl ReplayInputs {
    pub fn load(
        source: TimedSource,
        arrival_scale: f64,
        rules: InputRules,
        cpu_power: CpuPowerProfile,
    ) -> Result<ReplayInputs> {
        if !(arrival_scale.is_finite() && arrival_scale > 0.0) {
            bail!("--arrival-scale takes a positive factor such as 10; got {arrival_scale}");
        }
        let mut inputs = Vec::new();
        let (cluster, file_tasks) = match &source {
            TimedSource::Openb { nodes, tasks } => {
                let cluster = load_cluster(nodes.as_deref(), cpu_power, &mut inputs)?;
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
            cluster,
            source,
            file_tasks,
            arrival_scale,
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
        let workload = workload
            .with_arrival_scale(self.arrival_scale)
            .map_err(anyhow::Error::msg)?;
        crate::limits::check_arrival_span(&workload, self.arrival_scale)?;
        Ok(workload)
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
/// deterministic), with a progress bar on terminals; results in seed order.
pub fn run_replays(
    inputs: &ReplayInputs,
    policy: &str,
    options: &ReplayOptions,
    seeds: &[u64],
) -> Result<Vec<SeedReplay>> {
    // Fail on a bad policy name before starting anything.
    time_policy(policy, &inputs.cluster).map_err(anyhow::Error::msg)?;
    let progress = ProgressBar::new(seeds.len() as u64).with_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} replays {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    progress.set_message(policy.to_string());
    let runs = seeds
        .par_iter()
        .map(|&seed| -> Result<SeedReplay> {
            let workload = inputs.workload(seed)?;
            let mut policy = time_policy(policy, &inputs.cluster).map_err(anyhow::Error::msg)?;
            let options = ReplayOptions {
                seed,
                ..options.clone()
            };
            let clock = Instant::now();
            let result =
                gapbench_replay::run(&inputs.cluster, &workload, policy.as_mut(), &options);
            progress.inc(1);
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
    let manifest = Manifest::new(
        inputs.inputs.clone(),
        summary.seeds.clone(),
        settings.clone(),
    );
    write_json(&out.join("manifest.json"), &manifest)?;
    Ok(summary)
}
