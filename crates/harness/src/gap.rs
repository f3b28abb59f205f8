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

use std::path::Path;

use anyhow::{bail, Result};
use gapbench_ilp::{
    column_generation_carrying, column_generation_front, gap_interval, heuristic_value, max_alloc,
    min_frag_by_both, min_frag_from, min_power, relaxed_max_alloc, relaxed_min_power,
    sample_sub_cluster, ColumnCarry, Objective, ParetoPoint, Snapshot, SolveOptions, SolveReport,
    SolveStatus, SweepEvent,
};
use gapbench_model::{prepare, Cluster};
use gapbench_online::{run_arrival_sweep, SweepResult};
use gapbench_results::csv_text::number;
pub use gapbench_results::{FrontRow, GapRow};
use gapbench_results::{FRONTS_CSV, GAPS_CSV};
use serde::Serialize;
use sha2::{Digest, Sha256};

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

/// One policy and seed: sweep, then every checkpoint × objective (and the front). Calls
/// `on_row` as each gap row is ready, for progress output. Solves by [`GapMethod::Auto`].
pub fn gap_study(
    workload: &Workload,
    run: &RunSettings,
    settings: &GapSettings,
    seed: u64,
    on_row: &mut dyn FnMut(&GapRow),
) -> Result<(Vec<GapRow>, Vec<FrontRow>)> {
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
) -> Result<(Vec<GapRow>, Vec<FrontRow>)> {
    gap_study_observed(workload, run, settings, method, seed, on_row, &mut |_| {
        Ok(())
    })
}

/// One checkpoint once every objective is solved: the snapshot and one report per
/// objective (in `GapSettings::objectives` order), for `--export`.
pub struct SolvedSnapshot<'a> {
    pub snapshot: &'a Snapshot<'a>,
    pub reports: &'a [SolveReport],
    /// The method the reports come from (`Auto` resolved).
    pub method: GapMethod,
}

/// [`gap_study_with`], calling `on_solved` after each checkpoint's solves; its error stops
/// the study.
pub fn gap_study_observed(
    workload: &Workload,
    run: &RunSettings,
    settings: &GapSettings,
    method: GapMethod,
    seed: u64,
    on_row: &mut dyn FnMut(&GapRow),
    on_solved: &mut dyn FnMut(SolvedSnapshot) -> Result<()>,
) -> Result<(Vec<GapRow>, Vec<FrontRow>)> {
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
    let sweep = sweep_events(&run_arrival_sweep(&cluster, &prepared, &run.policy_spec));
    check_checkpoints_reached(&settings.checkpoints, &sweep, &cluster, run.tune_ratio)?;
    let options = settings.solve_options();
    let method = method.resolve(cluster.len(), settings.exact_max_nodes);
    let exact = method == GapMethod::PerNode;
    let capacity = cluster.gpu_capacity_milli();
    let mut rows = Vec::new();
    let mut pareto = Vec::new();
    // Column generation starts each checkpoint from the configurations the last one used;
    // the front's capped solves keep theirs apart (they would steer fragmentation's).
    let mut carry = ColumnCarry::new();
    let mut front_carry = ColumnCarry::new();
    for &checkpoint in &settings.checkpoints {
        let snapshot = Snapshot::at_checkpoint(&cluster, &prepared, &sweep, checkpoint)
            .map_err(anyhow::Error::msg)?;
        let placed = snapshot.placed_tasks().len();
        // The front needs both end points, exact (per node) or by column generation.
        let by_cg = matches!(method, GapMethod::ColumnGeneration | GapMethod::Auto);
        let front = (exact || by_cg) && settings.pareto_points >= 2;
        let wants = |o: Objective| settings.objectives.contains(&o) || front;
        let (least_power, least_frag) = if exact || by_cg {
            end_points(&snapshot, exact, wants, &options, &mut carry)
        } else {
            (None, None)
        };
        let mut reports = Vec::new();
        for &objective in &settings.objectives {
            let report = match objective {
                Objective::Power if exact || by_cg => least_power.clone().expect("solved above"),
                Objective::Frag if exact || by_cg => least_frag.clone().expect("solved above"),
                _ => solve_objective(method, objective, &snapshot, &options, &mut carry),
            };
            let heuristic = heuristic_value(&snapshot, objective);
            let gap = gap_interval(&report, heuristic, capacity);
            let row = GapRow {
                checkpoint_pct: checkpoint,
                objective,
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
                status: report.status.clone(),
                gap_low_pct: gap.map(|g| g.low_pct),
                gap_high_pct: gap.and_then(|g| g.high_pct),
                solve_s: report.solve_seconds,
                instance: instance_key(&snapshot, objective),
            };
            on_row(&row);
            rows.push(row);
            reports.push(report);
        }
        on_solved(SolvedSnapshot {
            snapshot: &snapshot,
            reports: &reports,
            method,
        })?;
        if let (true, Some(least_power), Some(least_frag)) = (front, &least_power, &least_frag) {
            // By column generation under the power cap on every cluster size: on the paper
            // bench's 8-node samples the per-node ε-constraint MIPs never improved on the
            // least-power placement within 5–15 s, where these solves found the least
            // fragmentation at 420 W less in 0.03 s (FGD, 50 % arrived).
            let computed = column_generation_front(
                &snapshot,
                least_power,
                least_frag,
                settings.pareto_points,
                &settings.front_options(),
                &mut front_carry,
            );
            let point = FrontPoint {
                checkpoint_pct: checkpoint,
                policy: &run.policy,
                seed,
                nodes: cluster.len(),
                tasks: placed,
            };
            pareto.extend(point.rows(&snapshot, computed));
        }
    }
    Ok((rows, pareto))
}

