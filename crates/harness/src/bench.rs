//! `gapbench bench`: the experiment matrix of a spec, run in parallel, resumable and
//! shardable, aggregated into tidy CSVs.
//!
//! Layout of a results folder:
//! - `matrix.json` — the spec and the resolved inputs (traces and their hashes);
//! - `cells/<trace>/<policy>/seed-<n>.json` — one finished arrival sweep each, keyed by a
//!   hash of everything that determines it; a cell whose file exists with the same key is
//!   skipped, so an interrupted bench resumes where it stopped;
//! - `gap-cells/<trace>/[full-cluster/]seed-<n>.json` — one finished exact-gap study each
//!   (every policy's sweep on a sub-cluster or the whole cluster, each distinct instance
//!   solved once at every checkpoint), keyed the same way;
//! - `replay-cells/<source>/x<scale>/<idle>/<policy>/seed-<n>.json` — one finished
//!   time-mode replay each (`[replay]`), keyed the same way;
//! - `cell-times/…` — each cell's wall time, at the cell's own path, for `--status`
//!   (`crate::status`): cells stay deterministic, so they cannot hold it;
//! - `grid.csv`, `mean_grid.csv`, `runs.csv`, `gaps.csv`, `pareto.csv`, `replay_runs.csv`,
//!   `replay_timeline.csv` — aggregated from the cells, in spec order; then `figures/` and
//!   `REPORT.md`;
//! - `budget-cells/<setup>/seed-<n>/<policy or frontier>.json` — one finished replay or
//!   frontier of the `[budget]` study each, keyed the same way; aggregated into
//!   `budget_points.csv`, `budget_frontier.csv` and `budget_timeline.csv`.
//!
//! Arrival sweeps are deterministic, so their files are byte-identical however the bench was
//! interrupted, sharded or threaded. Exact solves under a time limit are not (HiGHS stops
//! where the clock says): their status and bound say what was proven each time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use gapbench_model::{CpuPowerProfile, InputRules, NodeOrder, TaskOrder};
use serde::{Deserialize, Serialize};

use crate::aggregate::{aggregate, aggregate_gaps, remove_dropped_aggregates};
use crate::bench_spec::{parse_policies, BenchSpec, Seeds};
use crate::budget_study::{
    aggregate_budget, budget_cell_path, budget_fingerprints, finished_budget, load_budget_inputs,
    run_budget_cells, BudgetInputs,
};
use crate::cells::{cell_path, finished, finished_gap, gap_cell_path};
pub use crate::cells::{Cell, GapCell};
use crate::gap::{parse_objectives, GapSettings};
use crate::io::{write_atomic, write_json};
use crate::out_dir::OutDir;
use crate::phases::{run_sweeps, GapsAndReplays};
use crate::replay_cells::{
    aggregate_replays, finished_replay, load_replay_workloads, replay_cell_path,
    replay_fingerprints, ReplayCell, ReplaySource,
};
use crate::run::RunSettings;
use crate::workload::{InputFingerprint, Workload};

/// The embedded workload's trace name, used when the real traces are absent.
pub const STAND_IN_TRACE: &str = "openb-like";

/// How to run a bench.
#[derive(Debug, Clone, Default)]
pub struct BenchOptions {
    pub spec: PathBuf,
    /// Folder of the openb CSVs; `None` = `$GAPBENCH_TRACES`, else `../shared/traces/openb`
    /// when it exists, else (no traces anywhere) the embedded openb-like workload.
    pub traces_dir: Option<PathBuf>,
    /// Run the embedded openb-like workload in place of every trace, traces or not.
    pub stand_in: bool,
    /// Results folder; `None` = `results/<spec name>-<UTC date>`.
    pub out: Option<PathBuf>,
    /// Worker threads; `None` = all cores.
    pub jobs: Option<usize>,
    /// Run only cells `i` with `i % count == index` (0-based `index/count`).
    pub shard: Option<(usize, usize)>,
    pub progress: bool,
    /// The command line that reproduces the results, for the report.
    pub command: String,
}

