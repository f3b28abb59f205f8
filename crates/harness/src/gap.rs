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
//! incumbent and the proven bound, and always next to the solve's status.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Result};
use gapbench_ilp::{
    column_generation, gap_interval, heuristic_value, max_alloc, min_frag_from, min_power,
    pareto_front_from, relaxed_max_alloc, relaxed_min_power, sample_sub_cluster, Objective,
    Snapshot, SolveOptions, SolveReport, SolveStatus,
};
use gapbench_model::{prepare, Cluster};
use gapbench_online::run_arrival_sweep;
use serde::Serialize;

use crate::io::{write_atomic, write_json};
use crate::manifest::Manifest;
use crate::run::RunSettings;
use crate::workload::Workload;

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
        if self.objectives.is_empty() {
            bail!("no objectives given (power, alloc, frag)");
        }
        if self.sample_nodes == Some(0) {
            bail!("--sample-nodes must be at least 1");
        }
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

/// One line of `gaps.csv`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GapRow {
    pub checkpoint_pct: f64,
    pub objective: &'static str,
    pub policy: String,
    pub seed: u64,
    /// Nodes of the (sub-)cluster.
    pub nodes: usize,
    /// Tasks the solver decided about: the heuristic's placed tasks for power and
    /// fragmentation, every arrived task for allocation.
    pub tasks: usize,
    /// Watts (power), milli-GPU allocated (alloc) or Σ F(n) in milli-GPU (frag).
    pub heuristic_value: f64,
    pub incumbent: Option<f64>,
    pub bound: Option<f64>,
    pub status: String,
    pub gap_low_pct: Option<f64>,
    pub gap_high_pct: Option<f64>,
    pub solve_s: f64,
    /// The (sub-)cluster's GPU capacity (allocation gaps are in its percentage points).
    #[serde(skip)]
    pub gpu_capacity_milli: u64,
}

/// One line of `pareto.csv`: a point of the front, or the heuristic itself.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParetoRow {
    pub checkpoint_pct: f64,
    pub policy: String,
    pub seed: u64,
    pub nodes: usize,
    pub tasks: usize,
    /// `heuristic`, `min_power`, `eps_<k>` or `min_frag`.
    pub point: String,
    pub power_cap_watts: Option<f64>,
    pub power_watts: f64,
    pub frag_milli: f64,
    pub frag_bound_milli: Option<f64>,
    pub status: String,
    pub solve_s: f64,
}

pub const GAPS_HEADER: &str = "checkpoint_pct,objective,policy,seed,nodes,tasks,heuristic_value,incumbent,bound,status,gap_low_pct,gap_high_pct,solve_s";
pub const PARETO_HEADER: &str = "checkpoint_pct,policy,seed,nodes,tasks,point,power_cap_watts,power_watts,frag_milli,frag_bound_milli,status,solve_s";

/// The cluster a study runs on: the workload's, or a sampled sub-cluster.
pub fn study_cluster(workload: &Workload, settings: &GapSettings, seed: u64) -> Result<Cluster> {
    match settings.sample_nodes {
        None => Ok(workload.cluster.clone()),
        Some(nodes) => sample_sub_cluster(&workload.cluster, nodes, seed)
            .map(|(cluster, _)| cluster)
            .map_err(|e| anyhow::anyhow!("--sample-nodes {nodes}: {e}")),
    }
}

/// One policy and seed: sweep, then every checkpoint × objective (and the front). Calls
/// `on_row` as each gap row is ready, for progress output. Solves by [`GapMethod::Auto`].
pub fn gap_study(
    workload: &Workload,
    run: &RunSettings,
    settings: &GapSettings,
    seed: u64,
    on_row: &mut dyn FnMut(&GapRow),
) -> Result<(Vec<GapRow>, Vec<ParetoRow>)> {
    gap_study_with(workload, run, settings, GapMethod::Auto, seed, on_row)
}

