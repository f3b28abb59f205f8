//! GPU models from a file: the format read back as written, every bad line refused with its
//! file, line and column, every unusable model of a node list named in one error, and node
//! lists as Alibaba's 2026 spot-GPU trace writes them.

use std::path::Path;
use std::sync::Arc;

use gapbench_model::gpu_models::{read_gpu_models_csv, write_gpu_models_csv};
use gapbench_model::workload::{read_nodes_csv_with, MEMORY_MIB_PER_VCPU_DEFAULT};
use gapbench_model::{Cluster, CpuPowerProfile, GpuModel, GpuModelTable, InputError};

fn read_models(text: &str) -> Result<GpuModelTable, InputError> {
    read_gpu_models_csv(Path::new("models.csv"), text.as_bytes())
}

fn read_nodes(text: &str, models: &GpuModelTable) -> Result<Cluster, InputError> {
    read_nodes_csv_with(
        Path::new("nodes.csv"),
        text.as_bytes(),
        CpuPowerProfile::Reference,
        Arc::new(models.clone()),
    )
}

fn example(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../workloads/spot-gpu-2026")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_gpu_model_file_reads_back_as_written() {
    let text = "# a comment\nmodel,idle_watts,full_watts,memory_mib\nRT-H800,88,700,81920\n\
                RT-anon,30,150,\nA100,60,420,\nG1,40,300,16384\n";
    let table = read_models(text).unwrap();
    let h800 = GpuModel::parse("RT-H800").unwrap();
    let spec = table.spec(h800).unwrap();
    assert_eq!((spec.power.idle_watts, spec.power.full_watts), (88, 700));
    assert_eq!(spec.memory_mib, Some(81920));
    assert_eq!(
        table
            .spec(GpuModel::parse("RT-anon").unwrap())
            .unwrap()
            .memory_mib,
        None
    );
    // A row overrides a built-in model, and may give G1 a profile.
    assert_eq!(table.power(GpuModel::A100).unwrap().full_watts, 420);
    assert_eq!(table.power(GpuModel::G1).unwrap().idle_watts, 40);
    // Built-in models the file does not name keep their figures.
    assert_eq!(
        table.power(GpuModel::T4),
        GpuModelTable::built_in().power(GpuModel::T4)
    );
    let written = write_gpu_models_csv(&table);
    assert_eq!(read_models(&written).unwrap(), table);
    // The built-in table alone reads back as itself.
    let built_in = GpuModelTable::built_in();
    assert_eq!(
        read_models(&write_gpu_models_csv(&built_in)).unwrap(),
        built_in
    );
}

#[test]
fn every_bad_line_of_a_gpu_model_file_is_refused_with_file_line_and_column() {
    let header = "model,idle_watts,full_watts,memory_mib\n";
    let cases: [(&str, &str); 9] = [
        (
            "# c\nBL-a,10,100,\nBL-b,200,100,\n",
            "models.csv:4 (column `full_watts`): full_watts 100 is below idle_watts 200",
        ),
        (
            "BL-c,ten,100,\n",
            "models.csv:2 (column `idle_watts`): expected an integer, found `ten`",
        ),
        (
            "BL-d,10,100,\nBL-d,10,120,\n",
            "models.csv:3 (column `model`): model `BL-d` is listed twice, on lines 2 and 3",
        ),
        (
            "A|B,10,100,\n",
            "models.csv:2 (column `model`): `A|B` cannot be a GPU model name",
        ),
        (
            "BL-e,10,0,\n",
            "models.csv:2 (column `full_watts`): 0 is out of range 1..=10000",
        ),
        (
            "BL-f,10,100000,\n",
            "models.csv:2 (column `full_watts`): 100000 is out of range",
        ),
        (
            "BL-g,10,100,0\n",
            "models.csv:2 (column `memory_mib`): 0 is out of range",
        ),
        ("BL-h,10\n", "models.csv:2: malformed CSV"),
        (
            "",
            "models.csv: no GPU models: the file has a header but no rows",
        ),
    ];
    for (body, expected) in cases {
        let error = read_models(&format!("{header}{body}"))
            .unwrap_err()
            .to_string();
        assert!(error.starts_with(expected), "{body:?}: {error}");
    }
    let error = read_models("model,idle_watts,full_watts,memory\nBL-i,1,2,3\n")
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("models.csv:1 (column `memory`): unknown column"),
        "{error}"
    );
    let error = read_models("model,idle_watts\nBL-j,1\n")
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("models.csv:1: missing column `full_watts`"),
        "{error}"
    );
}

