//! The gap study's tests: one four-policy study on a 4-node sample, and the rows' plumbing.

use std::collections::BTreeMap;

use gapbench_ilp::{PowerFragFront, SolveStatus};
use gapbench_model::{NodeOrder, TaskOrder};

use super::*;

fn run(policy: &str) -> RunSettings {
    RunSettings::new(
        policy.parse().unwrap(),
        Some(1.3),
        TaskOrder::Shuffled,
        NodeOrder::Random,
    )
}

/// Four policies on a 4-node sample of the embedded workload, at 50 and 130 %.
struct FourPolicies {
    workload: Workload,
    settings: GapSettings,
    runs: Vec<RunSettings>,
    rows: Vec<GapRow>,
    fronts: Vec<FrontRow>,
}

fn four_policies() -> &'static FourPolicies {
    static STUDY: std::sync::OnceLock<FourPolicies> = std::sync::OnceLock::new();
    STUDY.get_or_init(|| {
        let workload = Workload::embedded();
        let settings = GapSettings {
            checkpoints: vec![50.0, 130.0],
            objectives: vec![Objective::Power, Objective::Alloc, Objective::Frag],
            sample_nodes: Some(4),
            time_limit_s: 4.0,
            mip_rel_gap: 0.0,
            threads: Some(1),
            pareto_points: 3,
            front_time_limit_s: None,
            exact_max_nodes: 8,
        };
        let runs: Vec<RunSettings> = ["fgd", "pwr", "bestfit", "random"]
            .into_iter()
            .map(run)
            .collect();
        let (rows, fronts) = gap_studies(&workload, &runs, &settings, 42, true).unwrap();
        FourPolicies {
            workload,
            settings,
            runs,
            rows,
            fronts,
        }
    })
}

#[test]
fn each_instance_is_solved_once_for_every_policy_that_poses_it() {
    let FourPolicies {
        settings,
        runs,
        rows,
        ..
    } = four_policies();
    assert_eq!(rows.len(), 4 * 2 * 3);
    // Policy by policy, checkpoint by checkpoint, objective by objective.
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row.policy, runs[i / 6].policy);
        assert_eq!(row.checkpoint_pct, settings.checkpoints[i / 3 % 2]);
        assert_eq!(row.objective, settings.objectives[i % 3]);
        // The own placement is a placement of the instance: never better than optimal.
        let incumbent = row.incumbent.unwrap();
        match row.objective {
            Objective::Alloc => assert!(incumbent >= row.heuristic_value),
            _ => assert!(incumbent <= row.heuristic_value + 1e-6),
        }
    }
    // One instance, one solve: equal keys share the solve's value, bound and seconds.
    let mut solves: BTreeMap<(String, String), Vec<&GapRow>> = BTreeMap::new();
    for row in rows {
        let key = (
            format!("{} {}", row.checkpoint_pct, row.objective.name()),
            row.instance.clone(),
        );
        solves.entry(key).or_default().push(row);
    }
    for same in solves.values() {
        for row in same {
            let first = same[0];
            assert_eq!(
                (row.incumbent, row.bound, row.solve_s),
                (first.incumbent, first.bound, first.solve_s)
            );
        }
    }
    // Half full, nobody failed a task: the four policies pose one instance.
    let at_half = |objective: Objective| {
        solves
            .keys()
            .filter(|(k, _)| *k == format!("50 {}", objective.name()))
            .count()
    };
    assert_eq!(at_half(Objective::Power), 1);
    assert_eq!(at_half(Objective::Frag), 1);
}

