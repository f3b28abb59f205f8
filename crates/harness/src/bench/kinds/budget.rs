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

use anyhow::{Context, Result};
use gapbench_replay::jobs::first_arrival_s;
use gapbench_replay::Budget;
use gapbench_results::budget::{rows_to_csv, BUDGET_TIMELINE_SAMPLES};
use gapbench_results::{
    budget_point_label, BudgetFrontierRow, BudgetPointRow, BudgetTimelineRow, Seeds,
    BUDGET_FRONTIER_CSV, BUDGET_POINTS_CSV, BUDGET_TIMELINE_CSV,
};
use serde::{Deserialize, Serialize};

use super::stored_frontier::StoredFrontier;
use crate::bench::kind::CellKind;
use crate::bench::matrix::{Inputs, Matrix};
use crate::bench::sources::{budget_fingerprints, load_budget_inputs, BudgetInputs};
use crate::bench::spec::budget::{kind_of, BudgetStudySpec, FRONTIER_BUDGETS};
use crate::bench::spec::BenchSpec;
use crate::bench::status::Kind;
use crate::bench::store::short_hash;
use crate::frontier::{budget_of, budgeted_policy, BudgetSetup, FrontierKind, PolicyPoint};
use crate::io::write_atomic;
use crate::workload::InputFingerprint;

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
const BUDGET_CELL_KIND: &str = "gapbench-budget-cell-v4";

/// The budget study of a bench.
pub(crate) struct BudgetStudy;

impl CellKind for BudgetStudy {
    type Cell = BudgetCell;
    type Record = BudgetRecord;
    const NAME: &'static str = "budget-study cells (replays and frontiers)";
    const AGGREGATES: &'static [&'static str] =
        &[BUDGET_POINTS_CSV, BUDGET_FRONTIER_CSV, BUDGET_TIMELINE_CSV];

    /// In spec order: per setup and seed, the baselines, then per kind the frontier (when
    /// asked) and the budgeted policy at each fraction.
    fn cells(&self, matrix: &Matrix) -> Result<Vec<BudgetCell>> {
        let Some(spec) = &matrix.spec.budget else {
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

    /// Everything that determines a budget cell: its setup's settings (not the other
    /// setups', seeds' or fractions'), the cell and the input hashes.
    fn key(&self, matrix: &Matrix, cell: &BudgetCell) -> String {
        let head = format!(
            "{BUDGET_CELL_KIND}|{}|{}|{}|{}|",
            env!("CARGO_PKG_VERSION"),
            cell.setup,
            cell.seed,
            cell.item.label()
        );
        let study = matrix.spec.budget.as_ref().map(|spec| {
            let mut study = spec.clone();
            study.setups.retain(|s| s.name == cell.setup);
            study.seeds = Seeds::List(Vec::new());
            study.fractions.clear();
            study.kinds.clear();
            serde_json::to_string(&study).unwrap_or_default()
        });
        let inputs = matrix.budget_inputs.iter().map(|i| i.sha256.as_str());
        short_hash([head.as_str(), study.as_deref().unwrap_or("")], inputs)
    }

    fn record_key<'r>(&self, record: &'r BudgetRecord) -> &'r str {
        &record.key
    }

    fn path(&self, cell: &BudgetCell) -> PathBuf {
        PathBuf::from("budget-cells")
            .join(&cell.setup)
            .join(format!("seed-{}", cell.seed))
            .join(format!("{}.json", cell.item.label()))
    }

    fn status_kind(&self, _: &BudgetCell) -> Kind {
        Kind::Budget
    }

    fn in_spec(&self, matrix: &Matrix) -> bool {
        matrix.spec.budget.is_some()
    }

    fn run(
        &self,
        matrix: &Matrix,
        inputs: &Inputs,
        cell: &BudgetCell,
        _: usize,
        _: &Path,
    ) -> Result<BudgetRecord> {
        run_budget_cell(matrix, &inputs.budget, cell)
    }

    fn aggregate(&self, out: &Path, matrix: &Matrix, cells: &[BudgetCell]) -> Result<()> {
        aggregate_budget(out, matrix, cells)
    }
}

