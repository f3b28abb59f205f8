//! Running programs for the prerequisites (`prerequisites.rs`, `prebuilt_highs.rs`): a
//! leaf both use, so neither imports the other's helpers.

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{bail, Context, Result};

/// `apt-get install` of `packages`, quietly and without recommended packages (after one
/// `apt-get update` per xtask run).
pub fn apt_install(packages: &[&str]) -> Result<()> {
    static UPDATED: AtomicBool = AtomicBool::new(false);
    if !UPDATED.load(Ordering::Relaxed) {
        run("apt-get", &["update", "-qq"])?;
        UPDATED.store(true, Ordering::Relaxed);
    }
    let mut args = vec!["install", "-y", "-qq", "--no-install-recommends"];
    args.extend(packages);
    run("apt-get", &args)
}

/// Whether `program args` runs and exits with success.
pub fn succeeds(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs `program args`, its output shown; an error when it cannot start or fails.
pub fn run(program: &str, args: &[&str]) -> Result<()> {
    let status = Command::new(program)
        .args(args)
        .status()
        .with_context(|| format!("cannot start {program}"))?;
    if !status.success() {
        bail!("`{program} {}` failed ({status})", args.join(" "));
    }
    Ok(())
}

/// Whether xtask runs as root (`id -u` is 0).
pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}
