//! What a Pareto figure draws: per trace and checkpoint, the points of one exact
//! power–fragmentation front and the policies' own points.

use serde::{Deserialize, Serialize};

use crate::check::{finite, non_negative, optional_non_negative, CheckedRow, ColumnError};

use crate::csv_text::{field, optional_number};
use crate::float_text;

/// Which kind of point a [`ParetoPoint`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PointKind {
    /// A point of the exact front; its status is the solver's label.
    Front,
    /// A policy's own placement; its status is `heuristic`.
    Policy,
}

/// One row of `pareto.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParetoPoint {
    pub trace: String,
    #[serde(with = "float_text")]
    pub checkpoint_pct: f64,
    /// The seed as written (text: the figures only group by it).
    pub seed: String,
    /// Nodes of the (sub-)cluster the front was solved on. Files written before this
    /// column existed lack it (`None`): they hold the `[gaps]` sub-cluster study only.
    #[serde(default)]
    pub nodes: Option<usize>,
    pub kind: PointKind,
    /// The front point's name (`min_power`, `eps_1`…) or the policy.
    pub label: String,
    /// Empty for a front point without a solution.
    #[serde(with = "float_text::option")]
    pub power_w: Option<f64>,
    #[serde(with = "float_text::option")]
    pub frag_gpu_milli: Option<f64>,
    /// A [`crate::SolveStatus`] label for front points, `heuristic` for policies.
    pub status: String,
    /// The front point's power cap ε (empty for the unconstrained least fragmentation and
    /// for policies; absent in files written before the column existed).
    #[serde(default, with = "float_text::option")]
    pub power_cap_w: Option<f64>,
    /// A proven lower bound on the fragmentation of any placement within the cap (empty
    /// where none was proven).
    #[serde(default, with = "float_text::option")]
    pub frag_bound_gpu_milli: Option<f64>,
}

impl ParetoPoint {
    pub const CSV_HEADER: &'static str =
        "trace,checkpoint_pct,seed,nodes,kind,label,power_w,frag_gpu_milli,status,power_cap_w,frag_bound_gpu_milli";

    pub fn csv_line(&self) -> String {
        format!(
            "{},{:.1},{},{},{},{},{},{},{},{},{}",
            field(&self.trace),
            self.checkpoint_pct,
            field(&self.seed),
            self.nodes.map_or(String::new(), |n| n.to_string()),
            match self.kind {
                PointKind::Front => "front",
                PointKind::Policy => "policy",
            },
            field(&self.label),
            optional_number(self.power_w, 0),
            optional_number(self.frag_gpu_milli, 3),
            field(&self.status),
            optional_number(self.power_cap_w, 0),
            optional_number(self.frag_bound_gpu_milli, 3)
        )
    }
}

impl CheckedRow for ParetoPoint {
    fn check(&self) -> Result<(), ColumnError> {
        non_negative("checkpoint_pct", self.checkpoint_pct)?;
        optional_non_negative("power_w", self.power_w)?;
        optional_non_negative("frag_gpu_milli", self.frag_gpu_milli)?;
        optional_non_negative("power_cap_w", self.power_cap_w)?;
        // A relaxation's bound may dip below 0.
        self.frag_bound_gpu_milli
            .map_or(Ok(()), |b| finite("frag_bound_gpu_milli", b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_reads_back() {
        let point = ParetoPoint {
            trace: "default".into(),
            checkpoint_pct: 90.0,
            seed: "42".into(),
            nodes: Some(8),
            kind: PointKind::Policy,
            label: "pwr:200,fgd:800".into(),
            power_w: Some(1_500_000.0),
            frag_gpu_milli: Some(30_000.5),
            status: "heuristic".into(),
            power_cap_w: Some(1_600_000.0),
            frag_bound_gpu_milli: Some(29_000.25),
        };
        let text = format!("{}\n{}\n", ParetoPoint::CSV_HEADER, point.csv_line());
        let back: Vec<ParetoPoint> = csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, [point]);
    }

    /// Files written before the `nodes` column read back with `nodes: None`.
    #[test]
    fn files_without_a_nodes_column_still_read() {
        let text = "trace,checkpoint_pct,seed,kind,label,power_w,frag_gpu_milli,status\n\
                    default,90.0,42,front,min_power,1400000,52000.000,optimal\n";
        let back: Vec<ParetoPoint> = csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back[0].nodes, None);
        assert_eq!(back[0].label, "min_power");
        assert_eq!(back[0].frag_bound_gpu_milli, None);
    }
}
