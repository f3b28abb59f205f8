//! A trace as a newer public Alibaba release writes it: CRLF line ends (Python's csv
//! module), empty creation times for pods already there at the trace start, empty deletion
//! times for pods still running at its end, and one task no node can ever hold.

mod support;

use std::path::Path;

use gapbench_model::InputRules;
use gapbench_replay::{run, QueueDiscipline, ReplayOptions, TimedWorkload};
use support::{cluster, node_type, policy};

const HEADER: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time";

/// Line 2: a giant that fits no node (192 CPUs, 960 GiB), first in the queue at the start.
/// Lines 3–4: pods already running when the trace began. Line 5: one still running at its
/// end. Line 6: a Pending pod (dropped). Lines 7–8: ordinary pods.
const ROWS: [&str; 7] = [
    "giant,192000,983040,1,1000,,LS,Running,0,5000,0",
    "old-a,4000,8192,1,1000,,LS,Running,,3000,",
    "old-b,4000,8192,1,500,,BE,Running,,,",
    "open,2000,4096,1,1000,,BE,Running,100,,200",
    "pending,2000,4096,1,1000,,BE,Pending,150,,",
    "c,2000,4096,1,1000,,BE,Succeeded,300,4000,300",
    "d,2000,4096,1,1000,,BE,Failed,400,4500,500",
];

fn text(line_end: &str) -> String {
    let mut text = HEADER.to_string();
    for row in ROWS {
        text.push_str(line_end);
        text.push_str(row);
    }
    text.push_str(line_end);
    text
}

fn load(line_end: &str) -> TimedWorkload {
    TimedWorkload::parse_csv(
        Path::new("newer.csv"),
        text(line_end).as_bytes(),
        InputRules::Reference,
    )
    .expect("the newer trace's conventions load")
}

#[test]
fn a_newer_trace_replays_to_the_end_with_its_censoring_and_never_fitting_task_counted() {
    let lf = load("\n");
    assert_eq!(load("\r\n"), lf, "CRLF and LF give the same workload");
    let cluster = cluster(&[node_type(2, 32), node_type(2, 32)]);
    for queue in [QueueDiscipline::Fifo, QueueDiscipline::Backfill] {
        let options = ReplayOptions {
            queue,
            check_every_event: true,
            ..ReplayOptions::default()
        };
        for name in ["fgd", "eaco-r", "fifo"] {
            let mut p = policy(name, &cluster);
            let result = run(&cluster, &lf, p.as_mut(), &options);
            assert!(
                result.violations.is_empty(),
                "{name}: {:?}",
                result.violations
            );
            let summary = result.summary();
            assert_eq!(summary.tasks, 6, "{name}");
            assert_eq!(summary.completed, 5, "{name}: the giant blocks nobody");
            assert_eq!(summary.failed, 1);
            assert_eq!(summary.failures["never_fits:cpu+memory"], 1, "{name}");
            assert_eq!((summary.unfinished, summary.still_waiting), (0, 0));
            assert_eq!(summary.dropped_pending, 1);
            // Right-censored: the two without a deletion time, and the giant, whose deletion
            // time is the file's latest.
            assert_eq!((summary.left_censored, summary.right_censored), (2, 3));
            assert_eq!(summary.queue, queue.label());
            let giant = &result.tasks[0];
            assert_eq!(giant.name, "giant");
            assert_eq!(
                giant.failure.map(|f| f.label()),
                Some("never_fits:cpu+memory")
            );
            assert_eq!(giant.start_s, None);
            let mut csv = Vec::new();
            result.write_tasks_csv(&mut csv).unwrap();
            let csv = String::from_utf8(csv).unwrap();
            assert!(csv
                .lines()
                .next()
                .unwrap()
                .contains("left_censored,right_censored"));
            assert!(csv.contains("never_fits:cpu+memory"), "{csv}");
        }
    }
}

/// Errors name the same line in LF and CRLF files: the bad value is on line 5.
#[test]
fn errors_name_the_right_line_whatever_the_line_ends() {
    for line_end in ["\n", "\r\n"] {
        let bad = text(line_end).replace("100,,200", "100,,2x0");
        let error = TimedWorkload::parse_csv(
            Path::new("newer.csv"),
            bad.as_bytes(),
            InputRules::Reference,
        )
        .unwrap_err();
        assert_eq!(
            (error.line, error.column.as_deref()),
            (Some(5), Some("scheduled_time")),
            "{line_end:?}: {error}"
        );
    }
}
