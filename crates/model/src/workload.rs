//! Loading clusters and task lists: the openb CSV formats, and the embedded "openb-like"
//! default built from published facts of the Alibaba trace (`workloads/openb-like/`).

use std::io::Read;
use std::num::IntErrorKind;
use std::path::{Path, PathBuf};

use crate::cluster::{Cluster, NodeType};
use crate::error::{InputError, LineTracked, StreamLines};
use crate::gpu::{GpuModel, GpuModelSet};
use crate::input_rules::{Adjustment, AdjustmentKind, AdjustmentLog, InputRules};
use crate::power::node_models;
use crate::power::CpuPowerProfile;
use crate::task::Task;

/// The latest time a trace may name, in seconds from its start: 100 years (the openb traces
/// span 150 days). Later times are typos or overflowed values, and would integrate idle
/// power over centuries into energies of 1e16 kWh.
pub const MAX_TIME_S: u64 = 3_155_760_000;

/// Node types of the openb GPU cluster and how many nodes of each (1,213 nodes).
pub const OPENB_LIKE_NODE_TYPES: &str =
    include_str!("../../../workloads/openb-like/node-types.csv");
/// Resource shapes of the openb `default` trace and how many tasks have each (8,152 tasks).
pub const OPENB_LIKE_TASK_SHAPES: &str =
    include_str!("../../../workloads/openb-like/task-shapes.csv");
const NODE_TYPES_NAME: &str = "<embedded>/workloads/openb-like/node-types.csv";
const TASK_SHAPES_NAME: &str = "<embedded>/workloads/openb-like/task-shapes.csv";

/// The header of a CSV table, and typed field access that reports file, line and column.
/// Rows are read one at a time ([`Table::each_row`]), so a loader holds only what it keeps
/// and stops at the first bad row, however large the file.
struct Table {
    file: PathBuf,
    headers: Vec<String>,
    /// Line numbers counted from the bytes the reader passes on (CRLF-correct).
    lines: StreamLines,
}

impl Table {
    /// Reads the header line of `input`; the rows follow from the returned reader.
    fn open<R: Read>(
        file: &Path,
        input: R,
    ) -> Result<(Table, csv::Reader<LineTracked<R>>), InputError> {
        let lines = StreamLines::new();
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            // Fields are trimmed where they are read (`text`): cheaper than trimming whole rows.
            .trim(csv::Trim::Headers)
            .from_reader(StreamLines::track(input, &lines));
        let headers: Vec<String> = reader
            .headers()
            .map_err(|e| malformed(file, &lines, e))?
            .iter()
            .map(str::to_string)
            .collect();
        if headers.iter().all(|h| h.is_empty()) {
            return Err(InputError::new(
                file,
                "empty file: expected a CSV header line",
            ));
        }
        Ok((
            Table {
                file: file.to_path_buf(),
                headers,
                lines,
            },
            reader,
        ))
    }

    /// Calls `visit` with the line and fields of every row that is not blank, in file
    /// order, reusing one record; the first error (malformed CSV or `visit`'s) ends it.
    fn each_row<R: Read>(
        &self,
        reader: &mut csv::Reader<R>,
        mut visit: impl FnMut(u64, &csv::StringRecord) -> Result<(), InputError>,
    ) -> Result<(), InputError> {
        let mut record = csv::StringRecord::new();
        while reader
            .read_record(&mut record)
            .map_err(|e| malformed(&self.file, &self.lines, e))?
        {
            if record.iter().all(|field| field.trim().is_empty()) {
                continue;
            }
            let line = record
                .position()
                .map_or(0, |p| self.lines.line_of(p.byte()));
            visit(line, &record)?;
        }
        Ok(())
    }

    fn column(&self, name: &str) -> Result<usize, InputError> {
        self.headers.iter().position(|h| h == name).ok_or_else(|| {
            InputError::new(
                &self.file,
                format!(
                    "missing column `{name}` (header: {})",
                    self.headers.join(",")
                ),
            )
            .at_line(1)
        })
    }

    fn optional_column(&self, name: &str) -> Option<usize> {
        self.headers.iter().position(|h| h == name)
    }

    fn error(&self, line: u64, column: usize, message: impl Into<String>) -> InputError {
        InputError::new(&self.file, message)
            .at_line(line)
            .in_column(self.headers[column].clone())
    }

