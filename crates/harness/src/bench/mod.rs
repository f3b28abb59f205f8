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
//!   (`status`): cells stay deterministic, so they cannot hold it;
//! - `grid.csv`, `mean_grid.csv`, `runs.csv`, `gaps.csv`, `pareto.csv`, `replay_runs.csv`,
//!   `replay_timeline.csv` — aggregated from the cells, in spec order; then `figures/` and
//!   `REPORT.md`;
//! - `budget-cells/<setup>/seed-<n>/<policy or frontier>.json` — one finished replay or
//!   frontier of the `[budget]` study each, keyed the same way; aggregated into
//!   `budget_points.csv`, `budget_frontier.csv` and `budget_timeline.csv`.
//!
//! The layers, arrows one way: `spec` (what a spec file says) → `sources` (the inputs it
//! names, loaded) → `matrix` (the spec resolved against them) → `store` (keyed cell files)
//! → `kind` and `kinds/` (one file per kind of cell: its cells, key, path, run and
//! aggregates) → `phases` and `status` → this module (run, merge).
//!
//! Arrival sweeps are deterministic, so their files are byte-identical however the bench was
//! interrupted, sharded or threaded. Exact solves under a time limit are not (HiGHS stops
//! where the clock says): their status and bound say what was proven each time.

pub(crate) mod kind;
pub mod kinds;
pub mod matrix;
mod options;
mod phases;
pub mod reproduce;
pub mod sources;
pub mod spec;
pub mod status;
mod store;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use gapbench_model::{NodeOrder, TaskOrder};

use crate::io::write_json;
use crate::out_dir::OutDir;
use crate::run::RunSettings;
use crate::work::Work;
use kind::CellKind;
use kinds::budget::BudgetStudy;
use kinds::gap::GapStudies;
use kinds::replay::Replays;
use kinds::sweep::Sweeps;
use kinds::KINDS;
pub use kinds::{BudgetCell, Cell, GapCell, ReplayCell};
pub use matrix::Matrix;
pub use options::BenchOptions;
use phases::Phases;
pub use sources::{ReplaySource, STAND_IN_TRACE};
use spec::BenchSpec;

/// What a bench did with one kind of cell.
#[derive(Debug, Clone, PartialEq)]
pub struct KindOutcome {
    /// What the kind's cells are (`runs`, `exact-gap studies`, `time-mode replays`, …).
    pub name: &'static str,
    /// Cells of the whole matrix.
    pub total: usize,
    /// Cells run now.
    pub run: usize,
    /// Cells of this shard found finished.
    pub skipped: usize,
    /// Wall time of this kind's phase.
    pub seconds: f64,
    /// The work of the cells run now: core-seconds and critical path.
    pub work: Work,
}

/// What a bench did.
#[derive(Debug, Clone)]
pub struct BenchOutcome {
    pub out: PathBuf,
    pub matrix: Matrix,
    /// Per kind of cell, in the order they run: sweeps, gap studies, replays, budget.
    pub kinds: Vec<KindOutcome>,
    /// False for a shard that left cells to others.
    pub complete: bool,
}

impl BenchOutcome {
    /// The outcome of the kind named `name`.
    pub fn kind(&self, name: &str) -> Option<&KindOutcome> {
        self.kinds.iter().find(|k| k.name == name)
    }

    /// What the CLI prints of it: the sweeps always, every other kind the matrix has; for
    /// each phase that ran, its work and critical path (what more cores could buy).
    pub fn summary_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for (i, kind) in self.kinds.iter().enumerate() {
            let work = if kind.run > 0 {
                let work = kind.work;
                format!(
                    " ({:.1} core-s of work, critical path {:.1} s: at most {:.1}x on 16 cores)",
                    work.core_seconds,
                    work.critical_path_seconds,
                    work.best_speedup(16)
                )
            } else {
                String::new()
            };
            if i == 0 {
                lines.push(format!(
                    "{} of {} {} done now ({} already finished) in {:.1} s{work}; results in {}",
                    kind.run,
                    kind.total,
                    kind.name,
                    kind.skipped,
                    kind.seconds,
                    self.out.display()
                ));
            } else if kind.total > 0 {
                lines.push(format!(
                    "{} of {} {} done now in {:.1} s{work}",
                    kind.run, kind.total, kind.name, kind.seconds
                ));
            }
        }
        lines
    }
}

