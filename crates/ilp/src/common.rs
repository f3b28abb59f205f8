//! Plumbing shared by the formulations: hand a built model to HiGHS with its warm start,
//! and turn HiGHS's columns back into a checked, independently evaluated placement.

use gapbench_model::Placement;
use good_lp::{Expression, IntoAffineExpression, SolverModel};

use crate::model::PlacementModel;
use crate::snapshot::{check_assignment, Snapshot};
use crate::solve::{run_highs, Candidate, RawSolve, SolveOptions};

/// Minimise or maximise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sense {
    Minimise,
    Maximise,
}

/// Moves the model's variables and rows into a HiGHS problem with `objective` and solves it
/// from `start`. The model keeps its variable index, for decoding.
///
/// The warm start is checked against every bound and row first: HiGHS silently ignores an
/// infeasible start, and a start that is not feasible means the model or the encoding of the
/// heuristic's placement is wrong — reported as an error rather than a weaker solve.
pub(crate) fn solve(
    model: &mut PlacementModel,
    sense: Sense,
    objective: Expression,
    start: &[f64],
    options: &SolveOptions,
) -> RawSolve {
    if let Err(message) = check_start(model, start) {
        return RawSolve {
            status: crate::solve::RawStatus::Error(message),
            objective: None,
            bound: None,
            columns: None,
            seconds: 0.0,
        };
    }
    let vars = std::mem::take(&mut model.cols.vars);
    let unsolved = match sense {
        Sense::Minimise => vars.minimise(objective),
        Sense::Maximise => vars.maximise(objective),
    };
    let mut problem = unsolved.using(good_lp::highs);
    for row in std::mem::take(&mut model.rows) {
        problem.add_constraint(row);
    }
    run_highs(problem, Some(start), options)
}

/// The solver's placement, if HiGHS has one: decoded, checked by `check_placements`, and
/// evaluated by `evaluate` (the model crate's ruler). `solver_objective` evaluates the
/// objective HiGHS optimised on the same placement; it must agree with HiGHS's own value,
/// or the model does not say what we think it says, which is reported as an error.
pub(crate) fn solver_candidate(
    model: &PlacementModel,
    sense: Sense,
    raw: &RawSolve,
    snapshot: &Snapshot,
    evaluate: impl Fn(&[Option<Placement>]) -> f64,
    solver_objective: impl Fn(&[Option<Placement>]) -> f64,
) -> Result<Option<Candidate>, String> {
    let Some(columns) = &raw.columns else {
        return Ok(None);
    };
    let placement = model.decode(columns, snapshot.tasks.len())?;
    check_assignment(snapshot.cluster, snapshot.tasks, &placement)
        .map_err(|e| format!("the solver's placement fails the checker: {e}"))?;
    if let Some(highs_value) = raw.objective {
        // The model's objective can only be pessimistic about a placement (indicators
        // such as `working`, `active`, `v` are bounded by the truth, not equal to it, until
        // optimality pushes them there): ours must not be worse than HiGHS's value.
        let ours = solver_objective(&placement);
        let tolerance = 1e-4 * ours.abs().max(1.0);
        let worse = match sense {
            Sense::Minimise => ours > highs_value + tolerance,
            Sense::Maximise => ours < highs_value - tolerance,
        };
        if worse {
            return Err(format!(
                "HiGHS's objective {highs_value} is better than the placement's evaluated {ours}"
            ));
        }
    }
    let value = evaluate(&placement);
    Ok(Some(Candidate { placement, value }))
}

/// The warm start of a model (and its optional pieces) from a concrete placement, with the
/// constant column at 1.
pub(crate) fn start_from(
    model: &PlacementModel,
    placement: &[Option<Placement>],
    power: Option<&crate::model::PowerTerms>,
    frag: Option<&crate::model::FragTerms>,
    constant: Option<good_lp::Variable>,
) -> Result<Vec<f64>, String> {
    let shape_of = model.shapes.shape_of_task(placement.len());
    let loads = crate::model::canonical_loads(model, placement, &shape_of)?;
    let mut start = vec![0.0; model.cols.len()];
    model.fill_start(&loads, &mut start);
    if let Some(power) = power {
        power.fill_start(model, &loads, &mut start);
    }
    if let Some(frag) = frag {
        frag.fill_start(model, &loads, &mut start);
    }
    if let Some(one) = constant {
        start[model.cols.col(one)] = 1.0;
    }
    Ok(start)
}

/// Whether `start` satisfies every variable bound, integrality and row of `model`.
fn check_start(model: &PlacementModel, start: &[f64]) -> Result<(), String> {
    const TOLERANCE: f64 = 1e-6;
    for (v, definition) in model.cols.vars.iter_variables_with_def() {
        let value = start[model.cols.col(v)];
        if value < definition.get_min() - TOLERANCE || value > definition.get_max() + TOLERANCE {
            return Err(format!(
                "warm start: column {} = {value} outside [{}, {}]",
                model.cols.col(v),
                definition.get_min(),
                definition.get_max()
            ));
        }
        if definition.is_integer() && (value - value.round()).abs() > TOLERANCE {
            return Err(format!(
                "warm start: integer column {} = {value}",
                model.cols.col(v)
            ));
        }
    }
    for (r, row) in model.rows.iter().enumerate() {
        let expression = row.expression();
        let mut activity = expression.constant();
        let mut scale = expression.constant().abs();
        for (v, coefficient) in expression.linear_coefficients() {
            let term = coefficient * start[model.cols.col(v)];
            activity += term;
            scale = scale.max(term.abs());
        }
        let tolerance = TOLERANCE * scale.max(1.0);
        let violated = if row.is_equality() {
            activity.abs() > tolerance
        } else {
            activity > tolerance
        };
        if violated {
            return Err(format!(
                "warm start violates row {r} of {} (activity {activity}{})",
                model.rows.len(),
                if row.is_equality() { " ≠ 0" } else { " > 0" }
            ));
        }
    }
    Ok(())
}
