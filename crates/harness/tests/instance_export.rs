//! `gap --export`: instances written from real solves read back, and every stored placement
//! re-evaluated here from the file's own description alone (node types with their power
//! parameters, shapes, typical pods, the formulas' text) — not with gapbench's model — must
//! give the stored value, obey the placement rules, and sit on the right side of the bound.

use std::path::{Path, PathBuf};

use gapbench::export::{write_index, Exporter, INDEX_FILE};
use gapbench::gap::{gap_study_observed, GapMethod, GapSettings};
use gapbench::run::RunSettings;
use gapbench::workload::Workload;
use gapbench_ilp::instance::verify_instance;
use gapbench_model::{CpuPowerProfile, InputRules, NodeOrder, TaskOrder};
use gapbench_results::instance::{Configuration, InstanceFile};
use gapbench_results::Objective;

/// One node's free resources, as the file's placement rules define them.
struct NodeUse {
    cpu_left_milli: i64,
    memory_left_mib: i64,
    free_milli: Vec<i64>,
}

/// The per-node use of `configuration`, checking every placement rule of the file.
fn node_use(file: &InstanceFile, configuration: &Configuration) -> Result<NodeUse, String> {
    let node_type = file
        .node_types
        .get(configuration.node_type)
        .ok_or("node type out of range")?;
    let mut node = NodeUse {
        cpu_left_milli: i64::from(node_type.cpu_milli),
        memory_left_mib: node_type.memory_mib as i64,
        free_milli: vec![1000; usize::from(node_type.gpu_count)],
    };
    for task in &configuration.tasks {
        let shape = file.shapes.get(task.shape).ok_or("shape out of range")?;
        node.cpu_left_milli -= i64::from(shape.cpu_milli);
        node.memory_left_mib -= shape.memory_mib as i64;
        if task.devices.len() != usize::from(shape.gpu_count) {
            return Err(format!("shape {} on {:?}", task.shape, task.devices));
        }
        let mut devices = task.devices.clone();
        devices.dedup();
        if devices.len() != task.devices.len() {
            return Err("a task uses one device twice".into());
        }
        if shape.gpu_count > 0 {
            let model = node_type
                .gpu_model
                .as_ref()
                .ok_or("GPU task on a CPU node")?;
            if !shape.gpu_models.is_empty() && !shape.gpu_models.contains(model) {
                return Err(format!("shape {} may not use {model}", task.shape));
            }
        }
        for &device in &task.devices {
            let free = node.free_milli.get_mut(device).ok_or("no such device")?;
            *free -= i64::from(shape.gpu_milli);
        }
    }
    if node.cpu_left_milli < 0 || node.memory_left_mib < 0 {
        return Err("CPU or memory over capacity".into());
    }
    if node.free_milli.iter().any(|&free| free < 0) {
        return Err("a device over 1000 milli".into());
    }
    if configuration.tasks.len() > 1001 {
        return Err("more than 1001 tasks on a node".into());
    }
    Ok(node)
}

/// The file's power formula for one node of `node_type` in state `node`.
fn node_watts(file: &InstanceFile, node_type: usize, node: &NodeUse) -> i64 {
    let t = &file.node_types[node_type];
    let cores_per_socket = i64::from(t.cores_per_socket);
    let real_cores = (i64::from(t.cpu_milli) + 1999) / 2000;
    let sockets = (real_cores + cores_per_socket - 1) / cores_per_socket;
    let idle_cores = node.cpu_left_milli / 2000;
    let active = ((real_cores - idle_cores).max(0) + cores_per_socket - 1) / cores_per_socket;
    let cpu = i64::from(t.cpu_socket_idle_watts) * (sockets - active)
        + i64::from(t.cpu_socket_full_watts) * active;
    let idle_devices = node.free_milli.iter().filter(|&&f| f == 1000).count() as i64;
    let busy_devices = node.free_milli.len() as i64 - idle_devices;
    cpu + i64::from(t.gpu_idle_watts) * idle_devices + i64::from(t.gpu_full_watts) * busy_devices
}

