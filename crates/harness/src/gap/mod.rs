//! `gapbench gap`: heuristic vs exact on the same snapshots.
//!
//! One policy, one seed: optionally draw a sub-cluster with the full cluster's node-type
//! mix, prepare the workload for *that* cluster (tuning targets the same ratio of the
//! sub-cluster's GPU capacity, so tune-down scales the task list proportionally), run the
//! arrival sweep, and at every checkpoint solve each objective on the very task set the
//! policy faced. By default ([`GapMethod::Auto`]) clusters up to `exact_max_nodes` get the
//! exact per-node formulations and larger ones (the full cluster) column generation, for
//! all three objectives; `--method` chooses explicitly (`relaxation`: the by-type
//! relaxation bound for power and allocation, labelled as such).
//!
//! Gaps (see `gapbench_ilp::gap`): power and fragmentation in percent of the exact value
//! (totals: idle power and the whole Σ F(n) included), allocation in percentage points of the
//! (sub-)cluster's GPU capacity, always as the interval `[gap_low, gap_high]` against the
//! incumbent and the proven bound, and always next to the solve's status. The bench studies
//! several policies at once and solves each distinct instance once ([`study`]).

mod rows;
mod solves;
mod study;

use std::path::Path;

use anyhow::{bail, Result};
use gapbench_ilp::{sample_sub_cluster, Objective, Snapshot, SolveOptions};
use gapbench_model::Cluster;
use gapbench_results::csv_text::number;
pub use gapbench_results::{FrontRow, GapRow};
use gapbench_results::{FRONTS_CSV, GAPS_CSV};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::io::{write_atomic, write_json};
use crate::manifest::Manifest;
use crate::run::RunSettings;
use crate::workload::Workload;

pub use self::study::{
    gap_studies, gap_studies_with_work, gap_study, gap_study_observed, gap_study_with,
    SolvedSnapshot, StudyOutcome,
};

/// Everything that decides a gap study besides the workload, the run settings and the seed.
#[derive(Debug, Clone, Serialize)]
pub struct GapSettings {
    /// Arrived GPU demand, in % of the (sub-)cluster's GPU capacity.
    pub checkpoints: Vec<f64>,
    #[serde(serialize_with = "objective_names")]
    pub objectives: Vec<Objective>,
    /// Draw a sub-cluster of this many nodes (same node-type mix; seeded by the run seed).
    pub sample_nodes: Option<usize>,
    pub time_limit_s: f64,
    pub mip_rel_gap: f64,
    pub threads: Option<u32>,
    /// Points of the power–fragmentation front per checkpoint (0: none).
    pub pareto_points: usize,
    /// The time limit of each ε-constraint solve of the front (column generation under the
    /// power cap; default: `time_limit_s`; the end points are the objectives' own solves).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub front_time_limit_s: Option<f64>,
    /// Largest cluster solved with the exact per-node model; larger ones get relaxation bounds.
    pub exact_max_nodes: usize,
}

fn objective_names<S: serde::Serializer>(
    objectives: &[Objective],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_seq(objectives.iter().map(|o| o.name()))
}

impl GapSettings {
    /// The options of a front's ε-constraint solves.
    pub fn front_options(&self) -> SolveOptions {
        SolveOptions {
            time_limit_s: self.front_time_limit_s.unwrap_or(self.time_limit_s),
            ..self.solve_options()
        }
    }

    pub fn solve_options(&self) -> SolveOptions {
        SolveOptions {
            time_limit_s: self.time_limit_s,
            mip_rel_gap: self.mip_rel_gap,
            threads: self.threads,
            ..SolveOptions::default()
        }
    }

    pub fn validate(&self) -> Result<()> {
        if self.checkpoints.is_empty() {
            bail!("no checkpoints given");
        }
        if let Some(bad) = self
            .checkpoints
            .iter()
            .find(|c| !(c.is_finite() && **c >= 0.0))
        {
            bail!("checkpoint {bad} is not a non-negative percentage");
        }
        for (i, checkpoint) in self.checkpoints.iter().enumerate() {
            if self.checkpoints[..i].contains(checkpoint) {
                bail!("checkpoint {checkpoint} is given twice: each would be solved again");
            }
        }
        if self.objectives.is_empty() {
            bail!("no objectives given (power, alloc, frag)");
        }
        if self.sample_nodes == Some(0) {
            bail!("--sample-nodes must be at least 1");
        }
        if self.pareto_points == 1 {
            bail!("--pareto-points must be 0 (no front) or at least 2 (the end points)");
        }
        self.front_options()
            .validate()
            .map_err(anyhow::Error::msg)?;
        self.solve_options().validate().map_err(anyhow::Error::msg)
    }
}