/// [`gap_study`] with an explicit solve method.
pub fn gap_study_with(
    workload: &Workload,
    run: &RunSettings,
    settings: &GapSettings,
    method: GapMethod,
    seed: u64,
    on_row: &mut dyn FnMut(&GapRow),
) -> Result<(Vec<GapRow>, Vec<ParetoRow>)> {
    settings.validate()?;
    let cluster = study_cluster(workload, settings, seed)?;
    let prepared = prepare(
        &workload.tasks,
        &cluster,
        run.task_order_value,
        run.tune_ratio,
        run.node_order_value,
        seed,
    );
    let sweep = run_arrival_sweep(&cluster, &prepared, &run.policy_spec);
    let options = settings.solve_options();
    let method = method.resolve(cluster.len(), settings.exact_max_nodes);
    let exact = method == GapMethod::PerNode;
    let capacity = cluster.gpu_capacity_milli();
    let mut rows = Vec::new();
    let mut pareto = Vec::new();
    for &checkpoint in &settings.checkpoints {
        let snapshot = Snapshot::at_checkpoint(&cluster, &prepared, &sweep, checkpoint)
            .map_err(anyhow::Error::msg)?;
        let placed = snapshot.placed_tasks().len();
        // Power is solved first (when asked for, or for the front): its placement is a
        // good warm start for fragmentation, and the front reuses both end points.
        let wants = |o: Objective| settings.objectives.contains(&o);
        let front = exact && settings.pareto_points >= 2;
        let least_power =
            (exact && (wants(Objective::Power) || front)).then(|| min_power(&snapshot, &options));
        let least_frag = (exact && (wants(Objective::Frag) || front)).then(|| {
            let others: Vec<&[_]> = least_power.iter().map(|r| r.placement.as_slice()).collect();
            min_frag_from(&snapshot, &others, &options)
        });
        for &objective in &settings.objectives {
            let report = match (method, objective) {
                (GapMethod::PerNode, Objective::Power) => {
                    least_power.clone().expect("solved above")
                }
                (GapMethod::PerNode, Objective::Frag) => least_frag.clone().expect("solved above"),
                (GapMethod::PerNode, Objective::Alloc) => max_alloc(&snapshot, &options),
                (GapMethod::ColumnGeneration | GapMethod::Auto, _) => {
                    column_generation(&snapshot, objective, &options)
                }
                (GapMethod::Relaxation, Objective::Power) => relaxed_min_power(&snapshot, &options),
                (GapMethod::Relaxation, Objective::Alloc) => relaxed_max_alloc(&snapshot, &options),
                (GapMethod::Relaxation, Objective::Frag) => SolveReport {
                    objective,
                    status: SolveStatus::Unsupported(
                        "no by-type relaxation of fragmentation: use --method cg".into(),
                    ),
                    incumbent: None,
                    bound: None,
                    mip_gap: None,
                    solve_seconds: 0.0,
                    placement: Vec::new(),
                    secondary_power_watts: None,
                },
            };
            let heuristic = heuristic_value(&snapshot, objective);
            let gap = gap_interval(&report, heuristic, capacity);
            let row = GapRow {
                checkpoint_pct: checkpoint,
                objective: objective.name(),
                policy: run.policy.clone(),
                seed,
                nodes: cluster.len(),
                tasks: if objective == Objective::Alloc {
                    snapshot.tasks.len()
                } else {
                    placed
                },
                heuristic_value: heuristic,
                incumbent: report.incumbent,
                bound: report.bound,
                status: report.status.label(),
                gap_low_pct: gap.map(|g| g.low_pct),
                gap_high_pct: gap.and_then(|g| g.high_pct),
                solve_s: report.solve_seconds,
                gpu_capacity_milli: capacity,
            };
            on_row(&row);
            rows.push(row);
        }
        if let (true, Some(least_power), Some(least_frag)) = (front, &least_power, &least_frag) {
            let row = |point: String, cap, power, frag, bound, status: String, seconds| ParetoRow {
                checkpoint_pct: checkpoint,
                policy: run.policy.clone(),
                seed,
                nodes: cluster.len(),
                tasks: placed,
                point,
                power_cap_watts: cap,
                power_watts: power,
                frag_milli: frag,
                frag_bound_milli: bound,
                status,
                solve_s: seconds,
            };
            pareto.push(row(
                "heuristic".into(),
                None,
                heuristic_value(&snapshot, Objective::Power),
                heuristic_value(&snapshot, Objective::Frag),
                None,
                "heuristic".into(),
                0.0,
            ));
            match pareto_front_from(
                &snapshot,
                least_power,
                least_frag,
                settings.pareto_points,
                &options,
            ) {
                Ok(front) => {
                    for p in front {
                        pareto.push(row(
                            p.label,
                            p.power_cap_watts,
                            p.power_watts,
                            p.frag_milli,
                            p.frag_bound_milli,
                            p.status.label(),
                            p.solve_seconds,
                        ));
                    }
                }
                Err(e) => pareto.push(row(
                    "front".into(),
                    None,
                    f64::NAN,
                    f64::NAN,
                    None,
                    SolveStatus::Error(e).label(),
                    0.0,
                )),
            }
        }
    }
    Ok((rows, pareto))
}

fn opt(value: Option<f64>, decimals: usize) -> String {
    value.map_or(String::new(), |v| num(v, decimals))
}

fn num(value: f64, decimals: usize) -> String {
    if value.is_infinite() {
        if value > 0.0 { "inf" } else { "-inf" }.to_string()
    } else if value.is_nan() {
        "nan".to_string()
    } else {
        format!("{value:.decimals$}")
    }
}

/// A CSV field, quoted when it holds a comma or quote (policy mixes, error messages).
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// Decimals per objective: whole watts and milli for power and allocation.
fn decimals(objective: &str) -> usize {
    if objective == "frag" {
        3
    } else {
        0
    }
}

