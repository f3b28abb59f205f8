//! A policy's rows at one checkpoint: its gap rows against the solves of its instance,
//! and its own point beside the front.

use gapbench_ilp::{
    gap_interval, heuristic_value, FrontPoint, Objective, Snapshot, SolveReport, SolveStatus,
};

use super::{instance_key, FrontRow, GapRow};

/// What every row of one policy at one checkpoint shares.
pub(super) struct CheckpointOf<'a> {
    pub checkpoint_pct: f64,
    pub policy: &'a str,
    pub seed: u64,
    pub nodes: usize,
    /// Tasks placed (the same for every policy of the instance).
    pub placed: usize,
}

impl CheckpointOf<'_> {
    /// The policy's gap row of `objective` against `report` (a solve of its instance). The
    /// incumbent is the better of the report's and the policy's own placement: the report
    /// may come from another policy's start.
    pub(super) fn gap_row(
        &self,
        snapshot: &Snapshot,
        objective: Objective,
        report: &SolveReport,
    ) -> GapRow {
        let heuristic = heuristic_value(snapshot, objective);
        let incumbent = report.incumbent.map(|value| match objective {
            Objective::Alloc => value.max(heuristic),
            Objective::Power | Objective::Frag => value.min(heuristic),
        });
        // The interval against that incumbent (the placement is not needed for it).
        let against = SolveReport {
            objective,
            status: report.status.clone(),
            incumbent,
            bound: report.bound,
            mip_gap: report.mip_gap,
            solve_seconds: report.solve_seconds,
            placement: Vec::new(),
            secondary_power_watts: report.secondary_power_watts,
        };
        let gap = gap_interval(&against, heuristic, snapshot.cluster.gpu_capacity_milli());
        GapRow {
            checkpoint_pct: self.checkpoint_pct,
            objective,
            policy: self.policy.to_string(),
            seed: self.seed,
            nodes: self.nodes,
            tasks: if objective == Objective::Alloc {
                snapshot.tasks.len()
            } else {
                self.placed
            },
            heuristic_value: heuristic,
            incumbent,
            bound: report.bound,
            status: against.status,
            gap_low_pct: gap.map(|g| g.low_pct),
            gap_high_pct: gap.and_then(|g| g.high_pct),
            solve_s: report.solve_seconds,
            instance: instance_key(snapshot, objective),
        }
    }

    fn front_row(
        &self,
        point: String,
        cap: Option<f64>,
        (power, frag): (f64, f64),
        bound: Option<f64>,
        status: Option<SolveStatus>,
        seconds: f64,
    ) -> FrontRow {
        FrontRow {
            checkpoint_pct: self.checkpoint_pct,
            policy: self.policy.to_string(),
            seed: self.seed,
            nodes: self.nodes,
            tasks: self.placed,
            point,
            power_cap_watts: cap,
            power_watts: power,
            frag_milli: frag,
            frag_bound_milli: bound,
            status,
            solve_s: seconds,
        }
    }

    /// The policy's own point beside the front.
    pub(super) fn heuristic_front_row(&self, snapshot: &Snapshot) -> FrontRow {
        let own = (
            heuristic_value(snapshot, Objective::Power),
            heuristic_value(snapshot, Objective::Frag),
        );
        self.front_row(FrontRow::HEURISTIC.into(), None, own, None, None, 0.0)
    }

    /// The front's points, or one row with its error.
    pub(super) fn front_rows(&self, front: Result<Vec<FrontPoint>, String>) -> Vec<FrontRow> {
        match front {
            Ok(front) => front
                .into_iter()
                .map(|p| {
                    self.front_row(
                        p.label,
                        p.power_cap_watts,
                        (p.power_watts, p.frag_milli),
                        p.frag_bound_milli,
                        Some(p.status),
                        p.solve_seconds,
                    )
                })
                .collect(),
            Err(e) => vec![self.front_row(
                "front".into(),
                None,
                (f64::NAN, f64::NAN),
                None,
                Some(SolveStatus::Error(e)),
                0.0,
            )],
        }
    }
}
