//! Time-mode figures and report sections from a small synthetic folder: every figure is
//! drawn (SVG, PDF and PNG), labelled and deterministic; the EaCO table's ratios are the
//! hand-computed ones; a bad row is an error naming file and line.

mod common;

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use gapbench_report::{draw_all, redraw};

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("gapbench-time-mode-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

const RUNS_HEADER: &str = "source,nodes,policy,seed,arrival_scale,idle,tasks,completed,failed,unfinished,energy_kwh,gpu_busy_kwh,gpu_idle_kwh,cpu_kwh,sleep_kwh,mean_power_w,mean_jct_s,p50_jct_s,p95_jct_s,p99_jct_s,mean_wait_s,mean_run_s,makespan_s,mean_active_nodes,undos,deadline_misses,job_energy_kwh,carbon_kg,job_carbon_kg,stopped_early,bound_kwh,bound_lp_kwh,bound_status,bound_gap";

/// (source, nodes, policy, energy kWh, mean run s): two seeds each, the second with +10 %
/// energy, so the mean is 1.05 × the value.
const RUNS: [(&str, usize, &str, f64, f64); 6] = [
    ("default", 1213, "fgd", 50_000.0, 3600.0),
    ("default", 1213, "pwr", 48_000.0, 3700.0),
    ("eaco-28", 28, "fifo-o", 1000.0, 7200.0),
    ("eaco-28", 28, "fifo-packed-o", 800.0, 7300.0),
    ("eaco-28", 28, "gandiva-o", 700.0, 7400.0),
    ("eaco-28", 28, "eaco-o", 600.0, 7920.0),
];

const BOUND_KWH: f64 = 45_000.0;

fn runs_csv() -> String {
    let mut out = format!("{RUNS_HEADER}\n");
    for idle in ["always-on", "sleep-when-empty"] {
        for (source, nodes, policy, energy, run) in RUNS {
            for (seed, factor) in [(42, 1.0), (43, 1.1)] {
                // The trace's replays carry an energy bound of 45 000 kWh.
                let bound = if source == "default" {
                    let gap = energy * factor / BOUND_KWH - 1.0;
                    format!("{BOUND_KWH:.4},{BOUND_KWH:.4},windows_converged,{gap:.6}")
                } else {
                    ",,,".to_string()
                };
                writeln!(
                    out,
                    "{source},{nodes},{policy},{seed},1.000,{idle},10,10,0,0,{:.4},1,1,1,1,1000.00,{:.2},1,1,1,0.00,{run:.2},36000.00,5.0000,0,0,{:.4},,,,{bound}",
                    energy * factor,
                    run + 60.0,
                    energy * factor / 4.0
                )
                .unwrap();
            }
        }
    }
    out
}

fn timeline_csv() -> String {
    let mut out = String::from("source,nodes,policy,seed,arrival_scale,idle,time_s,power_w,active_nodes,allocated_gpu_pct,queue_length,bound_power_w\n");
    for idle in ["always-on", "sleep-when-empty"] {
        for (source, nodes, policy, energy, _) in RUNS {
            for seed in [42, 43] {
                for k in 0..=20 {
                    let t = 3600.0 * f64::from(k);
                    writeln!(
                        out,
                        "{source},{nodes},{policy},{seed},1.000,{idle},{t:.1},{:.1},{},50.000,0,{}",
                        energy * (1.0 + f64::from(k % 5)),
                        k % 7,
                        if source == "default" {
                            format!("{:.1}", 0.8 * energy)
                        } else {
                            String::new()
                        }
                    )
                    .unwrap();
                }
            }
        }
    }
    out
}

const MATRIX: &str = r#"{
  "spec": {
    "name": "time-mode", "description": "synthetic replays", "traces": [], "policies": [],
    "seeds": [], "tune": 1.3,
    "replay": {
      "traces": ["default"], "eaco": {"servers": [28], "jobs": 10, "jobs_per_hour": 2.0},
      "policies": ["fgd", "pwr", "fifo-o", "fifo-packed-o", "gandiva-o", "eaco-o"],
      "seeds": "42..43", "arrival_scales": [1.0], "idle": ["always-on", "sleep-when-empty"],
      "sleep_fraction": 0.05
    }
  },
  "traces": [], "gap_traces": [], "stand_in": false, "inputs": {},
  "command": "cargo xtask bench --spec time-mode.toml"
}"#;

fn write_inputs(dir: &Path) {
    fs::write(dir.join("replay_runs.csv"), runs_csv()).unwrap();
    fs::write(dir.join("replay_timeline.csv"), timeline_csv()).unwrap();
    fs::write(dir.join("matrix.json"), MATRIX).unwrap();
}

