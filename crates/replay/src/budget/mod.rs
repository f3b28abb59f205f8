//! Budgeted replay: training jobs whose GPU count and clock a policy chooses every round,
//! under an energy or a carbon budget (time-and-budgets §3.4, §4.2). PowerFlow-style and
//! GreenFlow-style allocators and their baselines (full-clock FIFO, Zeus-like) run here.
//!
//! Why a loop of its own next to [`crate::engine`]: these policies re-plan the whole
//! cluster every round (admit, resize, re-clock, preempt), which the per-task
//! place-or-queue protocol of [`crate::TimePolicy`] cannot express. What they share: the
//! cluster, the timed workload, the training model of `gapbench_model::training` and the
//! carbon series of `gapbench_model::carbon`.
//!
//! Model of a job [D]: every GPU task of the workload is a [`TrainingJob`] (class keyed by
//! name, iterations fixed by its trace duration at full clock on its trace GPUs). A
//! configuration runs `1/T_it` iterations per second at `E_it/T_it` watts (GPU + host
//! share), as in the frontier (`gapbench_ilp::frontier`). A task sharing a GPU
//! (`gpu_milli < 1000`) holds `gpu_milli/1000` of one GPU and is charged that share of the
//! model's power [D]. CPU-only tasks are not training jobs and are left out.
//!
//! Simplifications, all [D]: the GPUs form one pool cut into buddy blocks (GPU-model
//! constraints of the trace are not enforced; a job's speed and power use the profile of
//! its requested model, or the cluster's most common GPU model); CPU and memory are not
//! reserved; reconfiguration and preemption are free (the frontier's fairness caveat, §6.2);
//! the budget counts job energy only (what running jobs draw), the quantity the frontier
//! bounds — idle power of unused GPUs is outside it.

pub mod buddy;
pub mod engine;
pub mod forecast;

use gapbench_model::training::{Configuration, DvfsProfile, Fidelity, TrainingJob, WorkloadClass};
use gapbench_model::{CarbonSeries, Cluster, GpuModel};

use crate::energy::JOULES_PER_KWH;
use crate::timed_workload::TimedWorkload;

pub use buddy::BuddyPool;
pub use engine::{run_budgeted, BudgetError, BudgetResult, JobOutcome};
pub use forecast::Forecast;

/// One way to run a job, with its rates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobOption {
    pub config: Configuration,
    /// GPU capacity held, in milli-GPU (`1000·n`, or the task's share of one GPU).
    pub gpu_milli: u32,
    pub iterations_per_s: f64,
    pub watts: f64,
}

impl JobOption {
    /// Joules per iteration.
    pub fn joules_per_iteration(&self) -> f64 {
        self.watts / self.iterations_per_s
    }
}

/// A GPU task of the workload as a training job.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetJob {
    /// Index in the timed workload.
    pub task: u32,
    pub arrival_s: f64,
    pub training: TrainingJob,
    /// Milli-GPU per GPU in the trace (< 1000: shares one GPU).
    pub gpu_milli: u16,
    /// The configurations `fidelity` allows, by GPU count then clock.
    pub options: Vec<JobOption>,
    /// The trace's own configuration (trace GPUs, full clock).
    pub trace_option: usize,
    /// The configuration with the least energy per iteration.
    pub frugal_option: usize,
}

impl BudgetJob {
    /// How long the job runs at its trace configuration (its trace duration).
    pub fn trace_duration_s(&self) -> f64 {
        self.training.iterations / self.options[self.trace_option].iterations_per_s
    }

    /// Joules to finish `remaining` iterations at the frugal configuration.
    pub fn least_joules(&self, remaining: f64) -> f64 {
        remaining * self.options[self.frugal_option].joules_per_iteration()
    }
}

