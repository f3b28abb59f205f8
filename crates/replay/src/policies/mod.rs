//! Time-mode policies, one file each, and the one table that registers them.
//!
//! Adding a time policy: write `policies/<module>.rs` (a type implementing
//! [`TimePolicy`]) and add its line to the table below. Its name, parsing, levers, budget,
//! the help text and the tests' "every time policy" all follow from that line (see
//! `declare.rs`).

pub mod buddy;
pub mod budgeted;
pub mod clock_fifo;
mod declare;
pub mod eaco;
pub mod fifo;
pub mod fifo_packed;
pub mod gandiva;
pub mod gpu_sets;
pub mod greenflow;
pub mod online;
pub mod powerflow;

pub use clock_fifo::{ClockFifo, ClockRule};
pub use eaco::{Eaco, EacoConfig};
pub use fifo::FifoExclusive;
pub use fifo_packed::FifoPacked;
pub use gandiva::Gandiva;
pub use greenflow::GreenFlowStyle;
pub use online::OnlinePolicy;
pub use powerflow::PowerFlowStyle;

use std::str::FromStr;

use gapbench_model::Cluster;
use gapbench_online::PolicySpec;

use crate::budget::{Budget, Forecast};
use crate::error::ReplayError;
use crate::policy::{CapacityMode, TimePolicy};
use declare::declare_time_policies;

declare_time_policies! {
    // Kind       = name,              help group, power levers,                 budget,
    //              constructor
    EacoR         = "eaco-r",          Reserving,  [],                           None,
                    |s| Eaco::new(EacoConfig::reserved());
    EacoO         = "eaco-o",          Reserving,  [oversubscribes],             None,
                    |s| Eaco::new(EacoConfig::oversubscribed());
    Fifo          = "fifo",            Reserving,  [],                           None,
                    |s| FifoExclusive { capacity: CapacityMode::Reserved };
    FifoPacked    = "fifo-packed",     Reserving,  [],                           None,
                    |s| FifoPacked { capacity: CapacityMode::Reserved };
    Gandiva       = "gandiva",         Reserving,  [],                           None,
                    |s| Gandiva::new(CapacityMode::Reserved);
    FifoO         = "fifo-o",          Sharing,    [oversubscribes],             None,
                    |s| FifoExclusive { capacity: CapacityMode::Oversubscribed };
    FifoPackedO   = "fifo-packed-o",   Sharing,    [oversubscribes],             None,
                    |s| FifoPacked { capacity: CapacityMode::Oversubscribed };
    GandivaO      = "gandiva-o",       Sharing,    [oversubscribes],             None,
                    |s| Gandiva::new(CapacityMode::Oversubscribed);
    PowerFlow     = "powerflow",       Budgeted,   [reclocks, chooses_gpu_count], Some(BudgetTarget::Energy),
                    |s| PowerFlowStyle::new(s.round_s, s.horizon_end_s);
    GreenFlow     = "greenflow",       Budgeted,   [reclocks, chooses_gpu_count], Some(BudgetTarget::Carbon),
                    |s| GreenFlowStyle::with_rounds(s.forecast, s.theta, s.round_s, s.horizon_end_s);
    FifoFullClock = "fifo-full-clock", Baseline,   [],                           None,
                    |s| ClockFifo::new(ClockRule::Full);
    Zeus          = "zeus",            Baseline,   [reclocks],                   None,
                    |s| ClockFifo::new(ClockRule::Zeus { eta: s.eta });
}

/// How the help text groups the time policies (in table order, each group once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimePolicyGroup {
    /// EaCO's two modes and the Gavel baselines that respect GPU reservations.
    Reserving,
    /// The Gavel baselines sharing whole-GPU reservations (`-o`).
    Sharing,
    /// Plan GPU counts and clocks to a budget in rounds.
    Budgeted,
    /// The budgeted policies' baselines (training jobs at a fixed configuration).
    Baseline,
}

