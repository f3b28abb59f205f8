//! The LaTeX tables of a redrawn results folder: which exist, what they hold, and that
//! they compile (`common::compile_tables`).

mod common;

use std::fs;

#[test]
fn the_synthetic_folder_gets_gap_allocation_and_power_tables_that_compile() {
    let dir = common::synthetic_copy("tables-synthetic");
    let written = gapbench_report::redraw(&dir).unwrap();
    let mut tables: Vec<String> = written
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "tex"))
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    tables.sort();
    assert_eq!(
        tables,
        [
            "allocation_default.tex",
            "allocation_gpushare20.tex",
            "allocation_gpushare40.tex",
            "gaps_default_1213n.tex",
            "power_default.tex",
            "power_gpushare20.tex",
            "power_gpushare40.tex",
        ]
    );
    let gaps = fs::read_to_string(dir.join("tables/gaps_default_1213n.tex")).unwrap();
    assert!(gaps.contains("\\toprule") && gaps.contains("\\bottomrule"));
    // Policies by their papers' names; intervals as low--high; statuses as marks, explained.
    assert!(gaps.contains("FGD & "), "{gaps}");
    assert!(gaps.contains("--"), "{gaps}");
    assert!(gaps.contains("\\textsuperscript{a}\\,"), "{gaps}");
    let allocation = fs::read_to_string(dir.join("tables/allocation_default.tex")).unwrap();
    assert!(allocation.contains("PWR+FGD 200/800 & ") || allocation.contains("FGD & "));
    // A table the folder no longer supports goes; the others are redrawn the same.
    fs::write(dir.join("tables/gone.tex"), "stale").unwrap();
    gapbench_report::redraw(&dir).unwrap();
    assert!(!dir.join("tables/gone.tex").exists());
    assert_eq!(
        fs::read_to_string(dir.join("tables/gaps_default_1213n.tex")).unwrap(),
        gaps
    );
    assert_eq!(common::compile_tables(&dir).max(tables.len()), tables.len());
    fs::remove_dir_all(&dir).unwrap();
}
