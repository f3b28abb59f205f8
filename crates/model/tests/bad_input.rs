//! Bad input gets an error that names the file, line and column — never a panic.

use std::path::Path;

use gapbench_model::workload::{load_tasks_csv, parse_nodes_csv, parse_tasks_csv};
use gapbench_model::{Adjustment, AdjustmentKind, CpuPowerProfile, InputRules};

const TASK_HEADER: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n";

fn task_error(body: &str) -> String {
    task_error_under(InputRules::Reference, body)
}

fn task_error_under(rules: InputRules, body: &str) -> String {
    parse_tasks_csv(
        Path::new("tasks.csv"),
        format!("{TASK_HEADER}{body}").as_bytes(),
        rules,
    )
    .unwrap_err()
    .to_string()
}

#[test]
fn a_non_integer_field_is_located() {
    let error = task_error("a,1000,10,1,500,\nb,12x,10,1,500,\n");
    assert_eq!(
        error,
        "tasks.csv:3 (column `cpu_milli`): expected an integer, found `12x`"
    );
}

/// A whole number too large for 64 bits is out of range, not "not an integer".
#[test]
fn an_integer_beyond_64_bits_is_out_of_range_and_located() {
    assert_eq!(
        task_error("a,1000,9223372036854775808,1,500,\n"),
        "tasks.csv:2 (column `memory_mib`): 9223372036854775808 is out of range \
         0..=9223372036854775807"
    );
    assert_eq!(
        task_error("a,1000,10,1,-99999999999999999999,\n"),
        "tasks.csv:2 (column `gpu_milli`): -99999999999999999999 is out of range \
         -9223372036854775808..=9223372036854775807"
    );
}

#[test]
fn an_unknown_gpu_model_is_located() {
    let error = task_error("a,1000,10,1,500,T4|H100\n");
    assert!(
        error.starts_with("tasks.csv:2 (column `gpu_spec`): unknown GPU model `H100`"),
        "{error}"
    );
}

#[test]
fn negative_and_partial_multi_gpu_requests_are_rejected() {
    assert!(task_error("a,-5,10,1,500,\n").contains("column `cpu_milli`"));
    assert!(task_error("a,1000,10,2,500,\n").contains("must request whole GPUs"));
    assert!(task_error("a,1000,10,300,1000,\n").contains("out of range"));
}

/// The reference's conversions apply, and every one is counted with its first line.
#[test]
fn reference_conversion_rules_apply_and_are_counted() {
    let list = parse_tasks_csv(
        Path::new("t.csv"),
        format!("{TASK_HEADER}a,1000,10,1,1500,\nb,1000,10,0,500,T4\nc,1000,10,1,0,\nd,1,1,1,10,|T4||G2|\ne,1000,10,1,2000,\nf,1,1,1,-3,\n").as_bytes(),
        InputRules::Reference,
    )
    .unwrap();
    let tasks = &list.tasks;
    assert_eq!((tasks[0].gpu_count, tasks[0].gpu_milli), (1, 1000));
    assert!(tasks[1].is_cpu_only() && tasks[1].gpu_models.is_any());
    assert!(tasks[2].is_cpu_only());
    assert_eq!(tasks[3].gpu_models.spec(), "T4|G2");
    assert_eq!((tasks[4].gpu_count, tasks[4].gpu_milli), (1, 1000));
    assert!(tasks[5].is_cpu_only());
    let adjustment = |kind, rows, first_line| Adjustment {
        kind,
        rows,
        first_line,
    };
    assert_eq!(
        list.adjustments,
        vec![
            adjustment(AdjustmentKind::GpuMilliAboveWhole, 2, 2),
            adjustment(AdjustmentKind::GpuCountWithoutMilli, 2, 4),
            adjustment(AdjustmentKind::GpuMilliWithoutCount, 1, 3),
            adjustment(AdjustmentKind::GpuSpecOnCpuOnlyTask, 1, 3),
        ]
    );
    assert!(list.adjustments[0]
        .warning("t.csv")
        .starts_with("t.csv: 2 rows (first at line 2): gpu_milli above 1000"));
}