impl TimePolicyGroup {
    /// What the help text says after the group's names.
    fn note(self) -> &'static str {
        match self {
            TimePolicyGroup::Reserving => "GPU reservations respected",
            TimePolicyGroup::Sharing => {
                "whole-GPU reservations may be shared, as Gavel and EaCO-O do"
            }
            TimePolicyGroup::Budgeted => "budgeted: GPU count and clock per round",
            TimePolicyGroup::Baseline => "their baselines",
        }
    }
}

/// What a budgeted policy plans to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetTarget {
    /// Energy, kWh (PowerFlow-style; it also takes a carbon budget on the command line).
    Energy,
    /// Carbon, kg (GreenFlow-style; needs a carbon-intensity series).
    Carbon,
}

impl BudgetTarget {
    /// The budget of this kind worth `amount` (kWh or kg).
    pub fn budget(self, amount: f64) -> Budget {
        match self {
            BudgetTarget::Energy => Budget::EnergyKwh(amount),
            BudgetTarget::Carbon => Budget::CarbonKg(amount),
        }
    }
}

impl TimePolicyKind {
    /// The policy of the table named `name` (surrounding space ignored).
    pub fn parse(name: &str) -> Option<TimePolicyKind> {
        let name = name.trim();
        TimePolicyKind::ALL
            .iter()
            .copied()
            .find(|k| k.name() == name)
    }

    /// The budgeted policy that plans to `budget`.
    pub fn planning_to(budget: BudgetTarget) -> TimePolicyKind {
        *TimePolicyKind::ALL
            .iter()
            .find(|k| k.budget() == Some(budget))
            .expect("the table has a planner of each budget kind")
    }

    /// Whether it plans to a budget (in rounds, and so is written `name@share`).
    pub fn is_budgeted(self) -> bool {
        self.budget().is_some()
    }

    /// Whether it runs the GPU tasks as training jobs in a configuration of its choice: the
    /// budgeted policies and their baselines.
    pub fn runs_training_jobs(self) -> bool {
        matches!(
            self.group(),
            TimePolicyGroup::Budgeted | TimePolicyGroup::Baseline
        )
    }
}

/// Whether `name` is a budgeted policy or one of their baselines (they run the GPU tasks as
/// training jobs in a configuration of their choice).
pub fn is_budget_policy(name: &str) -> bool {
    TimePolicyKind::parse(name).is_some_and(TimePolicyKind::runs_training_jobs)
}

/// Whether `name` plans to a budget in rounds (powerflow, greenflow).
pub fn is_budgeted(name: &str) -> bool {
    TimePolicyKind::parse(name).is_some_and(TimePolicyKind::is_budgeted)
}

/// The time-mode policy names besides the sweep's policy specs, grouped as the table
/// groups them, for help texts and refusals.
pub fn time_policy_names() -> String {
    let mut groups: Vec<(TimePolicyGroup, Vec<&str>)> = Vec::new();
    for kind in TimePolicyKind::ALL {
        match groups.last_mut() {
            Some((group, names)) if *group == kind.group() => names.push(kind.name()),
            _ => groups.push((kind.group(), vec![kind.name()])),
        }
    }
    let listed: Vec<String> = groups
        .iter()
        .map(|(group, names)| format!("{} ({})", names.join(", "), group.note()))
        .collect();
    format!(
        "{}, or any sweep policy spec (fgd, pwr, pwr:200,fgd:800, …)",
        listed.join(", ")
    )
}

/// The names of the budgeted policies, joined with "and" (`powerflow and greenflow`).
fn budgeted_names() -> String {
    let names: Vec<&str> = TimePolicyKind::ALL
        .iter()
        .filter(|k| k.is_budgeted())
        .map(|k| k.name())
        .collect();
    names.join(" and ")
}

/// A time policy as a bench spec or the command line writes it: a name of the table or a
/// sweep policy spec, and for a budgeted policy its budget as a share of full-clock FIFO's
/// spend (`powerflow@0.9`). The budgeted policies need the share; no other policy takes one.
#[derive(Debug, Clone, PartialEq)]
pub struct TimePolicySpec {
    /// The policy without its share, trimmed (`powerflow`, `fgd`, `pwr:200,fgd:800`).
    pub name: String,
    /// The budget as a share of full-clock FIFO's spend (budgeted policies only).
    pub budget_share: Option<f64>,
}

