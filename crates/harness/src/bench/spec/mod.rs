//! Experiment specs (`workloads/*.toml`): traces × policies × seeds at one tune ratio, plus
//! optional exact-gap studies on sub-clusters and optional time-mode replays (`[replay]`).

pub mod budget;
pub(crate) mod lists;

use std::path::Path;

use anyhow::{bail, Context, Result};
use gapbench_online::PolicySpec;
use gapbench_replay::policies::{BudgetTarget, TimePolicySpec};
use gapbench_replay::{IdlePolicy, PowerSettings};
use serde::{Deserialize, Serialize};

pub use gapbench_results::Seeds;

/// A whole experiment matrix.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BenchSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Node list file name inside the traces folder.
    #[serde(default = "default_nodes")]
    pub nodes: String,
    /// A GPU-model file (docs/gpu-models.md), relative to the spec's folder: its models add
    /// to or override the built-in ones wherever the spec's node list is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_models: Option<String>,
    /// `gpu_models` resolved against the spec's folder by [`BenchSpec::parse`].
    #[serde(skip)]
    pub gpu_models_file: Option<std::path::PathBuf>,
    /// Trace names: `NAME` is `openb_pod_list_NAME.csv` in the traces folder. Empty (with
    /// `policies` and `seeds`) for a spec of replays only.
    #[serde(default)]
    pub traces: Vec<String>,
    /// Policy specs, e.g. `fgd` or `pwr:200,fgd:800`.
    #[serde(default)]
    pub policies: Vec<String>,
    /// A list of seeds or an inclusive range `"42..51"`.
    #[serde(default = "no_seeds")]
    pub seeds: Seeds,
    #[serde(default = "default_tune")]
    pub tune: f64,
    #[serde(default)]
    pub gaps: Option<GapStudySpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplaySpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<budget::BudgetStudySpec>,
    /// How the folder's figures are drawn (`[figures]`: `style = "paper"`, display names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures: Option<FiguresSpec>,
}

/// `[figures]`: the style of the folder's figures and the display names of its policies
/// (`names = { "expr:gpu_free_milli" = "MostFree" }`), which the LaTeX tables use too.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FiguresSpec {
    /// `default` or `paper`.
    #[serde(default = "default_style")]
    pub style: String,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub names: std::collections::BTreeMap<String, String>,
}

fn default_style() -> String {
    "default".to_string()
}

/// Exact-gap studies: the same policies on sampled sub-clusters, solved at checkpoints.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GapStudySpec {
    pub traces: Vec<String>,
    pub policies: Vec<String>,
    pub seeds: Seeds,
    /// Arrived GPU demand, % of (sub-)cluster capacity.
    pub checkpoints: Vec<u32>,
    #[serde(default = "default_objectives")]
    pub objectives: Vec<String>,
    /// Nodes of the sampled sub-cluster: needed when `policies` asks for a sub-cluster
    /// study, optional when only the whole cluster is studied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_nodes: Option<usize>,
    #[serde(default = "default_time_limit")]
    pub time_limit_s: f64,
    #[serde(default)]
    pub mip_gap: Option<f64>,
    /// ε-constraint points of the power–fragmentation front (0: no front).
    #[serde(default)]
    pub pareto_points: usize,
    /// The time limit of each interior solve of the front (default: `time_limit_s`; the
    /// end points are the objectives' own solves).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub front_time_limit_s: Option<f64>,
    /// The same checkpoints and objectives on the whole cluster, by column generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_cluster: Option<FullClusterGapSpec>,
}