#[test]
fn rows_take_the_front_ends_where_they_are_better() {
    let report = |objective, incumbent: f64, bound: f64| SolveReport {
        objective,
        status: SolveStatus::TimeLimitWithIncumbent,
        incumbent: Some(incumbent),
        bound: Some(bound),
        mip_gap: None,
        solve_seconds: 10.0,
        placement: Vec::new(),
        secondary_power_watts: None,
    };
    let point = |label: &str, power_watts: f64, frag_milli: f64| FrontPoint {
        label: label.into(),
        power_cap_watts: None,
        power_watts,
        frag_milli,
        frag_bound_milli: None,
        status: SolveStatus::TimeLimitWithIncumbent,
        solve_seconds: 0.0,
    };
    let placement = |node| {
        vec![Some(gapbench_model::Placement {
            node,
            devices: gapbench_model::DeviceSet::EMPTY,
        })]
    };
    let front = PowerFragFront {
        points: vec![
            point("min_power", 1_000.0, 50.0),
            point("min_frag", 1_100.0, 30.0),
        ],
        least_power: placement(1),
        least_frag: placement(2),
    };
    let mut reports = vec![
        (Objective::Power, report(Objective::Power, 1_004.0, 996.0)),
        (Objective::Alloc, report(Objective::Alloc, 7.0, 8.0)),
        (Objective::Frag, report(Objective::Frag, 29.0, 28.0)),
    ];
    improve_by_front_ends(&mut reports, &front, 0.005);
    let power = &reports[0].1;
    assert_eq!(power.incumbent, Some(1_000.0));
    assert_eq!(power.placement, placement(1));
    assert_eq!(power.status, SolveStatus::GapLimit, "0.4 % ≤ 0.5 %");
    assert_eq!(
        reports[1].1.incumbent,
        Some(7.0),
        "allocation is not the front's"
    );
    let frag = &reports[2].1;
    assert_eq!(
        frag.incumbent,
        Some(29.0),
        "the solve's 29 beats the front's 30"
    );
    assert!(frag.placement.is_empty());
}

/// The first policy follows its own chain of solves: its rows pose the instances of its own
/// study, and the front is its own, drawn once, with the point of every policy of its
/// instance. What the two studies' solves prove within their clocks may differ on a slower
/// machine, so the solves are compared by what holds on any: the optimum lies in both
/// intervals, both agree where both proved it, and every front point is a placement of the
/// instance, so never better than either study's proven bounds.
#[test]
fn the_first_policy_keeps_its_own_solves_and_front() {
    let FourPolicies {
        workload,
        settings,
        runs,
        rows,
        fronts,
    } = four_policies();
    let (own, own_fronts) = gap_study(workload, &runs[0], settings, 42, &mut |_| {}).unwrap();
    assert_eq!(own.len(), 6);
    for (mine, shared) in own.iter().zip(&rows[..6]) {
        let what = format!("{} % {}", mine.checkpoint_pct, mine.objective.name());
        assert_eq!(
            (
                &mine.instance,
                mine.checkpoint_pct,
                mine.objective,
                mine.heuristic_value
            ),
            (
                &shared.instance,
                shared.checkpoint_pct,
                shared.objective,
                shared.heuristic_value
            ),
            "{what}: not the same instance"
        );
        assert_solves_agree(mine, shared, &what);
    }
    // Both fronts are of the instance both studies solved: every solved point is a
    // placement of it, so neither below the least power nor the least fragmentation
    // either study proved.
    for front in [&fronts[..], &own_fronts[..]] {
        for point in front.iter().filter(|p| !p.is_heuristic()) {
            let proven = |objective: Objective| {
                own.iter()
                    .chain(&rows[..6])
                    .filter(|r| {
                        r.checkpoint_pct == point.checkpoint_pct && r.objective == objective
                    })
                    .filter_map(|r| r.bound)
                    .fold(f64::NEG_INFINITY, f64::max)
            };
            assert_eq!(point.policy, runs[0].policy, "{point:?}");
            assert!(
                point.power_watts >= proven(Objective::Power) - 1e-6,
                "{point:?} below the proven least power"
            );
            assert!(
                point.frag_milli >= proven(Objective::Frag) - 1e-6,
                "{point:?} below the proven least fragmentation"
            );
            if let Some(bound) = point.frag_bound_milli {
                assert!(bound <= point.frag_milli + 1e-6, "{point:?}");
            }
        }
    }
    // The heuristic's own points come from the sweep alone: the same in both.
    let heuristic_points = |fronts: &[FrontRow]| -> Vec<_> {
        fronts
            .iter()
            .filter(|p| p.is_heuristic() && p.policy == runs[0].policy)
            .map(|p| (p.checkpoint_pct, p.power_watts, p.frag_milli))
            .collect()
    };
    let own_heuristic = heuristic_points(&own_fronts);
    assert_eq!(own_heuristic.len(), settings.checkpoints.len());
    assert_eq!(heuristic_points(fronts), own_heuristic);
    let instance = |policy: &str, checkpoint: f64| {
        let row = rows
            .iter()
            .find(|r| r.policy == policy && r.checkpoint_pct == checkpoint);
        row.unwrap().instance.clone()
    };
    for point in fronts.iter().filter(|p| p.is_heuristic()) {
        let first = instance(&runs[0].policy, point.checkpoint_pct);
        assert_eq!(
            instance(&point.policy, point.checkpoint_pct),
            first,
            "{point:?}"
        );
    }
    let own_points_at_half = fronts
        .iter()
        .filter(|p| p.is_heuristic() && p.checkpoint_pct == 50.0)
        .count();
    assert_eq!(own_points_at_half, 4);
    // The table and the front agree: a row's incumbent is never worse than the front's
    // end for its objective (the front's walks can improve on the solves' placements).
    for end in fronts.iter().filter(|p| p.policy == runs[0].policy) {
        let row = |objective: Objective| {
            rows.iter()
                .find(|r| {
                    r.policy == runs[0].policy
                        && r.checkpoint_pct == end.checkpoint_pct
                        && r.objective == objective
                })
                .unwrap()
        };
        let (value, objective) = match end.point.as_str() {
            "min_power" => (end.power_watts, Objective::Power),
            "min_frag" => (end.frag_milli, Objective::Frag),
            _ => continue,
        };
        let incumbent = row(objective).incumbent.unwrap();
        assert!(incumbent <= value + 1e-6, "{end:?} better than {incumbent}");
    }
}

