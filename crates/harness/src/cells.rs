//! The cells of a bench: one arrival sweep or one exact-gap study each, stored as a JSON
//! file keyed by a hash of everything that determines it. A cell whose file exists with the
//! same key is finished and reused; any other file (older key, older schema, unreadable) is
//! recomputed.

use std::path::{Path, PathBuf};

use anyhow::Result;
use gapbench_model::{NodeOrder, TaskOrder};
use gapbench_online::PolicySpec;
use gapbench_results::gap_row::GAP_SCHEMA_VERSION;
use gapbench_results::{FrontRow, GapRow};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::bench::Matrix;
use crate::gap::{gap_studies, GapSettings};
use crate::run::{RunSettings, SeedSummary};
use crate::workload::Workload;

/// Key kind of sweep cells (bump when [`SeedSummary`] changes meaning).
const CELL_KIND: &str = "gapbench-cell-v1";

/// One arrival sweep of the matrix.
#[derive(Debug, Clone)]
pub struct Cell {
    pub trace: String,
    pub policy: PolicySpec,
    pub seed: u64,
}

/// One exact-gap study of the matrix: the policies' sweeps on a sampled sub-cluster (or the
/// whole cluster), each distinct instance solved once at every checkpoint
/// ([`crate::gap::gap_studies`]).
#[derive(Debug, Clone)]
pub struct GapCell {
    pub trace: String,
    pub policies: Vec<PolicySpec>,
    pub seed: u64,
    /// The whole cluster (`[gaps.full_cluster]`) rather than a sampled sub-cluster.
    pub full_cluster: bool,
}

/// A finished sweep cell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct CellRecord {
    pub(crate) key: String,
    pub(crate) trace: String,
    pub(crate) policy: String,
    pub(crate) summary: SeedSummary,
}

/// A finished gap study: its typed rows, so the CSVs are rendered at aggregation time by
/// the one schema.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct GapRecord {
    pub(crate) key: String,
    pub(crate) rows: Vec<GapRow>,
    pub(crate) fronts: Vec<FrontRow>,
}

impl Matrix {
    /// A hash of everything that determines a sweep cell's result.
    pub(crate) fn cell_key(&self, cell: &Cell) -> String {
        let policy = cell.policy.to_string();
        self.key(CELL_KIND, &cell.trace, &policy, cell.seed, "")
    }

    /// A hash of everything that determines a gap cell: the study settings and the gap
    /// schema version, so rows of an older schema are never counted as finished.
    pub(crate) fn gap_key(&self, cell: &GapCell) -> String {
        let study = serde_json::to_string(&self.spec.gaps).unwrap_or_default();
        let study = if cell.full_cluster {
            format!("full-cluster|{study}")
        } else {
            study
        };
        self.key(
            &gap_kind(GAP_SCHEMA_VERSION),
            &cell.trace,
            &cell.policy_list(),
            cell.seed,
            &study,
        )
    }

    /// A short hash of a result's kind, the tool version, policy (or policies), seed, tune
    /// ratio, `extra` settings and the trace's input hashes: two results with equal keys are
    /// the same.
    fn key(&self, kind: &str, trace: &str, policy: &str, seed: u64, extra: &str) -> String {
        let mut hasher = Sha256::new();
        hasher.update(format!(
            "{kind}|{}|{policy}|{seed}|{}|",
            env!("CARGO_PKG_VERSION"),
            self.spec.tune
        ));
        hasher.update(extra);
        for input in self.inputs.get(trace).into_iter().flatten() {
            hasher.update(&input.sha256);
        }
        crate::workload::hex(&hasher.finalize()[..8])
    }
}

/// Gap cells hold every policy of their study since the distinct instances are solved
/// once (before: one policy a cell, `gapbench-gap-v{N}`).
fn gap_kind(schema_version: u32) -> String {
    format!("gapbench-gaps-v{schema_version}")
}

impl GapCell {
    /// The policies, `|`-separated (a mix holds commas).
    pub fn policy_list(&self) -> String {
        let names: Vec<String> = self.policies.iter().map(|p| p.to_string()).collect();
        names.join("|")
    }
}

