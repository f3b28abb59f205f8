//! Workloads with time: when each task arrives and how long it runs alone.
//!
//! The openb pod lists carry `creation_time`, `scheduled_time`, `deletion_time` and
//! `pod_phase` (seconds since the trace start). Time mode reads them with one rule set for
//! every policy (spec time-and-budgets §2.6):
//!
//! - arrival = `creation_time`; solo duration = `deletion_time − scheduled_time` (the time
//!   the pod really ran; waiting before `scheduled_time` is the original cluster's, not ours);
//! - `Pending` pods never ran (they have no `scheduled_time`): they are **dropped** and
//!   counted in [`TimedWorkload::dropped_pending`];
//! - `Failed` pods are **kept** with their run time: they did occupy resources;
//! - pods still running at the trace end (`deletion_time` = the file's latest deletion time)
//!   are kept with their censored length and flagged `censored`;
//! - a non-pending pod without `creation_time`, `scheduled_time` or `deletion_time`, times
//!   out of order, or an unknown `pod_phase`/`qos` is an error naming file, line and column.

use std::path::Path;

/// The loading rules in one paragraph, for `--help` texts and manifests.
pub const TIME_RULES: &str = "Arrival = creation_time; solo duration = deletion_time − \
scheduled_time. Pending pods (never scheduled) are dropped and counted; Failed pods are kept \
with their run time; pods still running at the trace end (deletion_time = the latest \
deletion_time of the file) are kept with their censored length and flagged. A non-pending \
pod with a missing or out-of-order time is an error naming file, line and column. \
--arrival-scale X divides every gap to the first arrival by X; durations are unchanged.";

use gapbench_model::workload::{parse_tasks_csv, TaskList};
use gapbench_model::{Adjustment, InputError, InputRules, Task};

/// The pod's QoS class, which decides its deadline class (spec §2.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Qos {
    LatencySensitive,
    Guaranteed,
    Burstable,
    BestEffort,
}

impl Qos {
    pub fn parse(text: &str) -> Option<Qos> {
        Some(match text {
            "LS" => Qos::LatencySensitive,
            "Guaranteed" => Qos::Guaranteed,
            "Burstable" => Qos::Burstable,
            "BE" => Qos::BestEffort,
            _ => return None,
        })
    }

    /// The spelling of the openb traces.
    pub fn name(self) -> &'static str {
        match self {
            Qos::LatencySensitive => "LS",
            Qos::Guaranteed => "Guaranteed",
            Qos::Burstable => "Burstable",
            Qos::BestEffort => "BE",
        }
    }
}

/// The pod's final phase in the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PodPhase {
    Running,
    Succeeded,
    Failed,
    Pending,
}

impl PodPhase {
    pub fn parse(text: &str) -> Option<PodPhase> {
        Some(match text {
            "Running" => PodPhase::Running,
            "Succeeded" => PodPhase::Succeeded,
            "Failed" => PodPhase::Failed,
            "Pending" => PodPhase::Pending,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            PodPhase::Running => "Running",
            PodPhase::Succeeded => "Succeeded",
            PodPhase::Failed => "Failed",
            PodPhase::Pending => "Pending",
        }
    }
}

/// One task with its times.
#[derive(Debug, Clone, PartialEq)]
pub struct TimedTask {
    pub task: Task,
    pub qos: Qos,
    pub phase: PodPhase,
    /// Seconds since the trace start (after any arrival scaling).
    pub arrival_s: f64,
    /// Run time alone at full speed, in seconds: the task's work.
    pub duration_s: f64,
    /// Still running at the trace end: the duration is a lower bound.
    pub censored: bool,
    /// Measured GPU behaviour, when the workload knows it (profiled jobs); otherwise it is
    /// derived (see `attributes`).
    pub profile: Option<GpuProfile>,
}

/// A job's measured GPU behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuProfile {
    /// Actual utilisation of each of its GPUs, per mille.
    pub util_permille: u32,
    /// Peak memory on each of its GPUs, per mille of the device's memory.
    pub gpu_memory_permille: u32,
}

/// Tasks sorted by arrival (ties keep file order), with what the loading rules removed.
#[derive(Debug, Clone, PartialEq)]
pub struct TimedWorkload {
    pub tasks: Vec<TimedTask>,
    /// `Pending` pods dropped because they never ran.
    pub dropped_pending: usize,
    /// The latest `deletion_time` of the source, in seconds.
    pub trace_end_s: f64,
    /// Values the task loader converted as the reference simulator does (see
    /// `gapbench_model::input_rules`); empty for the shipped traces and generated workloads.
    pub adjustments: Vec<Adjustment>,
}

