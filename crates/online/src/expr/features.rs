//! What a score expression can look at: one number per (feasible node, task), each
//! computed exactly as the native policy that uses it does.
//!
//! "After" means after the placement best-fit GPU selection would make: the task's CPU
//! request taken from the node, and its GPUs from the devices with the least free milli that
//! fit (lowest index on a tie) — the devices GpuPacking examines and a sharing task gets.

use gapbench_model::{GpuModel, NodeId, NodeState, Task};

use crate::policies::dot_product::{MAX_NODE_CPU_MILLI, MAX_NODE_GPU_MILLI};
use crate::policy::{fitting_devices, Hypothetical, ScoreContext};

macro_rules! features {
    ($($variant:ident $name:literal $memo:literal $meaning:literal;)+) => {
        /// One per-(node, task) quantity.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Feature {
            $($variant,)+
        }

        /// Every feature, in documentation order.
        pub const FEATURES: &[FeatureInfo] = &[
            $(FeatureInfo {
                feature: Feature::$variant,
                name: $name,
                memoizable: $memo,
                meaning: $meaning,
            },)+
        ];
    };
}

features! {
    TaskCpuMilli "task_cpu_milli" true "the task's CPU request as scoring sees it (0 counts as 100, as Kubernetes does)";
    TaskMemMib "task_mem_mib" false "the task's memory request";
    TaskGpus "task_gpus" true "GPUs the task asks for (0: CPU-only)";
    TaskGpuMilli "task_gpu_milli" true "milli-GPU it asks for on each of them";
    TaskGpuTotalMilli "task_gpu_total_milli" true "task_gpus × task_gpu_milli";
    NodeCpuMilli "node_cpu_milli" true "the node's CPU capacity";
    NodeMemMib "node_mem_mib" true "the node's memory capacity";
    NodeGpus "node_gpus" true "the node's GPU devices";
    GpuModelCode "gpu_model" true "the node's GPU model: compare with the constants `T4`, `A10`, `P100`, `V100M16`, `V100M32`, `A100`, `G1`, `G2`, `G3` (`CPU_ONLY` = 0)";
    CpuFreeMilli "cpu_free_milli" true "free CPU before placement";
    MemFreeMib "mem_free_mib" false "free memory before placement";
    GpuFreeMilli "gpu_free_milli" true "free milli-GPU over all devices before placement";
    IdleGpus "idle_gpus" true "fully free devices before placement";
    FitGpus "fit_gpus" true "devices with at least task_gpu_milli free";
    CpuFreeAfterMilli "cpu_free_after_milli" true "cpu_free_milli − task_cpu_milli";
    MemFreeAfterMib "mem_free_after_mib" false "mem_free_mib − task_mem_mib";
    GpuFreeAfterMilli "gpu_free_after_milli" true "gpu_free_milli − task_gpu_total_milli";
    IdleGpusAfter "idle_gpus_after" true "fully free devices after placement";
    TakenIdleGpus "taken_idle_gpus" true "fully free devices among those the task takes";
    TakenFreePct "taken_free_pct" true "Σ over the devices it takes of their free share before placement, in whole percent each (truncated, as GpuPacking)";
    FragDeltaMilli "frag_delta_milli" true "FGD: growth of the node's fragment amount F(n') − F(n), milli-GPU; for a sharing task the least over the devices it fits on";
    PowerDeltaW "power_delta_w" true "PWR: growth of node power P(n') − P(n), whole watts (≥ 0); for a sharing task the least over the devices it fits on";
    DotProduct "dot_product" true "DotProduct's n·q: cpu_free/128000 · task_cpu/128000 + gpu_free/8000 · task_gpu_total/8000";
}

/// A feature's name, whether memoisation may reuse it (it depends only on the node's type,
/// free CPU and multiset of free GPU milli, and the task's CPU and GPU request) and what it
/// means.
#[derive(Debug, Clone, Copy)]
pub struct FeatureInfo {
    pub feature: Feature,
    pub name: &'static str,
    pub memoizable: bool,
    pub meaning: &'static str,
}

impl Feature {
    pub fn info(self) -> &'static FeatureInfo {
        &FEATURES[self as usize]
    }

    pub fn by_name(name: &str) -> Option<Feature> {
        FEATURES.iter().find(|f| f.name == name).map(|f| f.feature)
    }
}

