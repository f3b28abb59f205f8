//! The restricted master LP, kept in one HiGHS instance so each re-solve starts from the
//! previous basis:
//!
//! `min Σ_c cost_c·λ_c` subject to
//! - convexity, per node type `τ`: `Σ_{c of τ} λ_c ≤ N_τ` (the slack is the empty node);
//! - demand, per shape `s`: `Σ_c a_{s,c}·λ_c = count_s` (place exactly these tasks) or
//!   `≤ count_s` (choose which), with `a_{s,c}` the tasks of `s` in configuration `c`;
//! - `λ ≥ 0`;
//! - optionally a power cap ([`Master::add_power_cap`]): `Σ_c P_c·λ_c ≤ ε − P₀`, with
//!   `P_c` a column's watts above its idle node and `P₀` the idle cluster's (the
//!   ε-constraint front, [`super::front`]).
//!
//! Row duals follow HiGHS's convention for minimisation: the reduced cost of a column is
//! `cost_c − Σ_rows a_{r,c}·dual_r`.

use highs::{Col, ColProblem, HighsModelStatus, Model, Row, Sense};

use super::column::{Column, ColumnPool};
use crate::model::Demand;

/// What a master column stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MasterColumn {
    /// Pool column `.0`.
    Pool(usize),
    /// The exchange column of a dual-optimal inequality ([`super::dominance`]).
    Exchange,
    /// One task of a shape left unplaced at a penalty: keeps a dive's master feasible
    /// while its fixings leave tasks no column covers yet (the dive's).
    Artificial,
}

pub(crate) struct Master {
    model: Option<Model>,
    convexity: Vec<Row>,
    demand: Vec<Row>,
    /// The power cap row, once added.
    power_cap: Option<Row>,
    /// What each master column is. A pool column made cheaper is added again (the highs
    /// crate cannot change a column's cost by pool index); the dearer twin is then
    /// dominated.
    pub kind_of: Vec<MasterColumn>,
    /// HiGHS's handle of each master column.
    columns: Vec<Col>,
}

/// An optimal basic solution of the restricted master.
#[derive(Clone)]
pub(crate) struct MasterSolution {
    /// Objective (without the empty nodes' constant).
    pub value: f64,
    /// `λ` per master column (see [`Master::kind_of`]).
    pub lambda: Vec<f64>,
    /// Duals of the convexity rows (`≤ 0`), per node type.
    pub convexity_duals: Vec<f64>,
    /// Duals of the demand rows, per shape (free for `=`, `≤ 0` for `≤`).
    pub demand_duals: Vec<f64>,
    /// The dual of the power cap row (`≤ 0`; 0 without one).
    pub power_cap_dual: f64,
}

impl Master {
    /// The rows of an empty master: `type_nodes[τ] = N_τ`, `shape_counts[s] = count_s`.
    pub fn new(
        type_nodes: &[usize],
        shape_counts: &[usize],
        demand: Demand,
        threads: Option<u32>,
    ) -> Result<Self, String> {
        let mut problem = ColProblem::default();
        let convexity: Vec<Row> = type_nodes
            .iter()
            .map(|&n| problem.add_row(..=n as f64))
            .collect();
        let demand: Vec<Row> = shape_counts
            .iter()
            .map(|&count| match demand {
                Demand::Exactly => problem.add_row(count as f64..=count as f64),
                Demand::AtMost => problem.add_row(..=count as f64),
            })
            .collect();
        let mut model = problem
            .try_optimise(Sense::Minimise)
            .map_err(|e| format!("HiGHS rejected the master: {e:?}"))?;
        if let Some(threads) = threads {
            model
                .try_set_option("threads", threads as i32)
                .map_err(|e| format!("HiGHS option threads: {e:?}"))?;
        }
        Ok(Master {
            model: Some(model),
            convexity,
            demand,
            power_cap: None,
            kind_of: Vec::new(),
            columns: Vec::new(),
        })
    }

