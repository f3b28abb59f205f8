//! `docs/results.md`, generated from the row declarations: every file gapbench writes for
//! users, with each CSV's columns, units and meanings. A test fails when the committed file
//! differs from what the declarations generate (`UPDATE_DOCS=1` rewrites it).

use std::fmt::Write as _;

use crate::budget::{BudgetFrontierRow, BudgetPointRow, BudgetTimelineRow};
use crate::curve::CurveRow;
use crate::eaco_bound::EacoBoundRow;
use crate::front::FrontRow;
use crate::frontier_output::{ColgenRow, FrontierPointRow, FrontierRow};
use crate::gap_row::{GapRow, TracedGapRow};
use crate::instance::IndexRow;
use crate::pareto::ParetoPoint;
use crate::replay::{ReplayRunRow, ReplayTimelineRow};
use crate::replay_output::{TaskRow, TimelineRow};
use crate::row::{join_doc, Column, CsvRow};
use crate::runs::{GridRow, GridSample, MeanGridLine, RunRow};

/// A file of a results folder, as the documentation lists it.
struct FileDoc {
    name: &'static str,
    about: String,
    /// A CSV's columns; `None` for other files (JSON, figures, folders).
    columns: Option<Vec<Column>>,
}

/// A declared CSV.
fn csv<T: CsvRow>() -> FileDoc {
    FileDoc {
        name: T::FILE,
        about: join_doc(T::ABOUT),
        columns: Some(T::columns()),
    }
}

/// A file that no row declaration produces.
fn other(name: &'static str, about: &str) -> FileDoc {
    FileDoc {
        name,
        about: about.to_string(),
        columns: None,
    }
}

/// A folder users read: what it is, the command that writes it, and its files.
type Folder = (&'static str, &'static str, Vec<FileDoc>);

/// The folders users read, each with the command that writes it and its files.
fn folders() -> Vec<Folder> {
    vec![
        bench_folder(),
        run_folder(),
        gap_folder(),
        replay_folder(),
        frontier_folder(),
        every_folder(),
    ]
}

fn bench_folder() -> Folder {
    (
        "A bench folder",
        "`gapbench bench --out DIR` (and `gapbench merge`)",
        vec![
            other(
                crate::MATRIX_JSON,
                "The resolved matrix the folder was produced from: the spec, its traces, \
             seeds and input fingerprints (cells of another matrix are never reused).",
            ),
            csv::<GridRow>(),
            csv::<RunRow>(),
            csv::<MeanGridLine>(),
            csv::<TracedGapRow>(),
            csv::<ParetoPoint>(),
            csv::<ReplayRunRow>(),
            csv::<ReplayTimelineRow>(),
            csv::<EacoBoundRow>(),
            csv::<BudgetPointRow>(),
            csv::<BudgetFrontierRow>(),
            csv::<BudgetTimelineRow>(),
            other(
                crate::REPORT_MD,
                "The report: every study's tables and figures, drawn from the CSVs above \
             (`gapbench figures DIR` redraws it).",
            ),
            other(
                "figures/",
                "Every figure as SVG, PNG and PDF (vector, its font embedded), drawn from the \
             CSVs above; in the paper style (`gapbench figures DIR --style paper`, or \
             `[figures] style = \"paper\"` in a spec) each figure's caption is the `.txt` \
             file beside it.",
            ),
            other(
                "tables/",
                "REPORT.md's tables as LaTeX (booktabs; intervals as `low--high`, statuses \
             as marks explained under each table): the whole-cluster gaps, allocation and \
             power at 100 and 130 %, time-mode energy with its bounds, the budget tables.",
            ),
            other(
                "cells/, gap-cells/, replay-cells/, budget-cells/",
                "One JSON file per finished cell (sweep run, gap study, replay, budget \
             replay or frontier): what a resumed or merged bench reuses.",
            ),
            other(
                "cell-times/",
                "Each cell's wall-clock time, kept apart so that the cells themselves are \
             deterministic.",
            ),
        ],
    )
}

fn run_folder() -> Folder {
    (
        "A run folder",
        "`gapbench run --out DIR` (with `--seeds`, `curve.csv` per seed in `seed-N/`)",
        vec![
            csv::<CurveRow>(),
            {
                let mut mean = csv::<GridSample>();
                mean.about = format!(
                    "With several seeds: the means over seeds at each integer arrived \
                 percent. {}",
                    mean.about
                );
                mean
            },
            other(
                "summary.json",
                "The run's totals, failure counts and final values (the mean over seeds \
             with several).",
            ),
            other(
                "manifest.json",
                "The inputs (with their SHA-256), seeds and settings the run used.",
            ),
        ],
    )
}

