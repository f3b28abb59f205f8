//! Policies as papers name them: `fgd` is FGD, `packing` GpuPacking, `pwr:200,fgd:800`
//! PWR+FGD 200/800 — what the paper style's legends and every LaTeX table write. A name the
//! user gives (`names` in a spec's `[figures]`, `--name POLICY=NAME`) comes first; a policy
//! with no paper name (an expression) keeps its spelling.

use std::collections::BTreeMap;

/// The papers' names of the native sweep policies and the time policies, by CLI name
/// (the FGD paper, ATC'23: Random, DotProduct, GpuClustering, GpuPacking, BestFit, FGD;
/// the PWR paper: PWR; the time-mode studies: FIFO, Zeus, EaCO, PowerFlow, GreenFlow).
const PAPER_NAMES: [(&str, &str); 20] = [
    ("random", "Random"),
    ("dotprod", "DotProduct"),
    ("dotproduct", "DotProduct"),
    ("clustering", "GpuClustering"),
    ("gpuclustering", "GpuClustering"),
    ("packing", "GpuPacking"),
    ("gpupacking", "GpuPacking"),
    ("bestfit", "BestFit"),
    ("fgd", "FGD"),
    ("pwr", "PWR"),
    ("fifo", "FIFO"),
    ("fifo-o", "FIFO-O"),
    ("fifo-full-clock", "FIFO (full clock)"),
    ("zeus", "Zeus"),
    ("eaco-r", "EaCO-R"),
    ("eaco-o", "EaCO-O"),
    ("powerflow", "PowerFlow"),
    ("greenflow", "GreenFlow"),
    ("gandiva", "Gandiva"),
    ("fifo-packed", "FIFO-packed"),
];

/// Display names: the user's, then the papers'.
#[derive(Debug, Clone, Default)]
pub struct PolicyNames {
    given: BTreeMap<String, String>,
}

impl PolicyNames {
    /// With the user's names, by policy as the results folder spells it.
    pub fn new(given: BTreeMap<String, String>) -> PolicyNames {
        PolicyNames { given }
    }

    /// Adds (or replaces) the user's name of `policy`.
    pub fn insert(&mut self, policy: &str, name: &str) {
        self.given.insert(policy.to_string(), name.to_string());
    }

    /// What a paper calls `policy`.
    pub fn display(&self, policy: &str) -> String {
        if let Some(name) = self.given.get(policy) {
            return name.clone();
        }
        if let Some(name) = paper_name(policy) {
            return name.to_string();
        }
        // `powerflow@0.9` — a time policy at a budget share.
        if let Some((base, share)) = policy.split_once('@') {
            if let Some(name) = paper_name(base) {
                return format!("{name} {share}");
            }
        }
        mix_name(policy).unwrap_or_else(|| policy.to_string())
    }
}

fn paper_name(policy: &str) -> Option<&'static str> {
    PAPER_NAMES
        .iter()
        .find(|(cli, _)| cli.eq_ignore_ascii_case(policy.trim()))
        .map(|(_, name)| *name)
}

/// `pwr:200,fgd:800` → `PWR+FGD 200/800`: every term a native policy with a weight.
fn mix_name(policy: &str) -> Option<String> {
    let mut names = Vec::new();
    let mut weights = Vec::new();
    for term in policy.split(',') {
        let (name, weight) = term.split_once(':')?;
        names.push(paper_name(name)?);
        weights.push(weight.trim().parse::<u32>().ok()?.to_string());
    }
    (names.len() > 1).then(|| format!("{} {}", names.join("+"), weights.join("/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn papers_names_mixes_budgets_and_the_users_names() {
        let names = PolicyNames::new(BTreeMap::from([(
            "expr:free_gpu".to_string(),
            "MostFree".to_string(),
        )]));
        assert_eq!(names.display("fgd"), "FGD");
        assert_eq!(names.display("dotprod"), "DotProduct");
        assert_eq!(names.display("packing"), "GpuPacking");
        assert_eq!(names.display("pwr:200,fgd:800"), "PWR+FGD 200/800");
        assert_eq!(names.display("powerflow@0.9"), "PowerFlow 0.9");
        assert_eq!(names.display("expr:free_gpu"), "MostFree");
        assert_eq!(names.display("expr:-free_gpu"), "expr:-free_gpu");
        assert_eq!(names.display("pwr:200,expr{x}:800"), "pwr:200,expr{x}:800");
    }
}
