//! `[budget]` of a bench spec: the setups (a GPU slice, an arrival scale, which jobs), the
//! shares of FIFO's spend, and the frontier's settings, with their validation.

use anyhow::{bail, Result};
use gapbench_replay::QueueDiscipline;
use gapbench_results::Seeds;
use serde::{Deserialize, Serialize};

use crate::budget::BudgetArgs;
use crate::frontier::FrontierKind;
use crate::replay::Selection;

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
    /// (`gapbench_bounds::frontier::slots`).
    #[serde(default)]
    pub quiet_slot_s: Option<f64>,
    /// The frontier by dual ascent (`gapbench_bounds::frontier::ascent`) instead of the
    /// Lagrangian sweep and column generation: this many steps at the unconstrained end, then
    /// as many at each point's own spend (the cell replays the points' policies to know
    /// them). Counted in steps, so deterministic; no LP, so the bound's status is
    /// `lagrangian`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ascent_steps: Option<usize>,
    /// Tighten the dual ascent's envelope by column generation at every point's own spend,
    /// the ascent its warm start (so it needs `ascent_steps`): each point's bound status
    /// then says `converged` or `open` against the master LP. Stops at `frontier_rounds`
    /// per spend, or at `frontier_seconds` (a safety net: a spend it cuts short stays
    /// `open`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub column_generation: bool,
    /// With `column_generation`: at every point's spend, the best schedule of the frontier
    /// problem found — a list schedule in the master LP's order, the points' own replays
    /// (`gapbench_bounds::frontier::known`), improved by a branch and bound over them and
    /// the LP's columns within this many nodes (0: none): the problem's optimum then lies
    /// between the bound and it, and each point's gap splits into the bound's side and the
    /// policy's. Counted in nodes, so deterministic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incumbent_nodes: Option<usize>,
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
pub(crate) const FRONTIER_BUDGETS: usize = 40;

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
            if setup.column_generation && setup.ascent_steps.is_none() {
                bail!(
                    "[budget] setup `{}`: `column_generation` starts from the dual ascent: set `ascent_steps` too (15 is the paper bench's)",
                    setup.name
                );
            }
            if setup.incumbent_nodes.is_some() && !setup.column_generation {
                bail!(
                    "[budget] setup `{}`: `incumbent_nodes` searches the columns of column generation: set `column_generation = true` too",
                    setup.name
                );
            }
        }
        Ok(())
    }

    /// The FIFO baselines' queue discipline.
    pub(crate) fn queue(&self) -> Result<QueueDiscipline> {
        match self.queue.as_str() {
            "fifo" => Ok(QueueDiscipline::Fifo),
            "backfill" => Ok(QueueDiscipline::Backfill),
            other => bail!("[budget] queue `{other}`: expected fifo or backfill"),
        }
    }

    /// The flags of `gapbench replay` this study runs with.
    pub(crate) fn args(&self) -> BudgetArgs {
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

pub(crate) fn kind_of(name: &str) -> Result<FrontierKind> {
    match name {
        "energy" => Ok(FrontierKind::Energy),
        "carbon" => Ok(FrontierKind::Carbon),
        other => bail!("[budget] kind `{other}`: expected energy or carbon"),
    }
}
