//! The Lagrangian JCT–budget envelope against the time-indexed MIP on small instances: the
//! envelope never exceeds a proven optimum, and how close it comes is measured.

use gapbench_bounds::frontier::{
    ascent_frontier, column_generation_frontier, lagrangian_frontier, min_total_jct, AscentOptions,
    BudgetKind, ColumnGenerationOptions, FrontierInstance, FrontierJob, LagrangianOptions, Slots,
    WarmStart,
};
use gapbench_ilp::{SolveOptions, SolveStatus};
use gapbench_model::training::{DvfsProfile, Fidelity, TrainingJob, WorkloadClass};
use gapbench_model::{GpuModel, SyntheticGrid};
use gapbench_results::ColgenStatus;
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

/// The envelope — the Lagrangian sweep's, and the dual ascent's aimed at each budget (the
/// trace-scale study's frontier) — against the time-indexed MIP at budgets from tight to
/// generous. What the MIP proves within its clock varies with the machine, so every budget
/// is checked by what holds whatever it proved: the envelope is at most the MIP's
/// incumbent, and at least `within` of the MIP's proven bound (the envelope is within
/// `within` of the optimum, which is at least that bound); where the MIP proved the
/// optimum, that is the measured distance itself. Returns bound/optimum of the sweep and
/// of the ascent where the MIP proved the optimum, and how many budgets were checked.
fn check_against_mip(
    instance: &FrontierInstance,
    within: f64,
    ascent_within: f64,
) -> (Vec<f64>, Vec<f64>, usize) {
    let frontier = lagrangian_frontier(instance, &LagrangianOptions::default()).unwrap();
    let budgets: Vec<f64> = [0.8, 0.9, 1.0, 1.3]
        .iter()
        .map(|fraction| frontier.unconstrained_budget * fraction)
        .collect();
    let ascent = ascent_frontier(instance, &budgets, &AscentOptions::default()).unwrap();
    let (mut ratios, mut ascent_ratios, mut checked) = (Vec::new(), Vec::new(), 0);
    for (&budget, &(_, ascent_bound)) in budgets.iter().zip(&ascent.budgets) {
        let mip = min_total_jct(instance, budget, &options()).unwrap();
        let bound = frontier.total_jct_bound(budget);
        match mip.status {
            SolveStatus::Optimal | SolveStatus::TimeLimitWithIncumbent => {
                let incumbent = mip.total_jct_s.unwrap();
                // No finite bound only where the clock stopped HiGHS before its root LP.
                let mip_bound = mip.bound_s.unwrap_or(f64::NEG_INFINITY);
                let proven = mip.status == SolveStatus::Optimal;
                for (what, bound, within, ratios) in [
                    ("Lagrangian", bound, within, &mut ratios),
                    ("ascent", ascent_bound, ascent_within, &mut ascent_ratios),
                ] {
                    let bound = bound.expect("a feasible budget has a bound");
                    assert!(
                        bound <= incumbent * (1.0 + 1e-6) + 1e-6,
                        "budget {budget}: {what} {bound} above the MIP's schedule {incumbent}"
                    );
                    assert!(
                        bound >= within * mip_bound * (1.0 - 1e-9),
                        "budget {budget}: {what} {bound} below {within} of the MIP's proven {mip_bound} ({})",
                        mip.status.label()
                    );
                    if proven {
                        ratios.push(bound / incumbent);
                    }
                }
            }
            SolveStatus::Infeasible => assert!(ascent_bound.is_none()),
            other => panic!("budget {budget}: MIP ended {other:?}"),
        }
        checked += 1;
    }
    (ratios, ascent_ratios, checked)
}

/// The worst and mean of `ratios`, printed.
fn worst_and_mean(what: &str, ratios: &[f64]) {
    let worst = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let mean = ratios.iter().sum::<f64>() / ratios.len().max(1) as f64;
    eprintln!(
        "{what}: bound/optimum worst {worst:.3}, mean {mean:.3} over {} budgets",
        ratios.len()
    );
}

/// docs/budgets.md states the dual ascent within 2 % of the MIP optimum at the budgets it aims at
/// (measured worst: 0.985 over 19 budgets proven optimal in one run, 0.996 over 13 in
/// another; which MIPs are proven within their time limit varies with the machine's load,
/// so unproven budgets are held to 2 % of the MIP's proven bound instead).
const ASCENT_WITHIN: f64 = 0.98;

/// docs/budgets.md states the Lagrangian envelope "within 3 %" of the MIP optimum
/// (measured: worst 0.975, mean 0.993 for energy; worst 0.972 for carbon).
const ENVELOPE_WITHIN: f64 = 0.97;

/// Every budget of every seed checked against the MIP (4 budgets each); prints how close
/// the envelopes came where the MIP proved the optimum.
fn check_seeds(what: &str, instances: impl Iterator<Item = FrontierInstance>, seeds: usize) {
    let (mut ratios, mut ascent, mut checked) = (Vec::new(), Vec::new(), 0);
    for instance in instances {
        let (sweep, aimed, budgets) = check_against_mip(&instance, ENVELOPE_WITHIN, ASCENT_WITHIN);
        ratios.extend(sweep);
        ascent.extend(aimed);
        checked += budgets;
    }
    assert_eq!(checked, 4 * seeds, "{what}: every budget is checked");
    worst_and_mean(what, &ratios);
    worst_and_mean(&format!("{what}, dual ascent"), &ascent);
}

