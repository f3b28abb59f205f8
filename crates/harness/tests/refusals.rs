//! What `gapbench` refuses, run as a user would: each case exits 1 (2 when the flag's own
//! parser refuses it; never 101, a panic) with a message that says what is wrong and why,
//! and writes no results.

mod common;

use std::path::{Path, PathBuf};

use common::gapbench_in as gapbench;

/// A scratch folder of this test process.
fn scratch(name: &str) -> PathBuf {
    common::scratch("refusals", name)
}

/// Asserts `gapbench ARGS` is refused (exit code 1, or 2 from a flag's parser) with a
/// message containing each of `expected`; returns the message.
fn refused(dir: &Path, args: &[&str], expected: &[&str]) -> String {
    let (code, stdout, stderr) = gapbench(dir, args);
    assert!(
        code == 1 || code == 2,
        "{args:?}: exit {code}\n{stdout}\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    for text in expected {
        assert!(
            stderr.contains(text),
            "{args:?}: expected `{text}` in\n{stderr}"
        );
    }
    stderr
}

/// Asserts a refused command left no results in `out`: the folder is absent, or holds
/// only its released (empty) lock file.
fn assert_no_results(out: &Path) {
    let Ok(entries) = std::fs::read_dir(out) else {
        return;
    };
    let names: Vec<String> = entries
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| n == ".gapbench.lock"),
        "{} holds {names:?}",
        out.display()
    );
    if !names.is_empty() {
        assert_eq!(std::fs::read(out.join(".gapbench.lock")).unwrap(), b"");
    }
}

const CPU_NODES: &str =
    "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,0,\nn1,64000,262144,0,\n";