/// Under strict rules every value the reference would convert is an error naming the file,
/// line and column; a row the reference takes literally passes.
#[test]
fn strict_rules_reject_every_conversion() {
    let strict = |body: &str| task_error_under(InputRules::Strict, body);
    assert!(strict("a,1000,10,1,500,\nb,1000,10,1,1500,\n")
        .starts_with("tasks.csv:3 (column `gpu_milli`): gpu_milli above 1000"));
    assert!(strict("a,1000,10,1,0,\n")
        .starts_with("tasks.csv:2 (column `gpu_milli`): num_gpu ≥ 1 with gpu_milli ≤ 0"));
    assert!(strict("a,1000,10,0,500,\n")
        .starts_with("tasks.csv:2 (column `gpu_milli`): gpu_milli on a task with num_gpu 0"));
    assert!(strict("a,1000,10,0,0,T4\n")
        .starts_with("tasks.csv:2 (column `gpu_spec`): gpu_spec on a CPU-only task"));
    let list = parse_tasks_csv(
        Path::new("t.csv"),
        format!("{TASK_HEADER}a,1000,10,1,1000,T4\nb,1000,10,0,0,\nc,1,1,2,1000,|\n").as_bytes(),
        InputRules::Strict,
    )
    .unwrap();
    assert_eq!(list.tasks.len(), 3);
    assert!(list.adjustments.is_empty());
}

#[test]
fn short_rows_missing_columns_and_empty_files_are_reported() {
    let error = parse_tasks_csv(
        Path::new("t.csv"),
        b"name,cpu_milli\na,1\n",
        InputRules::Reference,
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("missing column `memory_mib`"), "{error}");
    let error = task_error("a,1000,10\n");
    assert!(error.starts_with("t") && error.contains(":2"), "{error}");
    assert!(
        parse_tasks_csv(Path::new("t.csv"), b"", InputRules::Reference)
            .unwrap_err()
            .to_string()
            .contains("empty file")
    );
    assert!(parse_tasks_csv(
        Path::new("t.csv"),
        TASK_HEADER.as_bytes(),
        InputRules::Reference
    )
    .unwrap_err()
    .to_string()
    .contains("no tasks"));
    assert!(
        load_tasks_csv(Path::new("no/such/file.csv"), InputRules::Reference)
            .unwrap_err()
            .to_string()
            .starts_with("no/such/file.csv: cannot read")
    );
}

#[test]
fn node_lists_are_validated() {
    let parse = |body: &str| {
        parse_nodes_csv(
            Path::new("nodes.csv"),
            format!("sn,cpu_milli,memory_mib,gpu,model\n{body}").as_bytes(),
            CpuPowerProfile::Reference,
        )
    };
    assert!(parse("n0,1000,10,2,X9\n")
        .unwrap_err()
        .to_string()
        .starts_with("nodes.csv:2 (column `model`): unknown GPU model `X9`"));
    assert!(parse("n0,1000,10,2,\n")
        .unwrap_err()
        .to_string()
        .contains("needs a GPU model"));
    assert!(parse("n0,1000,10,16,T4\n")
        .unwrap_err()
        .to_string()
        .contains("column `gpu`"));
    assert!(parse("n0,1000,10,0,T4\n")
        .unwrap_err()
        .to_string()
        .starts_with(
        "nodes.csv:2 (column `model`): a node without GPUs (GPU count 0) cannot have a GPU model"
    ));
    assert!(parse("n0,1000,10,1,G1\n")
        .unwrap_err()
        .to_string()
        .contains("no power profile"));
    let cluster = parse("n0,1000,10,0,\nn1,8000,10,2,T4\n").unwrap();
    assert_eq!(cluster.len(), 2);
}

