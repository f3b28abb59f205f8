//! The column-generation power–fragmentation front (ε-constraint solves with the cap as a
//! master row) against the per-node ε-constraint MIP on real openb sub-clusters: every
//! point's fragmentation bound holds under its power cap (never above the MIP's proven
//! optimum), every point's placement is within its cap (so never below that optimum), and
//! the front is a front (power rises, fragmentation falls).

mod support;

use gapbench_ilp::{
    sample_sub_cluster, solve, Method, Objective, Options, Session, Snapshot, SolveOptions,
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

/// What one sub-cluster's front was checked against: points with a cap (each checked
/// against the per-node MIP under it), ε points among them, the caps whose MIP proved its
/// optimum, and the longest of those MIPs. Which caps a front has, and which MIPs prove
/// their optimum, depend on what the clock-limited solves reach, so only what holds on any
/// machine is asserted on them.
#[derive(Default)]
struct Checked {
    capped: usize,
    interior: usize,
    compared: usize,
    compared_interior: usize,
    slowest_proof_s: f64,
}

/// The CG front of `policy`'s snapshot at `checkpoint` % on `nodes` nodes drawn with
/// `seed`, every point checked against the per-node ε-constraint MIP (`exact_s` each).
fn check_front(seed: u64, nodes: usize, policy: &str, checkpoint: f64, exact_s: f64) -> Checked {
    let dir = openb_traces_dir();
    let full = load_nodes_csv(
        &dir.join("openb_node_list_gpu_node.csv"),
        CpuPowerProfile::Reference,
    )
    .unwrap();
    let tasks = load_tasks_csv(&dir.join("openb_pod_list_default.csv"), InputRules::Strict)
        .unwrap()
        .tasks;
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
    let snapshot = Snapshot::at_checkpoint(&sub, &prepared, &sweep, checkpoint).unwrap();
    let (problem, start) = snapshot.problem(&options());
    let mut session = Session::new();
    let by_columns = Method::ColumnGeneration;
    let power = session
        .solve(&problem, Objective::Power, by_columns, &start)
        .unwrap();
    let frag = session
        .solve(&problem, Objective::Frag, by_columns, &start)
        .unwrap();
    let front = session
        .front(&problem, (&power, &frag), 5, by_columns, &start)
        .unwrap();
    let front = front.points;
    assert!(front.len() >= 2);
    for pair in front.windows(2) {
        assert!(
            pair[0].power_watts <= pair[1].power_watts && pair[0].frag_milli >= pair[1].frag_milli,
            "seed {seed}: not a front: {pair:?}"
        );
    }
    let mut checked = Checked::default();
    for point in &front {
        let bound = point
            .frag_bound_milli
            .expect("every CG front point has a bound");
        assert!(bound <= point.frag_milli + 1e-6, "{point:?}");
        let Some(cap) = point.power_cap_watts else {
            continue;
        };
        assert!(
            point.power_watts <= cap,
            "seed {seed} {}: the placement draws {} W over its cap {cap} W",
            point.label,
            point.power_watts
        );
        let interior = point.label.starts_with("eps_");
        checked.capped += 1;
        checked.interior += usize::from(interior);
        let exact_options = SolveOptions {
            time_limit_s: exact_s,
            ..options()
        };
        let capped = Options {
            power_cap_watts: Some(cap),
            ..Options::new(exact_options).warm_start(power.placement.clone())
        };
        let exact = match solve(&problem, Objective::Frag, Method::PerNode, &capped) {
            Ok(exact) => exact,
            Err(e) => {
                eprintln!(
                    "seed {seed} {checkpoint} % {}: per-node MIP failed: {e}",
                    point.label
                );
                continue;
            }
        };
        eprintln!(
            "seed {seed} {checkpoint} % {}: under {cap} W, CG [{bound}, {}] {}, per-node MIP {:?} {}",
            point.label,
            point.frag_milli,
            point.status.label(),
            exact.incumbent,
            exact.status.label()
        );
        // Whatever the MIP proved within its clock, the optimum under the cap lies in both
        // intervals: each bound is at most the other's placement.
        if let (Some(exact_bound), Some(exact_frag)) = (exact.bound, exact.incumbent) {
            let tolerance = 1e-6 * exact_frag.abs().max(point.frag_milli.abs()).max(1.0);
            assert!(
                bound <= exact_frag + tolerance && exact_bound <= point.frag_milli + tolerance,
                "seed {seed} {}: CG [{bound}, {}] and the MIP [{exact_bound}, {exact_frag}] under {cap} W do not overlap",
                point.label,
                point.frag_milli
            );
        }
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
        checked.compared += 1;
        checked.compared_interior += usize::from(interior);
        checked.slowest_proof_s = checked.slowest_proof_s.max(exact.solve_seconds);
    }
    checked
}

/// Three- and four-node sub-clusters: every capped point is checked against the per-node
/// MIP under its cap (bracketed where the MIP proves the optimum within 20 s, which on
/// these clusters depends on the machine: printed, not asserted).
#[test]
fn the_cg_front_brackets_the_epsilon_constraint_optimum_on_openb_sub_clusters() {
    let mut total = Checked::default();
    for (seed, nodes, policy, checkpoint) in [
        (4u64, 3usize, "fgd", 80.0),
        (5, 4, "pwr", 80.0),
        (6, 3, "bestfit", 80.0),
        (7, 4, "fgd", 130.0),
    ] {
        let checked = check_front(seed, nodes, policy, checkpoint, 20.0);
        // The least-power end is capped at its own power: every front has a capped point.
        assert!(checked.capped >= 1, "seed {seed}: no capped point");
        total.capped += checked.capped;
        total.interior += checked.interior;
        total.compared += checked.compared;
    }
    eprintln!(
        "{} capped points ({} ε), {} compared with a proven optimum",
        total.capped, total.interior, total.compared
    );
}

/// On two-node clusters every capped point is checked against the per-node MIP under its
/// cap: the two intervals overlap, and where the MIP proves the optimum (most caps, though
/// one proof took 12.5 s of its 30 s on a loaded 2-core machine, so how many is printed,
/// not asserted) the point's bound is at most that optimum and its placement at least. A front shows only distinct points, and most two-node fronts
/// have none between their ends: these are snapshots whose fronts had one (scanned over
/// seeds 11–44); how many ε points a front shows depends on its clock-limited solves.
#[test]
fn every_epsilon_point_is_bounded_by_its_caps_proven_optimum_on_two_nodes() {
    let (mut interior, mut slowest_proof_s) = (0, 0.0f64);
    for (seed, policy, checkpoint) in [
        (40u64, "pwr", 100.0),
        (43, "fgd", 130.0),
        (43, "bestfit", 130.0),
        (11, "fgd", 100.0),
    ] {
        let checked = check_front(seed, 2, policy, checkpoint, 30.0);
        assert!(checked.capped >= 1, "seed {seed}: no capped point");
        interior += checked.compared_interior;
        slowest_proof_s = slowest_proof_s.max(checked.slowest_proof_s);
    }
    eprintln!(
        "{interior} ε points compared with a proven optimum; slowest proof {slowest_proof_s:.3} s"
    );
}
