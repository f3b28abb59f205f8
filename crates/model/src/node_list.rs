//! Node lists: the openb format and the format of Alibaba's newer GPU traces, told apart by
//! their header.
//!
//! - openb (`cluster-trace-gpu-v2023`): `sn,cpu_milli,memory_mib,gpu,model`.
//! - Alibaba's 2026 spot-GPU trace (`cluster-trace-v2026-spot-gpu`, `node_info_df.csv`):
//!   `node_name,gpu_model,gpu_capacity_num,cpu_num`, read when the header has `node_name`.
//!   `cpu_num` counts vCPUs, the unit of openb's `cpu_milli` (so `cpu_milli = 1000 ×
//!   cpu_num`); the trace has no memory column, so a node gets
//!   [`MEMORY_MIB_PER_VCPU_DEFAULT`] per vCPU (a `memory_mib` column, when present, is
//!   read instead).
//!
//! A node's GPU model must have a power profile in the cluster's GPU-model table (the
//! built-in one, or one read from a GPU-model file: [`crate::gpu_models`]); every model
//! that has none is named in one error, each with its first line.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use crate::cluster::{Cluster, NodeType};
use crate::csv_table::{open_file, NameCheck, Table};
use crate::error::InputError;
use crate::gpu::GpuModel;
use crate::gpu_models::GpuModelTable;
use crate::power::CpuPowerProfile;

/// Memory of a node whose list states none (the 2026 trace's), per vCPU: 4 GiB, the
/// smallest memory-per-vCPU ratio of the openb GPU nodes (the 8-GPU G2 nodes' 384 GiB for
/// 96 vCPUs, the T4 and V100M16 nodes' likewise), so an openb task list's memory requests
/// bind no tighter than on the openb cluster's tightest nodes.
pub const MEMORY_MIB_PER_VCPU_DEFAULT: u64 = 4 * 1024;

/// The two node-list headers, for error messages.
pub const NODE_LIST_FORMATS: &str = "a node list has the openb columns sn,cpu_milli,memory_mib,gpu,model or those of Alibaba's 2026 spot-GPU trace, node_name,gpu_model,gpu_capacity_num,cpu_num (cpu_num in vCPUs; memory 4 GiB per vCPU unless a memory_mib column gives it)";

/// Where a node list keeps each field.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NodeColumns {
    pub name: Option<usize>,
    pub cpu: usize,
    /// `None`: [`MEMORY_MIB_PER_VCPU_DEFAULT`] per vCPU.
    pub memory: Option<usize>,
    pub gpus: usize,
    pub model: usize,
    /// milli-CPU per unit of the CPU column: 1 for `cpu_milli`, 1000 for `cpu_num`.
    pub cpu_milli_per_unit: u32,
}

impl NodeColumns {
    /// The columns of a node list, by its header.
    fn find(table: &Table) -> Result<NodeColumns, InputError> {
        let column = |name: &str| {
            table.column(name).map_err(|e| InputError {
                message: format!("{}; {NODE_LIST_FORMATS}", e.message),
                ..e
            })
        };
        if table.optional_column("node_name").is_some() {
            return Ok(NodeColumns {
                name: Some(column("node_name")?),
                cpu: column("cpu_num")?,
                memory: table.optional_column("memory_mib"),
                gpus: column("gpu_capacity_num")?,
                model: column("gpu_model")?,
                cpu_milli_per_unit: 1000,
            });
        }
        Ok(NodeColumns {
            name: Some(column("sn")?),
            ..NodeColumns::openb_type_table(table)?
        })
    }

    /// The openb columns but the node name (the embedded node-type table has none).
    pub(crate) fn openb_type_table(table: &Table) -> Result<NodeColumns, InputError> {
        Ok(NodeColumns {
            name: None,
            cpu: table.column("cpu_milli")?,
            memory: Some(table.column("memory_mib")?),
            gpus: table.column(if table.optional_column("gpus").is_some() {
                "gpus"
            } else {
                "gpu"
            })?,
            model: table.column("model")?,
            cpu_milli_per_unit: 1,
        })
    }
}

