//! Budget studies of a bench spec (`[budget]`), as cells like every other study (resumed,
//! sharded, merged): on each setup (a GPU slice, an arrival scale, which jobs) and seed,
//! full-clock FIFO and Zeus-like run once, PowerFlow-style at each fraction of FIFO's job
//! energy and GreenFlow-style at each fraction of FIFO's carbon; where the setup asks, the
//! Lagrangian frontier of the same jobs bounds every point. Every replay runs in the one
//! engine on the setup's real nodes. Aggregated into `budget_points.csv`,
//! `budget_frontier.csv` and `budget_timeline.csv`.
//!
//! "At equal energy" in the papers' sense is the fraction 1.0: the budgeted policy may
//! spend what FIFO spent (each budgeted cell replays FIFO itself to know it, so cells are
//! independent), and `jct_speedup_vs_fifo` is FIFO's mean JCT over its own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use gapbench_model::{CpuPowerProfile, InputRules};
use gapbench_replay::jobs::first_arrival_s;
use gapbench_replay::{Budget, QueueDiscipline};
use gapbench_results::budget::{rows_to_csv, BUDGET_TIMELINE_SAMPLES};
use gapbench_results::{
    budget_point_label, BudgetFrontierRow, BudgetPointRow, BudgetTimelineRow, Seeds,
    BUDGET_FRONTIER_CSV, BUDGET_POINTS_CSV, BUDGET_TIMELINE_CSV,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::bench::Matrix;
use crate::budget::BudgetArgs;
use crate::frontier::{budget_of, budgeted_policy, BudgetSetup, FrontierKind, PolicyPoint};
use crate::io::write_atomic;
use crate::replay::{ReplayInputs, Selection, TimedSource};
use crate::stored_frontier::StoredFrontier;
use crate::workload::InputFingerprint;

/// `[budget]`: budgeted replays and their exact frontiers.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BudgetStudySpec {
    /// The openb trace replayed at its real times (`openb_pod_list_NAME.csv`).
    pub trace: String,
    pub seeds: Seeds,
    /// Budgets as shares of full-clock FIFO's spend (1.0 = "at equal energy/carbon").
    pub fractions: Vec<f64>,
    /// `energy` (PowerFlow-style) and/or `carbon` (GreenFlow-style).
    #[serde(default = "default_kinds")]
    pub kinds: Vec<String>,
    /// The FIFO baselines' queue: `fifo` (strict: the oldest waiting job blocks the ones
    /// behind it) or `backfill` (the first waiting jobs that fit start). On real nodes, with
    /// no migration, strict FIFO waits for whole free nodes behind every 8-GPU job.
    #[serde(default = "default_queue")]
    pub queue: String,
    /// Grid carbon intensity: `caiso-2023` (shipped), `caiso-like`, `gb-like` or a CSV path.
    #[serde(default = "default_carbon")]
    pub carbon: String,
    /// Round period Δ of the budgeted policies, seconds.
    #[serde(default = "default_round_s")]
    pub round_s: f64,
    /// Slot length of the frontier problem, seconds.
    #[serde(default = "default_round_s")]
    pub slot_s: f64,
    /// Budget prices λ of the Lagrangian sweep and subgradient steps per price: fewer
    /// give a faster, looser (still valid) envelope.
    #[serde(default = "default_frontier_prices")]
    pub frontier_prices: usize,
    #[serde(default = "default_frontier_steps")]
    pub frontier_steps: usize,
    /// Column generation tightens the envelope at this many budgets, evenly from 0.9 × the
    /// least fraction of full-clock FIFO's spend to FIFO's spend (the range the points spend
    /// in); 0 = the Lagrangian alone.
    #[serde(default = "default_frontier_budgets")]
    pub frontier_budgets: usize,
    /// Master solves per budget, at most, and the wall-clock limit of one frontier cell
    /// (seconds): the bound stays valid when either stops it; its status says which.
    #[serde(default = "default_frontier_rounds")]
    pub frontier_rounds: usize,
    #[serde(default = "default_frontier_seconds")]
    pub frontier_seconds: f64,
    pub setups: Vec<BudgetSetupSpec>,
}

