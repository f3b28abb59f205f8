//! Architecture invariants as tests, in the manner of rust-analyzer's tidy tests: each
//! workspace crate may depend only on the workspace crates its layer allows (read from
//! `cargo metadata`), no two files of a crate import each other in a circle, no source file
//! grows past what one reads in a sitting, the policy tables of `docs/own-policy.md` are the
//! ones the policy registry generates, and ARCHITECTURE.md's code map names files that exist where it says.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::rust_source::{circles, function_lengths, import_graph, module_files, rust_files};

/// Each workspace crate and the workspace crates its library may depend on. A crate not
/// listed here fails the test: a new crate states its place in the layers.
const ALLOWED_WORKSPACE_DEPS: [(&str, &[&str]); 11] = [
    // Units, cluster, checker, power, fragmentation: the vocabulary of everything else.
    ("gapbench-model", &[]),
    // The results schema: readable without any code that produced it.
    ("gapbench-results", &[]),
    // The heuristic engine.
    ("gapbench-online", &["gapbench-model"]),
    // Time mode: its engine and time-only policies, on online's scoring; nothing below it
    // imports it. Its output files (`timeline.csv`, `tasks.csv`) are declared in results,
    // with every other file users read.
    (
        "gapbench-replay",
        &["gapbench-model", "gapbench-online", "gapbench-results"],
    ),
    // The exact side: knows no heuristic engine.
    ("gapbench-ilp", &["gapbench-model", "gapbench-results"]),
    // Bounds on whole runs (replay energy, EaCO, JCT–budget): on the exact side's solvers.
    (
        "gapbench-bounds",
        &["gapbench-model", "gapbench-results", "gapbench-ilp"],
    ),
    // Figures and REPORT.md: no solver, no engine, no runner.
    ("gapbench-report", &["gapbench-results"]),
    // The runner and CLI: everything.
    (
        "gapbench",
        &[
            "gapbench-model",
            "gapbench-online",
            "gapbench-replay",
            "gapbench-ilp",
            "gapbench-bounds",
            "gapbench-results",
            "gapbench-report",
        ],
    ),
    (
        "gapbench-benches",
        &[
            "gapbench-model",
            "gapbench-online",
            "gapbench-replay",
            "gapbench-ilp",
            "gapbench-bounds",
        ],
    ),
    // The Python binding: the runner's public API, and the vocabulary its arguments and
    // score functions use.
    (
        "gapbench-python",
        &["gapbench", "gapbench-online", "gapbench-replay"],
    ),
    // Builds before HiGHS: no workspace crate.
    ("xtask", &[]),
];

/// External crates a layer must not pull in: the report draws without a solver or CLI, the
/// model and the schema stay free of solver, plotting and CLI.
const FORBIDDEN_EXTERNAL_DEPS: [(&str, &[&str]); 4] = [
    ("gapbench-replay", &["good_lp", "highs", "clap", "plotters"]),
    ("gapbench-report", &["good_lp", "highs", "clap", "rayon"]),
    ("gapbench-model", &["good_lp", "highs", "clap", "plotters"]),
    (
        "gapbench-results",
        &["good_lp", "highs", "clap", "plotters"],
    ),
];

const MAX_LINES: usize = 800;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace root")
        .to_path_buf()
}

/// `cargo metadata --no-deps`: each workspace package with its normal (non-dev, non-build)
/// dependency names.
fn normal_dependencies() -> BTreeMap<String, Vec<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(workspace_root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).expect("metadata is JSON");
    let mut crates = BTreeMap::new();
    for package in metadata["packages"].as_array().expect("packages") {
        let name = package["name"].as_str().expect("name").to_string();
        let deps = package["dependencies"]
            .as_array()
            .expect("dependencies")
            .iter()
            .filter(|d| d["kind"].is_null())
            .map(|d| d["name"].as_str().expect("dependency name").to_string())
            .collect();
        crates.insert(name, deps);
    }
    crates
}

