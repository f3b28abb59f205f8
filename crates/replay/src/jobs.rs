//! Every GPU task of a timed workload as a training job of `gapbench_model::training`: the
//! configurations (GPU count × clock) it may run in, with their speed and power. One table
//! per replay, the same for every policy and for the exact frontier of the same jobs, so all
//! of them see the same numbers (time-and-budgets §3.2–3.3).
//!
//! Model of a job [D]: class keyed by task name, iterations fixed by its trace duration at
//! full clock on its trace GPUs; a configuration runs `1/T_it` iterations per second. Its
//! power is the cluster's power model (time-and-budgets §1) applied to the training model's
//! iteration: its GPUs' idle power, plus its actual utilisation `u` (the derived attribute
//! the cluster's power model uses) of the dynamic power the training model gives a fully
//! busy GPU at that clock and GPU count, plus the host share — so a lone job on its GPUs
//! draws, on the GPU side, exactly what the cluster's model has its devices draw:
//! `W = (s·n·P_idle·T_it + u·D_it + s·H_it) / T_it`, with `D_it` the dynamic GPU energy of an
//! iteration, `H_it` its host energy and `s` its share of a GPU (`gpu_milli/1000` for a task
//! sharing one GPU, else 1). A task's work is its trace duration, so a configuration's speed
//! is its iteration rate over the trace configuration's. CPU-only and zero-length tasks are
//! not training jobs: they run as the trace ran them and draw no job power.

use gapbench_model::training::{Configuration, Fidelity, TrainingJob, WorkloadClass};
use gapbench_model::{Cluster, GpuModel, GpuModelSet};

use crate::attributes::TaskAttributes;
use crate::timed_workload::TimedWorkload;

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
pub struct TrainingTask {
    /// Index in the timed workload.
    pub task: u32,
    pub arrival_s: f64,
    pub training: TrainingJob,
    /// Milli-GPU per GPU in the trace (< 1000: shares one GPU).
    pub gpu_milli: u16,
    /// The configurations the replay's fidelity allows, by GPU count then clock.
    pub options: Vec<JobOption>,
    /// The trace's own configuration (trace GPUs, full clock).
    pub trace_option: usize,
    /// The configuration with the least energy per iteration.
    pub frugal_option: usize,
    /// From each option, its single-step upgrades.
    pub steps: Vec<Steps>,
}

/// The single steps up from one configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Steps {
    /// The next clock level at the same GPU count.
    pub faster_clock: Option<usize>,
    /// Twice the GPUs at the same clock.
    pub more_gpus: Option<usize>,
}

/// The single steps up from each of `options`.
fn steps(options: &[JobOption]) -> Vec<Steps> {
    options
        .iter()
        .map(|o| {
            let current = o.config;
            Steps {
                faster_clock: options
                    .iter()
                    .enumerate()
                    .filter(|(_, o)| {
                        o.config.gpus == current.gpus && o.config.frequency > current.frequency
                    })
                    .min_by(|a, b| a.1.config.frequency.total_cmp(&b.1.config.frequency))
                    .map(|(k, _)| k),
                more_gpus: options.iter().position(|o| {
                    u16::from(o.config.gpus) == 2 * u16::from(current.gpus)
                        && o.config.frequency == current.frequency
                }),
            }
        })
        .collect()
}

impl TrainingTask {
    /// How long the job runs at its trace configuration (its trace duration).
    pub fn trace_duration_s(&self) -> f64 {
        self.training.iterations / self.options[self.trace_option].iterations_per_s
    }

    /// Joules to finish `remaining` iterations at the frugal configuration.
    pub fn least_joules(&self, remaining: f64) -> f64 {
        remaining * self.options[self.frugal_option].joules_per_iteration()
    }

    /// Work done per second in `option`, in seconds of the trace configuration.
    pub fn speed(&self, option: usize) -> f64 {
        self.options[option].iterations_per_s / self.options[self.trace_option].iterations_per_s
    }

    /// Iterations left when `work_s` seconds of trace-configuration work are left.
    pub fn iterations(&self, work_s: f64) -> f64 {
        work_s * self.options[self.trace_option].iterations_per_s
    }
}

/// The options of `training` at `fidelity`, as held capacity and rates (one home for the
/// numbers the replay and the frontier share); `util_permille` is the task's actual
/// utilisation of each of its GPUs.
pub fn job_options(
    training: &TrainingJob,
    gpu_milli: u16,
    util_permille: u32,
    fidelity: Fidelity,
) -> Vec<JobOption> {
    let share = if training.shares_a_gpu {
        f64::from(gpu_milli) / 1000.0
    } else {
        1.0
    };
    let util = f64::from(util_permille.min(1000)) / 1000.0;
    training
        .configurations(fidelity)
        .into_iter()
        .map(|config| {
            let cost = training.class.iteration(&training.dvfs, config);
            let idle_j = f64::from(config.gpus) * training.dvfs.idle_watts * cost.seconds;
            let dynamic_j = cost.gpu_joules - idle_j;
            let joules = share * idle_j + util * dynamic_j + share * cost.host_joules;
            JobOption {
                config,
                gpu_milli: if training.shares_a_gpu {
                    u32::from(gpu_milli)
                } else {
                    1000 * u32::from(config.gpus)
                },
                iterations_per_s: 1.0 / cost.seconds,
                watts: joules / cost.seconds,
            }
        })
        .collect()
}

