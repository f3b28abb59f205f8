//! Columns of the configuration LP: what one node of one type holds, and what that costs.
//!
//! A column is a concrete one-node placement (shape and device set per task slot) that
//! passes `check_placements` on a one-node cluster of its type; its cost is evaluated by the
//! model crate's own power model and fragmentation measure, relative to the empty node of
//! the same type (so the empty configuration costs 0 and is the convexity row's slack).

use std::collections::HashMap;

use gapbench_model::{
    check_placements, Cluster, ClusterState, DeviceSet, NodeType, Placement, Task, TypicalPods,
};

use crate::node_value::NodeValue;
use crate::shapes::Shapes;
use crate::snapshot::Snapshot;
use crate::solve::Objective;

/// One node type of the snapshot's cluster as a cluster of its own (one node), so the
/// checker, power model and fragmentation measure judge a column exactly as they judge a
/// node of the full cluster.
pub(crate) struct TypeCluster {
    /// Index into the full cluster's `node_types`.
    pub type_id: usize,
    /// How many nodes of this type the full cluster has (`N_τ`).
    pub nodes: usize,
    pub one_node: Cluster,
    /// The cost of the empty node (power in W, Σ F in milli-GPU, 0 for allocation).
    pub empty_cost: f64,
    /// What waking an empty node adds to every non-empty configuration beyond its cost
    /// from the idle node: 0, or for power with sleeping empty nodes
    /// ([`TypeCluster::asleep`]) `idle − sleep`. Pricing's search ([`NodeValue`]) measures
    /// from the idle node, so its bound on `ρ_τ` is shifted by this.
    pub wake_cost: f64,
    /// The node's own part of the objective by CPU level and device, for pattern pricing.
    pub value: NodeValue,
    /// For fragmentation, the weight `w` (milli-GPU per W) of power in the cost
    /// `F(n) + w·P(n)`: 0 for fragmentation alone, positive for a point of the
    /// power–fragmentation front ([`super::front`]).
    pub watts_weight: f64,
}

impl TypeCluster {
    /// One entry per node type with at least one node, in type order; `watts_weight` as in
    /// [`TypeCluster::watts_weight`] (ignored but for fragmentation).
    pub fn of(
        cluster: &Cluster,
        objective: Objective,
        typical: &TypicalPods,
        watts_weight: f64,
    ) -> Result<Vec<TypeCluster>, String> {
        let watts_weight = if objective == Objective::Frag {
            watts_weight
        } else {
            0.0
        };
        let counts = cluster.type_counts();
        let mut types = Vec::new();
        for (type_id, node_type) in cluster.node_types.iter().enumerate() {
            if counts[type_id] == 0 {
                continue;
            }
            let mut one_node = cluster
                .sibling([(node_type.label(), *node_type)])
                .map_err(|e| e.to_string())?;
            // The full cluster's own power model of the type (a caller may have lowered
            // it, e.g. to the lowest clock's dynamic power).
            one_node.power_models[0] = cluster.power_models[type_id];
            let empty = ClusterState::empty(&one_node);
            let empty_cost = node_cost(&one_node, typical, objective, watts_weight, &empty, 0);
            let power = || {
                NodeValue::power(
                    one_node.power_model(0),
                    node_type.cpu_milli,
                    u32::from(node_type.gpu_count),
                )
            };
            let value = match objective {
                Objective::Frag if watts_weight > 0.0 => {
                    NodeValue::fragmentation(node_type, typical).plus(watts_weight, &power())
                }
                Objective::Frag => NodeValue::fragmentation(node_type, typical),
                Objective::Power => power(),
                Objective::Alloc => {
                    NodeValue::nothing(node_type.cpu_milli, u32::from(node_type.gpu_count))
                }
            };
            types.push(TypeCluster {
                type_id,
                nodes: counts[type_id],
                one_node,
                empty_cost,
                wake_cost: 0.0,
                value,
                watts_weight,
            });
        }
        Ok(types)
    }

    pub fn node_type(&self) -> &NodeType {
        &self.one_node.node_types[0]
    }

    /// For power: empty nodes of this type sleep at `sleep_watts` instead of idling. The
    /// empty node then costs `sleep_watts` and every non-empty configuration `P(c) −
    /// sleep_watts`, i.e. `wake_cost = idle − sleep` more than its cost from the idle node.
    pub fn asleep(&mut self, sleep_watts: f64) {
        self.wake_cost = self.empty_cost - sleep_watts;
        self.empty_cost = sleep_watts;
    }

