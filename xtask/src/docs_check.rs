//! The documentation a newcomer reads stays true: README stays short, and every relative
//! link in README.md, ARCHITECTURE.md, `docs/*.md` and `workloads/*/README.md` points at a
//! file that exists and, for
//! a `page.md#section` link, at a heading that page has. (The generated pages,
//! `docs/results.md` and `docs/cli.md`, are compared with their sources by the tests that
//! generate them, in the results crate and the `gapbench` binary.)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// README says what gapbench answers and where the rest is; the rest lives in `docs/`.
const README_MAX_LINES: usize = 200;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace root")
        .to_path_buf()
}

/// README.md, ARCHITECTURE.md, every `docs/*.md` and the READMEs of `workloads/*/`,
/// relative to the root.
fn documentation_pages(root: &Path) -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md"), PathBuf::from("ARCHITECTURE.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("a docs/ folder")
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .map(|path| {
            path.strip_prefix(root)
                .expect("under the root")
                .to_path_buf()
        })
        .collect();
    docs.sort();
    pages.extend(docs);
    let mut workloads: Vec<PathBuf> = std::fs::read_dir(root.join("workloads"))
        .expect("a workloads/ folder")
        .flatten()
        .map(|entry| entry.path().join("README.md"))
        .filter(|readme| readme.is_file())
        .map(|readme| {
            readme
                .strip_prefix(root)
                .expect("under the root")
                .to_path_buf()
        })
        .collect();
    workloads.sort();
    pages.extend(workloads);
    pages
}

/// The targets of the inline links `[text](target)` outside fenced code blocks, with the
/// 1-based line each is on.
fn link_targets(text: &str) -> Vec<(usize, String)> {
    let mut links = Vec::new();
    let mut in_fence = false;
    for (index, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            links.push((index + 1, after[..end].trim().to_string()));
            rest = &after[end..];
        }
    }
    links
}

/// GitHub's anchor for a heading: lower case, letters, digits, `-` and `_` kept, spaces
/// turned into `-`, everything else dropped.
fn heading_anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a page's headings (outside fenced code), a repeated one numbered `-1`,
/// `-2`, … as GitHub numbers them.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        if in_fence {
            continue;
        }
        let anchor = heading_anchor(heading.trim_start_matches('#'));
        let mut unique = anchor.clone();
        let mut count = 0;
        while found.contains(&unique) {
            count += 1;
            unique = format!("{anchor}-{count}");
        }
        found.insert(unique);
    }
    found
}

/// What is wrong with the link `target` on `page`, if anything.
fn broken(root: &Path, page: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (file, anchor) = match target.split_once('#') {
        Some((file, anchor)) => (file, Some(anchor)),
        None => (target, None),
    };
    let resolved = if file.is_empty() {
        page.to_path_buf()
    } else {
        normalise(&page.parent().unwrap_or(Path::new("")).join(file))
    };
    if !root.join(&resolved).exists() {
        return Some(format!("{} does not exist", resolved.display()));
    }
    let anchor = anchor.filter(|a| !a.is_empty())?;
    if resolved.extension().is_none_or(|e| e != "md") {
        return None;
    }
    let text = std::fs::read_to_string(root.join(&resolved)).ok()?;
    (!anchors(&text).contains(anchor))
        .then(|| format!("{} has no heading `#{anchor}`", resolved.display()))
}

/// `a/b/../c` as `a/c`, so a link out of `docs/` resolves against the root.
fn normalise(path: &Path) -> PathBuf {
    let mut parts: Vec<std::path::Component> = Vec::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir if !parts.is_empty() => {
                parts.pop();
            }
            std::path::Component::CurDir => {}
            other => parts.push(other),
        }
    }
    parts.iter().collect()
}

#[test]
fn every_relative_link_in_the_docs_points_at_something_that_exists() {
    let root = workspace_root();
    let mut problems = Vec::new();
    for page in documentation_pages(&root) {
        let text = std::fs::read_to_string(root.join(&page)).expect("a readable page");
        for (line, target) in link_targets(&text) {
            if let Some(problem) = broken(&root, &page, &target) {
                problems.push(format!("{}:{line}: ({target}) {problem}", page.display()));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_perf_history_columns_are_the_ones_perf_writes() {
    let page = std::fs::read_to_string(workspace_root().join("docs/benchmarks.md"))
        .expect("docs/benchmarks.md");
    let begin = "<!-- perf-history:begin -->";
    let end = "<!-- perf-history:end -->";
    let start = page.find(begin).expect("a perf-history section") + begin.len();
    let stop = start + page[start..].find(end).expect("its end marker");
    let generated = crate::perf::history_markdown();
    assert!(
        page[start..stop].trim() == generated.trim(),
        "docs/benchmarks.md's perf-history table differs; put this between its markers:\n{generated}"
    );
}

#[test]
fn readme_stays_short() {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(
        lines < README_MAX_LINES,
        "README.md has {lines} lines; move detail into a page of docs/ and link it"
    );
}

#[test]
fn the_link_checker_sees_links_anchors_and_fences() {
    let text = "# Top\n\n## `gapbench run`: one policy\n\n[a](docs/x.md#top) and [b](#gapbench-run-one-policy)\n```\n[c](nowhere.md)\n```\n## Top\n";
    assert_eq!(
        link_targets(text),
        [
            (5, "docs/x.md#top".to_string()),
            (5, "#gapbench-run-one-policy".to_string())
        ]
    );
    let found = anchors(text);
    assert!(found.contains("top") && found.contains("top-1"));
    assert!(found.contains("gapbench-run-one-policy"));
    assert_eq!(
        normalise(Path::new("docs/../README.md")),
        Path::new("README.md")
    );
}
