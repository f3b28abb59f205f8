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
pub fn check_seed_range(first: u64, last: u64) -> std::result::Result<(), String> {
    let count = u128::from(last) - u128::from(first) + 1;
    if count > u128::from(MAX_SEEDS) {
        return Err(format!(
            "{first}..{last} is {count} seeds, at most {MAX_SEEDS}: each seed is a whole run, and a million already take about a day on 2 cores"
        ));
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
}

/// The `[gaps]` fields the report needs: which node count is a sampled sub-cluster (every
/// other node count in `gaps.csv` is the whole cluster of `[gaps.full_cluster]`).
#[derive(Debug, Clone, Deserialize)]
pub struct GapsDescription {
    /// None when the study is of the whole cluster only.
    #[serde(default)]
    pub sample_nodes: Option<usize>,
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