    /// The cost of a one-node state relative to the empty node (see [`Column::cost`]); 0
    /// for the empty state.
    pub fn relative_cost(
        &self,
        typical: &TypicalPods,
        objective: Objective,
        state: &ClusterState,
        allocated_gpu_milli: u64,
    ) -> f64 {
        if state.nodes[0].task_count == 0 {
            return 0.0;
        }
        node_cost(
            &self.one_node,
            typical,
            objective,
            self.watts_weight,
            state,
            allocated_gpu_milli,
        ) - self.empty_cost
    }
}

/// The objective's value of a one-node state: power (W), F(n) (milli-GPU) plus
/// `watts_weight` times power, or `−allocated` (everything is minimised inside column
/// generation).
fn node_cost(
    one_node: &Cluster,
    typical: &TypicalPods,
    objective: Objective,
    watts_weight: f64,
    state: &ClusterState,
    allocated_gpu_milli: u64,
) -> f64 {
    let node = &state.nodes[0];
    let power = || node_watts(one_node, state);
    match objective {
        Objective::Power => power(),
        Objective::Frag => {
            let fragment = typical.node_fragment_milli(
                one_node.node_types[0].gpu_model,
                node.cpu_left_milli,
                node.free_gpu_milli(),
            );
            if watts_weight > 0.0 {
                fragment + watts_weight * power()
            } else {
                fragment
            }
        }
        Objective::Alloc => -(allocated_gpu_milli as f64),
    }
}

/// The power of a one-node state, by the cluster's own power model (W).
fn node_watts(one_node: &Cluster, state: &ClusterState) -> f64 {
    let node = &state.nodes[0];
    one_node
        .power_model(0)
        .node_power(node.cpu_left_milli, node.free_gpu_milli())
        .total_watts() as f64
}

/// A configuration: tasks (by shape) and their devices on one node of type `type_index`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Column {
    /// Index into the `TypeCluster` list.
    pub type_index: usize,
    /// `(shape, tasks)`, shapes ascending, counts > 0: the column's coefficients in the
    /// demand rows.
    pub counts: Vec<(usize, u32)>,
    /// One entry per task slot: its shape and devices.
    pub slots: Vec<(usize, DeviceSet)>,
    /// Cost relative to the empty node of the type: `c(config) − c(empty)`.
    pub cost: f64,
    /// Power relative to the idle node of the type, `P(config) − P(empty)` in W, whatever
    /// the objective: the coefficient of a power cap row ([`super::front`]).
    pub watts: f64,
    /// CPU sockets at work (`PowerModel::active_sockets`): the coefficient of a branching
    /// row on a type's sockets ([`super::branch`]).
    pub sockets: u32,
}

impl Column {
    /// Builds and judges a column from its slots. Errors when the slots do not fit on one
    /// node of the type (the checker's verdict).
    pub fn new(
        type_index: usize,
        types: &[TypeCluster],
        shapes: &Shapes,
        tasks: &[Task],
        typical: &TypicalPods,
        objective: Objective,
        mut slots: Vec<(usize, DeviceSet)>,
    ) -> Result<Column, String> {
        let kind = &types[type_index];
        slots.sort_unstable_by_key(|&(s, devices)| (s, devices.0));
        let mut counts: Vec<(usize, u32)> = Vec::new();
        for &(s, _) in &slots {
            match counts.last_mut() {
                Some((last, n)) if *last == s => *n += 1,
                _ => counts.push((s, 1)),
            }
        }
        for &(s, n) in &counts {
            if n as usize > shapes.shapes[s].count() {
                return Err(format!(
                    "a configuration holds {n} tasks of a shape with {} tasks",
                    shapes.shapes[s].count()
                ));
            }
        }
        // A representative task of each shape (all tasks of a shape are alike).
        let task_of = |s: usize| &tasks[shapes.shapes[s].tasks[0]];
        let violations = check_placements(
            &kind.one_node,
            slots
                .iter()
                .map(|&(s, devices)| (task_of(s), Placement { node: 0, devices })),
        );
        if let Some(first) = violations.first() {
            return Err(format!(
                "a configuration for {} fails the checker: {first}",
                kind.node_type().label()
            ));
        }
        let mut state = ClusterState::empty(&kind.one_node);
        let mut allocated = 0u64;
        for &(s, devices) in &slots {
            state.bind(task_of(s), Placement { node: 0, devices });
            allocated += u64::from(shapes.shapes[s].total_gpu_milli());
        }
        let cost = kind.relative_cost(typical, objective, &state, allocated);
        let empty = ClusterState::empty(&kind.one_node);
        let watts = node_watts(&kind.one_node, &state) - node_watts(&kind.one_node, &empty);
        let sockets = kind
            .one_node
            .power_model(0)
            .active_sockets(state.nodes[0].cpu_left_milli);
        Ok(Column {
            type_index,
            counts,
            slots,
            cost,
            watts,
            sockets,
        })
    }

