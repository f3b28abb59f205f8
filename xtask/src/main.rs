//! Developer workflows as plain Rust (`cargo xtask <command>`), in the manner of
//! rust-analyzer's xtask. It has no heavy dependencies, so it builds before HiGHS does and
//! can install what the HiGHS build needs.
//!
//! Commands:
//! - `bench [ARGS…]`   — `gapbench bench ARGS…`: the paper matrix (`--quick` for a small one)
//! - `figures DIR`     — redraw a results folder's figures and report from its CSVs
//! - `merge ARGS…`     — `gapbench merge ARGS…`: join shard results
//! - `perf [--save]`   — benchmarks vs the committed baseline (see `perf.rs`)
//! - `run [ARGS…]`     — `gapbench run ARGS…` (default: the embedded openb-like workload)
//! - `gap ARGS…`       — `gapbench gap ARGS…`: heuristic vs exact on the same snapshots
//! - `test [ARGS…]`    — the whole test suite, release profile (what CI runs)
//! - `prerequisites`   — only check and install the build prerequisites
//!
//! Everything builds in the release profile, so HiGHS compiles once for all of them.

mod perf;
mod prerequisites;
#[cfg(test)]
mod tidy;

use std::process::Command;

use anyhow::{bail, Context, Result};

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let command = args.next().unwrap_or_else(|| "help".to_string());
    // `cargo xtask run -- --policy pwr` and `cargo xtask run --policy pwr` mean the same.
    let rest: Vec<String> = args.skip_while(|a| a == "--").collect();
    match command.as_str() {
        "run" | "gap" | "bench" | "merge" | "figures" => {
            let env = prerequisites::ensure()?;
            cargo(
                &env,
                &[
                    "run",
                    "--release",
                    "--quiet",
                    "--package",
                    "gapbench",
                    "--",
                    &command,
                ],
                &rest,
            )
        }
        "perf" => {
            let env = prerequisites::ensure()?;
            perf::perf(&env, &workspace_root(), rest.iter().any(|a| a == "--save"))
        }
        "test" => {
            let env = prerequisites::ensure()?;
            cargo(&env, &["test", "--release", "--workspace"], &rest)
        }
        "prerequisites" => prerequisites::ensure().map(|_| ()),
        "help" | "--help" | "-h" => {
            println!("usage: cargo xtask <bench [ARGS…] | gap ARGS… | figures DIR | merge ARGS… | perf [--save] | run [ARGS…] | test [ARGS…] | prerequisites>");
            Ok(())
        }
        other => bail!("unknown xtask command `{other}` (try `cargo xtask help`)"),
    }
}

/// Runs cargo with `args` then `extra`, in the workspace root, with `env` set; fails when
/// cargo fails.
fn cargo(env: &[(String, String)], args: &[&str], extra: &[String]) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let status = Command::new(cargo)
        .args(args)
        .args(extra)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(workspace_root())
        .status()
        .context("cannot start cargo")?;
    if !status.success() {
        bail!("`cargo {}` failed ({status})", args.join(" "));
    }
    Ok(())
}

fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}
