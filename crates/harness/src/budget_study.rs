//! Budget studies of a bench spec (`[budget]`): on each setup (a GPU pool, an arrival
//! scale, which jobs), full-clock FIFO and Zeus-like run once, PowerFlow-style at each
//! fraction of FIFO's job energy and GreenFlow-style at each fraction of FIFO's carbon; where
//! the setup asks, the Lagrangian frontier of the same jobs bounds every point. Written as
//! `budget_points.csv`, `budget_frontier.csv` and `budget_timeline.csv`.
//!
//! "At equal energy" in the papers' sense is the fraction 1.0: the budgeted policy may
//! spend what FIFO spent, and `jct_speedup_vs_fifo` is FIFO's mean JCT over its own.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use gapbench_ilp::frontier::{lagrangian_frontier, LagrangianOptions};
use gapbench_model::{CpuPowerProfile, InputRules};
use gapbench_replay::budget::first_arrival_s;
use gapbench_results::budget::{rows_to_csv, BUDGET_TIMELINE_SAMPLES};
use gapbench_results::{
    budget_point_label, BudgetFrontierRow, BudgetPointRow, BudgetTimelineRow, Seeds,
    BUDGET_FRONTIER_CSV, BUDGET_POINTS_CSV, BUDGET_TIMELINE_CSV,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::budget::{BudgetArgs, BudgetSetup};
use crate::frontier::{budgeted_policy, frontier_instance, policy_points, FrontierKind};
use crate::io::write_atomic;
use crate::replay::{ReplayInputs, TimedSource};

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
    /// Compute the Lagrangian frontier of this setup's jobs.
    #[serde(default)]
    pub frontier: bool,
}

