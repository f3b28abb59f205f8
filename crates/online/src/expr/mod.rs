//! A policy in one line: `--policy 'expr:…'` scores each feasible node by an expression over
//! per-(node, task) features (`features.rs`), parsed (`parse.rs`) and compiled
//! (`compile.rs`) once per spec. The scheduler treats it like any policy: it normalises,
//! weights, breaks ties and picks the GPUs (best fit), and memoises its scores when every
//! feature it reads is memoisable.

pub mod compile;
pub mod features;
pub mod parse;

use std::cell::{Cell, RefCell};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use gapbench_model::{NodeId, Task};

pub use compile::Program;
pub use features::{Feature, FeatureInfo, FEATURES};
pub use parse::{excerpt, FUNCTIONS};

use crate::error::OnlineError;
use crate::policy::{NonFiniteScores, Normalization, Policy, ScoreContext};
use features::Env;

/// How an expression's values become the 0–100 scores the scheduler weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExprScale {
    /// `expr:` — truncated to an integer, then min-max normalised over the feasible nodes
    /// (0 when all are equal), like BestFit: any range works, higher is better.
    MinMax,
    /// `expr-raw:` — truncated to an integer and clamped to 0–100, used as is, like FGD and
    /// GpuPacking: the scale means the same for every task.
    Raw,
}

impl ExprScale {
    /// The spec keyword: `expr` or `expr-raw`.
    pub fn keyword(self) -> &'static str {
        match self {
            ExprScale::MinMax => "expr",
            ExprScale::Raw => "expr-raw",
        }
    }
}

/// BestFit's formula (reference-semantics §5.6) as an expression: `expr:` of it places
/// exactly like `bestfit` (tested on the real default trace).
pub const BEST_FIT_EXPR: &str =
    "(1 - (cpu_free_after_milli / 128000 * 0.5 + gpu_free_after_milli / 8000 * 0.5)) * 100";

/// GpuPacking's formula (reference-semantics §5.5) as an expression: `expr-raw:` of it places
/// exactly like `packing` (tested on the real default trace).
pub const GPU_PACKING_EXPR: &str = "if(task_gpus == 0, 0, \
if(idle_gpus == node_gpus, max(33 - idle_gpus, idle_gpus), \
if(taken_idle_gpus > 0, max(50 - taken_idle_gpus, 33), \
max(100 - floor(taken_free_pct / 10), 50))))";

/// Scores beyond this are clamped, so min-max normalisation's `(s − min)·100` cannot
/// overflow.
const VALUE_LIMIT: i64 = 1_000_000_000_000_000;

/// A parsed and compiled score expression; cloning shares the compiled program.
#[derive(Clone)]
pub struct ScoreExpr {
    source: Arc<str>,
    scale: ExprScale,
    program: Arc<Program>,
}

impl ScoreExpr {
    pub fn parse(source: &str, scale: ExprScale) -> Result<ScoreExpr, OnlineError> {
        let source = source.trim();
        let program = Program::compile(parse::parse(source)?)?;
        Ok(ScoreExpr {
            source: source.into(),
            scale,
            program: Arc::new(program),
        })
    }

    /// The expression as written (trimmed).
    pub fn source(&self) -> &str {
        &self.source
    }

    pub fn scale(&self) -> ExprScale {
        self.scale
    }

    /// The features it reads, in documentation order.
    pub fn features(&self) -> &[Feature] {
        self.program.features()
    }

    /// Whether the scheduler may reuse its scores per (node state, task shape): true unless
    /// it reads memory, which node states and task shapes leave out.
    pub fn memoizable(&self) -> bool {
        self.features().iter().all(|f| f.info().memoizable)
    }

    /// The expression's value for (`node`, `task`), before truncation.
    pub fn value(&self, ctx: &ScoreContext<'_>, node: NodeId, task: &Task) -> f64 {
        self.program
            .eval(&Env::new(ctx, node, task, self.program.needs()))
    }

    /// A policy that scores with this expression.
    pub fn new_policy(&self) -> Box<dyn Policy> {
        Box::new(ExprPolicy {
            expr: self.clone(),
            range: score_range(self.scale),
            non_finite: NonFiniteCount::default(),
        })
    }
}

impl PartialEq for ScoreExpr {
    fn eq(&self, other: &Self) -> bool {
        self.scale == other.scale && self.source == other.source
    }
}

impl Eq for ScoreExpr {}

impl Hash for ScoreExpr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.scale.hash(state);
        self.source.hash(state);
    }
}

impl fmt::Debug for ScoreExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.scale.keyword(), self.source)
    }
}

/// The integer scores a value may give: ±[`VALUE_LIMIT`], or 0–100 used raw.
pub(crate) fn score_range(scale: ExprScale) -> (i64, i64) {
    match scale {
        ExprScale::MinMax => (-VALUE_LIMIT, VALUE_LIMIT),
        ExprScale::Raw => (0, 100),
    }
}