/// Item 3: an arrival sweep measures against GPU capacity; a cluster without GPUs is
/// refused before anything runs (it divided by zero, or dropped every task with exit 0).
#[test]
fn a_cluster_without_gpus_is_refused_by_the_sweep_commands() {
    let dir = scratch("no-gpus");
    std::fs::write(dir.join("cpu-nodes.csv"), CPU_NODES).unwrap();
    for tune in ["none", "1.3"] {
        refused(
            &dir,
            &[
                "run",
                "--nodes",
                "cpu-nodes.csv",
                "--tune",
                tune,
                "--out",
                "out",
            ],
            &["cpu-nodes.csv", "no GPUs"],
        );
        assert_no_results(&dir.join("out"));
    }
    refused(
        &dir,
        &[
            "gap",
            "--nodes",
            "cpu-nodes.csv",
            "--sample-nodes",
            "2",
            "--out",
            "out",
        ],
        &["cpu-nodes.csv", "no GPUs"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Item 7: a checkpoint past the end of the sweep would be its end state under another
/// label, and a repeated one would be solved twice.
#[test]
fn gap_checkpoints_beyond_the_sweep_or_repeated_are_refused() {
    let dir = scratch("checkpoints");
    let gap = |checkpoints: &str| {
        vec![
            "gap",
            "--sample-nodes",
            "4",
            "--objectives",
            "power",
            "--pareto-points",
            "0",
            "--time-limit",
            "5",
            "--checkpoints",
            checkpoints,
            "--out",
            "out",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    };
    let args = gap("50,500");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    refused(&dir, &args, &["checkpoint 500", "beyond", "tune 1.3"]);
    let args = gap("50,80,50");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    refused(&dir, &args, &["checkpoint 50 is given twice"]);
    assert_no_results(&dir.join("out"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A small openb-format traces folder: two nodes and the `default` trace of three tasks.
fn traces_folder(dir: &Path) -> PathBuf {
    let traces = dir.join("traces");
    std::fs::create_dir_all(&traces).unwrap();
    std::fs::write(
        traces.join("openb_node_list_gpu_node.csv"),
        "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,T4\nn1,64000,262144,8,V100M32\n",
    )
    .unwrap();
    std::fs::write(
        traces.join("openb_pod_list_default.csv"),
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
         p0,1000,1024,1,1000,,LS,Running,0,100,0\np1,1000,1024,1,500,,LS,Running,10,200,10\n\
         p2,2000,2048,2,1000,,LS,Running,20,300,20\n",
    )
    .unwrap();
    traces
}

/// Item 1: a stand-in workload only when the user asked for one (no traces anywhere, or
/// `--stand-in`), and then REPORT.md says so at its top; a misspelt trace, a missing node
/// list or a wrong `--traces` folder is refused, before anything runs.
#[test]
fn a_bench_never_substitutes_the_embedded_workload_unasked() {
    let dir = scratch("stand-in");
    let traces = traces_folder(&dir);
    let spec = |traces: &str, extra: &str| {
        format!("name = \"s\"\ntraces = {traces}\npolicies = [\"fgd\"]\nseeds = [1]\n{extra}")
    };
    std::fs::write(
        dir.join("misspelt.toml"),
        spec("[\"default\", \"gpushare4O\"]", ""),
    )
    .unwrap();
    std::fs::write(dir.join("good.toml"), spec("[\"default\"]", "")).unwrap();
    std::fs::write(
        dir.join("budget.toml"),
        "name = \"b\"\n[budget]\ntrace = \"defualt\"\nseeds = [1]\nkinds = [\"energy\"]\nfractions = [1.0]\nsetups = [{ name = \"s\", gpus = 8, first_jobs = 3 }]\n",
    )
    .unwrap();
    let bench = |spec: &str, traces: &str| {
        vec!["bench", "--spec", spec, "--traces", traces, "--out", "out"]
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    let traces_text = traces.display().to_string();
    for (args, expected) in [
        (
            bench("misspelt.toml", &traces_text),
            vec!["openb_pod_list_gpushare4O.csv", "available: default"],
        ),
        (
            bench("budget.toml", &traces_text),
            vec!["openb_pod_list_defualt.csv", "available: default"],
        ),
        (bench("good.toml", "no-such-folder"), vec!["no-such-folder"]),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&dir, &args, &expected);
        assert_no_results(&dir.join("out"));
    }
    std::fs::remove_file(traces.join("openb_node_list_gpu_node.csv")).unwrap();
    let args = bench("good.toml", &traces_text);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    refused(&dir, &args, &["openb_node_list_gpu_node.csv"]);

    // Asked for: no traces anywhere (no --traces, no $GAPBENCH_TRACES, none at
    // ../shared/traces/openb), or --stand-in. The report's first lines say so.
    for args in [
        vec!["bench", "--spec", "good.toml", "--out", "asked"],
        vec![
            "bench",
            "--spec",
            "good.toml",
            "--stand-in",
            "--traces",
            &traces_text,
            "--out",
            "flag",
        ],
    ] {
        let (code, stdout, stderr) = gapbench(&dir, &args);
        assert_eq!(code, 0, "{args:?}\n{stdout}\n{stderr}");
        let out = dir.join(args.last().unwrap());
        let report = std::fs::read_to_string(out.join("REPORT.md")).unwrap();
        let top: String = report.lines().take(5).collect::<Vec<_>>().join("\n");
        assert!(top.contains("embedded openb-like workload"), "{top}");
        assert!(stdout.contains("stood in"), "{stdout}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Item 9: one writer per results folder. While another gapbench holds `out` (here this
/// test, through the folder's lock file), a second bench on it is refused with who holds
/// it and what to do instead, and writes nothing; once released, the bench runs.
#[test]
fn a_second_run_on_a_busy_results_folder_is_refused() {
    let dir = scratch("busy");
    std::fs::write(
        dir.join("spec.toml"),
        "name = \"s\"\ntraces = [\"default\"]\npolicies = [\"fgd\"]\nseeds = [1]\n",
    )
    .unwrap();
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let holder = std::fs::File::create(out.join(".gapbench.lock")).unwrap();
    holder.try_lock().unwrap();
    std::fs::write(
        out.join(".gapbench.lock"),
        "pid 4242: gapbench bench --spec other.toml\n",
    )
    .unwrap();
    let bench = ["bench", "--spec", "spec.toml", "--stand-in", "--out", "out"];
    refused(
        &dir,
        &bench,
        &[
            "in use",
            "pid 4242: gapbench bench --spec other.toml",
            "--shard",
        ],
    );
    refused(&dir, &["run", "--out", "out"], &["in use"]);
    assert!(!out.join("matrix.json").exists() && !out.join("curve.csv").exists());
    drop(holder);
    let (code, _, stderr) = gapbench(&dir, &bench);
    assert_eq!(code, 0, "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Item 10: a seed range is a run per seed; one too long to ever finish is refused with
/// the limit (it panicked with "capacity overflow", in `run` and in a spec).
#[test]
fn seed_ranges_beyond_the_limit_are_refused() {
    let dir = scratch("seeds");
    for command in ["run", "replay", "gap"] {
        refused(
            &dir,
            &[
                command,
                "--seeds",
                "0..18446744073709551615",
                "--out",
                "out",
            ],
            &["18446744073709551616 seeds", "at most 1000000"],
        );
    }
    std::fs::write(
        dir.join("spec.toml"),
        "name = \"s\"\ntraces = [\"default\"]\npolicies = [\"fgd\"]\nseeds = \"0..18446744073709551615\"\n",
    )
    .unwrap();
    refused(
        &dir,
        &["bench", "--spec", "spec.toml", "--stand-in", "--out", "out"],
        &["spec.toml", "at most 1000000"],
    );
    // A seed listed twice would count twice in every mean over seeds.
    std::fs::write(
        dir.join("spec.toml"),
        "name = \"s\"\ntraces = [\"default\"]\npolicies = [\"fgd\"]\nseeds = [42, 7, 42]\n",
    )
    .unwrap();
    refused(
        &dir,
        &["bench", "--spec", "spec.toml", "--stand-in", "--out", "out"],
        &["spec.toml", "seed 42 is listed twice"],
    );
    assert_no_results(&dir.join("out"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Item 11: a flag whose value would need more memory than the machine has is refused
/// before anything is allocated, naming the value, the memory and the limit (each aborted
/// out of memory, exit 134).
#[test]
fn values_that_need_more_memory_than_there_is_are_refused_up_front() {
    let dir = scratch("memory");
    for (args, expected) in [
        (
            vec!["run", "--tune", "1e6"],
            vec!["tune 1000000", "task arrivals"],
        ),
        (
            vec![
                "gap",
                "--tune",
                "1e6",
                "--sample-nodes",
                "4",
                "--checkpoints",
                "50",
            ],
            vec!["tune 1000000", "task arrivals"],
        ),
        (
            vec!["replay", "--tick", "1e-9"],
            vec!["--tick", "timeline rows"],
        ),
        (
            vec![
                "replay",
                "--policy",
                "powerflow",
                "--budget-energy",
                "100",
                "--round",
                "1e-9",
            ],
            vec!["--round", "rounds"],
        ),
        (
            vec!["replay", "--eaco-servers", "100000000", "--policy", "fifo"],
            vec!["--eaco-servers", "servers"],
        ),
        (
            vec![
                "replay",
                "--eaco-servers",
                "4",
                "--eaco-jobs",
                "100000000",
                "--policy",
                "fifo",
            ],
            vec!["--eaco-jobs", "jobs"],
        ),
        (
            vec!["frontier", "--first-jobs", "5", "--slot", "1e-6"],
            vec!["--slot", "slots"],
        ),
        (
            vec!["frontier", "--first-jobs", "5", "--sweep", "1000000000000"],
            vec!["--sweep", "budgets"],
        ),
    ] {
        let mut args = args.clone();
        args.extend(["--out", "out"]);
        refused(&dir, &args, &expected);
        assert_no_results(&dir.join("out"));
    }
    for (spec, expected) in [
        (
            "name = \"s\"\ntraces = [\"default\"]\npolicies = [\"fgd\"]\nseeds = [1]\ntune = 1e6\n",
            "task arrivals",
        ),
        (
            "name = \"e\"\n[replay]\npolicies = [\"fifo\"]\nseeds = [1]\n[replay.eaco]\nservers = [100000000]\njobs = 4\njobs_per_hour = 1.0\n",
            "servers",
        ),
    ] {
        std::fs::write(dir.join("spec.toml"), spec).unwrap();
        refused(&dir, &["bench", "--spec", "spec.toml", "--stand-in", "--out", "out"], &[expected]);
        assert_no_results(&dir.join("out"));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Item 12: a non-number or an out-of-range value is refused by its flag's parser, naming
/// the flag and the range (NaN switched the carbon pacing off, or became a `nan` row);
/// trace times past 100 years, and arrival scales that stretch a replay past them, are
/// refused too (they gave energies of 1e16 kWh without a word).
#[test]
fn non_numbers_and_out_of_range_values_are_refused() {
    let dir = scratch("ranges");
    let carbon = ["--budget-carbon", "200", "--carbon", "caiso-like"];
    let with = |head: &[&str], tail: &[&str]| -> Vec<String> {
        head.iter().chain(tail).map(|s| s.to_string()).collect()
    };
    for (args, expected) in [
        (
            with(&["frontier", "--first-jobs", "5", "--budgets", "NaN"], &[]),
            "--budgets",
        ),
        (
            with(
                &["frontier", "--first-jobs", "5", "--budgets", "10,-3"],
                &[],
            ),
            "--budgets",
        ),
        (
            with(&["frontier", "--first-jobs", "5", "--slot", "NaN"], &[]),
            "--slot",
        ),
        (
            with(
                &["replay", "--policy", "greenflow", "--theta", "NaN"],
                &carbon,
            ),
            "--theta",
        ),
        (
            with(&["replay", "--policy", "greenflow", "--theta=-3"], &carbon),
            "--theta",
        ),
        (
            with(&["replay", "--policy", "zeus", "--eta", "2"], &[]),
            "--eta",
        ),
        (
            with(&["replay", "--policy", "zeus", "--eta", "NaN"], &[]),
            "--eta",
        ),
        (
            with(
                &[
                    "replay",
                    "--policy",
                    "greenflow",
                    "--forecast",
                    "noisy",
                    "--forecast-noise=-1",
                ],
                &carbon,
            ),
            "--forecast-noise",
        ),
        (
            with(
                &[
                    "replay",
                    "--policy",
                    "powerflow",
                    "--budget-energy",
                    "1000",
                    "--horizon=-1",
                ],
                &[],
            ),
            "--horizon",
        ),
        (
            with(&["replay", "--arrival-scale", "1e-9"], &[]),
            "100 years",
        ),
    ] {
        let mut args = args;
        args.extend(["--out".to_string(), "out".to_string()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&dir, &args, &[expected]);
        assert_no_results(&dir.join("out"));
    }
    std::fs::write(
        dir.join("late.csv"),
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
         p0,1000,1024,1,1000,,LS,Running,9223372036854775000,9223372036854775800,9223372036854775000\n",
    )
    .unwrap();
    for command in ["run", "replay"] {
        refused(
            &dir,
            &[command, "--tasks", "late.csv", "--out", "out"],
            &["late.csv:2 (column `creation_time`)", "100 years"],
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