    fn text<'r>(
        &self,
        line: u64,
        record: &'r csv::StringRecord,
        column: usize,
    ) -> Result<&'r str, InputError> {
        record.get(column).map(str::trim).ok_or_else(|| {
            self.error(
                line,
                column,
                format!(
                    "row has {} fields, expected {}",
                    record.len(),
                    self.headers.len()
                ),
            )
        })
    }

    fn integer(
        &self,
        line: u64,
        record: &csv::StringRecord,
        column: usize,
    ) -> Result<i64, InputError> {
        self.bounded(line, record, column, i64::MIN, i64::MAX)
    }

    fn bounded(
        &self,
        line: u64,
        record: &csv::StringRecord,
        column: usize,
        min: i64,
        max: i64,
    ) -> Result<i64, InputError> {
        let text = self.text(line, record, column)?;
        let out_of_range = || {
            self.error(
                line,
                column,
                format!("{text} is out of range {min}..={max}"),
            )
        };
        let value = text.parse::<i64>().map_err(|e| match e.kind() {
            // Digits, but more than 64 bits hold: out of range, not "not an integer".
            IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => out_of_range(),
            _ => self.error(line, column, format!("expected an integer, found `{text}`")),
        })?;
        if value < min || value > max {
            return Err(out_of_range());
        }
        Ok(value)
    }

    fn optional_time(
        &self,
        line: u64,
        record: &csv::StringRecord,
        column: Option<usize>,
    ) -> Result<Option<u64>, InputError> {
        match column {
            None => Ok(None),
            Some(c) if self.text(line, record, c)?.is_empty() => Ok(None),
            Some(c) => {
                let time = self.bounded(line, record, c, 0, i64::MAX)? as u64;
                if time > MAX_TIME_S {
                    return Err(self.error(line, c, format!("{time} s is over 100 years ({MAX_TIME_S} s): trace times are seconds from the trace start")));
                }
                Ok(Some(time))
            }
        }
    }
}

/// A CSV syntax error (or invalid UTF-8) at the line the csv reader stopped on.
fn malformed(file: &Path, lines: &StreamLines, error: csv::Error) -> InputError {
    let mut located = InputError::new(file, format!("malformed CSV: {error}"));
    located.line = error.position().map(|p| lines.line_of(p.byte()));
    located
}

fn open_file(path: &Path) -> Result<std::fs::File, InputError> {
    std::fs::File::open(path).map_err(|e| InputError::new(path, format!("cannot read: {e}")))
}

/// Finds rows that share a name, to refuse them: outputs (`curve.csv`, `tasks.csv`,
/// placements) name tasks and nodes, and two of one name would make them ambiguous. Keeps
/// a 64-bit hash and the line of each row (16 bytes a row, however long the names) and
/// sorts them once every row is read: sequential memory, where a hash set of millions of
/// rows would miss the cache on every row.
#[derive(Default)]
struct NameCheck {
    /// (hash of the name, row index), in row order until sorted.
    hashes: Vec<(u64, usize)>,
    /// Line of each row, by index.
    lines: Vec<u64>,
}

impl NameCheck {
    fn push(&mut self, name: &str, line: u64) {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        name.hash(&mut hasher);
        self.hashes.push((hasher.finish(), self.lines.len()));
        self.lines.push(line);
    }

    /// The repeated name whose second row comes first, with the lines of its first two
    /// rows; `name_of(i)` is row `i`'s name. Equal hashes of different names are told
    /// apart by comparing the names.
    fn first_duplicate<'a>(
        mut self,
        name_of: impl Fn(usize) -> &'a str,
    ) -> Option<(&'a str, u64, u64)> {
        self.hashes.sort_unstable();
        let mut found: Option<(usize, usize)> = None;
        for group in self
            .hashes
            .chunk_by(|a, b| a.0 == b.0)
            .filter(|g| g.len() > 1)
        {
            // Within a group rows are in index order: the first earlier row of the same
            // name makes each row a repeat.
            for (k, &(_, later)) in group.iter().enumerate().skip(1) {
                let name = name_of(later);
                if let Some(&(_, earlier)) = group[..k].iter().find(|(_, i)| name_of(*i) == name) {
                    if found.is_none_or(|(_, best)| later < best) {
                        found = Some((earlier, later));
                    }
                    break;
                }
            }
        }
        found.map(|(earlier, later)| (name_of(later), self.lines[earlier], self.lines[later]))
    }
}

/// The GPU models of a node list that no node may have (unknown, or without a power
/// profile), each with its first line, so one error names them all. At most
/// [`UnusableModels::LISTED`] are kept; the rest are only counted.
#[derive(Default)]
struct UnusableModels {
    /// (model text, first line, why), in order of first appearance.
    found: Vec<(String, u64, &'static str)>,
    more: usize,
}

impl UnusableModels {
    const LISTED: usize = 20;

