//! Loading clusters and task lists: the openb CSV formats, and the embedded "openb-like"
//! default built from published facts of the Alibaba trace (`workloads/openb-like/`).

use std::io::Read;
use std::path::Path;

use crate::cluster::Cluster;
use crate::csv_table::{open_file, NameCheck, Table};
use crate::error::InputError;
use crate::gpu::GpuModelSet;
use crate::gpu_models::GpuModelTable;
use crate::input_rules::{Adjustment, AdjustmentKind, AdjustmentLog, InputRules};
use crate::node_list::{build_cluster, node_type_of, NodeColumns};
use crate::power::CpuPowerProfile;
use crate::task::Task;

pub use crate::csv_table::MAX_TIME_S;
pub use crate::node_list::{
    load_nodes_csv, load_nodes_csv_with, parse_nodes_csv, read_nodes_csv, read_nodes_csv_with,
    MEMORY_MIB_PER_VCPU_DEFAULT,
};

/// Node types of the openb GPU cluster and how many nodes of each (1,213 nodes).
pub const OPENB_LIKE_NODE_TYPES: &str =
    include_str!("../../../workloads/openb-like/node-types.csv");
/// Resource shapes of the openb `default` trace and how many tasks have each (8,152 tasks).
pub const OPENB_LIKE_TASK_SHAPES: &str =
    include_str!("../../../workloads/openb-like/task-shapes.csv");
const NODE_TYPES_NAME: &str = "<embedded>/workloads/openb-like/node-types.csv";
const TASK_SHAPES_NAME: &str = "<embedded>/workloads/openb-like/task-shapes.csv";

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
    let columns = NodeColumns::openb_type_table(&table).expect("embedded columns");
    let models = GpuModelTable::shared_built_in();
    let count = table.column("count").expect("embedded column");
    let mut nodes = Vec::new();
    table
        .each_row(&mut reader, |line, record| {
            let node_type = node_type_of(
                &table,
                line,
                record,
                columns,
                &models,
                &mut Default::default(),
            )?
            .expect("embedded models have power profiles");
            for _ in 0..table.integer(line, record, count)? {
                nodes.push((format!("openb-like-node-{:04}", nodes.len()), node_type));
            }
            Ok(())
        })
        .expect("embedded table parses");
    build_cluster(file, nodes, profile, models).expect("embedded cluster is valid")
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
