//! Helpers shared by the harness's integration tests.
// Each test binary that includes this module uses a part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Every file below `dir` with its bytes, sorted by relative path — but the cells' wall
/// times (`cell-times/`), the one thing in a results folder that differs between runs.
pub fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path == dir.join(gapbench::status::CELL_TIMES_DIR) {
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
