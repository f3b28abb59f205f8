//! Developer workflows as plain Rust (`cargo xtask <command>`), in the manner of
//! rust-analyzer's xtask. It has no heavy dependencies, so it builds before HiGHS does and
//! can install HiGHS (prebuilt) or what its source build needs.
//!
//! Commands:
//! - `bench [ARGS…]`   — `gapbench bench ARGS…`: the paper matrix (`--quick` for a small one)
//! - `figures DIR`     — redraw a results folder's figures and report from its CSVs
//! - `merge ARGS…`     — `gapbench merge ARGS…`: join shard results
//! - `perf [--save]`   — benchmarks vs the committed baseline (see `perf.rs`)
//! - `slurm submit|wait|status ARGS…` — the bench as a Slurm job array plus merge (`slurm.rs`)
//! - `slurm-local`     — the local-Slurm test on a single-node Slurm started here
//! - `run [ARGS…]`     — `gapbench run ARGS…` (default: the embedded openb-like workload)
//! - `replay [ARGS…]`  — `gapbench replay ARGS…`: time mode (arrivals, completions, energy)
//! - `gap ARGS…`       — `gapbench gap ARGS…`: heuristic vs exact on the same snapshots
//! - `test [ARGS…]`    — the whole test suite, release profile (what CI runs)
//! - `prerequisites`   — only check and install the build prerequisites (a prebuilt HiGHS
//!   as root, see `prebuilt_highs.rs`)
//!
//! Everything builds in the release profile, so HiGHS compiles once for all of them.

#[cfg(test)]
mod deploy_check;
#[cfg(test)]
mod docs_check;
mod perf;
mod prebuilt_highs;
mod prerequisites;
#[cfg(test)]
mod rust_source;
mod shell;
mod slurm;
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
        "run" | "replay" | "frontier" | "gap" | "bench" | "merge" | "figures" => {
            let env = prerequisites::ensure()?;
            // `cargo run --quiet` keeps later runs quiet, but on a fresh machine it would sit
            // silent through the HiGHS compile: build first, with cargo's progress, then.
            if announce_first_build(&env) {
                cargo(&env, &["build", "--release", "--package", "gapbench"], &[])?;
            }
            let rest = with_quick_spec_resolved(&command, rest, &workspace_root());
            forward(
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
            announce_first_build(&env);
            forward(&env, &TEST_ARGS, &rest)
        }
        "slurm" => slurm::slurm(&prerequisites::ensure()?, &workspace_root(), &rest),
        "slurm-local" => slurm::slurm_local(&prerequisites::ensure()?, &workspace_root()),
        "prerequisites" => prerequisites::ensure().map(|_| ()),
        "help" | "--help" | "-h" => {
            println!("usage: cargo xtask <bench [ARGS…] | gap ARGS… | figures DIR | merge ARGS… | perf [--save] | run [ARGS…] | replay [ARGS…] | slurm submit|wait|status ARGS… | slurm-local | test [ARGS…] | prerequisites>");
            Ok(())
        }
        other => bail!("unknown xtask command `{other}` (try `cargo xtask help`)"),
    }
}

/// What `cargo xtask test` runs: the whole suite in the release profile, every test binary
/// even after one fails, so a red run lists all that fail (CI's totals count them all).
const TEST_ARGS: [&str; 4] = ["test", "--release", "--workspace", "--no-fail-fast"];

/// `bench --quick` names its spec relative to the repository (`workloads/quick.toml`), and
/// gapbench runs in the caller's folder: from anywhere but the root that path does not
/// exist. Gives `bench --quick` the spec's absolute path (`--spec`, which `--quick` means)
/// unless a spec is given; other commands and arguments pass unchanged.
fn with_quick_spec_resolved(
    command: &str,
    rest: Vec<String>,
    root: &std::path::Path,
) -> Vec<String> {
    let quick = rest.iter().position(|a| a == "--quick");
    let has_spec = rest
        .iter()
        .any(|a| a == "--spec" || a.starts_with("--spec="));
    // From the root `--quick` already reads the right file, and the command the report
    // records stays as the user typed it.
    let at_root = std::env::current_dir().is_ok_and(|dir| dir == root);
    match quick {
        Some(at) if command == "bench" && !has_spec && !at_root => {
            let mut args = rest;
            let spec = root.join("workloads").join("quick.toml");
            args.splice(at..=at, ["--spec".to_string(), spec.display().to_string()]);
            args
        }
        _ => rest,
    }
}

