//! Figures from synthetic results CSVs: the expected files exist, PNGs are real PNGs of the
//! SVGs' size, SVGs carry their axis labels and legends, output is deterministic, and bad
//! CSVs are errors naming the file and line.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use gapbench_report::draw_all;

/// A fresh, empty folder under the system temp folder.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gapbench-figures-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

const POLICIES: [&str; 5] = ["random", "packing", "fgd", "pwr", "pwr:200,fgd:800"];

/// Curves that saturate at a policy-specific allocation and draw policy-specific power.
fn mean_grid_csv() -> String {
    let mut out = String::from(
        "trace,family,policy,seeds,arrived_pct,alloc_pct,frag_gpu_milli,frag_ratio_pct,power_cpu_w,power_gpu_w,power_total_w,used_nodes,failed_tasks\n",
    );
    let traces = [
        ("default", "default"),
        ("gpushare20", "gpushare"),
        ("gpushare100", "gpushare"),
        ("gpushare40", "gpushare"),
    ];
    for (t, (trace, family)) in traces.iter().enumerate() {
        for (p, policy) in POLICIES.iter().enumerate() {
            let saturation_pct = 84.0 + 3.0 * p as f64 + t as f64;
            let watts_per_pct = 1000.0 - 40.0 * p as f64;
            for arrived in 0..=130 {
                let a = f64::from(arrived);
                let alloc = a.min(saturation_pct);
                let frag_ratio = (a / 130.0) * (20.0 + 5.0 * p as f64);
                let gpu_w = 10.0 * watts_per_pct * alloc / 10.0;
                let cpu_w = 200_000.0 + 300.0 * alloc;
                let field = if policy.contains(',') {
                    format!("\"{policy}\"")
                } else {
                    policy.to_string()
                };
                writeln!(
                    out,
                    "{trace},{family},{field},3,{arrived},{alloc:.4},{:.2},{frag_ratio:.4},{cpu_w:.2},{gpu_w:.2},{:.2},{:.2},{}",
                    frag_ratio * 50.0,
                    cpu_w + gpu_w,
                    alloc * 10.0,
                    if a > saturation_pct { arrived - 84 } else { 0 },
                )
                .unwrap();
            }
        }
    }
    out
}

const GAPS_CSV: &str = "\
trace,checkpoint_pct,objective,policy,seed,nodes,tasks,heuristic_value,incumbent,bound,status,gap_low_pct,gap_high_pct,solve_s
default,90,power,fgd,42,20,80,1500,1400,1400,optimal,7.1429,7.1429,1.5
default,90,power,fgd,43,20,80,1510,1400,1390,time_limit,7.8571,8.6331,60.0
default,90,power,pwr,42,20,80,1450,1400,1400,optimal,3.5714,3.5714,1.2
default,90,power,\"pwr:200,fgd:800\",42,20,80,1420,1400,1400,optimal,0,0,1.0
default,110,power,fgd,42,20,95,1600,1450,1300,relaxation_bound,10.3448,23.0769,0.2
default,110,power,pwr,42,20,95,1550,,,infeasible,,,0.3
default,110,power,random,42,20,95,1900,1500,,time_limit,26.6667,,60.0
default,90,alloc,fgd,42,20,80,88.5,90.0,90.0,optimal,1.5,1.5,2.0
default,90,alloc,pwr,42,20,80,87.0,90.0,91.0,time_limit,3.0,4.0,60.0
default,90,power,fgd,42,1213,4000,80000,69000,68000,lp_bound,15.9420,17.6471,10.0
default,90,power,pwr,42,1213,4000,76000,69000,68500,time_limit,10.1449,10.9489,10.0
";

const PARETO_CSV: &str = "\
trace,checkpoint_pct,seed,nodes,kind,label,power_w,frag_gpu_milli,status
default,90,42,20,front,0,1400000,52000,optimal
default,90,42,20,front,1,1450000,31000,optimal
default,90,42,20,front,2,1520000,18000,time_limit
default,90,42,20,front,3,1600000,12000,optimal
default,90,42,20,front,4,,,infeasible
default,90,42,20,policy,fgd,1580000,21000,
default,90,42,20,policy,pwr,1470000,43000,
default,90,42,20,policy,pwr:200,fgd:800,1500000,30000,
";

