//! `perf-probe GROUP`: runs each benchmark of a criterion group (`whole_run` or `scoring`)
//! exactly once, for `cargo xtask perf` to count under callgrind.
//!
//! Set-up (loading the trace, building the scoring snapshot) happens outside
//! [`measured`]; `cargo xtask perf` collects events only inside it
//! (`--toggle-collect`) and dumps them after each call (`--dump-after`), so dump `k` holds
//! exactly the `k`-th benchmark. Before each call the probe prints `benchmark <id>` on
//! stdout, which is how the dumps are named.

use std::hint::black_box;
use std::process::ExitCode;

use gapbench_benches::{
    openb_default, scoring_policies, whole_run, whole_run_policies, ScoringSnapshot,
};

/// The region `cargo xtask perf` counts (`--toggle-collect`); never inlined, so callgrind
/// sees its entry and exit.
#[inline(never)]
fn measured(work: &mut dyn FnMut() -> i64) -> i64 {
    black_box(work())
}

/// Calls [`measured`]; callgrind dumps the counts when it returns (`--dump-after`: a
/// function that toggles collection cannot also trigger the dump).
#[inline(never)]
fn benchmark(work: &mut dyn FnMut() -> i64) -> i64 {
    black_box(measured(work))
}

fn main() -> ExitCode {
    let group = std::env::args().nth(1).unwrap_or_default();
    match group.as_str() {
        "whole_run" => {
            let (cluster, tasks) = openb_default();
            for (id, spec) in whole_run_policies() {
                println!("benchmark whole_run/{id}");
                benchmark(&mut || whole_run(&cluster, &tasks, &spec) as i64);
            }
        }
        "scoring" => {
            let snapshot = ScoringSnapshot::new();
            for (id, policy) in scoring_policies() {
                let mut scorer = snapshot.scorer(&policy);
                println!("benchmark scoring/{id}");
                benchmark(&mut || snapshot.score_all(&mut scorer));
            }
        }
        _ => {
            eprintln!("usage: perf-probe <whole_run | scoring>");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}