/// One instance of a budget study.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BudgetSetupSpec {
    pub name: String,
    /// A pool of this many GPUs (in 8-GPU nodes); none = the cluster's GPUs.
    #[serde(default)]
    pub gpus: Option<u64>,
    #[serde(default = "default_arrival_scale")]
    pub arrival_scale: f64,
    /// Only the first N GPU jobs (by arrival), after `max_duration_s`.
    #[serde(default)]
    pub first_jobs: Option<usize>,
    /// Leave out jobs longer than this at their trace configuration.
    #[serde(default)]
    pub max_duration_s: Option<f64>,
    /// Compute the frontier of this setup's jobs.
    #[serde(default)]
    pub frontier: bool,
    /// The frontier's slot length here (none = the study's `slot_s`).
    #[serde(default)]
    pub slot_s: Option<f64>,
    /// Quiet stretches of the trace (trace-configuration load under half the GPUs, no fluid
    /// queue) go in slots of up to this many seconds; none = the slot length everywhere.
    /// Coarser slots relax the problem, so the bound stays valid
    /// (`gapbench_ilp::frontier::slots`).
    #[serde(default)]
    pub quiet_slot_s: Option<f64>,
    /// The frontier by dual ascent (`gapbench_ilp::frontier::ascent`) instead of the
    /// Lagrangian sweep and column generation: this many steps at the unconstrained end, then
    /// as many at each point's own spend (the cell replays the points' policies to know
    /// them). Counted in steps, so deterministic; no LP, so the bound's status is
    /// `lagrangian`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ascent_steps: Option<usize>,
}

fn default_kinds() -> Vec<String> {
    vec!["energy".into(), "carbon".into()]
}
fn default_queue() -> String {
    "fifo".into()
}
fn default_carbon() -> String {
    "caiso-2023".into()
}
fn default_round_s() -> f64 {
    300.0
}
fn default_frontier_prices() -> usize {
    12
}
fn default_frontier_steps() -> usize {
    40
}
fn default_frontier_budgets() -> usize {
    // Column generation stops on the clock; a study asks for it (`frontier_budgets`), so a
    // spec that does not stays deterministic (the Lagrangian alone).
    0
}
fn default_frontier_rounds() -> usize {
    40
}
fn default_frontier_seconds() -> f64 {
    120.0
}
fn default_arrival_scale() -> f64 {
    1.0
}

/// Points of the frontier written per study (an even sweep of budgets).
const FRONTIER_BUDGETS: usize = 40;

impl BudgetStudySpec {
    pub fn validate(&self) -> Result<()> {
        if self.seeds.expand()?.is_empty() {
            bail!("[budget] `seeds` must not be empty");
        }
        self.queue()?;
        if self.fractions.is_empty() || self.fractions.iter().any(|f| !(f.is_finite() && *f > 0.0))
        {
            bail!("[budget] `fractions` takes positive shares of FIFO's spend such as [0.9, 1.0]");
        }
        self.check_lists()?;
        for kind in &self.kinds {
            kind_of(kind)?;
        }
        for (what, value) in [
            ("round_s", self.round_s),
            ("slot_s", self.slot_s),
            ("frontier_seconds", self.frontier_seconds),
        ] {
            if !(value.is_finite() && value > 0.0) {
                bail!("[budget] `{what}` takes a positive number of seconds");
            }
        }
        if self.setups.is_empty() {
            bail!("[budget] needs at least one entry in `setups`");
        }
        for setup in &self.setups {
            let positive = |v: Option<f64>| v.is_none_or(|d| d.is_finite() && d > 0.0);
            let valid = setup.gpus != Some(0)
                && setup.arrival_scale.is_finite()
                && setup.arrival_scale > 0.0
                && positive(setup.max_duration_s)
                && positive(setup.slot_s)
                && positive(setup.quiet_slot_s);
            if !valid {
                bail!(
                    "[budget] setup `{}`: `gpus`, `arrival_scale`, `max_duration_s`, `slot_s` and `quiet_slot_s` must be positive",
                    setup.name
                );
            }
        }
        Ok(())
    }