/// Named constants an expression may use: the GPU models' codes of `gpu_model`, id + 1
/// (1–9 for the built-in models; a model from a GPU-model file takes the next codes in the
/// order the file first names models).
pub fn constant(name: &str) -> Option<f64> {
    if name == "CPU_ONLY" {
        return Some(0.0);
    }
    GpuModel::parse(name).map(|m| gpu_model_code(Some(m)))
}

fn gpu_model_code(model: Option<GpuModel>) -> f64 {
    model.map_or(0.0, |m| (m.index() + 1) as f64)
}

/// Which of the costlier features (a sort of the devices, FGD's fragment, PWR's power) an
/// expression reads: [`Env::new`] computes just those, once per (node, task).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Needs {
    taken: bool,
    frag: bool,
    power: bool,
}

impl Needs {
    pub(crate) fn of(features: &[Feature]) -> Self {
        let has = |wanted: &[Feature]| features.iter().any(|f| wanted.contains(f));
        Needs {
            taken: has(&[
                Feature::IdleGpusAfter,
                Feature::TakenIdleGpus,
                Feature::TakenFreePct,
            ]),
            frag: has(&[Feature::FragDeltaMilli]),
            power: has(&[Feature::PowerDeltaW]),
        }
    }
}

/// What the task takes on a node (see the module doc).
#[derive(Debug, Clone, Copy, Default)]
struct Taken {
    idle: u32,
    free_pct: u32,
}

fn taken(state: &NodeState, task: &Task) -> Taken {
    let mut sorted = state.free_gpu_milli_by_device;
    let sorted = &mut sorted[..usize::from(state.gpu_count)];
    sorted.sort_unstable();
    let (mut idle, mut free_pct) = (0, 0);
    for &left in sorted
        .iter()
        .filter(|&&left| left >= task.gpu_milli)
        .take(usize::from(task.gpu_count))
    {
        idle += u32::from(left == 1000);
        free_pct += u32::from(left) * 100 / 1000;
    }
    Taken { idle, free_pct }
}

/// The costly features of one (node, task), computed only when the expression reads them.
#[derive(Debug, Clone, Copy, Default)]
struct Costly {
    taken: Taken,
    frag_delta_milli: f64,
    power_delta_w: i64,
}

impl Costly {
    fn new(ctx: &ScoreContext<'_>, node: NodeId, task: &Task, needs: Needs) -> Self {
        let state = ctx.state.node(node);
        Costly {
            taken: if needs.taken {
                taken(state, task)
            } else {
                Taken::default()
            },
            frag_delta_milli: if needs.frag {
                frag_delta_milli(ctx, node, task)
            } else {
                0.0
            },
            power_delta_w: if needs.power {
                power_delta_w(ctx, node, task)
            } else {
                0
            },
        }
    }
}

/// One (node, task) as an expression sees it: the cheap features are read from here when
/// the expression needs them, the costly ones are computed up front when it reads them.
pub(crate) struct Env<'a> {
    ctx: &'a ScoreContext<'a>,
    node: NodeId,
    state: &'a NodeState,
    task: &'a Task,
    costly: Costly,
}

impl<'a> Env<'a> {
    #[inline]
    pub(crate) fn new(
        ctx: &'a ScoreContext<'a>,
        node: NodeId,
        task: &'a Task,
        needs: Needs,
    ) -> Self {
        Env {
            ctx,
            node,
            state: ctx.state.node(node),
            task,
            costly: if needs == Needs::default() {
                Costly::default()
            } else {
                Costly::new(ctx, node, task, needs)
            },
        }
    }
}

