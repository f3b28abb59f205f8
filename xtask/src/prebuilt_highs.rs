//! A prebuilt HiGHS in place of compiling it from source (about 400 of a fresh build's 500 s
//! on 2 cores).
//!
//! highs-sys is built with `discover` (workspace `Cargo.toml`): its build script first asks
//! pkg-config for a system HiGHS and links it dynamically, and only builds from source when
//! none is found. So before the first build, as root, when pkg-config finds no HiGHS, this
//! installs the one PyPI's `highsbox` wheel ships (pinned version and SHA-256): `libhighs.so`
//! (manylinux2014, needs only libz, libstdc++ and libc) into `/usr/local/lib`, its C headers
//! into `/usr/local/include` (`highs/…` and `highs_export.h`, the layout the C API's includes
//! need) and a `highs.pc` of our own (the wheel's names its build machine's folders).
//!
//! Never fatal: without root, network, pip or on another platform, HiGHS builds from source as
//! before. `GAPBENCH_HIGHS=source` opts out: nothing is installed and cargo is told
//! `HIGHS_NO_PKG_CONFIG=1`, so even a system HiGHS is ignored and the source build is used.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, ensure, Context, Result};
use sha2::{Digest, Sha256};

use crate::shell::{apt_install, is_root, run, succeeds};

/// The version the results were measured with; the wheel below ships it.
const VERSION: &str = "1.15.1";
const WHEEL_REQUIREMENT: &str = "highsbox==1.15.1";
const WHEEL_FILE: &str = "highsbox-1.15.1-py3-none-manylinux2014_x86_64.whl";
const WHEEL_SHA256: &str = "17f30d23ef37488467732b45f141146f7c287826a576b4514ae39a8cc4068b28";
/// Where the wheel keeps the HiGHS install tree.
const WHEEL_DIST: &str = "highsbox-1.15.1.data/purelib/highsbox/highs_dist";
const PREFIX: &str = "/usr/local";
/// Read by the `pkg-config` crate in highs-sys's build script: set, it finds no HiGHS.
const NO_PKG_CONFIG: &str = "HIGHS_NO_PKG_CONFIG";

/// Makes a prebuilt HiGHS available when it can; returns the environment cargo needs (the
/// opt-out's `HIGHS_NO_PKG_CONFIG`) and whether HiGHS will build from source.
pub fn ensure() -> (Vec<(String, String)>, bool) {
    match std::env::var("GAPBENCH_HIGHS").as_deref() {
        Ok("source") => return (vec![(NO_PKG_CONFIG.to_string(), "1".to_string())], true),
        Ok("") | Err(_) => {}
        Ok(other) => eprintln!("xtask: GAPBENCH_HIGHS={other} is not understood (only `source`, to build HiGHS from source); ignored"),
    }
    if let Some(version) = system_highs_version() {
        if !highs_sys_accepts(&version) {
            eprintln!("xtask: the system HiGHS {version} found by pkg-config is older than highs-sys accepts (1.5.0); HiGHS builds from source");
            return (Vec::new(), true);
        }
        if !version.starts_with("1.15.") {
            eprintln!("xtask: warning: using the system HiGHS {version} found by pkg-config; gapbench's results were measured with HiGHS 1.15 (GAPBENCH_HIGHS=source builds 1.15.0 from source)");
        }
        return (Vec::new(), false);
    }
    let supported = cfg!(all(target_os = "linux", target_arch = "x86_64"));
    if !supported || !is_root() {
        return (Vec::new(), true);
    }
    eprintln!("xtask: installing a prebuilt HiGHS {VERSION} into {PREFIX} (PyPI wheel {WHEEL_REQUIREMENT}, SHA-256 checked) instead of compiling it from source; GAPBENCH_HIGHS=source opts out");
    match install() {
        Ok(()) => (Vec::new(), false),
        Err(error) => {
            eprintln!("xtask: no prebuilt HiGHS ({error:#}); HiGHS builds from source");
            (Vec::new(), true)
        }
    }
}

