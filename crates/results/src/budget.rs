//! The rows of a budget study (`[budget]` of a bench spec): each budgeted replay's point
//! (`budget_points.csv`), the exact lower envelope it is measured against
//! (`budget_frontier.csv`) and downsampled power and carbon intensity over time
//! (`budget_timeline.csv`). A study is keyed by (setup, seed, kind): `kind` is `energy`
//! (PowerFlow-style, budget in kWh) or `carbon` (GreenFlow-style, budget in kg CO2e).

use serde::{Deserialize, Serialize};

use crate::check::{column_error, non_negative, non_negative_or_inf, optional_non_negative};
use crate::check::{statistic, CheckedRow, ColumnError};
use crate::declare_row;

/// Samples per replay in `budget_timeline.csv`.
pub const BUDGET_TIMELINE_SAMPLES: usize = 200;

declare_row! {
    /// One budgeted replay: a policy (at a fraction of full-clock FIFO's spend, for the
    /// budgeted ones), what it spent and its mean JCT, against FIFO and the frontier (one
    /// row of `budget_points.csv`).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct BudgetPointRow in "budget_points.csv" {
        /// The budget study's setup.
        setup: String [Text, ""],
        /// The seed of its jobs.
        seed: u64 [Plain, ""],
        /// `energy` (PowerFlow-style, budget in kWh) or `carbon` (GreenFlow-style, budget
        /// in kg CO2e).
        kind: String [Text, ""],
        /// The policy.
        policy: String [Text, ""],
        /// The budget as a share of full-clock FIFO's spend (budgeted policies only).
        fraction: Option<f64> [Shortest, ""],
        /// The budget: kWh for `energy`, kg CO2e for `carbon`.
        budget: Option<f64> [Shortest, "kWh | kg CO2e"],
        /// Training jobs replayed.
        jobs: usize [Plain, ""],
        /// Job energy (the training model: what the budget limits).
        job_energy_kwh: Option<f64> [Shortest, "kWh"],
        /// The carbon of the job energy.
        carbon_kg: Option<f64> [Shortest, "kg CO2e"],
        /// Cluster energy: every node of the setup by the power model, idle included.
        #[serde(default)]
        cluster_energy_kwh: Option<f64> [Shortest, "kWh"],
        /// Mean JCT of the training jobs.
        mean_jct_s: Option<f64> [Shortest, "s"],
        /// Full-clock FIFO's mean JCT on the same jobs.
        fifo_mean_jct_s: f64 [Shortest, "s"],
        /// FIFO's mean JCT over this one's (the papers' "×" improvement).
        jct_speedup_vs_fifo: Option<f64> [Shortest, ""],
        /// The frontier's proven lower bound on mean JCT at this point's own spend (every
        /// schedule of the same jobs within that spend has at least this mean JCT).
        bound_mean_jct_s: Option<f64> [Shortest, "s"],
        /// (JCT − bound) / bound.
        gap: Option<f64> [Shortest, ""],
        /// How the bound was reached: `lagrangian` (subgradient lines only), `converged`
        /// (column generation brought it within tolerance of its LP's optimum), `open`
        /// (column generation stopped first: the relaxation's optimum lies in [bound,
        /// `bound_lp_mean_jct_s`]), `outside` (a spend outside the budgets column
        /// generation tightened); empty without a frontier.
        #[serde(default)]
        bound_status: String [Text, ""],
        /// With column generation: no bound from this relaxation can exceed this (the
        /// master LP values, interpolated between tightened budgets: the LP's value is
        /// convex in the budget).
        #[serde(default)]
        bound_lp_mean_jct_s: Option<f64> [Shortest, "s"],
        /// Why the replay has no point (a budget too small, …); empty otherwise.
        error: String [Text, ""],
        /// The least mean JCT of a schedule of the frontier problem found within this
        /// point's spend (the study's `incumbent_nodes`: a list schedule in the master LP's
        /// order, the points' own replays, a branch and bound over them and the LP's
        /// columns): the problem's optimum lies in
        /// [`bound_mean_jct_s`, this], so of the gap at most (this − bound) is the bound's
        /// and at least (JCT − this) the policy's (or the relaxation's: GPU-seconds are
        /// pooled per slot, not placed on nodes).
        #[serde(default)]
        schedule_mean_jct_s: Option<f64> [Shortest, "s"],
    }
}

declare_row! {
    /// One budget of the exact frontier: no schedule of the same jobs within `budget` has
    /// a smaller mean JCT than `mean_jct_bound_s` (one row of `budget_frontier.csv`).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct BudgetFrontierRow in "budget_frontier.csv" {
        /// The budget study's setup.
        setup: String [Text, ""],
        /// The seed of its jobs.
        seed: u64 [Plain, ""],
        /// `energy` or `carbon`.
        kind: String [Text, ""],
        /// The budget: kWh for `energy`, kg CO2e for `carbon`.
        budget: f64 [Shortest, "kWh | kg CO2e"],
        /// The proven lower bound on mean JCT within the budget (`inf`: nothing fits).
        mean_jct_bound_s: f64 [Shortest, "s"],
    }
}

