//! The gapbench harness: experiments on identical workloads, results IO and the CLI's
//! commands. The binary `gapbench` is a thin clap front end over this library.

pub mod bench;
pub mod bench_spec;
pub mod figures;
pub mod gap;
pub mod io;
pub mod manifest;
pub mod replay;
pub mod report;
pub mod run;
pub mod summary;
pub mod workload;
