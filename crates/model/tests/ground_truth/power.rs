//! The node power model (reference-semantics §6) on hand-computed figures: sockets are idle or
//! fully active, any allocation puts a GPU at full power.

use gapbench_model::power::{
    gpu_power_profile, CpuSocketProfile, GpuPowerProfile, REFERENCE_CPU_SOCKET,
};
use gapbench_model::{CpuPowerProfile, GpuModel, NodePower, PowerModel};

const V100: GpuPowerProfile = GpuPowerProfile {
    idle_watts: 30,
    full_watts: 300,
};

/// 96 vCPU = 48 physical cores = 3 sockets of 16 (15 W idle, 120 W active).
fn g2_like() -> PowerModel {
    PowerModel::new(REFERENCE_CPU_SOCKET, Some(V100), 96_000)
}

#[test]
fn cores_round_up_to_whole_cores_and_sockets() {
    let model = g2_like();
    assert_eq!((model.real_cores, model.sockets), (48, 3));
    // 95 vCPU still need 48 cores; 97 vCPU need 49 cores, a fourth socket.
    let odd = PowerModel::new(REFERENCE_CPU_SOCKET, None, 95_000);
    assert_eq!((odd.real_cores, odd.sockets), (48, 3));
    let more = PowerModel::new(REFERENCE_CPU_SOCKET, None, 97_000);
    assert_eq!((more.real_cores, more.sockets), (49, 4));
}

#[test]
fn cpu_power_counts_a_socket_active_once_any_of_its_cores_works() {
    let model = g2_like();
    // All free: 3 idle sockets.
    assert_eq!(model.cpu_watts(96_000), 3 * 15);
    // 2 vCPU taken: one core works, one socket active.
    assert_eq!(model.cpu_watts(94_000), 2 * 15 + 120);
    // 2.001 vCPU taken: 46 whole cores free, 2 work, still one socket.
    assert_eq!(model.cpu_watts(93_999), 2 * 15 + 120);
    // 16 cores work: exactly one socket; 17: two.
    assert_eq!(model.cpu_watts(64_000), 2 * 15 + 120);
    assert_eq!(model.cpu_watts(62_000), 15 + 2 * 120);
    // Nothing free: all three active.
    assert_eq!(model.cpu_watts(0), 3 * 120);
}

#[test]
fn gpu_power_is_idle_for_free_devices_and_full_for_the_rest() {
    let model = g2_like();
    assert_eq!(model.gpu_watts(8, 8), 8 * 30);
    assert_eq!(model.gpu_watts(3, 8), 3 * 30 + 5 * 300);
    assert_eq!(model.gpu_watts(0, 8), 8 * 300);
    let cpu_only = PowerModel::new(REFERENCE_CPU_SOCKET, None, 96_000);
    assert_eq!(cpu_only.gpu_watts(0, 0), 0);
}

#[test]
fn a_node_state_draws_cpu_plus_gpu_power() {
    let model = g2_like();
    // 10 milli-GPU on device 1 is enough to run it at full power.
    let power = model.node_power(94_000, &[1000, 990, 0, 1000]);
    assert_eq!(
        power,
        NodePower {
            cpu_watts: 2 * 15 + 120,
            gpu_watts: 2 * 30 + 2 * 300,
        }
    );
    assert_eq!(power.total_watts(), 150 + 660);
}

#[test]
fn node_powers_add_and_subtract_per_component() {
    let mut sum = NodePower {
        cpu_watts: 100,
        gpu_watts: 7,
    };
    sum += NodePower {
        cpu_watts: 20,
        gpu_watts: 3,
    };
    assert_eq!(
        sum,
        NodePower {
            cpu_watts: 120,
            gpu_watts: 10
        }
    );
    sum -= NodePower {
        cpu_watts: 50,
        gpu_watts: 4,
    };
    assert_eq!(
        sum,
        NodePower {
            cpu_watts: 70,
            gpu_watts: 6
        }
    );
}

#[test]
fn every_gpu_model_has_its_idle_and_full_watts_except_g1() {
    let expected = [
        (GpuModel::T4, Some((10, 70))),
        (GpuModel::A10, Some((30, 150))),
        (GpuModel::G2, Some((30, 150))),
        (GpuModel::P100, Some((25, 250))),
        (GpuModel::V100M16, Some((30, 300))),
        (GpuModel::V100M32, Some((30, 300))),
        (GpuModel::A100, Some((50, 400))),
        (GpuModel::G3, Some((50, 400))),
        (GpuModel::G1, None),
    ];
    for (model, watts) in expected {
        let got = gpu_power_profile(model).map(|p| (p.idle_watts, p.full_watts));
        assert_eq!(got, watts, "{model}");
    }
}

#[test]
fn cpu_sockets_are_the_reference_xeon_unless_guessed_from_the_gpu() {
    let socket = |idle_watts, full_watts, cores_per_socket| CpuSocketProfile {
        idle_watts,
        full_watts,
        cores_per_socket,
    };
    let mut models: Vec<Option<GpuModel>> = GpuModel::BUILT_IN.into_iter().map(Some).collect();
    models.push(None);
    for &model in &models {
        assert_eq!(
            CpuPowerProfile::Reference.socket_for(model),
            socket(15, 120, 16)
        );
        let guessed = match model {
            None | Some(GpuModel::P100) | Some(GpuModel::G1) => socket(15, 120, 16),
            Some(GpuModel::T4) => socket(20, 165, 24),
            Some(GpuModel::V100M16) | Some(GpuModel::V100M32) => socket(20, 185, 16),
            Some(_) => socket(20, 270, 32),
        };
        assert_eq!(
            CpuPowerProfile::ByGpuModel.socket_for(model),
            guessed,
            "{model:?}"
        );
    }
    assert_eq!(CpuPowerProfile::default(), CpuPowerProfile::Reference);
}