pub(crate) fn cell_path(out: &Path, cell: &Cell) -> PathBuf {
    out.join("cells")
        .join(&cell.trace)
        .join(cell.policy.slug())
        .join(format!("seed-{}.json", cell.seed))
}

pub(crate) fn gap_cell_path(out: &Path, cell: &GapCell) -> PathBuf {
    let folder = out.join("gap-cells").join(&cell.trace);
    let folder = if cell.full_cluster {
        folder.join("full-cluster")
    } else {
        folder
    };
    folder.join(format!("seed-{}.json", cell.seed))
}

/// The finished record of `cell` in `out`, if there is one with the right key.
pub(crate) fn finished(out: &Path, matrix: &Matrix, cell: &Cell) -> Option<CellRecord> {
    read_keyed(
        &cell_path(out, cell),
        &matrix.cell_key(cell),
        |r: &CellRecord| &r.key,
    )
}

/// The record in the cell file at `path` if it reads and carries `key` (an unreadable,
/// partly written or outdated file is not finished: the cell runs again).
pub(crate) fn read_keyed<R: serde::de::DeserializeOwned>(
    path: &Path,
    key: &str,
    key_of: impl Fn(&R) -> &str,
) -> Option<R> {
    let text = std::fs::read_to_string(path).ok()?;
    let record: R = serde_json::from_str(&text).ok()?;
    (key_of(&record) == key).then_some(record)
}

/// The finished gap study of `cell` in `out`, if there is one with the right key.
pub(crate) fn finished_gap(out: &Path, matrix: &Matrix, cell: &GapCell) -> Option<GapRecord> {
    read_keyed(
        &gap_cell_path(out, cell),
        &matrix.gap_key(cell),
        |r: &GapRecord| &r.key,
    )
}

