use super::*;
use crate::cg::column::{Column, TypeCluster};
use crate::solve::Objective;
use gapbench_model::{
    check_placements, Cluster, ClusterState, CpuPowerProfile, GpuModel, NodeType, Placement, Task,
    TypicalPods,
};
use proptest::prelude::*;

fn one_node(gpus: u8, vcpus: u32) -> Cluster {
    let node_type = NodeType {
        gpu_model: Some(GpuModel::G2),
        gpu_count: gpus,
        cpu_milli: vcpus * 1000,
        memory_mib: 64 * 1024,
    };
    Cluster::new([("n0".to_string(), node_type)], CpuPowerProfile::Reference).unwrap()
}

fn tasks_of(raw: &[(u32, u8, u16)], prefix: &str) -> Vec<Task> {
    // Memory varies with the position, so that it binds on the 64 GiB node now and then.
    raw.iter()
        .enumerate()
        .map(|(i, &(cpu, count, milli))| {
            let memory_mib = [4096, 24576, 1024][i % 3];
            Task::new(format!("{prefix}{i}"), cpu, memory_mib, count, milli)
        })
        .collect()
}

/// The least `cost(c) − cost(empty) − Σ_s y_s·n_s` over every placement of every subset
/// of `tasks` on the node, judged by the model's checker, power model and fragment
/// measure.
fn brute_force(
    kind: &TypeCluster,
    objective: Objective,
    typical: &TypicalPods,
    tasks: &[Task],
    prices: &[f64],
    shapes: &Shapes,
) -> f64 {
    let devices = usize::from(kind.node_type().gpu_count);
    let shape_of = shapes.shape_of_task(tasks.len());
    let choices = |task: &Task| -> Vec<Option<DeviceSet>> {
        if task.gpu_count == 0 {
            return vec![None, Some(DeviceSet::EMPTY)];
        }
        let mut options = vec![None];
        for mask in 1u16..(1 << devices) {
            if mask.count_ones() == u32::from(task.gpu_count) {
                options.push(Some(DeviceSet(mask as u8)));
            }
        }
        options
    };
    let mut best = 0.0f64;
    let mut chosen: Vec<Option<DeviceSet>> = vec![None; tasks.len()];
    fn walk(
        k: usize,
        tasks: &[Task],
        chosen: &mut Vec<Option<DeviceSet>>,
        visit: &mut dyn FnMut(&[Option<DeviceSet>]),
        choices: &dyn Fn(&Task) -> Vec<Option<DeviceSet>>,
    ) {
        if k == tasks.len() {
            visit(chosen);
            return;
        }
        for option in choices(&tasks[k]) {
            chosen[k] = option;
            walk(k + 1, tasks, chosen, visit, choices);
        }
    }
    let mut visit = |chosen: &[Option<DeviceSet>]| {
        let placed = || {
            chosen.iter().enumerate().filter_map(|(t, d)| {
                Some((
                    &tasks[t],
                    Placement {
                        node: 0,
                        devices: (*d)?,
                    },
                ))
            })
        };
        if !check_placements(&kind.one_node, placed()).is_empty() {
            return;
        }
        let mut state = ClusterState::empty(&kind.one_node);
        let (mut earned, mut allocated) = (0.0, 0u64);
        for (task, placement) in placed() {
            state.bind(task, placement);
            allocated += u64::from(task.gpu_count) * u64::from(task.gpu_milli);
        }
        for (t, d) in chosen.iter().enumerate() {
            if d.is_some() {
                earned += prices[shape_of[t].unwrap()];
            }
        }
        let cost = kind.relative_cost(typical, objective, &state, allocated);
        best = best.min(cost - earned);
    };
    walk(0, tasks, &mut chosen, &mut visit, &choices);
    best
}