/// Exact gaps on the whole cluster (`[gaps.full_cluster]`): every listed policy's sweep of
/// each gap trace, solved by column generation at the study's checkpoints.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FullClusterGapSpec {
    pub policies: Vec<String>,
    pub seeds: Seeds,
    /// Per solve; column generation reports its proven bound whenever it stops.
    #[serde(default = "default_time_limit")]
    pub time_limit_s: f64,
    /// Points of the power–fragmentation front per checkpoint, by column generation (0:
    /// none; otherwise at least 2, the two end points).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pareto_points: usize,
    /// The time limit of each ε-constraint solve of the front (default: `time_limit_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub front_time_limit_s: Option<f64>,
    /// Stop a solve once within this relative gap (status `gap_limit`; default: `[gaps]`'s
    /// `mip_gap`, else 0): at 0 a converged column generation branches for the rest of its
    /// time, which on 1,213 nodes rarely raises the bound (measured: none of FGD's 8 at 10 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mip_gap: Option<f64>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Time-mode replays: every (source, arrival scale, idle policy, policy, seed) is one cell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReplaySpec {
    /// openb traces replayed at their real times (`creation_time`, `deletion_time`) on the
    /// spec's node list.
    #[serde(default)]
    pub traces: Vec<String>,
    /// EaCO's evaluation setup as a further source, once per cluster size.
    #[serde(default)]
    pub eaco: Option<EacoSetupSpec>,
    /// Time-mode policies: any sweep policy spec, `eaco-r`, `eaco-o`, `fifo`, `fifo-packed`,
    /// `gandiva` (and their `-o` variants that share whole-GPU reservations).
    pub policies: Vec<String>,
    pub seeds: Seeds,
    /// Inter-arrival times are divided by each factor (1 = the trace's own times).
    #[serde(default = "default_arrival_scales")]
    pub arrival_scales: Vec<f64>,
    /// `always-on` and/or `sleep-when-empty`.
    #[serde(default = "default_idle")]
    pub idle: Vec<String>,
    /// Sleep power of an empty node as a share of its idle power (with `sleep-when-empty`).
    #[serde(default = "default_sleep_fraction")]
    pub sleep_fraction: f64,
    /// Stops every replay at this time (seconds since the trace start); none = run to the end.
    #[serde(default)]
    pub until_s: Option<f64>,
    /// Grid carbon intensity (`caiso-2023`, `caiso-like`, `gb-like` or a CSV path): every
    /// replay then reports carbon, and `greenflow@F` can run. None: no carbon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carbon: Option<String>,
    /// `[replay.bound]`: prove a lower bound on every replay's energy
    /// (`gapbench_bounds::replay_bound`); none: no bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<ReplayBoundSpec>,
}

/// How hard each replay's energy bound works.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReplayBoundSpec {
    /// Wall-clock limit of one bound, seconds (it holds whenever it stops).
    pub time_limit_s: f64,
    /// Most windows a bound cuts its replay into.
    pub max_windows: usize,
    /// Most exact pricing rounds of each window's column generation: a window that does not
    /// converge stops there, at the same place on every run (status `round_limit`). None:
    /// only the clock stops it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pricing_rounds: Option<usize>,
    /// Most branch-and-price tree nodes per window: each window's bound is raised from the
    /// configuration LP's towards the least power of integer wake-ups (status
    /// `windows_integer` when every tree closes, `branch_limit` when a cap stopped one).
    /// None: the LP's bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_branch_nodes: Option<usize>,
    /// Branch only where empty nodes sleep (`sleep-when-empty`): there the configuration LP
    /// wakes nodes fractionally; on the whole default cluster the trees of always-on
    /// replays raised no bound (0.0000 % on all 60, `workloads/replay-integer.toml`) for
    /// more than half the trees' time.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub branch_asleep_only: bool,
}

/// EaCO's evaluation setup (`gapbench_replay::eaco_setup`): servers of 8×V100 and its
/// four-model job mix arriving as a Poisson process, drawn per seed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EacoSetupSpec {
    /// Cluster sizes, one source each (`eaco-64`, `eaco-28`…).
    pub servers: Vec<usize>,
    pub jobs: usize,
    pub jobs_per_hour: f64,
    /// Deadline factors σ (deadline = arrival + σ · solo duration), one source each;
    /// [`DEFAULT_EACO_DEADLINE_FACTOR`] alone by default. A sweep traces EaCO's energy vs
    /// run-time trade-off and the bound's frontier.
    #[serde(default = "default_deadline_factors")]
    pub deadline_factors: Vec<f64>,
}

/// σ of the EaCO setup's Burstable jobs when a spec names none (spec time-and-budgets §2.6).
pub const DEFAULT_EACO_DEADLINE_FACTOR: f64 = 1.2;

fn default_deadline_factors() -> Vec<f64> {
    vec![DEFAULT_EACO_DEADLINE_FACTOR]
}