    /// The FIFO baselines' queue discipline.
    fn queue(&self) -> Result<QueueDiscipline> {
        match self.queue.as_str() {
            "fifo" => Ok(QueueDiscipline::Fifo),
            "backfill" => Ok(QueueDiscipline::Backfill),
            other => bail!("[budget] queue `{other}`: expected fifo or backfill"),
        }
    }

    /// The flags of `gapbench replay` this study runs with.
    fn args(&self) -> BudgetArgs {
        BudgetArgs {
            carbon: Some(self.carbon.clone()),
            round: Some(self.round_s),
            ..BudgetArgs::default()
        }
    }
}

impl BudgetSetupSpec {
    /// The part of the cluster and workload this setup replays: its GPU tasks only (the
    /// training jobs the budgets and frontiers are about).
    pub fn selection(&self) -> Selection {
        Selection {
            gpus: self.gpus,
            first_jobs: self.first_jobs,
            max_duration_s: self.max_duration_s,
            gpu_tasks_only: true,
        }
    }
}

fn kind_of(name: &str) -> Result<FrontierKind> {
    match name {
        "energy" => Ok(FrontierKind::Energy),
        "carbon" => Ok(FrontierKind::Carbon),
        other => bail!("[budget] kind `{other}`: expected energy or carbon"),
    }
}

/// One cell of a budget study.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetCell {
    pub setup: String,
    pub seed: u64,
    pub item: BudgetItem,
}

/// What a budget cell computes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BudgetItem {
    /// A budget-free baseline: `fifo-full-clock` or `zeus`.
    Baseline(&'static str),
    /// The budgeted policy of `kind` at `fraction` of FIFO's spend.
    Budgeted { kind: FrontierKind, fraction: f64 },
    /// The Lagrangian frontier of the setup's jobs.
    Frontier { kind: FrontierKind },
}

impl BudgetItem {
    /// The file name and row label: `fifo-full-clock`, `powerflow@0.90`, `frontier-energy`.
    pub fn label(&self) -> String {
        match self {
            BudgetItem::Baseline(policy) => policy.to_string(),
            BudgetItem::Budgeted { kind, fraction } => {
                budget_point_label(budgeted_policy(*kind), Some(*fraction))
            }
            BudgetItem::Frontier { kind } => format!("frontier-{}", kind_name(*kind)),
        }
    }
}

fn kind_name(kind: FrontierKind) -> &'static str {
    match kind {
        FrontierKind::Energy => "energy",
        FrontierKind::Carbon => "carbon",
    }
}

/// A replay's point as stored: what the rows need.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct StoredPoint {
    policy: String,
    fraction: Option<f64>,
    budget: Option<f64>,
    jobs: usize,
    job_energy_kwh: Option<f64>,
    carbon_kg: Option<f64>,
    cluster_energy_kwh: Option<f64>,
    mean_jct_s: Option<f64>,
    error: String,
    /// Downsampled `(seconds since the first job's arrival, job kW, g/kWh, waiting)`, kept
    /// for FIFO and for the budgeted policies at equal spend.
    timeline: Vec<(f64, f64, f64, u32)>,
}

/// A finished budget cell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct BudgetRecord {
    key: String,
    point: Option<StoredPoint>,
    frontier: Option<StoredFrontier>,
}

/// Bump when a budget cell's record changes meaning.
const BUDGET_CELL_KIND: &str = "gapbench-budget-cell-v3";

/// The loaded inputs of each budget setup, by name.
pub(crate) type BudgetInputs = BTreeMap<String, ReplayInputs>;

