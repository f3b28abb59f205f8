//! Byte-identical guard: redraws the committed synthetic results folder and compares every
//! SVG and `REPORT.md` with the files the code drew when they were blessed, and every PNG
//! with its blessed SHA-256 (`png-sha256.txt`; the PNGs themselves would be ~1 MB). PNGs are
//! deterministic: plotters rasterises the embedded font in pure Rust. Any change in what
//! users see shows up here; regenerate deliberately with `GAPBENCH_BLESS=1` and say why in
//! the commit message.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

const GOLDEN: &str = "tests/data/synthetic-golden";

/// `REPORT.md` and every `figures/*.svg` under `dir`, as relative paths in name order.
fn compared_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from("REPORT.md")];
    let mut svgs: Vec<PathBuf> = fs::read_dir(dir.join("figures"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".svg"))
        .map(|n| Path::new("figures").join(n))
        .collect();
    svgs.sort();
    files.extend(svgs);
    files
}

/// `<sha256>  figures/<name>.png` for every PNG under `dir`, in name order.
fn png_hashes(dir: &Path) -> String {
    let mut names: Vec<String> = fs::read_dir(dir.join("figures"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".png"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|name| {
            let bytes = fs::read(dir.join("figures").join(name)).unwrap();
            let hex: String = Sha256::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            format!("{hex}  figures/{name}\n")
        })
        .collect()
}

#[test]
fn redrawn_figures_and_report_match_the_golden_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let golden = root.join(GOLDEN);
    let dir = common::synthetic_copy("golden");
    gapbench_report::redraw(&dir).unwrap();
    let drawn = compared_files(&dir);
    if std::env::var_os("GAPBENCH_BLESS").is_some() {
        let _ = fs::remove_dir_all(&golden);
        fs::create_dir_all(golden.join("figures")).unwrap();
        for file in &drawn {
            fs::copy(dir.join(file), golden.join(file)).unwrap();
        }
        fs::write(golden.join("png-sha256.txt"), png_hashes(&dir)).unwrap();
    }
    assert_eq!(
        drawn,
        compared_files(&golden),
        "the set of figures differs from the golden set"
    );
    assert!(drawn.len() > 10, "too few figures drawn: {drawn:?}");
    for file in &drawn {
        let (new, old) = (
            fs::read(dir.join(file)).unwrap(),
            fs::read(golden.join(file)).unwrap(),
        );
        assert!(
            new == old,
            "{} differs from the golden file (left in {})",
            file.display(),
            dir.display()
        );
    }
    assert_eq!(
        png_hashes(&dir),
        fs::read_to_string(golden.join("png-sha256.txt")).unwrap(),
        "PNGs differ from the golden hashes (left in {})",
        dir.display()
    );
    // `GAPBENCH_KEEP_FIGURES=1` keeps the redrawn folder, PNGs included, for looking at them.
    if std::env::var_os("GAPBENCH_KEEP_FIGURES").is_some() {
        println!("figures kept in {}", dir.join("figures").display());
    } else {
        fs::remove_dir_all(&dir).unwrap();
    }
}
