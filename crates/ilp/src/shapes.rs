//! Task shapes: tasks equal in every resource and GPU-model constraint are interchangeable
//! for power, allocation and fragmentation, so the formulations count tasks per shape
//! instead of deciding each task (≈150 shapes for ≈10 k tasks on the openb traces).

use std::collections::BTreeMap;

use gapbench_model::state::MAX_TASKS_PER_NODE;
use gapbench_model::{GpuModelSet, NodeType, Task, MILLI_GPU_PER_GPU};

/// How a shape uses GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeKind {
    CpuOnly,
    /// One device, part of it (gpu_milli < 1000).
    Share,
    /// `gpu_count` whole devices.
    Whole,
}

/// A group of interchangeable tasks.
#[derive(Debug, Clone)]
pub struct Shape {
    pub cpu_milli: u32,
    pub memory_mib: u64,
    pub gpu_count: u8,
    pub gpu_milli: u16,
    pub gpu_models: GpuModelSet,
    /// Indices of its tasks (into the snapshot's task list), ascending.
    pub tasks: Vec<usize>,
}

impl Shape {
    pub fn kind(&self) -> ShapeKind {
        if self.gpu_count == 0 {
            ShapeKind::CpuOnly
        } else if u32::from(self.gpu_milli) < MILLI_GPU_PER_GPU {
            ShapeKind::Share
        } else {
            ShapeKind::Whole
        }
    }

    pub fn count(&self) -> usize {
        self.tasks.len()
    }

    /// GPU milli of one task: gpu_count × gpu_milli.
    pub fn total_gpu_milli(&self) -> u32 {
        u32::from(self.gpu_count) * u32::from(self.gpu_milli)
    }

    /// The most tasks of this shape one empty node of `node_type` can hold (0 = none):
    /// each resource bounds it separately (the feasibility filter of spec §2).
    pub fn max_per_node(&self, node_type: &NodeType) -> u32 {
        let mut most = MAX_TASKS_PER_NODE.min(self.count() as u32);
        if let Some(fit) = node_type.cpu_milli.checked_div(self.cpu_milli) {
            most = most.min(fit);
        }
        if let Some(fit) = node_type.memory_mib.checked_div(self.memory_mib) {
            most = most.min(fit.min(u64::from(u32::MAX)) as u32);
        }
        if self.gpu_count > 0 {
            let allowed = node_type
                .gpu_model
                .is_some_and(|model| self.gpu_models.allows(model));
            if !allowed {
                return 0;
            }
            let devices = u32::from(node_type.gpu_count);
            most = most.min(match self.kind() {
                ShapeKind::Share => devices * (MILLI_GPU_PER_GPU / u32::from(self.gpu_milli)),
                _ => devices / u32::from(self.gpu_count),
            });
        }
        most
    }

    /// The symmetry-breaking key coefficient of one task, times 128: GPU milli weighted
    /// against CPU so that 128 vCPU weigh as much as one GPU. Dyadic, so sums are exact.
    pub fn order_key_x128(&self) -> u64 {
        128 * u64::from(self.total_gpu_milli()) + u64::from(self.cpu_milli)
    }
}

/// The shapes of a task set, in a fixed order (by resources), plus the distinct GPU
/// fractions of its sharing shapes ("milli classes": devices are packed per class).
#[derive(Debug, Clone)]
pub struct Shapes {
    pub shapes: Vec<Shape>,
    /// Distinct gpu_milli of sharing shapes, descending.
    pub share_milli: Vec<u16>,
}

impl Shapes {
    /// Groups `indices` of `tasks`. Errors on a task the model cannot express: several
    /// partial GPUs (the reference does not support them either).
    pub fn group(tasks: &[Task], indices: impl IntoIterator<Item = usize>) -> Result<Self, String> {
        type Key = (u32, u64, u8, u16, u64);
        let mut groups: BTreeMap<Key, Shape> = BTreeMap::new();
        for index in indices {
            let task = tasks.get(index).ok_or_else(|| {
                format!("task index {index} out of range ({} tasks)", tasks.len())
            })?;
            if task.gpu_count > 1 && u32::from(task.gpu_milli) < MILLI_GPU_PER_GPU {
                return Err(format!(
                    "task {} asks for {} partial GPUs of {} milli each, which no placement rule supports",
                    task.name, task.gpu_count, task.gpu_milli
                ));
            }
            let models = if task.gpu_count == 0 {
                GpuModelSet::any()
            } else {
                task.gpu_models.clone()
            };
            let key = (
                task.cpu_milli,
                task.memory_mib,
                task.gpu_count,
                task.gpu_milli,
                models.mask(),
            );
            groups
                .entry(key)
                .or_insert_with(|| Shape {
                    cpu_milli: task.cpu_milli,
                    memory_mib: task.memory_mib,
                    gpu_count: task.gpu_count,
                    gpu_milli: task.gpu_milli,
                    gpu_models: models,
                    tasks: Vec::new(),
                })
                .tasks
                .push(index);
        }
        let shapes: Vec<Shape> = groups.into_values().collect();
        let mut share_milli: Vec<u16> = shapes
            .iter()
            .filter(|s| s.kind() == ShapeKind::Share)
            .map(|s| s.gpu_milli)
            .collect();
        share_milli.sort_unstable_by(|a, b| b.cmp(a));
        share_milli.dedup();
        Ok(Shapes {
            shapes,
            share_milli,
        })
    }

    /// The milli class of a sharing shape.
    pub fn share_class(&self, shape: usize) -> Option<usize> {
        let s = &self.shapes[shape];
        (s.kind() == ShapeKind::Share)
            .then(|| self.share_milli.iter().position(|&m| m == s.gpu_milli))
            .flatten()
    }

    /// For each task index, its shape (None for tasks not in the set).
    pub fn shape_of_task(&self, task_count: usize) -> Vec<Option<usize>> {
        let mut of = vec![None; task_count];
        for (s, shape) in self.shapes.iter().enumerate() {
            for &t in &shape.tasks {
                of[t] = Some(s);
            }
        }
        of
    }
}
