//! What a Pareto figure draws: per trace and checkpoint, the points of one exact
//! power–fragmentation front and the policies' own points.

use serde::{Deserialize, Serialize};

use crate::check::{finite, non_negative, optional_non_negative, CheckedRow, ColumnError};

use crate::declare_row;
use crate::float_text;
use crate::row::{CsvCell, Spelling};

/// Which kind of point a [`ParetoPoint`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PointKind {
    /// A point of the exact front; its status is the solver's label.
    Front,
    /// A policy's own placement; its status is `heuristic`.
    Policy,
}

declare_row! {
    /// What a Pareto figure draws, per trace and checkpoint: one point of the exact
    /// power–fragmentation front, or a policy's own point (one row of `pareto.csv`).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct ParetoPoint in "pareto.csv" {
        /// The trace.
        trace: String [Text, ""],
        /// Arrived GPU demand, % of the (sub-)cluster's GPU capacity.
        #[serde(with = "float_text")]
        checkpoint_pct: f64 [Fixed(1), "%"],
        /// The seed as written (text: the figures only group by it).
        seed: String [Text, ""],
        /// Nodes of the (sub-)cluster the front was solved on. Files written before this
        /// column existed lack it: they hold the `[gaps]` sub-cluster study only.
        #[serde(default)]
        nodes: Option<usize> [Plain, ""],
        /// `front` (a point of the exact front) or `policy` (a policy's own placement).
        kind: PointKind [Plain, ""],
        /// The front point's name (`min_power`, `eps_1`…) or the policy.
        label: String [Text, ""],
        /// Cluster power of the placement (empty for a front point without a solution).
        #[serde(with = "float_text::option")]
        power_w: Option<f64> [Fixed(0), "W"],
        /// Fragmentation Σ F(n) of the placement (empty without a solution).
        #[serde(with = "float_text::option")]
        frag_gpu_milli: Option<f64> [Fixed(3), "milli-GPU"],
        /// The solver's status label for front points, `heuristic` for policies.
        status: String [Text, ""],
        /// The front point's power cap ε (empty for the unconstrained least fragmentation
        /// and for policies; absent in files written before the column existed).
        #[serde(default, with = "float_text::option")]
        power_cap_w: Option<f64> [Fixed(0), "W"],
        /// A proven lower bound on the fragmentation of any placement within the cap (empty
        /// where none was proven).
        #[serde(default, with = "float_text::option")]
        frag_bound_gpu_milli: Option<f64> [Fixed(3), "milli-GPU"],
    }
}

impl CsvCell for PointKind {
    fn write_cell(&self, _: Spelling, out: &mut String) {
        out.push_str(match self {
            PointKind::Front => "front",
            PointKind::Policy => "policy",
        });
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
        let text = ParetoPoint::csv(std::slice::from_ref(&point));
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