/// The resolved matrix: what a results folder was produced from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Matrix {
    pub spec: BenchSpec,
    /// The traces actually run (the embedded stand-in when the real ones are absent).
    pub traces: Vec<String>,
    pub gap_traces: Vec<String>,
    /// True when the embedded openb-like workload stood in for missing traces.
    pub stand_in: bool,
    pub inputs: BTreeMap<String, Vec<InputFingerprint>>,
    /// The command that produced the folder (shown in the report as how to reproduce it).
    #[serde(default)]
    pub command: String,
    /// The time-mode sources actually replayed (`[replay]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replay_sources: Vec<ReplaySource>,
    /// Input hashes of each replay source, by source name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub replay_inputs: BTreeMap<String, Vec<InputFingerprint>>,
    /// Input hashes of the budget study's cluster and trace (`[budget]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub budget_inputs: Vec<InputFingerprint>,
}

impl Matrix {
    /// Resolves a spec against a traces folder, which must hold every file the spec names
    /// (a missing one is an error listing the traces it does hold); `None` runs the embedded
    /// openb-like workload in place of every trace (and the report says so at its top).
    pub fn resolve(
        spec: BenchSpec,
        traces_dir: Option<&Path>,
    ) -> Result<(
        Matrix,
        BTreeMap<String, Workload>,
        crate::replay_cells::ReplayWorkloads,
        BudgetInputs,
    )> {
        let needs_traces = !spec.needed_traces().is_empty();
        let available = match traces_dir {
            Some(dir) if needs_traces => {
                check_traces_folder(dir, &spec)?;
                Some(dir)
            }
            _ => None,
        };
        let (traces, gap_traces, stand_in) = resolved_traces(&spec, available.is_some());
        let mut workloads = BTreeMap::new();
        for trace in traces.iter().chain(&gap_traces) {
            if workloads.contains_key(trace) {
                continue;
            }
            let workload = match available {
                Some(dir) => Workload::load(
                    Some(&dir.join(&spec.nodes)),
                    Some(&dir.join(trace_file(trace))),
                    CpuPowerProfile::Reference,
                    InputRules::Reference,
                )?,
                None => Workload::load(
                    None,
                    None,
                    CpuPowerProfile::Reference,
                    InputRules::Reference,
                )?,
            };
            workload.require_gpus()?;
            workloads.insert(trace.clone(), workload);
        }
        let inputs = workloads
            .iter()
            .map(|(t, w)| (t.clone(), w.inputs.clone()))
            .collect();
        let replay_sources = spec
            .replay
            .as_ref()
            .map(|r| ReplaySource::of_spec(r, available.is_some()))
            .unwrap_or_default();
        let mut matrix = Matrix {
            spec,
            traces,
            gap_traces,
            stand_in,
            inputs,
            command: String::new(),
            replay_sources,
            replay_inputs: BTreeMap::new(),
            budget_inputs: Vec::new(),
        };
        let replays = load_replay_workloads(&matrix, available)?;
        matrix.replay_inputs = replay_fingerprints(&replays);
        let budget_files = matrix.spec.budget.as_ref().and_then(|study| {
            let dir = traces_dir?;
            let files = (
                dir.join(&matrix.spec.nodes),
                dir.join(trace_file(&study.trace)),
            );
            (files.0.is_file() && files.1.is_file()).then_some(files)
        });
        let budget = load_budget_inputs(matrix.spec.budget.as_ref(), budget_files)?;
        matrix.budget_inputs = budget_fingerprints(&budget);
        Ok((matrix, workloads, replays, budget))
    }

    /// Every arrival-sweep cell, in spec order (trace, then policy, then seed).
    pub fn cells(&self) -> Result<Vec<Cell>> {
        let policies = parse_policies(&self.spec.policies)?;
        let seeds = self.spec.seeds.expand()?;
        let mut cells = Vec::new();
        for trace in &self.traces {
            for policy in &policies {
                for &seed in &seeds {
                    cells.push(Cell {
                        trace: trace.clone(),
                        policy: policy.clone(),
                        seed,
                    });
                }
            }
        }
        Ok(cells)
    }

