//! Tasks (pods): what each one requests.

use crate::gpu::GpuModelSet;

/// One task of a workload, as the reference simulator sees it (reference-semantics §1.2–1.3).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Task {
    pub name: String,
    /// The CPU request, as used by the feasibility filter.
    pub cpu_milli: u32,
    pub memory_mib: u64,
    /// Number of GPUs; 0 for CPU-only tasks.
    pub gpu_count: u8,
    /// Milli-GPU requested on *each* of its GPUs (1..=1000); 0 for CPU-only tasks.
    pub gpu_milli: u16,
    /// GPU models the task may run on (empty = any).
    pub gpu_models: GpuModelSet,
    /// Seconds since the trace start, for time-based simulation; `None` when absent.
    pub creation_time_s: Option<u64>,
    pub deletion_time_s: Option<u64>,
}

impl Task {
    /// A task with no time information and no GPU-model constraint.
    pub fn new(
        name: impl Into<String>,
        cpu_milli: u32,
        memory_mib: u64,
        gpu_count: u8,
        gpu_milli: u16,
    ) -> Self {
        let (gpu_count, gpu_milli) = if gpu_count == 0 || gpu_milli == 0 {
            (0, 0)
        } else {
            (gpu_count, gpu_milli)
        };
        Task {
            name: name.into(),
            cpu_milli,
            memory_mib,
            gpu_count,
            gpu_milli,
            gpu_models: GpuModelSet::any(),
            creation_time_s: None,
            deletion_time_s: None,
        }
    }

    /// The CPU request as scoring plugins see it: Kubernetes replaces a zero request by
    /// 100 milli ("non-zero" default). Never triggers on the shipped traces.
    pub fn scoring_cpu_milli(&self) -> u32 {
        if self.cpu_milli == 0 {
            100
        } else {
            self.cpu_milli
        }
    }

    /// Total milli-GPU over all its GPUs.
    pub fn total_gpu_milli(&self) -> u32 {
        u32::from(self.gpu_count) * u32::from(self.gpu_milli)
    }

    pub fn is_cpu_only(&self) -> bool {
        self.gpu_count == 0
    }

    /// A sharing task: one GPU, part of it.
    pub fn is_share(&self) -> bool {
        self.gpu_count == 1 && self.gpu_milli < 1000
    }

    /// GpuClustering's affinity class: 0 for sharing tasks, k for whole k-GPU tasks.
    pub fn affinity(&self) -> Option<usize> {
        match self.gpu_count {
            0 => None,
            _ if self.is_share() => Some(0),
            count => Some(usize::from(count)),
        }
    }
}