/// Runs one gap study and keeps its rows; with `parallel`, a checkpoint's distinct instances
/// are solved side by side on the current rayon pool.
pub(crate) fn run_gap_cell(
    matrix: &Matrix,
    settings: &GapSettings,
    workload: &Workload,
    cell: &GapCell,
    parallel: bool,
) -> Result<GapRecord> {
    let runs: Vec<RunSettings> = cell
        .policies
        .iter()
        .map(|policy| {
            RunSettings::new(
                policy.clone(),
                Some(matrix.spec.tune),
                TaskOrder::Shuffled,
                NodeOrder::Random,
            )
        })
        .collect();
    let (rows, fronts) = gap_studies(workload, &runs, settings, cell.seed, parallel)?;
    Ok(GapRecord {
        key: matrix.gap_key(cell),
        rows,
        fronts,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use gapbench_results::{Objective, SolveStatus};

    use super::*;
    use crate::bench_spec::{BenchSpec, GapStudySpec, Seeds};
    use crate::workload::InputFingerprint;

    fn matrix() -> Matrix {
        Matrix {
            spec: BenchSpec {
                name: "t".into(),
                description: String::new(),
                nodes: "nodes.csv".into(),
                traces: vec!["default".into()],
                policies: vec!["fgd".into()],
                seeds: Seeds::List(vec![42]),
                tune: 1.3,
                gaps: Some(GapStudySpec {
                    traces: vec!["default".into()],
                    policies: vec!["fgd".into()],
                    seeds: Seeds::List(vec![42]),
                    checkpoints: vec![50],
                    objectives: vec!["power".into()],
                    sample_nodes: Some(5),
                    time_limit_s: 10.0,
                    mip_gap: None,
                    pareto_points: 0,
                    front_time_limit_s: None,
                    full_cluster: None,
                }),
                replay: None,
                budget: None,
            },
            traces: vec!["default".into()],
            gap_traces: vec!["default".into()],
            stand_in: false,
            inputs: BTreeMap::from([(
                "default".to_string(),
                vec![InputFingerprint {
                    role: "tasks".into(),
                    source: "t.csv".into(),
                    sha256: "ab".repeat(32),
                    adjustments: Vec::new(),
                }],
            )]),
            command: String::new(),
            replay_sources: Vec::new(),
            replay_inputs: BTreeMap::new(),
            budget_inputs: Vec::new(),
        }
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("gapbench-cells-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn gap_cell() -> GapCell {
        GapCell {
            full_cluster: false,
            trace: "default".into(),
            policies: vec!["fgd".parse().unwrap()],
            seed: 42,
        }
    }

    fn row() -> GapRow {
        GapRow {
            checkpoint_pct: 50.0,
            objective: Objective::Power,
            policy: "fgd".into(),
            seed: 42,
            nodes: 5,
            tasks: 12,
            heuristic_value: 1500.0,
            incumbent: Some(1400.0),
            bound: Some(1390.0),
            status: SolveStatus::TimeLimitWithIncumbent,
            gap_low_pct: Some(7.1),
            gap_high_pct: Some(f64::INFINITY),
            solve_s: 10.0,
            instance: "0123456789abcdef".into(),
        }
    }

    #[test]
    fn a_stored_gap_study_is_reused_with_its_typed_rows() {
        let (out, matrix, cell) = (temp_dir("reuse"), matrix(), gap_cell());
        let record = GapRecord {
            key: matrix.gap_key(&cell),
            rows: vec![row()],
            fronts: Vec::new(),
        };
        crate::io::write_json(&gap_cell_path(&out, &cell), &record).unwrap();
        assert_eq!(finished_gap(&out, &matrix, &cell), Some(record));
        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn a_changed_gap_schema_invalidates_old_cells() {
        let (matrix, cell) = (matrix(), gap_cell());
        let key_of = |version: u32| {
            let study = serde_json::to_string(&matrix.spec.gaps).unwrap();
            matrix.key(
                &gap_kind(version),
                &cell.trace,
                &cell.policy_list(),
                cell.seed,
                &study,
            )
        };
        assert_eq!(key_of(GAP_SCHEMA_VERSION), matrix.gap_key(&cell));
        assert_ne!(key_of(GAP_SCHEMA_VERSION - 1), matrix.gap_key(&cell));

        // A cell of the previous schema (key of version 1, pre-rendered CSV lines) is not
        // finished, whatever it holds.
        let out = temp_dir("stale");
        let stale = serde_json::json!({
            "key": key_of(1),
            "gap_lines": ["50.0,power,fgd,42,5,12,1500,1400,1390,time_limit,7.1,inf,10.000"],
            "front": [],
        });
        crate::io::write_json(&gap_cell_path(&out, &cell), &stale).unwrap();
        assert_eq!(finished_gap(&out, &matrix, &cell), None);
        // Even with today's key, rows that do not parse as today's schema are not finished.
        let mut wrong = stale.clone();
        wrong["key"] = matrix.gap_key(&cell).into();
        crate::io::write_json(&gap_cell_path(&out, &cell), &wrong).unwrap();
        assert_eq!(finished_gap(&out, &matrix, &cell), None);
        std::fs::remove_dir_all(&out).unwrap();
    }

    fn gap_cells_of(spec: &str) -> Vec<GapCell> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../workloads")
            .join(spec);
        let spec = BenchSpec::load(&path).unwrap();
        let (matrix, ..) = Matrix::resolve(spec, None).unwrap();
        matrix.gap_cells().unwrap()
    }

    #[test]
    fn a_gap_study_without_policies_is_no_cell() {
        // full-cluster.toml: no sub-cluster policies, four on the whole cluster.
        let cells = gap_cells_of("full-cluster.toml");
        assert_eq!(cells.len(), 1);
        assert!(cells[0].full_cluster);
        assert_eq!(cells[0].policies.len(), 4);
        // paper.toml: one sub-cluster study and one whole-cluster study.
        let cells = gap_cells_of("paper.toml");
        let whole: Vec<bool> = cells.iter().map(|c| c.full_cluster).collect();
        assert_eq!(whole, [false, true]);
    }
}
