//! Helpers shared by the harness's integration tests.
// Each test binary that includes this module uses a part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Every file below `dir` with its bytes, sorted by relative path — but the cells' wall
/// times (`cell-times/`), the one thing in a results folder that differs between runs.
pub fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path == dir.join(gapbench::bench::status::CELL_TIMES_DIR) {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push((
                    path.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&path).unwrap(),
                ));
            }
        }
    }
    files.sort();
    files
}

/// Asserts two folders hold the same files with the same bytes.
pub fn assert_same_files(a: &Path, b: &Path) {
    let (fa, fb) = (files_under(a), files_under(b));
    let names = |f: &[(PathBuf, Vec<u8>)]| f.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(names(&fa), names(&fb));
    for ((name, x), (_, y)) in fa.iter().zip(&fb) {
        assert!(x == y, "{} differs", name.display());
    }
}

/// An empty scratch folder of this test process, `gapbench-<test>-<pid>-<name>`.
pub fn scratch(test: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gapbench-{test}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `gapbench ARGS` in `dir` (no traces folder from the environment, no backtraces);
/// returns (exit code, stdout, stderr).
pub fn gapbench_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_gapbench"))
        .args(args)
        .current_dir(dir)
        .env_remove("GAPBENCH_TRACES")
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("gapbench runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The names directly in `dir`, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The file and folder names `docs/results.md` documents: its `### \`NAME\`` headings, a
/// heading of several names split at `, `, a folder's trailing `/` dropped.
pub fn documented_names() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/results.md");
    let docs = std::fs::read_to_string(path).expect("docs/results.md");
    docs.lines()
        .filter_map(|line| line.strip_prefix("### `")?.strip_suffix('`'))
        .flat_map(|heading| heading.split(", "))
        .map(|name| name.trim_end_matches('/').to_string())
        .collect()
}

/// Every name directly in the results folder `dir` is documented in `docs/results.md`, so
/// a file a user finds there is never one the documentation leaves out.
pub fn assert_every_entry_documented(dir: &Path) {
    let documented = documented_names();
    for name in names(dir) {
        assert!(
            documented.contains(&name),
            "{name} (in {}) is not documented: declare it in crates/results/src/docs.rs",
            dir.display()
        );
    }
}
