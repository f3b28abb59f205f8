//! `gapbench run`: one policy on one workload, for one or more seeds.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use gapbench_model::{
    prepare, Cluster, ClusterState, MetricsTracker, NodeOrder, PreparedWorkload, TaskOrder,
};
use gapbench_online::{run_arrival_sweep, PolicySpec, SweepResult};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::io::{write_atomic, write_atomic_with, write_json};
use crate::manifest::Manifest;
use crate::out_dir::remove_stale_seed_layout;
use crate::summary::{
    curve_csv, failure_counts, final_sample, grid_csv, integer_grid, mean_sample, Sample, SeedMeans,
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

/// Refuses a tune ratio whose sweeps would not fit in memory: tuned to `ratio` × GPU
/// capacity, a run holds about tasks × target / demand arrivals, and `parallel` runs go at
/// once. (Without tuning a run holds the task list, which is already in memory.)
pub fn check_sweep_memory(
    workload: &Workload,
    settings: &RunSettings,
    parallel: usize,
) -> Result<()> {
    let Some(ratio) = settings.tune_ratio else {
        return Ok(());
    };
    let demand: f64 = workload
        .tasks
        .iter()
        .map(|t| f64::from(t.total_gpu_milli()))
        .sum();
    if settings.task_order_value == TaskOrder::AsListed || demand <= 0.0 {
        return Ok(()); // no tuning, or nothing to clone
    }
    let target = ratio * workload.cluster.gpu_capacity_milli() as f64;
    let arrivals = workload.tasks.len() as f64 * (target / demand).max(1.0);
    crate::limits::ensure_fits(
        &format!(
            "tune {ratio} makes about {} task arrivals per run, {parallel} run(s) at once",
            crate::limits::human_count(arrivals)
        ),
        arrivals * parallel as f64,
        crate::limits::SWEEP_EVENT_BYTES,
        "task arrivals",
    )
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
    for found in &result.non_finite_scores {
        eprintln!(
            "warning: seed {seed}: {} expression scores were NaN or ±∞ (NaN scores 0, ±∞ the ends of the scale); the first: {}",
            found.count, found.first
        );
    }
    SeedRun {
        seed,
        prepared,
        result,
        elapsed: start.elapsed(),
    }
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

/// Seeds run side by side in batches of this many; a batch's summaries wait only until
/// they are written in seed order, so memory does not grow with the seed count.
const SEED_BATCH: usize = 64;

/// What the terminal shows of a run over seeds (its files hold the rest).
#[derive(Debug, Clone)]
pub struct RunTotals {
    pub seeds: usize,
    /// `mean of N seeds`, or `seed S` for one seed.
    pub label: String,
    /// The mean grid and final values over seeds, or the one seed's.
    pub grid: Vec<Sample>,
    pub final_sample: Sample,
    pub events: usize,
    pub failed: usize,
    /// Failed events by reason label, over every seed.
    pub failures: BTreeMap<String, usize>,
    /// Each run's own time, summed over seeds.
    pub run_seconds: f64,
}

impl RunTotals {
    /// Counts one seed's run in; the `first` one stands for all until a mean replaces it.
    fn add(&mut self, summary: SeedSummary, elapsed: Duration, first: bool) {
        self.events += summary.events;
        self.failed += summary.failed;
        for (reason, count) in &summary.failures {
            *self.failures.entry(reason.clone()).or_default() += count;
        }
        self.run_seconds += elapsed.as_secs_f64();
        if first {
            self.label = format!("seed {}", summary.seed);
            (self.grid, self.final_sample) = (summary.grid, summary.final_sample);
        }
    }
}

/// Runs every seed (in parallel, batch by batch) and writes `curve.csv` (or
/// `seed-N/curve.csv` per seed when `per_seed_folders`), `summary.json`,
/// `mean_curve.csv` (several seeds) and `manifest.json` under `out`, streaming each seed's
/// outputs to disk as its batch ends: memory stays flat however many seeds. Files are
/// byte-identical on any thread count and to a summary built whole in memory.
pub fn run_to_folder(
    out: &Path,
    workload: &Workload,
    settings: &RunSettings,
    seeds: &[u64],
    per_seed_folders: bool,
) -> Result<RunTotals> {
    let mut runs = SpooledRuns::create(out)?;
    let mut means = SeedMeans::default();
    let mut totals = RunTotals {
        seeds: seeds.len(),
        label: String::new(),
        grid: Vec::new(),
        final_sample: mean_sample(&[]),
        events: 0,
        failed: 0,
        failures: BTreeMap::new(),
        run_seconds: 0.0,
    };
    for batch in seeds.chunks(SEED_BATCH) {
        let done: Vec<(SeedSummary, Duration)> = batch
            .par_iter()
            .map(|&seed| -> Result<(SeedSummary, Duration)> {
                let run = run_seed(workload, settings, seed);
                let folder = if per_seed_folders {
                    out.join(format!("seed-{seed}"))
                } else {
                    out.to_path_buf()
                };
                write_atomic(
                    &folder.join("curve.csv"),
                    curve_csv(&workload.cluster, &run.prepared, &run.result).as_bytes(),
                )?;
                Ok((seed_summary(&workload.cluster, &run), run.elapsed))
            })
            .collect::<Result<_>>()?;
        for (summary, elapsed) in done {
            runs.push(&summary)?;
            means.add(&summary.final_sample, &summary.grid);
            totals.add(summary, elapsed, means.count() == 1);
        }
    }
    let mean = (seeds.len() > 1).then(|| MeanSummary {
        final_sample: means.final_sample(),
        grid: means.grid(),
    });
    if let Some(mean) = &mean {
        write_atomic(&out.join("mean_curve.csv"), grid_csv(&mean.grid).as_bytes())?;
        totals.label = format!("mean of {} seeds", seeds.len());
        (totals.grid, totals.final_sample) = (mean.grid.clone(), mean.final_sample);
    }
    let summary = RunSummary {
        policy: settings.policy.clone(),
        seeds: seeds.to_vec(),
        workload: workload.describe(),
        gpu_capacity_milli: workload.cluster.gpu_capacity_milli(),
        runs: Vec::new(),
        mean,
    };
    runs.write_summary(&out.join("summary.json"), &summary)?;
    let manifest = Manifest::new(
        workload.inputs.clone(),
        seeds.to_vec(),
        serde_json::to_value(settings)?,
    );
    write_json(&out.join("manifest.json"), &manifest)?;
    let seed_set: std::collections::BTreeSet<u64> = seeds.iter().copied().collect();
    remove_stale_seed_layout(
        out,
        per_seed_folders,
        |seed| seed_set.contains(&seed),
        &["curve.csv"],
        &["mean_curve.csv"],
    )?;
    Ok(totals)
}

/// The `runs` array of `summary.json`, kept in a temp file of the output folder as each
/// seed finishes: every element pretty-printed as `serde_json` prints it inside the
/// summary (indented two levels), so the file spliced from it is byte for byte what
/// `serde_json::to_string_pretty` of the whole [`RunSummary`] would be.
struct SpooledRuns {
    path: PathBuf,
    file: BufWriter<File>,
    count: usize,
}

/// How `serde_json` pretty-prints an empty `runs` array inside a [`RunSummary`].
const EMPTY_RUNS: &str = "\"runs\": []";

impl SpooledRuns {
    fn create(out: &Path) -> Result<SpooledRuns> {
        std::fs::create_dir_all(out)
            .with_context(|| format!("cannot create folder {}", out.display()))?;
        let path = out.join(format!(".summary-runs.{}.tmp", std::process::id()));
        let file =
            File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(SpooledRuns {
            path,
            file: BufWriter::new(file),
            count: 0,
        })
    }

    fn push(&mut self, summary: &SeedSummary) -> Result<()> {
        let element = serde_json::to_string_pretty(summary)?.replace('\n', "\n    ");
        let separator = if self.count == 0 { "" } else { ",\n" };
        write!(self.file, "{separator}    {element}")
            .with_context(|| format!("cannot write {}", self.path.display()))?;
        self.count += 1;
        Ok(())
    }

    /// Writes `path`: `summary` (with no runs of its own) and the spooled runs in its
    /// `runs` array; then removes the spool.
    fn write_summary(self, path: &Path, summary: &RunSummary) -> Result<()> {
        let file = self
            .file
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("cannot write {}", self.path.display()))?;
        drop(file);
        let text = serde_json::to_string_pretty(summary)?;
        let (before, after) = text
            .split_once(EMPTY_RUNS)
            .context("a summary without runs prints an empty runs array")?;
        write_atomic_with(path, |out| {
            out.write_all(before.as_bytes())?;
            if self.count == 0 {
                out.write_all(EMPTY_RUNS.as_bytes())?;
            } else {
                out.write_all(b"\"runs\": [\n")?;
                std::io::copy(&mut File::open(&self.path)?, out)?;
                out.write_all(b"\n  ]")?;
            }
            out.write_all(after.as_bytes())?;
            out.write_all(b"\n")?;
            Ok(())
        })?;
        std::fs::remove_file(&self.path)
            .with_context(|| format!("cannot remove {}", self.path.display()))
    }
}
