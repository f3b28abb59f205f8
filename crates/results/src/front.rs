//! The points of a gap study's power–fragmentation front (ε-constraint), and the
//! heuristic's own point beside them.

use serde::{Deserialize, Serialize};

use crate::declare_row;
use crate::float_text;
use crate::SolveStatus;

declare_row! {
    /// One point of a gap study's power–fragmentation front (ε-constraint), or the
    /// policy's own placement beside it: one row of `fronts.csv`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct FrontRow in "fronts.csv" {
        /// Arrived GPU demand, % of the (sub-)cluster's GPU capacity.
        #[serde(with = "float_text")]
        checkpoint_pct: f64 [Fixed(1), "%"],
        /// The policy whose snapshot the front is of.
        policy: String [Text, ""],
        /// The seed.
        seed: u64 [Plain, ""],
        /// Nodes of the (sub-)cluster.
        nodes: usize [Plain, ""],
        /// Tasks placed.
        tasks: usize [Plain, ""],
        /// `heuristic` (the policy's own placement), `min_power`, `eps_<k>`, `min_frag` (or
        /// `front` for a front that could not be solved).
        point: String [Text, ""],
        /// The point's power cap ε (empty for the unconstrained end points and the policy).
        #[serde(with = "float_text::option")]
        power_cap_watts: Option<f64> [Fixed(0), "W"],
        /// The placement's cluster power; `nan` for a point without a solution.
        #[serde(with = "float_text")]
        power_watts: f64 [Fixed(0), "W"],
        /// The placement's fragmentation Σ F(n); `nan` without a solution.
        #[serde(with = "float_text")]
        frag_milli: f64 [Fixed(3), "milli-GPU"],
        /// A proven lower bound on the fragmentation within the cap (empty without one).
        #[serde(with = "float_text::option")]
        frag_bound_milli: Option<f64> [Fixed(3), "milli-GPU"],
        /// The solver's status label, or `heuristic` for the policy's own point (`None`).
        status: Option<SolveStatus> [Computed(FrontRow::status_label, "text"), ""],
        /// Wall-clock time of the point's solve.
        #[serde(with = "float_text")]
        solve_s: f64 [Fixed(3), "s"],
    }
}

impl FrontRow {
    /// The point (and status text) of the heuristic's own placement.
    pub const HEURISTIC: &'static str = "heuristic";

    pub fn is_heuristic(&self) -> bool {
        self.status.is_none()
    }

    /// The status column: the solver's label, or `heuristic`.
    pub fn status_label(&self) -> String {
        self.status
            .as_ref()
            .map_or(Self::HEURISTIC.to_string(), SolveStatus::label)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_point_survives_json() {
        let row = FrontRow {
            checkpoint_pct: 50.0,
            policy: "fgd".into(),
            seed: 42,
            nodes: 5,
            tasks: 12,
            point: "front".into(),
            power_cap_watts: None,
            power_watts: f64::NAN,
            frag_milli: f64::NAN,
            frag_bound_milli: None,
            status: Some(SolveStatus::Error("min-frag end point: infeasible".into())),
            solve_s: 0.0,
        };
        let back: FrontRow = serde_json::from_str(&serde_json::to_string(&row).unwrap()).unwrap();
        assert!(back.power_watts.is_nan() && back.frag_milli.is_nan());
        assert_eq!(back.status, row.status);
        assert!(row.csv_line().contains(",nan,nan,"));
    }
}
