//! `cargo xtask slurm …`: the bench as a Slurm job array (`deploy/slurm/gapbench-slurm.sh`),
//! with the gapbench binary built once, here, before submission; and `cargo xtask
//! slurm-local`: the local-Slurm test (`crates/harness/tests/slurm_local.rs`) on a
//! single-node Slurm it installs and starts on this machine.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

/// `slurm submit|wait|status ARGS…`: `submit` builds gapbench in the release profile, freezes
/// that binary in the run folder and passes the real traces when they are found (and
/// `--traces` is not given); `wait` and `status` only forward.
pub fn slurm(env: &[(String, String)], root: &Path, args: &[String]) -> Result<()> {
    let script = root.join("deploy/slurm/gapbench-slurm.sh");
    let mut forwarded: Vec<String> = args.to_vec();
    if args.first().map(String::as_str) == Some("submit") {
        crate::cargo(env, &["build", "--release", "--package", "gapbench"], &[])?;
        let binary = crate::target_dir().join("release").join("gapbench");
        if links_libhighs(&binary) {
            eprintln!("xtask: warning: {} loads libhighs.so at run time (a system or prebuilt HiGHS): every node needs it; GAPBENCH_HIGHS=source builds a self-contained binary", binary.display());
        }
        forwarded.extend(["--gapbench".to_string(), binary.display().to_string()]);
        let sbatch_args = args.iter().position(|a| a == "--").unwrap_or(args.len());
        if !args[..sbatch_args].iter().any(|a| a == "--traces") {
            if let Some(traces) = default_traces(root) {
                forwarded.extend(["--traces".to_string(), traces]);
            }
        }
        // Options go before a `--` that starts sbatch's own arguments.
        if sbatch_args < args.len() {
            let extra = forwarded.split_off(args.len());
            forwarded.splice(sbatch_args..sbatch_args, extra);
        }
    }
    let status = Command::new("bash")
        .arg(&script)
        .args(&forwarded)
        .status()
        .with_context(|| format!("cannot run {}", script.display()))?;
    if !status.success() {
        std::process::exit(status.code().unwrap_or(1));
    }
    Ok(())
}

/// `$GAPBENCH_TRACES`, else `../shared/traces/openb` beside the repository, as an absolute
/// path (the jobs run in the run folder), when it holds the openb node list.
fn default_traces(root: &Path) -> Option<String> {
    let dir = std::env::var_os("GAPBENCH_TRACES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/traces/openb"));
    dir.join("openb_node_list_gpu_node.csv")
        .is_file()
        .then(|| dir.canonicalize().ok())
        .flatten()
        .map(|d| d.display().to_string())
}

/// `slurm-local`: installs Slurm when missing (root, apt) and runs the local-Slurm test, which
/// fails — rather than skips — when the cluster cannot be set up.
pub fn slurm_local(env: &[(String, String)], root: &Path) -> Result<()> {
    let install = root.join("deploy/slurm/local-cluster.sh");
    let status = Command::new("bash")
        .arg(&install)
        .arg("install")
        .status()
        .with_context(|| format!("cannot run {}", install.display()))?;
    if !status.success() {
        bail!("Slurm could not be installed (see above)");
    }
    let mut env = env.to_vec();
    env.push(("GAPBENCH_SLURM_TEST".to_string(), "require".to_string()));
    crate::cargo(
        &env,
        &[
            "test",
            "--release",
            "--package",
            "gapbench",
            "--test",
            "slurm_local",
            "--",
            "--nocapture",
        ],
        &[],
    )
}

/// Whether `binary` loads HiGHS as a shared library (`ldd` lists `libhighs.so`).
fn links_libhighs(binary: &Path) -> bool {
    Command::new("ldd")
        .arg(binary)
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("libhighs.so"))
}