    /// Every gap-study cell, in spec order: the sub-cluster studies, then the whole
    /// cluster's.
    pub fn gap_cells(&self) -> Result<Vec<GapCell>> {
        let Some(gaps) = &self.spec.gaps else {
            return Ok(Vec::new());
        };
        let mut cells = Vec::new();
        let mut add = |policies: &[String], seeds: &Seeds, full_cluster: bool| -> Result<()> {
            // No policies, no study (`workloads/full-cluster.toml` has only the whole cluster).
            if policies.is_empty() {
                return Ok(());
            }
            let policies = parse_policies(policies)?;
            let seeds = seeds.expand()?;
            for trace in &self.gap_traces {
                for &seed in &seeds {
                    cells.push(GapCell {
                        trace: trace.clone(),
                        policies: policies.clone(),
                        seed,
                        full_cluster,
                    });
                }
            }
            Ok(())
        };
        add(&gaps.policies, &gaps.seeds, false)?;
        if let Some(full) = &gaps.full_cluster {
            add(&full.policies, &full.seeds, true)?;
        }
        Ok(cells)
    }

    /// The settings of a gap cell's study, each solve on `threads` cores.
    pub(crate) fn gap_settings(&self, cell: &GapCell, threads: usize) -> Result<GapSettings> {
        let Some(gaps) = &self.spec.gaps else {
            bail!("gap cell without a [gaps] study");
        };
        let (sample_nodes, time_limit_s, pareto_points, front_time_limit_s, mip_gap) =
            match (&gaps.full_cluster, cell.full_cluster) {
                (Some(full), true) => (
                    None,
                    full.time_limit_s,
                    full.pareto_points,
                    full.front_time_limit_s,
                    full.mip_gap.or(gaps.mip_gap),
                ),
                _ => (
                    Some(
                        gaps.sample_nodes
                            .context("a sub-cluster study without sample_nodes")?,
                    ),
                    gaps.time_limit_s,
                    gaps.pareto_points,
                    gaps.front_time_limit_s,
                    gaps.mip_gap,
                ),
            };
        Ok(GapSettings {
            checkpoints: gaps.checkpoints.iter().map(|&c| f64::from(c)).collect(),
            objectives: parse_objectives(&gaps.objectives)?,
            sample_nodes,
            time_limit_s,
            mip_rel_gap: mip_gap.unwrap_or(0.0),
            threads: Some(threads as u32),
            pareto_points,
            front_time_limit_s,
            // Sub-clusters get the per-node model, the whole cluster column generation.
            exact_max_nodes: gaps.sample_nodes.unwrap_or(0),
        })
    }

    /// Refuses a matrix read back from a folder (a shard to merge) that is not what its spec
    /// resolves to: an invalid spec, traces or replay sources other than the spec's, or a
    /// trace without input hashes. A damaged `matrix.json` that lost its traces would
    /// otherwise merge as complete with no cell at all.
    pub fn check_resolved(&self) -> Result<()> {
        self.spec.validate()?;
        let names_traces = !self.spec.needed_traces().is_empty();
        if self.stand_in && !names_traces {
            bail!("the embedded workload stood in, yet the spec names no trace");
        }
        let real_traces = names_traces && !self.stand_in;
        let (traces, gap_traces, _) = resolved_traces(&self.spec, real_traces);
        if (&traces, &gap_traces) != (&self.traces, &self.gap_traces) {
            bail!(
                "traces {:?} and gap traces {:?} are not those its spec runs ({traces:?}, {gap_traces:?})",
                self.traces,
                self.gap_traces
            );
        }
        let sources = self
            .spec
            .replay
            .as_ref()
            .map(|r| ReplaySource::of_spec(r, real_traces))
            .unwrap_or_default();
        if sources != self.replay_sources {
            bail!("its replay sources are not those its spec runs");
        }
        if let Some(trace) = traces
            .iter()
            .chain(&gap_traces)
            .find(|t| !self.inputs.contains_key(*t))
        {
            bail!("trace `{trace}` has no input hashes");
        }
        if let Some(source) = sources
            .iter()
            .find(|s| !self.replay_inputs.contains_key(&s.name()))
        {
            bail!("replay source `{}` has no input hashes", source.name());
        }
        Ok(())
    }

