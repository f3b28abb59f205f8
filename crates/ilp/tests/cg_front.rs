//! The column-generation power–fragmentation front against the per-node ε-constraint MIP
//! on real openb sub-clusters: every point's fragmentation bound holds under its power cap
//! (never above the MIP's proven optimum), every point is feasible for its cap (never
//! below that optimum), and the front is a front (power rises, fragmentation falls).

mod support;

use gapbench_ilp::min_frag::frag_with_power_cap;
use gapbench_ilp::{
    column_generation_carrying, column_generation_front, sample_sub_cluster, ColumnCarry,
    Objective, Snapshot, SolveOptions,
};
use gapbench_model::testing::openb_traces_dir;
use gapbench_model::workload::{load_nodes_csv, load_tasks_csv};
use gapbench_model::{prepare, CpuPowerProfile, InputRules, NodeOrder, TaskOrder};
use gapbench_online::{run_arrival_sweep, PolicySpec};
use support::events_of;

fn options() -> SolveOptions {
    SolveOptions {
        time_limit_s: 8.0,
        threads: Some(1),
        ..SolveOptions::default()
    }
}

#[test]
fn the_cg_front_brackets_the_epsilon_constraint_optimum_on_openb_sub_clusters() {
    let dir = openb_traces_dir();
    let full = load_nodes_csv(
        &dir.join("openb_node_list_gpu_node.csv"),
        CpuPowerProfile::Reference,
    )
    .unwrap();
    let tasks = load_tasks_csv(&dir.join("openb_pod_list_default.csv"), InputRules::Strict)
        .unwrap()
        .tasks;
    let (mut interior, mut compared) = (0, 0);
    for (seed, nodes, policy) in [(4u64, 3usize, "fgd"), (5, 4, "pwr"), (6, 3, "bestfit")] {
        let (sub, _) = sample_sub_cluster(&full, nodes, seed).unwrap();
        let prepared = prepare(
            &tasks,
            &sub,
            TaskOrder::Shuffled,
            Some(1.3),
            NodeOrder::Random,
            seed,
        );
        let spec: PolicySpec = policy.parse().unwrap();
        let sweep = events_of(&run_arrival_sweep(&sub, &prepared, &spec));
        let snapshot = Snapshot::at_checkpoint(&sub, &prepared, &sweep, 80.0).unwrap();
        let mut carry = ColumnCarry::new();
        let power =
            column_generation_carrying(&snapshot, Objective::Power, &options(), &mut carry).0;
        let frag = column_generation_carrying(&snapshot, Objective::Frag, &options(), &mut carry).0;
        let front = column_generation_front(
            &snapshot,
            &power,
            &frag,
            5,
            &options(),
            &mut ColumnCarry::new(),
        )
        .unwrap();
        assert!(front.len() >= 2 || power.placement == frag.placement);
        for pair in front.windows(2) {
            assert!(
                pair[0].power_watts <= pair[1].power_watts
                    && pair[0].frag_milli >= pair[1].frag_milli,
                "seed {seed}: not a front: {pair:?}"
            );
        }
        for point in &front {
            let bound = point
                .frag_bound_milli
                .expect("every CG front point has a bound");
            assert!(bound <= point.frag_milli + 1e-6, "{point:?}");
            let Some(cap) = point.power_cap_watts else {
                continue;
            };
            interior += usize::from(point.label.starts_with("eps_"));
            let exact_options = SolveOptions {
                time_limit_s: 20.0,
                ..options()
            };
            let exact = frag_with_power_cap(&snapshot, Some(cap), &power.placement, &exact_options);
            eprintln!(
                "seed {seed} {}: under {cap} W, CG [{bound}, {}], per-node MIP {:?} {}",
                point.label,
                point.frag_milli,
                exact.incumbent,
                exact.status.label()
            );
            if !exact.status.is_optimal() {
                continue;
            }
            let optimum = exact.incumbent.unwrap();
            let tolerance = 1e-6 * optimum.abs().max(1.0);
            assert!(
                bound <= optimum + tolerance,
                "seed {seed} {}: bound {bound} above the optimum {optimum} under {cap} W",
                point.label
            );
            assert!(
                optimum <= point.frag_milli + tolerance,
                "seed {seed} {}: a placement within {cap} W has {} < optimum {optimum}",
                point.label,
                point.frag_milli
            );
            compared += 1;
        }
    }
    assert!(
        interior >= 1,
        "no weighted point survived on any sub-cluster"
    );
    assert!(
        compared >= 2,
        "only {compared} points compared with a proven optimum"
    );
}