#[test]
fn workspace_crates_depend_only_on_their_allowed_layers() {
    let crates = normal_dependencies();
    let workspace: Vec<&String> = crates.keys().collect();
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED_WORKSPACE_DEPS.into_iter().collect();
    let mut violations = Vec::new();
    for (name, deps) in &crates {
        let Some(permitted) = allowed.get(name.as_str()) else {
            violations.push(format!(
                "{name} has no entry in ALLOWED_WORKSPACE_DEPS: state which layers it may use"
            ));
            continue;
        };
        for dep in deps.iter().filter(|d| workspace.contains(d)) {
            if !permitted.contains(&dep.as_str()) {
                violations.push(format!("{name} must not depend on {dep}"));
            }
        }
    }
    for (name, forbidden) in FORBIDDEN_EXTERNAL_DEPS {
        let deps = crates.get(name).map(Vec::as_slice).unwrap_or_default();
        for dep in deps.iter().filter(|d| forbidden.contains(&d.as_str())) {
            violations.push(format!("{name} must not depend on {dep}"));
        }
    }
    assert!(
        violations.is_empty(),
        "architecture violations:\n{}",
        violations.join("\n")
    );
}

#[test]
fn no_source_file_is_over_800_lines() {
    let root = workspace_root();
    let mut files = Vec::new();
    for dir in ["crates", "benches", "xtask"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 20, "found only {} .rs files", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|path| {
            let lines = std::fs::read_to_string(path).ok()?.lines().count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", path.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "split these by concept (at most {MAX_LINES} lines each):\n{}",
        long.join("\n")
    );
}

/// The page whose policy and expression-feature tables the registry generates.
const POLICY_PAGE: &str = "docs/own-policy.md";

/// The text between `<!-- NAME:begin -->` and `<!-- NAME:end -->` in `text`.
fn generated_section<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    let begin = format!("<!-- {name}:begin -->");
    let end = format!("<!-- {name}:end -->");
    let start = text.find(&begin)? + begin.len();
    let stop = start + text[start..].find(&end)?;
    Some(text[start..stop].trim())
}

#[test]
fn the_policy_tables_of_the_docs_are_the_registrys() {
    let page = std::fs::read_to_string(workspace_root().join(POLICY_PAGE)).expect(POLICY_PAGE);
    for (name, generated) in [
        ("policies", gapbench_online::policies_markdown()),
        ("expr-features", gapbench_online::expr::features_markdown()),
    ] {
        let section = generated_section(&page, name)
            .unwrap_or_else(|| panic!("{POLICY_PAGE} has no <!-- {name}:begin/end --> section"));
        assert!(
            section == generated.trim(),
            "{POLICY_PAGE}'s `{name}` table differs from the registry's; put this between its \
             markers:\n{generated}"
        );
    }
}

/// The code map's sections: `### \`crates/NAME\`` (and `benches/`, `xtask/`) and their text.
fn code_map_sections(text: &str) -> Vec<(String, String)> {
    let mut sections = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("### `") {
            if let Some(done) = current.take() {
                sections.push(done);
            }
            let name = rest.trim_end_matches('`').trim_end_matches('/').to_string();
            current = Some((name, String::new()));
        } else if line.starts_with("## ") {
            if let Some(done) = current.take() {
                sections.push(done);
            }
        } else if let Some((_, body)) = current.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    sections.extend(current);
    sections
}

/// Backticked tokens of `text` that name a module file or folder: `name.rs`, `name/`,
/// `dir/name.rs`.
fn named_module_paths(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|token| {
            (token.ends_with(".rs") || token.ends_with('/'))
                && token
                    .trim_end_matches(".rs")
                    .trim_end_matches('/')
                    .split('/')
                    .all(|part| {
                        !part.is_empty()
                            && part
                                .chars()
                                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                    })
        })
        .map(str::to_string)
        .collect()
}

