//! Ships HiGHS inside the Python package when the extension links it as a shared library
//! (the prebuilt one `cargo xtask` installs, found by pkg-config as the ilp crate finds it):
//! the library is copied next to the extension (`gapbench/libhighs.so`, ignored by git) and
//! the extension looks for it there first (rpath `$ORIGIN`), so the installed package runs on
//! a machine without HiGHS. maturin's own repair step would do this, but pip's build hook
//! turns it off. A HiGHS built from source (no pkg-config HiGHS, or `HIGHS_NO_PKG_CONFIG`,
//! which `GAPBENCH_HIGHS=source` sets) is linked statically: nothing to ship.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=HIGHS_NO_PKG_CONFIG");
    // highs-sys builds HiGHS from source (statically) when told not to look for it.
    if std::env::var_os("HIGHS_NO_PKG_CONFIG").is_some() {
        return;
    }
    let libdir = Command::new("pkg-config")
        .args(["--variable=libdir", "highs"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
    let Some(library) = libdir
        .map(|dir| dir.join("libhighs.so"))
        .filter(|path| path.is_file())
    else {
        return;
    };
    let package =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo")).join("gapbench");
    let shipped = package.join("libhighs.so");
    let temporary = package.join(format!(".libhighs.so.{}.tmp", std::process::id()));
    if let Err(error) =
        std::fs::copy(&library, &temporary).and_then(|_| std::fs::rename(&temporary, &shipped))
    {
        panic!(
            "cannot copy {} into the package as {}: {error}",
            library.display(),
            shipped.display()
        );
    }
    println!("cargo:rerun-if-changed={}", library.display());
    println!("cargo:rustc-link-arg-cdylib=-Wl,-rpath,$ORIGIN");
}