    /// Whether two folders ran the same matrix (whatever the command line was).
    pub fn same_runs(&self, other: &Matrix) -> bool {
        (
            &self.spec,
            &self.traces,
            &self.gap_traces,
            self.stand_in,
            &self.inputs,
            (
                &self.replay_sources,
                &self.replay_inputs,
                &self.budget_inputs,
            ),
        ) == (
            &other.spec,
            &other.traces,
            &other.gap_traces,
            other.stand_in,
            &other.inputs,
            (
                &other.replay_sources,
                &other.replay_inputs,
                &other.budget_inputs,
            ),
        )
    }
}

/// The traces a spec runs (sweeps', gap studies') and whether the embedded stand-in runs in
/// their place: the spec's own with `real_traces`, else the stand-in for each kind of study
/// that names a trace.
fn resolved_traces(spec: &BenchSpec, real_traces: bool) -> (Vec<String>, Vec<String>, bool) {
    if real_traces {
        let gap_traces = spec.gaps.as_ref().map(|g| g.traces.clone());
        (spec.traces.clone(), gap_traces.unwrap_or_default(), false)
    } else if spec.needed_traces().is_empty() {
        (Vec::new(), Vec::new(), false)
    } else {
        let stand_in = || vec![STAND_IN_TRACE.to_string()];
        let traces = if spec.traces.is_empty() {
            Vec::new()
        } else {
            stand_in()
        };
        let gap_traces = spec.gaps.as_ref().map(|_| stand_in()).unwrap_or_default();
        (traces, gap_traces, true)
    }
}

/// Refuses a traces folder that lacks a file the spec names: running something else in
/// its place (as the embedded stand-in once did, for every trace) would be a silent
/// substitution.
fn check_traces_folder(dir: &Path, spec: &BenchSpec) -> Result<()> {
    if !dir.is_dir() {
        bail!(
            "traces folder {} does not exist (give --traces DIR, or --stand-in to run the embedded openb-like workload instead)",
            dir.display()
        );
    }
    let mut missing: Vec<String> = Vec::new();
    if !dir.join(&spec.nodes).is_file() {
        missing.push(format!("node list {}", spec.nodes));
    }
    for trace in spec.needed_traces() {
        if !dir.join(trace_file(&trace)).is_file() {
            missing.push(format!("trace `{trace}` ({})", trace_file(&trace)));
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let mut available: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot list", dir.display()))?
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().to_string_lossy().into_owned();
            let trace = name.strip_prefix("openb_pod_list_")?.strip_suffix(".csv")?;
            Some(trace.to_string())
        })
        .collect();
    available.sort();
    bail!(
        "{} lacks {}; available: {}",
        dir.display(),
        missing.join(", "),
        if available.is_empty() {
            "no openb_pod_list_*.csv at all".to_string()
        } else {
            available.join(", ")
        }
    )
}

pub(crate) fn trace_file(trace: &str) -> String {
    format!("openb_pod_list_{trace}.csv")
}

/// What a bench did.
#[derive(Debug, Clone)]
pub struct BenchOutcome {
    pub out: PathBuf,
    pub matrix: Matrix,
    pub cells_total: usize,
    pub cells_run: usize,
    pub cells_skipped: usize,
    pub sweep_seconds: f64,
    pub gap_studies_total: usize,
    pub gap_studies_run: usize,
    pub gap_seconds: f64,
    pub replays_total: usize,
    pub replays_run: usize,
    pub replay_seconds: f64,
    /// Cells of the `[budget]` study (replays and frontiers) in all and run now, and their time.
    pub budget_cells_total: usize,
    pub budget_replays: usize,
    pub budget_seconds: f64,
    /// False for a shard that left cells to others.
    pub complete: bool,
}