/// A node list of Alibaba's 2026 spot-GPU trace with none of its models known: one error
/// names each unusable model at its first line, and offers only models a node may have.
#[test]
fn every_unknown_model_of_a_node_list_is_named_in_one_error() {
    let text = "node_name,gpu_model,gpu_capacity_num,cpu_num\n0,UK-series-1,4,192\n\
                1,UK-series-1,1,192\n2,A10,1,128\n3,UK-A100-SXM4-80GB,8,128\n4,G1,1,96\n\
                5,UK-H800,8,192\n";
    let error = read_nodes(text, &GpuModelTable::built_in())
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "nodes.csv:2 (column `gpu_model`): GPU models no node may have, each at its first \
         line: `UK-series-1` (line 2: unknown), `UK-A100-SXM4-80GB` (line 5: unknown), `G1` \
         (line 6: no power profile), `UK-H800` (line 7: unknown); a node's GPU model is one \
         of T4, A10, P100, V100M16, V100M32, A100, G2, G3; give others their power in a \
         GPU-model file (--gpu-models, docs/gpu-models.md)"
    );
    // With a file giving them power (G1 included), the same list loads.
    let models = read_models(
        "model,idle_watts,full_watts\nUK-series-1,30,150\nUK-A100-SXM4-80GB,50,400\nUK-H800,88,700\nG1,25,250\n",
    )
    .unwrap();
    let cluster = read_nodes(text, &models).unwrap();
    assert_eq!(cluster.len(), 6);
    let g1 = cluster.power_model(4).gpu.unwrap();
    assert_eq!((g1.idle_watts, g1.full_watts), (25, 250));
}

#[test]
fn a_2026_spot_gpu_node_list_is_read_as_written_with_stated_defaults() {
    let models =
        read_models("model,idle_watts,full_watts\nSP-A100-SXM4-80GB,50,400\nSP-series-1,30,150\n")
            .unwrap();
    let text = "node_name,gpu_model,gpu_capacity_num,cpu_num\n0,SP-series-1,4,192\n\
                1,SP-A100-SXM4-80GB,8,128\n2,A10,1,128\n";
    let cluster = read_nodes(text, &models).unwrap();
    let node = cluster.node_type(1);
    assert_eq!(node.gpu_model, GpuModel::parse("SP-A100-SXM4-80GB"));
    assert_eq!((node.gpu_count, node.cpu_milli), (8, 128_000));
    assert_eq!(node.memory_mib, 128 * MEMORY_MIB_PER_VCPU_DEFAULT);
    assert_eq!(cluster.nodes[0].name, "0");
    assert_eq!(cluster.gpu_count(), 13);
    // Node power: 8 devices at the file's idle watts, and the reference CPU's idle sockets
    // (128 vCPUs = 64 cores = 4 sockets of 16).
    let empty = cluster.power_model(1).node_power(128_000, &[1000; 8]);
    assert_eq!(empty.gpu_watts, 8 * 50);
    assert_eq!(empty.cpu_watts, 4 * 15);
    // A memory_mib column, when present, is read instead of the default.
    let with_memory = "node_name,gpu_model,gpu_capacity_num,cpu_num,memory_mib\n0,A10,1,8,1000\n";
    let cluster = read_nodes(with_memory, &models).unwrap();
    assert_eq!(cluster.node_type(0).memory_mib, 1000);
    // Errors name the 2026 columns.
    let error = read_nodes(
        "node_name,gpu_model,gpu_capacity_num,cpu_num\n0,A10,one,8\n",
        &models,
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.starts_with("nodes.csv:2 (column `gpu_capacity_num`): expected an integer"),
        "{error}"
    );
    let error = read_nodes("node_name,gpu_model,cpu_num\n0,A10,8\n", &models)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("missing column `gpu_capacity_num`")
            && error.contains("node_name,gpu_model,gpu_capacity_num,cpu_num"),
        "{error}"
    );
}

/// The shipped example: every model of its node list has power from its GPU-model file,
/// and without the file the node list is refused naming each of them.
#[test]
fn the_2026_example_loads_with_its_gpu_model_file() {
    let models = read_gpu_models_csv(
        Path::new("workloads/spot-gpu-2026/gpu-models.csv"),
        example("gpu-models.csv").as_bytes(),
    )
    .unwrap();
    let nodes = example("nodes.csv");
    let cluster = read_nodes(&nodes, &models).unwrap();
    assert_eq!(cluster.len(), 48);
    assert_eq!(cluster.gpu_count(), 207);
    let h800 = GpuModel::parse("H800").unwrap();
    assert_eq!(models.power(h800).unwrap().full_watts, 700);
    let error = read_nodes(&nodes, &GpuModelTable::built_in())
        .unwrap_err()
        .to_string();
    for model in [
        "GPU-series-1",
        "A100-SXM4-80GB",
        "A100-PCIE-40GB",
        "GPU-series-2",
        "A30",
        "H800",
        "A800-SXM4-80GB",
    ] {
        assert!(
            error.contains(&format!("`{model}` (line")),
            "{model}: {error}"
        );
    }
}
