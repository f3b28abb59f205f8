//! Exact offline counterparts of the online heuristics, on good_lp + HiGHS.
//!
//! One entry point: [`solve`] (or a [`Session`] of solves that share columns) takes a
//! [`Problem`] — a cluster, its FGD target workload and the tasks, owned — an
//! [`Objective`] (least power, most allocated GPU milli, least fragmentation), a [`Method`]
//! (the per-node MIP, column generation, both pooled, or a by-node-type relaxation) and
//! [`Options`] (limits and an optional warm start), and returns a [`SolveReport`] —
//! status, incumbent (evaluated by the model crate on a placement that passes
//! `check_placements`), proven bound, gap, time — or a [`SolveError`]. A solve is started
//! from the warm start (or a first-fit placement), so its incumbent is at least as good.
//! [`Session::front`] draws the power–fragmentation front between two solved end points.
//!
//! For a checkpoint of an arrival sweep, a [`Snapshot`] holds what the online policy
//! faced and did; [`Snapshot::problem`] poses it (its placement as the warm start), and
//! [`gap_interval`] turns a report into the interval the heuristic's true optimality gap
//! lies in. [`sample_sub_cluster`] draws smaller clusters with the same node-type mix;
//! [`instance`] writes and re-checks instance files; [`highs_version`] says which HiGHS
//! the binary runs, for result manifests; [`solver`] is the HiGHS plumbing the bounds
//! crate builds on.
//!
//! Structure is exploited throughout: identical tasks are counted per shape, devices of a
//! node and identical nodes are sorted (symmetry breaking).

mod cg;
mod common;
mod error;
pub mod eval;
mod first_fit;
mod frag_devices;
mod gap;
pub mod instance;
mod max_alloc;
mod min_frag;
mod min_power;
mod model;
mod node_value;
mod pareto;
mod problem;
mod relaxation;
mod shapes;
mod snapshot;
mod solve;
pub mod solver;
mod subcluster;

pub use cg::{CgStats, PowerBound, PowerFragFront, PowerTree};
pub use cg::{PricingCase, PricingOutcome};
pub use error::SolveError;
pub use first_fit::first_fit;
pub use frag_devices::{frag_device_bound, min_frag_by_devices};
pub use gap::{gap_interval, heuristic_value, GapInterval};
pub use gapbench_model::SweepEvent;
pub use min_power::PowerMip;
pub use pareto::FrontPoint;
pub use problem::{min_power_sleeping, solve, Method, Options, Problem, Session};
pub use snapshot::{check_assignment, Snapshot};
pub use solve::{relative_gap, Objective, SolveOptions, SolveReport, SolveStatus};
pub use solver::highs_version;
pub use subcluster::{sample_sub_cluster, type_quota};