fn gap_folder() -> Folder {
    (
        "A gap folder",
        "`gapbench gap --out DIR` (instance files and `index.csv` with `--export DIR`)",
        vec![
            csv::<GapRow>(),
            csv::<FrontRow>(),
            csv::<IndexRow>(),
            other(
                "<policy>-seed<N>[-n<nodes>]-chk<pct>.json",
                "With `--export DIR`, in `DIR` beside `index.csv`: one self-contained \
             instance file per solved snapshot (node types, task shapes, the power and \
             fragmentation formulas, and per objective the best placement known with its \
             proven bound), documented field by field in `workloads/instances/README.md`.",
            ),
            other(
                "manifest.json",
                "The inputs (with their SHA-256), seed and settings of the study.",
            ),
        ],
    )
}

fn replay_folder() -> Folder {
    (
        "A replay folder",
        "`gapbench replay --out DIR` (with `--seeds`, the files per seed in `seed-N/`)",
        vec![
            csv::<TimelineRow>(),
            csv::<TaskRow>(),
            other(
                "summary.json",
                "The replay's totals: tasks, energy by part, JCT, wait and slowdown \
             distributions, carbon, the budget and why it stopped early.",
            ),
            other(
                "bound.json",
                "With `--bound`: the proven lower bound on energy, per window.",
            ),
            other(
                "bound_check_mip.json",
                "With `--bound-check-mip`: the exact MIP on the same windows, to check \
             the bound against.",
            ),
            other(
                "manifest.json",
                "The inputs (with their SHA-256), seeds and settings of the replay.",
            ),
        ],
    )
}

fn frontier_folder() -> Folder {
    (
        "A frontier folder",
        "`gapbench frontier --out DIR`",
        vec![
            csv::<FrontierRow>(),
            csv::<ColgenRow>(),
            csv::<FrontierPointRow>(),
            other(
                "manifest.json",
                "The inputs (with their SHA-256) and settings of the frontier.",
            ),
        ],
    )
}

fn every_folder() -> Folder {
    (
        "Every folder",
        "every command that writes a folder",
        vec![other(
            crate::LOCK_FILE,
            "The operating-system lock (`flock`) a command holds on the folder while it \
             writes there (the file then names the holder; empty otherwise), so a second \
             gapbench on the same folder is refused, naming the holder. The kernel releases \
             it when its holder exits or is killed, so it is never stale.",
        )],
    )
}

/// A table cell: `|` escaped, empty shown as `–`.
fn cell(text: &str) -> String {
    if text.is_empty() {
        "–".to_string()
    } else {
        text.replace('|', "\\|")
    }
}