/// When highs-sys has not been built yet (a fresh clone), says so and returns true: with
/// HiGHS from source the first build compiles its C++ sources, which takes minutes and would
/// otherwise look frozen.
fn announce_first_build(env: &[(String, String)]) -> bool {
    let target = target_dir();
    // Both ways of getting HiGHS end with the bindings highs-sys's build script generates.
    let built = std::fs::read_dir(target.join("release").join("build"))
        .map(|entries| {
            entries.flatten().any(|entry| {
                entry
                    .file_name()
                    .to_string_lossy()
                    .starts_with("highs-sys-")
                    && entry.path().join("out").join("c_bindings.rs").is_file()
            })
        })
        .unwrap_or(false);
    if !built {
        match prebuilt_highs::linked_system_highs(env) {
            Some(version) => eprintln!("xtask: building gapbench in the release profile against the system HiGHS {version} (first time only: about 2–5 minutes on 2 cores; later runs start at once)"),
            None => eprintln!("xtask: building gapbench in the release profile, HiGHS from source included (first time only: about 4-12 minutes on 2 cores; later runs start at once)"),
        }
    }
    !built
}

/// Cargo's target folder: `$CARGO_TARGET_DIR`, else the workspace's `target/`.
fn target_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"))
}

/// Runs cargo with `args` then `extra`, in the workspace root, with `env` set; fails when
/// cargo fails.
fn cargo(env: &[(String, String)], args: &[&str], extra: &[String]) -> Result<()> {
    let status = cargo_status(env, args, extra)?;
    if !status.success() {
        bail!("`cargo {}` failed ({status})", args.join(" "));
    }
    Ok(())
}

/// Like [`cargo`] for a command the user asked for: its own output already says what went
/// wrong, so a failure only passes its exit code on.
fn forward(env: &[(String, String)], args: &[&str], extra: &[String]) -> Result<()> {
    let status = cargo_status(env, args, extra)?;
    if !status.success() {
        std::process::exit(status.code().unwrap_or(1));
    }
    Ok(())
}

fn cargo_status(
    env: &[(String, String)],
    args: &[&str],
    extra: &[String],
) -> Result<std::process::ExitStatus> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    Command::new(cargo)
        .args(args)
        .args(extra)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(workspace_root())
        .status()
        .context("cannot start cargo")
}

fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn bench_quick_names_the_workspace_spec_wherever_it_runs() {
        // Any folder but the caller's own stands for a root elsewhere.
        let root = workspace_root();
        let spec = root.join("workloads").join("quick.toml");
        assert!(spec.is_file(), "{}", spec.display());
        let args = with_quick_spec_resolved("bench", strings(&["--quick", "--jobs", "2"]), &root);
        assert_eq!(
            args,
            strings(&["--spec", &spec.display().to_string(), "--jobs", "2"])
        );
        // Given a spec (clap refuses both), another command, or no --quick: unchanged.
        for (command, given) in [
            ("bench", strings(&["--quick", "--spec", "x.toml"])),
            ("bench", strings(&["--spec=x.toml", "--quick"])),
            ("run", strings(&["--quick"])),
            ("bench", strings(&["--jobs", "2"])),
        ] {
            assert_eq!(
                with_quick_spec_resolved(command, given.clone(), &root),
                given
            );
        }
    }

    /// A red `cargo xtask test` lists every failing test binary, not only the first.
    #[test]
    fn the_test_command_runs_every_test_binary() {
        assert_eq!(TEST_ARGS[..3], ["test", "--release", "--workspace"]);
        assert!(TEST_ARGS.contains(&"--no-fail-fast"));
    }
}