    fn record(&mut self, model: &str, line: u64, why: &'static str) {
        if self.found.iter().any(|(m, _, _)| m == model) {
            return;
        }
        if self.found.len() < Self::LISTED {
            self.found.push((model.to_string(), line, why));
        } else {
            self.more += 1;
        }
    }

    /// The error naming every one, located at the first; `None` when there are none.
    fn error(&self, table: &Table, column: usize) -> Option<InputError> {
        let choices = format!("a node's GPU model is one of {}", node_models());
        let message = match &self.found[..] {
            [] => return None,
            [(model, _, UNKNOWN_MODEL)] if self.more == 0 => {
                format!("unknown GPU model `{model}` ({choices})")
            }
            [(model, _, why)] if self.more == 0 => format!("GPU model {model} {why} ({choices})"),
            found => {
                let listed: Vec<String> = found
                    .iter()
                    .map(|(model, line, why)| format!("`{model}` (line {line}: {why})"))
                    .collect();
                let more = match self.more {
                    0 => String::new(),
                    more => format!(" and {more} more"),
                };
                format!(
                    "GPU models no node may have, each at its first line: {}{more}; {choices}",
                    listed.join(", ")
                )
            }
        };
        Some(table.error(self.found[0].1, column, message))
    }
}

const UNKNOWN_MODEL: &str = "unknown";

/// One node row's type, shared by the openb node list and the embedded node-type table;
/// `None` when its GPU model is one no node may have (recorded in `unusable`).
fn node_type_of(
    table: &Table,
    line: u64,
    record: &csv::StringRecord,
    columns: [usize; 4],
    unusable: &mut UnusableModels,
) -> Result<Option<NodeType>, InputError> {
    let [cpu, memory, gpus, model] = columns;
    let cpu_milli = table.bounded(line, record, cpu, 1, i64::from(u32::MAX))? as u32;
    let memory_mib = table.bounded(line, record, memory, 0, i64::MAX)? as u64;
    let gpu_count = table.bounded(line, record, gpus, 0, crate::MAX_GPUS_PER_NODE as i64)? as u8;
    let model_text = table.text(line, record, model)?;
    let gpu_model = if model_text.is_empty() {
        None
    } else {
        match GpuModel::parse(model_text) {
            Some(model) if crate::power::gpu_power_profile(model).is_some() => Some(model),
            Some(_) => {
                let why = "has no power profile in the reference power model";
                unusable.record(model_text, line, why);
                return Ok(None);
            }
            None => {
                unusable.record(model_text, line, UNKNOWN_MODEL);
                return Ok(None);
            }
        }
    };
    if gpu_count > 0 && gpu_model.is_none() {
        return Err(table.error(line, model, "a node with GPUs needs a GPU model"));
    }
    if gpu_count == 0 && gpu_model.is_some() {
        return Err(table.error(
            line,
            model,
            format!("a node without GPUs (gpu 0) cannot have a GPU model, found `{model_text}`: set its GPU count or leave the model empty"),
        ));
    }
    Ok(Some(NodeType {
        gpu_model,
        gpu_count,
        cpu_milli,
        memory_mib,
    }))
}

fn build_cluster(
    file: &Path,
    nodes: Vec<(String, NodeType)>,
    profile: CpuPowerProfile,
) -> Result<Cluster, InputError> {
    if nodes.is_empty() {
        return Err(InputError::new(
            file,
            "no nodes: the file has a header but no rows",
        ));
    }
    Cluster::new(nodes, profile).map_err(|error| InputError::new(file, error.message))
}

/// Parses an openb node list (`sn,cpu_milli,memory_mib,gpu,model`).
pub fn parse_nodes_csv(
    file: &Path,
    text: &[u8],
    profile: CpuPowerProfile,
) -> Result<Cluster, InputError> {
    read_nodes_csv(file, text, profile)
}

/// Reads an openb node list from `input`, row by row; `file` names it in errors. Node
/// names must be unique.
pub fn read_nodes_csv(
    file: &Path,
    input: impl Read,
    profile: CpuPowerProfile,
) -> Result<Cluster, InputError> {
    let (table, mut reader) = Table::open(file, input)?;
    let name = table.column("sn")?;
    let columns = [
        table.column("cpu_milli")?,
        table.column("memory_mib")?,
        table.column("gpu")?,
        table.column("model")?,
    ];
    let mut nodes: Vec<(String, NodeType)> = Vec::new();
    let mut names = NameCheck::default();
    let mut unusable = UnusableModels::default();
    table.each_row(&mut reader, |line, record| {
        let node_name = table.text(line, record, name)?;
        if let Some(node_type) = node_type_of(&table, line, record, columns, &mut unusable)? {
            names.push(node_name, line);
            nodes.push((node_name.to_string(), node_type));
        }
        Ok(())
    })?;
    if let Some(error) = unusable.error(&table, columns[3]) {
        return Err(error);
    }
    if let Some((node, first, second)) = names.first_duplicate(|i| nodes[i].0.as_str()) {
        return Err(table.error(
            second,
            name,
            format!("node `{node}` is listed twice, on lines {first} and {second}: node names must be unique"),
        ));
    }
    build_cluster(file, nodes, profile)
}

pub fn load_nodes_csv(path: &Path, profile: CpuPowerProfile) -> Result<Cluster, InputError> {
    read_nodes_csv(path, open_file(path)?, profile)
}

/// A task list as read, with every value the reference's conversion rules changed.
#[derive(Debug, Clone)]
pub struct TaskList {
    pub tasks: Vec<Task>,
    /// Converted values, one entry per kind (empty for the shipped openb traces).
    pub adjustments: Vec<Adjustment>,
}

/// Parses an openb task list. Columns `name, cpu_milli, memory_mib, num_gpu, gpu_milli` are
/// required; `gpu_spec`, `creation_time` and `deletion_time` are read when present (the
/// multigpu traces lack them); other columns are ignored. Every row is one task, in file
/// order. Values the reference simulator converts (reference-semantics §1.2: GPU milli above
/// 1000 becomes 1000; a task with no GPU count or no GPU milli is CPU-only) are converted and
/// counted under [`InputRules::Reference`], rejected under [`InputRules::Strict`].
pub fn parse_tasks_csv(
    file: &Path,
    text: &[u8],
    rules: InputRules,
) -> Result<TaskList, InputError> {
    read_tasks_csv(file, text, rules)
}

/// [`parse_tasks_csv`] from `input`, row by row: it stops at the first bad row, and holds
/// only the tasks (a few times the file's size), however large the file. Task names must
/// be unique.
pub fn read_tasks_csv(
    file: &Path,
    input: impl Read,
    rules: InputRules,
) -> Result<TaskList, InputError> {
    let (table, mut reader) = Table::open(file, input)?;
    let columns = TaskColumns::find(&table)?;
    let mut log = AdjustmentLog::default();
    let mut tasks: Vec<Task> = Vec::new();
    let mut names = NameCheck::default();
    table.each_row(&mut reader, |line, record| {
        let adjust = |kind| apply_input_rule(&table, rules, &mut log, kind, line);
        let task = columns.read(&table, line, record, adjust)?;
        names.push(&task.name, line);
        tasks.push(task);
        Ok(())
    })?;
    if let Some((task, first, second)) = names.first_duplicate(|i| tasks[i].name.as_str()) {
        return Err(table.error(
            second,
            columns.name,
            format!("task `{task}` is listed twice, on lines {first} and {second}: task names must be unique"),
        ));
    }
    if tasks.is_empty() {
        return Err(InputError::new(
            file,
            "no tasks: the file has a header but no rows",
        ));
    }
    Ok(TaskList {
        tasks,
        adjustments: log.into_sorted(),
    })
}

/// What `rules` make of a row the reference simulator converts: the conversion, logged
/// (`Reference`), or an error naming the column (`Strict`).
fn apply_input_rule(
    table: &Table,
    rules: InputRules,
    log: &mut AdjustmentLog,
    kind: AdjustmentKind,
    line: u64,
) -> Result<(), InputError> {
    match rules {
        InputRules::Reference => {
            log.record(kind, line);
            Ok(())
        }
        InputRules::Strict => {
            let column = table.column(kind.column())?;
            Err(table.error(
                line,
                column,
                format!(
                    "{} (--input-rules reference converts it as the reference simulator does)",
                    kind.describe()
                ),
            ))
        }
    }
}

/// The columns of a task CSV (`gpu_spec` and the times may be absent).
struct TaskColumns {
    name: usize,
    cpu: usize,
    memory: usize,
    gpus: usize,
    milli: usize,
    spec: Option<usize>,
    created: Option<usize>,
    deleted: Option<usize>,
}

impl TaskColumns {
    fn find(table: &Table) -> Result<TaskColumns, InputError> {
        Ok(TaskColumns {
            name: table.column("name")?,
            cpu: table.column("cpu_milli")?,
            memory: table.column("memory_mib")?,
            gpus: table.column("num_gpu")?,
            milli: table.column("gpu_milli")?,
            spec: table.optional_column("gpu_spec"),
            created: table.optional_column("creation_time"),
            deleted: table.optional_column("deletion_time"),
        })
    }