/// Runs (the remaining cells of) a bench and, when every cell is done, aggregates.
pub fn run_bench(options: &BenchOptions) -> Result<BenchOutcome> {
    let spec = BenchSpec::load(&options.spec)?;
    let traces_dir = match (options.stand_in, &options.traces_dir) {
        (true, _) => None,
        (false, Some(dir)) => Some(dir.clone()),
        (false, None) => crate::workload::default_traces_dir(),
    };
    let (mut matrix, workloads, replay_workloads, budget_inputs) =
        Matrix::resolve(spec, traces_dir.as_deref())?;
    let tuned = RunSettings::new(
        gapbench_online::PolicySpec::solo(gapbench_online::PolicyKind::Fgd),
        Some(matrix.spec.tune),
        TaskOrder::Shuffled,
        NodeOrder::Random,
    );
    crate::phases::check_against_inputs(&matrix, &workloads, &replay_workloads).with_context(
        || {
            format!(
                "{}: the spec asks what its inputs cannot give",
                options.spec.display()
            )
        },
    )?;
    let parallel = options.jobs.unwrap_or_else(rayon::current_num_threads);
    for workload in workloads.values() {
        crate::run::check_sweep_memory(workload, &tuned, parallel)?;
    }
    use crate::reproduce::{bench_command, TracesUsed};
    let traces = match (&traces_dir, matrix.stand_in) {
        (_, true) => TracesUsed::StandIn,
        (Some(dir), false) if !matrix.spec.needed_traces().is_empty() => TracesUsed::Folder(dir),
        _ => TracesUsed::NoneNamed,
    };
    matrix.command = bench_command(&options.command, options, traces);
    let out = options
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("results/{}-{}", matrix.spec.name, utc_date())));
    let _held = OutDir::acquire(&out)?;
    write_json(&out.join("matrix.json"), &matrix)?;

    let cells = matrix.cells()?;
    let mine = in_shard(&cells, 0, options.shard);
    let todo: Vec<&Cell> = mine
        .iter()
        .copied()
        .filter(|cell| finished(&out, &matrix, cell).is_none())
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.jobs.unwrap_or(0))
        .build()?;
    let sweep_seconds = run_sweeps(&matrix, &workloads, &out, &todo, &pool, options.progress)?;

    let gap_cells = matrix.gap_cells()?;
    // Gap cells are numbered after the sweep cells, so shards share them out evenly too.
    let gaps_todo: Vec<&GapCell> = in_shard(&gap_cells, cells.len(), options.shard)
        .into_iter()
        .filter(|cell| finished_gap(&out, &matrix, cell).is_none())
        .collect();
    let replay_cells = matrix.replay_cells()?;
    // Replay cells are numbered after the sweep and gap cells.
    let first = cells.len() + gap_cells.len();
    let replays_todo: Vec<&ReplayCell> = in_shard(&replay_cells, first, options.shard)
        .into_iter()
        .filter(|cell| finished_replay(&out, &matrix, cell).is_none())
        .collect();
    let (gap_seconds, replay_seconds) = GapsAndReplays {
        matrix: &matrix,
        workloads: &workloads,
        replay_workloads: &replay_workloads,
        out: &out,
        pool: &pool,
        progress: options.progress,
    }
    .run(&gaps_todo, &replays_todo)?;

    let budget_cells = matrix.budget_cells()?;
    // Budget cells are numbered after the sweep, gap and replay cells.
    let first = cells.len() + gap_cells.len() + replay_cells.len();
    let (budget_replays, budget_seconds) = run_budget_cells(
        &matrix,
        &budget_inputs,
        &out,
        in_shard(&budget_cells, first, options.shard),
        &pool,
        options.progress,
    )?;

    let complete = cells
        .iter()
        .all(|cell| finished(&out, &matrix, cell).is_some())
        && gap_cells
            .iter()
            .all(|cell| finished_gap(&out, &matrix, cell).is_some())
        && replay_cells
            .iter()
            .all(|cell| finished_replay(&out, &matrix, cell).is_some())
        && budget_cells
            .iter()
            .all(|cell| finished_budget(&out, &matrix, cell).is_some());
    if complete {
        aggregate(&out, &matrix, &cells)?;
        aggregate_gaps(&out, &matrix, &gap_cells)?;
        aggregate_replays(&out, &matrix, &replay_cells)?;
        crate::eaco_bound::aggregate_eaco_bounds(&out, &matrix, &replay_cells)?;
        aggregate_budget(&out, &matrix, &budget_cells)?;
        remove_dropped_aggregates(&out, &matrix)?;
        finish_folder(&out)?;
    }
    Ok(BenchOutcome {
        out,
        cells_total: cells.len(),
        cells_run: todo.len(),
        cells_skipped: mine.len() - todo.len(),
        gap_studies_total: gap_cells.len(),
        gap_studies_run: gaps_todo.len(),
        gap_seconds,
        sweep_seconds,
        replays_total: replay_cells.len(),
        replays_run: replays_todo.len(),
        replay_seconds,
        budget_cells_total: budget_cells.len(),
        budget_replays,
        budget_seconds,
        complete,
        matrix,
    })
}

