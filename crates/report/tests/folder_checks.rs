//! Redrawing an incomplete or edited results folder (issue #34): a CSV the matrix says the
//! bench wrote that is missing or holds its header only, or a value no run writes (NaN, a
//! bound past its incumbent, a negative percentage or energy, a policy the matrix never
//! ran), is an error naming the file, line and column, and leaves every existing figure
//! and `REPORT.md` exactly as they were.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use gapbench_report::redraw;

const DATA: &str = "tests/data/synthetic";

/// A copy of the committed synthetic folder (matrix with sweeps and a gap study with a
/// front), redrawn once so it has figures and a report.
fn drawn_folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gapbench-checks-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join(DATA);
    for entry in fs::read_dir(data).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    redraw(&dir).unwrap();
    dir
}

/// Every file of the folder's `figures/` and its `REPORT.md`, with their bytes.
fn outputs(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    files.insert(
        "REPORT.md".to_string(),
        fs::read(dir.join("REPORT.md")).unwrap(),
    );
    for entry in fs::read_dir(dir.join("figures")).unwrap() {
        let entry = entry.unwrap();
        let name = format!("figures/{}", entry.file_name().to_string_lossy());
        files.insert(name, fs::read(entry.path()).unwrap());
    }
    files
}

/// Redraws `dir` after `edit`, expecting an error; asserts the outputs did not change and
/// returns the message.
fn refused(dir: &Path, edit: impl FnOnce(&Path)) -> String {
    let before = outputs(dir);
    assert!(before.len() > 10, "the folder was drawn first");
    edit(dir);
    let message = format!(
        "{:#}",
        redraw(dir).expect_err("the edited folder must be refused")
    );
    let after = outputs(dir);
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "figures were added or deleted: {message}"
    );
    assert!(before == after, "a figure or REPORT.md changed: {message}");
    message
}

/// `file` of `dir` with its 1-based line `line` (the header is line 1) passed through `f`.
fn edit_line(dir: &Path, file: &str, line: usize, f: impl Fn(&str) -> String) {
    let path = dir.join(file);
    let text = fs::read_to_string(&path).unwrap();
    let edited: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| if i + 1 == line { f(l) } else { l.to_string() })
        .collect();
    assert_ne!(edited.join("\n") + "\n", text, "the edit changed nothing");
    fs::write(&path, edited.join("\n") + "\n").unwrap();
}

/// `line` of a CSV with field `column` (0-based) set to `value`, for unquoted fields.
fn with_field(line: &str, column: usize, value: &str) -> String {
    let mut fields: Vec<&str> = line.split(',').collect();
    fields[column] = value;
    fields.join(",")
}

