//! Atomic file writes: write a sibling temp file, then rename it over the target, so an
//! interrupted run never leaves a half-written result.

use std::fs;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    write_atomic_with(path, |file| Ok(file.write_all(contents)?))
}

/// [`write_atomic`] of what `write` writes, streamed to the temp file (through a buffer):
/// for files too large to build in memory first.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)
            .with_context(|| format!("cannot create folder {}", parent.display()))?;
    }
    let file_name = path
        .file_name()
        .with_context(|| format!("{} is not a file path", path.display()))?;
    let temp = path.with_file_name(format!(
        ".{}.{}.tmp",
        file_name.to_string_lossy(),
        std::process::id()
    ));
    let written = fs::File::create(&temp)
        .with_context(|| format!("cannot create {}", temp.display()))
        .and_then(|file| {
            let mut buffered = std::io::BufWriter::new(file);
            write(&mut buffered)
                .and_then(|()| Ok(buffered.into_inner().map_err(|e| e.into_error())?))
                .and_then(|file| Ok(file.sync_all()?))
                .with_context(|| format!("cannot write {}", temp.display()))
        })
        .and_then(|()| {
            fs::rename(&temp, path)
                .with_context(|| format!("cannot move {} to {}", temp.display(), path.display()))
        });
    if written.is_err() {
        // A full disk or a failed rename leaves no temp file behind.
        let _ = fs::remove_file(&temp);
    }
    written
}

pub fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    write_atomic(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_no_temp_file() {
        let dir = std::env::temp_dir().join(format!("gapbench-io-{}", std::process::id()));
        // The target is a folder with a file in it: the rename over it fails.
        let target = dir.join("taken");
        fs::create_dir_all(target.join("inside")).unwrap();
        assert!(write_atomic(&target, b"x").is_err());
        let names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["taken"]);
        fs::remove_dir_all(&dir).unwrap();
    }
}
