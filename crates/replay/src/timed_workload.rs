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
//! - an empty `creation_time` (newer Alibaba traces' mark of a pod that already existed when
//!   the trace began) is **left-censored**: the pod arrives at the trace start (the earliest
//!   time of the file) and, when its `scheduled_time` is empty too, starts there;
//! - an empty `deletion_time`, or one equal to the file's latest time, is **right-censored**:
//!   the pod still ran at the trace end and keeps the length it had by then;
//! - under [`InputRules::Strict`] empty creation and deletion times are errors; a missing
//!   `scheduled_time` of a pod with a creation time, times out of order, or an unknown
//!   `pod_phase`/`qos` is an error under every rule set, naming file, line and column.

use std::path::Path;

/// The loading rules in one paragraph, for `--help` texts and manifests.
pub const TIME_RULES: &str = "Arrival = creation_time; solo duration = deletion_time − \
scheduled_time. Pending pods (never scheduled) are dropped and counted. Failed pods are kept \
with their run time. An empty creation_time (a pod already there when the trace began) is \
left-censored: the pod arrives at the trace start (the file's earliest time), and starts there \
when its scheduled_time is empty too. An empty deletion_time, or one equal to the file's \
latest time, is right-censored: the pod still ran at the trace end and keeps the length it had \
by then. Both are flagged in tasks.csv and counted in summary.json and manifest.json; \
--input-rules strict refuses empty creation and deletion times instead. Any other missing or \
out-of-order time is an error naming file, line and column. --arrival-scale X divides every \
gap to the first arrival by X; durations are unchanged.";

use gapbench_model::error::LineCounter;
use gapbench_model::workload::{parse_tasks_csv, TaskList};
use gapbench_model::{Adjustment, InputError, InputRules, Task};
use serde::Serialize;

use crate::error::ReplayError;

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
    /// Already there when the trace began (empty `creation_time`): it arrives at the trace
    /// start, and its duration counts from there when it has no `scheduled_time`.
    pub left_censored: bool,
    /// Still running at the trace end: the duration is a lower bound.
    pub right_censored: bool,
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
    /// The latest time of the source (its end), in seconds.
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
        let mut rows = Vec::with_capacity(tasks.len());
        let mut records = reader.records();
        let mut lines = LineCounter::new(text);
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
            let line = record.position().map_or(0, |p| lines.line_of(p.byte()));
            rows.push(RawRow::read(
                file, &headers, &record, line, task, created, scheduled, deleted, phase, qos,
            )?);
        }
        // The trace's start and end: its earliest and latest times of any kind.
        let times = || {
            rows.iter()
                .flat_map(|r| [r.creation, r.scheduled, r.deletion])
                .flatten()
        };
        let trace_start = times().min().unwrap_or(0);
        let trace_end = times().max().unwrap_or(0);
        let mut dropped_pending = 0;
        let mut timed: Vec<TimedTask> = Vec::with_capacity(rows.len());
        for row in rows {
            if row.phase == PodPhase::Pending {
                dropped_pending += 1;
                continue;
            }
            timed.push(row.timed(file, &headers, rules, trace_start, trace_end)?);
        }
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

    /// What the loading rules kept, dropped and flagged, for summaries and manifests.
    pub fn census(&self) -> WorkloadCensus {
        WorkloadCensus {
            tasks: self.tasks.len(),
            dropped_pending: self.dropped_pending,
            left_censored: self.tasks.iter().filter(|t| t.left_censored).count(),
            right_censored: self.tasks.iter().filter(|t| t.right_censored).count(),
        }
    }

    /// Compresses inter-arrival times by `scale` (> 0): arrival `a` becomes
    /// `a₀ + (a − a₀) / scale`, where `a₀` is the first arrival. Durations are unchanged, so
    /// `scale = 2` offers the same work in half the time (a more loaded cluster).
    pub fn with_arrival_scale(mut self, scale: f64) -> Result<TimedWorkload, ReplayError> {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(ReplayError::ArrivalScale(scale));
        }
        let first = self.tasks.first().map_or(0.0, |t| t.arrival_s);
        for task in &mut self.tasks {
            task.arrival_s = first + (task.arrival_s - first) / scale;
        }
        Ok(self)
    }
}