/// How the exact side of a gap study is solved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GapMethod {
    /// Per-node model up to `exact_max_nodes` nodes, column generation beyond.
    #[default]
    Auto,
    /// Column generation (configuration LP, Lagrangian bound, integer master).
    ColumnGeneration,
    /// The per-node model (exact, but only for small clusters).
    PerNode,
    /// The by-type relaxation: a bound for power and allocation, the heuristic as incumbent.
    Relaxation,
}

impl GapMethod {
    /// `auto`, `cg`, `per-node` or `relaxation`.
    pub fn parse(text: &str) -> Result<Self> {
        Ok(match text.trim() {
            "auto" => GapMethod::Auto,
            "cg" => GapMethod::ColumnGeneration,
            "per-node" => GapMethod::PerNode,
            "relaxation" => GapMethod::Relaxation,
            other => bail!("unknown method `{other}` (auto, cg, per-node, relaxation)"),
        })
    }

    /// The name [`parse`](Self::parse) reads.
    pub fn name(self) -> &'static str {
        match self {
            GapMethod::Auto => "auto",
            GapMethod::ColumnGeneration => "cg",
            GapMethod::PerNode => "per-node",
            GapMethod::Relaxation => "relaxation",
        }
    }

    /// The method used on a cluster of `nodes` nodes.
    fn resolve(self, nodes: usize, exact_max_nodes: usize) -> Self {
        match self {
            GapMethod::Auto if nodes <= exact_max_nodes => GapMethod::PerNode,
            GapMethod::Auto => GapMethod::ColumnGeneration,
            other => other,
        }
    }
}

/// Parses `power,alloc,frag`.
pub fn parse_objectives(names: &[String]) -> Result<Vec<Objective>> {
    let mut objectives = Vec::new();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let objective = Objective::parse(name).ok_or_else(|| {
            anyhow::anyhow!("unknown objective `{name}` (known: power, alloc, frag)")
        })?;
        if !objectives.contains(&objective) {
            objectives.push(objective);
        }
    }
    Ok(objectives)
}

/// The cluster a study runs on: the workload's, or a sampled sub-cluster.
pub fn study_cluster(workload: &Workload, settings: &GapSettings, seed: u64) -> Result<Cluster> {
    match settings.sample_nodes {
        None => Ok(workload.cluster.clone()),
        Some(nodes) => sample_sub_cluster(&workload.cluster, nodes, seed)
            .map(|(cluster, _)| cluster)
            .map_err(|e| anyhow::anyhow!("--sample-nodes {nodes}: {e}")),
    }
}

/// A fingerprint of the instance `objective` poses on `snapshot`: the cluster's nodes, the
/// FGD target workload and the multiset of the tasks the solver decides about (the placed
/// ones for power and fragmentation, every arrived one for allocation) — not which policy
/// placed them, nor where. Equal keys are solves of one optimum (`results::best_known`).
pub fn instance_key(snapshot: &Snapshot, objective: Objective) -> String {
    let mut hasher = Sha256::new();
    let cluster = snapshot.cluster;
    hasher.update(format!("{:?}\n", cluster.node_types));
    for node in &cluster.nodes {
        hasher.update(format!("{:?} ", node.type_id));
    }
    hasher.update(format!("\n{:?}\n", snapshot.typical.pods));
    let mut tasks: Vec<String> = snapshot
        .tasks
        .iter()
        .zip(&snapshot.heuristic)
        .filter(|(_, placed)| objective == Objective::Alloc || placed.is_some())
        .map(|(t, _)| {
            format!(
                "{} {} {} {} {:?}",
                t.cpu_milli, t.memory_mib, t.gpu_count, t.gpu_milli, t.gpu_models
            )
        })
        .collect();
    tasks.sort();
    hasher.update(tasks.join("\n"));
    crate::workload::hex(&hasher.finalize()[..8])
}