/// The options of `training` at `fidelity`, as held capacity and rates (one home for the
/// numbers the replay and the frontier share).
pub fn job_options(training: &TrainingJob, gpu_milli: u16, fidelity: Fidelity) -> Vec<JobOption> {
    training
        .configurations(fidelity)
        .into_iter()
        .map(|config| {
            let cost = training.class.iteration(&training.dvfs, config);
            let share = if training.shares_a_gpu {
                f64::from(gpu_milli) / 1000.0
            } else {
                1.0
            };
            JobOption {
                config,
                gpu_milli: if training.shares_a_gpu {
                    u32::from(gpu_milli)
                } else {
                    1000 * u32::from(config.gpus)
                },
                iterations_per_s: 1.0 / cost.seconds,
                watts: share * cost.watts(),
            }
        })
        .collect()
}

/// The GPU model whose profile a job uses: its first requested model with a profile, else
/// the cluster's most common one with a profile, else V100 (32 GB) [D].
fn job_model(requested: &gapbench_model::GpuModelSet, default: GpuModel) -> GpuModel {
    GpuModel::ALL
        .into_iter()
        .find(|m| !requested.is_any() && requested.allows(*m) && DvfsProfile::of(*m).is_some())
        .unwrap_or(default)
}

/// The cluster's most common GPU model that has a DVFS profile.
pub fn common_gpu_model(cluster: &Cluster) -> GpuModel {
    let mut gpus = [0u64; GpuModel::ALL.len()];
    for node in 0..cluster.len() as u32 {
        let node_type = cluster.node_type(node);
        if let Some(model) = node_type.gpu_model {
            let k = GpuModel::ALL
                .iter()
                .position(|m| *m == model)
                .expect("listed");
            gpus[k] += u64::from(node_type.gpu_count);
        }
    }
    GpuModel::ALL
        .into_iter()
        .zip(gpus)
        .filter(|(m, _)| DvfsProfile::of(*m).is_some())
        .max_by_key(|(m, count)| (*count, std::cmp::Reverse(*m as u8)))
        .filter(|(_, count)| *count > 0)
        .map_or(GpuModel::V100M32, |(m, _)| m)
}

/// The training jobs of `workload`'s GPU tasks (zero-length tasks are left out), in arrival
/// order. `seed` keys the workload classes.
pub fn budget_jobs(
    cluster: &Cluster,
    workload: &TimedWorkload,
    seed: u64,
    fidelity: Fidelity,
) -> Vec<BudgetJob> {
    let default = common_gpu_model(cluster);
    workload
        .tasks
        .iter()
        .enumerate()
        .filter(|(_, t)| t.task.gpu_count > 0 && t.duration_s > 0.0)
        .map(|(i, t)| {
            let model = job_model(&t.task.gpu_models, default);
            let dvfs = DvfsProfile::of(model).expect("chosen with a profile");
            let class = WorkloadClass::of_task(&t.task.name, t.task.gpu_milli, seed);
            let training = TrainingJob::from_trace(
                class,
                dvfs,
                t.task.gpu_count,
                t.task.gpu_milli,
                t.duration_s,
            );
            let options = job_options(&training, t.task.gpu_milli, fidelity);
            let trace_option = options
                .iter()
                .position(|o| o.config.gpus == training.trace_gpus && o.config.frequency == 1.0)
                .expect("the trace configuration is always allowed");
            let frugal_option = (0..options.len())
                .min_by(|&a, &b| {
                    options[a]
                        .joules_per_iteration()
                        .total_cmp(&options[b].joules_per_iteration())
                })
                .expect("at least one option");
            BudgetJob {
                task: i as u32,
                arrival_s: t.arrival_s,
                training,
                gpu_milli: t.task.gpu_milli,
                options,
                trace_option,
                frugal_option,
            }
        })
        .collect()
}

/// What the budget limits.
#[derive(Debug, Clone, PartialEq)]
pub enum Budget {
    /// No limit (baselines).
    Unlimited,
    /// Job energy over the replay, kWh.
    EnergyKwh(f64),
    /// Carbon of job energy over the replay, kgCO2e, with the grid series.
    CarbonKg(f64),
}