/// Loads every setup's cluster and workload once. `files` are the node list and the trace;
/// without them the embedded openb-like workload (with drawn times) stands in.
pub(crate) fn load_budget_inputs(
    spec: Option<&BudgetStudySpec>,
    files: Option<(PathBuf, PathBuf)>,
) -> Result<BudgetInputs> {
    let Some(spec) = spec else {
        return Ok(BudgetInputs::new());
    };
    spec.setups
        .iter()
        .map(|setup| {
            let inputs = ReplayInputs::load(
                TimedSource::Openb {
                    nodes: files.as_ref().map(|f| f.0.clone()),
                    tasks: files.as_ref().map(|f| f.1.clone()),
                },
                setup.arrival_scale,
                setup.selection(),
                InputRules::Reference,
                CpuPowerProfile::Reference,
            )
            .with_context(|| format!("[budget] setup `{}`", setup.name))?;
            Ok((setup.name.clone(), inputs))
        })
        .collect()
}

/// The input hashes of a budget study (the same files for every setup).
pub(crate) fn budget_fingerprints(inputs: &BudgetInputs) -> Vec<InputFingerprint> {
    inputs
        .values()
        .next()
        .map(|i| i.inputs.clone())
        .unwrap_or_default()
}

impl Matrix {
    /// A matrix of a budget study alone (`run_budget_study`).
    pub(crate) fn of_budget_study(study: BudgetStudySpec, inputs: Vec<InputFingerprint>) -> Matrix {
        Matrix {
            spec: crate::bench_spec::BenchSpec {
                name: "budget".into(),
                description: String::new(),
                nodes: String::new(),
                traces: Vec::new(),
                policies: Vec::new(),
                seeds: Seeds::List(Vec::new()),
                tune: 1.3,
                gaps: None,
                replay: None,
                budget: Some(study),
            },
            traces: Vec::new(),
            gap_traces: Vec::new(),
            stand_in: false,
            inputs: BTreeMap::new(),
            command: String::new(),
            replay_sources: Vec::new(),
            replay_inputs: BTreeMap::new(),
            budget_inputs: inputs,
        }
    }

    /// Every budget cell, in spec order: per setup and seed, the baselines, then per kind
    /// the frontier (when asked) and the budgeted policy at each fraction.
    pub fn budget_cells(&self) -> Result<Vec<BudgetCell>> {
        let Some(spec) = &self.spec.budget else {
            return Ok(Vec::new());
        };
        let mut cells = Vec::new();
        for setup in &spec.setups {
            for seed in spec.seeds.expand()? {
                let mut add = |item| {
                    cells.push(BudgetCell {
                        setup: setup.name.clone(),
                        seed,
                        item,
                    })
                };
                add(BudgetItem::Baseline("fifo-full-clock"));
                add(BudgetItem::Baseline("zeus"));
                for kind in &spec.kinds {
                    let kind = kind_of(kind)?;
                    if setup.frontier {
                        add(BudgetItem::Frontier { kind });
                    }
                    for &fraction in &spec.fractions {
                        add(BudgetItem::Budgeted { kind, fraction });
                    }
                }
            }
        }
        Ok(cells)
    }

    /// A hash of everything that determines a budget cell.
    pub(crate) fn budget_key(&self, cell: &BudgetCell) -> String {
        let mut hasher = Sha256::new();
        hasher.update(format!(
            "{BUDGET_CELL_KIND}|{}|{}|{}|{}|",
            env!("CARGO_PKG_VERSION"),
            cell.setup,
            cell.seed,
            cell.item.label()
        ));
        if let Some(spec) = &self.spec.budget {
            let mut study = spec.clone();
            // Other setups, seeds and fractions do not change this cell.
            study.setups.retain(|s| s.name == cell.setup);
            study.seeds = Seeds::List(Vec::new());
            study.fractions.clear();
            study.kinds.clear();
            hasher.update(serde_json::to_string(&study).unwrap_or_default());
        }
        for input in &self.budget_inputs {
            hasher.update(&input.sha256);
        }
        crate::workload::hex(&hasher.finalize()[..8])
    }
}

