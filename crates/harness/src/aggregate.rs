//! A complete bench folder's aggregates, from its cells in spec order: `grid.csv`,
//! `mean_grid.csv` and `runs.csv` (sweeps), `gaps.csv` and `pareto.csv` (gap studies);
//! and the removal of aggregates of a study the matrix no longer has, so a folder reused
//! for another spec holds no CSV (nor figure) of the one before.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use gapbench_results::{
    FrontRow, GridRow, MeanGridLine, ParetoPoint, PointKind, RunRow, TracedGapRow,
    BUDGET_FRONTIER_CSV, BUDGET_POINTS_CSV, BUDGET_TIMELINE_CSV, EACO_BOUNDS_CSV, GAPS_CSV,
    MEAN_GRID_CSV, PARETO_CSV, REPLAY_RUNS_CSV, REPLAY_TIMELINE_CSV, RUNS_CSV,
};

use crate::bench::Matrix;
use crate::bench_spec::trace_family;
use crate::cells::{finished, finished_gap, Cell, GapCell};
use crate::io::{write_atomic, write_atomic_with};
use crate::summary::SeedMeans;

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
        let record = finished(out, matrix, cell).with_context(|| {
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

/// Writes `gaps.csv` (the gap columns with the trace first) and `pareto.csv` from the gap
/// cells. The front of a (trace, checkpoint) is that of the first study's first policy's
/// instance; a study holds it with the own points of the policies that faced that instance
/// (at checkpoints where no task failed, every policy: same seed, same arrivals).
pub(crate) fn aggregate_gaps(out: &Path, matrix: &Matrix, cells: &[GapCell]) -> Result<()> {
    if matrix.spec.gaps.is_none() {
        return Ok(());
    }
    let mut gaps = format!("{}\n", TracedGapRow::csv_header());
    let mut pareto = format!("{}\n", ParetoPoint::csv_header());
    let first_seed = cells.first().map(|c| c.seed);
    let mut fronts: BTreeMap<(String, String), usize> = BTreeMap::new();
    for cell in cells {
        let record = finished_gap(out, matrix, cell).with_context(|| {
            format!(
                "gap study {} {} seed {} is missing",
                cell.trace,
                cell.policy_list(),
                cell.seed
            )
        })?;
        for row in &record.rows {
            let traced = TracedGapRow {
                trace: cell.trace.clone(),
                gap: row.clone(),
            };
            writeln!(gaps, "{}", traced.csv_line())?;
        }
        if Some(cell.seed) != first_seed {
            continue;
        }
        let point_of = |kind, label: String, p: &FrontRow, status: String| ParetoPoint {
            trace: cell.trace.clone(),
            checkpoint_pct: p.checkpoint_pct,
            seed: cell.seed.to_string(),
            nodes: Some(p.nodes),
            kind,
            label,
            power_w: Some(p.power_watts),
            frag_gpu_milli: Some(p.frag_milli),
            status,
            power_cap_w: p.power_cap_watts,
            frag_bound_gpu_milli: p.frag_bound_milli,
        };
        for point in &record.fronts {
            let checkpoint = format!("{:.1}", point.checkpoint_pct);
            let front_tasks = *fronts
                .entry((cell.trace.clone(), checkpoint.clone()))
                .or_insert_with(|| {
                    for p in record.fronts.iter().filter(|p| {
                        !p.is_heuristic()
                            && format!("{:.1}", p.checkpoint_pct) == checkpoint
                            && p.power_watts.is_finite()
                    }) {
                        let front =
                            point_of(PointKind::Front, p.point.clone(), p, p.status_label());
                        let _ = writeln!(pareto, "{}", front.csv_line());
                    }
                    point.tasks
                });
            if point.is_heuristic() && point.tasks == front_tasks {
                let label = point.policy.clone();
                let own = point_of(PointKind::Policy, label, point, point.status_label());
                writeln!(pareto, "{}", own.csv_line())?;
            }
        }
    }
    write_atomic(&out.join(GAPS_CSV), gaps.as_bytes())?;
    write_atomic(&out.join(PARETO_CSV), pareto.as_bytes())?;
    Ok(())
}

/// Removes the aggregates of every study `matrix` does not have (sweeps, gap studies,
/// replays, the budget study): an earlier spec's CSVs in a reused folder.
pub(crate) fn remove_dropped_aggregates(out: &Path, matrix: &Matrix) -> Result<()> {
    let spec = &matrix.spec;
    let dropped: [(bool, &[&str]); 4] = [
        (
            matrix.traces.is_empty(),
            &[GRID_CSV, MEAN_GRID_CSV, RUNS_CSV],
        ),
        (spec.gaps.is_none(), &[GAPS_CSV, PARETO_CSV]),
        (
            spec.replay.is_none(),
            &[REPLAY_RUNS_CSV, REPLAY_TIMELINE_CSV, EACO_BOUNDS_CSV],
        ),
        (
            spec.budget.is_none(),
            &[BUDGET_POINTS_CSV, BUDGET_FRONTIER_CSV, BUDGET_TIMELINE_CSV],
        ),
    ];
    for name in dropped
        .iter()
        .filter(|(gone, _)| *gone)
        .flat_map(|(_, names)| names.iter())
    {
        let path = out.join(name);
        if path.is_file() {
            std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
        }
    }
    Ok(())
}
