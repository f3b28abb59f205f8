//! `gapbench run`: one policy on one workload, for one or more seeds.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;
use gapbench_model::{
    prepare, Cluster, ClusterState, MetricsTracker, NodeOrder, PreparedWorkload, TaskOrder,
};
use gapbench_online::{run_arrival_sweep, PolicySpec, SweepResult};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::io::{write_atomic, write_json};
use crate::manifest::Manifest;
use crate::out_dir::remove_stale_seed_layout;
use crate::summary::{
    curve_csv, failure_counts, final_sample, grid_csv, integer_grid, mean_grid, mean_sample, Sample,
};
use crate::workload::Workload;

/// Everything that decides a run besides the workload and the seed.
#[derive(Debug, Clone, Serialize)]
pub struct RunSettings {
    pub policy: String,
    #[serde(skip)]
    pub policy_spec: PolicySpec,
    /// Target GPU demand as a multiple of cluster GPU capacity; `None` = no tuning.
    pub tune_ratio: Option<f64>,
    pub task_order: &'static str,
    pub node_order: &'static str,
    #[serde(skip)]
    pub task_order_value: TaskOrder,
    #[serde(skip)]
    pub node_order_value: NodeOrder,
}

impl RunSettings {
    pub fn new(
        policy_spec: PolicySpec,
        tune_ratio: Option<f64>,
        task_order: TaskOrder,
        node_order: NodeOrder,
    ) -> Self {
        RunSettings {
            policy: policy_spec.to_string(),
            policy_spec,
            tune_ratio,
            task_order: match task_order {
                TaskOrder::Shuffled => "shuffled",
                TaskOrder::AsListed => "as-listed",
            },
            node_order: match node_order {
                NodeOrder::Random => "random",
                NodeOrder::AsListed => "as-listed",
            },
            task_order_value: task_order,
            node_order_value: node_order,
        }
    }
}

/// One seed's run.
pub struct SeedRun {
    pub seed: u64,
    pub prepared: PreparedWorkload,
    pub result: SweepResult,
    pub elapsed: Duration,
}

/// Prepares and runs one seed.
pub fn run_seed(workload: &Workload, settings: &RunSettings, seed: u64) -> SeedRun {
    let start = Instant::now();
    let prepared = prepare(
        &workload.tasks,
        &workload.cluster,
        settings.task_order_value,
        settings.tune_ratio,
        settings.node_order_value,
        seed,
    );
    let result = run_arrival_sweep(&workload.cluster, &prepared, &settings.policy_spec);
    SeedRun {
        seed,
        prepared,
        result,
        elapsed: start.elapsed(),
    }
}

/// Runs every seed, in parallel across seeds; results come back in seed order, so outputs
/// are identical whatever the thread count.
pub fn run_seeds(workload: &Workload, settings: &RunSettings, seeds: &[u64]) -> Vec<SeedRun> {
    seeds
        .par_iter()
        .map(|&seed| run_seed(workload, settings, seed))
        .collect()
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SeedSummary {
    pub seed: u64,
    pub events: usize,
    pub placed: usize,
    pub failed: usize,
    /// Failed events by reason label (`no_room`, `never_fits:memory`, …), reasons that did
    /// not occur left out.
    #[serde(default)]
    pub failures: BTreeMap<String, usize>,
    pub cloned_tasks: usize,
    pub removed_tasks: usize,
    /// Values after the last event.
    #[serde(rename = "final")]
    pub final_sample: Sample,
    /// Per integer arrived percent: values after the last event at or below it.
    pub grid: Vec<Sample>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MeanSummary {
    #[serde(rename = "final")]
    pub final_sample: Sample,
    pub grid: Vec<Sample>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    pub policy: String,
    pub seeds: Vec<u64>,
    pub workload: String,
    pub gpu_capacity_milli: u64,
    pub runs: Vec<SeedSummary>,
    /// Means over seeds (present with several seeds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean: Option<MeanSummary>,
}

/// The summary of one seed's run.
pub fn seed_summary(cluster: &Cluster, run: &SeedRun) -> SeedSummary {
    let empty = MetricsTracker::new(
        cluster,
        &ClusterState::empty(cluster),
        &run.prepared.typical,
    )
    .totals();
    let records = &run.result.records;
    let failed = records.last().map_or(0, |r| r.failed_tasks as usize);
    SeedSummary {
        seed: run.seed,
        events: records.len(),
        placed: records.len() - failed,
        failed,
        failures: failure_counts(cluster, &run.prepared, &run.result)
            .into_iter()
            .map(|(reason, count)| (reason.label().to_string(), count))
            .collect(),
        cloned_tasks: run.prepared.cloned_tasks,
        removed_tasks: run.prepared.removed_tasks,
        final_sample: final_sample(cluster, &empty, records),
        grid: integer_grid(cluster, &empty, records),
    }
}

pub fn summarize(workload: &Workload, settings: &RunSettings, runs: &[SeedRun]) -> RunSummary {
    let cluster = &workload.cluster;
    let per_seed: Vec<SeedSummary> = runs.iter().map(|run| seed_summary(cluster, run)).collect();
    let mean = (per_seed.len() > 1).then(|| MeanSummary {
        final_sample: mean_sample(&per_seed.iter().map(|s| s.final_sample).collect::<Vec<_>>()),
        grid: mean_grid(&per_seed.iter().map(|s| s.grid.clone()).collect::<Vec<_>>()),
    });
    RunSummary {
        policy: settings.policy.clone(),
        seeds: runs.iter().map(|r| r.seed).collect(),
        workload: workload.describe(),
        gpu_capacity_milli: cluster.gpu_capacity_milli(),
        runs: per_seed,
        mean,
    }
}

/// Writes `curve.csv` (or `seed-N/curve.csv` per seed when `per_seed_folders`),
/// `summary.json`, `mean_curve.csv` (several seeds) and `manifest.json` under `out`.
pub fn write_outputs(
    out: &Path,
    workload: &Workload,
    settings: &RunSettings,
    runs: &[SeedRun],
    per_seed_folders: bool,
) -> Result<RunSummary> {
    for run in runs {
        let folder = if per_seed_folders {
            out.join(format!("seed-{}", run.seed))
        } else {
            out.to_path_buf()
        };
        write_atomic(
            &folder.join("curve.csv"),
            curve_csv(&workload.cluster, &run.prepared, &run.result).as_bytes(),
        )?;
    }
    let summary = summarize(workload, settings, runs);
    if let Some(mean) = &summary.mean {
        write_atomic(&out.join("mean_curve.csv"), grid_csv(&mean.grid).as_bytes())?;
    }
    write_json(&out.join("summary.json"), &summary)?;
    let manifest = Manifest::new(
        workload.inputs.clone(),
        summary.seeds.clone(),
        serde_json::to_value(settings)?,
    );
    write_json(&out.join("manifest.json"), &manifest)?;
    let seeds: std::collections::BTreeSet<u64> = summary.seeds.iter().copied().collect();
    remove_stale_seed_layout(
        out,
        per_seed_folders,
        |seed| seeds.contains(&seed),
        &["curve.csv"],
        &["mean_curve.csv"],
    )?;
    Ok(summary)
}