#[test]
fn energy_envelope_never_exceeds_the_mip_optimum() {
    let instances = (0..3).map(|seed| instance(seed, 6, 8, BudgetKind::Energy));
    check_seeds("energy", instances, 3);
}

#[test]
fn carbon_envelope_never_exceeds_the_mip_optimum() {
    let grid = SyntheticGrid::CAISO_LIKE.generate("caiso-like", 48, 3);
    let instances = (10..13).map(|seed| instance(seed, 8, 8, BudgetKind::Carbon(grid.clone())));
    check_seeds("carbon", instances, 3);
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

/// Column generation from the dual ascent, stabilised or not, on instances where the MIP
/// is solved: at every budget its bound is at most the MIP's schedule (valid) and at most
/// its own master LP, and it converges — the bound within 0.5 % of the master LP, which is
/// at least the LP optimum — so both smoothings end within 0.5 % of each other. Rounds are
/// the limit here, not the clock (these instances take milliseconds).
#[test]
fn stabilised_column_generation_from_the_ascent_converges_below_the_mip() {
    let grid = SyntheticGrid::CAISO_LIKE.generate("caiso-like", 48, 3);
    for (seed, budget) in [(0, BudgetKind::Energy), (11, BudgetKind::Carbon(grid))] {
        let instance = instance(seed, 8, 8, budget);
        let frontier = lagrangian_frontier(&instance, &LagrangianOptions::default()).unwrap();
        let budgets: Vec<f64> = [0.85, 0.95, 1.1]
            .iter()
            .map(|fraction| frontier.unconstrained_budget * fraction)
            .filter(|&b| b > instance.least_budget())
            .collect();
        assert_eq!(budgets.len(), 3, "seed {seed}: every budget is feasible");
        let solve = |smoothing: f64| {
            let options = ColumnGenerationOptions {
                warm_start: WarmStart::Ascent(AscentOptions::default()),
                smoothing,
                rounds_per_budget: 200,
                time_limit_s: 600.0,
                ..ColumnGenerationOptions::default()
            };
            column_generation_frontier(&instance, &budgets, &[], &options).unwrap()
        };
        let (stabilised, plain) = (solve(0.8), solve(0.0));
        for (k, &budget) in budgets.iter().enumerate() {
            let mip = min_total_jct(&instance, budget, &options()).unwrap();
            for result in [&stabilised, &plain] {
                let point = &result.budgets[k];
                assert_eq!(
                    point.status(),
                    ColgenStatus::Converged,
                    "seed {seed}: {point:?}"
                );
                let bound = point.total_jct_bound_s.unwrap();
                let master = point.master_total_jct_s.unwrap();
                // The master is solved by interior point (relative tolerance near 1e-8).
                assert!(bound <= master * (1.0 + 1e-6), "seed {seed}: {point:?}");
                assert!(master - bound <= 0.005 * master, "seed {seed}: {point:?}");
                if let Some(schedule) = mip.total_jct_s {
                    assert!(
                        bound <= schedule * (1.0 + 1e-6),
                        "seed {seed}: bound {bound} above the MIP's schedule {schedule}"
                    );
                }
            }
            let (a, b) = (
                stabilised.budgets[k].total_jct_bound_s.unwrap(),
                plain.budgets[k].total_jct_bound_s.unwrap(),
            );
            assert!((a - b).abs() <= 0.005 * a.max(b), "seed {seed}: {a} vs {b}");
        }
    }
}

/// At every budget above the least one, a schedule of the problem is found — the list
/// schedule in the LP's order alone (`incumbent_nodes = 0`) or with a branch and bound on
/// top — every job once, within every slot and the budget (checked where it is built),
/// on or above the bound; the search starts from the list schedule, so it is never worse.
#[test]
fn a_schedule_is_found_at_every_budget_on_or_above_the_bound() {
    let grid = SyntheticGrid::CAISO_LIKE.generate("caiso-like", 48, 3);
    for (seed, budget) in [(0, BudgetKind::Energy), (11, BudgetKind::Carbon(grid))] {
        let instance = instance(seed, 8, 8, budget);
        let frontier = lagrangian_frontier(&instance, &LagrangianOptions::default()).unwrap();
        let budgets: Vec<f64> = [0.8, 0.95, 1.1]
            .iter()
            .map(|fraction| frontier.unconstrained_budget * fraction)
            .filter(|&b| b > instance.least_budget())
            .collect();
        assert_eq!(budgets.len(), 3, "seed {seed}: every budget is feasible");
        let schedules = |nodes: usize| -> Vec<f64> {
            let options = ColumnGenerationOptions {
                warm_start: WarmStart::Ascent(AscentOptions::default()),
                rounds_per_budget: 200,
                time_limit_s: 600.0,
                incumbent_nodes: Some(nodes),
                ..ColumnGenerationOptions::default()
            };
            let result = column_generation_frontier(&instance, &budgets, &[], &options).unwrap();
            result
                .budgets
                .iter()
                .map(|point| {
                    let schedule = point.incumbent_total_jct_s.expect("a list schedule");
                    let bound = point.total_jct_bound_s.unwrap();
                    assert!(bound <= schedule * (1.0 + 1e-9), "seed {seed}: {point:?}");
                    schedule
                })
                .collect()
        };
        let (listed, searched) = (schedules(0), schedules(20));
        for (list, search) in listed.iter().zip(&searched) {
            assert!(
                search <= &(list * (1.0 + 1e-9)),
                "seed {seed}: {search} > {list}"
            );
        }
    }
}
