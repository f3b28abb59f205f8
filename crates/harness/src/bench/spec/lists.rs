//! What a spec's lists and names must be for its cells to be distinct files: every list
//! names each thing once, compared as the runner sees it (`1` and `1.0` are one arrival
//! scale, `FGD` and `fgd` one policy), and the names that become folders are plain file
//! names. A duplicate ran once, yet its rows were aggregated once per listing (every mean,
//! count and "seeds N" counted it twice); a name with `/` or `..` wrote outside `results/`.

use std::fmt::Display;

use anyhow::{bail, Result};
use gapbench_replay::policies::TimePolicySpec;

use super::budget::BudgetStudySpec;
use super::{BenchSpec, ReplaySpec};

/// A policy name as a folder name: letters, digits, `-`, `_` and `.`; anything else `_`.
pub(crate) fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Refuses a name that is not a plain file name: it becomes a folder (`results/<name>-<date>`,
/// `budget-cells/<setup>`), so a path separator or `..` would write elsewhere.
pub(crate) fn check_file_name(what: &str, name: &str) -> Result<()> {
    let plain = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if name.is_empty() || !plain || name.starts_with('.') {
        bail!(
            "{what} `{name}`: a name becomes a folder, so it takes ASCII letters, digits, `-`, `_` and `.` (not first), e.g. \"paper-2\""
        );
    }
    Ok(())
}

/// Refuses the first two entries of `written` whose keys are equal. `same` says what equal
/// keys mean (`the same policy`…).
fn refuse_duplicates<T: Display, K: PartialEq>(
    what: &str,
    written: &[T],
    key: impl Fn(&T) -> Result<K>,
    same: &str,
) -> Result<()> {
    let keys = written.iter().map(&key).collect::<Result<Vec<K>>>()?;
    for (j, later) in keys.iter().enumerate() {
        if let Some(i) = keys[..j].iter().position(|k| k == later) {
            let (a, b) = (written[i].to_string(), written[j].to_string());
            if a == b {
                bail!("{what}: `{a}` is listed twice: it would run once, yet its rows would count twice");
            }
            bail!("{what}: `{a}` and `{b}` are {same}: it would run once, yet its rows would count twice");
        }
    }
    Ok(())
}

/// Entries compared as written (trace names, idle policies, objectives…).
fn refuse_repeats<T: Display + PartialEq + Clone>(what: &str, written: &[T]) -> Result<()> {
    refuse_duplicates(what, written, |t| Ok(t.clone()), "the same")
}

/// Sweep policies compared in their canonical form, and by their cell folder's name (two
/// expressions whose names hash alike would share it).
fn refuse_duplicate_policies(what: &str, policies: &[String]) -> Result<()> {
    refuse_duplicates(
        what,
        policies,
        |p| {
            let spec: gapbench_online::PolicySpec = p.parse().map_err(anyhow::Error::msg)?;
            Ok(spec.to_string())
        },
        "the same policy",
    )?;
    refuse_duplicates(
        what,
        policies,
        |p| {
            let spec: gapbench_online::PolicySpec = p.parse().map_err(anyhow::Error::msg)?;
            Ok(spec.slug())
        },
        "policies whose cells share one folder",
    )
}

/// Time policies compared as the replay reads them (its base policy in canonical form and
/// its budget share as a number), and by their cell folder's name.
fn refuse_duplicate_time_policies(policies: &[String]) -> Result<()> {
    refuse_duplicates(
        "[replay] policies",
        policies,
        |p| {
            let TimePolicySpec { name, budget_share } = p.parse()?;
            let base = name
                .parse::<gapbench_online::PolicySpec>()
                .map_or(name.clone(), |spec| spec.to_string());
            Ok((base, budget_share))
        },
        "the same policy",
    )?;
    refuse_duplicates(
        "[replay] policies",
        policies,
        |p| Ok(file_safe(p)),
        "policies whose cells share one folder",
    )
}

impl BenchSpec {
    /// Refuses a spec whose name is not a plain file name or whose lists name a thing twice.
    pub(crate) fn check_lists(&self) -> Result<()> {
        check_file_name("name", &self.name)?;
        refuse_repeats("traces", &self.traces)?;
        refuse_duplicate_policies("policies", &self.policies)?;
        if let Some(gaps) = &self.gaps {
            refuse_repeats("gaps.traces", &gaps.traces)?;
            refuse_duplicate_policies("gaps.policies", &gaps.policies)?;
            refuse_repeats("gaps.objectives", &gaps.objectives)?;
            if let Some(full) = &gaps.full_cluster {
                refuse_duplicate_policies("gaps.full_cluster.policies", &full.policies)?;
            }
        }
        // `[replay]` and `[budget]` check theirs in their own `validate`.
        Ok(())
    }
}

impl ReplaySpec {
    pub(crate) fn check_lists(&self) -> Result<()> {
        refuse_repeats("[replay] traces", &self.traces)?;
        refuse_duplicate_time_policies(&self.policies)?;
        // Numbers compare as numbers: `1` and `1.0` are one scale.
        refuse_repeats("[replay] arrival_scales", &self.arrival_scales)?;
        refuse_repeats("[replay] idle", &self.idle)?;
        if let Some(eaco) = &self.eaco {
            refuse_repeats("[replay.eaco] servers", &eaco.servers)?;
            refuse_repeats("[replay.eaco] deadline_factors", &eaco.deadline_factors)?;
        }
        Ok(())
    }
}

impl BudgetStudySpec {
    pub(crate) fn check_lists(&self) -> Result<()> {
        // Two fractions whose cells would share one file: equal ones, and any the labels
        // could not tell apart.
        refuse_duplicates(
            "[budget] fractions",
            &self.fractions,
            |&f| Ok(gapbench_results::budget_point_label("", Some(f))),
            "fractions whose cells share one file",
        )?;
        refuse_repeats("[budget] kinds", &self.kinds)?;
        let names: Vec<&str> = self.setups.iter().map(|s| s.name.as_str()).collect();
        for name in &names {
            check_file_name("[budget] setup", name)?;
        }
        refuse_repeats("[budget] setups", &names)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::bench::kind::CellKind;
    use crate::bench::kinds::budget::{of_budget_study, BudgetStudy};
    use crate::bench::spec::BenchSpec;

    /// The error of parsing `text` as the spec `bad.toml`.
    fn refusal(text: &str) -> String {
        let error =
            BenchSpec::parse(Path::new("workloads/bad.toml"), text).expect_err("a refused spec");
        format!("{error:#}")
    }

    const SWEEPS: &str =
        "name = \"d\"\ntraces = [\"default\"]\npolicies = [\"fgd\"]\nseeds = [1]\n";
    const REPLAY: &str =
        "name = \"d\"\n[replay]\ntraces = [\"default\"]\npolicies = [\"fifo\"]\nseeds = [1]\n";
    const BUDGET: &str = "name = \"d\"\n[budget]\ntrace = \"default\"\nseeds = [1]\nfractions = [0.9]\nsetups = [{ name = \"slice\", gpus = 8 }]\n";
    const GAPS: &str = "[gaps]\ntraces = [\"default\"]\npolicies = [\"fgd\"]\nseeds = [1]\ncheckpoints = [50]\nsample_nodes = 4\n";

    #[test]
    fn a_thing_listed_twice_is_refused_naming_the_file_and_the_duplicate() {
        let full = "[gaps.full_cluster]\npolicies = [\"fgd\", \"pwr\"]\nseeds = [1]\n";
        let cases = [
            (
                SWEEPS.replace("[\"fgd\"]", "[\"bestfit\", \"bestfit\"]"),
                "policies: `bestfit` is listed twice",
            ),
            // Two spellings of one policy, as the parser reads them.
            (
                SWEEPS.replace("[\"fgd\"]", "[\"pwr:200,fgd:800\", \"PWR:200, fgd:800\"]"),
                "`pwr:200,fgd:800` and `PWR:200, fgd:800` are the same policy",
            ),
            (
                SWEEPS.replace(
                    "[\"default\"]",
                    "[\"default\", \"gpushare40\", \"default\"]",
                ),
                "traces: `default` is listed twice",
            ),
            (
                format!("{SWEEPS}{GAPS}").replace(
                    "policies = [\"fgd\"]\nseeds = [1]\ncheckpoints",
                    "policies = [\"fgd\", \"fgd:1000\"]\nseeds = [1]\ncheckpoints",
                ),
                "gaps.policies: `fgd` and `fgd:1000` are the same policy",
            ),
            (
                format!("{SWEEPS}{GAPS}{}", full.replace("\"pwr\"", "\"fgd\"")),
                "gaps.full_cluster.policies: `fgd` is listed twice",
            ),
            (
                format!("{SWEEPS}{GAPS}").replace(
                    "sample_nodes = 4",
                    "sample_nodes = 4\nobjectives = [\"power\", \"power\"]",
                ),
                "gaps.objectives: `power` is listed twice",
            ),
            (
                format!("{REPLAY}arrival_scales = [1, 1.0]\n"),
                "[replay] arrival_scales: `1` is listed twice",
            ),
            (
                REPLAY.replace("[\"fifo\"]", "[\"powerflow@1\", \"powerflow@1.0\"]"),
                "`powerflow@1` and `powerflow@1.0` are the same policy",
            ),
            (
                REPLAY.replace("[\"fifo\"]", "[\"fifo\", \"fgd\", \"fifo\"]"),
                "[replay] policies: `fifo` is listed twice",
            ),
            (
                format!("{REPLAY}idle = [\"always-on\", \"always-on\"]\n"),
                "[replay] idle: `always-on` is listed twice",
            ),
            (
                BUDGET.replace("[0.9]", "[0.9, 1.0, 0.90]"),
                "[budget] fractions: `0.9` is listed twice",
            ),
            (
                BUDGET.replace(
                    "seeds = [1]",
                    "seeds = [1]\nkinds = [\"energy\", \"energy\"]",
                ),
                "[budget] kinds: `energy` is listed twice",
            ),
            (
                BUDGET.replace(
                    "{ name = \"slice\", gpus = 8 }",
                    "{ name = \"slice\", gpus = 8 }, { name = \"slice\", gpus = 16 }",
                ),
                "[budget] setups: `slice` is listed twice",
            ),
        ];
        for (text, expected) in cases {
            let error = refusal(&text);
            assert!(error.contains(expected), "{expected}: got {error}");
            assert!(error.contains("workloads/bad.toml"), "{error}");
        }
    }

    #[test]
    fn fractions_that_two_decimals_cannot_tell_apart_are_distinct_cells() {
        let text = BUDGET.replace("[0.9]", "[0.951, 0.954, 0.9, 1.0]");
        let spec = BenchSpec::parse(Path::new("b.toml"), &text).unwrap();
        let matrix = of_budget_study(spec.budget.unwrap(), Vec::new());
        let cells = BudgetStudy.cells(&matrix).unwrap();
        let labels: Vec<String> = cells.iter().map(|c| c.item.label()).collect();
        for label in [
            "powerflow@0.951",
            "powerflow@0.954",
            // Fractions two decimals hold keep their names (and their cells' keys).
            "powerflow@0.90",
            "powerflow@1.00",
        ] {
            assert!(labels.contains(&label.to_string()), "{label}: {labels:?}");
        }
        let mut files: Vec<_> = cells.iter().map(|c| BudgetStudy.path(c)).collect();
        files.sort();
        files.dedup();
        assert_eq!(files.len(), cells.len(), "every cell its own file");
    }

    #[test]
    fn a_name_that_is_not_a_plain_file_name_is_refused() {
        for name in ["../escaped", "a/b", "a\\\\b", "..", ".hidden", ""] {
            let error = refusal(&SWEEPS.replace("name = \"d\"", &format!("name = \"{name}\"")));
            assert!(
                error.contains("takes ASCII letters, digits, `-`, `_` and `.`"),
                "{name}: {error}"
            );
        }
        let error = refusal(&BUDGET.replace("\"slice\"", "\"../slice\""));
        assert!(error.contains("[budget] setup `../slice`"), "{error}");
        for name in ["paper", "quick-2", "run_3.1"] {
            let text = SWEEPS.replace("name = \"d\"", &format!("name = \"{name}\""));
            BenchSpec::parse(Path::new("ok.toml"), &text).unwrap();
        }
    }

    #[test]
    fn sample_nodes_is_needed_only_by_a_sub_cluster_study() {
        let whole_only =
            format!("{SWEEPS}{GAPS}[gaps.full_cluster]\npolicies = [\"fgd\"]\nseeds = [1]\n")
                .replace(
                    "policies = [\"fgd\"]\nseeds = [1]\ncheckpoints",
                    "policies = []\nseeds = [1]\ncheckpoints",
                )
                .replace("sample_nodes = 4\n", "");
        let spec = BenchSpec::parse(Path::new("whole.toml"), &whole_only).unwrap();
        assert_eq!(spec.gaps.unwrap().sample_nodes, None);
        let error = refusal(&format!("{SWEEPS}{GAPS}").replace("sample_nodes = 4\n", ""));
        assert!(error.contains("gaps.sample_nodes is missing"), "{error}");
    }
}