/// Two solves of one instance, by what holds whatever their clocks stopped: a status that
/// says `optimal` has its bound at its incumbent; the optimum lies in both intervals, so
/// each bound is on its side of the other's incumbent; where both proved it, they agree.
fn assert_solves_agree(a: &GapRow, b: &GapRow, what: &str) {
    let tolerance = |value: f64| 1e-6 * value.abs().max(1.0);
    for row in [a, b] {
        if row.status == SolveStatus::Optimal {
            let (incumbent, bound) = (row.incumbent.unwrap(), row.bound.unwrap());
            assert!(
                (incumbent - bound).abs() <= tolerance(incumbent),
                "{what}: optimal, yet [{bound}, {incumbent}]"
            );
        }
    }
    for (bound, incumbent) in [(a.bound, b.incumbent), (b.bound, a.incumbent)] {
        let (Some(bound), Some(incumbent)) = (bound, incumbent) else {
            continue;
        };
        let passes = if a.objective.maximise() {
            bound < incumbent - tolerance(incumbent)
        } else {
            bound > incumbent + tolerance(incumbent)
        };
        assert!(
            !passes,
            "{what}: a proven bound {bound} passes an incumbent {incumbent}"
        );
    }
    if a.status == SolveStatus::Optimal && b.status == SolveStatus::Optimal {
        let (x, y) = (a.incumbent.unwrap(), b.incumbent.unwrap());
        assert!(
            (x - y).abs() <= tolerance(x),
            "{what}: both proved, {x} ≠ {y}"
        );
    }
}

/// A sub-cluster study solves its checkpoints apart (fresh chains), so the rows do not
/// depend on whether they ran side by side; its work counts every sweep and solve, and its
/// critical path — one sweep, then the longest checkpoint's longest group — is shorter.
#[test]
fn side_by_side_or_not_a_sub_cluster_study_gives_the_same_rows_and_counts_its_work() {
    let FourPolicies {
        workload,
        settings,
        runs,
        rows,
        ..
    } = four_policies();
    let alone = gap_studies_with_work(workload, runs, settings, 42, false).unwrap();
    assert_eq!(alone.rows.len(), rows.len());
    for (one, other) in alone.rows.iter().zip(rows) {
        let what = format!(
            "{} {} % {}",
            one.policy,
            one.checkpoint_pct,
            one.objective.name()
        );
        assert_eq!(
            (&one.instance, &one.policy, one.heuristic_value),
            (&other.instance, &other.policy, other.heuristic_value),
            "{what}"
        );
        assert_solves_agree(one, other, &what);
    }
    let work = alone.work;
    assert!(work.core_seconds > 0.0, "{work:?}");
    assert!(
        work.critical_path_seconds <= work.core_seconds + 1e-9,
        "{work:?}"
    );
    // Four sweeps and (at two checkpoints) at least two groups each: never one chain.
    assert!(
        work.critical_path_seconds < work.core_seconds,
        "{work:?}: the study is one chain"
    );
}
