//! Exact-gap studies (`[gaps]`): one study a cell — every policy's sweep on a sampled
//! sub-cluster (or the whole cluster), each distinct instance solved once at every
//! checkpoint ([`crate::gap::gap_studies_with_work`]) — its typed rows stored; aggregated into
//! `gaps.csv` and `pareto.csv`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use gapbench_model::{NodeOrder, TaskOrder};
use gapbench_online::PolicySpec;
use gapbench_results::gap_row::GAP_SCHEMA_VERSION;
use gapbench_results::{
    FrontRow, GapRow, ParetoPoint, PointKind, TracedGapRow, GAPS_CSV, PARETO_CSV,
};
use serde::{Deserialize, Serialize};

use crate::bench::kind::CellKind;
use crate::bench::matrix::{Inputs, Matrix};
use crate::bench::spec::{parse_policies, Seeds};
use crate::bench::status::Kind;
use crate::gap::{gap_studies_with_work, parse_objectives, GapSettings};
use crate::io::write_atomic;
use crate::run::RunSettings;
use crate::work::Work;

/// One exact-gap study of the matrix: the policies' sweeps on a sampled sub-cluster (or the
/// whole cluster), each distinct instance solved once at every checkpoint
/// ([`crate::gap::gap_studies_with_work`]).
#[derive(Debug, Clone)]
pub struct GapCell {
    pub trace: String,
    pub policies: Vec<PolicySpec>,
    pub seed: u64,
    /// The whole cluster (`[gaps.full_cluster]`) rather than a sampled sub-cluster.
    pub full_cluster: bool,
}

/// A finished gap study: its typed rows, so the CSVs are rendered at aggregation time by
/// the one schema.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct GapRecord {
    pub(crate) key: String,
    pub(crate) rows: Vec<GapRow>,
    pub(crate) fronts: Vec<FrontRow>,
}

/// The exact-gap studies of a bench.
pub(crate) struct GapStudies;

impl CellKind for GapStudies {
    type Cell = GapCell;
    type Record = GapRecord;
    const NAME: &'static str = "exact-gap studies";
    const AGGREGATES: &'static [&'static str] = &[GAPS_CSV, PARETO_CSV];

    /// In spec order: the sub-cluster studies, then the whole cluster's.
    fn cells(&self, matrix: &Matrix) -> Result<Vec<GapCell>> {
        gap_cells(matrix)
    }

    /// Everything that determines a gap cell: the study settings and the gap schema
    /// version, so rows of an older schema are never counted as finished.
    fn key(&self, matrix: &Matrix, cell: &GapCell) -> String {
        gap_key(matrix, cell, GAP_SCHEMA_VERSION)
    }

    fn record_key<'r>(&self, record: &'r GapRecord) -> &'r str {
        &record.key
    }

    fn path(&self, cell: &GapCell) -> PathBuf {
        let folder = PathBuf::from("gap-cells").join(&cell.trace);
        let folder = if cell.full_cluster {
            folder.join("full-cluster")
        } else {
            folder
        };
        folder.join(format!("seed-{}.json", cell.seed))
    }

    fn status_kind(&self, cell: &GapCell) -> Kind {
        if cell.full_cluster {
            Kind::WholeClusterGap
        } else {
            Kind::Gap
        }
    }

    fn in_spec(&self, matrix: &Matrix) -> bool {
        matrix.spec.gaps.is_some()
    }

    fn run(
        &self,
        matrix: &Matrix,
        inputs: &Inputs,
        cell: &GapCell,
        threads: usize,
        out: &Path,
    ) -> Result<GapRecord> {
        Ok(self.run_with_work(matrix, inputs, cell, threads, out)?.0)
    }

    /// One study, its solves on `threads` cores (side by side on one core each when 1), and
    /// its work: the sum of its sweeps and solves, and its longest chain of them.
    fn run_with_work(
        &self,
        matrix: &Matrix,
        inputs: &Inputs,
        cell: &GapCell,
        threads: usize,
        _: &Path,
    ) -> Result<(GapRecord, Option<Work>)> {
        let settings = gap_settings(matrix, cell, threads)?;
        let workload = &inputs.workloads[&cell.trace];
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
        let outcome = gap_studies_with_work(workload, &runs, &settings, cell.seed, threads == 1)?;
        let record = GapRecord {
            key: self.key(matrix, cell),
            rows: outcome.rows,
            fronts: outcome.fronts,
        };
        Ok((record, Some(outcome.work)))
    }

    fn aggregate(&self, out: &Path, matrix: &Matrix, cells: &[GapCell]) -> Result<()> {
        aggregate_gaps(out, matrix, cells)
    }
}

