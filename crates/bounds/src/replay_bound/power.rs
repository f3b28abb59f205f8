//! The replay's power model, lowered to what column generation can bound (module doc of
//! [`super`] for the proofs): a cluster whose power models are the static part, the sleep
//! power of each node type, a placement-independent dynamic term per task, and each task's
//! request relaxed to what every run of the policy holds at least.

use gapbench_model::training::{DvfsProfile, FREQUENCY_LEVELS};
use gapbench_model::{Cluster, GpuModel, Placement, Task};

use super::{BoundPower, GpuPowerBound, IdleBound};

/// `φ` at the lowest clock a policy may choose for a device of `model`: `(f/f_max)^κ` at
/// the lowest of [`FREQUENCY_LEVELS`], `κ` of the model's DVFS profile (1 without one, as
/// the replay's energy account takes it).
fn lowest_phi(model: Option<GpuModel>) -> f64 {
    let kappa = model.and_then(DvfsProfile::of).map_or(1.0, |p| p.kappa);
    let lowest = FREQUENCY_LEVELS.iter().copied().fold(1.0, f64::min);
    lowest.powf(kappa)
}

/// The share of a device's dynamic power a task of the policy is sure to keep: 1 at full
/// clock, `φ_min` when the policy may re-clock.
fn clock_share(power: &BoundPower, model: Option<GpuModel>) -> f64 {
    if power.reclocks {
        lowest_phi(model)
    } else {
        1.0
    }
}

/// `cluster` with each GPU model's power lowered to what column generation may charge:
/// in reservation mode a working device's dynamic power at the lowest clock the policy may
/// choose (rounded down), in utilisation mode none (dynamic power is the per-task term).
pub(super) fn static_cluster(cluster: &Cluster, power: &BoundPower) -> Cluster {
    let mut lowered = cluster.clone();
    for (model, node_type) in lowered.power_models.iter_mut().zip(&cluster.node_types) {
        if let Some(gpu) = model.gpu.as_mut() {
            let dynamic = f64::from(gpu.full_watts - gpu.idle_watts);
            let kept = match power.gpu {
                GpuPowerBound::Reservation => {
                    (dynamic * clock_share(power, node_type.gpu_model)).floor()
                }
                GpuPowerBound::Utilisation { .. } => 0.0,
            };
            gpu.full_watts = gpu.idle_watts + kept as u32;
        }
    }
    lowered
}

/// Per node type (by type id), the watts of an empty node under sleep-when-empty:
/// `sleep_fraction` × (CPU idle + GPU idle), rounded down to the milliwatt (the replay
/// rounds to the nearest).
pub(super) fn sleep_watts(cluster: &Cluster, power: &BoundPower) -> Option<Vec<f64>> {
    let IdleBound::SleepWhenEmpty { sleep_fraction } = power.idle else {
        return None;
    };
    let watts = cluster
        .node_types
        .iter()
        .zip(&cluster.power_models)
        .map(|(node_type, model)| {
            let gpu_idle = model.gpu.map_or(0, |g| i64::from(g.idle_watts));
            let idle_mw = 1000
                * (model.cpu_watts(node_type.cpu_milli)
                    + gpu_idle * i64::from(node_type.gpu_count));
            (sleep_fraction * idle_mw as f64).floor() / 1000.0
        })
        .collect();
    Some(watts)
}

/// What a task holds at least in every run of the policy: its request, with each device's
/// share cut to its GPU memory share when devices are oversubscribed (tenants' memory,
/// not reservations, must fit; one such device for a multi-GPU task, as partial shares of
/// several devices are no request), and one GPU when the policy chooses GPU counts.
pub(super) fn relaxed_task(task: &Task, gpu_memory_permille: u32, power: &BoundPower) -> Task {
    let mut relaxed = task.clone();
    if relaxed.gpu_count == 0 {
        return relaxed;
    }
    if power.oversubscribed {
        let share = u32::from(relaxed.gpu_milli).min(gpu_memory_permille);
        relaxed.gpu_milli = share as u16;
        // Several partial devices are no request the checker knows: one is still held.
        if relaxed.gpu_milli < 1000 {
            relaxed.gpu_count = 1;
        }
    }
    if power.chooses_gpu_count {
        relaxed.gpu_count = 1;
    }
    if relaxed.gpu_milli == 0 {
        relaxed.gpu_count = 0;
    }
    relaxed
}

/// In utilisation mode, the dynamic GPU watts `task` (relaxed) draws wherever it runs:
/// per device `min over allowed models (dyn_M · φ · min(η·U, m/1000))`, `η = η_1` for a
/// whole reserved device (it has no other tenant), `η_min` otherwise; 0 in reservation
/// mode and for CPU-only tasks.
pub(super) fn dynamic_floor_watts(
    cluster: &Cluster,
    task: &Task,
    util_permille: u32,
    power: &BoundPower,
) -> f64 {
    let GpuPowerBound::Utilisation { eta_min, eta_alone } = power.gpu else {
        return 0.0;
    };
    if task.gpu_count == 0 {
        return 0.0;
    }
    // A whole reserved device has no other tenant: its factor is η_1.
    let eta = if task.gpu_milli >= 1000 && !power.oversubscribed {
        eta_alone
    } else {
        eta_min
    };
    let load = (eta * f64::from(util_permille) / 1000.0).min(f64::from(task.gpu_milli) / 1000.0);
    let per_device = cluster
        .node_types
        .iter()
        .zip(&cluster.power_models)
        .filter(|(node_type, _)| node_type.gpu_count >= task.gpu_count)
        .filter_map(|(node_type, model)| {
            let gpu_model = node_type.gpu_model?;
            let gpu = model.gpu?;
            task.gpu_models.allows(gpu_model).then(|| {
                f64::from(gpu.full_watts - gpu.idle_watts)
                    * clock_share(power, Some(gpu_model))
                    * load
            })
        })
        .fold(f64::INFINITY, f64::min);
    if !per_device.is_finite() {
        return 0.0;
    }
    // The replay rounds each device's dynamic power to the nearest milliwatt: half a
    // milliwatt less per device keeps the sum of tenants' terms below it.
    let per_device = ((per_device * 1000.0 - 0.5).floor() / 1000.0).max(0.0);
    f64::from(task.gpu_count) * per_device
}

/// The power of `placement` of `tasks` on the lowered `cluster`, empty nodes asleep at
/// `sleep` (per node type) when given: what column generation's bound must meet to prove
/// the placement optimal.
pub(super) fn placement_watts(
    cluster: &Cluster,
    sleep: Option<&[f64]>,
    tasks: &[Task],
    placement: &[Option<Placement>],
) -> f64 {
    let state = gapbench_ilp::eval::state_of(cluster, tasks, placement);
    (0..cluster.len())
        .map(|n| {
            let node = &state.nodes[n];
            match sleep {
                Some(sleep) if node.task_count == 0 => sleep[usize::from(cluster.nodes[n].type_id)],
                _ => cluster
                    .power_model(n as u32)
                    .node_power(node.cpu_left_milli, node.free_gpu_milli())
                    .total_watts() as f64,
            }
        })
        .sum()
}
