//! GPU models as data: the power (and, where known, memory) of each model a cluster may
//! hold, built in for the openb models and read from a GPU-model file for any other.
//!
//! The file is a CSV with `#` comment lines (for citing sources), one model a row:
//!
//! ```text
//! # NVIDIA H800 SXM5 data sheet: max TDP 700 W; idle: 10 % of TDP (stated rule)
//! model,idle_watts,full_watts,memory_mib
//! H800,70,700,81920
//! ```
//!
//! - `model`: the name node and task lists use (no `|`, `,`, quotes or surrounding spaces);
//! - `idle_watts`, `full_watts`: one device's power when fully free and when holding any
//!   task, the two figures of the reference power model ([`crate::power`]);
//! - `memory_mib` (optional column, or empty): the device's memory, recorded for readers;
//!   requests are in milli-GPU, so no placement reads it.
//!
//! A row adds a model, or overrides a built-in one (and may give `G1`, which the reference
//! has no figures for, a power profile). The fragmentation measure needs only the model's
//! identity; CPU power under `by-gpu-model` guesses a CPU from built-in models only, and a
//! model from a file gets the reference's Xeon E5-2682 v4.

use std::io::Read;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use crate::csv_table::{open_file, Table};
use crate::error::InputError;
use crate::gpu::{GpuModel, MAX_GPU_MODELS};
use crate::power::{gpu_power_profile, GpuPowerProfile};

/// What gapbench knows of one GPU model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuModelSpec {
    pub power: GpuPowerProfile,
    /// Memory of one device, when known.
    pub memory_mib: Option<u64>,
}

/// The GPU models a cluster's nodes may have, by model id: the built-in table, or the
/// built-in table with a file's rows added and overriding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuModelTable {
    /// By [`GpuModel::index`]; `None` where this table has no power profile for the model.
    specs: Vec<Option<GpuModelSpec>>,
}

/// Device memory of the built-in models whose name fixes it (T4 and A10 come in one size,
/// V100M16/V100M32 name theirs); P100, A100 and the undisclosed G models do not.
fn built_in_memory_mib(model: GpuModel) -> Option<u64> {
    match model {
        GpuModel::T4 | GpuModel::V100M16 => Some(16 * 1024),
        GpuModel::A10 => Some(24 * 1024),
        GpuModel::V100M32 => Some(32 * 1024),
        _ => None,
    }
}

impl GpuModelTable {
    /// The reference power model's table: every openb model but G1.
    pub fn built_in() -> GpuModelTable {
        GpuModelTable {
            specs: GpuModel::BUILT_IN
                .into_iter()
                .map(|model| {
                    gpu_power_profile(model).map(|power| GpuModelSpec {
                        power,
                        memory_mib: built_in_memory_mib(model),
                    })
                })
                .collect(),
        }
    }

    /// The built-in table, shared: what a cluster built without a file holds.
    pub fn shared_built_in() -> Arc<GpuModelTable> {
        static BUILT_IN: OnceLock<Arc<GpuModelTable>> = OnceLock::new();
        BUILT_IN
            .get_or_init(|| Arc::new(GpuModelTable::built_in()))
            .clone()
    }

    pub fn spec(&self, model: GpuModel) -> Option<GpuModelSpec> {
        self.specs.get(model.index()).copied().flatten()
    }

    /// The model's device power; `None` when a node may not have it.
    pub fn power(&self, model: GpuModel) -> Option<GpuPowerProfile> {
        self.spec(model).map(|spec| spec.power)
    }

    /// Adds `model`, or replaces what the table had for it.
    pub fn set(&mut self, model: GpuModel, spec: GpuModelSpec) {
        if self.specs.len() <= model.index() {
            self.specs.resize(model.index() + 1, None);
        }
        self.specs[model.index()] = Some(spec);
    }

    /// The models a node may have (those with a power profile), in id order.
    pub fn node_models(&self) -> Vec<GpuModel> {
        let named = GpuModel::all_named();
        (0..self.specs.len().min(MAX_GPU_MODELS))
            .filter(|&i| self.specs[i].is_some())
            .map(|i| named[i])
            .collect()
    }

    /// [`GpuModelTable::node_models`] comma-separated, for error messages.
    pub fn node_model_names(&self) -> String {
        self.node_models()
            .iter()
            .map(|m| m.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The highest wattage a file may state for one device: 10 kW, far above any GPU's (a
/// larger figure is a typo, or milliwatts).
const MAX_DEVICE_WATTS: i64 = 10_000;

const COLUMNS: [&str; 4] = ["model", "idle_watts", "full_watts", "memory_mib"];

/// Reads a GPU-model file (module doc) from `input`; `file` names it in errors. The
/// result is the built-in table with the file's rows added or overriding.
pub fn read_gpu_models_csv(file: &Path, input: impl Read) -> Result<GpuModelTable, InputError> {
    let (table, mut reader) = Table::open_commented(file, input, Some(b'#'))?;
    if let Some(unknown) = table.unknown_column(&COLUMNS) {
        return Err(table.error(
            1,
            unknown,
            format!(
                "unknown column: a GPU-model file has the columns {} (memory_mib optional)",
                COLUMNS.join(",")
            ),
        ));
    }
    let [model, idle, full] = [COLUMNS[0], COLUMNS[1], COLUMNS[2]].map(|c| table.column(c));
    let (model, idle, full) = (model?, idle?, full?);
    let memory = table.optional_column(COLUMNS[3]);
    let mut models = GpuModelTable::built_in();
    let mut seen: Vec<(GpuModel, u64)> = Vec::new();
    table.each_row(&mut reader, |line, record| {
        let name = table.text(line, record, model)?;
        let id = GpuModel::register(name).map_err(|e| table.error(line, model, e))?;
        if let Some((_, first)) = seen.iter().find(|(m, _)| *m == id) {
            return Err(table.error(
                line,
                model,
                format!("model `{name}` is listed twice, on lines {first} and {line}"),
            ));
        }
        seen.push((id, line));
        let idle_watts = table.bounded(line, record, idle, 0, MAX_DEVICE_WATTS)? as u32;
        let full_watts = table.bounded(line, record, full, 1, MAX_DEVICE_WATTS)? as u32;
        if full_watts < idle_watts {
            return Err(table.error(
                line,
                full,
                format!("full_watts {full_watts} is below idle_watts {idle_watts}"),
            ));
        }
        let memory_mib = match memory {
            Some(c) if !table.text(line, record, c)?.is_empty() => {
                Some(table.bounded(line, record, c, 1, i64::MAX)? as u64)
            }
            _ => None,
        };
        let power = GpuPowerProfile {
            idle_watts,
            full_watts,
        };
        models.set(id, GpuModelSpec { power, memory_mib });
        Ok(())
    })?;
    if seen.is_empty() {
        return Err(InputError::new(
            file,
            "no GPU models: the file has a header but no rows",
        ));
    }
    Ok(models)
}

pub fn load_gpu_models_csv(path: &Path) -> Result<GpuModelTable, InputError> {
    read_gpu_models_csv(path, open_file(path)?)
}

/// A table as a GPU-model file, every model with a power profile in id order: reading it
/// back gives an equal table.
pub fn write_gpu_models_csv(models: &GpuModelTable) -> String {
    let mut out = format!("{}\n", COLUMNS.join(","));
    for model in models.node_models() {
        let spec = models.spec(model).expect("a node model has a spec");
        let memory = spec.memory_mib.map_or(String::new(), |m| m.to_string());
        out.push_str(&format!(
            "{},{},{},{memory}\n",
            model.name(),
            spec.power.idle_watts,
            spec.power.full_watts
        ));
    }
    out
}
