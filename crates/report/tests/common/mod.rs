//! Shared by the report's integration tests: a scratch copy of the synthetic results
//! folder, and compiling a results folder's LaTeX tables. (Each test file uses what it
//! needs of it.)
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh copy of `tests/data/synthetic` in a scratch folder named by `label` and the
/// process, so tests may redraw into it.
pub fn synthetic_copy(label: &str) -> PathBuf {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/synthetic");
    let dir = std::env::temp_dir().join(format!("gapbench-{label}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    for entry in fs::read_dir(data).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    dir
}

/// Compiles every `tables/*.tex` of `dir`, each inside a `table` float of a minimal
/// article with `booktabs`, with `pdflatex` (Debian's `texlive-latex-base` and
/// `texlive-latex-recommended`); returns how many tables it compiled. Without `pdflatex`
/// the test fails when `GAPBENCH_LATEX_TEST=require` (CI sets it) and is skipped, saying
/// so, otherwise.
pub fn compile_tables(dir: &Path) -> usize {
    let mut tables: Vec<String> = fs::read_dir(dir.join("tables"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tex"))
        .collect();
    tables.sort();
    assert!(!tables.is_empty(), "no tables in {}", dir.display());
    if Command::new("pdflatex").arg("--version").output().is_err() {
        let required = std::env::var("GAPBENCH_LATEX_TEST").is_ok_and(|v| v == "require");
        assert!(
            !required,
            "pdflatex is missing and GAPBENCH_LATEX_TEST=require"
        );
        eprintln!("pdflatex not found: the tables' LaTeX is not compiled (install texlive-latex-base and texlive-latex-recommended)");
        return 0;
    }
    let mut document = String::from(
        "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage[margin=1cm,landscape]{geometry}\n\\usepackage{booktabs}\n\\begin{document}\n",
    );
    for table in &tables {
        document.push_str(&format!(
            "\\begin{{table}}\\centering\\small\n\\input{{tables/{table}}}\n\\caption{{{}}}\n\\end{{table}}\n\\clearpage\n",
            table.trim_end_matches(".tex").replace('_', "\\_")
        ));
    }
    document.push_str("\\end{document}\n");
    fs::write(dir.join("tables-check.tex"), document).unwrap();
    let output = Command::new("pdflatex")
        .args([
            "-interaction=nonstopmode",
            "-halt-on-error",
            "tables-check.tex",
        ])
        .current_dir(dir)
        .output()
        .unwrap();
    let log = fs::read_to_string(dir.join("tables-check.log")).unwrap_or_default();
    assert!(
        output.status.success(),
        "pdflatex failed on the tables of {}:\n{}",
        dir.display(),
        &log[log.len().saturating_sub(3000)..]
    );
    assert!(!log.contains("LaTeX Warning"), "LaTeX warned:\n{log}");
    let pages = log
        .lines()
        .find_map(|l| l.strip_prefix("Output written on tables-check.pdf ("))
        .and_then(|rest| rest.split_whitespace().next()?.parse::<usize>().ok());
    assert_eq!(pages, Some(tables.len()), "one page per table:\n{log}");
    tables.len()
}