fn task_strategy() -> impl Strategy<Value = (u32, u8, u16)> {
    let gpus = prop_oneof![
        1 => Just((0u8, 0u16)),
        // 157 and 333 make the shares' gcd 1: the dynamic program's coarser load units.
        4 => prop::sample::select(vec![157u16, 160, 230, 320, 333, 470, 550, 650, 810]).prop_map(|m| (1u8, m)),
        2 => Just((1u8, 1000u16)),
        1 => Just((2u8, 1000u16)),
    ];
    (
        prop::sample::select(vec![2000u32, 4000, 6000, 12000, 20000]),
        gpus,
    )
        .prop_map(|(cpu, (count, milli))| (cpu, count, milli))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]
    /// Pattern pricing finds the brute-force optimum of every objective (and of
    /// fragmentation plus weighted power) when it claims a proof, its lower bound never passes it, and its configuration passes the checker.
    #[test]
    fn pattern_pricing_finds_the_brute_force_optimum(
        raw in prop::collection::vec(task_strategy(), 1..=6),
        typical_raw in prop::collection::vec(task_strategy(), 1..=10),
        prices in prop::collection::vec(-600.0f64..600.0, 6),
        gpus in 1u8..=3,
        vcpus in prop::sample::select(vec![16u32, 32]),
        objective in prop::sample::select(vec![Objective::Frag, Objective::Power, Objective::Alloc]),
        // Fragmentation plus a weight on power: a point of the power–fragmentation front.
        watts_weight in prop::sample::select(vec![0.0, 0.0, 0.4, 3.0]),
        // A scan budget (a capped column generation's) must leave the bound valid.
        scans in prop::sample::select(vec![None, None, Some(0u64), Some(3), Some(40)]),
    ) {
        let cluster = one_node(gpus, vcpus);
        let tasks = tasks_of(&raw, "t");
        let typical = TypicalPods::from_tasks(&tasks_of(&typical_raw, "typ"), 95.0);
        let shapes = Shapes::group(&tasks, 0..tasks.len()).unwrap();
        let types = TypeCluster::of(&cluster, objective, &typical, watts_weight).unwrap();
        let total: f64 = typical.pods.iter().map(|p| p.probability).sum();
        let milli = |s: usize| f64::from(shapes.shapes[s].total_gpu_milli());
        let profit = |s: usize| match objective {
            Objective::Frag => prices[s] + total * milli(s),
            Objective::Alloc => prices[s] + milli(s),
            Objective::Power => prices[s],
        };
        let searched = best_configuration(types[0].node_type(), &types[0].value, &shapes, profit, None, None, scans, false);
        let optimum = brute_force(&types[0], objective, &typical, &tasks, &prices, &shapes);
        prop_assert!(searched.lower_bound <= optimum + 1e-6, "bound {} > optimum {optimum}", searched.lower_bound);
        let slots = &searched.slots;
        let placed = slots.iter().map(|&(s, devices)| {
            (&tasks[shapes.shapes[s].tasks[0]], Placement { node: 0, devices })
        });
        prop_assert!(check_placements(&types[0].one_node, placed).is_empty());
        let value = if slots.is_empty() {
            0.0
        } else {
            let column = Column::new(0, &types, &shapes, &tasks, &typical, objective, slots.clone()).unwrap();
            column.cost - column.priced(&prices[..shapes.shapes.len()])
        };
        prop_assert!(value >= optimum - 1e-6, "found {value} below the optimum {optimum}");
        if searched.proven {
            prop_assert!((value - optimum).abs() <= 1e-6, "search {value} vs optimum {optimum}");
        }
    }
}

