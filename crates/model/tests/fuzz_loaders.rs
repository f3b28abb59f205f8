//! Property tests of the input loaders — task lists, node lists, carbon series — fed with
//! real openb rows, mutated, and random ones (10,000 cases each): a loader never panics,
//! never changes a value silently (what it accepts reads back exactly as an independent
//! reading of the same text; what it refuses is refused with the file and line), and never
//! allocates in proportion to a number in the input (the test binary's allocator refuses
//! anything past 1 GiB, which aborts the test).

use std::path::Path;

use gapbench_model::carbon::parse_carbon_csv;
use gapbench_model::workload::{parse_nodes_csv, parse_tasks_csv};
use gapbench_model::{CpuPowerProfile, InputError, InputRules};
use proptest::prelude::*;

#[global_allocator]
static ALLOCATOR: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, 1 << 30);

const CASES: u32 = 10_000;

/// A header and rows of fields.
type Rows = (Vec<String>, Vec<Vec<String>>);

/// Rows of a real trace (the first `count` data rows), split into fields; read once.
fn real_rows(file: &'static str, count: usize) -> &'static Rows {
    static READ: std::sync::Mutex<Vec<(&'static str, &'static Rows)>> =
        std::sync::Mutex::new(Vec::new());
    let mut read = READ.lock().unwrap();
    if let Some((_, rows)) = read.iter().find(|(f, _)| *f == file) {
        return rows;
    }
    let text =
        std::fs::read_to_string(gapbench_model::testing::openb_traces_dir().join(file)).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .take(count)
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    let rows: &'static Rows = Box::leak(Box::new((header, rows)));
    read.push((file, rows));
    rows
}

/// A field as a user or a broken export might write it.
fn odd_field() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|v| v.to_string()),
        (0u64..3000).prop_map(|v| v.to_string()),
        any::<u64>().prop_map(|v| v.to_string()),
        Just("18446744073709551616".to_string()),
        Just("99999999999999999999999".to_string()),
        any::<f64>().prop_map(|v| v.to_string()),
        prop::sample::select(vec![
            "", " ", "NaN", "inf", "-0", "+7", " 12 ", "1e3", "0x10", "abc", "T4", "V100M32",
            "G2|T4", "|", "T4||", "H100", "\"q\"", "a,b", "é", "\t1",
        ])
        .prop_map(String::from),
        "[a-zA-Z0-9|_ .-]{0,12}",
    ]
}

/// How a row is damaged.
#[derive(Debug, Clone)]
enum Damage {
    Keep,
    Field(usize, String),
    DropField(usize),
    ExtraField(String),
    Blank,
    /// The row repeated (its name twice).
    Repeat,
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        6 => Just(Damage::Keep),
        6 => (0usize..12, odd_field()).prop_map(|(i, f)| Damage::Field(i, f)),
        1 => (0usize..12).prop_map(Damage::DropField),
        1 => odd_field().prop_map(Damage::ExtraField),
        1 => Just(Damage::Blank),
        1 => Just(Damage::Repeat),
    ]
}

/// CSV text of `header` and `rows` after `damages`; with `unique_names` the first field is
/// suffixed by the row index first, so that only `Damage::Repeat` repeats a name. Fields
/// that need it are quoted.
fn render(
    header: &[String],
    rows: &[Vec<String>],
    damages: &[Damage],
    unique_names: bool,
) -> String {
    let quote = |f: &str| {
        if f.contains([',', '"', '\n']) {
            format!("\"{}\"", f.replace('"', "\"\""))
        } else {
            f.to_string()
        }
    };
    let mut text = header.join(",") + "\n";
    for (i, (row, damage)) in rows.iter().zip(damages).enumerate() {
        let mut fields = row.clone();
        if unique_names {
            fields[0] = format!("{}-{i}", fields[0]);
        }
        match damage {
            Damage::Keep | Damage::Repeat => {}
            Damage::Field(k, value) => {
                let k = k % fields.len();
                fields[k] = value.clone();
            }
            Damage::DropField(k) => {
                let k = k % fields.len();
                fields.remove(k);
            }
            Damage::ExtraField(value) => fields.push(value.clone()),
            Damage::Blank => fields.iter_mut().for_each(String::clear),
        }
        let line = fields
            .iter()
            .map(|f| quote(f))
            .collect::<Vec<_>>()
            .join(",");
        text.push_str(&line);
        text.push('\n');
        if matches!(damage, Damage::Repeat) {
            text.push_str(&line);
            text.push('\n');
        }
    }
    text
}