/// The idle policies a replay spec may name.
pub const IDLE_POLICIES: [&str; 2] = ["always-on", "sleep-when-empty"];

fn no_seeds() -> Seeds {
    Seeds::List(Vec::new())
}

fn default_arrival_scales() -> Vec<f64> {
    vec![1.0]
}

fn default_idle() -> Vec<String> {
    IDLE_POLICIES.map(String::from).to_vec()
}

fn default_sleep_fraction() -> f64 {
    0.05
}

impl ReplaySpec {
    fn validate(&self) -> Result<()> {
        if self.traces.is_empty() && self.eaco.is_none() {
            bail!("[replay] needs `traces` or an `eaco` setup");
        }
        if self.policies.is_empty() {
            bail!("[replay] `policies` must not be empty");
        }
        self.check_lists()?;
        self.check_policies()?;
        if self.seeds.expand()?.is_empty() {
            bail!("[replay] `seeds` must not be empty");
        }
        if self.arrival_scales.is_empty()
            || self
                .arrival_scales
                .iter()
                .any(|x| !(x.is_finite() && *x > 0.0))
        {
            bail!("[replay] `arrival_scales` takes positive factors such as [1, 10]");
        }
        if self.idle.is_empty() {
            bail!("[replay] `idle` must not be empty");
        }
        for idle in &self.idle {
            if !IDLE_POLICIES.contains(&idle.as_str()) {
                bail!("[replay] idle policy `{idle}`: expected always-on or sleep-when-empty");
            }
        }
        if let Some(bound) = &self.bound {
            bound.validate()?;
        }
        if !(0.0..=1.0).contains(&self.sleep_fraction) {
            bail!("[replay] `sleep_fraction` takes a share between 0 and 1");
        }
        if self.until_s.is_some_and(|t| !(t.is_finite() && t > 0.0)) {
            bail!("[replay] `until_s` takes a positive number of seconds");
        }
        if let Some(eaco) = &self.eaco {
            eaco.validate()?;
        }
        Ok(())
    }

    /// Every policy names a time policy (with a budget share where it plans to one) that
    /// runs on the openb-like cluster, with the carbon series GreenFlow-style plans to.
    fn check_policies(&self) -> Result<()> {
        let cluster = gapbench_model::workload::openb_like_cluster(
            gapbench_model::CpuPowerProfile::Reference,
        );
        for policy in &self.policies {
            let spec: TimePolicySpec = policy.parse()?;
            let base = spec.name.as_str();
            if spec.kind().and_then(|k| k.budget()) == Some(BudgetTarget::Carbon)
                && self.carbon.is_none()
            {
                bail!("[replay] policy `{policy}` needs `carbon` (e.g. \"caiso-2023\")");
            }
            gapbench_replay::policies::time_policy(base, &cluster)
                .map_err(|e| anyhow::anyhow!("[replay] policy `{policy}`: {e}"))?;
        }
        Ok(())
    }
}

impl ReplayBoundSpec {
    /// The tree nodes per window of a replay whose empty nodes follow `idle`.
    pub fn branch_nodes(&self, idle: gapbench_replay::IdlePolicy) -> Option<usize> {
        let asleep = idle == gapbench_replay::IdlePolicy::SleepWhenEmpty;
        self.max_branch_nodes
            .filter(|_| asleep || !self.branch_asleep_only)
    }

    fn validate(&self) -> Result<()> {
        if !(self.time_limit_s.is_finite() && self.time_limit_s >= 0.0) {
            bail!("[replay.bound] `time_limit_s` takes a non-negative number of seconds");
        }
        if self.max_windows == 0 {
            bail!("[replay.bound] `max_windows` takes a positive count");
        }
        if self.max_pricing_rounds == Some(0) {
            bail!("[replay.bound] `max_pricing_rounds` takes a positive count");
        }
        if self.branch_asleep_only && self.max_branch_nodes.is_none() {
            bail!("[replay.bound] `branch_asleep_only` needs `max_branch_nodes` (the tree nodes per window)");
        }
        Ok(())
    }
}

