//! What a bench folder was produced from, as `matrix.json` describes it. The runner writes
//! the whole matrix; the report reads only this description, so it needs nothing of the
//! runner's types.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// A list of seeds or an inclusive range `"42..51"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum Seeds {
    List(Vec<u64>),
    Range(String),
}

/// The most seeds one command or spec runs: each is a whole run (about 0.2 s on one core
/// for the default trace), so a million already take about a day on 2 cores, and a range
/// as long as `0..18446744073709551615` would never end.
pub const MAX_SEEDS: u64 = 1_000_000;

/// Refuses the inclusive range `first..=last` when it holds more than [`MAX_SEEDS`] seeds.
pub fn check_seed_range(first: u64, last: u64) -> Result<()> {
    let count = u128::from(last) - u128::from(first) + 1;
    if count > u128::from(MAX_SEEDS) {
        bail!(
            "{first}..{last} is {count} seeds, at most {MAX_SEEDS}: each seed is a whole run, and a million already take about a day on 2 cores"
        );
    }
    Ok(())
}

impl Seeds {
    pub fn expand(&self) -> Result<Vec<u64>> {
        match self {
            Seeds::List(seeds) => {
                if seeds.len() as u64 > MAX_SEEDS {
                    bail!("{} seeds, at most {MAX_SEEDS}", seeds.len());
                }
                let mut sorted = seeds.clone();
                sorted.sort_unstable();
                if let Some(pair) = sorted.windows(2).find(|pair| pair[0] == pair[1]) {
                    bail!(
                        "seed {} is listed twice: its runs would count twice in every mean",
                        pair[0]
                    );
                }
                Ok(seeds.clone())
            }
            Seeds::Range(text) => {
                let (a, b) = text.split_once("..").with_context(|| {
                    format!("seeds `{text}`: expected a list or a range like \"42..51\"")
                })?;
                let seed = |s: &str| {
                    s.trim()
                        .trim_start_matches('=')
                        .parse::<u64>()
                        .with_context(|| format!("seeds `{text}`: `{}` is not a seed", s.trim()))
                };
                let (a, b) = (seed(a)?, seed(b)?);
                if a > b {
                    bail!("seeds `{text}`: empty range");
                }
                check_seed_range(a, b).map_err(|e| anyhow::anyhow!("seeds {e}"))?;
                Ok((a..=b).collect())
            }
        }
    }
}

/// One input, named and hashed so a result can be traced to exactly what produced it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct InputFingerprint {
    pub role: String,
    /// A file path as given, or `embedded:openb-like/…`.
    pub source: String,
    pub sha256: String,
    /// Values the loader converted as the reference simulator does (one line per kind, with
    /// its count and first line; none for the shipped traces), so a result says when its
    /// input was not taken literally.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adjustments: Vec<String>,
}

/// The spec fields the report shows.
#[derive(Debug, Clone, Deserialize)]
pub struct SpecDescription {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub policies: Vec<String>,
    pub seeds: Seeds,
    pub tune: f64,
    /// The time-mode replays, when the spec has a `[replay]` table.
    #[serde(default)]
    pub replay: Option<ReplayDescription>,
    /// The exact-gap study, when the spec has a `[gaps]` table.
    #[serde(default)]
    pub gaps: Option<GapsDescription>,
    /// The budget study, when the spec has a `[budget]` table.
    #[serde(default)]
    pub budget: Option<BudgetDescription>,
    /// The spec's `[figures]` settings, when it has them.
    #[serde(default)]
    pub figures: Option<FiguresDescription>,
}

/// `[figures]`: the style a redraw uses and the policies' display names.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct FiguresDescription {
    #[serde(default)]
    pub style: Option<String>,
    #[serde(default)]
    pub names: BTreeMap<String, String>,
}

/// The `[budget]` fields the report checks against (its presence says `budget_points.csv`
/// must hold rows).
#[derive(Debug, Clone, Deserialize)]
pub struct BudgetDescription {
    pub trace: String,
}

/// The `[gaps]` fields the report needs: which node count is a sampled sub-cluster (every
/// other node count in `gaps.csv` is the whole cluster of `[gaps.full_cluster]`).
#[derive(Debug, Clone, Deserialize)]
pub struct GapsDescription {
    /// None when the study is of the whole cluster only.
    #[serde(default)]
    pub sample_nodes: Option<usize>,
    /// The policies of the sub-cluster study (empty in folders written before the field
    /// was read).
    #[serde(default)]
    pub policies: Vec<String>,
    /// Points of each exact front (0: no front, no `pareto.csv` rows).
    #[serde(default)]
    pub pareto_points: usize,
    /// The whole-cluster study, when the spec has `[gaps.full_cluster]`.
    #[serde(default)]
    pub full_cluster: Option<FullClusterDescription>,
}

/// The `[gaps.full_cluster]` fields the report checks against.
#[derive(Debug, Clone, Deserialize)]
pub struct FullClusterDescription {
    pub policies: Vec<String>,
}

/// The `[replay]` fields the report shows.
#[derive(Debug, Clone, Deserialize)]
pub struct ReplayDescription {
    #[serde(default)]
    pub traces: Vec<String>,
    #[serde(default)]
    pub eaco: Option<EacoDescription>,
    pub policies: Vec<String>,
    pub seeds: Seeds,
    pub arrival_scales: Vec<f64>,
    pub idle: Vec<String>,
    pub sleep_fraction: f64,
}

/// EaCO's evaluation setup as a spec names it.
#[derive(Debug, Clone, Deserialize)]
pub struct EacoDescription {
    pub servers: Vec<usize>,
    pub jobs: usize,
    pub jobs_per_hour: f64,
    /// Deadline factors σ swept (empty in folders written before the sweep existed).
    #[serde(default)]
    pub deadline_factors: Vec<f64>,
}