impl TimePolicySpec {
    /// The policy of the table it names, if it names one (a sweep spec does not).
    pub fn kind(&self) -> Option<TimePolicyKind> {
        TimePolicyKind::parse(&self.name)
    }
}

impl FromStr for TimePolicySpec {
    type Err = ReplayError;

    fn from_str(spec: &str) -> Result<Self, ReplayError> {
        let (name, budget_share) = match spec.split_once('@') {
            Some((name, share)) => {
                let share: f64 = share
                    .trim()
                    .parse()
                    .map_err(|_| ReplayError::ShareNotANumber { spec: spec.into() })?;
                if !(share.is_finite() && share > 0.0) {
                    return Err(ReplayError::ShareNotPositive { spec: spec.into() });
                }
                (name.trim(), Some(share))
            }
            None => (spec.trim(), None),
        };
        match (is_budgeted(name), budget_share) {
            (true, None) => Err(ReplayError::ShareMissing { spec: spec.into() }),
            (false, Some(_)) => Err(ReplayError::ShareUnused {
                spec: spec.into(),
                planners: budgeted_names(),
            }),
            _ => Ok(TimePolicySpec {
                name: name.to_string(),
                budget_share,
            }),
        }
    }
}

/// What a policy may do that draws less power than the trace's requests at full clock on
/// reserved devices: what a lower bound on its energy must relax (`gapbench_ilp`'s
/// `replay_bound`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PowerLevers {
    /// Runs devices below full clock (a job configuration's frequency).
    pub reclocks: bool,
    /// Shares devices beyond their reservations ([`CapacityMode::Oversubscribed`]).
    pub oversubscribes: bool,
    /// Chooses each training job's GPU count (at least one).
    pub chooses_gpu_count: bool,
}

/// What the budgeted policies and their baselines are set with (the others take nothing).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PolicySettings {
    /// Round period Δ of powerflow and greenflow, seconds.
    pub round_s: f64,
    /// End of the budget period's arrivals (`None`: the last training job's arrival).
    pub horizon_end_s: Option<f64>,
    /// greenflow's view of future carbon intensity and its pacing exponent θ.
    pub forecast: Forecast,
    pub theta: f64,
    /// zeus's η.
    pub eta: f64,
}

impl PolicySettings {
    /// These settings for the replay of `seed`: a noisy forecast draws its error from it.
    pub fn for_seed(mut self, seed: u64) -> PolicySettings {
        if let Forecast::Noisy { sigma, .. } = self.forecast {
            self.forecast = Forecast::Noisy { sigma, seed };
        }
        self
    }
}

impl Default for PolicySettings {
    fn default() -> Self {
        PolicySettings {
            round_s: powerflow::DEFAULT_ROUND_S,
            horizon_end_s: None,
            forecast: Forecast::Oracle,
            theta: greenflow::DEFAULT_THETA,
            eta: clock_fifo::DEFAULT_ZEUS_ETA,
        }
    }
}

/// The [`PowerLevers`] of the policy `name` (see [`time_policy_with`]): none for a sweep
/// policy spec.
pub fn power_levers(name: &str) -> PowerLevers {
    TimePolicyKind::parse(name).map_or_else(PowerLevers::default, TimePolicyKind::levers)
}

/// Builds a time-mode policy from its name (see [`time_policy_names`]) with default
/// settings; anything else is parsed as a sweep policy spec and run through
/// [`OnlinePolicy`].
pub fn time_policy(name: &str, cluster: &Cluster) -> Result<Box<dyn TimePolicy>, ReplayError> {
    time_policy_with(name, cluster, &PolicySettings::default())
}

