//! Time-mode policies, one file each.

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

use crate::policy::{CapacityMode, TimePolicy};

/// The time-mode policy names besides the sweep's policy specs.
pub const TIME_POLICY_NAMES: &str = "eaco-r, eaco-o, fifo, fifo-packed, gandiva (GPU \
reservations respected), fifo-o, fifo-packed-o, gandiva-o (whole-GPU reservations may be \
shared, as Gavel and EaCO-O do), or any sweep policy spec (fgd, pwr, pwr:200,fgd:800, …)";

/// Builds a time-mode policy from its name (see [`TIME_POLICY_NAMES`]); anything else is
/// parsed as a sweep policy spec and run through [`OnlinePolicy`].
pub fn time_policy(name: &str, cluster: &Cluster) -> Result<Box<dyn TimePolicy>, String> {
    let name = name.trim();
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
        ] {
            let spec = name.replace("pwr200-fgd800", "pwr:200,fgd:800");
            assert_eq!(time_policy(&spec, &cluster).unwrap().name(), name);
        }
        let error = time_policy("eaco", &cluster).err().unwrap();
        assert!(error.contains("eaco-r") && error.contains("fgd"), "{error}");
    }
}