impl EacoSetupSpec {
    fn validate(&self) -> Result<()> {
        if self.servers.is_empty() || self.servers.contains(&0) {
            bail!("[replay.eaco] `servers` takes cluster sizes such as [64, 28]");
        }
        if self.jobs == 0 || !(self.jobs_per_hour.is_finite() && self.jobs_per_hour > 0.0) {
            bail!("[replay.eaco] needs at least one job and a positive `jobs_per_hour`");
        }
        if self.deadline_factors.is_empty()
            || self
                .deadline_factors
                .iter()
                .any(|f| !(f.is_finite() && *f >= 1.0))
        {
            bail!("[replay.eaco] `deadline_factors` takes factors σ ≥ 1 such as [1.05, 1.2] (deadline = arrival + σ · duration)");
        }
        // Replay cells run one seed each, a few at a time.
        for &servers in &self.servers {
            crate::limits::check_eaco_setup(
                servers,
                self.jobs,
                1,
                ["[replay.eaco] servers", "[replay.eaco] jobs"],
            )?;
        }
        Ok(())
    }
}

impl GapStudySpec {
    /// `tune`: the sweeps' end, past which no checkpoint has a snapshot.
    fn validate(&self, tune: f64) -> Result<()> {
        parse_policies(&self.policies)?;
        self.seeds.expand()?;
        for objective in &self.objectives {
            if !["power", "alloc", "frag"].contains(&objective.as_str()) {
                bail!("gap objective `{objective}`: expected power, alloc or frag");
            }
        }
        for (i, checkpoint) in self.checkpoints.iter().enumerate() {
            if self.checkpoints[..i].contains(checkpoint) {
                bail!("gaps.checkpoints: {checkpoint} is given twice");
            }
            if f64::from(*checkpoint) > 100.0 * tune {
                bail!(
                    "gaps.checkpoints: {checkpoint} % is beyond the sweeps, which end at {} % arrived GPU demand (tune {}): its snapshot would be the end state labelled {checkpoint} %",
                    100.0 * tune,
                    tune
                );
            }
        }
        match self.sample_nodes {
            Some(0) => bail!("gaps.sample_nodes must be positive"),
            None if !self.policies.is_empty() => bail!(
                "gaps.sample_nodes is missing: `policies` asks for studies on sampled sub-clusters of that many nodes (leave `policies` empty to study only the whole cluster)"
            ),
            _ => {}
        }
        if !(self.time_limit_s.is_finite() && self.time_limit_s > 0.0) {
            bail!("gaps.time_limit_s must be a positive number of seconds");
        }
        if self.mip_gap.is_some_and(|g| !(g.is_finite() && g >= 0.0)) {
            bail!("gaps.mip_gap must be a relative gap of 0 or more");
        }
        if self
            .front_time_limit_s
            .is_some_and(|t| !(t.is_finite() && t > 0.0))
        {
            bail!("gaps.front_time_limit_s must be a positive number of seconds");
        }
        if let Some(full) = &self.full_cluster {
            full.validate()?;
        }
        Ok(())
    }
}

impl FullClusterGapSpec {
    fn validate(&self) -> Result<()> {
        parse_policies(&self.policies)?;
        self.seeds.expand()?;
        if !(self.time_limit_s.is_finite() && self.time_limit_s > 0.0) {
            bail!("gaps.full_cluster.time_limit_s must be a positive number of seconds");
        }
        if self
            .front_time_limit_s
            .is_some_and(|t| !(t.is_finite() && t > 0.0))
        {
            bail!("gaps.full_cluster.front_time_limit_s must be a positive number of seconds");
        }
        if self.mip_gap.is_some_and(|g| !(g.is_finite() && g >= 0.0)) {
            bail!("gaps.full_cluster.mip_gap must be a relative gap of 0 or more");
        }
        if self.pareto_points == 1 {
            bail!("gaps.full_cluster.pareto_points must be 0 (no front) or at least 2");
        }
        Ok(())
    }
}

fn default_nodes() -> String {
    "openb_node_list_gpu_node.csv".to_string()
}

fn default_tune() -> f64 {
    1.3
}

fn default_objectives() -> Vec<String> {
    ["power", "alloc", "frag"].map(String::from).to_vec()
}

fn default_time_limit() -> f64 {
    60.0
}