/// What the loading rules kept, dropped and flagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WorkloadCensus {
    /// Tasks replayed.
    pub tasks: usize,
    /// `Pending` pods dropped (they never ran).
    pub dropped_pending: usize,
    /// Tasks already there when the trace began (empty `creation_time`).
    pub left_censored: usize,
    /// Tasks still running at the trace end.
    pub right_censored: usize,
}

/// One row's time fields as read, before the trace's start and end are known.
struct RawRow {
    line: u64,
    task: Task,
    qos: Qos,
    phase: PodPhase,
    creation: Option<u64>,
    scheduled: Option<u64>,
    deletion: Option<u64>,
}

impl RawRow {
    #[allow(clippy::too_many_arguments)]
    fn read(
        file: &Path,
        headers: &[String],
        record: &csv::StringRecord,
        line: u64,
        task: Task,
        created: usize,
        scheduled: usize,
        deleted: usize,
        phase: usize,
        qos: usize,
    ) -> Result<RawRow, InputError> {
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
        let phase = PodPhase::parse(field(phase)).ok_or_else(|| {
            error(
                phase,
                format!(
                    "unknown pod phase `{}` (known: Running, Succeeded, Failed, Pending)",
                    field(phase)
                ),
            )
        })?;
        let qos = Qos::parse(field(qos)).ok_or_else(|| {
            error(
                qos,
                format!(
                    "unknown qos `{}` (known: LS, Guaranteed, Burstable, BE)",
                    field(qos)
                ),
            )
        })?;
        Ok(RawRow {
            line,
            task,
            qos,
            phase,
            creation: time(created)?,
            scheduled: time(scheduled)?,
            deletion: time(deleted)?,
        })
    }