declare_row! {
    /// One sample of a budgeted replay: the power its running jobs draw and the grid's
    /// carbon intensity (one row of `budget_timeline.csv`).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct BudgetTimelineRow in "budget_timeline.csv" {
        /// The budget study's setup.
        setup: String [Text, ""],
        /// The seed of its jobs.
        seed: u64 [Plain, ""],
        /// `energy` or `carbon`.
        kind: String [Text, ""],
        /// A policy label as in `budget_points.csv` (budgeted ones with their fraction).
        policy: String [Text, ""],
        /// Seconds since the first arrival.
        time_s: f64 [Shortest, "s"],
        /// Power of the running jobs by the training model.
        job_kw: f64 [Shortest, "kW"],
        /// The grid's carbon intensity then.
        g_per_kwh: f64 [Shortest, "g CO2e/kWh"],
        /// Jobs waiting.
        waiting: u32 [Plain, ""],
    }
}

/// The label of a policy point: `powerflow@0.90` for a budgeted one. The fraction has two
/// decimals when they hold it exactly, else its shortest exact form (`powerflow@0.951`), so
/// distinct fractions never share a label (nor the bench cell file it names).
pub fn budget_point_label(policy: &str, fraction: Option<f64>) -> String {
    match fraction {
        Some(f) => {
            let two_decimals = format!("{f:.2}");
            if two_decimals.parse::<f64>() == Ok(f) {
                format!("{policy}@{two_decimals}")
            } else {
                format!("{policy}@{f:?}")
            }
        }
        None => policy.to_string(),
    }
}

pub use crate::row::rows_to_csv;

impl CheckedRow for BudgetPointRow {
    fn check(&self) -> Result<(), ColumnError> {
        if let Some(f) = self.fraction.filter(|f| !(f.is_finite() && *f > 0.0)) {
            return Err(column_error(
                "fraction",
                format_args!("{f} is not a positive share"),
            ));
        }
        optional_non_negative("budget", self.budget)?;
        optional_non_negative("job_energy_kwh", self.job_energy_kwh)?;
        optional_non_negative("carbon_kg", self.carbon_kg)?;
        optional_non_negative("cluster_energy_kwh", self.cluster_energy_kwh)?;
        if let Some(jct) = self.mean_jct_s {
            statistic("mean_jct_s", jct)?;
        }
        statistic("fifo_mean_jct_s", self.fifo_mean_jct_s)
    }
}

impl CheckedRow for BudgetFrontierRow {
    fn check(&self) -> Result<(), ColumnError> {
        non_negative("budget", self.budget)?;
        non_negative_or_inf("mean_jct_bound_s", self.mean_jct_bound_s)
    }
}

impl CheckedRow for BudgetTimelineRow {
    fn check(&self) -> Result<(), ColumnError> {
        non_negative("time_s", self.time_s)?;
        non_negative("job_kw", self.job_kw)?;
        non_negative("g_per_kwh", self.g_per_kwh)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::read_rows;

    #[test]
    fn budget_rows_read_back_as_written() {
        let row = BudgetPointRow {
            setup: "slice".into(),
            seed: 42,
            kind: "energy".into(),
            policy: "powerflow".into(),
            fraction: Some(0.9),
            budget: Some(12.5),
            jobs: 10,
            job_energy_kwh: Some(12.25),
            carbon_kg: None,
            cluster_energy_kwh: Some(30.5),
            mean_jct_s: Some(3600.0),
            fifo_mean_jct_s: 7200.0,
            jct_speedup_vs_fifo: Some(2.0),
            bound_mean_jct_s: Some(3000.0),
            gap: Some(0.2),
            bound_status: "converged".into(),
            bound_lp_mean_jct_s: Some(3010.0),
            schedule_mean_jct_s: Some(3400.0),
            error: String::new(),
        };
        let dir = std::env::temp_dir().join(format!("gapbench-budget-rows-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("points.csv");
        std::fs::write(&path, rows_to_csv(std::slice::from_ref(&row))).unwrap();
        let back = read_rows::<BudgetPointRow>(&path, &[]).unwrap().unwrap();
        assert_eq!(back.rows[0].value, row);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(budget_point_label("powerflow", Some(0.9)), "powerflow@0.90");
    }

    /// The declared spelling is the one serde's CSV writer used for these files: header,
    /// numbers (shortest exact, `inf`), empty options and quoting.
    #[test]
    fn budget_files_keep_serde_csv_bytes() {
        fn serde_csv<T: Serialize>(rows: &[T]) -> Vec<u8> {
            let mut writer = csv::Writer::from_writer(Vec::new());
            for row in rows {
                writer.serialize(row).unwrap();
            }
            writer.into_inner().unwrap()
        }
        let frontier = [BudgetFrontierRow {
            setup: "a,b".into(),
            seed: 7,
            kind: "energy".into(),
            budget: 12.345_678_9,
            mean_jct_bound_s: f64::INFINITY,
        }];
        assert_eq!(rows_to_csv(&frontier), serde_csv(&frontier));
        let timeline = [BudgetTimelineRow {
            setup: "slice".into(),
            seed: 42,
            kind: "carbon".into(),
            policy: "powerflow@0.90".into(),
            time_s: 3600.0,
            job_kw: 0.1 + 0.2,
            g_per_kwh: 1e-7,
            waiting: 3,
        }];
        assert_eq!(rows_to_csv(&timeline), serde_csv(&timeline));
        assert!(rows_to_csv::<BudgetTimelineRow>(&[]).is_empty());
    }
}