fn gap_key(matrix: &Matrix, cell: &GapCell, schema_version: u32) -> String {
    let study = serde_json::to_string(&matrix.spec.gaps).unwrap_or_default();
    let study = if cell.full_cluster {
        format!("full-cluster|{study}")
    } else {
        study
    };
    matrix.key(
        &gap_kind(schema_version),
        &cell.trace,
        &cell.policy_list(),
        cell.seed,
        &study,
    )
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

/// Every gap-study cell of `matrix`.
fn gap_cells(matrix: &Matrix) -> Result<Vec<GapCell>> {
    let Some(gaps) = &matrix.spec.gaps else {
        return Ok(Vec::new());
    };
    let mut cells = Vec::new();
    let mut add = |policies: &[String], seeds: &Seeds, full_cluster: bool| -> Result<()> {
        // No policies, no study (`workloads/full-cluster.toml` has only the whole cluster).
        if policies.is_empty() {
            return Ok(());
        }
        let policies = parse_policies(policies)?;
        let seeds = seeds.expand()?;
        for trace in &matrix.gap_traces {
            for &seed in &seeds {
                cells.push(GapCell {
                    trace: trace.clone(),
                    policies: policies.clone(),
                    seed,
                    full_cluster,
                });
            }
        }
        Ok(())
    };
    add(&gaps.policies, &gaps.seeds, false)?;
    if let Some(full) = &gaps.full_cluster {
        add(&full.policies, &full.seeds, true)?;
    }
    Ok(cells)
}

/// The settings of a gap cell's study, each solve on `threads` cores.
pub(crate) fn gap_settings(matrix: &Matrix, cell: &GapCell, threads: usize) -> Result<GapSettings> {
    let Some(gaps) = &matrix.spec.gaps else {
        bail!("gap cell without a [gaps] study");
    };
    let (sample_nodes, time_limit_s, pareto_points, front_time_limit_s, mip_gap) =
        match (&gaps.full_cluster, cell.full_cluster) {
            (Some(full), true) => (
                None,
                full.time_limit_s,
                full.pareto_points,
                full.front_time_limit_s,
                full.mip_gap.or(gaps.mip_gap),
            ),
            _ => (
                Some(
                    gaps.sample_nodes
                        .context("a sub-cluster study without sample_nodes")?,
                ),
                gaps.time_limit_s,
                gaps.pareto_points,
                gaps.front_time_limit_s,
                gaps.mip_gap,
            ),
        };
    Ok(GapSettings {
        checkpoints: gaps.checkpoints.iter().map(|&c| f64::from(c)).collect(),
        objectives: parse_objectives(&gaps.objectives)?,
        sample_nodes,
        time_limit_s,
        mip_rel_gap: mip_gap.unwrap_or(0.0),
        threads: Some(threads as u32),
        pareto_points,
        front_time_limit_s,
        // Sub-clusters get the per-node model, the whole cluster column generation.
        exact_max_nodes: gaps.sample_nodes.unwrap_or(0),
    })
}

/// Writes `gaps.csv` (the gap columns with the trace first) and `pareto.csv` from the gap
/// cells. The front of a (trace, checkpoint) is that of the first study's first policy's
/// instance; a study holds it with the own points of the policies that faced that instance
/// (at checkpoints where no task failed, every policy: same seed, same arrivals).
pub(crate) fn aggregate_gaps(out: &Path, matrix: &Matrix, cells: &[GapCell]) -> Result<()> {
    if matrix.spec.gaps.is_none() {
        return Ok(());
    }
    let mut gaps = format!("{}\n", TracedGapRow::csv_header());
    let mut pareto = format!("{}\n", ParetoPoint::csv_header());
    let first_seed = cells.first().map(|c| c.seed);
    let mut fronts: BTreeMap<(String, String), usize> = BTreeMap::new();
    for cell in cells {
        let record = GapStudies.finished(out, matrix, cell).with_context(|| {
            format!(
                "gap study {} {} seed {} is missing",
                cell.trace,
                cell.policy_list(),
                cell.seed
            )
        })?;
        for row in &record.rows {
            let traced = TracedGapRow {
                trace: cell.trace.clone(),
                gap: row.clone(),
            };
            writeln!(gaps, "{}", traced.csv_line())?;
        }
        if Some(cell.seed) != first_seed {
            continue;
        }
        let point_of = |kind, label: String, p: &FrontRow, status: String| ParetoPoint {
            trace: cell.trace.clone(),
            checkpoint_pct: p.checkpoint_pct,
            seed: cell.seed.to_string(),
            nodes: Some(p.nodes),
            kind,
            label,
            power_w: Some(p.power_watts),
            frag_gpu_milli: Some(p.frag_milli),
            status,
            power_cap_w: p.power_cap_watts,
            frag_bound_gpu_milli: p.frag_bound_milli,
        };
        for point in &record.fronts {
            let checkpoint = format!("{:.1}", point.checkpoint_pct);
            let front_tasks = *fronts
                .entry((cell.trace.clone(), checkpoint.clone()))
                .or_insert_with(|| {
                    for p in record.fronts.iter().filter(|p| {
                        !p.is_heuristic()
                            && format!("{:.1}", p.checkpoint_pct) == checkpoint
                            && p.power_watts.is_finite()
                    }) {
                        let front =
                            point_of(PointKind::Front, p.point.clone(), p, p.status_label());
                        let _ = writeln!(pareto, "{}", front.csv_line());
                    }
                    point.tasks
                });
            if point.is_heuristic() && point.tasks == front_tasks {
                let label = point.policy.clone();
                let own = point_of(PointKind::Policy, label, point, point.status_label());
                writeln!(pareto, "{}", own.csv_line())?;
            }
        }
    }
    write_atomic(&out.join(GAPS_CSV), gaps.as_bytes())?;
    write_atomic(&out.join(PARETO_CSV), pareto.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use gapbench_results::{Objective, SolveStatus};

    use super::*;
    use crate::bench::spec::{BenchSpec, GapStudySpec, Seeds};
    use crate::workload::InputFingerprint;

    fn matrix() -> Matrix {
        Matrix {
            spec: BenchSpec {
                name: "t".into(),
                description: String::new(),
                nodes: "nodes.csv".into(),
                gpu_models: None,
                gpu_models_file: None,
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
                figures: None,
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
            key: GapStudies.key(&matrix, &cell),
            rows: vec![row()],
            fronts: Vec::new(),
        };
        crate::io::write_json(&out.join(GapStudies.path(&cell)), &record).unwrap();
        assert_eq!(GapStudies.finished(&out, &matrix, &cell), Some(record));
        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn a_changed_gap_schema_invalidates_old_cells() {
        let (matrix, cell) = (matrix(), gap_cell());
        let key_of = |version: u32| gap_key(&matrix, &cell, version);
        assert_eq!(key_of(GAP_SCHEMA_VERSION), GapStudies.key(&matrix, &cell));
        assert_ne!(
            key_of(GAP_SCHEMA_VERSION - 1),
            GapStudies.key(&matrix, &cell)
        );

        // A cell of the previous schema (key of version 1, pre-rendered CSV lines) is not
        // finished, whatever it holds.
        let out = temp_dir("stale");
        let stale = serde_json::json!({
            "key": key_of(1),
            "gap_lines": ["50.0,power,fgd,42,5,12,1500,1400,1390,time_limit,7.1,inf,10.000"],
            "front": [],
        });
        crate::io::write_json(&out.join(GapStudies.path(&cell)), &stale).unwrap();
        assert_eq!(GapStudies.finished(&out, &matrix, &cell), None);
        // Even with today's key, rows that do not parse as today's schema are not finished.
        let mut wrong = stale.clone();
        wrong["key"] = GapStudies.key(&matrix, &cell).into();
        crate::io::write_json(&out.join(GapStudies.path(&cell)), &wrong).unwrap();
        assert_eq!(GapStudies.finished(&out, &matrix, &cell), None);
        std::fs::remove_dir_all(&out).unwrap();
    }

    fn gap_cells_of(spec: &str) -> Vec<GapCell> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../workloads")
            .join(spec);
        let spec = BenchSpec::load(&path).unwrap();
        let (matrix, ..) = Matrix::resolve(spec, None).unwrap();
        gap_cells(&matrix).unwrap()
    }

    /// workloads/paper-gaps.toml times the paper bench's gap phase: its gap studies must
    /// be the paper bench's, setting for setting.
    #[test]
    fn the_paper_gap_phase_spec_is_the_paper_benchs_gap_studies() {
        let load = |name: &str| {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../workloads")
                .join(name);
            BenchSpec::load(&path).unwrap()
        };
        let (paper, alone) = (load("paper.toml"), load("paper-gaps.toml"));
        assert_eq!(
            serde_json::to_string(&paper.gaps).unwrap(),
            serde_json::to_string(&alone.gaps).unwrap()
        );
        assert_eq!(paper.tune, alone.tune);
    }

    #[test]
    fn a_gap_study_without_policies_is_no_cell() {
        // full-cluster.toml: no sub-cluster policies, four on the whole cluster, a study
        // per seed 42–51.
        let cells = gap_cells_of("full-cluster.toml");
        assert_eq!(cells.len(), 10);
        assert!(cells
            .iter()
            .all(|c| c.full_cluster && c.policies.len() == 4));
        let seeds: Vec<u64> = cells.iter().map(|c| c.seed).collect();
        assert_eq!(seeds, (42..=51).collect::<Vec<_>>());
        // paper.toml: one sub-cluster study (seed 42), then the whole cluster's of seeds
        // 42–46.
        let cells = gap_cells_of("paper.toml");
        let studies: Vec<(bool, u64)> = cells.iter().map(|c| (c.full_cluster, c.seed)).collect();
        assert_eq!(
            studies,
            [
                (false, 42),
                (true, 42),
                (true, 43),
                (true, 44),
                (true, 45),
                (true, 46)
            ]
        );
    }
}