/// Whether `token` (`name.rs`, `name/`, `dir/name.rs`) is a file or folder somewhere under
/// `dir`.
fn exists_under(dir: &Path, token: &str) -> bool {
    let wanted = token.trim_end_matches('/');
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let path = entry.path();
        path.ends_with(wanted) || (path.is_dir() && exists_under(&path, token))
    })
}

/// Whether `token` (`name.rs`, `name/`, `dir/name.rs`) is a file or folder exactly where a
/// section of the code map points: under its crate's `src/`, under the section's own
/// folder, or under the workspace root (a path such as `crates/harness/tests/x.rs`). A
/// module named by its basename alone but living deeper is not found: the map says where
/// each module is.
fn exists_exactly(root: &Path, section: &Path, src: &Path, token: &str) -> bool {
    let wanted = token.trim_end_matches('/');
    [src, section, root].iter().any(|dir| {
        let path = dir.join(wanted);
        if token.ends_with('/') {
            path.is_dir()
        } else {
            path.is_file()
        }
    })
}

/// ARCHITECTURE.md's code map stays true: every module it names as a file or folder exists,
/// and every top-level module of a crate is named in that crate's section.
#[test]
fn the_code_map_names_every_module_and_every_named_module_exists() {
    let root = workspace_root();
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let sections = code_map_sections(&text);
    assert!(
        sections.len() >= 7,
        "found {} code-map sections",
        sections.len()
    );
    let mut problems = Vec::new();
    for (name, body) in &sections {
        let base = root.join(name);
        let src = if base.join("src").is_dir() {
            base.join("src")
        } else {
            base.clone()
        };
        if !src.is_dir() {
            problems.push(format!(
                "the code map has a section for `{name}`, which does not exist"
            ));
            continue;
        }
        for token in named_module_paths(body) {
            if !exists_under(&src, &token) && !exists_under(&root, &token) {
                problems.push(format!("`{name}` names `{token}`, which does not exist"));
            }
        }
        if !name.starts_with("crates/") {
            continue;
        }
        for entry in std::fs::read_dir(&src).expect("a source folder").flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            let module = file.trim_end_matches(".rs");
            if matches!(module, "lib" | "main") {
                continue;
            }
            let named = [
                format!("`{module}`"),
                format!("`{module}.rs`"),
                format!("`{module}/`"),
            ]
            .iter()
            .any(|form| body.contains(form.as_str()));
            if !named {
                problems.push(format!(
                    "the `{name}` section does not name its module `{module}`"
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "ARCHITECTURE.md's code map is out of date:\n{}",
        problems.join("\n")
    );
}

/// Each crate's source folder: `crates/*/src` and `xtask/src`.
fn crate_sources() -> Vec<(String, PathBuf)> {
    let root = workspace_root();
    let mut sources: Vec<(String, PathBuf)> = std::fs::read_dir(root.join("crates"))
        .expect("crates/")
        .flatten()
        .map(|entry| {
            let name = format!("crates/{}", entry.file_name().to_string_lossy());
            (name, entry.path().join("src"))
        })
        .filter(|(_, src)| src.is_dir())
        .collect();
    sources.push(("xtask".to_string(), root.join("xtask/src")));
    sources.sort();
    sources
}

/// No two files of a crate import each other, directly or through others: the arrows of
/// `use crate::…`, `super::…` and inline `crate::…` paths (test modules left out) run one
/// way, so each file can be read, changed and tested above the ones it uses. A module's
/// files may use their parent's items through `super::` only if the parent uses none of
/// theirs back (shared items go into a small leaf module both use); a parent's `pub use`
/// of its own submodules' items is their facade and counts for nothing. Stricter than a
/// per-line regex: grouped `use` trees count, comments and doc links do not.
#[test]

fn no_import_circle_between_the_files_of_a_crate() {
    let mut problems = Vec::new();
    for (name, src) in crate_sources() {
        for circle in circles(&import_graph(&src)) {
            problems.push(format!("{name} ({}): {}", circle.len(), circle.join(", ")));
        }
    }
    assert!(
        problems.is_empty(),
        "import circles between files (module paths; break each by moving what both sides \
         share into a leaf module):\n{}",
        problems.join("\n")
    );
}

/// Functions longer than this are split by concept (named helpers), or listed in
/// `LONG_FUNCTIONS` with why they stay.
const MAX_FUNCTION_LINES: usize = 80;

/// The production functions over [`MAX_FUNCTION_LINES`] that remain, as `path name lines`
/// lines (`xtask/long_functions.txt`).
const LONG_FUNCTIONS: &str = include_str!("../long_functions.txt");

/// Every production function (test modules left out) over the limit, as `path name lines`.
fn long_functions() -> Vec<(String, String, usize)> {
    let root = workspace_root();
    let mut long = Vec::new();
    for (_, src) in crate_sources() {
        for path in module_files(&src).values() {
            let text = std::fs::read_to_string(path).expect("a source file");
            let relative = path.strip_prefix(&root).expect("in the workspace");
            for (name, _, lines) in function_lengths(&text) {
                if lines > MAX_FUNCTION_LINES {
                    long.push((relative.display().to_string(), name, lines));
                }
            }
        }
    }
    long.sort();
    long
}

/// The list of long production functions may only shrink: a function over the limit that
/// is not listed at its length fails, whether it grew, is new, or shrank (then the list is
/// updated, so it never allows more than the code has).
#[test]

fn long_functions_only_shrink() {
    // Per file and name (a file may hold two functions of one name), the listed lengths.
    let mut listed: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for line in LONG_FUNCTIONS.lines().filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [path, name, lines] = fields[..] else {
            panic!("long_functions.txt: `{line}` is not `path name lines`");
        };
        let lines: usize = lines.parse().expect("a line count");
        listed
            .entry((path.to_string(), name.to_string()))
            .or_default()
            .push(lines);
    }
    let found = long_functions();
    let mut by_name: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (path, name, lines) in &found {
        by_name
            .entry((path.clone(), name.clone()))
            .or_default()
            .push(*lines);
    }
    let mut problems = Vec::new();
    for (key, lengths) in by_name.iter_mut() {
        let allowed = listed.remove(key).unwrap_or_default();
        lengths.sort_unstable();
        let mut allowed_sorted = allowed.clone();
        allowed_sorted.sort_unstable();
        if allowed_sorted != *lengths {
            problems.push(format!(
                "{} {}: {lengths:?} lines, listed {allowed_sorted:?}",
                key.0, key.1
            ));
        }
    }
    problems.extend(
        listed
            .keys()
            .map(|(path, name)| format!("{path} {name}: listed, no longer over the limit")),
    );
    let current: Vec<String> = found
        .iter()
        .map(|(path, name, lines)| format!("{path} {name} {lines}"))
        .collect();
    assert!(
        problems.is_empty(),
        "the long functions differ from xtask/long_functions.txt (a function grows only \
         below {MAX_FUNCTION_LINES} lines; split it by concept, or update the list when one \
         shrank):\n{}\n\nthe list as it stands now:\n{}",
        problems.join("\n"),
        current.join("\n")
    );
}

/// Every file or folder the code map names is where it says: under its crate's `src/`
/// (`gap/study.rs`), the section's own folder or the workspace root — not merely a file of
/// that basename somewhere ([`exists_under`], which the test above still accepts), so a
/// module moved to another folder, or named by its basename alone, is caught.
#[test]

fn the_code_map_names_every_path_exactly() {
    let root = workspace_root();
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut problems = Vec::new();
    for (name, body) in &code_map_sections(&text) {
        let base = root.join(name);
        let src = if base.join("src").is_dir() {
            base.join("src")
        } else {
            base.clone()
        };
        for token in named_module_paths(body) {
            if !exists_exactly(&root, &base, &src, &token) {
                problems.push(format!(
                    "`{name}` names `{token}`, which is not at `{name}/src/{token}`, `{name}/{token}` nor `{token}`"
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "ARCHITECTURE.md's code map names paths that are not where it says:\n{}",
        problems.join("\n")
    );
}
