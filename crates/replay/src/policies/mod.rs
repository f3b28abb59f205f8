//! Time-mode policies, one file each.

pub mod buddy;
pub mod budgeted;
pub mod clock_fifo;
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

use gapbench_model::Cluster;
use gapbench_online::PolicySpec;

use crate::budget::Forecast;
use crate::policy::{CapacityMode, TimePolicy};

/// The time-mode policy names besides the sweep's policy specs.
pub const TIME_POLICY_NAMES: &str = "eaco-r, eaco-o, fifo, fifo-packed, gandiva (GPU \
reservations respected), fifo-o, fifo-packed-o, gandiva-o (whole-GPU reservations may be \
shared, as Gavel and EaCO-O do), powerflow, greenflow (budgeted: GPU count and clock per \
round), fifo-full-clock, zeus (their baselines), or any sweep policy spec (fgd, pwr, \
pwr:200,fgd:800, …)";

/// The budgeted policies and their baselines: they run the GPU tasks as training jobs in a
/// configuration of their choice.
pub const BUDGET_POLICIES: [&str; 4] = ["powerflow", "greenflow", "zeus", "fifo-full-clock"];

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

/// The [`PowerLevers`] of the policy `name` (see [`time_policy_with`]).
pub fn power_levers(name: &str) -> PowerLevers {
    let name = name.trim();
    let budgeted = matches!(name, "powerflow" | "greenflow");
    PowerLevers {
        reclocks: budgeted || name == "zeus",
        oversubscribes: name == "eaco-o"
            || name.strip_suffix("-o").is_some_and(|base| base != "eaco"),
        chooses_gpu_count: budgeted,
    }
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

/// Builds a time-mode policy from its name (see [`TIME_POLICY_NAMES`]) with default
/// settings; anything else is parsed as a sweep policy spec and run through
/// [`OnlinePolicy`].
pub fn time_policy(name: &str, cluster: &Cluster) -> Result<Box<dyn TimePolicy>, String> {
    time_policy_with(name, cluster, &PolicySettings::default())
}

/// [`time_policy`] with the budgeted policies' settings.
pub fn time_policy_with(
    name: &str,
    cluster: &Cluster,
    settings: &PolicySettings,
) -> Result<Box<dyn TimePolicy>, String> {
    let name = name.trim();
    match name {
        "powerflow" => {
            return Ok(Box::new(PowerFlowStyle::new(
                settings.round_s,
                settings.horizon_end_s,
            )))
        }
        "greenflow" => {
            return Ok(Box::new(GreenFlowStyle::with_rounds(
                settings.forecast,
                settings.theta,
                settings.round_s,
                settings.horizon_end_s,
            )))
        }
        "zeus" => {
            return Ok(Box::new(ClockFifo::new(ClockRule::Zeus {
                eta: settings.eta,
            })))
        }
        "fifo-full-clock" => return Ok(Box::new(ClockFifo::new(ClockRule::Full))),
        _ => {}
    }
    let (base, capacity) = match name.strip_suffix("-o") {
        Some(base) if base != "eaco" => (base, CapacityMode::Oversubscribed),
        _ => (name, CapacityMode::Reserved),
    };
    Ok(match base {
        "eaco-r" => Box::new(Eaco::new(EacoConfig::reserved())),
        "eaco-o" => Box::new(Eaco::new(EacoConfig::oversubscribed())),
        "fifo" => Box::new(FifoExclusive { capacity }),
        "fifo-packed" => Box::new(FifoPacked { capacity }),
        "gandiva" => Box::new(Gandiva::new(capacity)),
        _ => {
            let spec: PolicySpec = name
                .parse()
                .map_err(|e: String| format!("{e}; time mode also knows {TIME_POLICY_NAMES}"))?;
            Box::new(OnlinePolicy::new(&spec, cluster))
        }
    })
}

/// `-o` for policies that share whole-GPU reservations.
fn capacity_suffix(capacity: CapacityMode) -> &'static str {
    match capacity {
        CapacityMode::Reserved => "",
        CapacityMode::Oversubscribed => "-o",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gapbench_model::workload::openb_like_cluster;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_choices() {
        let cluster = openb_like_cluster(gapbench_model::CpuPowerProfile::Reference);
        for name in [
            "eaco-r",
            "eaco-o",
            "fifo",
            "fifo-packed",
            "gandiva",
            "fifo-o",
            "fifo-packed-o",
            "gandiva-o",
            "fgd",
            "pwr200-fgd800",
            "powerflow",
            "zeus",
            "fifo-full-clock",
        ] {
            let spec = name.replace("pwr200-fgd800", "pwr:200,fgd:800");
            assert_eq!(time_policy(&spec, &cluster).unwrap().name(), name);
        }
        assert_eq!(
            time_policy("greenflow", &cluster).unwrap().name(),
            "greenflow-oracle"
        );
        assert!(power_levers("eaco-o").oversubscribes && power_levers("fifo-o").oversubscribes);
        assert_eq!(power_levers("eaco-r"), PowerLevers::default());
        assert!(power_levers("zeus").reclocks && !power_levers("zeus").chooses_gpu_count);
        assert!(power_levers("powerflow").chooses_gpu_count);
        let error = time_policy("eaco", &cluster).err().unwrap();
        assert!(error.contains("eaco-r") && error.contains("fgd"), "{error}");
    }
}