fn default_kinds() -> Vec<String> {
    vec!["energy".into(), "carbon".into()]
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
        if self.fractions.is_empty() || self.fractions.iter().any(|f| !(f.is_finite() && *f > 0.0))
        {
            bail!("[budget] `fractions` takes positive shares of FIFO's spend such as [0.9, 1.0]");
        }
        for kind in &self.kinds {
            kind_of(kind)?;
        }
        for (what, value) in [("round_s", self.round_s), ("slot_s", self.slot_s)] {
            if !(value.is_finite() && value > 0.0) {
                bail!("[budget] `{what}` takes a positive number of seconds");
            }
        }
        if self.setups.is_empty() {
            bail!("[budget] needs at least one entry in `setups`");
        }
        for setup in &self.setups {
            if setup.gpus == Some(0)
                || !(setup.arrival_scale.is_finite() && setup.arrival_scale > 0.0)
                || setup
                    .max_duration_s
                    .is_some_and(|d| !(d.is_finite() && d > 0.0))
            {
                bail!(
                    "[budget] setup `{}`: `gpus`, `arrival_scale` and `max_duration_s` must be positive",
                    setup.name
                );
            }
        }
        Ok(())
    }

    /// The flags of `gapbench replay` this study runs with on `setup`.
    fn args(&self, setup: &BudgetSetupSpec) -> BudgetArgs {
        BudgetArgs {
            carbon: Some(self.carbon.clone()),
            round: self.round_s,
            first_jobs: setup.first_jobs,
            max_duration: setup.max_duration_s,
            gpus: setup.gpus,
            ..BudgetArgs::defaults()
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

/// What one (setup, seed, kind) produced.
struct StudyRows {
    points: Vec<BudgetPointRow>,
    frontier: Vec<BudgetFrontierRow>,
    timeline: Vec<BudgetTimelineRow>,
}

/// Runs every (setup, seed, kind) of `spec` in parallel and writes the three CSVs into
/// `out` (rows in spec order whatever the thread count). `files` are the node list and the
/// trace; without them the embedded openb-like workload (with drawn times) stands in.
/// Returns the replays run.
pub fn run_budget_study(
    spec: &BudgetStudySpec,
    files: Option<(PathBuf, PathBuf)>,
    out: &Path,
) -> Result<usize> {
    let mut studies = Vec::new();
    for (index, setup) in spec.setups.iter().enumerate() {
        for seed in spec.seeds.expand()? {
            for kind in &spec.kinds {
                studies.push((index, setup, seed, kind_of(kind)?, kind.as_str()));
            }
        }
    }
    let inputs: Vec<ReplayInputs> = spec
        .setups
        .iter()
        .map(|setup| {
            ReplayInputs::load(
                TimedSource::Openb {
                    nodes: files.as_ref().map(|f| f.0.clone()),
                    tasks: files.as_ref().map(|f| f.1.clone()),
                },
                setup.arrival_scale,
                InputRules::Reference,
                CpuPowerProfile::Reference,
            )
        })
        .collect::<Result<_>>()?;
    let results: Vec<StudyRows> = studies
        .par_iter()
        .map(|&(index, setup, seed, kind, kind_name)| {
            study(spec, setup, &inputs[index], seed, kind, kind_name).with_context(|| {
                format!("[budget] setup `{}`, seed {seed}, {kind_name}", setup.name)
            })
        })
        .collect::<Result<_>>()?;
    let replays = results.iter().map(|r| r.points.len()).sum();
    let points: Vec<&BudgetPointRow> = results.iter().flat_map(|r| &r.points).collect();
    let frontier: Vec<&BudgetFrontierRow> = results.iter().flat_map(|r| &r.frontier).collect();
    let timeline: Vec<&BudgetTimelineRow> = results.iter().flat_map(|r| &r.timeline).collect();
    write_atomic(&out.join(BUDGET_POINTS_CSV), &rows_to_csv(&points)?)?;
    write_atomic(&out.join(BUDGET_FRONTIER_CSV), &rows_to_csv(&frontier)?)?;
    write_atomic(&out.join(BUDGET_TIMELINE_CSV), &rows_to_csv(&timeline)?)?;
    Ok(replays)
}

fn study(
    spec: &BudgetStudySpec,
    setup_spec: &BudgetSetupSpec,
    inputs: &ReplayInputs,
    seed: u64,
    kind: FrontierKind,
    kind_name: &str,
) -> Result<StudyRows> {
    let args = spec.args(setup_spec);
    let workload = inputs.workload(seed)?;
    let setup = BudgetSetup::new(&inputs.cluster, &workload, &args, seed)?;
    let frontier = if setup_spec.frontier {
        let instance = frontier_instance(&setup, kind, spec.slot_s)?;
        let options = LagrangianOptions {
            budget_prices: spec.frontier_prices,
            subgradient_steps: spec.frontier_steps,
        };
        Some(lagrangian_frontier(&instance, &options).map_err(anyhow::Error::msg)?)
    } else {
        None
    };
    let points = policy_points(
        &setup,
        &args,
        &workload,
        kind,
        frontier.as_ref(),
        seed,
        &spec.fractions,
    )?;
    let fifo_mean_jct_s = points[0].mean_jct_s;
    let origin_s = first_arrival_s(&setup.jobs);
    let name = setup_spec.name.clone();
    let kind_text = kind_name.to_string();
    let mut rows = StudyRows {
        points: Vec::new(),
        frontier: Vec::new(),
        timeline: Vec::new(),
    };
    let (budgeted, finite) = (budgeted_policy(kind), |v: f64| v.is_finite().then_some(v));
    for point in &points {
        let label = budget_point_label(&point.policy, point.fraction);
        // Timelines of FIFO and of the budgeted policy at equal spend.
        if point.policy == "fifo-full-clock"
            || (point.policy == budgeted && point.fraction == Some(1.0))
        {
            let every = point
                .timeline
                .len()
                .div_ceil(BUDGET_TIMELINE_SAMPLES)
                .max(1);
            for sample in point.timeline.iter().step_by(every) {
                rows.timeline.push(BudgetTimelineRow {
                    setup: name.clone(),
                    seed,
                    kind: kind_text.clone(),
                    policy: label.clone(),
                    time_s: sample.time_s - origin_s,
                    job_kw: sample.job_watts / 1000.0,
                    g_per_kwh: sample.g_per_kwh,
                    waiting: sample.waiting,
                });
            }
        }
        rows.points.push(BudgetPointRow {
            setup: name.clone(),
            seed,
            kind: kind_text.clone(),
            policy: point.policy.clone(),
            fraction: point.fraction,
            budget: point.budget,
            jobs: setup.jobs.len(),
            job_energy_kwh: finite(point.job_energy_kwh),
            carbon_kg: finite(point.carbon_kg),
            mean_jct_s: finite(point.mean_jct_s),
            fifo_mean_jct_s,
            jct_speedup_vs_fifo: finite(point.mean_jct_s).map(|jct| fifo_mean_jct_s / jct),
            bound_mean_jct_s: point.bound_mean_jct_s,
            gap: point.gap,
            error: point.error.clone().unwrap_or_default(),
        });
    }
    if let Some(frontier) = &frontier {
        let most_spent = points
            .iter()
            .map(|p| p.spend(kind))
            .filter(|v| v.is_finite())
            .fold(frontier.unconstrained_budget, f64::max);
        for k in 0..FRONTIER_BUDGETS {
            let budget = frontier.least_budget
                + (most_spent - frontier.least_budget) * k as f64 / (FRONTIER_BUDGETS - 1) as f64;
            if let Some(bound) = frontier.mean_jct_bound(budget) {
                rows.frontier.push(BudgetFrontierRow {
                    setup: name.clone(),
                    seed,
                    kind: kind_text.clone(),
                    budget,
                    mean_jct_bound_s: bound,
                });
            }
        }
    }
    Ok(rows)
}