/// The data rows of `text` as an independent reader sees them: (line, fields by header
/// name, trimmed), blank rows left out.
fn independent_rows(text: &str) -> Vec<(u64, std::collections::HashMap<String, String>)> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let headers: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    reader
        .records()
        .map(|r| r.unwrap())
        .filter(|r| !r.iter().all(|f| f.trim().is_empty()))
        .map(|r| {
            let line = r.position().unwrap().line();
            let fields = headers
                .iter()
                .cloned()
                .zip(r.iter().map(|f| f.trim().to_string()))
                .collect();
            (line, fields)
        })
        .collect()
}

fn integer(fields: &std::collections::HashMap<String, String>, column: &str) -> i128 {
    fields[column]
        .parse::<i128>()
        .unwrap_or_else(|_| panic!("accepted a non-integer {column} `{}`", fields[column]))
}

/// A refusal names the file, and the line unless the problem is the whole file.
fn assert_located(error: &InputError, file: &str, text: &str) {
    assert_eq!(error.file.as_deref(), Some(Path::new(file)), "{error}");
    let whole_file = ["empty file", "no tasks", "no nodes", "no rows"]
        .iter()
        .any(|m| error.message.starts_with(m));
    match error.line {
        Some(line) => assert!(
            line >= 1 && line <= text.lines().count() as u64 + 1,
            "line {line} outside the file: {error}"
        ),
        None => assert!(
            whole_file || error.message.starts_with("malformed CSV") || error.column.is_none(),
            "no line: {error}"
        ),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn task_lists_round_trip_or_are_refused_with_file_and_line(
        picks in prop::collection::vec(0usize..200, 1..10),
        damages in prop::collection::vec(damage(), 10),
    ) {
        let (header, pool) = real_rows("openb_pod_list_default.csv", 200);
        let rows: Vec<Vec<String>> = picks.iter().map(|&i| pool[i].clone()).collect();
        let text = render(header, &rows, &damages, true);
        match parse_tasks_csv(Path::new("tasks.csv"), text.as_bytes(), InputRules::Strict) {
            Err(error) => assert_located(&error, "tasks.csv", &text),
            Ok(list) => {
                let expected = independent_rows(&text);
                prop_assert_eq!(list.tasks.len(), expected.len());
                prop_assert!(list.adjustments.is_empty());
                let mut names = std::collections::HashSet::new();
                for (task, (_, fields)) in list.tasks.iter().zip(&expected) {
                    prop_assert_eq!(&task.name, &fields["name"]);
                    prop_assert!(names.insert(task.name.clone()), "{} twice", task.name);
                    prop_assert_eq!(i128::from(task.cpu_milli), integer(fields, "cpu_milli"));
                    prop_assert_eq!(i128::from(task.memory_mib), integer(fields, "memory_mib"));
                    prop_assert_eq!(i128::from(task.gpu_count), integer(fields, "num_gpu"));
                    prop_assert_eq!(i128::from(task.gpu_milli), integer(fields, "gpu_milli"));
                    for (column, value) in [
                        ("creation_time", task.creation_time_s),
                        ("deletion_time", task.deletion_time_s),
                    ] {
                        let text = &fields[column];
                        prop_assert_eq!(value.map(i128::from), (!text.is_empty()).then(|| integer(fields, column)));
                    }
                }
            }
        }
    }

    #[test]
    fn node_lists_round_trip_or_are_refused_with_file_and_line(
        picks in prop::collection::vec(0usize..300, 1..10),
        damages in prop::collection::vec(damage(), 10),
    ) {
        let (header, pool) = real_rows("openb_node_list_all_node.csv", 300);
        let rows: Vec<Vec<String>> = picks.iter().map(|&i| pool[i].clone()).collect();
        let text = render(header, &rows, &damages, true);
        match parse_nodes_csv(Path::new("nodes.csv"), text.as_bytes(), CpuPowerProfile::Reference) {
            Err(error) => assert_located(&error, "nodes.csv", &text),
            Ok(cluster) => {
                let expected = independent_rows(&text);
                prop_assert_eq!(cluster.len(), expected.len());
                for (id, (_, fields)) in expected.iter().enumerate() {
                    let node_type = cluster.node_type(id as u32);
                    prop_assert_eq!(&cluster.nodes[id].name, &fields["sn"]);
                    prop_assert_eq!(i128::from(node_type.cpu_milli), integer(fields, "cpu_milli"));
                    prop_assert_eq!(i128::from(node_type.memory_mib), integer(fields, "memory_mib"));
                    prop_assert_eq!(i128::from(node_type.gpu_count), integer(fields, "gpu"));
                    let model = node_type.gpu_model.map(|m| m.to_string()).unwrap_or_default();
                    prop_assert_eq!(&model, &fields["model"]);
                }
            }
        }
    }

    #[test]
    fn carbon_series_round_trip_or_are_refused_with_file_and_line(
        steps in prop::collection::vec((0u32..10_000, 0u32..2_000), 1..12),
        damages in prop::collection::vec(damage(), 12),
    ) {
        let mut time = 0u64;
        let rows: Vec<Vec<String>> = steps
            .iter()
            .map(|&(gap, value)| {
                let row = vec![time.to_string(), format!("{}.{}", value / 10, value % 10)];
                time += u64::from(gap) + 1;
                row
            })
            .collect();
        let header = ["time_s".to_string(), "g_per_kwh".to_string()];
        let text = render(&header, &rows, &damages, false);
        match parse_carbon_csv(Path::new("ci.csv"), text.as_bytes()) {
            Err(error) => assert_located(&error, "ci.csv", &text),
            Ok(series) => {
                let expected = independent_rows(&text);
                prop_assert_eq!(series.start_s.len(), expected.len());
                for (k, (_, fields)) in expected.iter().enumerate() {
                    prop_assert_eq!(series.start_s[k], fields["time_s"].parse::<f64>().unwrap());
                    prop_assert_eq!(series.g_per_kwh[k], fields["g_per_kwh"].parse::<f64>().unwrap());
                }
                prop_assert!(series.start_s.windows(2).all(|w| w[0] < w[1]));
                prop_assert!(series.g_per_kwh.iter().all(|g| g.is_finite() && *g >= 0.0));
            }
        }
    }

    /// Electricity Maps exports: a date that exists is read to the second (checked against
    /// a day count of the test's own); one that does not exist is refused with its line.
    #[test]
    fn carbon_export_dates_exist_or_are_refused(
        dates in prop::collection::vec((prop_oneof![1900i64..2100, -5i64..100_000, Just(123_456_789_012_345)], 0i64..14, 0i64..33, 0i64..25), 1..6),
    ) {
        let mut text = String::from("Datetime (UTC),Carbon Intensity gCO₂eq/kWh (direct)\n");
        for (y, m, d, h) in &dates {
            text.push_str(&format!("{y:04}-{m:02}-{d:02} {h:02}:00:00,100\n"));
        }
        let days_in = |y: i64, m: i64| match m {
            2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        let valid = |&(y, m, d, h): &(i64, i64, i64, i64)| {
            (1..=9999).contains(&y) && (1..=12).contains(&m) && d >= 1 && d <= days_in(y, m) && h < 24
        };
        // Seconds since year 1 of a valid date, by counting days (independent of the
        // loader's formula).
        let seconds = |&(y, m, d, h): &(i64, i64, i64, i64)| {
            let years: i64 = (1..y).map(|yy| if days_in(yy, 2) == 29 { 366 } else { 365 }).sum();
            let months: i64 = (1..m).map(|mm| days_in(y, mm)).sum();
            ((years + months + d - 1) * 24 + h) * 3600
        };
        let all_valid = dates.iter().all(valid);
        let increasing = all_valid && dates.windows(2).all(|w| seconds(&w[0]) < seconds(&w[1]));
        match parse_carbon_csv(Path::new("em.csv"), text.as_bytes()) {
            Err(error) => {
                assert_located(&error, "em.csv", &text);
                prop_assert!(!increasing, "refused valid increasing dates: {}", error);
            }
            Ok(series) => {
                prop_assert!(increasing, "accepted {:?}", dates);
                for (k, date) in dates.iter().enumerate() {
                    prop_assert_eq!(series.start_s[k], (seconds(date) - seconds(&dates[0])) as f64);
                }
            }
        }
    }
}
