//! The gapbench harness: experiments on identical workloads, results IO and the runner.
//! Its public API ([`api`], re-exported here: [`Workload`], [`Policy`], [`sweep`],
//! [`gap`](api::gap), [`replay`](api::replay), [`bench`](api::bench)) is what the `gapbench`
//! binary (a clap front end, `src/cli/`) and other programs call. Figures and `REPORT.md` are the report crate's
//! (`gapbench_report`), which knows nothing of the runner.

pub mod api;
pub mod bench;
pub mod budget;
pub mod export;
pub mod flag_values;
pub mod frontier;
pub mod gap;
pub mod io;
pub mod limits;
pub mod manifest;
pub mod out_dir;
pub mod progress;
pub mod replay;
pub mod replay_bound;
pub mod run;
pub mod summary;
pub mod work;
pub mod workload;

pub use api::{
    bench, gap, replay, sweep, sweeps, GapMethod, GapOptions, GapStudy, Policy, Replay,
    ReplayConfig, Selection, SweepCurve, Workload,
};
