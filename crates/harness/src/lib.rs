//! The gapbench harness: experiments on identical workloads, results IO and the CLI's
//! commands. The binary `gapbench` is a thin clap front end over this library. Figures and
//! `REPORT.md` are the report crate's (`gapbench_report`), which knows nothing of the runner.

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
pub mod workload;