/// The file's fragment F(n) for one node of `node_type` in state `node`.
fn node_fragment(file: &InstanceFile, node_type: usize, node: &NodeUse) -> f64 {
    let model = file.node_types[node_type].gpu_model.as_ref();
    let free: i64 = node.free_milli.iter().sum();
    let mut fragment = 0.0;
    for pod in &file.fragmentation_model.typical_pods {
        let wrong_model =
            !pod.gpu_models.is_empty() && !model.is_some_and(|m| pod.gpu_models.contains(m));
        let fitting = node
            .free_milli
            .iter()
            .filter(|&&f| f >= i64::from(pod.gpu_milli))
            .count();
        let whole = pod.gpu_milli == 0
            || wrong_model
            || node.cpu_left_milli < i64::from(pod.cpu_milli)
            || fitting < usize::from(pod.gpu_count);
        let part = if whole {
            free
        } else {
            node.free_milli
                .iter()
                .filter(|&&f| f < i64::from(pod.gpu_milli))
                .sum()
        };
        fragment += pod.probability * part as f64;
    }
    fragment
}

/// Power, allocation and fragmentation of `placement` over the whole cluster, empty nodes
/// included, and the tasks placed per shape.
fn evaluate(
    file: &InstanceFile,
    placement: &[Configuration],
) -> Result<(i64, i64, f64, Vec<usize>), String> {
    let mut used_nodes = vec![0usize; file.node_types.len()];
    let mut placed = vec![0usize; file.shapes.len()];
    let (mut watts, mut alloc, mut frag) = (0i64, 0i64, 0.0f64);
    for configuration in placement {
        let node = node_use(file, configuration)?;
        let n = configuration.nodes;
        used_nodes[configuration.node_type] += n;
        watts += n as i64 * node_watts(file, configuration.node_type, &node);
        frag += n as f64 * node_fragment(file, configuration.node_type, &node);
        for task in &configuration.tasks {
            let shape = &file.shapes[task.shape];
            placed[task.shape] += n;
            alloc += n as i64 * i64::from(shape.gpu_count) * i64::from(shape.gpu_milli);
        }
    }
    for (index, node_type) in file.node_types.iter().enumerate() {
        let empty_nodes = node_type
            .count
            .checked_sub(used_nodes[index])
            .ok_or("more nodes than the type has")?;
        let empty = NodeUse {
            cpu_left_milli: i64::from(node_type.cpu_milli),
            memory_left_mib: node_type.memory_mib as i64,
            free_milli: vec![1000; usize::from(node_type.gpu_count)],
        };
        let empty_watts = node_watts(file, index, &empty);
        assert_eq!(empty_watts, node_type.empty_node_watts, "node type {index}");
        watts += empty_nodes as i64 * empty_watts;
        frag += empty_nodes as f64 * node_fragment(file, index, &empty);
    }
    Ok((watts, alloc, frag, placed))
}

/// Checks every claim of one file from its own description; returns the problems checked.
fn check_file(file: &InstanceFile) -> usize {
    let name = &file.name;
    let (watts, alloc, frag, _) = evaluate(file, &file.heuristic.placement).unwrap();
    assert_eq!(watts as f64, file.heuristic.power_watts, "{name} heuristic");
    assert_eq!(
        alloc as f64, file.heuristic.alloc_gpu_milli,
        "{name} heuristic"
    );
    assert!((frag - file.heuristic.frag_milli).abs() <= 1e-9 * frag.max(1.0));
    let mut checked = 0;
    for problem in &file.problems {
        let what = format!("{name} {}", problem.objective.name());
        let value = problem
            .value
            .unwrap_or_else(|| panic!("{what}: no placement"));
        let bound = problem.bound.unwrap_or_else(|| panic!("{what}: no bound"));
        let (watts, alloc, frag, placed) = evaluate(file, &problem.placement)
            .unwrap_or_else(|e| panic!("{what}: invalid placement: {e}"));
        let recomputed = match problem.objective {
            Objective::Power => watts as f64,
            Objective::Alloc => alloc as f64,
            Objective::Frag => frag,
        };
        assert!(
            (recomputed - value).abs() <= 1e-9 * value.abs().max(1.0),
            "{what}: the file's placement evaluates to {recomputed}, the file says {value}"
        );
        for (shape, (&got, spec)) in placed.iter().zip(&file.shapes).enumerate() {
            match problem.objective {
                Objective::Alloc => assert!(got <= spec.arrived, "{what} shape {shape}"),
                _ => assert_eq!(got, spec.placed, "{what} shape {shape}"),
            }
        }
        // The bound is proven: never on the wrong side of a feasible placement's value.
        let slack = 1e-6 * value.abs().max(1.0);
        if problem.objective.maximise() {
            assert_eq!(problem.sense, "maximize");
            assert!(
                bound >= value - slack,
                "{what}: bound {bound} below {value}"
            );
        } else {
            assert_eq!(problem.sense, "minimize");
            assert!(
                bound <= value + slack,
                "{what}: bound {bound} above {value}"
            );
        }
        checked += 1;
    }
    checked
}

