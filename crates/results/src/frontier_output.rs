//! The files of `gapbench frontier`: the exact JCT–budget frontier at each budget
//! (`frontier.csv`), column generation's bounds (`colgen.csv`, with `--colgen`) and the
//! policies' points against it (`points.csv`, with `--policies`).

use serde::Serialize;

use crate::declare_row;

declare_row! {
    /// One budget of the frontier: the proven lower bound on mean JCT within it, and the
    /// exact MIP's answer when `--mip` ran.
    #[derive(Debug, Clone, PartialEq, Serialize)]
    pub struct FrontierRow in "frontier.csv" {
        /// The budget, in `unit`.
        budget: f64 [Fixed(6), "kWh | kg"],
        /// `kWh` (energy budgets) or `kg` (carbon budgets, CO2e).
        unit: &'static str [Raw, ""],
        /// No schedule within the budget has a smaller mean JCT (empty when infeasible).
        mean_jct_bound_s: Option<f64> [Fixed(3), "s"],
        /// `bound` or `infeasible`.
        status: &'static str [Raw, ""],
        /// The MIP's best schedule's mean JCT (empty without `--mip`).
        mip_mean_jct_s: Option<f64> [Fixed(3), "s"],
        /// The MIP's proven bound on mean JCT.
        mip_bound_mean_jct_s: Option<f64> [Fixed(3), "s"],
        /// How the MIP ended (a solver status label); empty without `--mip`.
        mip_status: String [Text, ""],
        /// The MIP's wall-clock time.
        mip_seconds: Option<f64> [Fixed(3), "s"],
    }
}

declare_row! {
    /// One budget column generation tightened: its bound and its master LP's value.
    #[derive(Debug, Clone, PartialEq, Serialize)]
    pub struct ColgenRow in "colgen.csv" {
        /// The budget, in `unit`.
        budget: f64 [Fixed(6), "kWh | kg"],
        /// `kWh` or `kg`.
        unit: &'static str [Raw, ""],
        /// The proven lower bound on mean JCT (empty when infeasible).
        mean_jct_bound_s: Option<f64> [Fixed(3), "s"],
        /// The master LP's mean JCT: no bound of this relaxation exceeds it.
        master_mean_jct_s: Option<f64> [Fixed(3), "s"],
        /// Column generation rounds.
        rounds: usize [Plain, ""],
        /// `infeasible`, `converged`, `time limit` or `stopped` (its round cap).
        status: &'static str [Raw, ""],
        /// The mean JCT of the best schedule of the problem found (with
        /// `--incumbent-nodes`): the problem's optimum is at most this.
        incumbent_mean_jct_s: Option<f64> [Fixed(3), "s"],
    }
}

declare_row! {
    /// One policy's replay within a budget, against the frontier.
    #[derive(Debug, Clone, PartialEq, Serialize)]
    pub struct FrontierPointRow in "points.csv" {
        /// The policy (budgeted ones at their fraction: `powerflow@0.90`).
        policy: String [Text, ""],
        /// The budget it ran under, in the frontier's unit (empty for unbudgeted ones).
        budget: Option<f64> [Fixed(6), "kWh | kg"],
        /// Job energy by the training model.
        job_energy_kwh: f64 [Fixed(6), "kWh"],
        /// The job energy's carbon.
        carbon_kg: f64 [Fixed(6), "kg CO2e"],
        /// Cluster energy: every node by the power model, idle included.
        cluster_energy_kwh: f64 [Fixed(6), "kWh"],
        /// Mean JCT of the training jobs.
        mean_jct_s: f64 [Fixed(3), "s"],
        /// The frontier's bound on mean JCT at the policy's own spend.
        bound_mean_jct_s: Option<f64> [Fixed(3), "s"],
        /// (JCT − bound) / bound.
        gap: Option<f64> [Fixed(4), ""],
        /// Why the replay has no point; empty otherwise.
        error: String [Text, ""],
    }
}
