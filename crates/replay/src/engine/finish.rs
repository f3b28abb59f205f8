//! The end of a replay: charge what running tasks drew so far and gather the result.

use super::Replay;
use crate::budget::BudgetOutcome;
use crate::energy::JOULES_PER_KWH;
use crate::results::{ReplayResult, TaskRecord};

impl Replay<'_> {
    pub(super) fn finish(mut self, policy: String) -> ReplayResult {
        let now = self.now_s;
        self.charge_running_tasks();
        let tasks = self.task_records();
        let budget = self.budget_outcome();
        ReplayResult {
            policy,
            queue: self.options.queue,
            dropped_pending: self.workload.dropped_pending,
            waiting_at_end: self.queue.tasks().iter().copied().collect(),
            tasks,
            timeline: self.timeline,
            ledger: self.ledger,
            carbon_series: self.options.carbon.as_ref().map(|s| s.name.clone()),
            start_s: self.first_arrival_s,
            end_s: now,
            active_node_seconds: self.active_node_seconds,
            undo_count: self.undo_count,
            reconfigurations: self.reconfigurations,
            rounds: self.rounds,
            budget,
            stopped_early: self
                .exhausted
                .as_ref()
                .map(|e| e.to_string())
                .or(self.stalled),
            violations: self.violations,
            final_state: self.state,
            final_devices: self.devices,
        }
    }

    /// Tasks still running at the end: charge their energy share and job energy so far.
    fn charge_running_tasks(&mut self) {
        for t in self.running.clone() {
            let p = self.progress[t as usize]
                .placement
                .expect("running tasks are placed");
            self.touch_node(p.node);
            let run = &mut self.runs[t as usize];
            run.energy_j += run.weight as f64
                * (self.node_energy_index[p.node as usize] - run.energy_index_at_start);
            run.energy_index_at_start = self.node_energy_index[p.node as usize];
            let mw = run.job_mw;
            self.close_segment(t);
            self.settle_job_energy(t, mw);
        }
    }

    /// One record per task of the workload, in its order.
    fn task_records(&self) -> Vec<TaskRecord> {
        self.workload
            .tasks
            .iter()
            .enumerate()
            .map(|(i, timed)| {
                let run = &self.runs[i];
                TaskRecord {
                    name: timed.task.name.clone(),
                    qos: timed.qos,
                    phase: timed.phase,
                    gpu_count: timed.task.gpu_count,
                    gpu_milli: timed.task.gpu_milli,
                    arrival_s: timed.arrival_s,
                    duration_s: timed.duration_s,
                    left_censored: timed.left_censored,
                    right_censored: timed.right_censored,
                    attributes: self.attributes[i],
                    start_s: run.first_start_s,
                    end_s: run.end_s,
                    failure: run.failure,
                    undos: run.undos,
                    reconfigurations: run.reconfigurations,
                    remaining_work_s: self.progress[i].remaining_at(self.now_s),
                    energy_kwh: run.energy_j / JOULES_PER_KWH,
                    job_energy_kwh: run.job_energy_j / JOULES_PER_KWH,
                    job_carbon_kg: run.job_carbon_g / 1000.0,
                    training_job: self.jobs.of(i as u32).is_some(),
                    segments: run.segments.clone(),
                }
            })
            .collect()
    }

    /// How the replay fared against its budget, if it had one.
    fn budget_outcome(&self) -> Option<BudgetOutcome> {
        self.options.budget.limit().map(|limit| {
            let (unit, to_unit) = self.options.budget.unit();
            BudgetOutcome {
                limit: limit * to_unit,
                spent: self.spend() * to_unit,
                unit,
                max_round_spend: self.max_round_spend.max(self.spend() - self.spend_at_round)
                    * to_unit,
                exhausted: self.exhausted.as_ref().map(|e| e.to_string()),
            }
        })
    }
}