fn export(dir: &Path, policy: &str, method: GapMethod, checkpoint_pct: f64) -> Vec<PathBuf> {
    let workload = Workload::load(
        None,
        None,
        None,
        CpuPowerProfile::Reference,
        InputRules::Reference,
    )
    .expect("the embedded workload loads");
    let run = RunSettings::new(
        policy.parse().unwrap(),
        Some(1.3),
        TaskOrder::Shuffled,
        NodeOrder::Random,
    );
    let settings = GapSettings {
        checkpoints: vec![checkpoint_pct],
        objectives: Objective::ALL.to_vec(),
        sample_nodes: Some(6),
        time_limit_s: 3.0,
        mip_rel_gap: 0.0,
        threads: Some(1),
        pareto_points: 0,
        front_time_limit_s: None,
        exact_max_nodes: 128,
    };
    let exporter = Exporter {
        dir,
        workload: &workload,
        run: &run,
        settings: &settings,
        seed: 42,
    };
    let mut written = Vec::new();
    gap_study_observed(
        &workload,
        &run,
        &settings,
        method,
        42,
        &mut |_| {},
        &mut |solved| {
            written.push(exporter.write(&solved)?);
            Ok(())
        },
    )
    .unwrap();
    written
}

#[test]
fn exported_instances_re_evaluate_from_their_own_description() {
    let dir = std::env::temp_dir().join(format!("gapbench-export-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut written = export(&dir, "pwr:200,fgd:800", GapMethod::PerNode, 80.0);
    written.extend(export(&dir, "fgd", GapMethod::ColumnGeneration, 100.0));
    let names: Vec<String> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "pwr200-fgd800-seed42-n6-chk80.json",
            "fgd-seed42-n6-chk100.json"
        ]
    );
    let mut problems = 0;
    for path in &written {
        let file = InstanceFile::load(path).unwrap();
        assert_eq!(file.node_types.iter().map(|t| t.count).sum::<usize>(), 6);
        problems += check_file(&file);
        verify_instance(&file).unwrap();
    }
    assert_eq!(problems, 6);
    // The index lists both runs into the folder: a header and one row per problem.
    let index = std::fs::read_to_string(dir.join(INDEX_FILE)).unwrap();
    assert_eq!(index.lines().count(), 1 + 6, "{index}");
    assert!(
        index.contains("fgd-seed42-n6-chk100,fgd,42,6,100,"),
        "{index}"
    );

    // A changed claim no longer re-evaluates, both here and in gapbench's own check.
    let mut file = InstanceFile::load(&written[0]).unwrap();
    let problem = &mut file.problems[0];
    *problem.value.as_mut().unwrap() += 1.0;
    assert!(verify_instance(&file).is_err());
    assert!(std::panic::catch_unwind(|| check_file(&file)).is_err());
    let mut file = InstanceFile::load(&written[0]).unwrap();
    file.problems[0].placement[0].nodes += 1000;
    assert!(verify_instance(&file).is_err());
    assert!(evaluate(&file, &file.problems[0].placement).is_err());

    // A file that does not read stops the index with its name.
    std::fs::write(dir.join("stray.json"), "{}").unwrap();
    let error = format!("{:#}", write_index(&dir).unwrap_err());
    assert!(error.contains("stray.json"), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An exported instance is a workload of the public API: its nodes and every arrived task,
/// checked as the index checks it (a changed claim is refused).
#[test]
fn an_exported_instance_loads_as_a_workload() {
    let dir = std::env::temp_dir().join(format!("gapbench-export-api-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let written = export(&dir, "fgd", GapMethod::PerNode, 50.0);
    let file = InstanceFile::load(&written[0]).unwrap();
    let workload = gapbench::Workload::instance(&written[0]).unwrap();
    assert_eq!(workload.cluster().len(), 6);
    let arrived: usize = file.shapes.iter().map(|s| s.arrived).sum();
    assert_eq!(workload.tasks().len(), arrived);
    assert!(
        workload.describe().contains("instance"),
        "{}",
        workload.describe()
    );
    let replay = gapbench::replay(
        &workload,
        &"fifo".parse().unwrap(),
        42,
        &gapbench::ReplayConfig::default(),
    );
    assert!(replay.is_err(), "an instance has no arrival times");

    let mut changed = file.clone();
    *changed.problems[0].value.as_mut().unwrap() += 1.0;
    let path = dir.join("changed").join(format!("{}.json", changed.name));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, changed.to_json().unwrap()).unwrap();
    assert!(gapbench::Workload::instance(&path).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}
