//! What the build needs, installed when missing: HiGHS itself, prebuilt, where it can be
//! (`prebuilt_highs.rs`); otherwise what building it from source needs, `cmake` (HiGHS's
//! build); and always `libclang` (bindgen, for the C bindings). Without libclang the build
//! fails only after its ten-minute C++ compile, so this runs first.
//!
//! As root, Debian packages are installed with apt; otherwise user-level PyPI wheels
//! (`cmake`, `libclang`), with `LIBCLANG_PATH` pointed at the wheel's library.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Result};

use crate::shell::{apt_install, is_root, run, succeeds};

/// Makes sure valgrind (for `cargo xtask perf`) is there: installed with apt as root,
/// otherwise a clear error saying how to get it.
pub fn ensure_valgrind() -> Result<()> {
    if succeeds("valgrind", &["--version"]) {
        return Ok(());
    }
    if is_root() && succeeds("apt-get", &["--version"]) {
        eprintln!("xtask: installing valgrind (for `cargo xtask perf`)");
        return apt_install(&["valgrind"]);
    }
    bail!("`cargo xtask perf` counts under valgrind, which is not installed (e.g. `sudo apt-get install valgrind`)")
}

/// Makes sure the prerequisites are there; returns environment variables cargo needs.
pub fn ensure() -> Result<Vec<(String, String)>> {
    let (mut env, highs_from_source) = crate::prebuilt_highs::ensure();
    // cmake only drives HiGHS's source build.
    let have_cmake = !highs_from_source || succeeds("cmake", &["--version"]);
    let libclang = find_libclang();
    if have_cmake && libclang.is_some() {
        return Ok(env);
    }
    let missing = [
        (!have_cmake).then_some("cmake"),
        libclang.is_none().then_some("libclang"),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>();
    eprintln!(
        "xtask: installing build prerequisites: {}",
        missing.join(", ")
    );
    if is_root() && succeeds("apt-get", &["--version"]) {
        let mut packages = Vec::new();
        if !have_cmake {
            packages.push("cmake");
        }
        if libclang.is_none() {
            packages.push("libclang1-14");
        }
        if apt_install(&packages).is_err() && libclang.is_none() {
            // Other Debian releases name the package differently; libclang-dev depends on it.
            apt_install(&["libclang-dev"])?;
        }
    } else {
        let python = if succeeds("python3", &["--version"]) {
            "python3"
        } else {
            "python"
        };
        run(
            python,
            &[
                "-m", "pip", "install", "--user", "--quiet", "cmake", "libclang",
            ],
        )?;
        if let Some(dir) = pip_libclang_dir(python) {
            env.push(("LIBCLANG_PATH".to_string(), dir.display().to_string()));
        }
        if let Some(bin) = user_bin_dir(python) {
            let path = std::env::var("PATH").unwrap_or_default();
            env.push(("PATH".to_string(), format!("{}:{path}", bin.display())));
        }
    }
    if find_libclang().is_none() && !env.iter().any(|(k, _)| k == "LIBCLANG_PATH") {
        bail!("libclang is still missing after installing it; set LIBCLANG_PATH to the folder holding libclang.so");
    }
    Ok(env)
}

/// A folder holding `libclang*.so`: `LIBCLANG_PATH`, then the usual system folders.
fn find_libclang() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("LIBCLANG_PATH")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    dirs.extend(
        [
            "/usr/lib/x86_64-linux-gnu",
            "/usr/lib/aarch64-linux-gnu",
            "/usr/lib64",
            "/usr/lib",
            "/usr/local/lib",
        ]
        .map(PathBuf::from),
    );
    if let Ok(entries) = std::fs::read_dir("/usr/lib") {
        dirs.extend(
            entries
                .flatten()
                .map(|e| e.path().join("lib"))
                .filter(|p| p.to_string_lossy().contains("llvm")),
        );
    }
    dirs.into_iter().find(|dir| has_libclang(dir))
}

fn has_libclang(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("libclang")
                && name.contains(".so")
                && !name.starts_with("libclang-cpp")
        })
    })
}

fn python_output(python: &str, code: &str) -> Option<PathBuf> {
    let output = Command::new(python)
        .args(["-c", code])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let text = String::from_utf8_lossy(&output.stdout).trim().to_string();
    (!text.is_empty()).then(|| PathBuf::from(text))
}

fn pip_libclang_dir(python: &str) -> Option<PathBuf> {
    python_output(
        python,
        "import clang, os; print(os.path.join(os.path.dirname(clang.__file__), 'native'))",
    )
    .filter(|d| has_libclang(d))
}

fn user_bin_dir(python: &str) -> Option<PathBuf> {
    python_output(
        python,
        "import site, os; print(os.path.join(site.getuserbase(), 'bin'))",
    )
}