pub(crate) fn budget_cell_path(out: &Path, cell: &BudgetCell) -> PathBuf {
    out.join("budget-cells")
        .join(&cell.setup)
        .join(format!("seed-{}", cell.seed))
        .join(format!("{}.json", cell.item.label()))
}

/// The finished record of `cell` in `out`, if there is one with the right key.
pub(crate) fn finished_budget(
    out: &Path,
    matrix: &Matrix,
    cell: &BudgetCell,
) -> Option<BudgetRecord> {
    crate::cells::read_keyed(
        &budget_cell_path(out, cell),
        &matrix.budget_key(cell),
        |r: &BudgetRecord| &r.key,
    )
}

/// Runs one budget cell.
pub(crate) fn run_budget_cell(
    matrix: &Matrix,
    inputs: &BudgetInputs,
    cell: &BudgetCell,
) -> Result<BudgetRecord> {
    let spec = matrix
        .spec
        .budget
        .as_ref()
        .context("a budget cell without a [budget] study")?;
    let context = || {
        format!(
            "[budget] setup `{}`, seed {}, {}",
            cell.setup,
            cell.seed,
            cell.item.label()
        )
    };
    let mut setup =
        BudgetSetup::new(&inputs[&cell.setup], &spec.args(), cell.seed).with_context(context)?;
    setup.options.queue = spec.queue()?;
    let key = matrix.budget_key(cell);
    let origin_s = first_arrival_s(setup.jobs.jobs());
    let jobs = setup.jobs.jobs().len();
    let stored = |point: PolicyPoint, keep_timeline: bool| StoredPoint {
        policy: point.policy.clone(),
        fraction: point.fraction,
        budget: point.budget,
        jobs,
        job_energy_kwh: finite(point.job_energy_kwh),
        carbon_kg: finite(point.carbon_kg),
        cluster_energy_kwh: finite(point.cluster_energy_kwh),
        mean_jct_s: finite(point.mean_jct_s),
        error: point.error.clone().unwrap_or_default(),
        timeline: if keep_timeline {
            downsample(&point, origin_s, setup.options.carbon.as_ref())
        } else {
            Vec::new()
        },
    };
    Ok(match cell.item {
        BudgetItem::Baseline(policy) => {
            let result = setup.run(policy, Budget::Unlimited).with_context(context)?;
            let point = PolicyPoint::of(policy.into(), None, None, Ok(result));
            BudgetRecord {
                key,
                point: Some(stored(point, policy == "fifo-full-clock")),
                frontier: None,
            }
        }
        BudgetItem::Budgeted { kind, fraction } => {
            let fifo = setup
                .run("fifo-full-clock", Budget::Unlimited)
                .with_context(context)?;
            let base = PolicyPoint::of(String::new(), None, None, Ok(fifo)).spend(kind);
            let value = fraction * base;
            let policy = budgeted_policy(kind);
            let result = setup.run(policy, budget_of(kind, value));
            let point = PolicyPoint::of(policy.into(), Some(fraction), Some(value), result);
            BudgetRecord {
                key,
                point: Some(stored(point, fraction == 1.0)),
                frontier: None,
            }
        }
        BudgetItem::Frontier { kind } => BudgetRecord {
            key,
            point: None,
            frontier: Some(
                crate::stored_frontier::compute(&setup, spec, &cell.setup, kind)
                    .with_context(context)?,
            ),
        },
    })
}

fn finite(value: f64) -> Option<f64> {
    value.is_finite().then_some(value)
}

