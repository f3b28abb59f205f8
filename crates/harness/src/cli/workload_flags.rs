//! The flags every sweep command shares (`run`, `gap`): where the workload comes from, the
//! policy, tuning, seeds, orders, CPU power profile and input rules; and the parsers and
//! value enums `replay` shares with them.

use std::ops::RangeInclusive;
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use gapbench::run::RunSettings;
use gapbench::workload::Workload;
use gapbench_model::{CpuPowerProfile, InputRules, NodeOrder, TaskOrder};
use gapbench_online::PolicySpec;

// The workload and run flags of `run` and `gap` (a comment, not a doc comment: clap would
// take that for help text).
#[derive(Args)]
pub struct WorkloadArgs {
    /// Node list CSV: openb's `sn,cpu_milli,memory_mib,gpu,model`, or Alibaba's 2026 spot-GPU trace's `node_name,gpu_model,gpu_capacity_num,cpu_num` (told apart by the header). Default: the embedded openb-like cluster.
    #[arg(long, value_name = "FILE")]
    nodes: Option<PathBuf>,
    /// GPU-model file (CSV `model,idle_watts,full_watts[,memory_mib]`, docs/gpu-models.md): its models add to or override the built-in ones, so the node list may name them. Default: the built-in models.
    #[arg(long, value_name = "FILE")]
    gpu_models: Option<PathBuf>,
    /// Task list CSV in the openb format (name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,…]). Default: the embedded openb-like workload.
    #[arg(long, value_name = "FILE")]
    tasks: Option<PathBuf>,
    // The policy list is derived from the registration table of the online crate.
    #[arg(long, value_name = "SPEC", default_value = "fgd", help = gapbench_online::policy_help())]
    policy: String,
    /// Tune total GPU demand to RATIO × cluster GPU capacity (cloning or dropping random tasks); `none` keeps the workload as is.
    #[arg(long, value_name = "RATIO", default_value = "1.3")]
    tune: String,
    /// The seed of the run's random choices (arrival order, tuning, node tie-break order).
    #[arg(long, value_name = "N", default_value_t = 42, conflicts_with = "seeds")]
    seed: u64,
    /// Several seeds, e.g. `42..51` (inclusive): runs them in parallel and writes means too.
    #[arg(long, value_name = "A..B", value_parser = parse_seed_range)]
    pub seeds: Option<RangeInclusive<u64>>,
    /// Arrival order: `shuffled` (sort by name, seeded shuffle, then tune — the reference's) or `as-listed` (file order, no shuffle, no tuning).
    #[arg(long, value_enum, default_value_t = TaskOrderArg::Shuffled)]
    task_order: TaskOrderArg,
    /// Who wins a tie between equal top scores: `random` (a seeded node priority order — the reference's) or `as-listed` (the node listed first).
    #[arg(long, value_enum, default_value_t = NodeOrderArg::Random)]
    node_order: NodeOrderArg,
    /// CPU power profile: `reference` (every node a Xeon E5-2682 v4, as the reference) or `by-gpu-model` (CPU model guessed from the GPU model).
    #[arg(long, value_enum, default_value_t = CpuPowerArg::Reference)]
    cpu_power: CpuPowerArg,
    /// Task values the reference simulator converts (gpu_milli above 1000 → 1000; GPU fields of a task without GPU count or milli dropped): `reference` converts them as it does, counts each kind and prints a warning (also in manifest.json); `strict` rejects such a row with its file, line and column.
    #[arg(long, value_enum, default_value_t = InputRulesArg::Reference)]
    input_rules: InputRulesArg,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum TaskOrderArg {
    Shuffled,
    AsListed,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum NodeOrderArg {
    Random,
    AsListed,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum InputRulesArg {
    Reference,
    Strict,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum CpuPowerArg {
    Reference,
    ByGpuModel,
}

pub fn parse_seed_range(text: &str) -> Result<RangeInclusive<u64>, String> {
    let (a, b) = text
        .split_once("..")
        .ok_or_else(|| format!("`{text}` is not a range like 42..51"))?;
    let parse = |s: &str| {
        s.trim()
            .trim_start_matches('=')
            .parse::<u64>()
            .map_err(|_| format!("`{s}` is not a seed"))
    };
    let (a, b) = (parse(a)?, parse(b)?);
    if a > b {
        return Err(format!("empty seed range {text}"));
    }
    gapbench_results::check_seed_range(a, b).map_err(|e| e.to_string())?;
    Ok(a..=b)
}

impl WorkloadArgs {
    pub fn seeds(&self) -> Vec<u64> {
        match &self.seeds {
            Some(range) => range.clone().collect(),
            None => vec![self.seed],
        }
    }

    pub fn settings(&self) -> Result<RunSettings> {
        let policy: PolicySpec = self.policy.parse().map_err(anyhow::Error::msg)?;
        let tune = match self.tune.trim() {
            "none" => None,
            text => match text.parse::<f64>() {
                Ok(ratio) if ratio.is_finite() && ratio > 0.0 => Some(ratio),
                _ => bail!("--tune takes a positive ratio such as 1.3, or `none`; got `{text}`"),
            },
        };
        let task_order = match self.task_order {
            TaskOrderArg::Shuffled => TaskOrder::Shuffled,
            TaskOrderArg::AsListed => TaskOrder::AsListed,
        };
        let node_order = match self.node_order {
            NodeOrderArg::Random => NodeOrder::Random,
            NodeOrderArg::AsListed => NodeOrder::AsListed,
        };
        Ok(RunSettings::new(policy, tune, task_order, node_order))
    }

    pub fn load(&self) -> Result<Workload> {
        let (cpu_power, rules) = (cpu_power(self.cpu_power), input_rules(self.input_rules));
        let workload = Workload::load(
            self.nodes.as_deref(),
            self.gpu_models.as_deref(),
            self.tasks.as_deref(),
            cpu_power,
            rules,
        )?;
        for warning in workload.warnings() {
            eprintln!("warning: {warning}");
        }
        Ok(workload)
    }
}

pub fn cpu_power(arg: CpuPowerArg) -> CpuPowerProfile {
    match arg {
        CpuPowerArg::Reference => CpuPowerProfile::Reference,
        CpuPowerArg::ByGpuModel => CpuPowerProfile::ByGpuModel,
    }
}

pub fn input_rules(arg: InputRulesArg) -> InputRules {
    match arg {
        InputRulesArg::Reference => InputRules::Reference,
        InputRulesArg::Strict => InputRules::Strict,
    }
}