const FIGURES: [&str; 8] = [
    "replay_power_over_time",
    "replay_active_nodes_over_time",
    "replay_energy_vs_jct_default_always-on",
    "replay_energy_vs_jct_default_sleep-when-empty",
    "replay_energy_vs_jct_eaco-28_always-on",
    "replay_energy_vs_jct_eaco-28_sleep-when-empty",
    "replay_eaco_energy_runtime_vs_fifo",
    "replay_eaco_energy_runtime_vs_fifo",
];

fn svg(dir: &Path, stem: &str) -> String {
    fs::read_to_string(dir.join("figures").join(format!("{stem}.svg"))).unwrap()
}

#[test]
fn every_time_mode_figure_is_drawn_labelled_and_deterministic() {
    let dir = temp_dir("draw");
    write_inputs(&dir);
    let written = draw_all(&dir).unwrap();
    assert_eq!(written.len(), 3 * 7);
    for stem in FIGURES {
        for ext in ["svg", "pdf", "png"] {
            let path = dir.join("figures").join(format!("{stem}.{ext}"));
            assert!(written.contains(&path), "{} not written", path.display());
        }
        let png = fs::read(dir.join("figures").join(format!("{stem}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    }
    let power = svg(&dir, "replay_power_over_time");
    for text in [
        "Cluster power over time",
        "default, always-on (1213 nodes)",
        "eaco-28, sleep-when-empty (28 nodes)",
        "time since the first arrival (hours)",
        "power (kW)",
        "eaco-o",
        "energy bound",
    ] {
        assert!(power.contains(text), "power timeline lacks `{text}`");
    }
    let bars = svg(&dir, "replay_eaco_energy_runtime_vs_fifo");
    for text in [
        "relative to FIFO",
        "28 servers, always-on",
        "fifo-packed-o",
        "FIFO = 1",
    ] {
        assert!(bars.contains(text), "EaCO bars lack `{text}`");
    }
    assert!(svg(&dir, "replay_energy_vs_jct_default_always-on").contains("total energy (MWh)"));
    assert!(svg(&dir, "replay_energy_vs_jct_eaco-28_always-on").contains("total energy (kWh)"));

    let again = temp_dir("draw-again");
    write_inputs(&again);
    draw_all(&again).unwrap();
    for path in &written {
        let twin = again.join(path.strip_prefix(&dir).unwrap());
        assert!(
            fs::read(path).unwrap() == fs::read(&twin).unwrap(),
            "{} differs between two draws",
            path.display()
        );
    }
    fs::remove_dir_all(&dir).unwrap();
    fs::remove_dir_all(&again).unwrap();
}

#[test]
fn the_report_tables_time_mode_and_the_eaco_study_against_fifo() {
    let dir = temp_dir("report");
    write_inputs(&dir);
    redraw(&dir).unwrap();
    let report = fs::read_to_string(dir.join("REPORT.md")).unwrap();
    assert!(
        !report.contains("## GPU allocation"),
        "no sweep, no sweep tables"
    );
    assert!(report.contains("- time mode (replays): sources default, eaco-28"));
    assert!(report.contains("## Time mode: energy and job completion"));
    // fgd: mean energy over seeds 1.05 × 50 000.
    // Its bound 45 000 kWh; gaps 50 000/45 000 − 1 and 55 000/45 000 − 1, mean 16.67 %.
    assert!(
        report.contains("| fgd | 52500.0 | 45000.0 | 45000.0 | 16.67 % |"),
        "{report}"
    );
    assert!(report.contains("pwr is within 12.00 % of it"), "{report}");
    assert!(report.contains("Least energy: pwr."));
    assert!(report.contains("## EaCO study") && report.contains("−39 %"));
    // eaco-o: energy 600 vs FIFO 1000 (both × 1.05): −40 %; run time 7920 vs 7200: +10 %;
    // vs FIFO_packed 600/800 − 1 = −25 %, vs Gandiva 600/700 − 1 = −14.3 %.
    assert!(
        report.contains("| eaco-o | 630 | -40.0 % | – | – | 2.20 | +10.0 % |"),
        "{report}"
    );
    assert!(report.contains(
        "eaco-28, always-on: EaCO-O energy -40.0 % vs FIFO, -25.0 % vs FIFO_packed, -14.3 % vs Gandiva; run time +10.0 %"
    ));
    assert!(report.contains("![replay_eaco_energy_runtime_vs_fifo]"));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_energy_tables_hold_the_bound_and_its_gap_and_compile() {
    let dir = temp_dir("tables");
    write_inputs(&dir);
    redraw(&dir).unwrap();
    let table = fs::read_to_string(dir.join("tables/energy_default_always-on.tex")).unwrap();
    // fgd as the papers name it: mean energy 52 500 kWh, bound 45 000, mean gap 16.67 %.
    assert!(table.contains("FGD & 52500.0 & 45000.0"), "{table}");
    assert!(table.contains("& 16.67 &"), "{table}");
    assert!(dir.join("tables/energy_eaco-28_always-on.tex").is_file());
    common::compile_tables(&dir);
    fs::remove_dir_all(&dir).unwrap();
}

/// `eaco_bounds.csv` rows for eaco-28: seeds 42 and 43 at σ = 1.2 (bounds 400 and 500 kWh,
/// so 450 on average), FIFO missing deadlines on seed 43 (its own bound 440), and the same
/// at σ = 1.05 (as source `eaco-28-d1.05`) with bounds 100 kWh higher.
fn bounds_csv() -> String {
    let mut out = String::from("source,nodes,idle,seed,deadline_factor,windows,bound_kwh,closed_form_kwh,lp_kwh,lp_status,slot_s,slots,columns,rows,patterns\n");
    for (source, sigma, extra) in [("eaco-28", 1.2, 0.0), ("eaco-28-d1.05", 1.05, 100.0)] {
        for idle in ["always-on", "sleep-when-empty"] {
            for (seed, bound) in [(42, 400.0), (43, 500.0)] {
                let b = bound + extra;
                writeln!(out, "{source},28,{idle},{seed},{sigma},deadlines,{b},300,{b},optimal,3600.0,228,36434,12293,79").unwrap();
            }
            let b = 440.0 + extra;
            writeln!(out, "{source},28,{idle},43,{sigma},makespan:fifo-o,{b},300,{b},optimal,32400.0,35,22420,10544,79").unwrap();
        }
    }
    out
}

#[test]
fn the_eaco_study_holds_each_policy_against_the_bound_and_draws_the_trade_off() {
    let dir = temp_dir("bounds");
    write_inputs(&dir);
    // The σ = 1.05 source: the same runs under another name.
    let runs = runs_csv();
    let mut all = runs.clone();
    for line in runs.lines().skip(1).filter(|l| l.starts_with("eaco-28,")) {
        writeln!(all, "{}", line.replacen("eaco-28,", "eaco-28-d1.05,", 1)).unwrap();
    }
    fs::write(dir.join("replay_runs.csv"), all).unwrap();
    fs::write(dir.join("eaco_bounds.csv"), bounds_csv()).unwrap();
    redraw(&dir).unwrap();
    let report = fs::read_to_string(dir.join("REPORT.md")).unwrap();
    // eaco-o: 630 kWh against (400 + 500) / 2 = 450: +40.0 %; fifo-o: seed 43 takes its own
    // bound, (400 + 440) / 2 = 420, marked; 1050 / 420 − 1 = +150 %.
    assert!(
        report.contains("| eaco-o | 630 | -40.0 % | 450 | +40.0 % |"),
        "{report}"
    );
    assert!(
        report.contains("| fifo-o | 1050 | +0.0 % | 420* | +150.0 % |"),
        "{report}"
    );
    // The LaTeX table holds the same bounds, the makespan bound marked.
    let table = fs::read_to_string(dir.join("tables/energy_eaco-28_always-on.tex")).unwrap();
    assert!(
        table.contains("EaCO-O & 630.0 & 450.0 & 40.00 &"),
        "{table}"
    );
    assert!(
        table.contains("FIFO-O & 1050.0 & 420.0\\rlap{\\textsuperscript{a}} & 150.00 &"),
        "{table}"
    );
    common::compile_tables(&dir);
    assert!(
        report.contains("1 h slots (228 slots, 36434 columns, 12293 rows"),
        "{report}"
    );
    assert!(
        report.contains("LP status optimal on 2 of 2 seeds"),
        "{report}"
    );
    // The σ sweep: at σ = 1.05 the bound is 550 on average: 1 − 550/1050 = 47.6 % saving.
    assert!(
        report.contains("| 28 | always-on | 1.05 | 40.0 % | +10.0 % | 0 | 47.6 % | 7.6 | 2 |"),
        "{report}"
    );
    let figure = svg(&dir, "eaco_tradeoff_sleep-when-empty");
    for text in [
        "EaCO setup, 28 8×V100 servers",
        "EaCO paper (64 nodes)",
        "energy saving vs FIFO (%)",
    ] {
        assert!(figure.contains(text), "trade-off figure lacks `{text}`");
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_replay_row_is_an_error_naming_file_and_line() {
    let dir = temp_dir("bad");
    write_inputs(&dir);
    let text = runs_csv().replacen(",1.000,always-on,10,", ",1.000,always-on,ten,", 1);
    fs::write(dir.join("replay_runs.csv"), text).unwrap();
    let error = format!("{:#}", draw_all(&dir).unwrap_err());
    assert!(
        error.contains("replay_runs.csv: line 2") && error.contains("tasks"),
        "{error}"
    );
    fs::remove_dir_all(&dir).unwrap();
}
