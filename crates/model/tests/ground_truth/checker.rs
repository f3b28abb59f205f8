//! The placement checker on hand-built cases: each rule accepts a placement that meets its
//! capacity exactly and rejects one unit more, with the numbers it reports.

use gapbench_model::{
    check_placements, DeviceSet, GpuModel, GpuModelSet, Placement, Task, Violation,
};

use super::two_node_cluster as cluster;

fn on(node: u32, devices: &[usize]) -> Placement {
    Placement {
        node,
        devices: devices.iter().fold(DeviceSet::EMPTY, |set, &d| set.with(d)),
    }
}

fn check(placements: &[(&Task, Placement)]) -> Vec<Violation> {
    check_placements(&cluster(), placements.iter().map(|&(t, p)| (t, p)))
}

#[test]
fn a_cluster_filled_exactly_to_capacity_passes() {
    let cpu_a = Task::new("cpu-a", 5000, 10_000, 0, 0);
    let cpu_b = Task::new("cpu-b", 3000, 6384, 0, 0);
    let half_a = Task::new("half-a", 0, 0, 1, 500);
    let half_b = Task::new("half-b", 0, 0, 1, 500);
    let whole = Task::new("whole", 0, 0, 1, 1000);
    let small = Task::new("small", 4000, 8192, 0, 0);
    let placements = [
        (&cpu_a, on(0, &[])),
        (&cpu_b, on(0, &[])),
        (&half_a, on(0, &[1])),
        (&half_b, on(0, &[1])),
        (&whole, on(0, &[0])),
        (&small, on(1, &[])),
    ];
    assert_eq!(check(&placements), vec![]);
}

#[test]
fn one_milli_cpu_over_capacity_is_reported_with_the_sum() {
    let a = Task::new("a", 5000, 0, 0, 0);
    let b = Task::new("b", 3001, 0, 0, 0);
    assert_eq!(
        check(&[(&a, on(0, &[])), (&b, on(0, &[]))]),
        vec![Violation::CpuOvercommitted {
            node: 0,
            requested_milli: 8001,
            capacity_milli: 8000,
        }]
    );
}

#[test]
fn one_mib_over_capacity_is_reported_with_the_sum() {
    let a = Task::new("a", 0, 8000, 0, 0);
    let b = Task::new("b", 0, 193, 0, 0);
    assert_eq!(
        check(&[(&a, on(1, &[])), (&b, on(1, &[]))]),
        vec![Violation::MemoryOvercommitted {
            node: 1,
            requested_mib: 8193,
            capacity_mib: 8192,
        }]
    );
}

#[test]
fn a_device_shared_past_1000_milli_gpu_is_overcommitted() {
    let a = Task::new("a", 0, 0, 1, 600);
    let b = Task::new("b", 0, 0, 1, 401);
    let c = Task::new("c", 0, 0, 1, 1000);
    assert_eq!(
        check(&[(&a, on(0, &[1])), (&b, on(0, &[1])), (&c, on(0, &[0]))]),
        vec![Violation::GpuOvercommitted {
            node: 0,
            device: 1,
            requested_milli: 1001,
        }]
    );
}

#[test]
fn the_task_limit_allows_1001_tasks_per_node_and_no_more() {
    let tiny = Task::new("tiny", 0, 0, 0, 0);
    let at_limit: Vec<(&Task, Placement)> = (0..1001).map(|_| (&tiny, on(1, &[]))).collect();
    assert_eq!(check(&at_limit), vec![]);
    let over: Vec<(&Task, Placement)> = (0..1002).map(|_| (&tiny, on(1, &[]))).collect();
    assert_eq!(
        check(&over),
        vec![Violation::TooManyTasks {
            node: 1,
            tasks: 1002
        }]
    );
}

#[test]
fn a_node_past_the_end_is_unknown_and_charges_nothing() {
    let big = Task::new("big", 1_000_000, 1_000_000, 1, 1000);
    assert_eq!(
        check(&[(&big, on(2, &[0]))]),
        vec![Violation::UnknownNode {
            task: "big".into(),
            node: 2
        }]
    );
}

#[test]
fn a_task_must_use_exactly_its_gpu_count_of_devices() {
    let two = Task::new("two", 0, 0, 2, 1000);
    let cpu = Task::new("cpu", 0, 0, 0, 0);
    assert_eq!(
        check(&[(&two, on(0, &[1])), (&cpu, on(0, &[0])),]),
        vec![
            Violation::WrongDeviceCount {
                task: "two".into(),
                node: 0,
                expected: 2,
                got: 1
            },
            Violation::WrongDeviceCount {
                task: "cpu".into(),
                node: 0,
                expected: 0,
                got: 1
            },
        ]
    );
    assert_eq!(check(&[(&two, on(0, &[0, 1]))]), vec![]);
}

