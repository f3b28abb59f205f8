//! EaCO's energy bound on cases small enough to solve by hand (the module doc of
//! `gapbench_bounds::eaco_bound` has the formulas).

use gapbench_bounds::eaco_bound::{
    eaco_energy_bound, CoPattern, EacoBoundInput, EacoBoundOptions, EacoJob, LpStatus,
};
use gapbench_bounds::BoundError;

const HOUR: f64 = 3600.0;

/// One class, one node: alone 100 W above base at full speed, two together 150 W at 1.5×.
fn one_node(jobs: Vec<EacoJob>, base_watts: f64) -> EacoBoundInput {
    EacoBoundInput {
        jobs,
        patterns: vec![
            CoPattern {
                counts: vec![1],
                slowdown: 1.0,
                extra_watts: 100.0,
            },
            CoPattern {
                counts: vec![2],
                slowdown: 1.5,
                extra_watts: 150.0,
            },
        ],
        nodes: 1,
        base_watts,
    }
}

fn job(release_h: f64, due_h: f64, work_h: f64) -> EacoJob {
    EacoJob {
        class: 0,
        release_s: release_h * HOUR,
        due_s: due_h * HOUR,
        work_s: work_h * HOUR,
    }
}

fn half_hour_slots() -> EacoBoundOptions {
    EacoBoundOptions {
        slot_s: Some(0.5 * HOUR),
        ..EacoBoundOptions::default()
    }
}

/// Two 1-hour jobs due at 1.5 h on one node cannot run one after the other: the best
/// schedule shares the node for 1.5 h (150 W × 1.5 h = 0.225 kWh). By hand: with `A`
/// node-hours alone and `Q` shared, work `A + 2Q/1.5 ≥ 2`, capacity `A + Q ≤ 1.5` force
/// `Q ≥ 1.5`, so no schedule uses less.
#[test]
fn deadlines_force_sharing_and_the_bound_is_the_optimum() {
    let input = one_node(vec![job(0.0, 1.5, 1.0), job(0.0, 1.5, 1.0)], 0.0);
    let bound = eaco_energy_bound(&input, &half_hour_slots()).unwrap();
    assert_eq!(bound.lp_status, LpStatus::Optimal);
    assert!((bound.lp_kwh.unwrap() - 0.225).abs() < 1e-6, "{bound:?}");
    // The closed form knows no node count: each job could run alone (100 W per unit of
    // work) within 1.5 h, so it says 0.2 kWh, a weaker valid bound.
    assert!((bound.closed_form_kwh - 0.2).abs() < 1e-9, "{bound:?}");
    assert!((bound.lower_kwh - 0.225).abs() < 1e-6);
    assert_eq!(bound.slots, 3);
}

/// Due at 2 h, they run one after the other, each alone: 2 × 100 W × 1 h = 0.2 kWh, the
/// optimum (sharing costs 112.5 W per unit of work, more than 100). The base power of the
/// node is paid from the first release to the earliest possible end (1 h): 10 W × 1 h.
#[test]
fn loose_deadlines_run_alone_and_pay_the_base_to_the_earliest_end() {
    let input = one_node(vec![job(0.0, 2.0, 1.0), job(0.0, 2.0, 1.0)], 10.0);
    let bound = eaco_energy_bound(&input, &half_hour_slots()).unwrap();
    assert!((bound.base_kwh - 0.01).abs() < 1e-12);
    assert!((bound.lp_kwh.unwrap() - 0.21).abs() < 1e-6, "{bound:?}");
    assert!((bound.closed_form_kwh - 0.21).abs() < 1e-9, "{bound:?}");
}

/// Jobs whose windows never meet cannot share, however cheap sharing is: the LP knows it
/// (0.2 kWh, each alone, the optimum), the closed form does not (it prices both at the
/// shared pattern's 60 W per unit of work: 0.12 kWh) and stays a weaker valid bound.
#[test]
fn the_lp_knows_who_can_meet() {
    let mut input = one_node(vec![job(0.0, 1.0, 1.0), job(2.0, 3.0, 1.0)], 0.0);
    input.patterns[1] = CoPattern {
        counts: vec![2],
        slowdown: 1.0,
        extra_watts: 120.0,
    };
    let bound = eaco_energy_bound(&input, &half_hour_slots()).unwrap();
    assert!((bound.closed_form_kwh - 0.12).abs() < 1e-9, "{bound:?}");
    assert!((bound.lp_kwh.unwrap() - 0.2).abs() < 1e-6, "{bound:?}");
    assert!((bound.lower_kwh - 0.2).abs() < 1e-6);
}

/// Three 1-hour jobs due at 1 h on one node: no schedule exists (the node holds two).
#[test]
fn an_impossible_window_is_reported_infeasible() {
    let jobs = vec![job(0.0, 1.0, 1.0), job(0.0, 1.0, 1.0), job(0.0, 1.0, 1.0)];
    let bound = eaco_energy_bound(&one_node(jobs, 0.0), &half_hour_slots()).unwrap();
    assert_eq!(bound.lp_status, LpStatus::Infeasible);
    assert_eq!(bound.lower_kwh, f64::INFINITY);
}

#[test]
fn bad_input_is_refused_with_its_reason() {
    let mut input = one_node(vec![job(0.0, 1.0, 1.0)], 0.0);
    input.jobs[0].class = 3;
    let err = eaco_energy_bound(&input, &half_hour_slots()).unwrap_err();
    assert!(
        matches!(err, BoundError::Input(ref reason) if reason.contains("job 0")),
        "{err:?}"
    );
}