/// The items of shard `index` of `count`: item `i` is cell number `first_number + i`, and
/// cell `k` belongs to shard `k mod count`. All items without sharding.
pub(crate) fn in_shard<T>(
    items: &[T],
    first_number: usize,
    shard: Option<(usize, usize)>,
) -> Vec<&T> {
    items
        .iter()
        .enumerate()
        .filter(|(i, _)| shard.is_none_or(|(index, count)| (first_number + i) % count == index))
        .map(|(_, item)| item)
        .collect()
}

/// Joins the cells of shard folders into `out` (checking they ran the same matrix) and
/// aggregates; an error when a shard holds a damaged cell (naming it) or when cells are
/// missing (saying which), after copying the cells found.
pub fn merge(out: &Path, shards: &[PathBuf]) -> Result<BenchOutcome> {
    let mut matrix: Option<Matrix> = None;
    for shard in shards {
        let path = shard.join("matrix.json");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        let shard_matrix: Matrix = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a gapbench matrix", path.display()))?;
        shard_matrix
            .check_resolved()
            .with_context(|| format!("{}: not the matrix its spec runs", path.display()))?;
        match &matrix {
            Some(m) if !m.same_runs(&shard_matrix) => bail!(
                "{} ran a different matrix than {}",
                shard.display(),
                shards[0].display()
            ),
            _ => matrix = Some(shard_matrix),
        }
    }
    let mut matrix = matrix.context("merge needs at least one shard folder")?;
    let _held = OutDir::acquire(out)?;
    matrix.command = crate::reproduce::unsharded(&matrix.command, out);
    write_json(&out.join("matrix.json"), &matrix)?;
    let cells = matrix.cells()?;
    let missing = gather(
        out,
        shards,
        &cells,
        |dir, cell| finished(dir, &matrix, cell),
        cell_path,
    )?;
    let gap_cells = matrix.gap_cells()?;
    let missing_gaps = gather(
        out,
        shards,
        &gap_cells,
        |dir, cell| finished_gap(dir, &matrix, cell),
        gap_cell_path,
    )?;
    let replay_cells = matrix.replay_cells()?;
    let missing_replays = gather(
        out,
        shards,
        &replay_cells,
        |dir, cell| finished_replay(dir, &matrix, cell),
        replay_cell_path,
    )?;
    let budget_cells = matrix.budget_cells()?;
    let missing_budget = gather(
        out,
        shards,
        &budget_cells,
        |dir, cell| finished_budget(dir, &matrix, cell),
        budget_cell_path,
    )?;
    let total = cells.len() + gap_cells.len() + replay_cells.len() + budget_cells.len();
    let missing: Vec<PathBuf> = [missing, missing_gaps, missing_replays, missing_budget].concat();
    refuse_incomplete(out, total, &missing)?;
    aggregate(out, &matrix, &cells)?;
    aggregate_gaps(out, &matrix, &gap_cells)?;
    aggregate_replays(out, &matrix, &replay_cells)?;
    crate::eaco_bound::aggregate_eaco_bounds(out, &matrix, &replay_cells)?;
    aggregate_budget(out, &matrix, &budget_cells)?;
    remove_dropped_aggregates(out, &matrix)?;
    finish_folder(out)?;
    Ok(BenchOutcome {
        out: out.to_path_buf(),
        cells_total: cells.len(),
        cells_run: 0,
        cells_skipped: cells.len(),
        sweep_seconds: 0.0,
        gap_studies_total: gap_cells.len(),
        gap_studies_run: 0,
        gap_seconds: 0.0,
        replays_total: replay_cells.len(),
        replays_run: 0,
        replay_seconds: 0.0,
        budget_cells_total: budget_cells.len(),
        budget_replays: 0,
        budget_seconds: 0.0,
        complete: true,
        matrix,
    })
}

