//! Experiment specs (`workloads/*.toml`): traces × policies × seeds at one tune ratio, plus
//! optional exact-gap studies on sub-clusters.

use std::path::Path;

use anyhow::{bail, Context, Result};
use gapbench_online::PolicySpec;
use serde::{Deserialize, Serialize};

pub use gapbench_results::Seeds;

/// A whole experiment matrix.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BenchSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Node list file name inside the traces folder.
    #[serde(default = "default_nodes")]
    pub nodes: String,
    /// Trace names: `NAME` is `openb_pod_list_NAME.csv` in the traces folder.
    pub traces: Vec<String>,
    /// Policy specs, e.g. `fgd` or `pwr:200,fgd:800`.
    pub policies: Vec<String>,
    /// A list of seeds or an inclusive range `"42..51"`.
    pub seeds: Seeds,
    #[serde(default = "default_tune")]
    pub tune: f64,
    #[serde(default)]
    pub gaps: Option<GapStudySpec>,
}

/// Exact-gap studies: the same policies on sampled sub-clusters, solved at checkpoints.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GapStudySpec {
    pub traces: Vec<String>,
    pub policies: Vec<String>,
    pub seeds: Seeds,
    /// Arrived GPU demand, % of (sub-)cluster capacity.
    pub checkpoints: Vec<u32>,
    #[serde(default = "default_objectives")]
    pub objectives: Vec<String>,
    /// Nodes of the sampled sub-cluster.
    pub sample_nodes: usize,
    #[serde(default = "default_time_limit")]
    pub time_limit_s: f64,
    #[serde(default)]
    pub mip_gap: Option<f64>,
    /// ε-constraint points of the power–fragmentation front (0: no front).
    #[serde(default)]
    pub pareto_points: usize,
}

fn default_nodes() -> String {
    "openb_node_list_gpu_node.csv".to_string()
}

fn default_tune() -> f64 {
    1.3
}

fn default_objectives() -> Vec<String> {
    ["power", "alloc", "frag"].map(String::from).to_vec()
}

fn default_time_limit() -> f64 {
    60.0
}

impl BenchSpec {
    pub fn load(path: &Path) -> Result<BenchSpec> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        let spec: BenchSpec =
            toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        spec.validate()
            .with_context(|| format!("{}: invalid spec", path.display()))?;
        Ok(spec)
    }

    fn validate(&self) -> Result<()> {
        if self.traces.is_empty() || self.policies.is_empty() {
            bail!("`traces` and `policies` must not be empty");
        }
        parse_policies(&self.policies)?;
        if self.seeds.expand()?.is_empty() {
            bail!("`seeds` must not be empty");
        }
        if !(self.tune.is_finite() && self.tune > 0.0) {
            bail!("`tune` must be a positive ratio");
        }
        if let Some(gaps) = &self.gaps {
            parse_policies(&gaps.policies)?;
            gaps.seeds.expand()?;
            for objective in &gaps.objectives {
                if !["power", "alloc", "frag"].contains(&objective.as_str()) {
                    bail!("gap objective `{objective}`: expected power, alloc or frag");
                }
            }
            if gaps.sample_nodes == 0 {
                bail!("gaps.sample_nodes must be positive");
            }
        }
        Ok(())
    }
}

pub fn parse_policies(policies: &[String]) -> Result<Vec<PolicySpec>> {
    policies
        .iter()
        .map(|p| p.parse::<PolicySpec>().map_err(anyhow::Error::msg))
        .collect()
}

/// The trace family a figure panel groups by.
pub fn trace_family(trace: &str) -> &'static str {
    match trace {
        "default" | "openb-like" => "default",
        t if t.starts_with("gpushare") => "gpushare",
        t if t.starts_with("gpuspec") => "gpuspec",
        t if t.starts_with("multigpu") => "multigpu",
        t if t.starts_with("cpu") => "cpu",
        _ => "other",
    }
}