/// Reads one feature.
pub(crate) type Reader = Box<dyn Fn(&Env<'_>) -> f64 + Send + Sync>;

/// The reader of `feature`: a function of its own, so evaluating an expression does not
/// dispatch on which feature it reads.
pub(crate) fn reader(feature: Feature) -> Reader {
    match feature {
        Feature::TaskCpuMilli => Box::new(|e| f64::from(e.task.scoring_cpu_milli())),
        Feature::TaskMemMib => Box::new(|e| e.task.memory_mib as f64),
        Feature::TaskGpus => Box::new(|e| f64::from(e.task.gpu_count)),
        Feature::TaskGpuMilli => Box::new(|e| f64::from(e.task.gpu_milli)),
        Feature::TaskGpuTotalMilli => Box::new(|e| f64::from(e.task.total_gpu_milli())),
        Feature::NodeCpuMilli => Box::new(|e| f64::from(e.ctx.cluster.node_type(e.node).cpu_milli)),
        Feature::NodeMemMib => Box::new(|e| e.ctx.cluster.node_type(e.node).memory_mib as f64),
        Feature::NodeGpus => Box::new(|e| f64::from(e.state.gpu_count)),
        Feature::GpuModelCode => {
            Box::new(|e| gpu_model_code(e.ctx.cluster.node_type(e.node).gpu_model))
        }
        Feature::CpuFreeMilli => Box::new(|e| f64::from(e.state.cpu_left_milli)),
        Feature::MemFreeMib => Box::new(|e| e.state.memory_left_mib as f64),
        Feature::GpuFreeMilli => Box::new(|e| f64::from(e.state.total_free_gpu_milli())),
        Feature::IdleGpus => Box::new(|e| f64::from(e.state.fully_free_gpus())),
        Feature::FitGpus => Box::new(|e| fitting_devices(e.state, e.task).count() as f64),
        Feature::CpuFreeAfterMilli => {
            Box::new(|e| f64::from(e.state.cpu_left_milli) - f64::from(e.task.scoring_cpu_milli()))
        }
        Feature::MemFreeAfterMib => {
            Box::new(|e| e.state.memory_left_mib as f64 - e.task.memory_mib as f64)
        }
        Feature::GpuFreeAfterMilli => Box::new(|e| {
            f64::from(e.state.total_free_gpu_milli()) - f64::from(e.task.total_gpu_milli())
        }),
        Feature::IdleGpusAfter => {
            Box::new(|e| f64::from(e.state.fully_free_gpus() - e.costly.taken.idle))
        }
        Feature::TakenIdleGpus => Box::new(|e| f64::from(e.costly.taken.idle)),
        Feature::TakenFreePct => Box::new(|e| f64::from(e.costly.taken.free_pct)),
        Feature::FragDeltaMilli => Box::new(|e| e.costly.frag_delta_milli),
        Feature::PowerDeltaW => Box::new(|e| e.costly.power_delta_w as f64),
        Feature::DotProduct => Box::new(|e| {
            let mut dot = 0.0;
            dot += f64::from(e.state.cpu_left_milli) / MAX_NODE_CPU_MILLI
                * (f64::from(e.task.scoring_cpu_milli()) / MAX_NODE_CPU_MILLI);
            dot += f64::from(e.state.total_free_gpu_milli()) / MAX_NODE_GPU_MILLI
                * (f64::from(e.task.total_gpu_milli()) / MAX_NODE_GPU_MILLI);
            dot
        }),
    }
}

/// The least of `delta` over the hypothetical placements FGD and PWR consider: every
/// fitting device for a sharing task, the one non-sharing placement otherwise.
fn least_over_placements<T: PartialOrd + Copy>(
    ctx: &ScoreContext<'_>,
    node: NodeId,
    task: &Task,
    delta: impl Fn(&Hypothetical) -> T,
) -> Option<T> {
    let state = ctx.state.node(node);
    if !task.is_share() {
        return Some(delta(&Hypothetical::non_share(state, task)));
    }
    let mut least: Option<T> = None;
    for device in fitting_devices(state, task) {
        let value = delta(&Hypothetical::share_on(state, task, device));
        if least.is_none_or(|l| value < l) {
            least = Some(value);
        }
    }
    least
}

fn frag_delta_milli(ctx: &ScoreContext<'_>, node: NodeId, task: &Task) -> f64 {
    let state = ctx.state.node(node);
    let model = ctx.cluster.node_type(node).gpu_model;
    let before =
        ctx.typical
            .node_fragment_milli(model, state.cpu_left_milli, state.free_gpu_milli());
    least_over_placements(ctx, node, task, |after| {
        ctx.typical
            .node_fragment_milli(model, after.cpu_left_milli, after.free_gpu_milli())
            - before
    })
    .unwrap_or(0.0)
}

fn power_delta_w(ctx: &ScoreContext<'_>, node: NodeId, task: &Task) -> i64 {
    let model = ctx.cluster.power_model(node);
    let state = ctx.state.node(node);
    let before = model
        .node_power(state.cpu_left_milli, state.free_gpu_milli())
        .total_watts();
    least_over_placements(ctx, node, task, |after| {
        model
            .node_power(after.cpu_left_milli, after.free_gpu_milli())
            .total_watts()
            - before
    })
    .unwrap_or(0)
}