/// The GPU models of a node list that no node may have (unknown, or without a power
/// profile), each with its first line, so one error names them all. At most
/// [`UnusableModels::LISTED`] are kept; the rest are only counted.
#[derive(Default)]
pub(crate) struct UnusableModels {
    /// (model text, first line, why), in order of first appearance.
    found: Vec<(String, u64, &'static str)>,
    more: usize,
}

const UNKNOWN_MODEL: &str = "unknown";
const NO_POWER_PROFILE: &str = "no power profile";

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
    fn error(&self, table: &Table, column: usize, models: &GpuModelTable) -> Option<InputError> {
        let choices = format!(
            "a node's GPU model is one of {}; give others their power in a GPU-model file (--gpu-models, docs/gpu-models.md)",
            models.node_model_names()
        );
        let message = match &self.found[..] {
            [] => return None,
            [(model, _, UNKNOWN_MODEL)] if self.more == 0 => {
                format!("unknown GPU model `{model}` ({choices})")
            }
            [(model, _, why)] if self.more == 0 => {
                format!("GPU model {model} has {why} ({choices})")
            }
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

/// One node row's type; `None` when its GPU model is one no node may have (recorded in
/// `unusable`).
pub(crate) fn node_type_of(
    table: &Table,
    line: u64,
    record: &csv::StringRecord,
    columns: NodeColumns,
    models: &GpuModelTable,
    unusable: &mut UnusableModels,
) -> Result<Option<NodeType>, InputError> {
    let per_unit = columns.cpu_milli_per_unit;
    let max_cpu = i64::from(u32::MAX / per_unit);
    let cpu_units = table.bounded(line, record, columns.cpu, 1, max_cpu)? as u32;
    let cpu_milli = cpu_units * per_unit;
    let memory_mib = match columns.memory {
        Some(memory) => table.bounded(line, record, memory, 0, i64::MAX)? as u64,
        None => u64::from(cpu_milli / 1000) * MEMORY_MIB_PER_VCPU_DEFAULT,
    };
    let gpus = columns.gpus;
    let gpu_count = table.bounded(line, record, gpus, 0, crate::MAX_GPUS_PER_NODE as i64)? as u8;
    let model_text = table.text(line, record, columns.model)?;
    let gpu_model = if model_text.is_empty() {
        None
    } else {
        match GpuModel::parse(model_text) {
            Some(model) if models.power(model).is_some() => Some(model),
            Some(_) => {
                unusable.record(model_text, line, NO_POWER_PROFILE);
                return Ok(None);
            }
            None => {
                unusable.record(model_text, line, UNKNOWN_MODEL);
                return Ok(None);
            }
        }
    };
    let model = columns.model;
    if gpu_count > 0 && gpu_model.is_none() {
        return Err(table.error(line, model, "a node with GPUs needs a GPU model"));
    }
    if gpu_count == 0 && gpu_model.is_some() {
        return Err(table.error(
            line,
            model,
            format!("a node without GPUs (GPU count 0) cannot have a GPU model, found `{model_text}`: set its GPU count or leave the model empty"),
        ));
    }
    Ok(Some(NodeType {
        gpu_model,
        gpu_count,
        cpu_milli,
        memory_mib,
    }))
}

pub(crate) fn build_cluster(
    file: &Path,
    nodes: Vec<(String, NodeType)>,
    profile: CpuPowerProfile,
    models: Arc<GpuModelTable>,
) -> Result<Cluster, InputError> {
    if nodes.is_empty() {
        return Err(InputError::new(
            file,
            "no nodes: the file has a header but no rows",
        ));
    }
    Cluster::with_gpu_models(nodes, profile, models)
        .map_err(|error| InputError::new(file, error.message))
}

/// Parses a node list (either format) of the built-in GPU models.
pub fn parse_nodes_csv(
    file: &Path,
    text: &[u8],
    profile: CpuPowerProfile,
) -> Result<Cluster, InputError> {
    read_nodes_csv(file, text, profile)
}

/// Reads a node list of the built-in GPU models ([`read_nodes_csv_with`]).
pub fn read_nodes_csv(
    file: &Path,
    input: impl Read,
    profile: CpuPowerProfile,
) -> Result<Cluster, InputError> {
    read_nodes_csv_with(file, input, profile, GpuModelTable::shared_built_in())
}

/// Reads a node list (either format, by its header) from `input`, row by row; `file` names
/// it in errors. Node names must be unique; every node's GPU model must have a power
/// profile in `models`.
pub fn read_nodes_csv_with(
    file: &Path,
    input: impl Read,
    profile: CpuPowerProfile,
    models: Arc<GpuModelTable>,
) -> Result<Cluster, InputError> {
    let (table, mut reader) = Table::open(file, input)?;
    let columns = NodeColumns::find(&table)?;
    let name = columns.name.expect("a node list names its nodes");
    let mut nodes: Vec<(String, NodeType)> = Vec::new();
    let mut names = NameCheck::default();
    let mut unusable = UnusableModels::default();
    table.each_row(&mut reader, |line, record| {
        let node_name = table.text(line, record, name)?;
        let node_type = node_type_of(&table, line, record, columns, &models, &mut unusable)?;
        if let Some(node_type) = node_type {
            names.push(node_name, line);
            nodes.push((node_name.to_string(), node_type));
        }
        Ok(())
    })?;
    if let Some(error) = unusable.error(&table, columns.model, &models) {
        return Err(error);
    }
    if let Some((node, first, second)) = names.first_duplicate(|i| nodes[i].0.as_str()) {
        return Err(table.error(
            second,
            name,
            format!("node `{node}` is listed twice, on lines {first} and {second}: node names must be unique"),
        ));
    }
    build_cluster(file, nodes, profile, models)
}

pub fn load_nodes_csv(path: &Path, profile: CpuPowerProfile) -> Result<Cluster, InputError> {
    read_nodes_csv(path, open_file(path)?, profile)
}

/// [`read_nodes_csv_with`] from the file at `path`.
pub fn load_nodes_csv_with(
    path: &Path,
    profile: CpuPowerProfile,
    models: Arc<GpuModelTable>,
) -> Result<Cluster, InputError> {
    read_nodes_csv_with(path, open_file(path)?, profile, models)
}
