//! The FGD fragmentation measure on small cases computed by hand. Probabilities are binary
//! fractions, so every expected figure is exact in f64.

use gapbench_model::frag::{NO_ACCESS, Q1, Q2, Q3, Q4, XL, XR};
use gapbench_model::{FragAccumulators, GpuModel, GpuModelSet, Task, TypicalPod, TypicalPods};

fn pod(cpu_milli: u32, gpu_count: u8, gpu_milli: u16, probability: f64) -> TypicalPod {
    TypicalPod {
        cpu_milli,
        gpu_milli,
        gpu_count,
        gpu_models: GpuModelSet::any(),
        count: 1,
        probability,
    }
}

/// A: 4 vCPU + half a GPU (½); B: 8 vCPU + a whole GPU (¼); C: 1 vCPU, no GPU (⅛);
/// D: 1 vCPU + half a T4 (⅛).
fn workload() -> TypicalPods {
    let mut t4_half = pod(1000, 1, 500, 0.125);
    t4_half.gpu_models = GpuModelSet::of(&[GpuModel::T4]);
    TypicalPods {
        pods: vec![
            pod(4000, 1, 500, 0.5),
            pod(8000, 1, 1000, 0.25),
            pod(1000, 0, 0, 0.125),
            t4_half,
        ],
        distinct_shapes: 4,
        coverage_pct: 100.0,
    }
}

fn classes(acc: FragAccumulators) -> [f64; 7] {
    acc.0
}

fn with(entries: &[(usize, f64)]) -> [f64; 7] {
    let mut acc = [0.0; 7];
    for &(class, milli) in entries {
        acc[class] = milli;
    }
    acc
}

#[test]
fn a_v100_node_with_6_vcpu_and_2300_milli_gpu_free() {
    let free = [1000, 1000, 300, 0];
    let acc = workload().node_accumulators(Some(GpuModel::V100M32), 6000, &free);
    // A fits on devices 0 and 1: their 2000 is usable (Q3), device 2's 300 too small (Q2).
    // B's CPU does not fit although a device would (Q4, all 2300). C needs no GPU and its
    // CPU fits (XL). D may not use a V100 (NoAccess).
    assert_eq!(
        classes(acc),
        with(&[
            (Q2, 0.5 * 300.0),
            (Q3, 0.5 * 2000.0),
            (Q4, 0.25 * 2300.0),
            (XL, 0.125 * 2300.0),
            (NO_ACCESS, 0.125 * 2300.0),
        ])
    );
    assert_eq!(acc.fragment_milli(), 150.0 + 575.0 + 287.5 + 287.5);
    assert_eq!(acc.q124_milli(), 150.0 + 575.0);
    assert_eq!(acc.total_milli(), 2300.0);
    assert_eq!(
        workload().node_fragment_milli(Some(GpuModel::V100M32), 6000, &free),
        1300.0
    );
}

#[test]
fn a_node_short_of_cpu_and_gpu_is_all_q1_and_xr() {
    let acc = workload().node_accumulators(Some(GpuModel::V100M32), 500, &[300, 0, 0, 0]);
    assert_eq!(
        classes(acc),
        with(&[
            (Q1, 0.5 * 300.0 + 0.25 * 300.0),
            (XR, 0.125 * 300.0),
            (NO_ACCESS, 0.125 * 300.0),
        ])
    );
}

#[test]
fn cpu_that_fits_with_no_device_large_enough_is_q2() {
    let acc = workload().node_accumulators(Some(GpuModel::T4), 8000, &[300, 300, 0, 0]);
    // T4 node: D is allowed now, and like A finds no device with 500 free.
    assert_eq!(
        classes(acc),
        with(&[
            (Q2, 0.5 * 600.0 + 0.25 * 600.0 + 0.125 * 600.0),
            (XL, 0.125 * 600.0),
        ])
    );
}

#[test]
fn exact_fits_are_usable() {
    // CPU exactly the request, a device with exactly the request free, and a two-GPU
    // task with exactly two whole devices free.
    let typical = TypicalPods {
        pods: vec![pod(4000, 1, 500, 0.5), pod(4000, 2, 1000, 0.5)],
        distinct_shapes: 2,
        coverage_pct: 100.0,
    };
    let acc = typical.node_accumulators(Some(GpuModel::A100), 4000, &[500, 1000, 1000, 0]);
    assert_eq!(
        classes(acc),
        with(&[(Q2, 0.5 * 500.0), (Q3, 0.5 * 2500.0 + 0.5 * 2000.0)])
    );
    // One whole device short of the two-GPU task: all of its share is a fragment.
    let short = typical.node_accumulators(Some(GpuModel::A100), 4000, &[500, 1000, 999, 0]);
    assert_eq!(
        classes(short),
        with(&[(Q2, 0.5 * 2499.0), (Q3, 0.5 * 2499.0)])
    );
}