/// The GPU model whose profile a job uses: its first requested model with a profile, else
/// the cluster's most common one with a profile, else V100 (32 GB) [D]. Only built-in
/// models have a clock range, so only they are looked at.
fn job_model(cluster: &Cluster, requested: &GpuModelSet, default: GpuModel) -> GpuModel {
    GpuModel::BUILT_IN
        .into_iter()
        .find(|m| !requested.is_any() && requested.allows(*m) && cluster.dvfs_profile(*m).is_some())
        .unwrap_or(default)
}

/// The cluster's most common GPU model that has a DVFS profile.
pub fn common_gpu_model(cluster: &Cluster) -> GpuModel {
    let mut gpus = [0u64; GpuModel::BUILT_IN.len()];
    for node in 0..cluster.len() as u32 {
        let node_type = cluster.node_type(node);
        if let Some(count) = node_type.gpu_model.and_then(|m| gpus.get_mut(m.index())) {
            *count += u64::from(node_type.gpu_count);
        }
    }
    GpuModel::BUILT_IN
        .into_iter()
        .zip(gpus)
        .filter(|(m, _)| cluster.dvfs_profile(*m).is_some())
        .max_by_key(|(m, count)| (*count, std::cmp::Reverse(m.index())))
        .filter(|(_, count)| *count > 0)
        .map_or(GpuModel::V100M32, |(m, _)| m)
}

/// The training jobs of a workload, found by task.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobTable {
    /// In arrival order.
    jobs: Vec<TrainingTask>,
    /// Task index → index into `jobs`.
    by_task: Vec<Option<u32>>,
}

impl JobTable {
    /// The training jobs of `workload`'s GPU tasks of positive length, with the tasks'
    /// derived `attributes` (utilisation). `seed` keys the workload classes.
    pub fn new(
        cluster: &Cluster,
        workload: &TimedWorkload,
        attributes: &[TaskAttributes],
        seed: u64,
        fidelity: Fidelity,
    ) -> JobTable {
        let default = common_gpu_model(cluster);
        let mut table = JobTable {
            jobs: Vec::new(),
            by_task: vec![None; workload.tasks.len()],
        };
        for (i, t) in workload.tasks.iter().enumerate() {
            if t.task.gpu_count == 0 || t.task.gpu_milli == 0 || t.duration_s <= 0.0 {
                continue;
            }
            let model = job_model(cluster, &t.task.gpu_models, default);
            // V100M32, the last fallback, is built in: every table gives it power.
            let dvfs = cluster.dvfs_profile(model).expect("chosen with a profile");
            let class = WorkloadClass::of_task(&t.task.name, t.task.gpu_milli, seed);
            let training = TrainingJob::from_trace(
                class,
                dvfs,
                t.task.gpu_count,
                t.task.gpu_milli,
                t.duration_s,
            );
            let util = attributes[i].util_permille;
            let options = job_options(&training, t.task.gpu_milli, util, fidelity);
            let trace_option = options
                .iter()
                .position(|o| o.config.gpus == training.trace_gpus && o.config.frequency == 1.0)
                .expect("every fidelity allows the trace configuration (training.rs)");
            let frugal_option = (0..options.len())
                .min_by(|&a, &b| {
                    options[a]
                        .joules_per_iteration()
                        .total_cmp(&options[b].joules_per_iteration())
                })
                .expect("at least one option");
            table.by_task[i] = Some(table.jobs.len() as u32);
            table.jobs.push(TrainingTask {
                task: i as u32,
                arrival_s: t.arrival_s,
                training,
                gpu_milli: t.task.gpu_milli,
                steps: steps(&options),
                options,
                trace_option,
                frugal_option,
            });
        }
        table
    }

    /// The training job of `task`, if it is one.
    pub fn of(&self, task: u32) -> Option<&TrainingTask> {
        self.by_task
            .get(task as usize)
            .copied()
            .flatten()
            .map(|j| &self.jobs[j as usize])
    }

    /// Every training job, in arrival order.
    pub fn jobs(&self) -> &[TrainingTask] {
        &self.jobs
    }

    /// Keeps only the jobs `keep` accepts (the frontier's instances leave out jobs that fit
    /// no node).
    pub fn retain(&mut self, mut keep: impl FnMut(&TrainingTask) -> bool) {
        let by_task = &mut self.by_task;
        self.jobs.retain(|job| {
            let kept = keep(job);
            if !kept {
                by_task[job.task as usize] = None;
            }
            kept
        });
        for (j, job) in self.jobs.iter().enumerate() {
            by_task[job.task as usize] = Some(j as u32);
        }
    }
}

/// The default end of the budget period: the last arrival of a training job (the operator
/// knows when the period's submissions end, not what they will be) [D].
pub fn default_horizon_s(jobs: &[TrainingTask]) -> f64 {
    jobs.iter().map(|j| j.arrival_s).fold(0.0, f64::max)
}

/// When the last job would end if each ran at its trace configuration from its arrival
/// (the frontier's default horizon).
pub fn trace_end_s(jobs: &[TrainingTask]) -> f64 {
    jobs.iter()
        .map(|j| j.arrival_s + j.trace_duration_s())
        .fold(0.0, f64::max)
}

/// When the first job arrives (the clock origin of frontiers and timelines).
pub fn first_arrival_s(jobs: &[TrainingTask]) -> f64 {
    jobs.iter()
        .map(|j| j.arrival_s)
        .fold(f64::INFINITY, f64::min)
}