/// The whole of `docs/results.md`.
pub fn results_markdown() -> String {
    let mut out = String::from(
        "# Results files\n\n\
         Every file gapbench writes for users, by folder, with each CSV's columns. Generated \
         from the row declarations in `crates/results` (`declare_row!`): do not edit by hand; \
         `UPDATE_DOCS=1 cargo test --release -p gapbench-results docs` rewrites it.\n\n\
         Numbers are spelled with fixed decimals (`inf`, `-inf`, `nan` for the non-finite) \
         or, where the table says *shortest exact*, as the shortest decimal that reads back \
         as the same number. An empty field is an absent value. Text is quoted when it holds \
         a comma, a quote or a line break.\n",
    );
    for (folder, written_by, files) in folders() {
        write!(out, "\n## {folder}\n\nWritten by {written_by}.\n").expect("to a String");
        for file in files {
            write!(out, "\n### `{}`\n\n{}\n", file.name, file.about).expect("to a String");
            let Some(columns) = file.columns else {
                continue;
            };
            out.push_str("\n| column | unit | spelling | meaning |\n|---|---|---|---|\n");
            for c in columns {
                writeln!(
                    out,
                    "| `{}` | {} | {} | {} |",
                    c.name,
                    cell(c.unit),
                    cell(&c.spelling),
                    cell(&c.meaning)
                )
                .expect("to a String");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `docs/results.md` is what the declarations generate.
    #[test]
    fn docs_results_md_matches_the_declarations() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/results.md");
        let generated = results_markdown();
        if std::env::var_os("UPDATE_DOCS").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "docs/results.md differs from the row declarations: rerun with UPDATE_DOCS=1"
        );
    }

    /// Every file constant of the crate is documented.
    #[test]
    fn every_bench_file_is_listed() {
        let text = results_markdown();
        for name in [
            crate::MEAN_GRID_CSV,
            crate::RUNS_CSV,
            crate::GAPS_CSV,
            crate::PARETO_CSV,
            crate::FRONTS_CSV,
            crate::REPLAY_RUNS_CSV,
            crate::REPLAY_TIMELINE_CSV,
            crate::EACO_BOUNDS_CSV,
            crate::BUDGET_POINTS_CSV,
            crate::BUDGET_FRONTIER_CSV,
            crate::BUDGET_TIMELINE_CSV,
            crate::MATRIX_JSON,
            crate::REPORT_MD,
            crate::LOCK_FILE,
        ] {
            assert!(text.contains(&format!("### `{name}`")), "{name}");
        }
    }

    /// The headers are those the files had before they were declared here (a column
    /// renamed or moved changes every reader's file: bump the schema and say so).
    #[test]
    fn headers_are_the_files_of_before() {
        let fronts = "checkpoint_pct,policy,seed,nodes,tasks,point,power_cap_watts,power_watts,frag_milli,frag_bound_milli,status,solve_s";
        for (generated, expected) in [
            (TimelineRow::csv_header(), "time_s,event,power_watts,job_power_watts,energy_kwh,job_energy_kwh,carbon_kg,running,allocated_gpu_pct,frag_gpu_milli,active_nodes,active_gpus,queue_length,bound_power_watts"),
            (TaskRow::csv_header(), "name,qos,phase,gpu_count,gpu_milli,arrival_s,duration_s,left_censored,right_censored,util_permille,gpu_memory_permille,epochs,deadline_s,start_s,end_s,wait_s,jct_s,slowdown,failed,failure,undos,deadline_missed,reconfigurations,energy_kwh,job_energy_kwh,job_carbon_kg"),
            (ColgenRow::csv_header(), "budget,unit,mean_jct_bound_s,master_mean_jct_s,rounds,status,incumbent_mean_jct_s"),
            (FrontierRow::csv_header(), "budget,unit,mean_jct_bound_s,status,mip_mean_jct_s,mip_bound_mean_jct_s,mip_status,mip_seconds"),
            (FrontierPointRow::csv_header(), "policy,budget,job_energy_kwh,carbon_kg,cluster_energy_kwh,mean_jct_s,bound_mean_jct_s,gap,error"),
            (GridSample::csv_header(), "arrived_pct,alloc_pct,frag_gpu_milli,frag_ratio_pct,power_cpu_w,power_gpu_w,power_total_w,used_nodes,failed_tasks"),
            (CurveRow::csv_header(), "event,task,outcome,reason,node,devices,arrived_gpu_milli,arrived_pct,used_gpu_milli,alloc_pct,frag_gpu_milli,frag_ratio_pct,q124_pct,idle_gpu_milli,power_cpu_w,power_gpu_w,power_total_w,used_nodes,used_gpus,arrived_cpu_milli,used_cpu_milli,failed_tasks"),
            (BudgetFrontierRow::csv_header(), "setup,seed,kind,budget,mean_jct_bound_s"),
            (BudgetPointRow::csv_header(), "setup,seed,kind,policy,fraction,budget,jobs,job_energy_kwh,carbon_kg,cluster_energy_kwh,mean_jct_s,fifo_mean_jct_s,jct_speedup_vs_fifo,bound_mean_jct_s,gap,bound_status,bound_lp_mean_jct_s,error,schedule_mean_jct_s"),
            (BudgetTimelineRow::csv_header(), "setup,seed,kind,policy,time_s,job_kw,g_per_kwh,waiting"),
            (EacoBoundRow::csv_header(), "source,nodes,idle,seed,deadline_factor,windows,bound_kwh,closed_form_kwh,lp_kwh,lp_status,slot_s,slots,columns,rows,patterns"),
            (TracedGapRow::csv_header(), "trace,checkpoint_pct,objective,policy,seed,nodes,tasks,heuristic_value,incumbent,bound,status,gap_low_pct,gap_high_pct,solve_s,instance"),
            (GridRow::csv_header(), "trace,family,policy,seed,arrived_pct,alloc_pct,frag_gpu_milli,frag_ratio_pct,power_cpu_w,power_gpu_w,power_total_w,used_nodes,failed_tasks"),
            (MeanGridLine::csv_header(), "trace,family,policy,seeds,arrived_pct,alloc_pct,frag_gpu_milli,frag_ratio_pct,power_cpu_w,power_gpu_w,power_total_w,used_nodes,failed_tasks"),
            (ParetoPoint::csv_header(), "trace,checkpoint_pct,seed,nodes,kind,label,power_w,frag_gpu_milli,status,power_cap_w,frag_bound_gpu_milli"),
            (ReplayRunRow::csv_header(), "source,nodes,policy,seed,arrival_scale,idle,tasks,completed,failed,unfinished,energy_kwh,gpu_busy_kwh,gpu_idle_kwh,cpu_kwh,sleep_kwh,mean_power_w,mean_jct_s,p50_jct_s,p95_jct_s,p99_jct_s,mean_wait_s,mean_run_s,makespan_s,mean_active_nodes,undos,deadline_misses,job_energy_kwh,carbon_kg,job_carbon_kg,stopped_early,bound_kwh,bound_lp_kwh,bound_status,bound_gap"),
            (ReplayTimelineRow::csv_header(), "source,nodes,policy,seed,arrival_scale,idle,time_s,power_w,active_nodes,allocated_gpu_pct,queue_length,bound_power_w"),
            (RunRow::csv_header(), "trace,family,policy,seed,events,placed,failed,cloned_tasks,removed_tasks,final_arrived_pct,final_alloc_pct,final_frag_ratio_pct,final_power_total_w"),
            (FrontRow::csv_header(), fronts),
        ] {
            assert_eq!(generated, expected);
        }
        assert_eq!(
            format!("trace,{}", GapRow::csv_header()),
            TracedGapRow::csv_header()
        );
    }
}
