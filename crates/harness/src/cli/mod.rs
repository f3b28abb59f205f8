//! The commands of the `gapbench` binary, one file each: its clap flags, the mapping of
//! those flags onto the library's plain option structs, and the tables and lines it prints.
//! The library (`gapbench`) computes and writes the files; of the terminal it uses only
//! progress bars and warnings.

pub mod bench;
pub mod budget_flags;
pub mod figures;
pub mod frontier;
pub mod gap;
#[cfg(test)]
pub mod reference;
pub mod replay;
pub mod replay_table;
pub mod run;
pub mod workload_flags;