impl Budget {
    /// The limit in the unit the engine accounts in: joules or grams.
    pub fn limit(&self) -> Option<f64> {
        match self {
            Budget::Unlimited => None,
            Budget::EnergyKwh(kwh) => Some(kwh * JOULES_PER_KWH),
            Budget::CarbonKg(kg) => Some(kg * 1000.0),
        }
    }
}

/// Settings of a budgeted replay.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetOptions {
    pub budget: Budget,
    /// The grid's carbon intensity; required for a carbon budget, optional otherwise
    /// (carbon is then accounted too).
    pub carbon: Option<CarbonSeries>,
    pub fidelity: Fidelity,
    /// Round period Δ [D: 300 s, time-and-budgets §3.4]; rounds also run on arrivals and
    /// completions.
    pub round_s: f64,
    /// The end of the budget period's arrivals: the allocators expect jobs to keep arriving
    /// until then (their reserve for jobs to come) [D: the last arrival, see
    /// [`default_horizon_s`]].
    pub horizon_end_s: f64,
    /// Seeds workload classes and forecast noise.
    pub seed: u64,
}

/// The default end of the budget period: the last arrival (the operator knows when the
/// period's submissions end, not what they will be) [D].
pub fn default_horizon_s(jobs: &[BudgetJob]) -> f64 {
    jobs.iter().map(|j| j.arrival_s).fold(0.0, f64::max)
}

/// When the last job would end if each ran at its trace configuration from its arrival
/// (the frontier's default horizon).
pub fn trace_end_s(jobs: &[BudgetJob]) -> f64 {
    jobs.iter()
        .map(|j| j.arrival_s + j.trace_duration_s())
        .fold(0.0, f64::max)
}

/// When the first job arrives (the clock origin of frontiers and timelines).
pub fn first_arrival_s(jobs: &[BudgetJob]) -> f64 {
    jobs.iter()
        .map(|j| j.arrival_s)
        .fold(f64::INFINITY, f64::min)
}

/// One active (arrived, unfinished) job at a round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ActiveJob {
    /// Index into [`Round::jobs`].
    pub job: u32,
    pub remaining_iterations: f64,
    /// Its configuration since the last round (`None`: waiting).
    pub current: Option<usize>,
    /// When it first ran.
    pub started_s: Option<f64>,
}

/// What an allocator sees at a round.
pub struct Round<'a> {
    pub now_s: f64,
    pub jobs: &'a [BudgetJob],
    /// Active jobs, in arrival order.
    pub active: &'a [ActiveJob],
    /// An empty pool of the cluster's GPUs (clone it to plan).
    pub pool: &'a BuddyPool,
    pub budget: &'a Budget,
    /// Spent so far, in the budget's unit (joules or grams; joules when unlimited).
    pub spent: f64,
    pub carbon: Option<&'a CarbonSeries>,
    pub round_s: f64,
    pub horizon_end_s: f64,
    /// Least energy (J) the active jobs need to finish, at their frugal configurations.
    pub least_remaining_j: f64,
    /// Least energy (J) of every job arrived so far, at arrival.
    pub least_arrived_j: f64,
    /// When the first job arrived.
    pub first_arrival_s: f64,
}

/// One round's decision: the configuration (an index into the job's options) of every
/// active job, in the order of [`Round::active`] (`None` = it waits), and the pool after
/// taking their GPUs from `round.pool`. Every pool state the pool's own takes reach is a
/// real assignment of blocks and leaves, so the pool is the proof that the plan places;
/// the engine checks that it holds exactly the plan's GPUs.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub options: Vec<Option<usize>>,
    pub pool: BuddyPool,
}

/// A budgeted policy: one file each under `policies/`.
pub trait Allocator {
    fn name(&self) -> String;
    /// The plan of this round, taken from `round.pool`.
    fn allocate(&mut self, round: &Round<'_>) -> Plan;
}