/// The integer score of a value: truncated toward zero (the reference's rule for every
/// plugin, so sub-integer differences never decide), NaN counts 0 (Rust's `as`), then
/// clamped to the scale's range.
pub(crate) fn score_of(value: f64, (low, high): (i64, i64)) -> i64 {
    (value as i64).clamp(low, high)
}

/// The policy of a [`ScoreExpr`].
struct ExprPolicy {
    expr: ScoreExpr,
    range: (i64, i64),
    non_finite: NonFiniteCount,
}

/// Values that were NaN or ±∞, and the first of them ([`NonFiniteScores`]); shared with
/// external scorers (`external.rs`).
#[derive(Default)]
pub(crate) struct NonFiniteCount {
    count: Cell<u64>,
    first: RefCell<Option<String>>,
}

impl NonFiniteCount {
    /// Counts `value` when it is not finite; `describe` says where (called for the first).
    pub(crate) fn count(&self, value: f64, describe: impl FnOnce() -> String) {
        if !value.is_finite() {
            self.count.set(self.count.get() + 1);
            self.first.borrow_mut().get_or_insert_with(describe);
        }
    }

    pub(crate) fn found(&self) -> Option<NonFiniteScores> {
        let first = self.first.borrow().clone()?;
        Some(NonFiniteScores {
            count: self.count.get(),
            first,
        })
    }
}

impl Policy for ExprPolicy {
    fn normalization(&self) -> Normalization {
        match self.expr.scale {
            ExprScale::MinMax => Normalization::MinMaxZeroWhenEqual,
            ExprScale::Raw => Normalization::None,
        }
    }

    fn memoizable(&self) -> bool {
        self.expr.memoizable()
    }

    fn score(&self, ctx: &ScoreContext<'_>, node: NodeId, task: &Task) -> i64 {
        let value = self.expr.value(ctx, node, task);
        self.non_finite.count(value, || {
            format!(
                "{}:{} gave {value} for task `{}` on node `{}`",
                self.expr.scale.keyword(),
                excerpt(&self.expr.source, 1),
                task.name,
                ctx.cluster.nodes[node as usize].name
            )
        });
        score_of(value, self.range)
    }

    fn non_finite_scores(&self) -> Option<NonFiniteScores> {
        self.non_finite.found()
    }
}

/// The feature table of `docs/own-policy.md` (between `<!-- expr-features:begin -->` and
/// `<!-- expr-features:end -->`, checked by `xtask tidy`).
pub fn features_markdown() -> String {
    let mut table = String::from("| feature | meaning | memoised |\n|---|---|---|\n");
    for info in FEATURES {
        table.push_str(&format!(
            "| `{}` | {} | {} |\n",
            info.name,
            info.meaning,
            if info.memoizable { "yes" } else { "no" }
        ));
    }
    table.push_str("\nFunctions: ");
    let functions: Vec<String> = FUNCTIONS
        .iter()
        .map(|(name, _, meaning)| {
            if meaning.is_empty() {
                format!("`{name}`")
            } else {
                format!("`{name}` ({meaning})")
            }
        })
        .collect();
    table.push_str(&functions.join(", "));
    table.push_str(
        ". Operators, loosest first: `or`, `and`, comparisons (`==`, `!=`, `<`, `<=`, `>`, \
         `>=`; 1 or 0), `+ -`, `* / %`, unary `-` and `not`, `^`.\n",
    );
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_become_integer_scores() {
        let (min_max, raw) = (score_range(ExprScale::MinMax), score_range(ExprScale::Raw));
        assert_eq!(score_of(99.9, min_max), 99);
        assert_eq!(score_of(-0.7, min_max), 0);
        assert_eq!(score_of(-1.2, min_max), -1);
        assert_eq!(score_of(f64::NAN, min_max), 0);
        assert_eq!(score_of(f64::INFINITY, min_max), VALUE_LIMIT);
        assert_eq!(score_of(-1e300, min_max), -VALUE_LIMIT);
        assert_eq!(score_of(250.0, raw), 100);
        assert_eq!(score_of(-3.0, raw), 0);
    }

    #[test]
    fn memory_features_are_not_memoised() {
        let gpu = ScoreExpr::parse("gpu_free_after_milli", ExprScale::MinMax).unwrap();
        assert!(gpu.memoizable());
        let mem = ScoreExpr::parse("gpu_free_milli - mem_free_mib", ExprScale::MinMax).unwrap();
        assert!(!mem.memoizable());
        assert_eq!(
            mem.features(),
            &[Feature::MemFreeMib, Feature::GpuFreeMilli]
        );
    }
}