    /// The task with its times by the module's rules.
    fn timed(
        self,
        file: &Path,
        headers: &[String],
        rules: InputRules,
        trace_start: u64,
        trace_end: u64,
    ) -> Result<TimedTask, InputError> {
        let column = |name: &str| headers.iter().position(|h| h == name).expect("checked");
        let error = |name: &str, message: String| {
            InputError::new(file, message)
                .at_line(self.line)
                .in_column(headers[column(name)].clone())
        };
        let missing = |name: &str, censoring: &str| {
            error(
                name,
                format!("a {} pod needs a `{name}` ({censoring})", self.phase.name()),
            )
        };
        let strict = rules == InputRules::Strict;
        let creation =
            match (self.creation, strict) {
                (Some(c), _) => c,
                (None, false) => trace_start,
                (None, true) => return Err(missing(
                    "creation_time",
                    "--input-rules reference reads an empty one as present from the trace start",
                )),
            };
        let start = match (self.scheduled, self.creation) {
            (Some(s), _) => s,
            (None, None) if !strict => trace_start,
            _ => {
                return Err(error(
                    "scheduled_time",
                    format!("a {} pod needs a `scheduled_time`", self.phase.name()),
                ))
            }
        };
        let end =
            match (self.deletion, strict) {
                (Some(d), _) => d,
                (None, false) => trace_end,
                (None, true) => return Err(missing(
                    "deletion_time",
                    "--input-rules reference reads an empty one as still running at the trace end",
                )),
            };
        if start < creation {
            return Err(error(
                "scheduled_time",
                format!("scheduled_time {start} is before creation_time {creation}"),
            ));
        }
        if end < start {
            return Err(error(
                "deletion_time",
                format!("deletion_time {end} is before scheduled_time {start}"),
            ));
        }
        Ok(TimedTask {
            task: self.task,
            qos: self.qos,
            phase: self.phase,
            arrival_s: creation as f64,
            duration_s: (end - start) as f64,
            left_censored: self.creation.is_none(),
            right_censored: end == trace_end,
            profile: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";

    fn parse(rows: &str) -> Result<TimedWorkload, InputError> {
        parse_with(rows, InputRules::Strict)
    }

    fn parse_with(rows: &str, rules: InputRules) -> Result<TimedWorkload, InputError> {
        TimedWorkload::parse_csv(
            Path::new("pods.csv"),
            format!("{HEADER}{rows}").as_bytes(),
            rules,
        )
    }

    /// A newer trace's conventions: a pod there before the trace began has no creation (nor
    /// scheduled) time, one still running at its end no deletion time.
    const CENSORED_ROWS: &str = "a,1000,10,1,500,,BE,Running,,400,\n\
         b,1000,10,0,0,,LS,Running,20,,30\n\
         c,1000,10,1,1000,,LS,Succeeded,50,300,60\n\
         d,1000,10,1,1000,,LS,Running,,,\n\
         e,1000,10,1,1000,,LS,Pending,80,,\n";

    #[test]
    fn empty_creation_and_deletion_times_are_censored_at_the_trace_ends() {
        let w = parse_with(CENSORED_ROWS, InputRules::Reference).unwrap();
        let by_name = |name: &str| w.tasks.iter().find(|t| t.task.name == name).unwrap();
        // The trace runs from its earliest time (20) to its latest (400).
        let (a, b, c, d) = (by_name("a"), by_name("b"), by_name("c"), by_name("d"));
        assert_eq!((a.arrival_s, a.duration_s), (20.0, 380.0));
        assert!(
            a.left_censored && a.right_censored,
            "a ends at the trace end"
        );
        assert_eq!((b.arrival_s, b.duration_s), (20.0, 370.0));
        assert!(!b.left_censored && b.right_censored);
        assert_eq!((c.arrival_s, c.duration_s), (50.0, 240.0));
        assert!(!c.left_censored && !c.right_censored);
        assert_eq!((d.arrival_s, d.duration_s), (20.0, 380.0));
        assert_eq!(
            w.census(),
            WorkloadCensus {
                tasks: 4,
                dropped_pending: 1,
                left_censored: 2,
                right_censored: 3,
            }
        );
        // Strict rules still refuse them, naming the row and column.
        let e = parse(CENSORED_ROWS).unwrap_err();
        assert_eq!(
            (e.line, e.column.as_deref()),
            (Some(2), Some("creation_time"))
        );
        assert!(e.message.contains("--input-rules reference"), "{e}");
        let e = parse("b,1000,10,0,0,,LS,Running,20,,30\n").unwrap_err();
        assert_eq!(e.column.as_deref(), Some("deletion_time"));
        // A creation time without a scheduled time is no convention: still an error.
        let e = parse_with("a,1,1,0,0,,BE,Running,10,40,\n", InputRules::Reference).unwrap_err();
        assert_eq!(e.column.as_deref(), Some("scheduled_time"));
    }

    /// Python's csv module writes CRLF: errors must name the same lines as in an LF file.
    #[test]
    fn crlf_and_lf_files_name_the_same_lines() {
        let rows = "a,1000,10,1,500,,BE,Running,100,400,150\n\
                    \n\
                    b,1000,10,1,500,,BE,Running,100,400,150\n\
                    c,1000,10,1,500,,BE,Running,100,400,x\n";
        let lf = format!("{HEADER}{rows}");
        for text in [lf.clone(), lf.replace('\n', "\r\n")] {
            let e = TimedWorkload::parse_csv(
                Path::new("pods.csv"),
                text.as_bytes(),
                InputRules::Strict,
            )
            .unwrap_err();
            assert_eq!(
                (e.line, e.column.as_deref()),
                (Some(5), Some("scheduled_time")),
                "{e}"
            );
            assert!(e.to_string().starts_with("pods.csv:5 "), "{e}");
        }
        // The task loader's own errors too (a bad GPU count on line 3).
        for end in ["\n", "\r\n"] {
            let text =
                format!("{HEADER}a,1,1,0,0,,BE,Running,1,2,1\nb,1,1,x,0,,BE,Running,1,2,1\n")
                    .replace('\n', end);
            let e = TimedWorkload::parse_csv(
                Path::new("pods.csv"),
                text.as_bytes(),
                InputRules::Strict,
            )
            .unwrap_err();
            assert_eq!(
                (e.line, e.column.as_deref()),
                (Some(3), Some("num_gpu")),
                "{end:?}: {e}"
            );
        }
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
        assert!(w.tasks[2].right_censored && !w.tasks[0].right_censored);
        assert!(!w.tasks[1].right_censored && w.tasks.iter().all(|t| !t.left_censored));
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