#[test]
fn a_half_free_device_is_worth_keeping_for_a_half_gpu_pod() {
    // Typical pods: a half-GPU pod (8 vCPU). One device; tasks: a 500-milli share that
    // earns little. Keeping the device free keeps all 1000 milli out of the fragment, a
    // 500 share leaves 500 that the typical pod still fits, so the share is placed only
    // when its price beats what it takes away.
    let cluster = one_node(1, 16);
    let typical = TypicalPods::from_tasks(&tasks_of(&[(8000, 1, 500)], "typ"), 95.0);
    let tasks = tasks_of(&[(4000, 1, 500)], "t");
    let shapes = Shapes::group(&tasks, 0..1).unwrap();
    let types = TypeCluster::of(&cluster, Objective::Frag, &typical, 0.0).unwrap();
    let value = NodeValue::fragmentation(types[0].node_type(), &typical);
    // F(empty) = 0; with the share, F = 0 as well (500 left, the pod fits): any positive
    // price makes the share worth placing, at reduced cost −price.
    let searched = best_configuration(
        types[0].node_type(),
        &value,
        &shapes,
        |_| 10.0 + 500.0,
        None,
        None,
        None,
        false,
    );
    assert!(searched.proven);
    assert_eq!(searched.slots.len(), 1);
    assert!(
        (searched.lower_bound + 10.0).abs() < 1e-6,
        "{}",
        searched.lower_bound
    );
    // 12 vCPU tasks leave 4 vCPU: the pod no longer fits, 500 milli become fragment.
    let tasks = tasks_of(&[(12000, 1, 500)], "t");
    let shapes = Shapes::group(&tasks, 0..1).unwrap();
    let searched = best_configuration(
        types[0].node_type(),
        &value,
        &shapes,
        |_| 10.0 + 500.0,
        None,
        None,
        None,
        false,
    );
    assert!(searched.proven);
    assert!(
        searched.slots.is_empty(),
        "500 milli of fragment for a price of 10"
    );
}

#[test]
fn a_level_sharing_a_wider_levels_table_bounds_exactly_as_its_own() {
    // Power's levels differ only in their sockets: each level below the top reads the
    // top's dynamic program, cut to the CPU it allows. Every entry must equal the table
    // the level would build for itself.
    let cluster = one_node(8, 96);
    let raw = [
        (12000, 1, 1000),
        (6000, 1, 470),
        (20000, 0, 0),
        (4000, 1, 230),
        (2000, 2, 1000),
        (12000, 1, 650),
    ];
    let tasks = tasks_of(&raw, "t");
    let typical = TypicalPods::from_tasks(&tasks, 95.0);
    let shapes = Shapes::group(&tasks, 0..tasks.len()).unwrap();
    let types = TypeCluster::of(&cluster, Objective::Power, &typical, 0.0).unwrap();
    let (node_type, value) = (types[0].node_type(), &types[0].value);
    let items = pricing_items(node_type, &shapes, |s| 40.0 + 25.0 * s as f64, false);
    let relaxation = Relaxation::new(
        &items,
        value,
        u64::from(node_type.cpu_milli),
        node_type.memory_mib,
    );
    let shares = ShareTable::new(&relaxation, 0.01);
    let levels = value.levels.len();
    let mut shared = 0;
    for level in 0..levels - 1 {
        if !value.same_devices(level, level + 1) {
            continue;
        }
        shared += 1;
        for free_allowed in [false, true] {
            let wider = SlotTable::new(&relaxation, &shares, level + 1, free_allowed);
            let own = SlotTable::new(&relaxation, &shares, level, free_allowed);
            let sharing = SlotTable::sharing(&wider, &relaxation, &shares, level);
            let units = shares.units(value.levels[level].cpu_used_at_most);
            for count in 0..=value.devices {
                let slots = Slots {
                    count,
                    free_allowed,
                };
                assert_eq!(
                    own.bound(slots),
                    sharing.bound(slots),
                    "level {level}, {slots:?}"
                );
                for c in 0..=units + 3 {
                    assert_eq!(
                        own.rest(count, c),
                        sharing.rest(count, c),
                        "level {level}, r {count}, c {c}"
                    );
                }
            }
        }
    }
    assert!(shared > 0, "power's {levels} levels should share tables");
}