    /// `Σ_s a_s·y_s`: the column's value under shape prices `y`.
    pub fn priced(&self, prices: &[f64]) -> f64 {
        self.counts
            .iter()
            .map(|&(s, n)| f64::from(n) * prices[s])
            .sum()
    }
}

/// The columns generated so far, deduplicated by (type, shape counts): of two columns with
/// the same coefficients the cheaper is kept (its cost is all the master sees).
#[derive(Default)]
pub(crate) struct ColumnPool {
    pub columns: Vec<Column>,
    index: HashMap<(usize, Vec<(usize, u32)>), usize>,
}

/// What adding a column did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Added {
    New(usize),
    /// Same coefficients as column `.0`, now at the lower cost.
    Cheaper(usize),
    Known(usize),
}

impl ColumnPool {
    pub fn add(&mut self, column: Column) -> Added {
        let key = (column.type_index, column.counts.clone());
        match self.index.get(&key) {
            Some(&i) if column.cost < self.columns[i].cost - 1e-9 => {
                self.columns[i] = column;
                Added::Cheaper(i)
            }
            Some(&i) => Added::Known(i),
            None => {
                self.index.insert(key, self.columns.len());
                self.columns.push(column);
                Added::New(self.columns.len() - 1)
            }
        }
    }

    /// [`Self::add`] for columns judged by two costs (`cost` and `watts`, the power-capped
    /// front): a column with the coefficients of known ones is added too unless one of
    /// them is at most as dear in both.
    pub fn add_unless_dominated(&mut self, column: Column) -> Added {
        let twins = || {
            self.columns.iter().enumerate().filter(|(_, known)| {
                known.type_index == column.type_index && known.counts == column.counts
            })
        };
        let dominating = twins().find(|(_, known)| {
            known.cost <= column.cost + 1e-9 && known.watts <= column.watts + 1e-9
        });
        match dominating {
            Some((i, _)) => Added::Known(i),
            None if twins().next().is_none() => self.add(column),
            None => {
                // Not indexed: the index keeps the first column of these coefficients.
                self.columns.push(column);
                Added::New(self.columns.len() - 1)
            }
        }
    }

    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// The `k` columns of type `type_index` with the least reduced cost under `prices`
    /// (the local search's seeds).
    pub fn best_of_type(&self, type_index: usize, prices: &[f64], k: usize) -> Vec<&Column> {
        let mut of_type: Vec<(&Column, f64)> = self
            .columns
            .iter()
            .filter(|c| c.type_index == type_index)
            .map(|c| (c, c.cost - c.priced(prices)))
            .collect();
        of_type.sort_by(|a, b| a.1.total_cmp(&b.1));
        of_type.into_iter().take(k).map(|(c, _)| c).collect()
    }
}

/// The heuristic's own node configurations as columns, and how many nodes use each: an
/// integer solution of the master from the start. Nodes holding none of the shapes' tasks
/// are the empty configuration (the slack). Errors when a heuristic node fails to become a
/// column (it passed the checker on the full cluster, so it cannot).
pub(crate) fn heuristic_columns(
    snapshot: &Snapshot,
    types: &[TypeCluster],
    shapes: &Shapes,
    objective: Objective,
    pool: &mut ColumnPool,
) -> Result<Vec<(usize, u32)>, String> {
    let (cluster, tasks, typical) = (snapshot.cluster, snapshot.tasks, snapshot.typical);
    let heuristic = &snapshot.heuristic;
    let shape_of = shapes.shape_of_task(tasks.len());
    let mut per_node: Vec<Vec<(usize, DeviceSet)>> = vec![Vec::new(); cluster.len()];
    for (task, placement) in heuristic.iter().enumerate() {
        if let (Some(p), Some(s)) = (placement, shape_of[task]) {
            per_node[p.node as usize].push((s, p.devices));
        }
    }
    let type_index: HashMap<usize, usize> = types
        .iter()
        .enumerate()
        .map(|(i, t)| (t.type_id, i))
        .collect();
    let mut uses: HashMap<usize, u32> = HashMap::new();
    for (node, slots) in per_node.into_iter().enumerate() {
        if slots.is_empty() {
            continue;
        }
        let type_id = usize::from(cluster.nodes[node].type_id);
        let column = Column::new(
            type_index[&type_id],
            types,
            shapes,
            tasks,
            typical,
            objective,
            slots,
        )
        .map_err(|e| format!("the heuristic's node {node}: {e}"))?;
        let i = match pool.add(column) {
            Added::New(i) | Added::Cheaper(i) | Added::Known(i) => i,
        };
        *uses.entry(i).or_default() += 1;
    }
    let mut uses: Vec<(usize, u32)> = uses.into_iter().collect();
    uses.sort_unstable();
    Ok(uses)
}
