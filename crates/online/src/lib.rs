//! Online scheduling: the [`Policy`] trait, every online policy (one file each under
//! `policies/`), the scheduler that combines weighted policies (filter → score → normalise →
//! pick node → pick GPUs), score expressions (`expr:…`, a policy without recompiling), and
//! the arrival-sweep engine.

mod declare;
pub mod engine;
mod error;
pub mod expr;
pub mod external;
pub mod memo;
pub mod policies;
pub mod policy;
mod registry;
pub mod scheduler;
pub mod selection;
pub mod spec;

pub use engine::{run_arrival_sweep, run_arrival_sweep_with, EventRecord, SweepResult};
pub use error::OnlineError;
pub use expr::{ExprScale, ScoreExpr};
pub use external::{ExternalScore, ExternalScorer, NodeTaskFeatures, ScoreStopped};
pub use policies::new_policy;
pub use policy::{GpuSelection, NonFiniteScores, Normalization, Policy, ScoreContext};
pub use registry::{markdown_table as policies_markdown, policy_help};
pub use scheduler::Scheduler;
pub use spec::{PolicyKind, PolicyRef, PolicySpec};