/// The version of the system HiGHS the build will link, with cargo's environment `env` (none
/// when opted out, or when pkg-config finds none).
pub fn linked_system_highs(env: &[(String, String)]) -> Option<String> {
    let opted_out = env.iter().any(|(key, _)| key == NO_PKG_CONFIG);
    system_highs_version().filter(|_| !opted_out)
}

/// Whether highs-sys's `discover` takes this version (it asks pkg-config for at least 1.5.0).
fn highs_sys_accepts(version: &str) -> bool {
    let mut numbers = version.split('.').map(|n| n.parse::<u32>().unwrap_or(0));
    let major = numbers.next().unwrap_or(0);
    let minor = numbers.next().unwrap_or(0);
    (major, minor) >= (1, 5)
}

/// The version of the HiGHS pkg-config finds, if any.
fn system_highs_version() -> Option<String> {
    let output = Command::new("pkg-config")
        .args(["--modversion", "highs"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    Some(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

fn install() -> Result<()> {
    if !succeeds("pkg-config", &["--version"]) {
        apt_install(&["pkg-config"]).context("installing pkg-config")?;
    }
    ensure!(
        succeeds("python3", &["-m", "pip", "--version"]),
        "python3 with pip is needed to download the wheel"
    );
    let scratch = std::env::temp_dir().join(format!("gapbench-highs-{}", std::process::id()));
    let result = install_from(&scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn install_from(scratch: &Path) -> Result<()> {
    let scratch_str = scratch
        .to_str()
        .context("a temporary folder with a UTF-8 name")?;
    run_quietly(
        "python3",
        &[
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--only-binary=:all:",
            "--dest",
            scratch_str,
            WHEEL_REQUIREMENT,
        ],
    )?;
    let wheel = scratch.join(WHEEL_FILE);
    let bytes =
        std::fs::read(&wheel).with_context(|| format!("pip did not download {WHEEL_FILE}"))?;
    verify_wheel(&bytes)?;
    let unpacked = scratch.join("unpacked");
    let unpacked_str = unpacked
        .to_str()
        .context("a temporary folder with a UTF-8 name")?;
    run_quietly(
        "python3",
        &[
            "-m",
            "zipfile",
            "-e",
            wheel.to_str().unwrap_or_default(),
            unpacked_str,
        ],
    )?;
    let dist = unpacked.join(WHEEL_DIST);
    let prefix = Path::new(PREFIX);
    copy_atomically(
        &dist.join("lib").join("libhighs.so"),
        &prefix.join("lib").join("libhighs.so"),
    )?;
    copy_tree(
        &dist.join("include").join("highs"),
        &prefix.join("include").join("highs"),
    )?;
    copy_atomically(
        &dist.join("include").join("highs_export.h"),
        &prefix.join("include").join("highs_export.h"),
    )?;
    let license = dist
        .join("share")
        .join("doc")
        .join("HIGHS")
        .join("LICENSE.txt");
    copy_atomically(&license, &prefix.join("share/doc/highs/LICENSE.txt"))?;
    run("ldconfig", &[])?;
    ensure!(
        loader_finds_libhighs()?,
        "the dynamic loader does not find {PREFIX}/lib/libhighs.so after ldconfig"
    );
    // Last: pkg-config (and so highs-sys) sees HiGHS only once everything else is in place.
    let pc = prefix.join("lib").join("pkgconfig").join("highs.pc");
    write_atomically(&pc, pkg_config_file().as_bytes())?;
    match system_highs_version() {
        Some(version) if version == VERSION => Ok(()),
        found => {
            let _ = std::fs::remove_file(&pc);
            bail!("pkg-config does not find the installed HiGHS ({found:?})")
        }
    }
}

/// The downloaded wheel is the pinned one, byte for byte.
fn verify_wheel(bytes: &[u8]) -> Result<()> {
    let digest = format!("{:x}", Sha256::digest(bytes));
    ensure!(
        digest == WHEEL_SHA256,
        "{WHEEL_FILE} has SHA-256 {digest}, not the pinned {WHEEL_SHA256}"
    );
    Ok(())
}

/// Runs `program` with its output kept; a failure's message ends with its last line of
/// errors (pip's, for a download), so the fallback notice stays one line.
fn run_quietly(program: &str, args: &[&str]) -> Result<()> {
    let output = Command::new(program)
        .args(args)
        .output()
        .with_context(|| format!("cannot start {program}"))?;
    if !output.status.success() {
        let errors = String::from_utf8_lossy(&output.stderr);
        let last = errors
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        bail!(
            "`{program} {}` failed ({}): {last}",
            args.join(" "),
            output.status
        );
    }
    Ok(())
}

/// `highs.pc` for the install above; both include folders, as `highs_c_api.h` includes
/// `lp_data/…` (under `highs/`) and the export header sits beside `highs/`.
fn pkg_config_file() -> String {
    format!(
        "prefix={PREFIX}\n\
         libdir=${{prefix}}/lib\n\
         includedir=${{prefix}}/include\n\
         \n\
         Name: HiGHS\n\
         Description: Linear Optimization Software (prebuilt, from the {WHEEL_REQUIREMENT} wheel)\n\
         Version: {VERSION}\n\
         Libs: -L${{libdir}} -lhighs\n\
         Cflags: -I${{includedir}}/highs -I${{includedir}}\n"
    )
}

fn loader_finds_libhighs() -> Result<bool> {
    let output = Command::new("ldconfig")
        .arg("-p")
        .output()
        .context("cannot start ldconfig")?;
    let expected = format!("=> {PREFIX}/lib/libhighs.so");
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .any(|line| line.trim_start().starts_with("libhighs.so ") && line.ends_with(&expected)))
}

/// Copies the folder `from` into `to`, file by file (each atomically).
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            copy_atomically(&entry.path(), &target)?;
        }
    }
    Ok(())
}

fn copy_atomically(from: &Path, to: &Path) -> Result<()> {
    let bytes = std::fs::read(from).with_context(|| format!("reading {}", from.display()))?;
    write_atomically(to, &bytes)
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`: a reader
/// (or a running program mapping the old library) never sees half a file.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let folder = path.parent().context("a file inside a folder")?;
    std::fs::create_dir_all(folder).with_context(|| format!("creating {}", folder.display()))?;
    let mut temporary = PathBuf::from(path);
    temporary.as_mut_os_string().push(".gapbench-tmp");
    std::fs::write(&temporary, bytes)
        .with_context(|| format!("writing {}", temporary.display()))?;
    std::fs::rename(&temporary, path).with_context(|| format!("renaming to {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `highs.pc` written names the installed folders and the version, and parses the
    /// way highs-sys's build script reads it (include folders, link flags).
    #[test]
    fn pkg_config_file_points_at_the_install() {
        let pc = pkg_config_file();
        assert!(pc.contains(&format!("Version: {VERSION}\n")), "{pc}");
        assert!(pc.contains("Libs: -L${libdir} -lhighs\n"), "{pc}");
        assert!(
            pc.contains("Cflags: -I${includedir}/highs -I${includedir}\n"),
            "{pc}"
        );
        assert!(pc.starts_with(&format!("prefix={PREFIX}\n")), "{pc}");
        assert!(WHEEL_FILE.starts_with(&WHEEL_REQUIREMENT.replace("==", "-")));
        assert!(WHEEL_DIST.contains(VERSION));
    }

    /// highs-sys's floor, 1.5.0: older versions build from source.
    #[test]
    fn versions_below_one_five_are_not_discovered() {
        assert!(highs_sys_accepts("1.15.1"));
        assert!(highs_sys_accepts("1.5.0"));
        assert!(highs_sys_accepts("2.0.0"));
        assert!(!highs_sys_accepts("1.4.2"));
        assert!(!highs_sys_accepts("0.9"));
    }

    /// Anything but the pinned wheel is refused, saying which digest it had.
    #[test]
    fn another_file_is_not_the_pinned_wheel() {
        let error = verify_wheel(b"not the wheel").unwrap_err().to_string();
        assert!(error.contains("not the pinned"), "{error}");
        assert!(
            error.contains(&format!("{:x}", Sha256::digest(b"not the wheel"))),
            "{error}"
        );
    }
}
