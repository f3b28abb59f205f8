//! The results folder a command writes: one writer at a time, and nothing left over.
//!
//! A second gapbench on a folder another one is writing is refused, not let in to split
//! the work: both would compute every cell, and time-limited solves side by side get worse
//! (each slows the other down far more than its limit absorbs). Claiming cells safely on a
//! shared file system would also need leases that outlive a killed worker; `--shard I/N`
//! with a folder per worker and `gapbench merge` already split a matrix between machines.
//! The lock is the operating system's (`flock` on the folder's `.gapbench.lock`), so the
//! kernel releases it when its holder exits or is killed: there is never a stale lock.
//!
//! While it holds the lock a command may clean the folder: it removes the temp files an
//! interrupted atomic write left and a killed redraw's staging folder ([`OutDir::acquire`]), and the outputs of an earlier run
//! that it does not write itself ([`remove_stale_seed_layout`]).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// The lock file of a results folder; empty unless a command holds the folder.
pub use gapbench_results::LOCK_FILE;

/// A results folder held by this process until dropped.
#[derive(Debug)]
pub struct OutDir {
    path: PathBuf,
    lock: File,
}

impl OutDir {
    /// Creates `path` when needed and takes its lock, or says who holds it and what to do
    /// instead. Then removes the temp files an interrupted write left below it (no other
    /// writer can be at work).
    pub fn acquire(path: &Path) -> Result<OutDir> {
        std::fs::create_dir_all(path)
            .with_context(|| format!("cannot create folder {}", path.display()))?;
        let lock_path = path.join(LOCK_FILE);
        let mut lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .with_context(|| format!("cannot open {}", lock_path.display()))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = lock.read_to_string(&mut holder);
                let holder = match holder.trim() {
                    "" => "another gapbench".to_string(),
                    text => format!("another gapbench ({text})"),
                };
                bail!(
                    "{} is in use by {holder}: two runs on one folder would both compute every cell, and time-limited solves side by side get worse. Wait for it to finish, or give another --out; to split a matrix between machines, give each `--shard I/N` and its own folder, then `gapbench merge`",
                    path.display()
                );
            }
            Err(TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", lock_path.display()))
            }
        }
        let args: Vec<String> = std::env::args().collect();
        lock.set_len(0)
            .and_then(|()| lock.rewind())
            .and_then(|()| writeln!(lock, "pid {}: {}", std::process::id(), args.join(" ")))
            .with_context(|| format!("cannot write {}", lock_path.display()))?;
        remove_temp_files(path)?;
        Ok(OutDir {
            path: path.to_path_buf(),
            lock,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for OutDir {
    /// Empties the lock file (so a finished folder holds the same bytes whoever wrote it);
    /// closing the file releases the lock.
    fn drop(&mut self) {
        let _ = self.lock.set_len(0);
    }
}

/// Whether `name` is a temp file of an atomic write (`.NAME.PID.tmp`, `.STEM.PID.tmp.png`).
pub fn is_temp_file(name: &str) -> bool {
    name.starts_with('.') && (name.ends_with(".tmp") || name.ends_with(".tmp.png"))
}

/// Whether `name` is the staging folder of a redraw (`.staging-PID`,
/// [`gapbench_report::STAGING_PREFIX`]): held by a writer of the folder, so one found by the
/// next writer is a killed redraw's.
pub fn is_staging_folder(name: &str) -> bool {
    name.strip_prefix(gapbench_report::STAGING_PREFIX)
        .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

/// Removes every temp file of an atomic write, and every staging folder of a redraw, below
/// `dir`; returns how many.
fn remove_temp_files(dir: &Path) -> Result<usize> {
    let mut removed = 0;
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let entries = std::fs::read_dir(&folder)
            .with_context(|| format!("cannot list {}", folder.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot list {}", folder.display()))?;
            let path = entry.path();
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if is_dir && is_staging_folder(&entry.file_name().to_string_lossy()) {
                std::fs::remove_dir_all(&path)
                    .with_context(|| format!("cannot remove {}", path.display()))?;
                removed += 1;
            } else if is_dir {
                folders.push(path);
            } else if is_temp_file(&entry.file_name().to_string_lossy()) {
                std::fs::remove_file(&path)
                    .with_context(|| format!("cannot remove {}", path.display()))?;
                removed += 1;
            }
        }
    }
    Ok(removed)
}

/// The seed of a per-seed folder name, `seed-<n>`.
fn folder_seed(name: &str) -> Option<u64> {
    name.strip_prefix("seed-")?.parse().ok()
}

/// Removes what an earlier run of a per-seed command (`run`, `replay`) left in `out` and
/// this run does not write: with `per_seed` folders, the single-seed files `top_files`
/// and every `seed-<n>/` folder of a seed `is_seed` does not take; without, every
/// `seed-<n>/` folder and the files `multi_files` of several seeds (`mean_curve.csv`).
/// Other files are the user's and stay.
pub fn remove_stale_seed_layout(
    out: &Path,
    per_seed: bool,
    is_seed: impl Fn(u64) -> bool,
    top_files: &[&str],
    multi_files: &[&str],
) -> Result<()> {
    let stale_files = if per_seed { top_files } else { multi_files };
    for name in stale_files {
        let path = out.join(name);
        if path.is_file() {
            std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
        }
    }
    let entries =
        std::fs::read_dir(out).with_context(|| format!("cannot list {}", out.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", out.display()))?;
        let seed = folder_seed(&entry.file_name().to_string_lossy());
        let stale = seed.is_some_and(|seed| !per_seed || !is_seed(seed));
        if stale && entry.file_type().is_ok_and(|t| t.is_dir()) {
            let path = entry.path();
            std::fs::remove_dir_all(&path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("gapbench-out-dir-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn one_holder_at_a_time_and_the_lock_ends_with_it() {
        let dir = temp_dir("lock");
        let held = OutDir::acquire(&dir).unwrap();
        let holder = std::fs::read_to_string(dir.join(LOCK_FILE)).unwrap();
        assert!(holder.starts_with(&format!("pid {}: ", std::process::id())));
        let error = format!("{:#}", OutDir::acquire(&dir).unwrap_err());
        assert!(
            error.contains("is in use by another gapbench (pid "),
            "{error}"
        );
        drop(held);
        assert_eq!(std::fs::read(dir.join(LOCK_FILE)).unwrap(), b"");
        drop(OutDir::acquire(&dir).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn temp_files_of_interrupted_writes_are_removed_and_nothing_else() {
        let dir = temp_dir("temp");
        std::fs::create_dir_all(dir.join("cells/a")).unwrap();
        std::fs::create_dir_all(dir.join("figures/.staging-4242")).unwrap();
        std::fs::create_dir_all(dir.join("figures/.staging-notes")).unwrap();
        for name in [
            "cells/a/.seed-1.json.77.tmp",
            "figures.png",
            ".x.5.tmp.png",
            "keep.tmp",
            "cells/a/seed-1.json",
            "figures/.staging-4242/power.svg",
            "figures/.staging-notes/mine.txt",
        ] {
            std::fs::write(dir.join(name), "x").unwrap();
        }
        drop(OutDir::acquire(&dir).unwrap());
        let mut left: Vec<String> = Vec::new();
        for path in [
            "cells/a/.seed-1.json.77.tmp",
            "figures.png",
            ".x.5.tmp.png",
            "keep.tmp",
            "cells/a/seed-1.json",
            "figures/.staging-4242",
            "figures/.staging-notes/mine.txt",
        ] {
            if dir.join(path).exists() {
                left.push(path.to_string());
            }
        }
        // A killed redraw's staging folder goes; a folder that only looks alike stays.
        assert_eq!(
            left,
            [
                "figures.png",
                "keep.tmp",
                "cells/a/seed-1.json",
                "figures/.staging-notes/mine.txt"
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
