//! The paper style on the synthetic folder with per-seed curves (`grid.csv`, three seeds
//! spread ±d around each mean): print sizes in inches, 8 pt text in the embedded font, no
//! title, captions beside the figures, papers' names, bands, paired savings.

mod common;

use std::fmt::Write as _;
use std::fs;

use gapbench_report::{redraw, redraw_with, FigureOptions, PolicyNames, Style};

/// `grid.csv` for seeds 42–44: each mean row of `mean_grid.csv` as mean − 1, mean, mean + 1
/// (allocation and fragmentation in points, power in kW), so the means are unchanged.
fn grid_csv(mean_grid: &str) -> String {
    let mut reader = csv::Reader::from_reader(mean_grid.as_bytes());
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let mut out = String::from("trace,family,policy,seed,arrived_pct,alloc_pct,frag_gpu_milli,frag_ratio_pct,power_cpu_w,power_gpu_w,power_total_w,used_nodes,failed_tasks\n");
    for record in reader.records() {
        let r = record.unwrap();
        let value = |name: &str| r[column(name)].parse::<f64>().unwrap();
        for (seed, d) in [(42, -1.0), (43, 0.0), (44, 1.0)] {
            let clamp = |v: f64| v.clamp(0.0, 100.0);
            writeln!(
                out,
                "{},{},\"{}\",{seed},{},{:.4},0,{:.4},0,0,{:.2},0,0",
                &r[column("trace")],
                &r[column("family")],
                &r[column("policy")],
                value("arrived_pct"),
                clamp(value("alloc_pct") + d),
                clamp(value("frag_ratio_pct") + d),
                value("power_total_w") + 1000.0 * d
            )
            .unwrap();
        }
    }
    out
}

#[test]
fn paper_figures_print_at_column_width_with_bands_captions_and_paper_names() {
    let dir = common::synthetic_copy("paper");
    let mean_grid = fs::read_to_string(dir.join("mean_grid.csv")).unwrap();
    fs::write(dir.join("grid.csv"), grid_csv(&mean_grid)).unwrap();
    let mut names = PolicyNames::default();
    names.insert("random", "Uniform");
    let options = FigureOptions {
        style: Style::Paper,
        names,
    };
    redraw_with(&dir, Some(&options)).unwrap();
    let figures = dir.join("figures");
    let svg = fs::read_to_string(figures.join("alloc_vs_arrived_default.svg")).unwrap();
    // One trace: single column, 3.33 in; 8 pt text at 300 px per inch is 33.33 px.
    assert!(
        svg.starts_with("<svg width=\"3.330in\" height=\""),
        "{}",
        &svg[..120]
    );
    assert!(svg.contains("font-family=\"DejaVu Sans\" font-size=\"33.33"));
    assert!(
        !svg.contains("GPU allocation vs arrived workload"),
        "no title inside"
    );
    for name in ["FGD", "PWR+FGD 200/800", "GpuPacking", "Uniform"] {
        assert!(
            svg.contains(&format!(">\n{name}\n</text>")),
            "legend names {name}"
        );
    }
    assert!(!svg.contains("pwr:200,fgd:800"));
    // The bands: one translucent polygon per policy.
    assert_eq!(
        svg.matches("<polygon opacity=\"0.22\"").count(),
        5,
        "one band per policy"
    );
    let caption = fs::read_to_string(figures.join("alloc_vs_arrived_default.txt")).unwrap();
    assert!(
        caption.starts_with("GPU allocation vs arrived workload — default family, trace default.")
    );
    assert!(caption.contains("mean over 3 seeds; shaded band: minimum to maximum over the seeds"));
    let saving = fs::read_to_string(figures.join("power_saving_vs_fgd_default.txt")).unwrap();
    assert!(saving.contains("paired differences"), "{saving}");
    // The gpushare family has two traces: a double-column figure, one panel each.
    let family = fs::read_to_string(figures.join("alloc_vs_arrived_gpushare.svg")).unwrap();
    assert!(family.starts_with("<svg width=\"7.000in\""));
    assert!(family.contains(">\ngpushare20\n</text>") && family.contains(">\ngpushare40\n</text>"));
    assert!(figures.join("alloc_vs_arrived_gpushare.pdf").is_file());
    // Families without a paper layout keep the house style (gap figures, with titles).
    assert!(figures.join("gaps_default_20n_power.svg").is_file());
    // Redrawn in the default style, the captions go and the figures are the house style's.
    redraw(&dir).unwrap();
    assert!(!figures.join("alloc_vs_arrived_default.txt").exists());
    let default = fs::read_to_string(figures.join("alloc_vs_arrived_default.svg")).unwrap();
    assert!(default.contains("GPU allocation vs arrived workload"));
    fs::remove_dir_all(&dir).unwrap();
}