/// The pareto CSV with its policy mix quoted (it contains a comma).
fn pareto_csv() -> String {
    PARETO_CSV.replace("policy,pwr:200,fgd:800,", "policy,\"pwr:200,fgd:800\",")
}

fn write_all_inputs(dir: &Path) {
    fs::write(dir.join("mean_grid.csv"), mean_grid_csv()).unwrap();
    fs::write(dir.join("gaps.csv"), GAPS_CSV).unwrap();
    fs::write(dir.join("pareto.csv"), pareto_csv()).unwrap();
}

/// Width and height from a PNG's IHDR chunk, after checking the signature.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.len() > 33, "PNG too short");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR", "first chunk is not IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

/// Width and height attributes of an SVG's root element.
fn svg_size(svg: &str) -> (u32, u32) {
    let start = svg.find("<svg").expect("no <svg> element");
    let tag = &svg[start..start + svg[start..].find('>').unwrap()];
    let attr = |name: &str| -> u32 {
        let key = format!(" {name}=\"");
        let at = tag
            .find(&key)
            .unwrap_or_else(|| panic!("no {name} in {tag}"))
            + key.len();
        tag[at..at + tag[at..].find('"').unwrap()].parse().unwrap()
    };
    (attr("width"), attr("height"))
}

/// The contents of the SVG's text elements, trimmed and unescaped.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|part| {
            let body = &part[part.find('>')? + 1..part.find("</text>")?];
            Some(
                body.trim()
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&apos;", "'")
                    .replace("&amp;", "&"),
            )
        })
        .collect()
}

/// Whether the SVG draws `text` as a whole text element.
fn has_text(svg: &str, text: &str) -> bool {
    texts(svg).iter().any(|t| t == text)
}

fn read_svg(dir: &Path, stem: &str) -> String {
    fs::read_to_string(dir.join("figures").join(format!("{stem}.svg"))).unwrap()
}

const FIGURES: [&str; 14] = [
    "alloc_vs_arrived_default",
    "alloc_vs_arrived_default_zoom",
    "power_vs_arrived_default",
    "power_saving_vs_fgd_default",
    "frag_ratio_vs_arrived_default",
    "alloc_vs_arrived_gpushare",
    "alloc_vs_arrived_gpushare_zoom",
    "power_vs_arrived_gpushare",
    "power_saving_vs_fgd_gpushare",
    "frag_ratio_vs_arrived_gpushare",
    "gaps_default_1213n_power",
    "gaps_default_20n_power",
    "gaps_default_20n_alloc",
    "pareto_default_20n_90",
];

