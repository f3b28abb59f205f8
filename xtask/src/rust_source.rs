//! A light reading of a crate's Rust files for the tidy tests (`tidy.rs`): which module
//! each file is, its text without test items and comments, the modules its paths name
//! (`use` trees and inline `crate::`/`super::`/`self::` paths), and its functions' lengths.
//! Not a parser: it relies on rustfmt's layout (an attribute on its own line, items
//! starting at line starts, balanced braces outside strings).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A crate's module files by module path: `""` for the crate root (`lib.rs`, `main.rs`),
/// `gap` for `gap.rs` or `gap/mod.rs`, `gap::study` for `gap/study.rs`. Test modules
/// (declared under `#[cfg(test)]`) and their files are left out.
pub fn module_files(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut modules = BTreeMap::new();
    for path in files {
        let relative = path.strip_prefix(src).expect("under src");
        let mut parts: Vec<String> = relative
            .with_extension("")
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        if matches!(
            parts.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            parts.pop();
        }
        modules.insert(parts.join("::"), path);
    }
    let mut test_modules = Vec::new();
    for (module, path) in &modules {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        for child in test_module_declarations(&text) {
            test_modules.push(join(module, &child));
        }
    }
    modules.retain(|module, _| {
        !test_modules
            .iter()
            .any(|test| module == test || module.starts_with(&format!("{test}::")))
    });
    modules
}

/// Every `.rs` file under `dir`, recursively.
pub fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// Braces as escapes, so that this file's own braces balance for a reader that counts
/// them in char literals too.
const OPEN: char = '\u{7b}';
const CLOSE: char = '\u{7d}';

fn join(parent: &str, child: &str) -> String {
    if parent.is_empty() {
        child.to_string()
    } else {
        format!("{parent}::{child}")
    }
}

fn parent_of(module: &str) -> &str {
    module.rsplit_once("::").map_or("", |(parent, _)| parent)
}

/// `mod NAME;` lines right after a `#[cfg(test)]` line.
fn test_module_declarations(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    lines
        .windows(2)
        .filter(|pair| pair[0] == "#[cfg(test)]")
        .filter_map(|pair| {
            let rest = pair[1].strip_prefix("pub ").unwrap_or(pair[1]);
            let name = rest.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.trim().to_string())
        })
        .collect()
}

/// `text` without the items under `#[cfg(test)]` (a `mod tests { … }`, a `use` line, a
/// `mod tests;`), each replaced by empty lines so line numbers stay.
pub fn without_test_items(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut kept = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "#[cfg(test)]" {
            kept.push(lines[i]);
            i += 1;
            continue;
        }
        let end = item_end(&lines, i + 1);
        kept.extend(std::iter::repeat_n("", end + 1 - i));
        i = end + 1;
    }
    kept.join("\n")
}

/// The last line of the item starting at line `start`: where its braces close, or its
/// first line ending in `;` before any brace opens.
fn item_end(lines: &[&str], start: usize) -> usize {
    let mut depth = 0i64;
    let mut opened = false;
    for (i, line) in lines.iter().enumerate().skip(start) {
        // A brace as a char literal opens nothing.
        let code = strip_line_comment(line)
            .replace("'\u{7b}'", "")
            .replace("'\u{7d}'", "");
        depth += code.matches(OPEN).count() as i64 - code.matches(CLOSE).count() as i64;
        opened |= code.contains(OPEN);
        if (opened && depth <= 0) || (!opened && code.trim_end().ends_with(';')) {
            return i;
        }
    }
    lines.len().saturating_sub(1)
}

/// A line without its `//` comment (doc comments included); `//` inside a string literal
/// is left alone.
fn strip_line_comment(line: &str) -> &str {
    let mut in_string = false;
    let mut previous = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '"' if previous != '\\' && previous != '\'' => in_string = !in_string,
            '/' if !in_string && previous == '/' => return &line[..i - 1],
            _ => {}
        }
        previous = c;
    }
    line
}

/// The production code of a file: no test items, no comments.
pub fn production_code(text: &str) -> String {
    without_test_items(text)
        .lines()
        .map(strip_line_comment)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A path a file's code names, as its segments (`["crate", "limits", "ensure_fits"]`,
/// `["super", "rows", "CheckpointOf"]`, `["rows", "CheckpointOf"]` for a relative `use`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedPath {
    pub segments: Vec<String>,
    /// Named by a `pub use` (any visibility): a re-export.
    pub re_export: bool,
}