/// The least power and the least fragmentation, each where `wants` it: per node (`exact`)
/// or by column generation. Power is solved first: its placement is a good warm start for
/// fragmentation, and the front reuses both.
fn end_points(
    snapshot: &Snapshot,
    exact: bool,
    wants: impl Fn(Objective) -> bool,
    options: &SolveOptions,
    carry: &mut ColumnCarry,
) -> (Option<SolveReport>, Option<SolveReport>) {
    let least_power = wants(Objective::Power).then(|| {
        if exact {
            min_power(snapshot, options)
        } else {
            column_generation_carrying(snapshot, Objective::Power, options, carry).0
        }
    });
    let least_frag = wants(Objective::Frag).then(|| {
        if exact {
            let others: Vec<&[_]> = least_power.iter().map(|r| r.placement.as_slice()).collect();
            min_frag_by_both(snapshot, &others, options, carry)
        } else {
            column_generation_carrying(snapshot, Objective::Frag, options, carry).0
        }
    });
    (least_power, least_frag)
}

/// One objective by `method` where the end points of the front are not involved:
/// allocation exactly or by column generation, and every objective by relaxation.
fn solve_objective(
    method: GapMethod,
    objective: Objective,
    snapshot: &Snapshot,
    options: &SolveOptions,
    carry: &mut ColumnCarry,
) -> SolveReport {
    match (method, objective) {
        (GapMethod::PerNode, Objective::Power) => min_power(snapshot, options),
        (GapMethod::PerNode, Objective::Frag) => min_frag_from(snapshot, &[], options),
        (GapMethod::PerNode, Objective::Alloc) => max_alloc(snapshot, options),
        (GapMethod::ColumnGeneration | GapMethod::Auto, _) => {
            column_generation_carrying(snapshot, objective, options, carry).0
        }
        (GapMethod::Relaxation, Objective::Power) => relaxed_min_power(snapshot, options),
        (GapMethod::Relaxation, Objective::Alloc) => relaxed_max_alloc(snapshot, options),
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

/// What every row of one checkpoint's front shares.
struct FrontPoint<'a> {
    checkpoint_pct: f64,
    policy: &'a str,
    seed: u64,
    nodes: usize,
    tasks: usize,
}

impl FrontPoint<'_> {
    /// The heuristic's own point, then the front's points (or one row with its error).
    fn rows(&self, snapshot: &Snapshot, front: Result<Vec<ParetoPoint>, String>) -> Vec<FrontRow> {
        let row = |point: String, cap, power, frag, bound, status, seconds| FrontRow {
            checkpoint_pct: self.checkpoint_pct,
            policy: self.policy.to_string(),
            seed: self.seed,
            nodes: self.nodes,
            tasks: self.tasks,
            point,
            power_cap_watts: cap,
            power_watts: power,
            frag_milli: frag,
            frag_bound_milli: bound,
            status,
            solve_s: seconds,
        };
        let mut rows = vec![row(
            FrontRow::HEURISTIC.into(),
            None,
            heuristic_value(snapshot, Objective::Power),
            heuristic_value(snapshot, Objective::Frag),
            None,
            None,
            0.0,
        )];
        match front {
            Ok(front) => rows.extend(front.into_iter().map(|p| {
                row(
                    p.label,
                    p.power_cap_watts,
                    p.power_watts,
                    p.frag_milli,
                    p.frag_bound_milli,
                    Some(p.status),
                    p.solve_seconds,
                )
            })),
            Err(e) => rows.push(row(
                "front".into(),
                None,
                f64::NAN,
                f64::NAN,
                None,
                Some(SolveStatus::Error(e)),
                0.0,
            )),
        }
        rows
    }
}

/// The engine's records as the events a snapshot is cut from (the solver side knows no
/// engine).
pub fn sweep_events(sweep: &SweepResult) -> Vec<SweepEvent> {
    sweep
        .records
        .iter()
        .map(|r| SweepEvent {
            task: r.task as usize,
            placement: r.placement,
            arrived_gpu_milli: r.arrived_gpu_milli,
        })
        .collect()
}

/// Refuses a checkpoint past the end of the sweep: its snapshot would be the sweep's end
/// state under another label. A tuned sweep reaches its tune ratio (× 100 %) by design,
/// though tune-up stops just short of it, so checkpoints up to the ratio count as reached.
fn check_checkpoints_reached(
    checkpoints: &[f64],
    sweep: &[SweepEvent],
    cluster: &Cluster,
    tune_ratio: Option<f64>,
) -> Result<()> {
    let capacity = cluster.gpu_capacity_milli() as f64;
    let end_pct = sweep
        .last()
        .map_or(0.0, |e| 100.0 * e.arrived_gpu_milli as f64 / capacity);
    let reach_pct = end_pct.max(tune_ratio.map_or(0.0, |r| 100.0 * r));
    if let Some(beyond) = checkpoints.iter().find(|&&c| c > reach_pct) {
        let tune = tune_ratio.map_or("no tuning".to_string(), |r| format!("tune {r}"));
        bail!(
            "checkpoint {beyond} % is beyond the sweep, which ends at {end_pct:.1} % arrived GPU demand ({tune}): its snapshot would be the end state labelled {beyond} %; choose checkpoints up to {:.0}, or raise the tune ratio",
            reach_pct.floor()
        );
    }
    Ok(())
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
    use super::*;

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
        use gapbench_model::{CpuPowerProfile, InputRules, NodeOrder, TaskOrder};
        let workload = Workload::load(
            None,
            None,
            CpuPowerProfile::default(),
            InputRules::Reference,
        )
        .unwrap();
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
            let sweep = sweep_events(&run_arrival_sweep(&cluster, &prepared, &spec));
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
        assert_eq!(lines.next(), Some(GapRow::CSV_HEADER));
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