/// The time columns time mode needs besides the resource columns.
const TIME_COLUMNS: [&str; 5] = [
    "creation_time",
    "scheduled_time",
    "deletion_time",
    "pod_phase",
    "qos",
];

impl TimedWorkload {
    /// Loads an openb pod list with its times.
    pub fn load_csv(path: &Path, rules: InputRules) -> Result<TimedWorkload, InputError> {
        let text =
            std::fs::read(path).map_err(|e| InputError::new(path, format!("cannot read: {e}")))?;
        Self::parse_csv(path, &text, rules)
    }

    /// Parses an openb pod list with its times (rules in the module documentation).
    pub fn parse_csv(
        file: &Path,
        text: &[u8],
        rules: InputRules,
    ) -> Result<TimedWorkload, InputError> {
        let TaskList { tasks, adjustments } = parse_tasks_csv(file, text, rules)?;
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .trim(csv::Trim::All)
            .from_reader(text);
        let headers: Vec<String> = reader
            .headers()
            .map_err(|e| InputError::new(file, format!("malformed CSV: {e}")))?
            .iter()
            .map(str::to_string)
            .collect();
        let mut columns = [0usize; 5];
        for (slot, name) in columns.iter_mut().zip(TIME_COLUMNS) {
            *slot = headers.iter().position(|h| h == name).ok_or_else(|| {
                InputError::new(
                    file,
                    format!(
                        "missing column `{name}`: time mode needs {} (this task list has no times)",
                        TIME_COLUMNS.join(", ")
                    ),
                )
                .at_line(1)
            })?;
        }
        let [created, scheduled, deleted, phase, qos] = columns;
        let mut raw = Vec::with_capacity(tasks.len());
        let mut records = reader.records();
        let mut trace_end: u64 = 0;
        for task in tasks {
            // parse_tasks_csv skips all-empty rows; so do we, to stay row-aligned.
            let record = loop {
                let record = records
                    .next()
                    .expect("parse_tasks_csv saw this row")
                    .map_err(|e| InputError::new(file, format!("malformed CSV: {e}")))?;
                if !record.iter().all(str::is_empty) {
                    break record;
                }
            };
            let line = record.position().map_or(0, |p| p.line());
            let field = |column: usize| record.get(column).unwrap_or("");
            let error = |column: usize, message: String| {
                InputError::new(file, message)
                    .at_line(line)
                    .in_column(headers[column].clone())
            };
            let time = |column: usize| -> Result<Option<u64>, InputError> {
                let text = field(column);
                if text.is_empty() {
                    return Ok(None);
                }
                text.parse::<u64>().map(Some).map_err(|_| {
                    error(
                        column,
                        format!("expected whole seconds ≥ 0, found `{text}`"),
                    )
                })
            };
            let pod_phase = PodPhase::parse(field(phase)).ok_or_else(|| {
                error(
                    phase,
                    format!(
                        "unknown pod phase `{}` (known: Running, Succeeded, Failed, Pending)",
                        field(phase)
                    ),
                )
            })?;
            let task_qos = Qos::parse(field(qos)).ok_or_else(|| {
                error(
                    qos,
                    format!(
                        "unknown qos `{}` (known: LS, Guaranteed, Burstable, BE)",
                        field(qos)
                    ),
                )
            })?;
            let deletion = time(deleted)?;
            if let Some(end) = deletion {
                trace_end = trace_end.max(end);
            }
            if pod_phase == PodPhase::Pending {
                raw.push(None);
                continue;
            }
            let need = |value: Option<u64>, column: usize| {
                value.ok_or_else(|| {
                    error(
                        column,
                        format!("a {} pod needs a `{}`", pod_phase.name(), headers[column]),
                    )
                })
            };
            let creation = need(time(created)?, created)?;
            let start = need(time(scheduled)?, scheduled)?;
            let end = need(deletion, deleted)?;
            if start < creation {
                return Err(error(
                    scheduled,
                    format!("scheduled_time {start} is before creation_time {creation}"),
                ));
            }
            if end < start {
                return Err(error(
                    deleted,
                    format!("deletion_time {end} is before scheduled_time {start}"),
                ));
            }
            raw.push(Some((
                task,
                task_qos,
                pod_phase,
                creation,
                end - start,
                end,
            )));
        }
        let dropped_pending = raw.iter().filter(|r| r.is_none()).count();
        let mut timed: Vec<TimedTask> = raw
            .into_iter()
            .flatten()
            .map(|(task, qos, phase, creation, duration, end)| TimedTask {
                task,
                qos,
                phase,
                arrival_s: creation as f64,
                duration_s: duration as f64,
                censored: end == trace_end,
                profile: None,
            })
            .collect();
        if timed.is_empty() {
            return Err(InputError::new(
                file,
                "no task ever ran: every row is a Pending pod",
            ));
        }
        timed.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
        Ok(TimedWorkload {
            tasks: timed,
            dropped_pending,
            trace_end_s: trace_end as f64,
            adjustments,
        })
    }