impl BenchSpec {
    pub fn load(path: &Path) -> Result<BenchSpec> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        BenchSpec::parse(path, &text)
    }

    /// A spec from its TOML `text`; `path` names it in errors.
    pub fn parse(path: &Path, text: &str) -> Result<BenchSpec> {
        let mut spec: BenchSpec =
            toml::from_str(text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let folder = path.parent().unwrap_or(Path::new(""));
        spec.gpu_models_file = spec.gpu_models.as_ref().map(|file| folder.join(file));
        spec.validate()
            .with_context(|| format!("{}: invalid spec", path.display()))?;
        Ok(spec)
    }

    pub(crate) fn validate(&self) -> Result<()> {
        self.check_lists()?;
        if let Some(replay) = &self.replay {
            replay.validate()?;
        }
        if let Some(budget) = &self.budget {
            budget.validate()?;
        }
        let replays_only = (self.replay.is_some() || self.budget.is_some())
            && self.traces.is_empty()
            && self.policies.is_empty()
            && self.gaps.is_none();
        if !replays_only {
            if self.traces.is_empty() || self.policies.is_empty() {
                bail!("`traces` and `policies` must not be empty (unless the spec only replays)");
            }
            parse_policies(&self.policies)?;
            if self.seeds.expand()?.is_empty() {
                bail!("`seeds` must not be empty");
            }
        }
        if !(self.tune.is_finite() && self.tune > 0.0) {
            bail!("`tune` must be a positive ratio");
        }
        if let Some(gaps) = &self.gaps {
            gaps.validate(self.tune)?;
        }
        if let Some(figures) = &self.figures {
            figures
                .style
                .parse::<gapbench_report::Style>()
                .map_err(|e| anyhow::anyhow!("[figures] {e}"))?;
        }
        Ok(())
    }
}

impl BenchSpec {
    /// Every trace the spec names, once each in order of appearance: the sweeps', the gap
    /// studies', the replays' and the budget study's.
    pub fn needed_traces(&self) -> Vec<String> {
        let mut traces: Vec<String> = Vec::new();
        let named = self
            .traces
            .iter()
            .chain(self.gaps.iter().flat_map(|g| &g.traces))
            .chain(self.replay.iter().flat_map(|r| &r.traces))
            .chain(self.budget.iter().map(|b| &b.trace));
        for trace in named {
            if !traces.contains(trace) {
                traces.push(trace.clone());
            }
        }
        traces
    }
}

pub fn parse_policies(policies: &[String]) -> Result<Vec<PolicySpec>> {
    policies
        .iter()
        .map(|p| p.parse::<PolicySpec>().map_err(anyhow::Error::msg))
        .collect()
}

/// The trace family a figure panel groups by.
pub fn trace_family(trace: &str) -> &'static str {
    match trace {
        "default" | "openb-like" => "default",
        t if t.starts_with("gpushare") => "gpushare",
        t if t.starts_with("gpuspec") => "gpuspec",
        t if t.starts_with("multigpu") => "multigpu",
        t if t.starts_with("cpu") => "cpu",
        _ => "other",
    }
}

