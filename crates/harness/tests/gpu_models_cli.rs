//! `--gpu-models` as a user runs it, on the shipped example of Alibaba's 2026 spot-GPU
//! cluster (`workloads/spot-gpu-2026/`): `run` and `gap` work on its node list with its
//! GPU-model file, the file is fingerprinted, and without the file every unknown model is
//! named in one error.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gapbench_ilp::instance::verify_instance;
use gapbench_results::instance::InstanceFile;

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("gapbench-gpu-models-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../workloads/spot-gpu-2026")
        .join(name)
}

fn gapbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gapbench"))
        .args(args)
        .output()
        .expect("gapbench runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The first data row of a CSV as (header, value) pairs.
fn first_row(path: &Path) -> Vec<(String, String)> {
    let content = std::fs::read_to_string(path).unwrap();
    let mut lines = content.lines();
    let header = lines.next().unwrap().split(',').map(String::from);
    let row = lines.next().unwrap().split(',').map(String::from);
    header.zip(row).collect()
}

fn field(row: &[(String, String)], name: &str) -> f64 {
    row.iter()
        .find(|(h, _)| h == name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .1
        .parse()
        .unwrap()
}

#[test]
fn run_and_gap_work_on_the_2026_node_list_with_its_gpu_model_file() {
    let (nodes, models) = (example("nodes.csv"), example("gpu-models.csv"));
    let (nodes, models) = (nodes.to_str().unwrap(), models.to_str().unwrap());
    let out = temp_dir("run");
    let run_out = out.join("run");
    let output = gapbench(&[
        "run",
        "--nodes",
        nodes,
        "--gpu-models",
        models,
        "--out",
        run_out.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let manifest = std::fs::read_to_string(run_out.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"role\": \"gpu-models\""), "{manifest}");
    // Event 0 holds one task: GPU power is every device idle by the file's figures
    // (9,561 W over the 207 GPUs) plus at most one node's devices at full power.
    let row = first_row(&run_out.join("curve.csv"));
    let gpu_watts = field(&row, "power_gpu_w");
    assert!(
        (9561.0..=9561.0 + 8.0 * (700.0 - 88.0)).contains(&gpu_watts),
        "{gpu_watts}"
    );
    let gap_out = out.join("gap");
    let output = gapbench(&[
        "gap",
        "--nodes",
        nodes,
        "--gpu-models",
        models,
        "--policy",
        "fgd",
        "--checkpoints",
        "50,100",
        "--time-limit",
        "2",
        "--export",
        out.join("instances").to_str().unwrap(),
        "--out",
        gap_out.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let gaps = std::fs::read_to_string(gap_out.join("gaps.csv")).unwrap();
    for checkpoint in ["50.0,", "100.0,"] {
        assert!(
            gaps.lines().any(|l| l.starts_with(checkpoint)),
            "{checkpoint}: {gaps}"
        );
    }
    // The exported instances carry the file's models by name and watts, and rebuild and
    // re-evaluate from their own description.
    let mut instances = 0;
    for entry in std::fs::read_dir(out.join("instances")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let file = InstanceFile::load(&path).unwrap();
            let h800 = file
                .node_types
                .iter()
                .find(|t| t.gpu_model.as_deref() == Some("H800"))
                .expect("the H800 node type");
            assert_eq!((h800.gpu_idle_watts, h800.gpu_full_watts), (88, 700));
            verify_instance(&file).unwrap();
            instances += 1;
        }
    }
    assert_eq!(instances, 2, "one instance per checkpoint");
}

#[test]
fn without_the_file_every_unknown_model_is_named_in_one_error() {
    let nodes = example("nodes.csv");
    let out = temp_dir("refused");
    let output = gapbench(&[
        "run",
        "--nodes",
        nodes.to_str().unwrap(),
        "--out",
        out.join("run").to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    let error = text(&output.stderr);
    assert_eq!(
        error.matches("GPU models no node may have").count(),
        1,
        "{error}"
    );
    for (model, line) in [
        ("GPU-series-1", 2),
        ("A100-SXM4-80GB", 15),
        ("A100-PCIE-40GB", 23),
        ("GPU-series-2", 44),
        ("A30", 45),
        ("H800", 46),
        ("A800-SXM4-80GB", 47),
    ] {
        assert!(
            error.contains(&format!("`{model}` (line {line}: unknown)")),
            "{model}: {error}"
        );
    }
    assert!(!error.contains("`A10`"), "{error}");
}
