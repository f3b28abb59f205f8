//! The power–fragmentation front on the real 1,213-node openb cluster by ε-constraint
//! column generation: one policy's arrival sweep of the default trace (seed 42, tune 1.3);
//! at each checkpoint the two end points (least power, least fragmentation) and the capped
//! solves between them, each point printed with its cap, power, fragmentation, proven
//! bound, status and time.
//!
//! `cargo run --release -p gapbench-ilp --example cg_front_full_cluster -- [POLICY] [CHECKPOINTS] [POINTS] [END_SECONDS] [FRONT_SECONDS] [THREADS]`
//! e.g. `-- fgd 50,80,100,130 7 60 10 2` (the defaults: `workloads/full-cluster.toml`'s).

use gapbench_ilp::{column_generation_carrying, column_generation_front, ColumnCarry};
use gapbench_ilp::{Objective, Snapshot, SolveOptions, SweepEvent};
use gapbench_model::testing::openb_traces_dir;
use gapbench_model::workload::{load_nodes_csv, load_tasks_csv};
use gapbench_model::{prepare, CpuPowerProfile, InputRules, NodeOrder, TaskOrder};
use gapbench_online::{run_arrival_sweep, PolicySpec};

fn arg<T: std::str::FromStr>(args: &[String], i: usize, default: T) -> Result<T, String> {
    args.get(i).map_or(Ok(default), |a| {
        a.parse()
            .map_err(|_| format!("bad argument {}: `{a}`", i + 1))
    })
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let policy = args.first().map_or("fgd", String::as_str);
    let checkpoints: Vec<f64> = args
        .get(1)
        .map_or("50,80,100,130", String::as_str)
        .split(',')
        .map(|c| c.parse().map_err(|_| format!("bad checkpoint `{c}`")))
        .collect::<Result<_, _>>()?;
    let points: usize = arg(&args, 2, 7)?;
    let end_s: f64 = arg(&args, 3, 60.0)?;
    let front_s: f64 = arg(&args, 4, 10.0)?;
    let threads: u32 = arg(&args, 5, 2)?;
    let dir = openb_traces_dir();
    let cluster = load_nodes_csv(
        &dir.join("openb_node_list_gpu_node.csv"),
        CpuPowerProfile::Reference,
    )
    .map_err(|e| e.to_string())?;
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
    let sweep: Vec<SweepEvent> = run_arrival_sweep(&cluster, &prepared, &spec)
        .records
        .iter()
        .map(|r| SweepEvent {
            task: r.task as usize,
            placement: r.placement,
            arrived_gpu_milli: r.arrived_gpu_milli,
        })
        .collect();
    let options = |time_limit_s| SolveOptions {
        threads: Some(threads),
        time_limit_s,
        ..SolveOptions::default()
    };
    println!("policy,checkpoint,point,cap_watts,power_watts,frag_milli,frag_bound_milli,gap_pct,status,solve_s");
    let (mut carry, mut front_carry) = (ColumnCarry::new(), ColumnCarry::new());
    for &checkpoint in &checkpoints {
        let snapshot = Snapshot::at_checkpoint(&cluster, &prepared, &sweep, checkpoint)?;
        let power =
            column_generation_carrying(&snapshot, Objective::Power, &options(end_s), &mut carry).0;
        let frag =
            column_generation_carrying(&snapshot, Objective::Frag, &options(end_s), &mut carry).0;
        let clock = std::time::Instant::now();
        let front = column_generation_front(
            &snapshot,
            &power,
            &frag,
            points,
            &options(front_s),
            &mut front_carry,
        )?;
        for p in &front {
            let bound = p.frag_bound_milli.unwrap_or(f64::NAN);
            println!(
                "{policy},{checkpoint},{},{},{},{:.3},{bound:.3},{:.3},{},{:.2}",
                p.label,
                p.power_cap_watts.map_or(String::new(), |c| c.to_string()),
                p.power_watts,
                p.frag_milli,
                100.0 * (p.frag_milli - bound) / bound,
                p.status.label(),
                p.solve_seconds
            );
        }
        println!(
            "# {policy} {checkpoint} %: front of {} points in {:.1} s",
            front.len(),
            clock.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