    /// [`Self::new`] with every column of `pool`, in pool order (so master column `i` is
    /// pool column `i`).
    pub fn over_pool(
        pool: &ColumnPool,
        type_nodes: &[usize],
        shape_counts: &[usize],
        demand: Demand,
        threads: Option<u32>,
    ) -> Result<Self, String> {
        let mut master = Master::new(type_nodes, shape_counts, demand, threads)?;
        for (i, column) in pool.columns.iter().enumerate() {
            master.add(column, i)?;
        }
        Ok(master)
    }

    /// Adds pool column `pool_index`.
    pub fn add(&mut self, column: &Column, pool_index: usize) -> Result<(), String> {
        let model = self.model.as_mut().expect("master present between solves");
        let mut factors = vec![(self.convexity[column.type_index], 1.0)];
        factors.extend(
            column
                .counts
                .iter()
                .map(|&(s, n)| (self.demand[s], f64::from(n))),
        );
        if let Some(cap) = self.power_cap {
            factors.push((cap, column.watts));
        }
        let col = model
            .try_add_column(column.cost, 0.0.., factors)
            .map_err(|e| format!("HiGHS refused a column: {e:?}"))?;
        self.kind_of.push(MasterColumn::Pool(pool_index));
        self.columns.push(col);
        Ok(())
    }

    /// Adds the power cap row `Σ_c watts_c·λ_c ≤ watts_left` over the pool columns so far
    /// (`pool` is the pool the master's columns index) and every pool column added later;
    /// exchange and artificial columns draw no power.
    pub fn add_power_cap(&mut self, pool: &ColumnPool, watts_left: f64) -> Result<(), String> {
        let model = self.model.as_mut().expect("master present between solves");
        let factors: Vec<(Col, f64)> = self
            .kind_of
            .iter()
            .zip(&self.columns)
            .filter_map(|(kind, &col)| match kind {
                MasterColumn::Pool(p) => Some((col, pool.columns[*p].watts)),
                _ => None,
            })
            .collect();
        let row = model
            .try_add_row(..=watts_left, factors)
            .map_err(|e| format!("HiGHS refused the power cap row: {e:?}"))?;
        self.power_cap = Some(row);
        Ok(())
    }

    /// Master columns so far (pool, exchange and artificial ones).
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// Requires `at_least ≤ λ ≤ at_most` of master column `master_column` (diving fixes
    /// nodes so).
    pub fn set_bounds(&mut self, master_column: usize, at_least: f64, at_most: f64) {
        let model = self.model.as_mut().expect("master present between solves");
        model.change_column_bounds(self.columns[master_column], at_least..=at_most);
    }

    /// `(pool index, λ)` of the pool columns `solution` uses, ascending, a pool column's
    /// twins added up (exchange and artificial columns left out).
    pub fn used_pool_columns(&self, solution: &MasterSolution) -> Vec<(usize, f64)> {
        let mut used: Vec<(usize, f64)> = self
            .kind_of
            .iter()
            .zip(&solution.lambda)
            .filter_map(|(kind, &l)| match kind {
                MasterColumn::Pool(c) if l > 1e-9 => Some((*c, l)),
                _ => None,
            })
            .collect();
        used.sort_by_key(|&(c, _)| c);
        used.dedup_by(|later, kept| {
            let twin = later.0 == kept.0;
            if twin {
                kept.1 += later.1;
            }
            twin
        });
        used
    }

    /// Tasks `solution` leaves to artificial columns (0 when every task is placed).
    pub fn artificial_tasks(&self, solution: &MasterSolution) -> f64 {
        self.kind_of
            .iter()
            .zip(&solution.lambda)
            .filter(|(kind, _)| **kind == MasterColumn::Artificial)
            .map(|(_, &l)| l)
            .sum()
    }

    /// Adds an artificial column for shape `shape`: one task unplaced at `penalty`.
    pub fn add_artificial(&mut self, shape: usize, penalty: f64) -> Result<(), String> {
        let model = self.model.as_mut().expect("master present between solves");
        let col = model
            .try_add_column(penalty, 0.0.., [(self.demand[shape], 1.0)])
            .map_err(|e| format!("HiGHS refused an artificial column: {e:?}"))?;
        self.kind_of.push(MasterColumn::Artificial);
        self.columns.push(col);
        Ok(())
    }

