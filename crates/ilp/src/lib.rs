//! Exact offline counterparts of the online heuristics, on good_lp + HiGHS.
//!
//! For the very task set an online policy faced at a checkpoint of an arrival sweep (a
//! [`Snapshot`]), how good could any placement have been?
//! - [`min_power`]: least total power placing exactly the heuristic's placed tasks;
//! - [`max_alloc`]: most allocated GPU milli over all arrived tasks (then least power);
//! - [`min_frag`]: least FGD fragmentation for the heuristic's placed tasks;
//! - [`pareto_front`]: power vs fragmentation by the ε-constraint method;
//! - [`relaxed_min_power`], [`relaxed_max_alloc`]: valid bounds for the full cluster from a
//!   by-node-type relaxation;
//! - [`column_generation`]: every objective on the full cluster by column generation, with a
//!   Lagrangian bound and a real placement;
//! - [`highs_version`]: which HiGHS the binary runs, for result manifests.
//!
//! Every solve returns a [`SolveReport`]: status, incumbent (evaluated by the model crate
//! on a placement that passes `check_placements`), proven bound, gap and time. Every solve
//! is warm-started from the heuristic's own placement, so there is always an incumbent at
//! least as good as the heuristic. [`gap_interval`] turns a report into the interval the
//! heuristic's true optimality gap lies in.
//!
//! Structure is exploited throughout: identical tasks are counted per shape
//! ([`shapes`]), devices of a node and identical nodes are sorted (symmetry breaking), and
//! [`sample_sub_cluster`] draws smaller clusters with the same node-type mix.

pub mod cg;
mod common;
mod error;
pub mod eval;
pub mod gap;
pub mod instance;
pub mod max_alloc;
pub mod min_frag;
pub mod min_power;
mod model;
pub mod pareto;
pub mod relaxation;
pub mod shapes;
pub mod snapshot;
pub mod solve;
pub mod solver;
pub mod subcluster;

pub use cg::{
    column_generation, column_generation_carrying, column_generation_front,
    column_generation_with_stats, power_bound_carrying, CgStats, ColumnCarry, PowerBound,
    PowerFragFront, Rounding,
};
pub use error::SolveError;
pub use gap::{gap_interval, heuristic_value, GapInterval};
pub use max_alloc::max_alloc;
pub use min_frag::{min_frag, min_frag_by_both, min_frag_from};
pub use min_power::min_power;
pub use pareto::{pareto_front, pareto_front_from, ParetoPoint};
pub use relaxation::{relaxed_max_alloc, relaxed_min_power};
pub use snapshot::{check_assignment, Snapshot, SweepEvent};
pub use solve::{relative_gap, Objective, SolveOptions, SolveReport, SolveStatus};
pub use solver::highs_version;
pub use subcluster::{sample_sub_cluster, type_quota};

/// Solves `objective` exactly on `snapshot` with the per-node model.
pub fn solve_exact(
    snapshot: &Snapshot,
    objective: Objective,
    options: &SolveOptions,
) -> SolveReport {
    match objective {
        Objective::Power => min_power(snapshot, options),
        Objective::Alloc => max_alloc(snapshot, options),
        Objective::Frag => min_frag(snapshot, options),
    }
}