#[test]
fn draws_every_figure_as_svg_pdf_and_png() {
    let dir = temp_dir("all");
    write_all_inputs(&dir);
    let written = draw_all(&dir).unwrap();

    let mut expected: Vec<PathBuf> = FIGURES
        .iter()
        .flat_map(|stem| {
            ["svg", "pdf", "png"].map(|ext| dir.join("figures").join(format!("{stem}.{ext}")))
        })
        .collect();
    expected.sort();
    let mut got = written.clone();
    got.sort();
    assert_eq!(got, expected);

    for stem in FIGURES {
        let svg = read_svg(&dir, stem);
        let png = fs::read(dir.join("figures").join(format!("{stem}.png"))).unwrap();
        let (w, h) = png_size(&png);
        assert_eq!((w, h), svg_size(&svg), "{stem}: PNG and SVG sizes differ");
        assert!(
            (900..=2400).contains(&w) && (400..=1600).contains(&h),
            "{stem}: odd size {w}x{h}"
        );
        // A PNG of text and lines compresses well but is never tiny.
        assert!(
            png.len() > 10_000,
            "{stem}: PNG suspiciously small ({} bytes)",
            png.len()
        );
    }
    // `GAPBENCH_KEEP_FIGURES=1` keeps the folder for looking at the figures.
    if std::env::var_os("GAPBENCH_KEEP_FIGURES").is_some() {
        println!("figures kept in {}", dir.join("figures").display());
    } else {
        fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn line_figures_label_axes_panels_and_policies() {
    let dir = temp_dir("lines");
    write_all_inputs(&dir);
    draw_all(&dir).unwrap();

    let alloc = read_svg(&dir, "alloc_vs_arrived_gpushare");
    for text in [
        "arrived workload (% of cluster GPU capacity)",
        "allocated GPU (% of capacity)",
        "trace gpushare20",
        "trace gpushare40",
        "trace gpushare100",
        "policy",
        "random",
        "packing",
        "fgd",
        "pwr",
        "pwr:200,fgd:800",
        "mean over 3 seeds per policy",
    ] {
        assert!(has_text(&alloc, text), "alloc figure lacks {text:?}");
    }
    // Panels in natural trace order: 20, 40, 100.
    let titles: Vec<String> = texts(&alloc)
        .into_iter()
        .filter(|t| t.starts_with("trace "))
        .collect();
    assert_eq!(
        titles,
        ["trace gpushare20", "trace gpushare40", "trace gpushare100"]
    );
    // The default family has only its own trace.
    assert!(!read_svg(&dir, "alloc_vs_arrived_default").contains("gpushare"));

    let zoom = read_svg(&dir, "alloc_vs_arrived_default_zoom");
    assert!(has_text(&zoom, "80") && has_text(&zoom, "130"));
    assert!(!has_text(&zoom, "20"), "zoomed x axis must start at 80");

    assert!(has_text(
        &read_svg(&dir, "power_vs_arrived_default"),
        "total power (kW)"
    ));
    assert!(has_text(
        &read_svg(&dir, "frag_ratio_vs_arrived_default"),
        "fragmented GPU (% of free GPU)"
    ));

    let saving = read_svg(&dir, "power_saving_vs_fgd_default");
    assert!(has_text(&saving, "power saving vs FGD (%)"));
    assert!(has_text(&saving, "pwr") && has_text(&saving, "same power as FGD"));
    assert!(
        !has_text(&saving, "fgd"),
        "fgd is the reference, not a curve"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn each_policy_keeps_its_colour_in_every_figure() {
    let dir = temp_dir("colours");
    write_all_inputs(&dir);
    draw_all(&dir).unwrap();
    // The fixed colours of fgd and pwr, and the first mix colour.
    let fgd = "#1F77B4";
    let pwr = "#D62728";
    let mix = "#FF7F0E";
    for stem in [
        "alloc_vs_arrived_default",
        "power_vs_arrived_gpushare",
        "gaps_default_20n_power",
        "pareto_default_20n_90",
    ] {
        let svg = read_svg(&dir, stem).to_uppercase();
        for colour in [fgd, pwr, mix] {
            assert!(svg.contains(colour), "{stem} lacks colour {colour}");
        }
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn gap_figures_explain_status_whiskers_and_skipped_rows() {
    let dir = temp_dir("gaps");
    fs::write(dir.join("gaps.csv"), GAPS_CSV).unwrap();
    let written = draw_all(&dir).unwrap();
    assert_eq!(written.len(), 9, "only the three gap figures: {written:?}");

    let power = read_svg(&dir, "gaps_default_20n_power");
    for text in [
        "gap (%)",
        "checkpoint: arrived workload (% of cluster GPU capacity)",
        "90 %",
        "110 %",
        "random",
        "fgd",
        "pwr",
        "pwr:200,fgd:800",
        "optimal: solved to optimality (solid)",
        "time_limit: the clock stopped the solve (hatched /)",
        "relaxation_bound: a relaxation's bound vs the heuristic's placement (light)",
        "whisker: largest possible gap",
        "no finite bound: the solve proved no bound",
        "no bound",
        "no gap (infeasible / solver error)",
    ] {
        assert!(has_text(&power, text), "power gap figure lacks {text:?}");
    }
    assert!(power.contains("rows not plotted: 1 infeasible"));
    // A 20-node solve of a trace also solved on 1,213 nodes is a sample, and says so.
    assert!(
        power.contains("trace default, 20-node sampled sub-cluster, seeds 42, 43"),
        "{power}"
    );
    assert!(!has_text(
        &power,
        "lp_bound: LP bound proven, integer gap not closed (hatched —)"
    ));

    // The whole cluster has its own figure: never averaged with the sample.
    let whole = read_svg(&dir, "gaps_default_1213n_power");
    assert!(
        whole.contains("trace default, 1,213 nodes, seed 42"),
        "{whole}"
    );
    assert!(has_text(
        &whole,
        "lp_bound: LP bound proven, integer gap not closed (hatched —)"
    ));
    assert!(!has_text(&whole, "random") && !has_text(&whole, "110 %"));

    let alloc = read_svg(&dir, "gaps_default_20n_alloc");
    assert!(has_text(&alloc, "gap (percentage points of GPU capacity)"));
    assert!(
        !has_text(
            &alloc,
            "relaxation_bound: a relaxation's bound vs the heuristic's placement (light)"
        ),
        "no relaxation rows here"
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// A fragmentation bound of 0 makes the gap unbounded: drawn as `∞` with its reason, and a
/// whisker far beyond every proven gap is cut at the axis top with its value written.
#[test]
fn unbounded_and_far_upper_ends_are_labelled_not_drawn_off_the_chart() {
    let dir = temp_dir("frag-ends");
    let gaps = "\
trace,checkpoint_pct,objective,policy,seed,nodes,tasks,heuristic_value,incumbent,bound,status,gap_low_pct,gap_high_pct,solve_s
default,50,frag,fgd,42,1213,3000,60000,56000,0,time_limit,7.1429,inf,60.0
default,50,frag,pwr,42,1213,3000,80000,50000,570,time_limit,60.0000,13926.48,60.0
default,50,frag,bestfit,42,1213,3000,52000,50000,17000,time_limit,4.0000,205.88,60.0
";
    fs::write(dir.join("gaps.csv"), gaps).unwrap();
    draw_all(&dir).unwrap();
    let frag = read_svg(&dir, "gaps_default_1213n_frag");
    for text in [
        "∞",
        "bound 0",
        "13,926 %",
        "no finite bound: proven bound 0 (gap relative to 0)",
        "whisker beyond the axis: its end written above",
        "whisker: largest possible gap",
    ] {
        assert!(has_text(&frag, text), "frag gap figure lacks {text:?}");
    }
    // The axis ends below 4 × the largest proven gap (60 %), so 206 % shows but not 13,926 %.
    assert!(has_text(&frag, "200") && !has_text(&frag, "13000"));
    fs::remove_dir_all(&dir).unwrap();
}

/// A policy, a checkpoint and per seed its status, proven gap and upper end.
type SeedCase = (&'static str, u32, [(&'static str, f64, &'static str); 3]);

/// Three seeds per policy and checkpoint: the bars are their means, a thin line beside each
/// gives the range over the seeds, and a bar whose seeds differ in status says so.
#[test]
fn gap_figures_over_seeds_show_their_range() {
    let dir = temp_dir("seed-spread");
    let mut gaps = String::from("trace,checkpoint_pct,objective,policy,seed,nodes,tasks,heuristic_value,incumbent,bound,status,gap_low_pct,gap_high_pct,solve_s\n");
    // (policy, checkpoint, per seed: status, low, high)
    let cases: [SeedCase; 6] = [
        (
            "fgd",
            50,
            [
                ("optimal", 2.0, "2.0"),
                ("optimal", 3.0, "3.0"),
                ("optimal", 2.5, "2.5"),
            ],
        ),
        (
            "pwr",
            50,
            [
                ("optimal", 0.5, "0.5"),
                ("gap_limit", 1.0, "1.6"),
                ("optimal", 0.0, "0.0"),
            ],
        ),
        (
            "packing",
            50,
            [
                ("time_limit", 6.0, "9.0"),
                ("time_limit", 4.0, "11.0"),
                ("time_limit", 5.0, "7.0"),
            ],
        ),
        (
            "fgd",
            90,
            [
                ("optimal", 4.0, "4.0"),
                ("time_limit", 5.0, "8.0"),
                ("gap_limit", 6.0, "6.5"),
            ],
        ),
        (
            "pwr",
            90,
            [
                ("time_limit", 1.0, "3.0"),
                ("time_limit", 2.0, "inf"),
                ("time_limit", 1.5, "4.0"),
            ],
        ),
        (
            "packing",
            90,
            [
                ("time_limit", 8.0, "12.0"),
                ("time_limit", 10.0, "80.0"),
                ("time_limit", 9.0, "14.0"),
            ],
        ),
    ];
    for (policy, checkpoint, seeds) in cases {
        for (i, (status, low, high)) in seeds.iter().enumerate() {
            let bound = match (*status, *high) {
                (_, "inf") => "0",
                ("optimal", _) => "950",
                _ => "900",
            };
            writeln!(gaps, "default,{checkpoint},power,{policy},{},20,80,1000,950,{bound},{status},{low},{high},1.0", 42 + i).unwrap();
        }
    }
    fs::write(dir.join("gaps.csv"), gaps).unwrap();
    draw_all(&dir).unwrap();
    let power = read_svg(&dir, "gaps_default_20n_power");
    assert!(
        power.contains("trace default, 20 nodes, seeds 42–44"),
        "{power}"
    );
    for text in [
        "range over the seeds: least proven to greatest possible gap",
        "whisker: largest possible gap",
        "no finite bound: proven bound 0 (gap relative to 0)",
        "bar = mean proven gap; status (least proven seed)",
    ] {
        assert!(has_text(&power, text), "seed spread figure lacks {text:?}");
    }
    assert!(power.contains("bars: gap proven at least (mean over 3 seeds)"));
    assert!(power.contains("2 bars mix statuses, hatched as the least proven seed"));
    fs::remove_dir_all(&dir).unwrap();
}

/// Every label the solver writes parses: an `unsupported: …` row (a fragmentation bound
/// asked for beyond the exact model's size) is read and counted as not plotted.
#[test]
fn unsupported_rows_are_read_and_counted() {
    let dir = temp_dir("unsupported");
    let gaps = format!(
        "{GAPS_CSV}default,90,frag,fgd,42,20,800,5200,,,\"unsupported: no fragmentation bound beyond 128 nodes, use --sample-nodes\",,,0.0\n\
         default,90,frag,pwr,42,20,80,6100,5000,5000,optimal,22,22,1.0\n"
    );
    fs::write(dir.join("gaps.csv"), gaps).unwrap();
    draw_all(&dir).unwrap();
    let frag = read_svg(&dir, "gaps_default_20n_frag");
    assert!(frag.contains("rows not plotted: 1 unsupported"), "{frag}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn pareto_figure_labels_front_and_policies() {
    let dir = temp_dir("pareto");
    fs::write(dir.join("pareto.csv"), pareto_csv()).unwrap();
    let written = draw_all(&dir).unwrap();
    assert_eq!(written.len(), 3);
    let svg = read_svg(&dir, "pareto_default_20n_90");
    for text in [
        "power (kW)",
        "fragmented GPU (GPUs)",
        "ε-constraint front (4 points)",
        "front point: optimal",
        "front point: time_limit (not proven least)",
        "online policy",
        "fgd",
        "pwr",
        "pwr:200,fgd:800",
    ] {
        assert!(has_text(&svg, text), "pareto figure lacks {text:?}");
    }
    // Each policy is named twice: legend and point label.
    assert_eq!(texts(&svg).iter().filter(|t| *t == "pwr").count(), 2);
    assert!(svg.contains("1 infeasible/failed front point not plotted"));
    assert!(
        svg.contains("trace default, 20 nodes, seed 42, at 90 % arrived"),
        "{svg}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// A `pareto.csv` written before the `nodes` column still draws; its title says the size is
/// not recorded rather than guessing one.
#[test]
fn pareto_files_without_nodes_still_draw() {
    let dir = temp_dir("pareto-old");
    let old: String = pareto_csv()
        .lines()
        .map(|line| {
            let mut fields: Vec<&str> = line.splitn(5, ',').collect();
            fields.remove(3);
            format!("{}\n", fields.join(","))
        })
        .collect();
    fs::write(dir.join("pareto.csv"), old).unwrap();
    draw_all(&dir).unwrap();
    let svg = read_svg(&dir, "pareto_default_90");
    assert!(svg.contains("cluster size not recorded"), "{svg}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn legend_lists_canonical_policies_first_then_mixes_in_natural_order() {
    let dir = temp_dir("many");
    let policies = [
        "pwr:50,fgd:950",
        "fgd",
        "bestfit",
        "pwr:200,fgd:800",
        "random",
        "clustering",
        "pwr",
        "dotprod",
        "packing",
        "pwr:1000,fgd:0",
    ];
    let mut csv = String::from(
        "trace,family,policy,seeds,arrived_pct,alloc_pct,frag_ratio_pct,power_total_w\n",
    );
    for trace in [
        "gpuspec10",
        "gpuspec20",
        "gpuspec25",
        "gpuspec33",
        "gpuspec5",
    ] {
        for (p, policy) in policies.iter().enumerate() {
            for arrived in 0..=130 {
                let alloc = f64::from(arrived).min(80.0 + p as f64);
                let watts = 150_000.0 + 2_000.0 * alloc - 50.0 * (p as f64) * alloc;
                writeln!(
                    csv,
                    "{trace},gpuspec,\"{policy}\",10,{arrived},{alloc},{},{watts}",
                    alloc / 5.0
                )
                .unwrap();
            }
        }
    }
    fs::write(dir.join("mean_grid.csv"), csv).unwrap();
    draw_all(&dir).unwrap();

    let svg = read_svg(&dir, "power_vs_arrived_gpuspec");
    let order = [
        "random",
        "dotprod",
        "clustering",
        "packing",
        "bestfit",
        "fgd",
        "pwr",
        "pwr:50,fgd:950",
        "pwr:200,fgd:800",
        "pwr:1000,fgd:0",
    ];
    let legend: Vec<String> = texts(&svg)
        .into_iter()
        .filter(|t| order.contains(&t.as_str()))
        .collect();
    assert_eq!(legend, order);
    let titles: Vec<String> = texts(&svg)
        .into_iter()
        .filter(|t| t.starts_with("trace "))
        .collect();
    assert_eq!(
        titles,
        [
            "trace gpuspec5",
            "trace gpuspec10",
            "trace gpuspec20",
            "trace gpuspec25",
            "trace gpuspec33"
        ]
    );
    assert!(has_text(&svg, "mean over 10 seeds per policy"));
    if std::env::var_os("GAPBENCH_KEEP_FIGURES").is_some() {
        println!("figures kept in {}", dir.join("figures").display());
    } else {
        fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn same_csvs_give_identical_files() {
    let (a, b) = (temp_dir("det-a"), temp_dir("det-b"));
    write_all_inputs(&a);
    write_all_inputs(&b);
    let (wa, wb) = (draw_all(&a).unwrap(), draw_all(&b).unwrap());
    assert_eq!(wa.len(), wb.len());
    for (pa, pb) in wa.iter().zip(&wb) {
        assert_eq!(pa.file_name(), pb.file_name());
        assert!(
            fs::read(pa).unwrap() == fs::read(pb).unwrap(),
            "{} differs between runs",
            pa.display()
        );
    }
    fs::remove_dir_all(&a).unwrap();
    fs::remove_dir_all(&b).unwrap();
}

#[test]
fn absent_or_empty_csvs_are_skipped() {
    let dir = temp_dir("empty");
    assert!(draw_all(&dir).unwrap().is_empty());
    assert!(!dir.join("figures").exists());

    fs::write(
        dir.join("mean_grid.csv"),
        "trace,family,policy,seeds,arrived_pct,alloc_pct,frag_gpu_milli,frag_ratio_pct,power_cpu_w,power_gpu_w,power_total_w,used_nodes,failed_tasks\n",
    )
    .unwrap();
    fs::write(dir.join("gaps.csv"), "").unwrap();
    fs::write(dir.join("pareto.csv"), pareto_csv()).unwrap();
    let written = draw_all(&dir).unwrap();
    let names: Vec<String> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "pareto_default_20n_90.svg",
            "pareto_default_20n_90.pdf",
            "pareto_default_20n_90.png"
        ]
    );

    // Without fgd there is no saving figure.
    let grid: String = mean_grid_csv()
        .lines()
        .filter(|l| !l.contains(",fgd,"))
        .map(|l| format!("{l}\n"))
        .collect();
    fs::write(dir.join("mean_grid.csv"), grid).unwrap();
    fs::remove_file(dir.join("pareto.csv")).unwrap();
    let written = draw_all(&dir).unwrap();
    assert_eq!(written.len(), 3 * 8);
    assert!(written
        .iter()
        .all(|p| !p.to_string_lossy().contains("power_saving")));
    fs::remove_dir_all(&dir).unwrap();
}

/// The error message of drawing from a folder holding `file` with `contents`.
fn error_for(name: &str, file: &str, contents: &str) -> String {
    let dir = temp_dir(name);
    fs::write(dir.join(file), contents).unwrap();
    let message = format!(
        "{:#}",
        draw_all(&dir).expect_err("bad CSV must be an error")
    );
    fs::remove_dir_all(&dir).unwrap();
    message
}

#[test]
fn bad_csvs_are_errors_naming_file_and_line() {
    let mut grid = mean_grid_csv();
    let second = grid.lines().nth(2).unwrap().to_string();
    grid = grid.replacen(&second, &second.replacen(",3,", ",3,abc_", 1), 1);
    let message = error_for("bad-number", "mean_grid.csv", &grid);
    assert!(
        message.contains("mean_grid.csv") && message.contains("line 3"),
        "{message}"
    );
    assert!(message.contains("arrived_pct"), "{message}");

    let short_row = GAPS_CSV.replacen(
        "default,90,power,pwr,42,20,80,1450,1400,1400,optimal,3.5714,3.5714,1.2",
        "default,90,power,pwr,42",
        1,
    );
    let message = error_for("short-row", "gaps.csv", &short_row);
    assert!(
        message.contains("gaps.csv") && message.contains("line 4"),
        "{message}"
    );

    let bad_status = GAPS_CSV.replacen(",optimal,1.5,1.5,", ",solved,1.5,1.5,", 1);
    let message = error_for("bad-status", "gaps.csv", &bad_status);
    assert!(
        message.contains("gaps.csv") && message.contains("line 9") && message.contains("solved"),
        "{message}"
    );

    let inverted = GAPS_CSV.replacen(",3.0,4.0,", ",5.0,4.0,", 1);
    let message = error_for("inverted", "gaps.csv", &inverted);
    assert!(
        message.contains("gaps.csv") && message.contains("line 10"),
        "{message}"
    );

    let missing_column = pareto_csv().replacen("power_w,", "watts,", 1);
    let message = error_for("missing-column", "pareto.csv", &missing_column);
    assert!(
        message.contains("pareto.csv") && message.contains("power_w"),
        "{message}"
    );

    let bad_kind = pareto_csv().replacen(",front,3,", ",frontier,3,", 1);
    let message = error_for("bad-kind", "pareto.csv", &bad_kind);
    assert!(
        message.contains("pareto.csv") && message.contains("line 5"),
        "{message}"
    );
}