/// A matrix of a budget study alone (`run_budget_study`).
pub(crate) fn of_budget_study(study: BudgetStudySpec, inputs: Vec<InputFingerprint>) -> Matrix {
    Matrix {
        spec: BenchSpec {
            name: "budget".into(),
            description: String::new(),
            nodes: String::new(),
            gpu_models: None,
            gpu_models_file: None,
            traces: Vec::new(),
            policies: Vec::new(),
            seeds: Seeds::List(Vec::new()),
            tune: 1.3,
            gaps: None,
            replay: None,
            budget: Some(study),
            figures: None,
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
    let key = BudgetStudy.key(matrix, cell);
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
                super::stored_frontier::compute(&mut setup, spec, &cell.setup, kind)
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

/// Writes the three budget CSVs from the cells, in spec order.
pub(crate) fn aggregate_budget(out: &Path, matrix: &Matrix, cells: &[BudgetCell]) -> Result<()> {
    let Some(spec) = &matrix.spec.budget else {
        return Ok(());
    };
    let record = |cell: &BudgetCell| {
        BudgetStudy.finished(out, matrix, cell).with_context(|| {
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
            let group = (setup_name, seed, kind_text.as_str());
            let spend = |p: &StoredPoint| match kind {
                FrontierKind::Energy => p.job_energy_kwh,
                FrontierKind::Carbon => p.carbon_kg,
            };
            for p in &kind_points {
                let label = budget_point_label(&p.policy, p.fraction);
                let (bound, status) = bound_at(stored.as_ref(), frontier.as_ref(), spend(p));
                let schedule = stored
                    .as_ref()
                    .zip(spend(p))
                    .and_then(|(f, s)| f.schedule_within(s));
                if p.policy == "fifo-full-clock" || p.fraction == Some(1.0) {
                    timeline.extend(timeline_rows(group, &label, p));
                }
                points.push(point_row(group, p, fifo_jct, (bound, status), schedule));
            }
            if let Some(frontier) = &frontier {
                let most_spent = kind_points
                    .iter()
                    .filter_map(spend)
                    .fold(frontier.unconstrained_budget, f64::max);
                frontier_rows.extend(frontier_rows_of(group, frontier, most_spent));
            }
        }
    }
    write_atomic(&out.join(BUDGET_POINTS_CSV), &rows_to_csv(&points))?;
    write_atomic(&out.join(BUDGET_FRONTIER_CSV), &rows_to_csv(&frontier_rows))?;
    write_atomic(&out.join(BUDGET_TIMELINE_CSV), &rows_to_csv(&timeline))?;
    Ok(())
}

/// The frontier's bound on mean JCT at a point's spend, with the status of that bound
/// (empty without a frontier or a spend).
fn bound_at(
    stored: Option<&StoredFrontier>,
    frontier: Option<&gapbench_bounds::frontier::Frontier>,
    spent: Option<f64>,
) -> (Option<f64>, (String, Option<f64>)) {
    let bound = frontier.zip(spent).and_then(|(f, s)| f.mean_jct_bound(s));
    let status = match (stored, spent, bound) {
        (Some(stored), Some(spent), Some(bound)) => {
            let (status, limit) = stored.status_at(spent, bound);
            (status.label().to_string(), limit)
        }
        _ => (String::new(), None),
    };
    (bound, status)
}

/// A point's downsampled timeline as `budget_timeline.csv` rows.
fn timeline_rows<'p>(
    (setup, seed, kind): (&'p str, u64, &'p str),
    label: &'p str,
    p: &'p StoredPoint,
) -> impl Iterator<Item = BudgetTimelineRow> + 'p {
    p.timeline.iter().map(
        move |&(time_s, job_kw, g_per_kwh, waiting)| BudgetTimelineRow {
            setup: setup.to_string(),
            seed,
            kind: kind.to_string(),
            policy: label.to_string(),
            time_s,
            job_kw,
            g_per_kwh,
            waiting,
        },
    )
}

/// One point's `budget_points.csv` row, in its (setup, seed, kind) group: its spend and
/// mean JCT against FIFO's, against the frontier's `bound` with that bound's `status`, and
/// against the best integer `schedule` found within its spend.
fn point_row(
    (setup, seed, kind): (&str, u64, &str),
    p: &StoredPoint,
    fifo_jct: f64,
    (bound, status): (Option<f64>, (String, Option<f64>)),
    schedule: Option<f64>,
) -> BudgetPointRow {
    BudgetPointRow {
        setup: setup.to_string(),
        seed,
        kind: kind.to_string(),
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
        schedule_mean_jct_s: schedule.filter(|_| p.mean_jct_s.is_some()),
        error: p.error.clone(),
    }
}

/// The frontier's bound at an even sweep of budgets from its least budget to `most_spent`
/// (`budget_frontier.csv`).
fn frontier_rows_of(
    (setup, seed, kind): (&str, u64, &str),
    frontier: &gapbench_bounds::frontier::Frontier,
    most_spent: f64,
) -> Vec<BudgetFrontierRow> {
    (0..FRONTIER_BUDGETS)
        .filter_map(|k| {
            let budget = frontier.least_budget
                + (most_spent - frontier.least_budget) * k as f64 / (FRONTIER_BUDGETS - 1) as f64;
            let bound = frontier.mean_jct_bound(budget)?;
            Some(BudgetFrontierRow {
                setup: setup.to_string(),
                seed,
                kind: kind.to_string(),
                budget,
                mean_jct_bound_s: bound,
            })
        })
        .collect()
}

/// Runs every cell of `spec` in this process (tests and quick studies): the same cells a
/// bench runs, aggregated into the three CSVs in `out`. Returns the cells run.
pub fn run_budget_study(
    spec: &BudgetStudySpec,
    files: Option<(PathBuf, PathBuf)>,
    out: &Path,
) -> Result<usize> {
    let inputs = load_budget_inputs(Some(spec), files, None)?;
    let matrix = of_budget_study(spec.clone(), budget_fingerprints(&inputs));
    let cells = BudgetStudy.cells(&matrix)?;
    use rayon::prelude::*;
    cells.par_iter().try_for_each(|cell| -> Result<()> {
        let record = run_budget_cell(&matrix, &inputs, cell)?;
        crate::io::write_json(&out.join(BudgetStudy.path(cell)), &record)
    })?;
    aggregate_budget(out, &matrix, &cells)?;
    Ok(cells.len())
}