    /// Adds the exchange column of a dual-optimal inequality `y_large ≥ y_small`
    /// ([`super::dominance`]): cost 0, a slot of `large` serving a task of `small`. It has
    /// no pool column ([`MasterColumn::Exchange`]).
    pub fn add_exchange(&mut self, large: usize, small: usize) -> Result<(), String> {
        let model = self.model.as_mut().expect("master present between solves");
        let col = model
            .try_add_column(
                0.0,
                0.0..,
                [(self.demand[large], -1.0), (self.demand[small], 1.0)],
            )
            .map_err(|e| format!("HiGHS refused an exchange column: {e:?}"))?;
        self.kind_of.push(MasterColumn::Exchange);
        self.columns.push(col);
        Ok(())
    }

    /// Solves the LP from the current basis within `time_limit_s`; `None` when the time
    /// ran out first.
    pub fn solve(&mut self, time_limit_s: f64) -> Result<Option<MasterSolution>, String> {
        self.solve_allowing(time_limit_s, false)
    }

    /// [`Self::solve`], but rows the columns cannot meet give `None` too, not an error
    /// (a dive's bounds may leave the pool without a solution), and so does a status HiGHS
    /// leaves `Unknown` after bounds changed under its basis.
    pub fn solve_if_feasible(
        &mut self,
        time_limit_s: f64,
    ) -> Result<Option<MasterSolution>, String> {
        self.solve_allowing(time_limit_s, true)
    }

    fn solve_allowing(
        &mut self,
        time_limit_s: f64,
        infeasible_is_none: bool,
    ) -> Result<Option<MasterSolution>, String> {
        let model = self.model.take().expect("master present between solves");
        let solved = solve_within(model, time_limit_s, "the master LP")?;
        let status = solved.status();
        let solution = solved.get_solution();
        let result = match status {
            HighsModelStatus::ReachedTimeLimit => Ok(None),
            HighsModelStatus::Infeasible
            | HighsModelStatus::UnboundedOrInfeasible
            | HighsModelStatus::Unknown
                if infeasible_is_none =>
            {
                Ok(None)
            }
            // No column yet (the heuristic placed none of the tasks): λ = 0, all duals 0.
            HighsModelStatus::ModelEmpty => Ok(Some(MasterSolution {
                value: 0.0,
                lambda: Vec::new(),
                convexity_duals: vec![0.0; self.convexity.len()],
                demand_duals: vec![0.0; self.demand.len()],
                power_cap_dual: 0.0,
            })),
            HighsModelStatus::Optimal => Ok(Some(MasterSolution {
                value: solved.objective_value(),
                lambda: solution.columns().to_vec(),
                convexity_duals: (0..self.convexity.len())
                    .map(|t| solution.dual_rows()[t])
                    .collect(),
                demand_duals: (0..self.demand.len())
                    .map(|s| solution.dual_rows()[self.convexity.len() + s])
                    .collect(),
                // Added after every convexity and demand row.
                power_cap_dual: self.power_cap.map_or(0.0, |_| {
                    solution.dual_rows()[self.convexity.len() + self.demand.len()]
                }),
            })),
            other => Err(format!("the master LP ended with status {other:?}")),
        };
        self.model = Some(Model::from(solved));
        result
    }
}

/// Solves a master `model` (this module's, or a branch node's) within `time_limit_s`
/// (at least 10 ms); `what` names it in errors.
pub(super) fn solve_within(
    mut model: Model,
    time_limit_s: f64,
    what: &str,
) -> Result<highs::SolvedModel, String> {
    crate::solver::set_time_limit(&mut model, time_limit_s)?;
    model
        .try_solve()
        .map_err(|e| format!("HiGHS failed on {what}: {e:?}"))
}
