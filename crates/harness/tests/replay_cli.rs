//! `gapbench replay` as a user runs it: a flag the chosen policy does not use is refused,
//! naming both; flags every time policy uses work for the budgeted ones too; what the
//! loading rules dropped is counted in summary.json, manifest.json and on the terminal.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("gapbench-replay-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn gapbench(args: &[&str], out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gapbench"))
        .arg("replay")
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .expect("gapbench runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Each pair is refused with an error naming the flag and the policy, before anything runs.
#[test]
fn flags_a_policy_does_not_use_are_refused_naming_both() {
    let out = temp_dir("refused");
    let cases: [(&[&str], &[&str]); 10] = [
        (
            &["--policy", "fgd", "--budget-energy", "10"],
            &["`fgd`", "--budget-energy"],
        ),
        (
            &["--policy", "fgd", "--fidelity", "l0"],
            &["`fgd`", "--fidelity"],
        ),
        (
            &["--policy", "fgd", "--round", "100"],
            &["`fgd`", "--round"],
        ),
        (&["--policy", "fgd", "--theta", "2"], &["`fgd`", "--theta"]),
        (
            &["--policy", "eaco-r", "--eta", "0.3"],
            &["`eaco-r`", "--eta"],
        ),
        (
            &["--policy", "zeus", "--forecast", "myopic"],
            &["`zeus`", "--forecast"],
        ),
        (
            &["--policy", "fifo-full-clock", "--budget-energy", "1000"],
            &["`fifo-full-clock`", "--budget-energy"],
        ),
        (
            &["--policy", "powerflow"],
            &["powerflow", "--budget-energy"],
        ),
        (
            &[
                "--policy",
                "powerflow",
                "--budget-energy",
                "1e6",
                "--queue",
                "backfill",
            ],
            &["`powerflow`", "--queue"],
        ),
        (
            &["--policy", "greenflow", "--budget-carbon", "10"],
            &["--budget-carbon", "--carbon"],
        ),
    ];
    for (args, named) in cases {
        let output = gapbench(args, &out);
        let text = stderr(&output);
        assert!(!output.status.success(), "{args:?} ran: {text}");
        for word in named {
            assert!(text.contains(word), "{args:?}: `{word}` not in {text}");
        }
        assert!(!out.join("summary.json").exists(), "{args:?} wrote outputs");
    }
    std::fs::remove_dir_all(&out).unwrap();
}

/// `--until`, `--idle`, `--tick`, `--gpus` and `--first-jobs` work for the budgeted
/// policies and their baselines as for any other: the one engine applies them.
#[test]
fn every_engine_flag_works_for_the_budgeted_policies() {
    let out = temp_dir("budgeted");
    let output = gapbench(
        &[
            "--policy",
            "fifo-full-clock",
            "--gpus",
            "16",
            "--first-jobs",
            "40",
            "--idle",
            "sleep-when-empty",
            "--until",
            "300000",
            "--tick",
            "3600",
        ],
        &out,
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let run = &summary["runs"][0];
    assert_eq!(run["tasks"], 40);
    assert!(run["sleep_kwh"].as_f64().unwrap() > 0.0, "{run}");
    // Stopped at 300,000 s: some jobs done, some not yet.
    assert!(run["completed"].as_u64().unwrap() > 0, "{run}");
    assert!(run["unfinished"].as_u64().unwrap() > 0, "{run}");
    let timeline = std::fs::read_to_string(out.join("timeline.csv")).unwrap();
    assert!(timeline.lines().any(|l| l.contains(",tick,")));
    let last: f64 = timeline
        .lines()
        .last()
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(last <= 300_000.0, "{last}");
    std::fs::remove_dir_all(&out).unwrap();
}

/// A Pending pod is dropped, and says so: summary.json, manifest.json and the terminal.
#[test]
fn dropped_pending_pods_are_counted_everywhere() {
    let dir = temp_dir("pending");
    let tasks = dir.join("pods.csv");
    std::fs::write(
        &tasks,
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
         a,1000,1024,1,1000,,BE,Succeeded,0,100,10\n\
         b,1000,1024,1,1000,,BE,Pending,5,,\n\
         c,1000,1024,0,0,,BE,Pending,7,,\n\
         d,1000,1024,1,500,,BE,Running,20,300,20\n",
    )
    .unwrap();
    let out = dir.join("out");
    let output = gapbench(
        &["--policy", "fgd", "--tasks", tasks.to_str().unwrap()],
        &out,
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let terminal = String::from_utf8_lossy(&output.stdout);
    assert!(terminal.contains("2 Pending pod(s) dropped"), "{terminal}");
    let read = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(out.join(name)).unwrap()).unwrap()
    };
    assert_eq!(read("summary.json")["runs"][0]["dropped_pending"], 2);
    assert_eq!(
        read("manifest.json")["settings"]["workload"]["dropped_pending"],
        2
    );
    assert_eq!(read("manifest.json")["settings"]["workload"]["tasks"], 2);
    let solver = read("manifest.json")["solver"].clone();
    assert!(
        solver.as_str().is_some_and(|s| s.starts_with("HiGHS 1.")),
        "{solver}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Stopped before anything completed: the terminal and summary.json say "none" and why,
/// not a mean JCT of 0.
#[test]
fn nothing_completed_shows_none_not_zero() {
    let dir = temp_dir("none");
    let tasks = dir.join("pods.csv");
    std::fs::write(
        &tasks,
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
         a,1000,1024,1,1000,,BE,Succeeded,0,100,10\n\
         b,1000,1024,1,1000,,BE,Succeeded,5,200,5\n",
    )
    .unwrap();
    let out = dir.join("out");
    let output = gapbench(
        &[
            "--policy",
            "fgd",
            "--tasks",
            tasks.to_str().unwrap(),
            "--until",
            "50",
        ],
        &out,
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let terminal = String::from_utf8_lossy(&output.stdout);
    assert!(
        terminal.contains("mean JCT none — no task completed"),
        "{terminal}"
    );
    assert!(!terminal.contains("         0           0"), "{terminal}");
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(
        summary.contains("\"jct_s\": \"none: no task completed\""),
        "{summary}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `gapbench replay --help` states how real traces are read: censoring of empty creation and
/// deletion times, what strict rules refuse, never-fitting tasks and the queue disciplines.
#[test]
fn help_states_the_trace_conventions_and_the_queue() {
    let output = Command::new(env!("CARGO_BIN_EXE_gapbench"))
        .args(["replay", "--help"])
        .output()
        .expect("gapbench runs");
    assert!(output.status.success(), "{}", stderr(&output));
    // Whitespace collapsed: clap may wrap long lines.
    let help = String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for phrase in [
        "left-censored",
        "right-censored",
        "Pending pods (never scheduled) are dropped",
        "--input-rules strict refuses empty creation and deletion times",
        "never_fits:<resource>",
        "`backfill`",
    ] {
        assert!(help.contains(phrase), "--help lacks {phrase:?}:\n{help}");
    }
}
