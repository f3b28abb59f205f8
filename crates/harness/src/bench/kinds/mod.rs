//! The kinds of cell a bench runs, one file each ([`crate::bench::kind::CellKind`]).

pub(crate) mod budget;
pub mod eaco_bounds;
pub(crate) mod gap;
pub(crate) mod replay;
pub(crate) mod replay_cell;
pub(crate) mod stored_frontier;
pub(crate) mod sweep;

pub use budget::{run_budget_study, BudgetCell, BudgetItem};
pub use gap::GapCell;
pub use replay::ReplayCell;
pub use sweep::Cell;

use super::kind::AnyKind;

/// Every kind of cell, in the order they run and are numbered for shards.
pub(crate) const KINDS: [&dyn AnyKind; 4] = [
    &sweep::Sweeps,
    &gap::GapStudies,
    &replay::Replays,
    &budget::BudgetStudy,
];

#[cfg(test)]
mod tests {
    use super::KINDS;

    /// Every kind of cell in this folder is in [`KINDS`], the one list that runs, resumes,
    /// shards, merges, counts (`--status`) and aggregates cells: a kind left out would run
    /// nowhere, or run and never be merged or aggregated.
    #[test]
    fn every_kind_of_cell_is_registered() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bench/kinds");
        let mut declared = Vec::new();
        for entry in std::fs::read_dir(&folder).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let names = text
                .lines()
                .filter_map(|line| line.strip_prefix("impl CellKind for "))
                .map(|rest| rest.trim_end_matches(" {").to_string());
            declared.extend(names);
        }
        declared.sort();
        let mut registered: Vec<String> = KINDS
            .iter()
            .map(|kind| kind.type_name().rsplit("::").next().unwrap().to_string())
            .collect();
        registered.sort();
        assert_eq!(declared.len(), 4, "{declared:?}");
        assert_eq!(declared, registered);
    }
}