/// A node list with several unusable GPU models named only the first, and listed G1 as
/// known before refusing it: one error names each with its first line, and the models it
/// offers are those a node may have.
#[test]
fn every_unusable_gpu_model_of_a_node_list_is_named_at_once() {
    let error = parse_nodes_csv(
        Path::new("nodes.csv"),
        "sn,cpu_milli,memory_mib,gpu,model\nn0,1000,10,1,T4\nn1,1000,10,2,X9\nn2,1000,10,1,G1\nn3,1000,10,1,X9\nn4,1000,10,4,H100\n".as_bytes(),
        CpuPowerProfile::Reference,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        error,
        "nodes.csv:3 (column `model`): GPU models no node may have, each at its first line: \
         `X9` (line 3: unknown), `G1` (line 4: no power profile), `H100` (line 6: unknown); \
         a node's GPU model is one of T4, A10, P100, V100M16, V100M32, A100, G2, G3; give \
         others their power in a GPU-model file (--gpu-models, docs/gpu-models.md)"
    );
}

/// Two rows of one name would make every output that names tasks or nodes ambiguous
/// (`curve.csv`, `tasks.csv`, placements): the second is refused, naming both lines.
#[test]
fn duplicate_task_and_node_names_are_refused_with_both_lines() {
    let error = task_error("a,1000,10,1,500,\nb,1000,10,1,500,\nc,1,1,0,0,\nb,1,1,0,0,\n");
    assert_eq!(
        error,
        "tasks.csv:5 (column `name`): task `b` is listed twice, on lines 3 and 5: task names must be unique"
    );
    let error = parse_nodes_csv(
        Path::new("nodes.csv"),
        b"sn,cpu_milli,memory_mib,gpu,model\nn0,1000,10,0,\nn1,1000,10,0,\nn0,8000,10,2,T4\n",
        CpuPowerProfile::Reference,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        error,
        "nodes.csv:4 (column `sn`): node `n0` is listed twice, on lines 2 and 4: node names must be unique"
    );
}

/// A reader of `rows` valid task rows after a header and `first` as line 2, counting the
/// bytes the loader takes from it.
struct GeneratedTasks {
    pending: Vec<u8>,
    rows_left: u64,
    next_row: u64,
    bytes_read: std::rc::Rc<std::cell::Cell<u64>>,
}

impl std::io::Read for GeneratedTasks {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.pending.is_empty() && self.rows_left > 0 {
            self.pending = format!("task-{},1000,1024,1,500,\n", self.next_row).into_bytes();
            self.next_row += 1;
            self.rows_left -= 1;
        }
        let n = buf.len().min(self.pending.len());
        buf[..n].copy_from_slice(&self.pending[..n]);
        self.pending.drain(..n);
        self.bytes_read.set(self.bytes_read.get() + n as u64);
        Ok(n)
    }
}

/// The loader reads row by row and stops at the first bad row: a bad second line of a
/// 100 MB task list is reported after reading a few kilobytes, not the whole file.
#[test]
fn a_bad_row_stops_the_task_loader_before_the_rest_is_read() {
    let bytes_read = std::rc::Rc::new(std::cell::Cell::new(0));
    let input = GeneratedTasks {
        pending: format!("{TASK_HEADER}bad,12x,10,1,500,\n").into_bytes(),
        rows_left: 4_000_000,
        next_row: 0,
        bytes_read: bytes_read.clone(),
    };
    let error = gapbench_model::workload::read_tasks_csv(
        Path::new("big.csv"),
        input,
        InputRules::Reference,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        error,
        "big.csv:2 (column `cpu_milli`): expected an integer, found `12x`"
    );
    assert!(
        bytes_read.get() < 1 << 20,
        "read {} bytes",
        bytes_read.get()
    );
}

/// Node type numbers are 16-bit: a node list of more distinct types is refused, naming
/// the node (the type number wrapped around silently, giving nodes another node's type).
#[test]
fn more_distinct_node_types_than_numbers_are_refused() {
    let mut text = String::from("sn,cpu_milli,memory_mib,gpu,model\n");
    for i in 0..70_000 {
        text.push_str(&format!("n{i},{},1024,0,\n", 1000 + i));
    }
    let error = parse_nodes_csv(
        Path::new("nodes.csv"),
        text.as_bytes(),
        CpuPowerProfile::Reference,
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.starts_with(
            "nodes.csv: node `n65536` would be node type 65537: at most 65536 distinct node types"
        ),
        "{error}"
    );
}
