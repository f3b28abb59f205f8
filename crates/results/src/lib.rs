//! The results schema: one declaration of every row gapbench writes and reads back — the
//! exact-gap rows, the fronts, the Pareto points the figures draw, the objectives and the
//! solver's status labels — with their CSV text and the atomic writes that put them on disk.
//!
//! Invariant: *this crate depends on no other workspace crate.* The runner (harness), the
//! solver (ilp) and the report all speak through these types, so a row is added or changed
//! in one place, and a results folder can be read without the code that produced it.

pub mod best_known;
pub mod budget;
pub mod check;
pub mod csv_text;
pub mod curve;
pub mod docs;
pub mod eaco_bound;
pub mod float_text;
pub mod folder;
pub mod front;
pub mod frontier_output;
pub mod gap_row;
pub mod instance;
pub mod io;
pub mod matrix;
pub mod objective;
pub mod pareto;
pub mod replay;
pub mod replay_output;
pub mod row;
pub mod runs;
pub mod status;
pub mod table;

pub use best_known::{best_known, BestKnown};
pub use budget::{budget_point_label, BudgetFrontierRow, BudgetPointRow, BudgetTimelineRow};
pub use check::{CheckedRow, ColumnError};
pub use curve::CurveRow;
pub use eaco_bound::EacoBoundRow;
pub use front::FrontRow;
pub use gap_row::{GapRow, TracedGapRow};
pub use instance::{index_csv, IndexRow, InstanceFile, INSTANCE_FORMAT, INSTANCE_FORMAT_VERSION};
pub use matrix::{check_seed_range, InputFingerprint, MatrixDescription, Seeds, MAX_SEEDS};
pub use objective::Objective;
pub use pareto::{ParetoPoint, PointKind};
pub use replay::{ReplayKey, ReplayRunRow, ReplayTimelineRow, REPLAY_SCHEMA_VERSION};
pub use row::{Column, CsvCell, CsvRow};
pub use runs::{GridRow, GridSample, MeanGridLine, MeanGridRow, RunRow};
pub use status::{BudgetBoundStatus, ColgenStatus, EacoLpStatus, ReplayBoundStatus, SolveStatus};

/// Per-integer-percent means over seeds, one row per (trace, policy, arrived %).
pub const MEAN_GRID_CSV: &str = "mean_grid.csv";
/// One row per run: final values after the last event.
pub const RUNS_CSV: &str = "runs.csv";
/// Exact gaps: one [`GapRow`] per (trace, checkpoint, objective, policy, seed).
pub const GAPS_CSV: &str = "gaps.csv";
/// What the Pareto figures draw: one [`ParetoPoint`] per front point or policy.
pub const PARETO_CSV: &str = "pareto.csv";
/// Every point of every gap study's front, solver details included: one [`FrontRow`] each.
pub const FRONTS_CSV: &str = "fronts.csv";
/// Time mode: one [`ReplayRunRow`] per replay cell (energy, JCT, waits, active nodes).
pub const REPLAY_RUNS_CSV: &str = "replay_runs.csv";
/// Time mode: [`ReplayTimelineRow`]s, each replay downsampled to about 200 instants.
pub const REPLAY_TIMELINE_CSV: &str = "replay_timeline.csv";
/// EaCO's setup: one [`EacoBoundRow`] per (source, idle policy, seed, windows): the proven
/// lower bound on the energy of any co-allocation that meets the windows.
pub const EACO_BOUNDS_CSV: &str = "eaco_bounds.csv";
/// Budget studies: one [`BudgetPointRow`] per budgeted replay (policy and budget).
pub const BUDGET_POINTS_CSV: &str = "budget_points.csv";
/// Budget studies: the exact JCT lower envelope, [`BudgetFrontierRow`]s.
pub const BUDGET_FRONTIER_CSV: &str = "budget_frontier.csv";
/// Budget studies: [`BudgetTimelineRow`]s, each replay downsampled to about 200 instants.
pub const BUDGET_TIMELINE_CSV: &str = "budget_timeline.csv";
/// The resolved matrix a bench folder was produced from ([`MatrixDescription`] reads it).
pub const MATRIX_JSON: &str = "matrix.json";
/// The report of a results folder.
pub const REPORT_MD: &str = "REPORT.md";
/// The lock file of a results folder; empty unless a command holds the folder (the harness
/// takes the lock; declared here so the results documentation names it).
pub const LOCK_FILE: &str = ".gapbench.lock";
