//! Arrival sweeps (the spec's traces × policies × seeds): one sweep a cell, its summary
//! stored; aggregated into `grid.csv`, `mean_grid.csv` and `runs.csv` in spec order,
//! streaming (one cell at a time, means summed as they go, so memory does not grow with the
//! number of cells).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use gapbench_model::{NodeOrder, TaskOrder};
use gapbench_online::PolicySpec;
use gapbench_results::{GridRow, MeanGridLine, RunRow, MEAN_GRID_CSV, RUNS_CSV};
use serde::{Deserialize, Serialize};

use crate::bench::kind::CellKind;
use crate::bench::matrix::{Inputs, Matrix};
use crate::bench::spec::{parse_policies, trace_family};
use crate::bench::status::Kind;
use crate::io::write_atomic_with;
use crate::run::{run_seed, seed_summary, RunSettings, SeedSummary};
use crate::summary::SeedMeans;

/// Key kind of sweep cells (bump when [`SeedSummary`] changes meaning).
const CELL_KIND: &str = "gapbench-cell-v1";

/// One arrival sweep of the matrix.
#[derive(Debug, Clone)]
pub struct Cell {
    pub trace: String,
    pub policy: PolicySpec,
    pub seed: u64,
}

/// A finished sweep cell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct CellRecord {
    pub(crate) key: String,
    pub(crate) trace: String,
    pub(crate) policy: String,
    pub(crate) summary: SeedSummary,
}

/// The arrival sweeps of a bench.
pub(crate) struct Sweeps;

impl CellKind for Sweeps {
    type Cell = Cell;
    type Record = CellRecord;
    const NAME: &'static str = "runs";
    const AGGREGATES: &'static [&'static str] = &[GRID_CSV, MEAN_GRID_CSV, RUNS_CSV];

    /// In spec order: trace, then policy, then seed.
    fn cells(&self, matrix: &Matrix) -> Result<Vec<Cell>> {
        let policies = parse_policies(&matrix.spec.policies)?;
        let seeds = matrix.spec.seeds.expand()?;
        let mut cells = Vec::new();
        for trace in &matrix.traces {
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

    fn key(&self, matrix: &Matrix, cell: &Cell) -> String {
        matrix.key(
            CELL_KIND,
            &cell.trace,
            &cell.policy.to_string(),
            cell.seed,
            "",
        )
    }

    fn record_key<'r>(&self, record: &'r CellRecord) -> &'r str {
        &record.key
    }

    fn path(&self, cell: &Cell) -> PathBuf {
        PathBuf::from("cells")
            .join(&cell.trace)
            .join(cell.policy.slug())
            .join(format!("seed-{}.json", cell.seed))
    }

    fn status_kind(&self, _: &Cell) -> Kind {
        Kind::Sweep
    }

    fn in_spec(&self, matrix: &Matrix) -> bool {
        !matrix.traces.is_empty()
    }

    fn run(
        &self,
        matrix: &Matrix,
        inputs: &Inputs,
        cell: &Cell,
        _: usize,
        _: &Path,
    ) -> Result<CellRecord> {
        let workload = &inputs.workloads[&cell.trace];
        let settings = RunSettings::new(
            cell.policy.clone(),
            Some(matrix.spec.tune),
            TaskOrder::Shuffled,
            NodeOrder::Random,
        );
        let run = run_seed(workload, &settings, cell.seed);
        Ok(CellRecord {
            key: self.key(matrix, cell),
            trace: cell.trace.clone(),
            policy: cell.policy.to_string(),
            summary: seed_summary(&workload.cluster, &run),
        })
    }

    fn aggregate(&self, out: &Path, matrix: &Matrix, cells: &[Cell]) -> Result<()> {
        aggregate(out, matrix, cells)
    }
}

/// The sweeps' per-run grid (`grid.csv`, written with the sweeps' aggregates).
const GRID_CSV: &str = "grid.csv";

/// Writes `grid.csv`, `mean_grid.csv` and `runs.csv` from the cell files, in spec order
/// (none for a spec of replays only), streaming: one cell at a time, means summed as they
/// go, so memory does not grow with the number of cells.
pub(crate) fn aggregate(out: &Path, matrix: &Matrix, cells: &[Cell]) -> Result<()> {
    if cells.is_empty() {
        return Ok(());
    }
    write_atomic_with(&out.join(GRID_CSV), |grid| {
        write_atomic_with(&out.join(RUNS_CSV), |runs| {
            write_atomic_with(&out.join(MEAN_GRID_CSV), |mean| {
                write_sweep_aggregates(out, matrix, cells, grid, runs, mean)
            })
        })
    })
}

fn write_sweep_aggregates(
    out: &Path,
    matrix: &Matrix,
    cells: &[Cell],
    grid: &mut dyn Write,
    runs: &mut dyn Write,
    mean: &mut dyn Write,
) -> Result<()> {
    writeln!(grid, "{}", GridRow::csv_header())?;
    writeln!(runs, "{}", RunRow::csv_header())?;
    writeln!(mean, "{}", MeanGridLine::csv_header())?;
    let mut group = SeedMeans::default();
    for (i, cell) in cells.iter().enumerate() {
        let record = Sweeps.finished(out, matrix, cell).with_context(|| {
            format!(
                "cell {} {} seed {} is missing",
                cell.trace, cell.policy, cell.seed
            )
        })?;
        let family = trace_family(&cell.trace);
        let s = &record.summary;
        for sample in &s.grid {
            let row = GridRow {
                trace: cell.trace.clone(),
                family: family.to_string(),
                policy: record.policy.clone(),
                seed: cell.seed,
                sample: *sample,
            };
            writeln!(grid, "{}", row.csv_line())?;
        }
        let f = &s.final_sample;
        let run = RunRow {
            trace: cell.trace.clone(),
            family: family.to_string(),
            policy: record.policy.clone(),
            seed: cell.seed,
            events: s.events,
            placed: s.placed,
            failed: s.failed,
            cloned_tasks: s.cloned_tasks,
            removed_tasks: s.removed_tasks,
            final_arrived_pct: f.arrived_pct,
            final_alloc_pct: f.alloc_pct,
            final_frag_ratio_pct: f.frag_ratio_pct,
            final_power_total_w: f.power_total_w,
        };
        writeln!(runs, "{}", run.csv_line())?;
        group.add(&s.final_sample, &s.grid);
        let last_of_group = cells
            .get(i + 1)
            .is_none_or(|next| next.trace != cell.trace || next.policy != cell.policy);
        if last_of_group {
            for sample in group.grid() {
                let row = MeanGridLine {
                    trace: cell.trace.clone(),
                    family: family.to_string(),
                    policy: record.policy.clone(),
                    seeds: group.count() as u64,
                    sample,
                };
                writeln!(mean, "{}", row.csv_line())?;
            }
            group = SeedMeans::default();
        }
    }
    Ok(())
}