/// The paths a file's code names: every path of each `use` tree, and every inline
/// `crate::`, `super::` or `self::` path.
pub fn named_paths(code: &str) -> Vec<NamedPath> {
    let mut paths = Vec::new();
    let mut rest = String::with_capacity(code.len());
    let mut remaining = code;
    while let Some((start, re_export)) = find_use(remaining) {
        rest.push_str(&remaining[..start]);
        let tree_start = start + "use ".len();
        let Some(length) = remaining[tree_start..].find(';') else {
            break;
        };
        let mut tree = Vec::new();
        expand_use_tree(&remaining[tree_start..tree_start + length], &[], &mut tree);
        paths.extend(tree.into_iter().map(|segments| NamedPath {
            segments,
            re_export,
        }));
        remaining = &remaining[tree_start + length + 1..];
    }
    rest.push_str(remaining);
    paths.extend(inline_paths(&rest).into_iter().map(|segments| NamedPath {
        segments,
        re_export: false,
    }));
    paths
}

/// Where the next `use` declaration starts (`use` at a line's start, after `pub`,
/// `pub(crate)` or `pub(super)`), and whether it is public (a re-export).
fn find_use(code: &str) -> Option<(usize, bool)> {
    let mut offset = 0;
    for line in code.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let visibility = ["pub(crate) ", "pub(super) ", "pub "]
            .iter()
            .find(|v| trimmed.starts_with(**v))
            .map_or(0, |v| v.len());
        if trimmed[visibility..].starts_with("use ") {
            return Some((offset + indent + visibility, visibility > 0));
        }
        offset += line.len();
    }
    None
}

/// Every path of a `use` tree such as `crate::{a::B, c::{self, D as E}, f::*}` under
/// `prefix`.
fn expand_use_tree(tree: &str, prefix: &[String], paths: &mut Vec<Vec<String>>) {
    let tree = tree.trim();
    if let Some(open) = tree.find(OPEN) {
        let mut base = prefix.to_vec();
        base.extend(segments(tree[..open].trim_end_matches("::")));
        let inner = &tree[open + 1..tree.rfind(CLOSE).unwrap_or(tree.len())];
        for part in split_top_level(inner) {
            expand_use_tree(part, &base, paths);
        }
        return;
    }
    let tree = tree.split(" as ").next().unwrap_or(tree);
    let mut path = prefix.to_vec();
    path.extend(segments(tree).filter(|s| s != "self" || prefix.is_empty()));
    if !path.is_empty() {
        paths.push(path);
    }
}

fn segments(path: &str) -> impl Iterator<Item = String> + '_ {
    path.split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty() && *s != "*")
        .map(str::to_string)
}

/// `a, b::{c, d}, e` split at its top-level commas.
fn split_top_level(text: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in text.char_indices() {
        match c {
            OPEN => depth += 1,
            CLOSE => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

/// Inline paths that start with `crate`, `super` or `self` (each followed by `::`).
fn inline_paths(code: &str) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut paths = Vec::new();
    for keyword in ["crate::", "super::", "self::"] {
        for (at, _) in code.match_indices(keyword) {
            if at > 0 && (is_ident(bytes[at - 1]) || bytes[at - 1] == b':') {
                continue; // `foo_crate::`, or a later segment of a longer path
            }
            let end = code[at..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |n| at + n);
            paths.push(segments(&code[at..end]).collect());
        }
    }
    paths
}

/// The module a path names from `module` (one of `modules`): the deepest module its
/// leading segments reach, `None` for a path outside the crate (another crate, `std`).
pub fn resolve(path: &[String], module: &str, modules: &BTreeSet<String>) -> Option<String> {
    let (mut base, mut rest) = match path.first().map(String::as_str) {
        Some("crate") => (String::new(), &path[1..]),
        Some("self") => (module.to_string(), &path[1..]),
        Some("super") => {
            let mut base = module;
            let mut rest = path;
            while rest.first().map(String::as_str) == Some("super") {
                base = parent_of(base);
                rest = &rest[1..];
            }
            (base.to_string(), rest)
        }
        // A relative path names a child module, or something outside the crate.
        Some(first) if modules.contains(&join(module, first)) => (module.to_string(), path),
        _ => return None,
    };
    while let Some(next) = rest.first() {
        let candidate = join(&base, next);
        if !modules.contains(&candidate) {
            break;
        }
        base = candidate;
        rest = &rest[1..];
    }
    Some(base)
}

/// The import graph of the crate whose sources are in `src`: each module and the modules
/// its production code names, the crate root (a facade of `mod` lines and re-exports) left
/// out on both ends.
pub fn import_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files = module_files(src);
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let mut graph = BTreeMap::new();
    for (module, path) in files.iter().filter(|(m, _)| !m.is_empty()) {
        let code = production_code(&std::fs::read_to_string(path).unwrap_or_default());
        let targets: BTreeSet<String> = named_paths(&code)
            .iter()
            .filter_map(|p| {
                let target = resolve(&p.segments, module, &modules)?;
                // A module re-exporting its own submodules' items is their facade, not a
                // user of them: `pub use self::study::gap_study` adds no arrow.
                let facade = p.re_export && target.starts_with(&format!("{module}::"));
                (!facade).then_some(target)
            })
            .filter(|target| !target.is_empty() && target != module)
            .collect();
        graph.insert(module.clone(), targets);
    }
    graph
}

/// The strongly connected components of more than one module (Tarjan's algorithm): each
/// an import circle, its modules sorted.
pub fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    self.low.insert(v, self.low[v].min(self.low[w]));
                } else if self.stack.contains(&w) {
                    self.low.insert(v, self.low[v].min(self.index[w]));
                }
            }
            if self.low[v] == self.index[v] {
                let at = self
                    .stack
                    .iter()
                    .rposition(|m| *m == v)
                    .expect("on the stack");
                let mut component: Vec<String> =
                    self.stack.drain(at..).map(str::to_string).collect();
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for module in graph.keys() {
        if !walk.index.contains_key(module.as_str()) {
            walk.visit(module);
        }
    }
    walk.found.sort();
    walk.found
}