/// The power settings of a replay cell with idle policy `idle`.
pub(crate) fn power_settings(idle: &str, sleep_fraction: f64) -> PowerSettings {
    PowerSettings {
        idle: match idle {
            "sleep-when-empty" => IdlePolicy::SleepWhenEmpty,
            _ => IdlePolicy::AlwaysOn,
        },
        sleep_fraction,
        ..PowerSettings::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<BenchSpec> {
        // One file per call: tests run in parallel, and two specs may have equal lengths.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "gapbench-spec-{}-{}.toml",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::write(&path, text).unwrap();
        let spec = BenchSpec::load(&path);
        std::fs::remove_file(&path).unwrap();
        spec
    }

    const EACO: &str = r#"
name = "e"
[replay]
policies = ["fifo-o", "eaco-o"]
seeds = "42..43"
[replay.eaco]
servers = [64, 28]
jobs = 400
jobs_per_hour = 2.0
"#;

    #[test]
    fn a_budget_study_parses_and_bad_fractions_are_refused() {
        let text = r#"
name = "budgets"
[budget]
trace = "default"
seeds = [42]
fractions = [0.9, 1.0]
setups = [{ name = "slice", gpus = 16, first_jobs = 100, frontier = true }]
"#;
        let spec: BenchSpec = toml::from_str(text).unwrap();
        spec.validate().unwrap();
        let study = spec.budget.unwrap();
        assert_eq!(study.kinds, ["energy", "carbon"]);
        assert_eq!(study.carbon, "caiso-2023");
        assert_eq!(study.setups[0].gpus, Some(16));
        let bad: BenchSpec = toml::from_str(&text.replace("[0.9, 1.0]", "[0.0]")).unwrap();
        let error = format!("{:#}", bad.validate().unwrap_err());
        assert!(error.contains("fractions"), "{error}");
        let tightened = text.replace(
            "frontier = true",
            "frontier = true, column_generation = true",
        );
        let bad: BenchSpec = toml::from_str(&tightened).unwrap();
        let error = format!("{:#}", bad.validate().unwrap_err());
        assert!(error.contains("set `ascent_steps` too"), "{error}");
        let with_ascent =
            tightened.replace("column_generation", "ascent_steps = 5, column_generation");
        let good: BenchSpec = toml::from_str(&with_ascent).unwrap();
        good.validate().unwrap();
        let incumbent_alone =
            text.replace("frontier = true", "frontier = true, incumbent_nodes = 100");
        let bad: BenchSpec = toml::from_str(&incumbent_alone).unwrap();
        let error = format!("{:#}", bad.validate().unwrap_err());
        assert!(
            error.contains("set `column_generation = true` too"),
            "{error}"
        );
    }

    #[test]
    fn a_figures_table_names_a_style_and_display_names() {
        let text = r#"
name = "paper"
traces = ["default"]
policies = ["fgd", "expr:gpu_free_milli"]
seeds = [42]
[figures]
style = "paper"
names = { "expr:gpu_free_milli" = "MostFree" }
"#;
        let spec: BenchSpec = toml::from_str(text).unwrap();
        spec.validate().unwrap();
        let figures = spec.figures.clone().unwrap();
        assert_eq!(figures.style, "paper");
        assert_eq!(figures.names["expr:gpu_free_milli"], "MostFree");
        let poster: BenchSpec =
            toml::from_str(&text.replace("\"paper\"\nnames", "\"poster\"\nnames")).unwrap();
        let error = format!("{:#}", poster.validate().unwrap_err());
        assert!(error.contains("unknown figure style `poster`"), "{error}");
    }

    #[test]
    fn a_spec_of_replays_only_parses_with_its_defaults() {
        let spec = load(EACO).unwrap();
        assert!(spec.traces.is_empty() && spec.policies.is_empty());
        let replay = spec.replay.unwrap();
        assert_eq!(replay.arrival_scales, [1.0]);
        assert_eq!(replay.idle, ["always-on", "sleep-when-empty"]);
        assert_eq!(replay.sleep_fraction, 0.05);
        assert_eq!(replay.eaco.unwrap().servers, [64, 28]);
    }

    #[test]
    fn the_shipped_specs_parse() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads");
        for name in ["paper.toml", "quick.toml", "eaco.toml"] {
            let spec = BenchSpec::load(&root.join(name)).unwrap();
            assert!(spec.replay.is_some(), "{name} has a [replay] table");
        }
        // The whole-cluster study alone: no sub-cluster policies, no replays.
        let spec = BenchSpec::load(&root.join("full-cluster.toml")).unwrap();
        let gaps = spec.gaps.expect("full-cluster.toml has a [gaps] table");
        assert!(gaps.policies.is_empty() && spec.replay.is_none());
        assert_eq!(gaps.full_cluster.map(|f| f.time_limit_s), Some(60.0));
    }

    /// `gpu_models` names a file beside the spec; the spec written back keeps the name as
    /// the user wrote it, and a spec without one writes no `gpu_models` key.
    #[test]
    fn a_gpu_model_file_is_found_beside_the_spec() {
        let text = "name = \"m\"\ntraces = [\"default\"]\npolicies = [\"fgd\"]\nseeds = [1]\n";
        let with = format!("gpu_models = \"spot/gpu-models.csv\"\n{text}");
        let spec = BenchSpec::parse(Path::new("workloads/mine.toml"), &with).unwrap();
        assert_eq!(
            spec.gpu_models_file.as_deref(),
            Some(Path::new("workloads/spot/gpu-models.csv"))
        );
        let written = toml::to_string(&spec).unwrap();
        assert!(
            written.contains("gpu_models = \"spot/gpu-models.csv\""),
            "{written}"
        );
        let without = BenchSpec::parse(Path::new("workloads/mine.toml"), text).unwrap();
        assert_eq!(without.gpu_models_file, None);
        assert!(!toml::to_string(&without).unwrap().contains("gpu_models"));
    }

    /// A spec with a gap study, its `checkpoints` line left to the test.
    const GAPS: &str = "name = \"g\"\ntraces = [\"default\"]\npolicies = [\"fgd\"]\nseeds = [1]\n[gaps]\ntraces = [\"default\"]\npolicies = [\"fgd\"]\nseeds = [1]\nsample_nodes = 4\n";

    #[test]
    fn a_bound_that_branches_asleep_only_leaves_always_on_replays_their_lp() {
        use gapbench_replay::IdlePolicy;
        let text = format!("{EACO}[replay.bound]\ntime_limit_s = 5\nmax_windows = 4\nmax_branch_nodes = 5\nbranch_asleep_only = true\n");
        let spec = load(&text).unwrap();
        let bound = spec.replay.unwrap().bound.unwrap();
        assert_eq!(bound.branch_nodes(IdlePolicy::SleepWhenEmpty), Some(5));
        assert_eq!(bound.branch_nodes(IdlePolicy::AlwaysOn), None);
        let every = ReplayBoundSpec {
            branch_asleep_only: false,
            ..bound
        };
        assert_eq!(every.branch_nodes(IdlePolicy::AlwaysOn), Some(5));
    }

    #[test]
    fn bad_replay_tables_are_refused_with_a_reason() {
        let cases = [
            (
                EACO.replace("jobs = 400", "jobs = 400\nburst = 3"),
                "unknown field `burst`",
            ),
            (EACO.replace("\"eaco-o\"", "\"eaco-x\""), "policy `eaco-x`"),
            (
                EACO.replace("seeds = \"42..43\"", "seeds = \"42..43\"\nidle = [\"off\"]"),
                "idle policy `off`",
            ),
            (
                EACO.replace(
                    "seeds = \"42..43\"",
                    "seeds = \"42..43\"\narrival_scales = [0]",
                ),
                "arrival_scales",
            ),
            (EACO.replace("[64, 28]", "[0]"), "servers"),
            (
                format!("{GAPS}checkpoints = [50, 80, 50]\n"),
                "gaps.checkpoints: 50 is given twice",
            ),
            (
                format!("{GAPS}checkpoints = [50]\ntime_limit_s = nan\n"),
                "gaps.time_limit_s must be a positive number",
            ),
            (
                format!("{GAPS}checkpoints = [50]\nfront_time_limit_s = 0\n"),
                "gaps.front_time_limit_s must be a positive number",
            ),
            (
                format!("{GAPS}checkpoints = [50]\nmip_gap = -0.1\n"),
                "gaps.mip_gap",
            ),
            (
                format!("{GAPS}checkpoints = [50, 500]\n"),
                "gaps.checkpoints: 500 % is beyond the sweeps, which end at 130 %",
            ),
            (
                EACO.replace("jobs_per_hour = 2.0", "jobs_per_hour = -1.0"),
                "jobs_per_hour",
            ),
            (
                "name = \"e\"\n[replay]\npolicies = [\"fgd\"]\nseeds = [1]\n".to_string(),
                "needs `traces` or an `eaco` setup",
            ),
            (
                EACO.replace("name = \"e\"", "name = \"e\"\ntraces = [\"default\"]"),
                "`traces` and `policies` must not be empty",
            ),
            (
                format!("{EACO}[replay.bound]\ntime_limit_s = 5\nmax_windows = 4\nbranch_asleep_only = true\n"),
                "`branch_asleep_only` needs `max_branch_nodes`",
            ),
        ];
        for (text, expected) in cases {
            let error = format!("{:#}", load(&text).unwrap_err());
            assert!(error.contains(expected), "{expected}: got {error}");
            assert!(error.contains(".toml"), "the error names the file: {error}");
        }
        // A syntax error names the line.
        let error = format!("{:#}", load("name = \"e\"\n[replay\n").unwrap_err());
        assert!(error.contains("line 2"), "{error}");
    }
}