/// About [`BUDGET_TIMELINE_SAMPLES`] rows of a replay's timeline: time since `origin_s`,
/// job power, grid intensity and waiting tasks.
fn downsample(
    point: &PolicyPoint,
    origin_s: f64,
    carbon: Option<&gapbench_model::CarbonSeries>,
) -> Vec<(f64, f64, f64, u32)> {
    let every = point
        .timeline
        .len()
        .div_ceil(BUDGET_TIMELINE_SAMPLES)
        .max(1);
    point
        .timeline
        .iter()
        .step_by(every)
        .map(|row| {
            (
                row.time_s - origin_s,
                row.job_power_watts / 1000.0,
                carbon.map_or(0.0, |s| s.at(row.time_s)),
                row.queue_length,
            )
        })
        .collect()
}

/// Runs the unfinished cells of `mine` on `pool` (a progress bar when `progress`); returns
/// how many ran and the seconds it took.
pub(crate) fn run_budget_cells(
    matrix: &Matrix,
    inputs: &BudgetInputs,
    out: &Path,
    mine: Vec<&BudgetCell>,
    pool: &rayon::ThreadPool,
    progress: bool,
) -> Result<(usize, f64)> {
    use rayon::prelude::*;
    let todo: Vec<&BudgetCell> = mine
        .into_iter()
        .filter(|cell| finished_budget(out, matrix, cell).is_none())
        .collect();
    let start = std::time::Instant::now();
    let bar = crate::progress::Progress::new(
        progress && !todo.is_empty(),
        todo.len(),
        "budget replays and frontiers",
    );
    pool.install(|| {
        todo.par_iter().try_for_each(|cell| -> Result<()> {
            let started = std::time::Instant::now();
            let record = run_budget_cell(matrix, inputs, cell)?;
            let path = budget_cell_path(out, cell);
            crate::io::write_json(&path, &record)?;
            crate::status::record_cell_time(out, &path, &record.key, started)?;
            bar.inc(1);
            Ok(())
        })
    })?;
    bar.finish_and_clear();
    Ok((todo.len(), start.elapsed().as_secs_f64()))
}