/// The part of `matrix.json` the report needs.
#[derive(Debug, Clone, Deserialize)]
pub struct MatrixDescription {
    pub spec: SpecDescription,
    /// The traces actually run.
    pub traces: Vec<String>,
    /// True when the embedded openb-like workload stood in for missing traces.
    pub stand_in: bool,
    pub inputs: BTreeMap<String, Vec<InputFingerprint>>,
    /// The command that produced the folder.
    #[serde(default)]
    pub command: String,
    /// Input hashes of each time-mode source, by source name.
    #[serde(default)]
    pub replay_inputs: BTreeMap<String, Vec<InputFingerprint>>,
}

impl MatrixDescription {
    /// The CSVs the bench writes with at least one data row for this matrix: a folder
    /// lacking one (or holding its header only) is incomplete or was edited, never a study
    /// to leave out silently.
    pub fn expected_csvs(&self) -> Vec<&'static str> {
        let spec = &self.spec;
        let mut files = Vec::new();
        if !self.traces.is_empty() {
            files.extend([crate::MEAN_GRID_CSV, crate::RUNS_CSV]);
        }
        if let Some(gaps) = &spec.gaps {
            files.push(crate::GAPS_CSV);
            if gaps.pareto_points >= 2 {
                files.push(crate::PARETO_CSV);
            }
        }
        if spec.replay.is_some() {
            files.extend([crate::REPLAY_RUNS_CSV, crate::REPLAY_TIMELINE_CSV]);
        }
        if spec.budget.is_some() {
            files.push(crate::BUDGET_POINTS_CSV);
        }
        files
    }

    /// Whether `file` (a name of [`expected_csvs`](Self::expected_csvs)) must hold rows.
    pub fn expects(&self, file: &str) -> bool {
        self.expected_csvs().contains(&file)
    }

    /// The policies of the sweeps (`mean_grid.csv`, `runs.csv`).
    pub fn sweep_policies(&self) -> &[String] {
        &self.spec.policies
    }

    /// The policies of the gap studies (`gaps.csv`, policy points of `pareto.csv`); `None`
    /// for a folder whose `matrix.json` predates the list (nothing to check against).
    pub fn gap_policies(&self) -> Option<Vec<String>> {
        let gaps = self.spec.gaps.as_ref()?;
        if gaps.policies.is_empty() {
            return None;
        }
        let mut policies = gaps.policies.clone();
        for policy in gaps.full_cluster.iter().flat_map(|f| &f.policies) {
            if !policies.contains(policy) {
                policies.push(policy.clone());
            }
        }
        Some(policies)
    }

    /// The policies of the time-mode replays (`replay_runs.csv`, `replay_timeline.csv`).
    pub fn replay_policies(&self) -> Option<&[String]> {
        self.spec.replay.as_ref().map(|r| r.policies.as_slice())
    }

    /// Reads `dir/matrix.json`.
    pub fn read(dir: &Path) -> Result<MatrixDescription> {
        let path = dir.join(crate::MATRIX_JSON);
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "{}: cannot read (not a gapbench results folder?)",
                path.display()
            )
        })?;
        let matrix: MatrixDescription = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a gapbench matrix", path.display()))?;
        let replay_seeds = matrix.spec.replay.as_ref().map(|r| &r.seeds);
        for seeds in std::iter::once(&matrix.spec.seeds).chain(replay_seeds) {
            seeds
                .expand()
                .with_context(|| format!("{}: not a gapbench matrix", path.display()))?;
        }
        Ok(matrix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_study_of_the_matrix_expects_its_csvs() {
        let matrix = |studies: &str| -> MatrixDescription {
            serde_json::from_str(&format!(
                r#"{{"spec": {{"name": "m", "policies": ["fgd"], "seeds": [42], "tune": 1.3{studies}}},
                   "traces": ["default"], "stand_in": false, "inputs": {{}}}}"#
            ))
            .unwrap()
        };
        let sweeps = matrix("");
        assert_eq!(sweeps.expected_csvs(), ["mean_grid.csv", "runs.csv"]);
        let all = matrix(
            r#", "gaps": {"sample_nodes": 5, "policies": ["fgd"], "pareto_points": 3,
                 "full_cluster": {"policies": ["pwr"]}},
               "replay": {"policies": ["fgd"], "seeds": [42], "arrival_scales": [1.0],
                 "idle": ["always-on"], "sleep_fraction": 0.05},
               "budget": {"trace": "default"}"#,
        );
        assert_eq!(
            all.expected_csvs(),
            [
                "mean_grid.csv",
                "runs.csv",
                "gaps.csv",
                "pareto.csv",
                "replay_runs.csv",
                "replay_timeline.csv",
                "budget_points.csv"
            ]
        );
        assert_eq!(all.gap_policies().unwrap(), ["fgd", "pwr"]);
        // No front: no pareto.csv rows to expect.
        let no_front = matrix(r#", "gaps": {"sample_nodes": 5, "pareto_points": 0}"#);
        assert!(!no_front.expects("pareto.csv"));
        assert!(no_front.gap_policies().is_none());
    }

    #[test]
    fn seeds_expand_from_lists_and_ranges() {
        assert_eq!(Seeds::List(vec![7, 3]).expand().unwrap(), [7, 3]);
        assert_eq!(
            Seeds::Range("42..44".into()).expand().unwrap(),
            [42, 43, 44]
        );
        assert_eq!(Seeds::Range("1..=2".into()).expand().unwrap(), [1, 2]);
        assert!(Seeds::Range("5..4".into()).expand().is_err());
        assert!(Seeds::Range("five".into()).expand().is_err());
    }
}