#[test]
fn only_whole_gpus_may_be_asked_for_several_at_a_time() {
    let partial_pair = Task::new("partial-pair", 0, 0, 2, 500);
    let whole_pair = Task::new("whole-pair", 0, 0, 2, 1000);
    let share = Task::new("share", 0, 0, 1, 999);
    assert_eq!(
        check(&[(&partial_pair, on(0, &[0, 1]))]),
        vec![Violation::PartialMultiGpu {
            task: "partial-pair".into()
        }]
    );
    assert_eq!(check(&[(&whole_pair, on(0, &[0, 1]))]), vec![]);
    assert_eq!(check(&[(&share, on(0, &[0]))]), vec![]);
}

#[test]
fn a_gpu_task_runs_only_on_a_model_it_allows() {
    let mut t4_only = Task::new("t4-only", 0, 0, 1, 1000);
    t4_only.gpu_models = GpuModelSet::of(&[GpuModel::T4]);
    let mut v100_or_t4 = Task::new("v100-or-t4", 0, 0, 1, 1000);
    v100_or_t4.gpu_models = GpuModelSet::of(&[GpuModel::T4, GpuModel::V100M32]);
    assert_eq!(
        check(&[(&t4_only, on(0, &[0]))]),
        vec![Violation::GpuModelNotAllowed {
            task: "t4-only".into(),
            node: 0
        }]
    );
    assert_eq!(check(&[(&v100_or_t4, on(0, &[0]))]), vec![]);
    // A CPU-only task is not subject to the model rule, even on a node without GPUs.
    let mut cpu_with_models = Task::new("cpu", 1000, 0, 0, 0);
    cpu_with_models.gpu_models = GpuModelSet::of(&[GpuModel::T4]);
    assert_eq!(check(&[(&cpu_with_models, on(1, &[]))]), vec![]);
}

#[test]
fn a_device_the_node_lacks_is_refused_and_not_charged() {
    let gpu = Task::new("gpu", 0, 0, 1, 1000);
    assert_eq!(
        check(&[(&gpu, on(0, &[2])), (&gpu, on(0, &[2]))]),
        vec![
            Violation::NoSuchDevice {
                task: "gpu".into(),
                node: 0,
                device: 2
            },
            Violation::NoSuchDevice {
                task: "gpu".into(),
                node: 0,
                device: 2
            },
        ]
    );
    assert_eq!(
        check(&[(&gpu, on(1, &[0]))]),
        vec![
            Violation::GpuModelNotAllowed {
                task: "gpu".into(),
                node: 1
            },
            Violation::NoSuchDevice {
                task: "gpu".into(),
                node: 1,
                device: 0
            },
        ]
    );
}

#[test]
fn violations_read_as_sentences_with_their_numbers() {
    let cases = [
        (
            Violation::UnknownNode {
                task: "t".into(),
                node: 7,
            },
            "task t placed on unknown node 7",
        ),
        (
            Violation::WrongDeviceCount {
                task: "t".into(),
                node: 1,
                expected: 2,
                got: 3,
            },
            "task t on node 1 uses 3 devices, needs 2",
        ),
        (
            Violation::NoSuchDevice {
                task: "t".into(),
                node: 1,
                device: 5,
            },
            "task t uses device 5 node 1 lacks",
        ),
        (
            Violation::GpuModelNotAllowed {
                task: "t".into(),
                node: 4,
            },
            "task t may not run on node 4's GPU model",
        ),
        (
            Violation::PartialMultiGpu { task: "t".into() },
            "task t asks for several partial GPUs, which is unsupported",
        ),
        (
            Violation::CpuOvercommitted {
                node: 0,
                requested_milli: 9,
                capacity_milli: 8,
            },
            "node 0: 9 milli-CPU placed, capacity 8",
        ),
        (
            Violation::MemoryOvercommitted {
                node: 0,
                requested_mib: 9,
                capacity_mib: 8,
            },
            "node 0: 9 MiB placed, capacity 8",
        ),
        (
            Violation::TooManyTasks {
                node: 3,
                tasks: 1002,
            },
            "node 3: 1002 tasks, at most 1001",
        ),
        (
            Violation::GpuOvercommitted {
                node: 2,
                device: 1,
                requested_milli: 1500,
            },
            "node 2 device 1: 1500 milli-GPU placed, capacity 1000",
        ),
    ];
    for (violation, text) in cases {
        assert_eq!(violation.to_string(), text);
    }
}