/// Writes `gaps.csv`, `fronts.csv` and `manifest.json` under `out`.
pub fn write_gap_outputs(
    out: &Path,
    workload: &Workload,
    run: &RunSettings,
    settings: &GapSettings,
    seeds: &[u64],
    rows: &[GapRow],
    fronts: &[FrontRow],
) -> Result<()> {
    write_atomic(&out.join(GAPS_CSV), GapRow::csv(rows).as_bytes())?;
    write_atomic(&out.join(FRONTS_CSV), FrontRow::csv(fronts).as_bytes())?;
    let manifest = Manifest::new(
        workload.inputs.clone(),
        seeds.to_vec(),
        serde_json::json!({ "run": run, "gap": settings }),
    );
    write_json(&out.join("manifest.json"), &manifest)
}

/// The gap of a row as people read it, never without its status: `2.31 % (optimal)`,
/// `[1.20, 3.40] % (time_limit)`; allocation in percentage points (`pp`).
pub fn describe_gap(row: &GapRow) -> String {
    let unit = if row.objective == Objective::Alloc {
        "pp"
    } else {
        "%"
    };
    let gap = match (row.gap_low_pct, row.gap_high_pct) {
        (Some(low), Some(high)) if low == high => format!("{} {unit}", number(low, 2)),
        (Some(low), Some(high)) => format!("[{}, {}] {unit}", number(low, 2), number(high, 2)),
        (Some(low), None) => format!("≥ {} {unit}", number(low, 2)),
        _ => "—".to_string(),
    };
    format!("{gap} ({})", row.status.label())
}

/// One terminal line per row (see [`TABLE_HEADER`]).
pub fn format_row(row: &GapRow) -> String {
    let d = row.objective.csv_decimals();
    let value = |v: Option<f64>| v.map_or("—".to_string(), |v| number(v, d));
    format!(
        "{:>6} {:>6} {:>5} {:>14} {:>14} {:>14} {:>7.1}  {}",
        number(row.checkpoint_pct, 0),
        row.objective.name(),
        row.tasks,
        number(row.heuristic_value, d),
        value(row.incumbent),
        value(row.bound),
        row.solve_s,
        describe_gap(row)
    )
}

pub const TABLE_HEADER: &str =
    "  chk% object tasks      heuristic      incumbent          bound  solve s  gap (status)";

#[cfg(test)]
mod tests {
    use gapbench_model::prepare;
    use gapbench_online::run_arrival_sweep;

    use super::*;
    use gapbench_results::SolveStatus;

    /// The sorted shapes of the tasks `objective` decides about, computed apart from the key.
    fn decided_shapes(snapshot: &Snapshot, objective: Objective) -> Vec<(u32, u64, u8, u16)> {
        let mut shapes: Vec<_> = snapshot
            .tasks
            .iter()
            .zip(&snapshot.heuristic)
            .filter(|(_, placed)| objective == Objective::Alloc || placed.is_some())
            .map(|(t, _)| (t.cpu_milli, t.memory_mib, t.gpu_count, t.gpu_milli))
            .collect();
        shapes.sort_unstable();
        shapes
    }

    #[test]
    fn the_same_tasks_are_one_instance_whoever_placed_them() {
        use gapbench_model::{NodeOrder, TaskOrder};
        let workload = Workload::embedded();
        let (cluster, _) = sample_sub_cluster(&workload.cluster, 40, 42).unwrap();
        let snapshot_of = |policy: &str, checkpoint: f64, check: &mut dyn FnMut(&Snapshot)| {
            let spec: gapbench_online::PolicySpec = policy.parse().unwrap();
            let prepared = prepare(
                &workload.tasks,
                &cluster,
                TaskOrder::Shuffled,
                Some(1.3),
                NodeOrder::Random,
                42,
            );
            let sweep = run_arrival_sweep(&cluster, &prepared, &spec).events();
            check(&Snapshot::at_checkpoint(&cluster, &prepared, &sweep, checkpoint).unwrap());
        };
        let facts = |policy: &str, checkpoint: f64| {
            let mut out = None;
            snapshot_of(policy, checkpoint, &mut |s| {
                out = Some((
                    instance_key(s, Objective::Power),
                    instance_key(s, Objective::Alloc),
                    decided_shapes(s, Objective::Power),
                    s.heuristic.clone(),
                ))
            });
            out.unwrap()
        };
        // Half full: nobody failed a task, the placements differ, the instance is one.
        let (fgd, fgd_alloc, fgd_shapes, fgd_placement) = facts("fgd", 50.0);
        let (pwr, pwr_alloc, pwr_shapes, pwr_placement) = facts("pwr", 50.0);
        assert!(fgd_placement
            .iter()
            .chain(&pwr_placement)
            .all(Option::is_some));
        assert_ne!(fgd_placement, pwr_placement);
        assert_eq!(fgd_shapes, pwr_shapes);
        assert_eq!(fgd, pwr);
        assert_eq!(fgd_alloc, pwr_alloc);
        assert_eq!(fgd.len(), 16);
        // Overfull: allocation decides about every arrived task (one instance); power and
        // fragmentation about the placed ones, one instance exactly when they are the same.
        let (fgd, fgd_alloc, fgd_shapes, _) = facts("fgd", 130.0);
        let (random, random_alloc, random_shapes, _) = facts("random", 130.0);
        assert_eq!(fgd_alloc, random_alloc);
        assert_eq!(fgd == random, fgd_shapes == random_shapes);
        assert_ne!(
            fgd_alloc, pwr_alloc,
            "another checkpoint is another instance"
        );
    }