#[test]
fn a_pod_restricted_to_the_nodes_model_is_not_shut_out() {
    let mut v100_half = pod(1000, 1, 500, 1.0);
    v100_half.gpu_models = GpuModelSet::of(&[GpuModel::V100M32]);
    let typical = TypicalPods {
        pods: vec![v100_half],
        distinct_shapes: 1,
        coverage_pct: 100.0,
    };
    let acc = typical.node_accumulators(Some(GpuModel::V100M32), 1000, &[1000, 200]);
    assert_eq!(classes(acc), with(&[(Q2, 200.0), (Q3, 1000.0)]));
}

#[test]
fn summaries_take_their_classes() {
    let acc = FragAccumulators([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]);
    assert_eq!(acc.fragment_milli(), 127.0 - 4.0);
    assert_eq!(acc.total_milli(), 127.0);
    assert_eq!(acc.q124_milli(), 1.0 + 2.0 + 8.0);
}

fn tasks(shapes: &[(usize, Task)]) -> Vec<Task> {
    shapes
        .iter()
        .flat_map(|(count, task)| std::iter::repeat_n(task.clone(), *count))
        .collect()
}

/// 5 × A (4 vCPU, ½ GPU), 3 × B (8 vCPU, 1 GPU), 1 × C (2 vCPU), 1 × D (16 vCPU, 2 GPUs).
fn ten_tasks() -> Vec<Task> {
    tasks(&[
        (5, Task::new("a", 4000, 0, 1, 500)),
        (3, Task::new("b", 8000, 0, 1, 1000)),
        (1, Task::new("c", 2000, 0, 0, 0)),
        (1, Task::new("d", 16_000, 0, 2, 1000)),
    ])
}

fn shapes(typical: &TypicalPods) -> Vec<(u32, u16, u8, usize, f64)> {
    typical
        .pods
        .iter()
        .map(|p| {
            (
                p.cpu_milli,
                p.gpu_milli,
                p.gpu_count,
                p.count,
                p.probability,
            )
        })
        .collect()
}

#[test]
fn typical_pods_cover_the_threshold_and_are_renormalised() {
    // 80 % of 10 tasks is 8: A (5) and B (3) reach it; their 0.5 and 0.3 become ⅝ and ⅜.
    let typical = TypicalPods::from_tasks(&ten_tasks(), 80.0);
    assert_eq!(
        shapes(&typical),
        vec![(4000, 500, 1, 5, 0.5 / 0.8), (8000, 1000, 1, 3, 0.3 / 0.8),]
    );
    assert_eq!(typical.distinct_shapes, 4);
    assert_eq!(typical.coverage_pct, 80.0);
}

#[test]
fn typical_pods_break_count_ties_by_the_larger_shape_first() {
    // 95 % of 10 is 9.5: every shape is needed. C and D tie at one task each; D's larger
    // CPU request ranks it first. All shapes taken: probabilities stay the plain shares.
    let typical = TypicalPods::from_tasks(&ten_tasks(), 95.0);
    assert_eq!(
        shapes(&typical),
        vec![
            (4000, 500, 1, 5, 0.5),
            (8000, 1000, 1, 3, 0.3),
            (16_000, 1000, 2, 1, 0.1),
            (2000, 0, 0, 1, 0.1),
        ]
    );
    assert_eq!(typical.coverage_pct, 100.0);
}

#[test]
fn cpu_only_tasks_share_one_shape_whatever_their_model_list() {
    let mut restricted = Task::new("restricted", 0, 0, 0, 0);
    restricted.gpu_models = GpuModelSet::of(&[GpuModel::T4]);
    let plain = Task::new("plain", 0, 0, 0, 0);
    let typical = TypicalPods::from_tasks(&[restricted, plain], 100.0);
    // A zero CPU request counts as Kubernetes' 100 milli default.
    assert_eq!(shapes(&typical), vec![(100, 0, 0, 2, 1.0)]);
    assert!(typical.pods[0].gpu_models.is_any());
}

#[test]
fn an_empty_trace_has_no_typical_pods_and_zero_coverage() {
    let typical = TypicalPods::from_tasks(&[], 95.0);
    assert_eq!(typical, TypicalPods::default());
}
