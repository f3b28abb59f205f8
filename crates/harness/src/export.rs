//! `gapbench gap --export DIR`: every solved snapshot as an instance file of the library
//! (`<policy>-seed<seed>[-n<nodes>]-chk<checkpoint>.json`, format in `gapbench_results::instance`,
//! documented in `workloads/instances/README.md`). Each file is re-read and its placements
//! re-evaluated by the model crate before it is written, so a file on disk always holds
//! what it claims. After each file, `DIR/index.csv` is rewritten from every instance file
//! in DIR (one row per instance and objective: status, value, bound), so several runs into
//! one folder build one library.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};
use gapbench_ilp::instance::{build_instance, cpu_power_profile_name, verify_instance};
use gapbench_results::instance::{index_csv, InstanceFile, Provenance};

use crate::gap::{GapSettings, SolvedSnapshot};
use crate::io::write_atomic;
use crate::run::RunSettings;
use crate::workload::Workload;

/// Where and for what study instances are written.
pub struct Exporter<'a> {
    pub dir: &'a Path,
    pub workload: &'a Workload,
    pub run: &'a RunSettings,
    pub settings: &'a GapSettings,
    pub seed: u64,
}

/// The file stem of one snapshot's instance: `fgd-seed42-chk50`,
/// `pwr200-fgd800-seed42-chk80`, `fgd-seed42-n8-chk50` on a sub-cluster of 8 nodes.
pub fn instance_name(
    run: &RunSettings,
    seed: u64,
    sample_nodes: Option<usize>,
    checkpoint_pct: f64,
) -> String {
    let sample = sample_nodes.map_or(String::new(), |n| format!("-n{n}"));
    format!(
        "{}-seed{seed}{sample}-chk{checkpoint_pct}",
        run.policy_spec.slug()
    )
}

/// The name of a library's index file.
pub const INDEX_FILE: &str = "index.csv";

/// Rewrites `dir/index.csv` from every `*.json` instance file in `dir`; errors name the
/// file that does not read.
pub fn write_index(dir: &Path) -> Result<PathBuf> {
    let mut files = Vec::new();
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "json") {
            files.push(InstanceFile::load(&path)?);
        }
    }
    let path = dir.join(INDEX_FILE);
    write_atomic(&path, index_csv(&files).as_bytes())?;
    Ok(path)
}

impl Exporter<'_> {
    /// Builds, verifies and atomically writes the instance of `solved`; returns its path.
    pub fn write(&self, solved: &SolvedSnapshot) -> Result<PathBuf> {
        let file = self.instance(solved)?;
        verify_instance(&file)
            .map_err(|e| anyhow!("instance {} does not re-evaluate: {e}", file.name))?;
        let path = self.dir.join(format!("{}.json", file.name));
        write_atomic(&path, file.to_json()?.as_bytes())?;
        write_index(self.dir)?;
        Ok(path)
    }

    /// The instance file of `solved`.
    pub fn instance(&self, solved: &SolvedSnapshot) -> Result<InstanceFile> {
        let snapshot = solved.snapshot;
        let checkpoint = snapshot.checkpoint_pct;
        let capacity = snapshot.cluster.gpu_capacity_milli();
        let arrived_milli: u64 = snapshot
            .tasks
            .iter()
            .map(|t| u64::from(t.total_gpu_milli()))
            .sum();
        let provenance = Provenance {
            tool: "gapbench".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            git_revision: env!("GAPBENCH_GIT_REVISION").into(),
            command: std::env::args().collect(),
            inputs: self.workload.inputs.clone(),
            policy: self.run.policy.clone(),
            seed: self.seed,
            tune: self.run.tune_ratio,
            task_order: self.run.task_order.into(),
            node_order: self.run.node_order.into(),
            cpu_power_profile: cpu_power_profile_name(snapshot.cluster.cpu_power_profile).into(),
            sample_nodes: self.settings.sample_nodes,
            checkpoint_pct: checkpoint,
            arrived_gpu_pct: if capacity > 0 {
                100.0 * arrived_milli as f64 / capacity as f64
            } else {
                0.0
            },
            method: solved.method.name().into(),
            time_limit_s: self.settings.time_limit_s,
            mip_rel_gap: self.settings.mip_rel_gap,
            threads: self.settings.threads,
        };
        build_instance(
            instance_name(self.run, self.seed, self.settings.sample_nodes, checkpoint),
            provenance,
            snapshot,
            solved.reports,
        )
        .map_err(|e| anyhow!("instance at {checkpoint} %: {e}"))
    }
}
