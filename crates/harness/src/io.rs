//! Atomic file writes (their home is the results crate, shared with the report).

pub use gapbench_results::io::{write_atomic, write_atomic_with, write_json};
