//! Solve-time probe on sub-clusters of the real openb cluster and default trace:
//! `cargo run --release -p gapbench-ilp --example probe -- NODES POLICY OBJECTIVES CHECKPOINTS TIME_LIMIT [SEED]`
//! e.g. `… -- 16 fgd power,alloc,frag 50,100,130 60`. Prints one line per solve.

use gapbench_ilp::{
    gap_interval, heuristic_value, sample_sub_cluster, solve_exact, Objective, Snapshot,
    SolveOptions,
};
use gapbench_model::testing::openb_traces_dir;
use gapbench_model::workload::{load_nodes_csv, load_tasks_csv};
use gapbench_model::{prepare, CpuPowerProfile, NodeOrder, TaskOrder};
use gapbench_online::{run_arrival_sweep, PolicySpec};

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 5 {
        return Err(
            "usage: probe NODES POLICY OBJECTIVES CHECKPOINTS TIME_LIMIT [SEED] [nosym]".into(),
        );
    }
    let nodes: usize = args[0].parse().map_err(|_| "NODES is a number")?;
    let policy: PolicySpec = args[1].parse()?;
    let objectives: Vec<Objective> = args[2]
        .split(',')
        .map(|o| Objective::parse(o).ok_or(format!("unknown objective {o}")))
        .collect::<Result<_, _>>()?;
    let checkpoints: Vec<f64> = args[3]
        .split(',')
        .map(|c| c.parse().map_err(|_| "bad checkpoint"))
        .collect::<Result<_, _>>()?;
    let time_limit_s: f64 = args[4].parse().map_err(|_| "bad time limit")?;
    let seed: u64 = args
        .get(5)
        .map_or(Ok(42), |s| s.parse())
        .map_err(|_| "bad seed")?;
    let flags: Vec<&str> = args.iter().skip(6).map(String::as_str).collect();
    let node_symmetry = !flags.contains(&"nosym");
    let verbose = flags.contains(&"verbose");
    let dir = openb_traces_dir();
    let full = load_nodes_csv(
        &dir.join("openb_node_list_gpu_node.csv"),
        CpuPowerProfile::Reference,
    )
    .map_err(|e| e.to_string())?;
    let tasks =
        load_tasks_csv(&dir.join("openb_pod_list_default.csv")).map_err(|e| e.to_string())?;
    let (cluster, _) = sample_sub_cluster(&full, nodes, seed)?;
    let prepared = prepare(
        &tasks,
        &cluster,
        TaskOrder::Shuffled,
        Some(1.3),
        NodeOrder::Random,
        seed,
    );
    let sweep = run_arrival_sweep(&cluster, &prepared, &policy);
    let threads = flags
        .iter()
        .find_map(|f| f.strip_prefix("threads="))
        .map(|t| t.parse().unwrap());
    let options = SolveOptions {
        time_limit_s,
        node_symmetry,
        verbose,
        threads,
        ..SolveOptions::default()
    };
    for &checkpoint in &checkpoints {
        let snapshot = Snapshot::at_checkpoint(&cluster, &prepared, &sweep, checkpoint)?;
        for &objective in &objectives {
            let report = solve_exact(&snapshot, objective, &options);
            let heuristic = heuristic_value(&snapshot, objective);
            let gap = gap_interval(&report, heuristic, cluster.gpu_capacity_milli());
            println!(
                "N={nodes} {policy} chk={checkpoint} {} tasks={}/{} heur={heuristic:.1} inc={:?} bound={:?} status={} gap={:?} t={:.2}s",
                objective.name(),
                snapshot.placed_tasks().len(),
                snapshot.tasks.len(),
                report.incumbent,
                report.bound,
                report.status.label(),
                gap.map(|g| (g.low_pct, g.high_pct)),
                report.solve_seconds
            );
            if flags.contains(&"breakdown") && !report.placement.is_empty() {
                println!(
                    "   heuristic: {}",
                    breakdown(&snapshot, &snapshot.heuristic)
                );
                println!("   solver:    {}", breakdown(&snapshot, &report.placement));
            }
        }
    }
    Ok(())
}

/// Where the power of a placement goes: active sockets and working devices per node type.
#[allow(dead_code)]
pub fn breakdown(snapshot: &Snapshot, placement: &[Option<gapbench_model::Placement>]) -> String {
    let state = gapbench_ilp::eval::state_of(snapshot.cluster, snapshot.tasks, placement);
    let mut sockets = 0;
    let mut devices = 0;
    let mut cpu_used = 0u64;
    let mut gpu_used = 0u64;
    for (n, node) in state.nodes.iter().enumerate() {
        let model = snapshot.cluster.power_model(n as u32);
        let t = snapshot.cluster.node_type(n as u32);
        let idle = node.cpu_left_milli / 2000;
        sockets += model
            .real_cores
            .saturating_sub(idle)
            .div_ceil(model.socket.cores_per_socket);
        devices += node.free_gpu_milli().iter().filter(|&&l| l < 1000).count();
        cpu_used += u64::from(t.cpu_milli - node.cpu_left_milli);
        gpu_used += u64::from(t.gpu_milli()) - u64::from(node.total_free_gpu_milli());
    }
    format!(
        "sockets={sockets} (cpu/32000={:.2}) devices={devices} (gpu/1000={:.2})",
        cpu_used as f64 / 32000.0,
        gpu_used as f64 / 1000.0
    )
}