    /// The task of one row; what the reference simulator would convert goes through
    /// `adjust` (the input rules decide).
    fn read(
        &self,
        table: &Table,
        line: u64,
        record: &csv::StringRecord,
        mut adjust: impl FnMut(AdjustmentKind) -> Result<(), InputError>,
    ) -> Result<Task, InputError> {
        let gpu_count = table.bounded(line, record, self.gpus, 0, i64::from(u8::MAX))? as u8;
        let raw_milli = table.integer(line, record, self.milli)?;
        if gpu_count == 0 && raw_milli != 0 {
            adjust(AdjustmentKind::GpuMilliWithoutCount)?;
        } else if gpu_count > 0 && raw_milli <= 0 {
            adjust(AdjustmentKind::GpuCountWithoutMilli)?;
        } else if gpu_count > 0 && raw_milli > 1000 {
            adjust(AdjustmentKind::GpuMilliAboveWhole)?;
        }
        let gpu_milli = raw_milli.clamp(0, 1000) as u16;
        let mut task = Task::new(
            table.text(line, record, self.name)?,
            table.bounded(line, record, self.cpu, 0, i64::from(u32::MAX))? as u32,
            table.bounded(line, record, self.memory, 0, i64::MAX)? as u64,
            gpu_count,
            gpu_milli,
        );
        if task.gpu_count > 1 && task.gpu_milli < 1000 {
            return Err(table.error(line, self.milli, format!("a {gpu_count}-GPU task must request whole GPUs (gpu_milli 1000), found {gpu_milli}")));
        }
        if let Some(spec) = self.spec {
            let spec_text = table.text(line, record, spec)?;
            if !task.is_cpu_only() {
                task.gpu_models = GpuModelSet::parse(spec_text)
                    .map_err(|e| table.error(line, spec, e.message))?;
            } else if spec_text.split('|').any(|piece| !piece.is_empty()) {
                adjust(AdjustmentKind::GpuSpecOnCpuOnlyTask)?;
            }
        }
        task.creation_time_s = table.optional_time(line, record, self.created)?;
        task.deletion_time_s = table.optional_time(line, record, self.deleted)?;
        Ok(task)
    }
}

pub fn load_tasks_csv(path: &Path, rules: InputRules) -> Result<TaskList, InputError> {
    read_tasks_csv(path, open_file(path)?, rules)
}

/// The embedded openb-like cluster: the 15 GPU node types of the openb GPU cluster with
/// their node counts (1,213 nodes, 6,212 GPUs), nodes numbered in table order.
pub fn openb_like_cluster(profile: CpuPowerProfile) -> Cluster {
    let file = Path::new(NODE_TYPES_NAME);
    let (table, mut reader) =
        Table::open(file, OPENB_LIKE_NODE_TYPES.as_bytes()).expect("embedded table parses");
    let columns = ["cpu_milli", "memory_mib", "gpus", "model"]
        .map(|c| table.column(c).expect("embedded column"));
    let count = table.column("count").expect("embedded column");
    let mut nodes = Vec::new();
    table
        .each_row(&mut reader, |line, record| {
            let node_type = node_type_of(&table, line, record, columns, &mut Default::default())?
                .expect("embedded models have power profiles");
            for _ in 0..table.integer(line, record, count)? {
                nodes.push((format!("openb-like-node-{:04}", nodes.len()), node_type));
            }
            Ok(())
        })
        .expect("embedded table parses");
    build_cluster(file, nodes, profile).expect("embedded cluster is valid")
}

/// The embedded openb-like workload: every resource shape of the openb `default` trace,
/// repeated as often as it occurs there (8,152 tasks), named in table order. Arrival order is
/// then decided by the seeded shuffle, exactly as for the real trace.
pub fn openb_like_tasks() -> Vec<Task> {
    let file = Path::new(TASK_SHAPES_NAME);
    let (table, mut reader) =
        Table::open(file, OPENB_LIKE_TASK_SHAPES.as_bytes()).expect("embedded table parses");
    let [cpu, memory, gpus, milli, count] =
        ["cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "count"]
            .map(|c| table.column(c).expect("embedded column"));
    let mut tasks = Vec::new();
    table
        .each_row(&mut reader, |line, record| {
            let field = |c| table.integer(line, record, c);
            for _ in 0..field(count)? {
                let name = format!("openb-like-task-{:04}", tasks.len());
                tasks.push(Task::new(
                    name,
                    field(cpu)? as u32,
                    field(memory)? as u64,
                    field(gpus)? as u8,
                    field(milli)? as u16,
                ));
            }
            Ok(())
        })
        .expect("embedded table parses");
    tasks
}