/// Writes the three budget CSVs from the cells, in spec order.
pub(crate) fn aggregate_budget(out: &Path, matrix: &Matrix, cells: &[BudgetCell]) -> Result<()> {
    let Some(spec) = &matrix.spec.budget else {
        return Ok(());
    };
    let record = |cell: &BudgetCell| {
        finished_budget(out, matrix, cell).with_context(|| {
            format!(
                "budget cell {} seed {} {} is missing",
                cell.setup,
                cell.seed,
                cell.item.label()
            )
        })
    };
    let (mut points, mut frontier_rows, mut timeline) = (Vec::new(), Vec::new(), Vec::new());
    let mut groups: Vec<(&str, u64)> = cells.iter().map(|c| (c.setup.as_str(), c.seed)).collect();
    groups.dedup();
    for (setup_name, seed) in groups {
        let group: Vec<&BudgetCell> = cells
            .iter()
            .filter(|c| c.setup == setup_name && c.seed == seed)
            .collect();
        let find = |item: BudgetItem| group.iter().find(|c| c.item == item).copied();
        let baseline = |policy| -> Result<StoredPoint> {
            let cell = find(BudgetItem::Baseline(policy)).context("a baseline cell")?;
            record(cell)?.point.context("a baseline point")
        };
        let (fifo, zeus) = (baseline("fifo-full-clock")?, baseline("zeus")?);
        let fifo_jct = fifo.mean_jct_s.unwrap_or(f64::NAN);
        for kind_text in &spec.kinds {
            let kind = kind_of(kind_text)?;
            let stored = match find(BudgetItem::Frontier { kind }) {
                Some(cell) => record(cell)?.frontier,
                None => None,
            };
            let frontier = stored.as_ref().map(StoredFrontier::frontier);
            let mut kind_points = vec![fifo.clone(), zeus.clone()];
            for &fraction in &spec.fractions {
                let cell =
                    find(BudgetItem::Budgeted { kind, fraction }).context("a budget cell")?;
                kind_points.push(record(cell)?.point.context("a budgeted point")?);
            }
            let spend = |p: &StoredPoint| match kind {
                FrontierKind::Energy => p.job_energy_kwh,
                FrontierKind::Carbon => p.carbon_kg,
            };
            for p in &kind_points {
                let label = budget_point_label(&p.policy, p.fraction);
                let bound = frontier
                    .as_ref()
                    .zip(spend(p))
                    .and_then(|(f, s)| f.mean_jct_bound(s));
                let status = match (&stored, spend(p), bound) {
                    (Some(stored), Some(spent), Some(bound)) => stored.status_at(spent, bound),
                    _ => (String::new(), None),
                };
                if p.policy == "fifo-full-clock" || p.fraction == Some(1.0) {
                    timeline.extend(p.timeline.iter().map(|&(t, kw, g, waiting)| {
                        BudgetTimelineRow {
                            setup: setup_name.to_string(),
                            seed,
                            kind: kind_text.clone(),
                            policy: label.clone(),
                            time_s: t,
                            job_kw: kw,
                            g_per_kwh: g,
                            waiting,
                        }
                    }));
                }
                points.push(BudgetPointRow {
                    setup: setup_name.to_string(),
                    seed,
                    kind: kind_text.clone(),
                    policy: p.policy.clone(),
                    fraction: p.fraction,
                    budget: p.budget,
                    jobs: p.jobs,
                    job_energy_kwh: p.job_energy_kwh,
                    carbon_kg: p.carbon_kg,
                    cluster_energy_kwh: p.cluster_energy_kwh,
                    mean_jct_s: p.mean_jct_s,
                    fifo_mean_jct_s: fifo_jct,
                    jct_speedup_vs_fifo: p.mean_jct_s.map(|jct| fifo_jct / jct),
                    bound_mean_jct_s: bound.filter(|_| p.mean_jct_s.is_some()),
                    gap: bound
                        .zip(p.mean_jct_s)
                        .map(|(b, jct)| (jct - b) / b)
                        .filter(|g| g.is_finite()),
                    bound_status: status.0,
                    bound_lp_mean_jct_s: status.1,
                    error: p.error.clone(),
                });
            }
            if let Some(frontier) = &frontier {
                let most_spent = kind_points
                    .iter()
                    .filter_map(spend)
                    .fold(frontier.unconstrained_budget, f64::max);
                for k in 0..FRONTIER_BUDGETS {
                    let budget = frontier.least_budget
                        + (most_spent - frontier.least_budget) * k as f64
                            / (FRONTIER_BUDGETS - 1) as f64;
                    if let Some(bound) = frontier.mean_jct_bound(budget) {
                        frontier_rows.push(BudgetFrontierRow {
                            setup: setup_name.to_string(),
                            seed,
                            kind: kind_text.clone(),
                            budget,
                            mean_jct_bound_s: bound,
                        });
                    }
                }
            }
        }
    }
    write_atomic(&out.join(BUDGET_POINTS_CSV), &rows_to_csv(&points))?;
    write_atomic(&out.join(BUDGET_FRONTIER_CSV), &rows_to_csv(&frontier_rows))?;
    write_atomic(&out.join(BUDGET_TIMELINE_CSV), &rows_to_csv(&timeline))?;
    Ok(())
}

/// Runs every cell of `spec` in this process (tests and quick studies): the same cells a
/// bench runs, aggregated into the three CSVs in `out`. Returns the cells run.
pub fn run_budget_study(
    spec: &BudgetStudySpec,
    files: Option<(PathBuf, PathBuf)>,
    out: &Path,
) -> Result<usize> {
    let inputs = load_budget_inputs(Some(spec), files)?;
    let matrix = Matrix::of_budget_study(spec.clone(), budget_fingerprints(&inputs));
    let cells = matrix.budget_cells()?;
    use rayon::prelude::*;
    cells.par_iter().try_for_each(|cell| -> Result<()> {
        let record = run_budget_cell(&matrix, &inputs, cell)?;
        crate::io::write_json(&budget_cell_path(out, cell), &record)
    })?;
    aggregate_budget(out, &matrix, &cells)?;
    Ok(cells.len())
}