/// [`time_policy`] with the budgeted policies' settings.
pub fn time_policy_with(
    name: &str,
    cluster: &Cluster,
    settings: &PolicySettings,
) -> Result<Box<dyn TimePolicy>, ReplayError> {
    if let Some(kind) = TimePolicyKind::parse(name) {
        return Ok(kind.build(settings));
    }
    let spec: PolicySpec = name
        .trim()
        .parse()
        .map_err(|reason| ReplayError::UnknownPolicy {
            reason,
            known: time_policy_names(),
        })?;
    Ok(Box::new(OnlinePolicy::new(&spec, cluster)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gapbench_model::workload::openb_like_cluster;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_choices() {
        let cluster = openb_like_cluster(gapbench_model::CpuPowerProfile::Reference);
        for kind in TimePolicyKind::ALL {
            let built = time_policy(kind.name(), &cluster).unwrap().name();
            match kind {
                TimePolicyKind::GreenFlow => assert_eq!(built, "greenflow-oracle"),
                _ => assert_eq!(built, kind.name()),
            }
            assert_eq!(
                TimePolicyKind::parse(&format!(" {} ", kind.name())),
                Some(*kind)
            );
        }
        for (spec, name) in [("fgd", "fgd"), ("pwr:200,fgd:800", "pwr200-fgd800")] {
            assert_eq!(time_policy(spec, &cluster).unwrap().name(), name);
        }
        assert!(power_levers("eaco-o").oversubscribes && power_levers("fifo-o").oversubscribes);
        assert_eq!(power_levers("eaco-r"), PowerLevers::default());
        assert_eq!(power_levers("fgd"), PowerLevers::default());
        assert!(power_levers("zeus").reclocks && !power_levers("zeus").chooses_gpu_count);
        assert!(power_levers("powerflow").chooses_gpu_count);
        let error = time_policy("eaco", &cluster).err().unwrap().to_string();
        assert!(error.contains("eaco-r") && error.contains("fgd"), "{error}");
    }

    #[test]
    fn the_help_text_and_lists_follow_the_table() {
        assert_eq!(
            time_policy_names(),
            "eaco-r, eaco-o, fifo, fifo-packed, gandiva (GPU reservations respected), fifo-o, \
             fifo-packed-o, gandiva-o (whole-GPU reservations may be shared, as Gavel and \
             EaCO-O do), powerflow, greenflow (budgeted: GPU count and clock per round), \
             fifo-full-clock, zeus (their baselines), or any sweep policy spec (fgd, pwr, \
             pwr:200,fgd:800, …)"
        );
        let training: Vec<&str> = TimePolicyKind::ALL
            .iter()
            .filter(|k| k.runs_training_jobs())
            .map(|k| k.name())
            .collect();
        assert_eq!(
            training,
            ["powerflow", "greenflow", "fifo-full-clock", "zeus"]
        );
        assert!(is_budget_policy(" zeus") && !is_budget_policy("fifo"));
        assert!(is_budgeted("greenflow") && !is_budgeted("fifo-full-clock"));
        assert_eq!(
            TimePolicyKind::planning_to(BudgetTarget::Carbon),
            TimePolicyKind::GreenFlow
        );
    }

    #[test]
    fn budget_shares_parse_with_their_refusals() {
        let spec: TimePolicySpec = " powerflow @ 0.9".parse().unwrap();
        assert_eq!(
            (spec.name.as_str(), spec.budget_share),
            ("powerflow", Some(0.9))
        );
        assert_eq!(spec.kind(), Some(TimePolicyKind::PowerFlow));
        let spec: TimePolicySpec = "pwr:200,fgd:800".parse().unwrap();
        assert_eq!((spec.kind(), spec.budget_share), (None, None));
        let error = |text: &str| text.parse::<TimePolicySpec>().unwrap_err().to_string();
        assert_eq!(
            error("powerflow@x"),
            "`powerflow@x`: the budget after `@` is a share of FIFO's spend such as 0.9"
        );
        assert_eq!(
            error("greenflow@-1"),
            "`greenflow@-1`: the budget share must be positive"
        );
        assert_eq!(
            error("greenflow"),
            "`greenflow` plans to a budget: write it as `greenflow@1.0` (a share of FIFO's spend)"
        );
        assert_eq!(
            error("fifo@0.9"),
            "`fifo@0.9`: only powerflow and greenflow take a budget share"
        );
    }
}
