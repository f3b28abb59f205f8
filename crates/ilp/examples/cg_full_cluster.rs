//! Column generation on the real 1,213-node openb cluster: one policy's arrival sweep of
//! the default trace (seed 42, tune 1.3), every objective at the given checkpoints (each
//! starting from the columns the previous one used), with the figures of each solve
//! (columns, iterations, time).
//!
//! `cargo run --release -p gapbench-ilp --example cg_full_cluster -- [POLICY] [CHECKPOINTS] [OBJECTIVES] [THREADS] [SECONDS] [SAMPLE_NODES]`
//! e.g. `-- fgd 50,80,100,130 power,alloc,frag 2 60` (the defaults but the policy).
//! `SAMPLE_NODES` solves a sub-cluster of that many nodes drawn with seed 42 instead (the
//! paper bench's sub-cluster gap study: `-- fgd 50,80,100,130 power,alloc,frag 1 15 8`).

use gapbench_ilp::{gap_interval, heuristic_value, sample_sub_cluster, Method, Session};
use gapbench_ilp::{Objective, Snapshot, SolveOptions, SweepEvent};
use gapbench_model::testing::openb_traces_dir;
use gapbench_model::workload::{load_nodes_csv, load_tasks_csv};
use gapbench_model::{prepare, CpuPowerProfile, InputRules, NodeOrder, TaskOrder};
use gapbench_online::{run_arrival_sweep, PolicySpec};

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let policy = args.first().map_or("fgd", String::as_str);
    let checkpoints: Vec<f64> = args
        .get(1)
        .map_or("50,80,100,130", String::as_str)
        .split(',')
        .map(|c| c.parse().map_err(|_| format!("bad checkpoint `{c}`")))
        .collect::<Result<_, _>>()?;
    let objectives: Vec<Objective> = args
        .get(2)
        .map_or("power,alloc,frag", String::as_str)
        .split(',')
        .map(|o| Objective::parse(o).ok_or_else(|| format!("bad objective `{o}`")))
        .collect::<Result<_, _>>()?;
    let threads: u32 = args
        .get(3)
        .map_or(Ok(2), |t| t.parse())
        .map_err(|_| "bad thread count".to_string())?;
    let dir = openb_traces_dir();
    let cluster = load_nodes_csv(
        &dir.join("openb_node_list_gpu_node.csv"),
        CpuPowerProfile::Reference,
    )
    .map_err(|e| e.to_string())?;
    let cluster = match args.get(5) {
        Some(nodes) => {
            let nodes: usize = nodes
                .parse()
                .map_err(|_| format!("bad sample size `{nodes}`"))?;
            sample_sub_cluster(&cluster, nodes, 42)?.0
        }
        None => cluster,
    };
    let tasks = load_tasks_csv(&dir.join("openb_pod_list_default.csv"), InputRules::Strict)
        .map_err(|e| e.to_string())?
        .tasks;
    let prepared = prepare(
        &tasks,
        &cluster,
        TaskOrder::Shuffled,
        Some(1.3),
        NodeOrder::Random,
        42,
    );
    let spec: PolicySpec = policy.parse().map_err(|e| format!("{e:?}"))?;
    let sweep: Vec<SweepEvent> = run_arrival_sweep(&cluster, &prepared, &spec).events();
    let time_limit_s: f64 = args
        .get(4)
        .map_or(Ok(60.0), |t| t.parse())
        .map_err(|_| "bad time limit".to_string())?;
    let options = SolveOptions {
        threads: Some(threads),
        time_limit_s,
        ..SolveOptions::default()
    };
    println!("policy,checkpoint,objective,tasks,heuristic,incumbent,bound,status,gap_low,gap_high,lp_value,lagrangian_bound,columns,initial_columns,carried_columns,iterations,converged,rounding_keep,rounding_dived,rounded,integer_master,dive_integral,dive_floors_undone,dive_backtracks,pricing_s,master_s,greedy_s,exact_s,integer_s,branch_nodes,branch_s,total_s");
    // Each checkpoint starts from the configurations the previous one used.
    let mut session = Session::new();
    for &checkpoint in &checkpoints {
        let snapshot = Snapshot::at_checkpoint(&cluster, &prepared, &sweep, checkpoint)
            .map_err(|e| e.to_string())?;
        let (problem, start) = snapshot.problem(&options);
        for &objective in &objectives {
            let method = Method::ColumnGeneration;
            let report = match session.solve(&problem, objective, method, &start) {
                Ok(report) => report,
                Err(e) => {
                    println!("{policy},{checkpoint},{},error: {e}", objective.name());
                    continue;
                }
            };
            let stats = session.last_stats();
            let heuristic = heuristic_value(&snapshot, objective);
            let gap = gap_interval(&report, heuristic, cluster.gpu_capacity_milli());
            println!(
                "{policy},{checkpoint},{},{},{heuristic:.3},{:?},{:?},{},{:?},{:?},{:.1},{:.1},{},{},{},{},{},{:?},{:?},{:?},{:?},{},{},{},{:.2},{:.2},{:.2},{:.2},{:.2},{},{:.2},{:.2}",
                objective.name(),
                snapshot.tasks.len(),
                report.incumbent,
                report.bound,
                report.status.label(),
                gap.map(|g| g.low_pct),
                gap.and_then(|g| g.high_pct),
                stats.lp_value,
                stats.lagrangian_bound,
                stats.columns,
                stats.initial_columns,
                stats.carried_columns,
                stats.iterations,
                stats.converged,
                stats.rounding.map(|r| r.keep),
                stats.rounding.map(|r| r.dived),
                stats.rounding.map(|r| r.value),
                stats.integer_master_value,
                stats.dive_integral,
                stats.dive_floors_undone,
                stats.dive_backtracks,
                stats.pricing_seconds,
                stats.master_seconds,
                stats.greedy_seconds,
                stats.exact_seconds,
                stats.integer_seconds,
                stats.branch_nodes,
                stats.branch_seconds,
                report.solve_seconds
            );
        }
    }
    Ok(())
}