/// Each production function of `text` with its first line (1-based) and its length in
/// lines, signature to closing brace.
pub fn function_lengths(text: &str) -> Vec<(String, usize, usize)> {
    let code = production_code(text);
    let lines: Vec<&str> = code.lines().collect();
    let mut functions = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = function_name(line) else {
            continue;
        };
        if line.trim_end().ends_with(';') {
            continue; // a declaration without a body
        }
        let end = item_end(&lines, i);
        functions.push((name, i + 1, end + 1 - i));
    }
    functions
}

/// The name of the function a line declares (`pub(crate) const unsafe fn name<…>(`).
fn function_name(line: &str) -> Option<String> {
    let mut words = line.trim_start();
    for prefix in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "async ",
        "unsafe ",
    ] {
        words = words.strip_prefix(prefix).unwrap_or(words);
    }
    let rest = words.strip_prefix("fn ")?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

#[test]
fn use_trees_inline_paths_and_test_items_are_read() {
    let text = "use crate::{a::B, c::{self, D as E}, f::*};\n\
                pub(crate) use super::g::H;\n\
                use rows::Row;\n\
                fn x() { crate::limits::fits(); } // crate::comment::Only\n\
                #[cfg(test)]\n\
                mod tests {\n    use crate::tested::T;\n}\n";
    let paths = named_paths(&production_code(text));
    let joined: Vec<String> = paths.iter().map(|p| p.segments.join("::")).collect();
    let re_exports: Vec<bool> = paths.iter().map(|p| p.re_export).collect();
    assert_eq!(re_exports, [false, false, false, false, true, false, false]);
    assert_eq!(
        joined,
        [
            "crate::a::B",
            "crate::c",
            "crate::c::D",
            "crate::f",
            "super::g::H",
            "rows::Row",
            "crate::limits::fits"
        ]
    );
    let modules: BTreeSet<String> = ["gap", "gap::rows", "gap::study", "limits"]
        .map(String::from)
        .into();
    let resolve_in = |path: &str, module: &str| {
        let path: Vec<String> = path.split("::").map(String::from).collect();
        resolve(&path, module, &modules)
    };
    assert_eq!(
        resolve_in("super::rows::X", "gap::study").as_deref(),
        Some("gap::rows")
    );
    assert_eq!(
        resolve_in("super::item", "gap::study").as_deref(),
        Some("gap")
    );
    assert_eq!(resolve_in("rows::X", "gap").as_deref(), Some("gap::rows"));
    assert_eq!(
        resolve_in("crate::limits::f", "gap").as_deref(),
        Some("limits")
    );
    assert_eq!(resolve_in("std::path::Path", "gap"), None);
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(m, to)| (m.to_string(), to.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(circles(&graph), [["a", "b", "c"]]);
    let lengths = function_lengths("pub fn f() {\n    1\n}\n\nfn g();\n");
    assert_eq!(lengths, [("f".to_string(), 1, 3)]);
}