#[test]
fn a_missing_or_header_only_csv_the_matrix_expects_is_an_error_and_nothing_is_replaced() {
    for file in ["mean_grid.csv", "runs.csv", "gaps.csv", "pareto.csv"] {
        let dir = drawn_folder(&format!("missing-{file}"));
        let message = refused(&dir, |dir| fs::remove_file(dir.join(file)).unwrap());
        assert!(
            message.contains(file) && message.contains("missing"),
            "{message}"
        );

        let message = refused(&dir, |dir| {
            let path = dir.join(file);
            let data = Path::new(env!("CARGO_MANIFEST_DIR")).join(DATA).join(file);
            let text = fs::read_to_string(data).unwrap();
            let header = text.lines().next().unwrap();
            fs::write(&path, format!("{header}\n")).unwrap();
        });
        assert!(
            message.contains(file) && message.contains("no data row"),
            "{message}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn a_bad_row_anywhere_leaves_every_figure_and_the_report_as_they_were() {
    // The gap figures read gaps.csv after the line figures were planned: nothing of either
    // family may be touched when gaps.csv is bad.
    let dir = drawn_folder("bad-late-file");
    let message = refused(&dir, |dir| {
        edit_line(dir, "gaps.csv", 21, |l| with_field(l, 13, "-1.0"))
    });
    assert!(
        message.contains("gaps.csv") && message.contains("line 21") && message.contains("solve_s"),
        "{message}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn nan_in_gaps_csv_is_an_error_naming_file_line_and_column() {
    let dir = drawn_folder("nan-gap");
    let message = refused(&dir, |dir| {
        edit_line(dir, "gaps.csv", 3, |l| with_field(l, 8, "NaN"))
    });
    assert!(
        message.contains("gaps.csv: line 3: column `incumbent`"),
        "{message}"
    );
    let report = fs::read_to_string(dir.join("REPORT.md")).unwrap();
    assert!(!report.to_lowercase().contains("nan"), "{report}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bound_past_an_optimal_incumbent_is_an_error() {
    // Power is minimised: a bound of 1500 W above the incumbent 1400 W is no bound.
    let dir = drawn_folder("bound-above");
    let message = refused(&dir, |dir| {
        edit_line(dir, "gaps.csv", 2, |l| with_field(l, 9, "1500"))
    });
    assert!(
        message.contains("gaps.csv: line 2: column `bound`"),
        "{message}"
    );
    // Below the incumbent is a bound, but not an optimal one.
    let message = refused(&dir, |dir| {
        edit_line(dir, "gaps.csv", 2, |l| with_field(l, 9, "1300"))
    });
    assert!(
        message.contains("gaps.csv: line 2: column `status`"),
        "{message}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn out_of_range_values_are_errors_naming_file_line_and_column() {
    let dir = drawn_folder("ranges");
    let message = refused(&dir, |dir| {
        edit_line(dir, "mean_grid.csv", 5, |l| with_field(l, 5, "-50"))
    });
    assert!(
        message.contains("mean_grid.csv: line 5: column `alloc_pct`"),
        "{message}"
    );
    edit_line(&dir, "mean_grid.csv", 5, |l| with_field(l, 5, "6.0000"));
    let message = refused(&dir, |dir| {
        edit_line(dir, "runs.csv", 7, |l| with_field(l, 12, "-309200.00"))
    });
    assert!(
        message.contains("runs.csv: line 7: column `final_power_total_w`"),
        "{message}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_policy_the_matrix_never_ran_is_an_error() {
    let dir = drawn_folder("policy");
    let message = refused(&dir, |dir| {
        edit_line(dir, "gaps.csv", 4, |l| with_field(l, 3, "bogus"))
    });
    assert!(
        message.contains("gaps.csv: line 4: column `policy`") && message.contains("bogus"),
        "{message}"
    );
    fs::remove_dir_all(&dir).unwrap();
    let dir = drawn_folder("policy-grid");
    let message = refused(&dir, |dir| {
        edit_line(dir, "mean_grid.csv", 2, |l| with_field(l, 2, "bogus"))
    });
    assert!(
        message.contains("mean_grid.csv: line 2: column `policy`"),
        "{message}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn negative_replay_energy_is_an_error_naming_file_line_and_column() {
    let header = gapbench_results::ReplayRunRow::csv_header();
    let row = "default,1213,fgd,42,1.000,always-on,10,10,0,0,-5.0000,1.0000,1.0000,1.0000,0.0000,100.00,10.00,10.00,10.00,10.00,0.00,10.00,100.00,1.0000,0,0,1.0000,,,,,,,";
    assert_eq!(header.split(',').count(), row.split(',').count());
    let dir = std::env::temp_dir().join(format!("gapbench-checks-{}-energy", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("replay_runs.csv"),
        format!(
            "{header}\n{}\n{row}\n",
            row.replacen("-5.0000", "5.0000", 1)
        ),
    )
    .unwrap();
    let message = format!("{:#}", gapbench_report::draw_all(&dir).unwrap_err());
    assert!(
        message.contains("replay_runs.csv: line 3: column `energy_kwh`"),
        "{message}"
    );
    fs::remove_dir_all(&dir).unwrap();
}
