//! External scorers (the Python binding's score functions) run through the scheduler like
//! any policy: BestFit's formula read from the features places every task where `bestfit`
//! does on the real openb default trace, memoised scores are computed once per node state
//! and task shape, a scorer that stops is not called again, and a mix is checked as a
//! parsed one.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use gapbench_model::testing::openb_traces_dir;
use gapbench_model::workload::{load_nodes_csv, load_tasks_csv};
use gapbench_model::{
    prepare, Cluster, CpuPowerProfile, InputRules, NodeOrder, PreparedWorkload, TaskOrder,
};
use gapbench_online::expr::Feature;
use gapbench_online::spec::SOLO_WEIGHT;
use gapbench_online::{
    run_arrival_sweep, ExprScale, ExternalScore, ExternalScorer, NodeTaskFeatures, PolicyKind,
    PolicyRef, PolicySpec, ScoreStopped,
};

/// The real default trace, prepared as the paper's runs are (seed 42, tune 1.3).
fn default_trace() -> (Cluster, PreparedWorkload) {
    let dir = openb_traces_dir();
    let cluster = load_nodes_csv(
        &dir.join("openb_node_list_gpu_node.csv"),
        CpuPowerProfile::Reference,
    )
    .unwrap();
    let tasks = load_tasks_csv(&dir.join("openb_pod_list_default.csv"), InputRules::Strict)
        .unwrap()
        .tasks;
    let prepared = prepare(
        &tasks,
        &cluster,
        TaskOrder::Shuffled,
        Some(1.3),
        NodeOrder::Random,
        42,
    );
    (cluster, prepared)
}

/// BestFit (reference-semantics §5.6) from the features; stops at call `stop_at`.
#[derive(Default)]
struct BestFitFromFeatures {
    calls: AtomicU64,
    stop_at: Option<u64>,
    /// Whether the memory feature was readable, at the first call.
    memory_readable: Mutex<Option<bool>>,
}

impl ExternalScore for BestFitFromFeatures {
    fn score(&self, features: &NodeTaskFeatures<'_>) -> Result<f64, ScoreStopped> {
        let call = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        if self.stop_at.is_some_and(|stop| call >= stop) {
            return Err(ScoreStopped);
        }
        self.memory_readable
            .lock()
            .unwrap()
            .get_or_insert(features.get(Feature::MemFreeMib).is_some());
        let cpu = features.get(Feature::CpuFreeAfterMilli).unwrap();
        let gpu = features.get(Feature::GpuFreeAfterMilli).unwrap();
        let mut left = 0.0;
        left += cpu / 128_000.0 * 0.5;
        left += gpu / 8_000.0 * 0.5;
        Ok((1.0 - left) * 100.0)
    }
}

fn solo(scorer: &Arc<BestFitFromFeatures>, memoize: bool) -> PolicySpec {
    let term = ExternalScorer::new("test:bestfit", ExprScale::MinMax, memoize, scorer.clone());
    PolicySpec::solo(PolicyRef::External(term))
}

#[test]
fn an_external_best_fit_places_like_bestfit_and_is_memoised() {
    let (cluster, prepared) = default_trace();
    let native = run_arrival_sweep(&cluster, &prepared, &"bestfit".parse().unwrap());
    let scorer = Arc::new(BestFitFromFeatures::default());
    let external = run_arrival_sweep(&cluster, &prepared, &solo(&scorer, true));
    assert!(
        native
            .records
            .iter()
            .filter(|r| r.placement.is_some())
            .count()
            > 8_000
    );
    assert_eq!(native.records, external.records);
    // Memoised: one call per distinct (node state, task shape), far fewer than the node
    // scores the scheduler looked up; memory features are not readable then.
    let calls = scorer.calls.load(Ordering::Relaxed);
    assert!(
        calls * 10 < external.node_scores,
        "{calls} calls for {} node scores",
        external.node_scores
    );
    assert_eq!(*scorer.memory_readable.lock().unwrap(), Some(false));
}

#[test]
fn a_stopped_scorer_is_not_called_again_and_the_sweep_ends() {
    let (cluster, prepared) = default_trace();
    let scorer = Arc::new(BestFitFromFeatures {
        stop_at: Some(10),
        ..BestFitFromFeatures::default()
    });
    let result = run_arrival_sweep(&cluster, &prepared, &solo(&scorer, false));
    assert_eq!(scorer.calls.load(Ordering::Relaxed), 10);
    assert_eq!(result.records.len(), prepared.events.len());
    assert_eq!(*scorer.memory_readable.lock().unwrap(), Some(true));
}

#[test]
fn mixes_are_checked_like_parsed_ones() {
    let scorer = Arc::new(BestFitFromFeatures::default());
    let term = PolicyRef::External(ExternalScorer::new(
        "test:bestfit",
        ExprScale::MinMax,
        true,
        scorer.clone(),
    ));
    let fgd = PolicyRef::Native(PolicyKind::Fgd);
    let mix = PolicySpec::mix(vec![(term.clone(), 300), (fgd.clone(), 700)]).unwrap();
    assert_eq!(mix.to_string(), "test:bestfit:300,fgd:700");
    assert_eq!(mix.slug(), "test_bestfitw300-fgd700");
    let error = |terms| PolicySpec::mix(terms).unwrap_err().to_string();
    assert!(error(vec![(term.clone(), 0), (fgd.clone(), 1)]).contains("weight must be positive"));
    assert!(error(vec![(term.clone(), 2_000_000)]).contains("too large"));
    assert!(error(vec![(term.clone(), 1), (term.clone(), SOLO_WEIGHT)]).contains("twice"));
    assert!(error(vec![]).contains("empty"));
    // Another scorer object is another term, even with the same label.
    let other = PolicyRef::External(ExternalScorer::new(
        "test:bestfit",
        ExprScale::MinMax,
        true,
        Arc::new(BestFitFromFeatures::default()),
    ));
    assert!(PolicySpec::mix(vec![(term, 1), (other, 1)]).is_ok());
}
