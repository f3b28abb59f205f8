//! A task's life on a node: start, stop, re-clock, its speed and completion, and the energy
//! shares and job energy it is charged.

use gapbench_model::{NodeId, Placement, Task};

use super::Replay;
use crate::energy::node_power;
use crate::events::EventKind;
use crate::policy::{CapacityMode, TimePolicy};
use crate::results::Segment;

impl Replay<'_> {
    /// A task's share of its node, `cpu/C + gpu_milli/(1000·N)` for a node of `C` milli-CPU
    /// and `N` GPUs, as an integer numerator over the node's fixed denominator `C·1000·N`
    /// (so node sums are exact and an undo restores them); at least 1.
    pub(super) fn weight(&self, task: &Task, node: NodeId) -> u64 {
        let node_type = self.cluster.node_type(node);
        let cpu = u64::from(task.cpu_milli);
        let weight = if node_type.gpu_count > 0 {
            cpu * 1000 * u64::from(node_type.gpu_count)
                + u64::from(task.total_gpu_milli()) * u64::from(node_type.cpu_milli)
        } else {
            cpu
        };
        weight.max(1)
    }

    /// The task as it runs: its trace request, with the GPU count of its job configuration.
    pub(super) fn running_task(&self, task: u32) -> Task {
        let mut timed = self.workload.tasks[task as usize].task.clone();
        if let (Some(job), Some(option)) = (self.jobs.of(task), self.progress[task as usize].option)
        {
            timed.gpu_count = job.options[option].config.gpus;
        }
        timed
    }

    /// What `ClusterState` reserves for the task: everything, or CPU and memory only.
    pub(super) fn bound_task(&self, task: u32) -> Task {
        let mut bound = self.running_task(task);
        if self.runs[task as usize].capacity == CapacityMode::Oversubscribed {
            bound.gpu_count = 0;
            bound.gpu_milli = 0;
        }
        bound
    }

    /// Brings a node's energy-per-weight index to now, before the node changes.
    pub(super) fn touch_node(&mut self, node: NodeId) {
        let n = node as usize;
        let dt = self.now_s - self.node_index_time[n];
        if self.node_weight[n] > 0 && dt > 0.0 {
            let watts = self.node_power[n].total_mw() as f64 / 1000.0;
            self.node_energy_index[n] += watts * dt / self.node_weight[n] as f64;
        }
        self.node_index_time[n] = self.now_s;
    }

    fn node_updated(&mut self, node: NodeId, policy: &mut dyn TimePolicy) {
        let n = node as usize;
        self.tracker
            .node_changed(self.cluster, &self.state, &self.typical, node);
        let new = node_power(
            self.cluster,
            node,
            self.state.node(node),
            self.devices.node(node),
            &self.options.power,
            &self.options.colocation,
        );
        self.power.add(self.node_power[n], -1);
        self.power.add(new, 1);
        self.node_power[n] = new;
        policy.node_changed(&self.view(), node);
    }

    /// The clock (per mille of `f_max`), speed and job power (mW) of `task` in `option`.
    fn configuration(&self, task: u32, option: Option<usize>) -> (u16, f64, i64) {
        match (self.jobs.of(task), option) {
            (Some(job), Some(o)) => {
                let clock = (job.options[o].config.frequency * 1000.0).round() as u16;
                let mw = (job.options[o].watts * 1000.0).round() as i64;
                (clock, job.speed(o), mw)
            }
            _ => (1000, 1.0, 0),
        }
    }

    /// Charges the task's job energy and carbon since its last change and starts a new
    /// stretch at `mw`.
    pub(super) fn settle_job_energy(&mut self, task: u32, mw: i64) {
        let now = self.now_s;
        let run = &mut self.runs[task as usize];
        let watts = run.job_mw as f64 / 1000.0;
        if run.job_mw != 0 && now > run.job_since_s {
            run.job_energy_j += watts * (now - run.job_since_s);
            if let Some(series) = &self.options.carbon {
                run.job_carbon_g += series.grams(watts, run.job_since_s, now);
            }
        }
        self.job_power_mw += mw - run.job_mw;
        run.job_mw = mw;
        run.job_since_s = now;
    }

    /// Ends the current stretch of constant rate of a running task (history, progress).
    pub(super) fn close_segment(&mut self, task: u32) {
        let i = task as usize;
        let now = self.now_s;
        let progress = &mut self.progress[i];
        if progress.slowdown.is_nan() {
            return;
        }
        let remaining = progress.remaining_at(now);
        if self.options.record_segments && now > progress.since_s {
            let run = &mut self.runs[i];
            run.segments.push(Segment {
                from_s: progress.since_s,
                to_s: now,
                rate: progress.speed / progress.slowdown,
                job_watts: run.job_mw as f64 / 1000.0,
                option: progress.option,
            });
        }
        progress.remaining_work_s = remaining;
        progress.since_s = now;
    }

    pub(super) fn start(
        &mut self,
        task: u32,
        placement: Placement,
        capacity: CapacityMode,
        option: Option<usize>,
        policy: &mut dyn TimePolicy,
    ) {
        let i = task as usize;
        let option = self
            .jobs
            .of(task)
            .map(|job| option.unwrap_or(job.trace_option));
        self.runs[i].capacity = capacity;
        self.progress[i].option = option;
        let bound = self.bound_task(task);
        let node = placement.node;
        let running = self.running_task(task);
        let devices = if running.gpu_milli > 0 {
            usize::from(running.gpu_count)
        } else {
            0
        };
        assert_eq!(
            placement.devices.len(),
            devices,
            "policy placed {} on a GPU set of the wrong size",
            running.name
        );
        if capacity == CapacityMode::Reserved {
            let free = &self.state.node(node).free_gpu_milli_by_device;
            assert!(
                self.state.fits(self.cluster, node, &bound)
                    && placement.devices.iter().all(|d| free[d] >= bound.gpu_milli),
                "policy placed {} where it does not fit",
                bound.name
            );
        }
        let (clock, speed, mw) = self.configuration(task, option);
        self.touch_node(node);
        if self.state.node(node).task_count == 0 {
            self.active_nodes += 1;
        }
        self.state.bind(&bound, placement);
        self.running.insert(task);
        let attributes = self.attributes[i];
        let gpu_milli = u32::from(self.workload.tasks[i].task.gpu_milli);
        for device in placement.devices.iter() {
            self.devices.add(
                node,
                device,
                task,
                attributes.util_permille,
                attributes.gpu_memory_permille,
                gpu_milli,
                clock,
            );
        }
        let weight = self.weight(&self.running_task(task), node);
        let run = &mut self.runs[i];
        run.weight = weight;
        run.energy_index_at_start = self.node_energy_index[node as usize];
        run.starts += 1;
        run.first_start_s.get_or_insert(self.now_s);
        self.node_weight[node as usize] += weight;
        self.settle_job_energy(task, mw);
        let progress = &mut self.progress[i];
        progress.placement = Some(placement);
        progress.since_s = self.now_s;
        progress.speed = speed;
        progress.slowdown = f64::NAN; // forces a prediction in `retime`
        self.node_updated(node, policy);
        self.retime(placement, Some(task));
    }

    /// Takes a running task off its node, keeping its progress.
    pub(super) fn stop(&mut self, task: u32, policy: &mut dyn TimePolicy) {
        let i = task as usize;
        let placement = self.progress[i].placement.expect("only running tasks stop");
        let node = placement.node;
        self.touch_node(node);
        self.close_segment(task);
        self.settle_job_energy(task, 0);
        let bound = self.bound_task(task);
        let progress = &mut self.progress[i];
        progress.placement = None;
        progress.slowdown = 1.0;
        progress.speed = 1.0;
        progress.option = None;
        let run = &mut self.runs[i];
        run.generation += 1;
        run.energy_j +=
            run.weight as f64 * (self.node_energy_index[node as usize] - run.energy_index_at_start);
        let weight = run.weight;
        self.state.release(&bound, placement);
        self.released_nodes.push(node);
        self.running.remove(&task);
        if self.state.node(node).task_count == 0 {
            self.active_nodes -= 1;
        }
        self.node_weight[node as usize] -= weight;
        let attributes = self.attributes[i];
        let gpu_milli = u32::from(self.workload.tasks[i].task.gpu_milli);
        for device in placement.devices.iter() {
            self.devices.remove(
                node,
                device,
                task,
                attributes.util_permille,
                attributes.gpu_memory_permille,
                gpu_milli,
            );
        }
        self.node_updated(node, policy);
        self.retime(placement, None);
    }

    /// Runs a running training job in another configuration on the same GPUs (a re-clock).
    pub(super) fn reclock(&mut self, task: u32, option: usize, policy: &mut dyn TimePolicy) {
        let i = task as usize;
        if self.progress[i].option == Some(option) {
            return;
        }
        let placement = self.progress[i]
            .placement
            .expect("only running tasks re-clock");
        let job = self
            .jobs
            .of(task)
            .expect("only training jobs have configurations");
        assert_eq!(
            job.options[option].config.gpus,
            job.options[self.progress[i].option.expect("a running job's option")]
                .config
                .gpus,
            "a re-clock keeps the GPU count; a resize needs a new placement"
        );
        let (clock, speed, mw) = self.configuration(task, Some(option));
        self.touch_node(placement.node);
        self.close_segment(task);
        self.settle_job_energy(task, mw);
        for device in placement.devices.iter() {
            self.devices.set_clock(placement.node, device, task, clock);
        }
        self.runs[i].reconfigurations += 1;
        self.reconfigurations += 1;
        let progress = &mut self.progress[i];
        progress.option = Some(option);
        progress.speed = speed;
        progress.slowdown = f64::NAN;
        self.node_updated(placement.node, policy);
        self.retime(placement, Some(task));
    }

    /// Re-predicts the completion of every task sharing a device of `placement` (and of
    /// `changed`) whose rate changed.
    fn retime(&mut self, placement: Placement, changed: Option<u32>) {
        let mut affected: Vec<u32> = changed.into_iter().collect();
        for device in placement.devices.iter() {
            affected.extend(&self.devices.device(placement.node, device).tenants);
        }
        affected.sort_unstable();
        affected.dedup();
        let now = self.now_s;
        for task in affected {
            let i = task as usize;
            let Some(at) = self.progress[i].placement else {
                continue;
            };
            let slowdown = at
                .devices
                .iter()
                .map(|d| {
                    let load = self.devices.device(at.node, d);
                    self.options
                        .colocation
                        .slowdown(load.tenants.len(), load.util_permille)
                })
                .fold(1.0, f64::max);
            if self.progress[i].slowdown == slowdown {
                continue;
            }
            self.close_segment(task);
            let progress = &mut self.progress[i];
            progress.slowdown = slowdown;
            let end = now + progress.remaining_work_s * slowdown / progress.speed;
            let run = &mut self.runs[i];
            run.generation += 1;
            let generation = run.generation;
            self.push(end, EventKind::Completion { task, generation });
        }
    }
}
