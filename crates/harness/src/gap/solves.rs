//! The solves of a gap study's instance, apart from how a study groups and chains them:
//! where each solve starts, the end points of the front (least power, least
//! fragmentation), the other objectives, and the front's ends taken into the reports.

use gapbench_ilp::{
    heuristic_value, Method, Objective, PowerFragFront, Session, Snapshot, SolveOptions,
    SolveReport, SolveStatus,
};

use super::GapMethod;

/// The front's walks and capped solves can find a placement of less power, or less
/// fragmentation, than the end points' solves: `reports` (power, fragmentation) take the
/// front's ends where they are better, so the table and the front show the best known.
pub(super) fn improve_by_front_ends(
    reports: &mut [(Objective, SolveReport)],
    front: &PowerFragFront,
    mip_rel_gap: f64,
) {
    for (objective, report) in reports {
        let (placement, value) = match objective {
            Objective::Power => (
                &front.least_power,
                front.points.first().map(|p| p.power_watts),
            ),
            Objective::Frag => (&front.least_frag, front.points.last().map(|p| p.frag_milli)),
            Objective::Alloc => continue,
        };
        if let Some(value) = value {
            report.improve_min(placement, value, mip_rel_gap);
        }
    }
}

/// The member snapshot whose own placement is best for `objective` (the first of equals):
/// the start of its solve. Every start gave the old per-policy solves their own chance;
/// the best of them keeps most of it in one solve.
pub(super) fn best_start<'s>(
    members: &[&'s Snapshot<'s>],
    objective: Objective,
) -> &'s Snapshot<'s> {
    ranked_starts(members, objective)[0]
}

/// The member snapshots, their own placements best first for `objective` (equals in their
/// order).
pub(super) fn ranked_starts<'s>(
    members: &[&'s Snapshot<'s>],
    objective: Objective,
) -> Vec<&'s Snapshot<'s>> {
    let value = |snapshot: &Snapshot| match objective {
        // Allocation is maximised.
        Objective::Alloc => -heuristic_value(snapshot, objective),
        Objective::Power | Objective::Frag => heuristic_value(snapshot, objective),
    };
    let mut ranked = members.to_vec();
    ranked.sort_by(|a, b| value(a).total_cmp(&value(b)));
    ranked
}

/// The least power and the least fragmentation, each where `wants` it, started from the
/// snapshots `(power, frag)` (one instance; fragmentation's ranked, best first): per node
/// (`exact`: fragmentation pooled with column generation's bound, started from the others
/// and power's placement too) or by column generation. Power is solved first: its placement
/// is a good warm start for fragmentation, and the front reuses both.
pub(super) fn end_points(
    (power_start, frag_starts): (&Snapshot, &[&Snapshot]),
    exact: bool,
    wants: impl Fn(Objective) -> bool,
    options: &SolveOptions,
    session: &mut Session,
) -> (Option<SolveReport>, Option<SolveReport>) {
    let (power_method, frag_method) = if exact {
        (Method::PerNode, Method::Pooled)
    } else {
        (Method::ColumnGeneration, Method::ColumnGeneration)
    };
    let least_power = wants(Objective::Power).then(|| {
        solved(
            session,
            power_start,
            Objective::Power,
            power_method,
            options,
            &[],
        )
    });
    let least_frag = wants(Objective::Frag).then(|| {
        let others: Vec<_> = if exact {
            let members = frag_starts[1..].iter().map(|s| s.heuristic.clone());
            let power = least_power.iter().map(|r| r.placement.clone());
            members.chain(power).collect()
        } else {
            Vec::new()
        };
        solved(
            session,
            frag_starts[0],
            Objective::Frag,
            frag_method,
            options,
            &others,
        )
    });
    (least_power, least_frag)
}

/// One objective by `method` where the end points of the front are not involved:
/// allocation exactly or by column generation, and every objective by relaxation.
pub(super) fn solve_objective(
    method: GapMethod,
    objective: Objective,
    snapshot: &Snapshot,
    options: &SolveOptions,
    session: &mut Session,
) -> SolveReport {
    let method = match (method, objective) {
        (GapMethod::PerNode, _) => Method::PerNode,
        (GapMethod::ColumnGeneration | GapMethod::Auto, _) => Method::ColumnGeneration,
        (GapMethod::Relaxation, Objective::Power | Objective::Alloc) => Method::Relaxation,
        (GapMethod::Relaxation, Objective::Frag) => {
            return SolveReport {
                objective,
                status: SolveStatus::Unsupported(
                    "no by-type relaxation of fragmentation: use --method cg".into(),
                ),
                incumbent: None,
                bound: None,
                mip_gap: None,
                solve_seconds: 0.0,
                placement: Vec::new(),
                secondary_power_watts: None,
            }
        }
    };
    solved(session, snapshot, objective, method, options, &[])
}

/// `objective` solved by `method` on the instance `snapshot` poses, started from its
/// placement (and, for fragmentation, the least fragmented of `others`). A solve that
/// cannot run is a report without a solution whose status is the error, as rows record it.
fn solved(
    session: &mut Session,
    snapshot: &Snapshot,
    objective: Objective,
    method: Method,
    options: &SolveOptions,
    others: &[Vec<Option<gapbench_model::Placement>>],
) -> SolveReport {
    let clock = std::time::Instant::now();
    let (problem, start) = snapshot.problem(options);
    let start = start.other_starts(others.to_vec());
    session
        .solve(&problem, objective, method, &start)
        .unwrap_or_else(|error| SolveReport {
            objective,
            status: SolveStatus::Error(error.to_string()),
            incumbent: None,
            bound: None,
            mip_gap: None,
            solve_seconds: clock.elapsed().as_secs_f64(),
            placement: Vec::new(),
            secondary_power_watts: None,
        })
}