    /// Compresses inter-arrival times by `scale` (> 0): arrival `a` becomes
    /// `a₀ + (a − a₀) / scale`, where `a₀` is the first arrival. Durations are unchanged, so
    /// `scale = 2` offers the same work in half the time (a more loaded cluster).
    pub fn with_arrival_scale(mut self, scale: f64) -> Result<TimedWorkload, String> {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(format!(
                "arrival scale must be a positive number, got {scale}"
            ));
        }
        let first = self.tasks.first().map_or(0.0, |t| t.arrival_s);
        for task in &mut self.tasks {
            task.arrival_s = first + (task.arrival_s - first) / scale;
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";

    fn parse(rows: &str) -> Result<TimedWorkload, InputError> {
        TimedWorkload::parse_csv(
            Path::new("pods.csv"),
            format!("{HEADER}{rows}").as_bytes(),
            InputRules::Strict,
        )
    }

    #[test]
    fn applies_the_phase_rules_and_flags_censored_pods() {
        let w = parse(
            "a,1000,10,1,500,,BE,Running,100,400,150\n\
             b,1000,10,0,0,,LS,Pending,50,90,\n\
             c,1000,10,1,1000,,LS,Failed,10,60,20\n\
             d,1000,10,1,1000,,Burstable,Running,200,900,200\n",
        )
        .unwrap();
        assert_eq!(w.dropped_pending, 1);
        assert_eq!(w.trace_end_s, 900.0);
        let names: Vec<&str> = w.tasks.iter().map(|t| t.task.name.as_str()).collect();
        assert_eq!(names, ["c", "a", "d"], "sorted by arrival");
        assert_eq!(w.tasks[1].duration_s, 250.0);
        assert_eq!(w.tasks[0].phase, PodPhase::Failed);
        assert!(w.tasks[2].censored && !w.tasks[0].censored && !w.tasks[1].censored);
        let scaled = w.with_arrival_scale(2.0).unwrap();
        let arrivals: Vec<f64> = scaled.tasks.iter().map(|t| t.arrival_s).collect();
        assert_eq!(arrivals, [10.0, 55.0, 105.0]);
    }

    #[test]
    fn bad_times_name_file_line_and_column() {
        let e = parse("a,1000,10,1,500,,BE,Running,100,400,\n").unwrap_err();
        assert_eq!(
            (e.line, e.column.as_deref()),
            (Some(2), Some("scheduled_time"))
        );
        let e = parse("a,1000,10,1,500,,BE,Running,100,400,150\nb,1,1,0,0,,BE,Running,x,5,5\n")
            .unwrap_err();
        assert_eq!(
            (e.line, e.column.as_deref()),
            (Some(3), Some("creation_time"))
        );
        assert!(e.to_string().contains("pods.csv:3"), "{e}");
        let e = parse("a,1000,10,1,500,,BE,Running,100,120,150\n").unwrap_err();
        assert_eq!(e.column.as_deref(), Some("deletion_time"));
        let e = parse("a,1000,10,1,500,,XX,Running,100,400,150\n").unwrap_err();
        assert_eq!(e.column.as_deref(), Some("qos"));
        let e = TimedWorkload::parse_csv(
            Path::new("multigpu.csv"),
            b"name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1,1,0,0\n",
            InputRules::Strict,
        )
        .unwrap_err();
        assert!(e.message.contains("creation_time"), "{e}");
        assert!(parse("a,1,1,0,0,,BE,Running,1,2,1\n")
            .unwrap()
            .with_arrival_scale(0.0)
            .is_err());
    }
}
