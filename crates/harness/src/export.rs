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

/// Rewrites `dir/index.csv` from every `*.json` instance file in `dir`, each checked by
/// [`load_checked`]; errors name the file that does not read or check.
pub fn write_index(dir: &Path) -> Result<PathBuf> {
    let files = load_library(dir)?;
    let path = dir.join(INDEX_FILE);
    write_atomic(&path, index_csv(&files).as_bytes())?;
    Ok(path)
}

/// Every `*.json` instance file in `dir`, each checked by [`load_checked`].
fn load_library(dir: &Path) -> Result<Vec<InstanceFile>> {
    let mut paths = Vec::new();
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for entry in entries {
        let path = entry
            .with_context(|| format!("cannot list {}", dir.display()))?
            .path();
        if path.extension().is_some_and(|e| e == "json") {
            paths.push(path);
        }
    }
    paths.sort();
    paths.iter().map(|path| load_checked(path)).collect()
}

/// Reads an instance file and checks it all, so that a hand-edited file is never indexed
/// as it stands: the format and version, every key present (serde would take a missing
/// optional one for `null`), its name the file's stem (a renamed copy would list one
/// instance twice), and every stored placement, value and bound re-evaluated
/// ([`verify_instance`]). Errors name the file.
pub fn load_checked(path: &Path) -> Result<InstanceFile> {
    let file = InstanceFile::load(path)?;
    let check = || -> Result<()> {
        let text = std::fs::read_to_string(path)?;
        let raw: serde_json::Value = serde_json::from_str(&text)?;
        if let Some(key) = missing_key(&raw, &serde_json::to_value(&file)?, "") {
            anyhow::bail!("key `{key}` is missing");
        }
        let stem = path.file_stem().map(|s| s.to_string_lossy());
        if stem.as_deref() != Some(file.name.as_str()) {
            anyhow::bail!(
                "its name is `{}` but the file is named otherwise (a copy of that instance?): an instance file is `<name>.json`",
                file.name
            );
        }
        verify_instance(&file).map_err(|e| anyhow!("{e}"))?;
        Ok(())
    };
    check().with_context(|| format!("instance file {}", path.display()))?;
    Ok(file)
}

/// The first key (as a path, `problems[0].bound`) that `full` has and `raw` lacks.
fn missing_key(raw: &serde_json::Value, full: &serde_json::Value, at: &str) -> Option<String> {
    use serde_json::Value;
    match (raw, full) {
        (Value::Object(raw), Value::Object(full)) => full.iter().find_map(|(key, value)| {
            let path = if at.is_empty() {
                key.clone()
            } else {
                format!("{at}.{key}")
            };
            match raw.get(key) {
                None => Some(path),
                Some(raw) => missing_key(raw, value, &path),
            }
        }),
        (Value::Array(raw), Value::Array(full)) => raw
            .iter()
            .zip(full)
            .enumerate()
            .find_map(|(i, (raw, full))| missing_key(raw, full, &format!("{at}[{i}]"))),
        _ => None,
    }
}

/// Checks, before anything is solved, that `dir` can take a study's instances: a folder
/// (or none yet), not the results folder `out` (whose other JSON files are no instances),
/// writable, and every instance file already in it valid ([`load_checked`]), since each
/// export rewrites the index from all of them. Creates `dir` when needed.
pub fn check_library(dir: &Path, out: &Path) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        anyhow::bail!(
            "--export {} is not a folder: give a folder for the instance files and their index.csv",
            dir.display()
        );
    }
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let same = match (dir.canonicalize(), out.canonicalize()) {
        (Ok(dir), Ok(out)) => dir == out,
        _ => absolute(dir) == absolute(out),
    };
    if same {
        anyhow::bail!(
            "--export {} is the results folder (--out): its manifest.json is no instance file; give the instances a folder of their own",
            dir.display()
        );
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create folder {}", dir.display()))?;
    let probe = dir.join(format!(".export-check.{}.tmp", std::process::id()));
    std::fs::write(&probe, b"")
        .and_then(|()| std::fs::remove_file(&probe))
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    load_library(dir).map(|_| ())
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
