//! Node power in time mode and its exact integration into energy.
//!
//! Power is piecewise constant between events (it only changes when a task starts, leaves or
//! changes speed), so energy is the exact sum of power × interval. Power is kept in integer
//! milliwatts, so cluster totals updated by differences equal a recomputation exactly.
//!
//! - CPU: the reference's socket model (`gapbench_model::power`).
//! - GPU, `Reservation` mode: the reference's model (any reservation → full power).
//! - GPU, `Utilisation` mode (spec §1 [D]): `P_idle + (P_max − P_idle)·min(1, η_k·ΣU)` for a
//!   device with `k` tenants of summed actual utilisation `ΣU`; `η_k` is the sublinear
//!   co-location factor of [`ColocationModel`] (§2.4), applied to the device's dynamic power.
//! - Clock (spec §1): a device's dynamic power is scaled by `φ(f) = (f/f_max)^κ`, `κ` of
//!   its GPU model's DVFS profile; `f` is the highest clock its tenants ask for (full unless
//!   a policy re-clocks a job).
//! - A node with no task draws, under `SleepWhenEmpty`, `sleep_fraction` × its idle power.

use gapbench_model::training::DvfsProfile;
use gapbench_model::{Cluster, NodeId, NodeState};

use crate::colocation::ColocationModel;
use crate::devices::DeviceLoad;

/// How GPU power follows load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GpuPowerMode {
    /// Any reservation puts a device at full power (the reference simulator's model, as in
    /// the arrival sweep).
    Reservation,
    /// Power follows the tenants' actual utilisation (spec §1).
    Utilisation,
}

/// What a node with nothing on it draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdlePolicy {
    /// Empty nodes stay on at idle power (how FGD and PWR are usually evaluated).
    AlwaysOn,
    /// Empty nodes sleep at `sleep_fraction` of their idle power (EaCO's main lever).
    SleepWhenEmpty,
}

/// Power of a node or cluster, split by where it goes, in milliwatts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PowerSplit {
    pub cpu_mw: i64,
    /// GPU power above idle.
    pub gpu_busy_mw: i64,
    /// Idle power of the GPUs of awake nodes.
    pub gpu_idle_mw: i64,
    /// Power of sleeping nodes.
    pub sleep_mw: i64,
}

impl PowerSplit {
    pub fn total_mw(&self) -> i64 {
        self.cpu_mw + self.gpu_busy_mw + self.gpu_idle_mw + self.sleep_mw
    }

    pub fn add(&mut self, other: PowerSplit, sign: i64) {
        self.cpu_mw += sign * other.cpu_mw;
        self.gpu_busy_mw += sign * other.gpu_busy_mw;
        self.gpu_idle_mw += sign * other.gpu_idle_mw;
        self.sleep_mw += sign * other.sleep_mw;
    }
}

/// The power settings of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerSettings {
    pub gpu_mode: GpuPowerMode,
    pub idle: IdlePolicy,
    /// Sleep power as a share of idle power (spec: 0–10 %).
    pub sleep_fraction: f64,
}

impl Default for PowerSettings {
    /// Utilisation-following GPUs, always-on nodes, sleep at 5 % of idle when enabled.
    fn default() -> Self {
        PowerSettings {
            gpu_mode: GpuPowerMode::Utilisation,
            idle: IdlePolicy::AlwaysOn,
            sleep_fraction: 0.05,
        }
    }
}

/// The power of `node` in its current state.
pub fn node_power(
    cluster: &Cluster,
    node: NodeId,
    state: &NodeState,
    devices: &[DeviceLoad],
    settings: &PowerSettings,
    colocation: &ColocationModel,
) -> PowerSplit {
    let model = cluster.power_model(node);
    let node_type = cluster.node_type(node);
    let (gpu_idle_w, gpu_full_w) = model.gpu.map_or((0, 0), |g| {
        (i64::from(g.idle_watts), i64::from(g.full_watts))
    });
    let gpu_idle_mw = 1000 * gpu_idle_w * i64::from(node_type.gpu_count);
    if state.task_count == 0 && settings.idle == IdlePolicy::SleepWhenEmpty {
        let idle_mw = 1000 * model.cpu_watts(node_type.cpu_milli) + gpu_idle_mw;
        return PowerSplit {
            sleep_mw: (settings.sleep_fraction * idle_mw as f64).round() as i64,
            ..PowerSplit::default()
        };
    }
    let dynamic_mw = 1000 * (gpu_full_w - gpu_idle_w);
    let kappa = node_type
        .gpu_model
        .and_then(DvfsProfile::of)
        .map_or(1.0, |p| p.kappa);
    let gpu_busy_mw = devices
        .iter()
        .map(|load| {
            let clock = load.clock_permille();
            let phi = if clock >= 1000 {
                1.0
            } else {
                (f64::from(clock) / 1000.0).powf(kappa)
            };
            match settings.gpu_mode {
                GpuPowerMode::Reservation if load.reserved_milli == 0 => 0,
                GpuPowerMode::Reservation if phi == 1.0 => dynamic_mw,
                GpuPowerMode::Reservation => (dynamic_mw as f64 * phi).round() as i64,
                GpuPowerMode::Utilisation => {
                    let eta = colocation.power_eta(load.tenants.len());
                    let load_share = (eta * f64::from(load.util_permille) / 1000.0).min(1.0);
                    (dynamic_mw as f64 * load_share * phi).round() as i64
                }
            }
        })
        .sum();
    PowerSplit {
        cpu_mw: 1000 * model.cpu_watts(state.cpu_left_milli),
        gpu_busy_mw,
        gpu_idle_mw,
        sleep_mw: 0,
    }
}

/// Energy so far, by where it went, in joules.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EnergyMeter {
    pub cpu_j: f64,
    pub gpu_busy_j: f64,
    pub gpu_idle_j: f64,
    pub sleep_j: f64,
}

pub const JOULES_PER_KWH: f64 = 3.6e6;

impl EnergyMeter {
    /// Adds `power` drawn for `seconds`.
    pub fn accumulate(&mut self, power: &PowerSplit, seconds: f64) {
        let joules = |mw: i64| mw as f64 / 1000.0 * seconds;
        self.cpu_j += joules(power.cpu_mw);
        self.gpu_busy_j += joules(power.gpu_busy_mw);
        self.gpu_idle_j += joules(power.gpu_idle_mw);
        self.sleep_j += joules(power.sleep_mw);
    }

    pub fn total_j(&self) -> f64 {
        self.cpu_j + self.gpu_busy_j + self.gpu_idle_j + self.sleep_j
    }

    pub fn total_kwh(&self) -> f64 {
        self.total_j() / JOULES_PER_KWH
    }
}

/// Everything a replay has drawn so far, for every policy: the cluster's energy by where it
/// went and its carbon, and the job energy of the training model (what budgets limit) and
/// its carbon. Carbon is 0 without a carbon-intensity series.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Ledger {
    pub cluster: EnergyMeter,
    pub cluster_carbon_g: f64,
    pub job_energy_j: f64,
    pub job_carbon_g: f64,
}

impl Ledger {
    /// What a budget of `carbon` kind counts, in the engine's unit (grams or joules).
    pub fn job_spend(&self, carbon: bool) -> f64 {
        if carbon {
            self.job_carbon_g
        } else {
            self.job_energy_j
        }
    }
}
