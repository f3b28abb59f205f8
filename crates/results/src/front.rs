//! The points of a gap study's power–fragmentation front (ε-constraint), and the
//! heuristic's own point beside them.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::csv_text::{field, number, optional_number};
use crate::float_text;
use crate::SolveStatus;

/// One row of `fronts.csv`: a solved point of the front, or the heuristic itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrontRow {
    #[serde(with = "float_text")]
    pub checkpoint_pct: f64,
    pub policy: String,
    pub seed: u64,
    pub nodes: usize,
    pub tasks: usize,
    /// [`FrontRow::HEURISTIC`], `min_power`, `eps_<k>`, `min_frag` (or `front` for a front
    /// that could not be solved).
    pub point: String,
    #[serde(with = "float_text::option")]
    pub power_cap_watts: Option<f64>,
    /// NaN for a point without a solution.
    #[serde(with = "float_text")]
    pub power_watts: f64,
    #[serde(with = "float_text")]
    pub frag_milli: f64,
    #[serde(with = "float_text::option")]
    pub frag_bound_milli: Option<f64>,
    /// `None` for the heuristic's own point (written `heuristic`).
    pub status: Option<SolveStatus>,
    #[serde(with = "float_text")]
    pub solve_s: f64,
}

impl FrontRow {
    /// The point (and status text) of the heuristic's own placement.
    pub const HEURISTIC: &'static str = "heuristic";

    pub const CSV_HEADER: &'static str = "checkpoint_pct,policy,seed,nodes,tasks,point,power_cap_watts,power_watts,frag_milli,frag_bound_milli,status,solve_s";

    pub fn is_heuristic(&self) -> bool {
        self.status.is_none()
    }

    /// The status column: the solver's label, or `heuristic`.
    pub fn status_label(&self) -> String {
        self.status
            .as_ref()
            .map_or(Self::HEURISTIC.to_string(), SolveStatus::label)
    }

    pub fn csv_line(&self) -> String {
        format!(
            "{},{},{},{},{},{},{},{},{},{},{},{:.3}",
            number(self.checkpoint_pct, 1),
            field(&self.policy),
            self.seed,
            self.nodes,
            self.tasks,
            field(&self.point),
            optional_number(self.power_cap_watts, 0),
            number(self.power_watts, 0),
            number(self.frag_milli, 3),
            optional_number(self.frag_bound_milli, 3),
            field(&self.status_label()),
            self.solve_s
        )
    }

    /// A whole `fronts.csv` (header included).
    pub fn csv(rows: &[FrontRow]) -> String {
        let mut out = format!("{}\n", Self::CSV_HEADER);
        for row in rows {
            writeln!(out, "{}", row.csv_line()).expect("writing to a String cannot fail");
        }
        out
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
