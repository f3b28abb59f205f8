//! The node power model of the reference simulator (reference-semantics §6).
//!
//! Node power = CPU power + GPU power, in whole watts:
//! - GPU: `idle·(devices fully free) + full·(other devices)`; any allocation, even 10
//!   milli-GPU, puts a device at full power.
//! - CPU: two vCPUs make one physical core; sockets of `cores_per_socket` cores are either
//!   idle or (with at least one working core) fully active:
//!   `real = ceil(cpu_cap/2000)`, `idle = floor(cpu_left/2000)`, `sockets = ceil(real/c)`,
//!   `active = ceil((real − idle)/c)`, `P = idle_w·(sockets − active) + full_w·active`.

use crate::gpu::GpuModel;

/// Idle and full power of one GPU device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuPowerProfile {
    pub idle_watts: u32,
    pub full_watts: u32,
}

/// Idle and full power of one CPU socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuSocketProfile {
    pub idle_watts: u32,
    pub full_watts: u32,
    pub cores_per_socket: u32,
}

/// The reference's profile for every node: it reads the CPU model from a node label that
/// no openb node carries, so all nodes get the Xeon E5-2682 v4 numbers.
pub const REFERENCE_CPU_SOCKET: CpuSocketProfile = CpuSocketProfile {
    idle_watts: 15,
    full_watts: 120,
    cores_per_socket: 16,
};

/// Which CPU profile nodes get.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CpuPowerProfile {
    /// Every node uses the Xeon E5-2682 v4 profile, as the reference does.
    #[default]
    Reference,
    /// The CPU model guessed from the GPU model (the reference's unused notebook mapping,
    /// reference-semantics §1.1). An option for sensitivity studies, never the default.
    ByGpuModel,
}

impl CpuPowerProfile {
    pub fn socket_for(self, gpu_model: Option<GpuModel>) -> CpuSocketProfile {
        let xeon_e5_2682_v4 = REFERENCE_CPU_SOCKET;
        let xeon_8163 = CpuSocketProfile {
            idle_watts: 20,
            full_watts: 165,
            cores_per_socket: 24,
        };
        let xeon_6326 = CpuSocketProfile {
            idle_watts: 20,
            full_watts: 185,
            cores_per_socket: 16,
        };
        let xeon_8369b = CpuSocketProfile {
            idle_watts: 20,
            full_watts: 270,
            cores_per_socket: 32,
        };
        match self {
            CpuPowerProfile::Reference => xeon_e5_2682_v4,
            CpuPowerProfile::ByGpuModel => match gpu_model {
                Some(GpuModel::T4) => xeon_8163,
                Some(GpuModel::V100M16) | Some(GpuModel::V100M32) => xeon_6326,
                Some(GpuModel::A10) | Some(GpuModel::G2) | Some(GpuModel::A100)
                | Some(GpuModel::G3) => xeon_8369b,
                // CPU-only nodes, P100, G1 and models from a GPU-model file.
                _ => xeon_e5_2682_v4,
            },
        }
    }
}

/// The reference's GPU power per built-in model; `None` for G1, which the reference has no
/// entry for (its Go code would crash on it; no openb GPU node uses G1), and for models from
/// a GPU-model file (their power is in the cluster's [`crate::gpu_models::GpuModelTable`]).
pub fn gpu_power_profile(model: GpuModel) -> Option<GpuPowerProfile> {
    let (idle_watts, full_watts) = match model {
        GpuModel::T4 => (10, 70),
        GpuModel::A10 | GpuModel::G2 => (30, 150),
        GpuModel::P100 => (25, 250),
        GpuModel::V100M16 | GpuModel::V100M32 => (30, 300),
        GpuModel::A100 | GpuModel::G3 => (50, 400),
        _ => return None,
    };
    Some(GpuPowerProfile {
        idle_watts,
        full_watts,
    })
}

/// The power model of one node type, precomputed so evaluating a state is a few integer ops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PowerModel {
    pub socket: CpuSocketProfile,
    pub gpu: Option<GpuPowerProfile>,
    /// Physical cores: `ceil(cpu_milli / 2000)`.
    pub real_cores: u32,
    /// `ceil(real_cores / cores_per_socket)`.
    pub sockets: u32,
}

/// CPU and GPU power of a node (or a cluster), in watts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NodePower {
    pub cpu_watts: i64,
    pub gpu_watts: i64,
}

impl NodePower {
    pub fn total_watts(self) -> i64 {
        self.cpu_watts + self.gpu_watts
    }
}

impl std::ops::AddAssign for NodePower {
    fn add_assign(&mut self, other: Self) {
        self.cpu_watts += other.cpu_watts;
        self.gpu_watts += other.gpu_watts;
    }
}

impl std::ops::SubAssign for NodePower {
    fn sub_assign(&mut self, other: Self) {
        self.cpu_watts -= other.cpu_watts;
        self.gpu_watts -= other.gpu_watts;
    }
}

impl PowerModel {
    pub fn new(socket: CpuSocketProfile, gpu: Option<GpuPowerProfile>, cpu_milli: u32) -> Self {
        let real_cores = cpu_milli.div_ceil(2000);
        let sockets = real_cores.div_ceil(socket.cores_per_socket);
        Self {
            socket,
            gpu,
            real_cores,
            sockets,
        }
    }

    /// Sockets at work with `cpu_left_milli` free: `ceil((real − idle)/c)`.
    pub fn active_sockets(&self, cpu_left_milli: u32) -> u32 {
        let idle_cores = cpu_left_milli / 2000;
        let work_cores = self.real_cores.saturating_sub(idle_cores);
        work_cores.div_ceil(self.socket.cores_per_socket)
    }

    /// CPU power with `cpu_left_milli` free.
    pub fn cpu_watts(&self, cpu_left_milli: u32) -> i64 {
        let active = self.active_sockets(cpu_left_milli);
        let idle_sockets = self.sockets.saturating_sub(active);
        i64::from(self.socket.idle_watts * idle_sockets + self.socket.full_watts * active)
    }

    /// GPU power with `fully_free` of `gpu_count` devices entirely free.
    pub fn gpu_watts(&self, fully_free: u32, gpu_count: u32) -> i64 {
        match self.gpu {
            None => 0,
            Some(gpu) => {
                let working = gpu_count - fully_free;
                i64::from(gpu.idle_watts * fully_free + gpu.full_watts * working)
            }
        }
    }

    /// Power of a node state given its free CPU and per-device free milli-GPU.
    pub fn node_power(&self, cpu_left_milli: u32, free_gpu_milli: &[u16]) -> NodePower {
        let fully_free = free_gpu_milli.iter().filter(|&&left| left == 1000).count() as u32;
        NodePower {
            cpu_watts: self.cpu_watts(cpu_left_milli),
            gpu_watts: self.gpu_watts(fully_free, free_gpu_milli.len() as u32),
        }
    }
}
