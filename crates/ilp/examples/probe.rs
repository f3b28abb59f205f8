//! Solve-time probe on sub-clusters of the real openb cluster and default trace:
//! `cargo run --release -p gapbench-ilp --example probe -- NODES POLICY OBJECTIVES CHECKPOINTS TIME_LIMIT [SEED]`
//! e.g. `… -- 16 fgd power,alloc,frag 50,100,130 60`. Prints one line per solve.

use gapbench_ilp::{gap_interval, heuristic_value, sample_sub_cluster, solve_exact, Objective, Snapshot, SolveOptions};
use gapbench_model::testing::openb_traces_dir;
use gapbench_model::workload::{load_nodes_csv, load_tasks_csv};
use gapbench_model::{prepare, CpuPowerProfile, NodeOrder, TaskOrder};
use gapbench_online::{run_arrival_sweep, PolicySpec};

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 5 {
        return Err("usage: probe NODES POLICY OBJECTIVES CHECKPOINTS TIME_LIMIT [SEED] [nosym]".into());
    }
    let nodes: usize = args[0].parse().map_err(|_| "NODES is a number")?;
    let policy: PolicySpec = args[1].parse()?;
    let objectives: Vec<Objective> = args[2]
        .split(',')
        .map(|o| Objective::parse(o).ok_or(format!("unknown objective {o}")))
        .collect::<Result<_, _>>()?;
    let checkpoints: Vec<f64> = args[3].split(',').map(|c| c.parse().map_err(|_| "bad checkpoint")).collect::<Result<_, _>>()?;
    let time_limit_s: f64 = args[4].parse().map_err(|_| "bad time limit")?;
    let seed: u64 = args.get(5).map_or(Ok(42), |s| s.parse()).map_err(|_| "bad seed")?;
    let node_symmetry = args.get(6).map_or(true, |s| s != "nosym");
    let dir = openb_traces_dir();
    let full = load_nodes_csv(&dir.join("openb_node_list_gpu_node.csv"), CpuPowerProfile::Reference).map_err(|e| e.to_string())?;
    let tasks = load_tasks_csv(&dir.join("openb_pod_list_default.csv")).map_err(|e| e.to_string())?;
    let (cluster, _) = sample_sub_cluster(&full, nodes, seed)?;
    let prepared = prepare(&tasks, &cluster, TaskOrder::Shuffled, Some(1.3), NodeOrder::Random, seed);
    let sweep = run_arrival_sweep(&cluster, &prepared, &policy);
    let options = SolveOptions { time_limit_s, node_symmetry, ..SolveOptions::default() };
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
        }
    }
    Ok(())
}
