//! Scoring throughput: raw node scores per second for each policy, without memoisation,
//! on a snapshot of the real openb cluster at about 70 % GPU allocation (FGD, seed 42),
//! for the next 256 arriving tasks scored against every feasible node.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gapbench_model::{prepare, ClusterState, NodeOrder, TaskOrder};
use gapbench_online::{new_policy, run_arrival_sweep, PolicyKind, PolicySpec, ScoreContext};

fn scoring(c: &mut Criterion) {
    let (cluster, tasks) = gapbench_benches::openb_default();
    let prepared = prepare(
        &tasks,
        &cluster,
        TaskOrder::Shuffled,
        Some(1.3),
        NodeOrder::Random,
        42,
    );
    let sweep = run_arrival_sweep(&cluster, &prepared, &PolicySpec::solo(PolicyKind::Fgd));
    let capacity = cluster.gpu_capacity_milli();
    let cut = sweep
        .records
        .iter()
        .position(|r| r.metrics.used_gpu_milli * 100 >= 70 * capacity)
        .expect("the sweep reaches 70 %");
    let mut state = ClusterState::empty(&cluster);
    for (task, placement) in sweep.placements_until(cut) {
        state.bind(&prepared.events[task], placement);
    }
    let probe: Vec<_> = prepared.events[cut..cut + 256].to_vec();
    let feasible: Vec<Vec<u32>> = probe
        .iter()
        .map(|task| {
            (0..cluster.len() as u32)
                .filter(|&n| state.fits(&cluster, n, task))
                .collect()
        })
        .collect();
    let node_scores: u64 = feasible.iter().map(|f| f.len() as u64).sum();
    let ctx = ScoreContext {
        cluster: &cluster,
        state: &state,
        typical: &prepared.typical,
    };

    let mut group = c.benchmark_group("scoring");
    group.sample_size(20);
    gapbench_benches::bench_calibration(&mut group);
    group.throughput(Throughput::Elements(node_scores));
    for kind in PolicyKind::ALL {
        let mut policy = new_policy(kind);
        let mut rng = prepared.rng.clone();
        group.bench_function(kind.name(), |b| {
            b.iter(|| {
                let mut sum = 0i64;
                for (task, nodes) in probe.iter().zip(&feasible) {
                    if nodes.len() > 1 {
                        policy.begin_task(nodes, &mut rng);
                    }
                    for &node in nodes {
                        sum = sum.wrapping_add(policy.score(&ctx, node, task));
                    }
                }
                sum
            })
        });
    }
    group.finish();
}

criterion_group!(benches, scoring);
criterion_main!(benches);
