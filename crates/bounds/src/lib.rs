//! Proven lower bounds on whole runs, against which the time-mode policies are measured.
//!
//! Snapshot solving (one placement problem at one instant) is `gapbench_ilp`'s; the bounds
//! here cover a run in time and reuse its solvers where a window of time is a snapshot:
//! - [`replay_bound`]: a lower bound on the energy of a time-mode replay, window by window
//!   (column generation's power bound per window, or the per-node MIP on a few nodes);
//! - [`eaco_bound`]: EaCO's counterpart, a proven lower bound on the energy of any
//!   co-allocation of training jobs that meets every deadline (closed form and a
//!   time-indexed pattern LP);
//! - [`frontier`]: lower bounds on mean job completion time under an energy or a carbon
//!   budget (Lagrangian lines, dual ascent, column generation; a time-indexed MIP on small
//!   instances).

pub mod eaco_bound;
mod error;
pub mod frontier;
pub mod replay_bound;

pub use error::BoundError;