    #[test]
    fn methods_parse_and_auto_switches_to_column_generation_beyond_the_exact_size() {
        assert_eq!(GapMethod::parse("cg").unwrap(), GapMethod::ColumnGeneration);
        assert_eq!(GapMethod::parse("per-node").unwrap(), GapMethod::PerNode);
        assert_eq!(
            GapMethod::parse("relaxation").unwrap(),
            GapMethod::Relaxation
        );
        assert!(GapMethod::parse("lp").is_err());
        for method in [
            GapMethod::Auto,
            GapMethod::ColumnGeneration,
            GapMethod::PerNode,
            GapMethod::Relaxation,
        ] {
            assert_eq!(GapMethod::parse(method.name()).unwrap(), method);
        }
        assert_eq!(GapMethod::Auto.resolve(8, 128), GapMethod::PerNode);
        assert_eq!(
            GapMethod::Auto.resolve(1213, 128),
            GapMethod::ColumnGeneration
        );
        assert_eq!(GapMethod::PerNode.resolve(1213, 128), GapMethod::PerNode);
        assert_eq!(GapMethod::Relaxation.resolve(8, 128), GapMethod::Relaxation);
    }

    fn row(objective: &str, low: Option<f64>, high: Option<f64>, status: &str) -> GapRow {
        GapRow {
            checkpoint_pct: 80.0,
            objective: Objective::parse(objective).unwrap(),
            policy: "pwr:200,fgd:800".into(),
            seed: 42,
            nodes: 8,
            tasks: 45,
            heuristic_value: 7175.0,
            incumbent: Some(6950.0),
            bound: high.map(|_| 6900.0),
            status: SolveStatus::parse(status).unwrap(),
            gap_low_pct: low,
            gap_high_pct: high,
            solve_s: 1.25,
            instance: "00c0ffee12345678".into(),
        }
    }

    #[test]
    fn csv_has_the_documented_columns_and_quotes_mixes() {
        let text = GapRow::csv(&[row("power", Some(3.2374), Some(3.9855), "time_limit")]);
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(GapRow::csv_header().as_str()));
        assert_eq!(
            lines.next(),
            Some("80.0,power,\"pwr:200,fgd:800\",42,8,45,7175,6950,6900,time_limit,3.2374,3.9855,1.250,00c0ffee12345678")
        );
    }

    #[test]
    fn a_gap_is_never_shown_without_its_status() {
        assert_eq!(
            describe_gap(&row("power", Some(2.5), Some(2.5), "optimal")),
            "2.50 % (optimal)"
        );
        assert_eq!(
            describe_gap(&row("alloc", Some(1.0), Some(2.25), "time_limit")),
            "[1.00, 2.25] pp (time_limit)"
        );
        assert_eq!(
            describe_gap(&row("frag", None, None, "error: x")),
            "— (error: x)"
        );
        assert!(
            format_row(&row("frag", Some(0.0), Some(f64::INFINITY), "time_limit"))
                .ends_with("[0.00, inf] % (time_limit)")
        );
    }

    #[test]
    fn objectives_parse_with_clear_errors() {
        let names = vec!["power".to_string(), " frag ".into(), "power".into()];
        assert_eq!(
            parse_objectives(&names).unwrap(),
            vec![Objective::Power, Objective::Frag]
        );
        assert!(parse_objectives(&["energy".to_string()])
            .unwrap_err()
            .to_string()
            .contains("unknown objective"));
    }
}