/// Draws the figures and writes `REPORT.md` of a complete results folder, from its CSVs.
pub fn finish_folder(out: &Path) -> Result<()> {
    gapbench_report::redraw(out)?;
    Ok(())
}

/// Copies into `out` each cell's finished record from the first shard that has it, byte for
/// byte (a JSON round trip may move a float by one ulp); returns the cells no shard has
/// finished, as paths inside a results folder. A cell file a shard holds that is not a
/// finished cell of this matrix (cut short, edited, of another run) is an error naming it:
/// merged over, it would read as "not run yet" and the damage would go unseen.
fn gather<C, R>(
    out: &Path,
    shards: &[PathBuf],
    cells: &[C],
    finished: impl Fn(&Path, &C) -> Option<R>,
    path: impl Fn(&Path, &C) -> PathBuf,
) -> Result<Vec<PathBuf>> {
    let mut missing = Vec::new();
    for cell in cells {
        if finished(out, cell).is_some() {
            continue;
        }
        let mut source = None;
        for shard in shards {
            let file = path(shard, cell);
            if !file.exists() {
                continue;
            }
            if finished(shard, cell).is_none() {
                bail!(
                    "{}: not a finished cell of this matrix (cut short, edited, or from another run): delete it and rerun its shard, then merge again",
                    file.display()
                );
            }
            source.get_or_insert(file);
        }
        match source {
            Some(from) => {
                let bytes = std::fs::read(&from)
                    .with_context(|| format!("{}: cannot read", from.display()))?;
                write_atomic(&path(out, cell), &bytes)?;
            }
            None => missing.push(path(Path::new(""), cell)),
        }
    }
    Ok(missing)
}

/// Refuses a merge that left cells out: a merge job that "succeeded" over missing shards
/// would pass for a finished bench.
fn refuse_incomplete(out: &Path, total: usize, missing: &[PathBuf]) -> Result<()> {
    if missing.is_empty() {
        return Ok(());
    }
    let shown: Vec<String> = missing
        .iter()
        .take(5)
        .map(|p| p.display().to_string())
        .collect();
    let more = if missing.len() > shown.len() {
        ", …"
    } else {
        ""
    };
    bail!(
        "the merge into {} is incomplete: {} of {total} cells are in none of the shards ({}{more}); the cells found were copied: run the missing shards, then merge again",
        out.display(),
        missing.len(),
        shown.join(", ")
    )
}

/// Today's UTC date as `YYYY-MM-DD` (civil-from-days, proleptic Gregorian).
pub fn utc_date() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64 + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
