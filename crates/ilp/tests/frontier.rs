//! The Lagrangian JCT–budget envelope against the time-indexed MIP on small instances: the
//! envelope never exceeds a proven optimum, and how close it comes is measured.

use gapbench_ilp::frontier::{
    ascent_frontier, lagrangian_frontier, min_total_jct, AscentOptions, BudgetKind,
    FrontierInstance, FrontierJob, LagrangianOptions, Slots,
};
use gapbench_ilp::{SolveOptions, SolveStatus};
use gapbench_model::training::{DvfsProfile, Fidelity, TrainingJob, WorkloadClass};
use gapbench_model::{GpuModel, SyntheticGrid};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `jobs` training jobs of the performance model (V100, 1–4 GPUs, 10–50 minutes at their
/// trace size) arriving over the first hour, on `gpus` GPUs, 10-minute slots (16: long
/// enough for all of them).
fn instance(seed: u64, jobs: usize, gpus: u32, budget: BudgetKind) -> FrontierInstance {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let dvfs = DvfsProfile::of(GpuModel::V100M32).unwrap();
    let jobs = (0..jobs)
        .map(|_| {
            let class = WorkloadClass::ALL[rng.random_range(0..4)];
            let trace_gpus = [1u8, 2, 4][rng.random_range(0..3)];
            let duration_s = rng.random_range(600.0..3000.0);
            let job = TrainingJob::from_trace(class, dvfs, trace_gpus, 1000, duration_s);
            FrontierJob::of_training(&job, rng.random_range(0.0..3600.0), Fidelity::ElasticGpus)
        })
        .collect();
    FrontierInstance {
        jobs,
        gpus,
        slots: Slots::uniform(600.0, 16),
        budget,
    }
}

fn options() -> SolveOptions {
    SolveOptions {
        time_limit_s: 20.0,
        threads: Some(1),
        ..SolveOptions::default()
    }
}

/// On instances the MIP proves optimal, the envelope — the Lagrangian sweep's, and the dual
/// ascent's aimed at each budget (the trace-scale study's frontier) — is at or below the
/// optimum at every budget, from tight to generous, and within a measured distance of it.
/// Returns bound/optimum of the sweep and of the ascent.
fn check_against_mip(instance: &FrontierInstance) -> (Vec<f64>, Vec<f64>) {
    let frontier = lagrangian_frontier(instance, &LagrangianOptions::default()).unwrap();
    let budgets: Vec<f64> = [0.8, 0.9, 1.0, 1.3]
        .iter()
        .map(|fraction| frontier.unconstrained_budget * fraction)
        .collect();
    let ascent = ascent_frontier(instance, &budgets, &AscentOptions::default()).unwrap();
    let (mut ratios, mut ascent_ratios) = (Vec::new(), Vec::new());
    for (&budget, &(_, ascent_bound)) in budgets.iter().zip(&ascent.budgets) {
        let mip = min_total_jct(instance, budget, &options()).unwrap();
        let bound = frontier.total_jct_bound(budget);
        match mip.status {
            SolveStatus::Optimal => {
                let optimum = mip.total_jct_s.unwrap();
                for (what, bound, ratios) in [
                    ("Lagrangian", bound, &mut ratios),
                    ("ascent", ascent_bound, &mut ascent_ratios),
                ] {
                    let bound = bound.expect("a feasible budget has a bound");
                    assert!(
                        bound <= optimum * (1.0 + 1e-6) + 1e-6,
                        "budget {budget}: {what} {bound} above the MIP optimum {optimum}"
                    );
                    ratios.push(bound / optimum);
                }
            }
            // Not proven within the time limit: the bound still may not pass the incumbent.
            SolveStatus::TimeLimitWithIncumbent => {
                let incumbent = mip.total_jct_s.unwrap();
                assert!(bound.expect("feasible") <= incumbent * (1.0 + 1e-6));
                assert!(ascent_bound.expect("feasible") <= incumbent * (1.0 + 1e-6));
            }
            SolveStatus::Infeasible => assert!(ascent_bound.is_none()),
            other => panic!("budget {budget}: MIP ended {other:?}"),
        }
    }
    (ratios, ascent_ratios)
}

/// The worst and mean of `ratios`, printed.
fn worst_and_mean(what: &str, ratios: &[f64]) -> f64 {
    let worst = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let mean = ratios.iter().sum::<f64>() / ratios.len().max(1) as f64;
    eprintln!(
        "{what}: bound/optimum worst {worst:.3}, mean {mean:.3} over {} budgets",
        ratios.len()
    );
    worst
}

/// README states the dual ascent within 2 % of the MIP optimum at the budgets it aims at
/// (measured worst: 0.985 over 19 budgets proven optimal in one run, 0.996 over 13 in
/// another; which MIPs are proven within their time limit varies with the machine's load).
const ASCENT_WITHIN: f64 = 0.98;

#[test]
fn energy_envelope_never_exceeds_the_mip_optimum() {
    let (mut ratios, mut ascent) = (Vec::new(), Vec::new());
    for seed in 0..3 {
        let (sweep, aimed) = check_against_mip(&instance(seed, 6, 8, BudgetKind::Energy));
        ratios.extend(sweep);
        ascent.extend(aimed);
    }
    assert!(ratios.len() >= 6, "{ratios:?}");
    let worst = worst_and_mean("energy", &ratios);
    let ascent_worst = worst_and_mean("energy, dual ascent", &ascent);
    assert!(ascent_worst >= ASCENT_WITHIN, "dual ascent: {ascent:?}");
    // README and ARCHITECTURE state "within 3 %" (measured: worst 0.975, mean 0.993).
    assert!(
        worst >= 0.97,
        "energy envelope {worst:.3} of the MIP optimum: {ratios:?}"
    );
}

#[test]
fn carbon_envelope_never_exceeds_the_mip_optimum() {
    let grid = SyntheticGrid::CAISO_LIKE.generate("caiso-like", 48, 3);
    let (mut ratios, mut ascent) = (Vec::new(), Vec::new());
    for seed in 10..13 {
        let (sweep, aimed) =
            check_against_mip(&instance(seed, 8, 8, BudgetKind::Carbon(grid.clone())));
        ratios.extend(sweep);
        ascent.extend(aimed);
    }
    assert!(!ratios.is_empty());
    let worst = worst_and_mean("carbon", &ratios);
    let ascent_worst = worst_and_mean("carbon, dual ascent", &ascent);
    assert!(ascent_worst >= ASCENT_WITHIN, "dual ascent: {ascent:?}");
    // README and ARCHITECTURE state "within 3 %" (measured: worst 0.972).
    assert!(
        worst >= 0.97,
        "carbon envelope {worst:.3} of the MIP optimum: {ratios:?}"
    );
}

/// Below the least budget no schedule exists: the envelope says so, and so does the MIP.
#[test]
fn a_budget_below_the_least_is_infeasible_for_both() {
    let instance = instance(5, 6, 8, BudgetKind::Energy);
    let frontier = lagrangian_frontier(&instance, &LagrangianOptions::default()).unwrap();
    let too_small = instance.least_budget() * 0.99;
    assert_eq!(frontier.total_jct_bound(too_small), None);
    let mip = min_total_jct(&instance, too_small, &options()).unwrap();
    assert_eq!(mip.status, SolveStatus::Infeasible);
    // The bound never rises with the budget.
    let budgets: Vec<f64> = (0..20)
        .map(|k| instance.least_budget() * (1.0 + 0.1 * k as f64))
        .collect();
    let bounds: Vec<f64> = budgets
        .iter()
        .map(|b| frontier.total_jct_bound(*b).unwrap())
        .collect();
    assert!(bounds.windows(2).all(|w| w[1] <= w[0] + 1e-9), "{bounds:?}");
}