pub fn gaps_csv(rows: &[GapRow]) -> String {
    let mut out = String::from(GAPS_HEADER);
    out.push('\n');
    for r in rows {
        let d = decimals(r.objective);
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{:.3}",
            num(r.checkpoint_pct, 1),
            r.objective,
            field(&r.policy),
            r.seed,
            r.nodes,
            r.tasks,
            num(r.heuristic_value, d),
            opt(r.incumbent, d),
            opt(r.bound, d),
            field(&r.status),
            opt(r.gap_low_pct, 4),
            opt(r.gap_high_pct, 4),
            r.solve_s
        )
        .expect("writing to a String cannot fail");
    }
    out
}

pub fn pareto_csv(rows: &[ParetoRow]) -> String {
    let mut out = String::from(PARETO_HEADER);
    out.push('\n');
    for r in rows {
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{:.3}",
            num(r.checkpoint_pct, 1),
            field(&r.policy),
            r.seed,
            r.nodes,
            r.tasks,
            r.point,
            opt(r.power_cap_watts, 0),
            num(r.power_watts, 0),
            num(r.frag_milli, 3),
            opt(r.frag_bound_milli, 3),
            field(&r.status),
            r.solve_s
        )
        .expect("writing to a String cannot fail");
    }
    out
}

/// Writes `gaps.csv`, `pareto.csv` and `manifest.json` under `out`.
pub fn write_gap_outputs(
    out: &Path,
    workload: &Workload,
    run: &RunSettings,
    settings: &GapSettings,
    seeds: &[u64],
    rows: &[GapRow],
    pareto: &[ParetoRow],
) -> Result<()> {
    write_atomic(&out.join("gaps.csv"), gaps_csv(rows).as_bytes())?;
    write_atomic(&out.join("pareto.csv"), pareto_csv(pareto).as_bytes())?;
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
    let unit = if row.objective == "alloc" { "pp" } else { "%" };
    let gap = match (row.gap_low_pct, row.gap_high_pct) {
        (Some(low), Some(high)) if low == high => format!("{} {unit}", num(low, 2)),
        (Some(low), Some(high)) => format!("[{}, {}] {unit}", num(low, 2), num(high, 2)),
        (Some(low), None) => format!("≥ {} {unit}", num(low, 2)),
        _ => "—".to_string(),
    };
    format!("{gap} ({})", row.status)
}

/// One terminal line per row (see [`TABLE_HEADER`]).
pub fn format_row(row: &GapRow) -> String {
    let d = decimals(row.objective);
    let value = |v: Option<f64>| v.map_or("—".to_string(), |v| num(v, d));
    format!(
        "{:>6} {:>6} {:>5} {:>14} {:>14} {:>14} {:>7.1}  {}",
        num(row.checkpoint_pct, 0),
        row.objective,
        row.tasks,
        num(row.heuristic_value, d),
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
    use super::*;

    #[test]
    fn methods_parse_and_auto_switches_to_column_generation_beyond_the_exact_size() {
        assert_eq!(GapMethod::parse("cg").unwrap(), GapMethod::ColumnGeneration);
        assert_eq!(GapMethod::parse("per-node").unwrap(), GapMethod::PerNode);
        assert_eq!(
            GapMethod::parse("relaxation").unwrap(),
            GapMethod::Relaxation
        );
        assert!(GapMethod::parse("lp").is_err());
        assert_eq!(GapMethod::Auto.resolve(8, 128), GapMethod::PerNode);
        assert_eq!(
            GapMethod::Auto.resolve(1213, 128),
            GapMethod::ColumnGeneration
        );
        assert_eq!(GapMethod::PerNode.resolve(1213, 128), GapMethod::PerNode);
        assert_eq!(GapMethod::Relaxation.resolve(8, 128), GapMethod::Relaxation);
    }

    fn row(objective: &'static str, low: Option<f64>, high: Option<f64>, status: &str) -> GapRow {
        GapRow {
            checkpoint_pct: 80.0,
            objective,
            policy: "pwr:200,fgd:800".into(),
            seed: 42,
            nodes: 8,
            tasks: 45,
            heuristic_value: 7175.0,
            incumbent: Some(6950.0),
            bound: high.map(|_| 6900.0),
            status: status.into(),
            gap_low_pct: low,
            gap_high_pct: high,
            solve_s: 1.25,
            gpu_capacity_milli: 40_000,
        }
    }

    #[test]
    fn csv_has_the_documented_columns_and_quotes_mixes() {
        let text = gaps_csv(&[row("power", Some(3.2374), Some(3.9855), "time_limit")]);
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(GAPS_HEADER));
        assert_eq!(
            lines.next(),
            Some("80.0,power,\"pwr:200,fgd:800\",42,8,45,7175,6950,6900,time_limit,3.2374,3.9855,1.250")
        );
        assert_eq!(GAPS_HEADER.split(',').count(), 13);
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