/// Runs (the remaining cells of) a bench and, when every cell is done, aggregates.
pub fn run_bench(options: &BenchOptions) -> Result<BenchOutcome> {
    let (matrix, inputs) = resolve_checked(options)?;
    let out = options
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("results/{}-{}", matrix.spec.name, utc_date())));
    let _held = OutDir::acquire(&out)?;
    write_json(&out.join("matrix.json"), &matrix)?;

    // Cells are numbered across kinds in run order, so shards share every kind out evenly.
    let shard = options.shard;
    let (sweeps, sweeps_done) = Sweeps.todo(&matrix, &out, 0, shard)?;
    let mut first = Sweeps.cells(&matrix)?.len();
    let (gaps, gaps_done) = GapStudies.todo(&matrix, &out, first, shard)?;
    first += GapStudies.cells(&matrix)?.len();
    let (replays, replays_done) = Replays.todo(&matrix, &out, first, shard)?;
    first += Replays.cells(&matrix)?.len();
    let (budget, budget_done) = BudgetStudy.todo(&matrix, &out, first, shard)?;

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.jobs.unwrap_or(0))
        .build()?;
    let phases = Phases {
        matrix: &matrix,
        inputs: &inputs,
        out: &out,
        pool: &pool,
        progress: options.progress,
    };
    let sweep_phase = phases.side_by_side(&Sweeps, &sweeps, "runs")?;
    let (gap_phase, replay_phase) = phases.gaps_beside_replays(&gaps, &replays)?;
    let budget_label = "budget replays and frontiers";
    let budget_phase = phases.side_by_side(&BudgetStudy, &budget, budget_label)?;

    let complete = all_complete(&out, &matrix)?;
    if complete {
        aggregate_all(&out, &matrix)?;
    }
    let kinds = vec![
        outcome_of(&Sweeps, &matrix, (sweeps.len(), sweeps_done), sweep_phase)?,
        outcome_of(&GapStudies, &matrix, (gaps.len(), gaps_done), gap_phase)?,
        outcome_of(
            &Replays,
            &matrix,
            (replays.len(), replays_done),
            replay_phase,
        )?,
        outcome_of(
            &BudgetStudy,
            &matrix,
            (budget.len(), budget_done),
            budget_phase,
        )?,
    ];
    Ok(BenchOutcome {
        out,
        matrix,
        kinds,
        complete,
    })
}

/// The spec of `options` resolved against its traces, checked against what its inputs can
/// give and against the machine's memory, with the command that reproduces it.
fn resolve_checked(options: &BenchOptions) -> Result<(Matrix, matrix::Inputs)> {
    let spec = BenchSpec::load(&options.spec)?;
    let traces_dir = match (options.stand_in, &options.traces_dir) {
        (true, _) => None,
        (false, Some(dir)) => Some(dir.clone()),
        (false, None) => crate::workload::default_traces_dir(),
    };
    let (mut matrix, inputs) = Matrix::resolve(spec, traces_dir.as_deref())?;
    phases::check_against_inputs(&matrix, &inputs).with_context(|| {
        format!(
            "{}: the spec asks what its inputs cannot give",
            options.spec.display()
        )
    })?;
    let parallel = options.jobs.unwrap_or_else(rayon::current_num_threads);
    let tuned = RunSettings::new(
        gapbench_online::PolicySpec::solo(gapbench_online::PolicyKind::Fgd),
        Some(matrix.spec.tune),
        TaskOrder::Shuffled,
        NodeOrder::Random,
    );
    for workload in inputs.workloads.values() {
        crate::run::check_sweep_memory(workload, &tuned, parallel)?;
    }
    use reproduce::{bench_command, TracesUsed};
    let traces = match (&traces_dir, matrix.stand_in) {
        (_, true) => TracesUsed::StandIn,
        (Some(dir), false) if !matrix.spec.needed_traces().is_empty() => TracesUsed::Folder(dir),
        _ => TracesUsed::NoneNamed,
    };
    matrix.command = bench_command(&options.command, options, traces);
    Ok((matrix, inputs))
}

/// A kind's outcome: its cells in all, `(run, skipped)` now, its phase's seconds and work.
fn outcome_of<K: CellKind>(
    kind: &K,
    matrix: &Matrix,
    (run, skipped): (usize, usize),
    (seconds, work): (f64, Work),
) -> Result<KindOutcome> {
    Ok(KindOutcome {
        name: K::NAME,
        total: kind.cells(matrix)?.len(),
        run,
        skipped,
        seconds,
        work,
    })
}

/// Whether every cell of every kind is finished in `out`.
fn all_complete(out: &Path, matrix: &Matrix) -> Result<bool> {
    for kind in KINDS {
        if !kind.complete(out, matrix)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Writes every kind's aggregates (removing those of a study the matrix no longer has, so
/// a folder reused for another spec holds no CSV of the one before), then the figures and
/// `REPORT.md`.
fn aggregate_all(out: &Path, matrix: &Matrix) -> Result<()> {
    for kind in KINDS {
        kind.aggregate_all(out, matrix)?;
    }
    finish_folder(out)
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
    matrix.command = reproduce::unsharded(&matrix.command, out);
    write_json(&out.join("matrix.json"), &matrix)?;
    let (mut total, mut missing) = (0, Vec::new());
    for kind in KINDS {
        missing.extend(kind.gather(out, shards, &matrix)?);
        total += kind.count(&matrix)?;
    }
    refuse_incomplete(out, total, &missing)?;
    aggregate_all(out, &matrix)?;
    let mut kinds = Vec::new();
    for kind in KINDS {
        let total = kind.count(&matrix)?;
        kinds.push(KindOutcome {
            name: kind.name(),
            total,
            run: 0,
            skipped: total,
            seconds: 0.0,
            work: Work::default(),
        });
    }
    Ok(BenchOutcome {
        out: out.to_path_buf(),
        matrix,
        kinds,
        complete: true,
    })
}

/// Draws the figures and writes `REPORT.md` of a complete results folder, from its CSVs.
pub fn finish_folder(out: &Path) -> Result<()> {
    gapbench_report::redraw(out)?;
    Ok(())
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
