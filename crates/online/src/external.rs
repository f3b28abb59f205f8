//! Scores computed outside the crate: a policy whose raw score is a caller's function of
//! the `expr:` features (the Python binding's callables). The scheduler treats it like an
//! `expr:` term: the same filter, normalisation, weights, tie-break and GPU choice (best
//! fit), memoised per distinct node state when the caller says the function is a function of
//! the memoised features only.

use std::cell::Cell;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use gapbench_model::{NodeId, Task};

use crate::expr::features::{reader, Env, Needs, Reader};
use crate::expr::{score_of, score_range, ExprScale, Feature, NonFiniteCount, FEATURES};
use crate::policy::{NonFiniteScores, Normalization, Policy, ScoreContext};

/// The `expr:` features of one (feasible node, task), `node_in_use`, and both names.
pub struct NodeTaskFeatures<'a> {
    values: [f64; FEATURES.len()],
    /// Whether memoised scores may read memory features (they may not: node states and
    /// task shapes leave memory out).
    memoized: bool,
    /// The node holds part of its CPU or of its GPUs: a function of the memoised node state
    /// (free CPU below capacity, or free milli-GPU below `node_gpus` × 1000).
    pub node_in_use: bool,
    pub node_name: &'a str,
    pub task_name: &'a str,
}

impl NodeTaskFeatures<'_> {
    /// The feature's value, computed as `expr:` computes it; `None` for a memory feature of a
    /// memoised scorer.
    pub fn get(&self, feature: Feature) -> Option<f64> {
        (!self.memoized || feature.info().memoizable).then(|| self.values[feature as usize])
    }
}

/// The scorer stopped: it keeps its own error (the caller reads it after the run), and its
/// policy scores every node 0 for the rest of the run without calling it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScoreStopped;

/// A raw score from outside: higher is better, like an `expr:` value.
pub trait ExternalScore: Send + Sync {
    fn score(&self, features: &NodeTaskFeatures<'_>) -> Result<f64, ScoreStopped>;
}

/// An external scorer as a term of a policy spec. Two terms are the same term when they
/// share the scorer object.
#[derive(Clone)]
pub struct ExternalScorer {
    label: Arc<str>,
    scale: ExprScale,
    memoize: bool,
    scorer: Arc<dyn ExternalScore>,
}

impl ExternalScorer {
    /// `label` names it in outputs (e.g. `python:best_fit`); `scale` is the `expr:` or
    /// `expr-raw:` rule for its values; `memoize` promises that the score depends only on
    /// memoisable features (memory features then read as `None`).
    pub fn new(
        label: &str,
        scale: ExprScale,
        memoize: bool,
        scorer: Arc<dyn ExternalScore>,
    ) -> Self {
        ExternalScorer {
            label: label.into(),
            scale,
            memoize,
            scorer,
        }
    }

    pub fn label(&self) -> &str {
        &self.label
    }

    /// A file-safe name: anything but letters, digits and `-` becomes `_`.
    pub fn slug(&self) -> String {
        self.label
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    }

    pub fn new_policy(&self) -> Box<dyn Policy> {
        Box::new(ExternalPolicy {
            scorer: self.clone(),
            readers: FEATURES.iter().map(|info| reader(info.feature)).collect(),
            needs: Needs::of(&FEATURES.iter().map(|info| info.feature).collect::<Vec<_>>()),
            stopped: Cell::new(false),
            non_finite: NonFiniteCount::default(),
        })
    }
}

impl PartialEq for ExternalScorer {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.scorer, &other.scorer)
            && self.scale == other.scale
            && self.memoize == other.memoize
    }
}

impl Eq for ExternalScorer {}

impl Hash for ExternalScorer {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (Arc::as_ptr(&self.scorer) as *const () as usize).hash(state);
        self.scale.hash(state);
    }
}

impl fmt::Debug for ExternalScorer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label)
    }
}

/// The policy of an [`ExternalScorer`].
struct ExternalPolicy {
    scorer: ExternalScorer,
    readers: Vec<Reader>,
    needs: Needs,
    stopped: Cell<bool>,
    non_finite: NonFiniteCount,
}

impl Policy for ExternalPolicy {
    fn normalization(&self) -> Normalization {
        match self.scorer.scale {
            ExprScale::MinMax => Normalization::MinMaxZeroWhenEqual,
            ExprScale::Raw => Normalization::None,
        }
    }

    fn memoizable(&self) -> bool {
        self.scorer.memoize
    }

    fn score(&self, ctx: &ScoreContext<'_>, node: NodeId, task: &Task) -> i64 {
        if self.stopped.get() {
            return 0;
        }
        let env = Env::new(ctx, node, task, self.needs);
        let state = ctx.state.node(node);
        let node_type = ctx.cluster.node_type(node);
        let node_name = &ctx.cluster.nodes[node as usize].name;
        let features = NodeTaskFeatures {
            values: std::array::from_fn(|i| (self.readers[i])(&env)),
            memoized: self.scorer.memoize,
            node_in_use: state.cpu_left_milli < node_type.cpu_milli
                || state.total_free_gpu_milli() < u32::from(state.gpu_count) * 1000,
            node_name,
            task_name: &task.name,
        };
        match self.scorer.scorer.score(&features) {
            Ok(value) => {
                self.non_finite.count(value, || {
                    format!(
                        "{} gave {value} for task `{}` on node `{node_name}`",
                        self.scorer.label, task.name
                    )
                });
                score_of(value, score_range(self.scorer.scale))
            }
            Err(ScoreStopped) => {
                self.stopped.set(true);
                0
            }
        }
    }

    fn non_finite_scores(&self) -> Option<NonFiniteScores> {
        self.non_finite.found()
    }
}
