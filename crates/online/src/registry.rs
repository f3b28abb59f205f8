//! What is derived from the one table of native policies (`policies/mod.rs`, expanded by
//! `declare.rs`'s `declare_policies!`): parsing, `--help`, the table of `docs/own-policy.md` and the
//! benchmarks' lists, all from `PolicyKind::ALL`. Forgetting a step is impossible: there is
//! no other step.

use crate::policies::PolicyKind;
use crate::policy::{GpuSelection, Normalization};

/// `name` with case, `-` and `_` ignored, as specs are matched.
fn normalised(name: &str) -> String {
    name.trim().to_ascii_lowercase().replace(['-', '_'], "")
}

impl PolicyKind {
    /// Accepts the canonical name and the registered spellings, case-insensitively.
    pub fn parse(name: &str) -> Option<PolicyKind> {
        let wanted = normalised(name);
        PolicyKind::ALL.iter().copied().find(|kind| {
            normalised(kind.name()) == wanted
                || kind.aliases().iter().any(|a| normalised(a) == wanted)
        })
    }

    /// The canonical names, comma-separated, in table order.
    pub fn names() -> String {
        PolicyKind::ALL
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The policy list of `gapbench run|gap|replay --help`: every native policy with what it
/// prefers, then mixes and expressions.
pub fn policy_help() -> String {
    let mut text = String::from(
        "Policy: a name, a weighted mix such as `pwr:200,fgd:800`, or a score expression \
         `expr:…` (see docs/own-policy.md). Names:",
    );
    for kind in PolicyKind::ALL {
        text.push_str(&format!(" `{}`: {};", kind.name(), kind.summary()));
    }
    text.push_str(
        " `expr:EXPR` scores each feasible node by EXPR over per-(node, task) features \
         (e.g. `expr:gpu_free_after_milli / 80`), min-max normalised; `expr-raw:EXPR` uses \
         the value as is, clamped to 0–100. In a mix: `pwr:200,expr{EXPR}:800`.",
    );
    text
}

fn normalization_label(normalization: Normalization) -> &'static str {
    match normalization {
        Normalization::None => "none (raw 0–100)",
        Normalization::MinMaxZeroWhenEqual => "min-max (0 when equal)",
        Normalization::MinMaxHundredWhenEqual => "min-max (100 when equal)",
    }
}

fn selection_label(selection: GpuSelection) -> &'static str {
    match selection {
        GpuSelection::Best => "best fit",
        GpuSelection::Random => "random",
        GpuSelection::Fgd => "FGD's",
        GpuSelection::Pwr => "PWR's",
    }
}

/// The policy table of `docs/own-policy.md` (between `<!-- policies:begin -->` and `<!-- policies:end -->`),
/// derived from the registration table and the policies themselves; `xtask tidy` checks
/// that the page holds exactly this.
pub fn markdown_table() -> String {
    let mut table = String::from(
        "| policy | prefers | normalisation | GPUs of a sharing task | memoised | tie rank | file |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for &kind in PolicyKind::ALL {
        let policy = kind.new_policy();
        table.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | `{}` |\n",
            kind.name(),
            kind.summary(),
            normalization_label(policy.normalization()),
            selection_label(policy.gpu_selection()),
            if policy.memoizable() { "yes" } else { "no" },
            kind.selection_tie_rank(),
            kind.source_file(),
        ));
    }
    table
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn every_name_and_alias_parses_to_its_policy_and_names_are_distinct() {
        let mut seen = BTreeSet::new();
        for &kind in PolicyKind::ALL {
            assert_eq!(PolicyKind::parse(kind.name()), Some(kind));
            assert_eq!(
                PolicyKind::parse(&kind.name().to_ascii_uppercase()),
                Some(kind)
            );
            for alias in kind.aliases() {
                assert_eq!(PolicyKind::parse(alias), Some(kind), "alias {alias}");
            }
            let mut own = BTreeSet::new();
            for spelling in std::iter::once(kind.name()).chain(kind.aliases().iter().copied()) {
                assert!(
                    own.insert(normalised(spelling)),
                    "`{spelling}` is redundant: case, `-` and `_` are ignored already"
                );
                assert!(
                    seen.insert(normalised(spelling)),
                    "`{spelling}` names two policies"
                );
            }
            assert!(
                !normalised(kind.name()).starts_with("expr"),
                "`expr…` is reserved for expressions"
            );
        }
        assert_eq!(PolicyKind::parse("tetris"), None);
    }

    #[test]
    fn tie_ranks_are_distinct_and_the_built_ins_keep_the_reference_order() {
        let ranks: BTreeSet<u8> = PolicyKind::ALL
            .iter()
            .map(|k| k.selection_tie_rank())
            .collect();
        assert_eq!(
            ranks.len(),
            PolicyKind::ALL.len(),
            "two policies share a rank"
        );
        // reference-semantics §5.9: Random, DotProd, GpuClustering, GpuPacking, BestFit, FGD, PWR.
        let reference = [
            "random",
            "dotprod",
            "clustering",
            "packing",
            "bestfit",
            "fgd",
            "pwr",
        ];
        for (rank, name) in reference.iter().enumerate() {
            let kind = PolicyKind::parse(name).expect("a built-in");
            assert_eq!(usize::from(kind.selection_tie_rank()), rank, "{name}");
        }
    }

    #[test]
    fn help_and_table_list_every_policy() {
        let help = policy_help();
        let table = markdown_table();
        for &kind in PolicyKind::ALL {
            assert!(
                help.contains(&format!("`{}`", kind.name())),
                "help misses {kind:?}"
            );
            assert!(
                table.contains(&format!("| `{}` |", kind.name())),
                "table misses {kind:?}"
            );
            assert!(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../..")
                    .join(kind.source_file())
                    .is_file(),
                "{} does not exist",
                kind.source_file()
            );
        }
        assert_eq!(table.lines().count(), PolicyKind::ALL.len() + 2);
    }
}
