//! The instance library: a solved snapshot as a self-contained [`InstanceFile`] (node
//! types, task shapes, models, best placements by node type), and back — the file's
//! cluster, tasks and placements rebuilt in the model crate's types, so the checker and the
//! model's own power and fragment measure re-evaluate what the file claims.
//!
//! A placement is stored per node type as configurations (how many nodes hold exactly which
//! tasks, on which devices): identical nodes and identical tasks are interchangeable for
//! every objective, and a whole-cluster placement has a few hundred distinct nodes where it
//! has ten thousand tasks. Devices of a node are relabelled canonically (busiest first) so
//! nodes that differ only by device numbering share one configuration.

use std::collections::BTreeMap;

use gapbench_model::power::GpuPowerProfile;
use gapbench_model::{
    check_placements, Cluster, CpuPowerProfile, DeviceSet, GpuModel, GpuModelSet, GpuModelSpec,
    GpuModelTable, NodeType, Placement, Task, TypicalPod, TypicalPods, MAX_GPUS_PER_NODE,
};
use gapbench_results::instance::{
    status_meaning, Configuration, FragmentationModelSpec, HeuristicSolution, InstanceFile,
    InstanceNodeType, InstanceShape, PlacedTask, PowerModelSpec, Problem, Provenance,
    TypicalPodSpec, ALLOCATION_FORMULA, FRAGMENTATION_FORMULA, PLACEMENT_RULES, POWER_FORMULA,
};
use gapbench_results::{INSTANCE_FORMAT, INSTANCE_FORMAT_VERSION};

use crate::error::SolveError;
use crate::eval::{alloc_gpu_milli, frag_milli, power_watts, state_of};
use crate::gap::heuristic_value;
use crate::shapes::Shapes;
use crate::snapshot::Snapshot;
use crate::solve::{Objective, SolveReport};

/// The name of a CPU power profile in instance files.
pub fn cpu_power_profile_name(profile: CpuPowerProfile) -> &'static str {
    match profile {
        CpuPowerProfile::Reference => "reference",
        CpuPowerProfile::ByGpuModel => "by-gpu-model",
    }
}

/// The instance of `snapshot` with one problem per report (each with its placement).
/// `name` and `provenance` come from the runner, which knows the command and inputs.
/// Errors when a report's placement does not belong to the snapshot.
pub fn build_instance(
    name: String,
    provenance: Provenance,
    snapshot: &Snapshot,
    reports: &[SolveReport],
) -> Result<InstanceFile, SolveError> {
    built(name, provenance, snapshot, reports).map_err(SolveError::Instance)
}

fn built(
    name: String,
    provenance: Provenance,
    snapshot: &Snapshot,
    reports: &[SolveReport],
) -> Result<InstanceFile, String> {
    let cluster = snapshot.cluster;
    let shapes = Shapes::group(snapshot.tasks, 0..snapshot.tasks.len())?;
    let shape_of = shapes.shape_of_task(snapshot.tasks.len());
    let node_types = instance_node_types(cluster);
    let instance_shapes = instance_shapes(&shapes, snapshot);
    let configurations =
        |assignment: &[Option<Placement>]| configurations_of(cluster, &shape_of, assignment);
    let mut problems = Vec::new();
    for report in reports {
        let placement = if report.placement.is_empty() {
            Vec::new()
        } else {
            configurations(&report.placement)
                .map_err(|e| format!("{} placement: {e}", report.objective.name()))?
        };
        problems.push(problem_of(report, placement));
    }
    Ok(InstanceFile {
        format: INSTANCE_FORMAT.into(),
        format_version: INSTANCE_FORMAT_VERSION,
        name,
        provenance,
        placement_rules: PLACEMENT_RULES.into(),
        node_types,
        shapes: instance_shapes,
        power_model: PowerModelSpec {
            formula: POWER_FORMULA.into(),
        },
        fragmentation_model: fragmentation_spec(snapshot.typical),
        heuristic: HeuristicSolution {
            power_watts: heuristic_value(snapshot, Objective::Power),
            alloc_gpu_milli: heuristic_value(snapshot, Objective::Alloc),
            frag_milli: heuristic_value(snapshot, Objective::Frag),
            placement: configurations(&snapshot.heuristic)
                .map_err(|e| format!("heuristic: {e}"))?,
        },
        problems,
    })
}

/// The cluster's node types as the file describes them: capacities, power profile and
/// the empty node's power, with how many nodes of each there are.
fn instance_node_types(cluster: &Cluster) -> Vec<InstanceNodeType> {
    cluster
        .node_types
        .iter()
        .zip(&cluster.power_models)
        .zip(cluster.type_counts())
        .map(|((node_type, power), count)| {
            let empty = gapbench_model::state::NodeState::empty(node_type);
            InstanceNodeType {
                count,
                cpu_milli: node_type.cpu_milli,
                memory_mib: node_type.memory_mib,
                gpu_model: node_type.gpu_model.map(|m| m.name().to_string()),
                gpu_count: node_type.gpu_count,
                cpu_socket_idle_watts: power.socket.idle_watts,
                cpu_socket_full_watts: power.socket.full_watts,
                cores_per_socket: power.socket.cores_per_socket,
                gpu_idle_watts: power.gpu.map_or(0, |g| g.idle_watts),
                gpu_full_watts: power.gpu.map_or(0, |g| g.full_watts),
                empty_node_watts: power
                    .node_power(empty.cpu_left_milli, empty.free_gpu_milli())
                    .total_watts(),
            }
        })
        .collect()
}

/// The task shapes as the file describes them, with how many tasks of each arrived and
/// how many the heuristic placed.
fn instance_shapes(shapes: &Shapes, snapshot: &Snapshot) -> Vec<InstanceShape> {
    shapes
        .shapes
        .iter()
        .map(|shape| InstanceShape {
            cpu_milli: shape.cpu_milli,
            memory_mib: shape.memory_mib,
            gpu_count: shape.gpu_count,
            gpu_milli: shape.gpu_milli,
            gpu_models: model_list(&shape.gpu_models),
            arrived: shape.count(),
            placed: shape
                .tasks
                .iter()
                .filter(|&&t| snapshot.heuristic[t].is_some())
                .count(),
        })
        .collect()
}

fn model_list(models: &GpuModelSet) -> Vec<String> {
    models
        .spec()
        .split('|')
        .filter(|m| !m.is_empty())
        .map(str::to_string)
        .collect()
}

fn fragmentation_spec(typical: &TypicalPods) -> FragmentationModelSpec {
    FragmentationModelSpec {
        formula: FRAGMENTATION_FORMULA.into(),
        typical_pods: typical
            .pods
            .iter()
            .map(|pod| TypicalPodSpec {
                cpu_milli: pod.cpu_milli,
                gpu_milli: pod.gpu_milli,
                gpu_count: pod.gpu_count,
                gpu_models: model_list(&pod.gpu_models),
                count: pod.count,
                probability: pod.probability,
            })
            .collect(),
        distinct_shapes: typical.distinct_shapes,
        coverage_pct: typical.coverage_pct,
    }
}

fn problem_of(report: &SolveReport, placement: Vec<Configuration>) -> Problem {
    let (sense, unit, tasks, formula) = match report.objective {
        Objective::Power => (
            "minimize",
            "watts",
            "place exactly `placed` tasks of every shape",
            POWER_FORMULA,
        ),
        Objective::Frag => (
            "minimize",
            "milli_gpu",
            "place exactly `placed` tasks of every shape",
            FRAGMENTATION_FORMULA,
        ),
        Objective::Alloc => (
            "maximize",
            "milli_gpu",
            "place at most `arrived` tasks of every shape (any subset)",
            ALLOCATION_FORMULA,
        ),
    };
    Problem {
        objective: report.objective,
        sense: sense.into(),
        unit: unit.into(),
        tasks: tasks.into(),
        formula: formula.into(),
        status: report.status.clone(),
        status_meaning: status_meaning(&report.status).into(),
        value: report.incumbent,
        bound: report.bound,
        solve_s: report.solve_seconds,
        power_watts: report.secondary_power_watts,
        placement,
    }
}

/// A per-task assignment as configurations: per node, its tasks' shapes and (canonically
/// relabelled) devices; identical nodes of a type counted once. Sorted, so equal
/// placements give equal files.
fn configurations_of(
    cluster: &Cluster,
    shape_of: &[Option<usize>],
    assignment: &[Option<Placement>],
) -> Result<Vec<Configuration>, String> {
    if assignment.len() != shape_of.len() {
        return Err(format!(
            "{} placements for {} tasks",
            assignment.len(),
            shape_of.len()
        ));
    }
    let mut per_node: Vec<Vec<(usize, DeviceSet)>> = vec![Vec::new(); cluster.len()];
    for (task, placement) in assignment.iter().enumerate() {
        if let Some(placement) = placement {
            let shape = shape_of[task].ok_or_else(|| format!("task {task} has no shape"))?;
            per_node
                .get_mut(placement.node as usize)
                .ok_or_else(|| format!("task {task} on unknown node {}", placement.node))?
                .push((shape, placement.devices));
        }
    }
    let mut counts: BTreeMap<(usize, Vec<PlacedTask>), usize> = BTreeMap::new();
    for (node, tasks) in per_node.into_iter().enumerate() {
        if tasks.is_empty() {
            continue;
        }
        let node_type = usize::from(cluster.nodes[node].type_id);
        *counts
            .entry((node_type, canonical_tasks(tasks)))
            .or_default() += 1;
    }
    Ok(counts
        .into_iter()
        .map(|((node_type, tasks), nodes)| Configuration {
            node_type,
            nodes,
            tasks,
        })
        .collect())
}

/// One node's tasks with its devices relabelled: devices ordered by the shapes they serve
/// (the busiest first, ties by original index), then tasks sorted.
fn canonical_tasks(tasks: Vec<(usize, DeviceSet)>) -> Vec<PlacedTask> {
    let mut served: Vec<Vec<usize>> = vec![Vec::new(); MAX_GPUS_PER_NODE];
    for &(shape, devices) in &tasks {
        for device in devices.iter() {
            served[device].push(shape);
        }
    }
    for shapes in &mut served {
        shapes.sort_unstable();
    }
    let mut order: Vec<usize> = (0..MAX_GPUS_PER_NODE).collect();
    order.sort_by(|&a, &b| {
        (served[b].len(), &served[b])
            .cmp(&(served[a].len(), &served[a]))
            .then(a.cmp(&b))
    });
    let mut label = [0usize; MAX_GPUS_PER_NODE];
    for (new, &old) in order.iter().enumerate() {
        label[old] = new;
    }
    let mut placed: Vec<PlacedTask> = tasks
        .into_iter()
        .map(|(shape, devices)| {
            let mut devices: Vec<usize> = devices.iter().map(|d| label[d]).collect();
            devices.sort_unstable();
            PlacedTask { shape, devices }
        })
        .collect();
    placed.sort();
    placed
}

/// An instance file's cluster, tasks and fragment measure in the model crate's types:
/// nodes type by type (`count` of each, in file order), tasks shape by shape (`arrived` of
/// each).
#[derive(Debug, Clone)]
pub struct RebuiltInstance {
    pub cluster: Cluster,
    pub typical: TypicalPods,
    pub tasks: Vec<Task>,
    /// Index of each shape's first task in `tasks`.
    first_task: Vec<usize>,
    /// Index of each node type's first node in the cluster.
    first_node: Vec<usize>,
    placed: Vec<usize>,
}

/// An instance's three objectives evaluated on one placement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InstanceValues {
    pub power_watts: i64,
    pub alloc_gpu_milli: u64,
    pub frag_milli: f64,
}

impl InstanceValues {
    /// The value of `objective`.
    pub fn of(&self, objective: Objective) -> f64 {
        match objective {
            Objective::Power => self.power_watts as f64,
            Objective::Alloc => self.alloc_gpu_milli as f64,
            Objective::Frag => self.frag_milli,
        }
    }
}

/// The GPU-model table an instance file's cluster is rebuilt with: the built-in one, plus
/// the file's stated device watts for each model the built-in table has no power for (a
/// model a GPU-model file gave the exported cluster). A built-in model keeps its built-in
/// power, which [`check_power_parameters`] then holds the file to.
fn rebuilt_gpu_models(file: &InstanceFile) -> Result<GpuModelTable, String> {
    let mut models = GpuModelTable::built_in();
    let built_in = GpuModelTable::built_in();
    for (index, spec) in file.node_types.iter().enumerate() {
        let Some(name) = spec.gpu_model.as_deref() else {
            continue;
        };
        let model = GpuModel::register(name).map_err(|e| format!("node_types[{index}]: {e}"))?;
        if built_in.power(model).is_some() {
            continue;
        }
        let stated = GpuPowerProfile {
            idle_watts: spec.gpu_idle_watts,
            full_watts: spec.gpu_full_watts,
        };
        match models.power(model) {
            Some(earlier) if earlier != stated => {
                return Err(format!(
                    "node_types[{index}]: GPU model {name} has device watts {stated:?}, an earlier node type {earlier:?}"
                ))
            }
            Some(_) => {}
            None => models.set(
                model,
                GpuModelSpec {
                    power: stated,
                    memory_mib: None,
                },
            ),
        }
    }
    Ok(models)
}

fn parse_model(name: &str, what: &str) -> Result<GpuModel, String> {
    GpuModel::parse(name).ok_or_else(|| {
        format!(
            "{what}: unknown GPU model `{name}` (known: {})",
            gapbench_model::gpu::known_models()
        )
    })
}

fn model_set(names: &[String], what: &str) -> Result<GpuModelSet, String> {
    let models = names
        .iter()
        .map(|name| parse_model(name, what))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(GpuModelSet::of(&models))
}

impl RebuiltInstance {
    /// Rebuilds `file`'s cluster (with gapbench's power profile the file names; its power
    /// parameters must be the ones the file states), tasks and typical pods.
    pub(crate) fn from_file(file: &InstanceFile) -> Result<RebuiltInstance, String> {
        let profile = match file.provenance.cpu_power_profile.as_str() {
            "reference" => CpuPowerProfile::Reference,
            "by-gpu-model" => CpuPowerProfile::ByGpuModel,
            other => return Err(format!("unknown cpu_power_profile `{other}`")),
        };
        let (cluster, first_node) = rebuilt_cluster(file, profile)?;
        check_power_parameters(file, &cluster, &first_node)?;
        let (tasks, first_task) = rebuilt_tasks(file)?;
        Ok(RebuiltInstance {
            cluster,
            typical: rebuilt_typical_pods(file)?,
            tasks,
            first_task,
            first_node,
            placed: file.shapes.iter().map(|s| s.placed).collect(),
        })
    }

    /// The per-task assignment `configurations` describe: each type's configurations fill
    /// its nodes in order, each shape's tasks are taken in order. Errors on an index out of
    /// range, more nodes of a type or tasks of a shape than exist, or a device list that is
    /// not a set of the type's devices. Capacities are left to the checker.
    pub(crate) fn assignment(
        &self,
        configurations: &[Configuration],
    ) -> Result<Vec<Option<Placement>>, String> {
        let mut assignment = vec![None; self.tasks.len()];
        let types = self.first_node.len();
        let mut next_node = self.first_node.clone();
        let mut next_task = self.first_task.clone();
        for (index, configuration) in configurations.iter().enumerate() {
            let what = format!("configuration {index}");
            let node_type = configuration.node_type;
            if node_type >= types {
                return Err(format!("{what}: node type {node_type} of {types}"));
            }
            let end = self
                .first_node
                .get(node_type + 1)
                .copied()
                .unwrap_or(self.cluster.len());
            if next_node[node_type] + configuration.nodes > end {
                return Err(format!(
                    "{what}: more nodes of type {node_type} than the {} it has",
                    end - self.first_node[node_type]
                ));
            }
            for _ in 0..configuration.nodes {
                let node = next_node[node_type];
                next_node[node_type] += 1;
                for placed in &configuration.tasks {
                    let shape = placed.shape;
                    if shape >= self.first_task.len() {
                        return Err(format!(
                            "{what}: shape {shape} of {}",
                            self.first_task.len()
                        ));
                    }
                    let end = self
                        .first_task
                        .get(shape + 1)
                        .copied()
                        .unwrap_or(self.tasks.len());
                    if next_task[shape] >= end {
                        return Err(format!(
                            "{what}: more tasks of shape {shape} than the {} that arrived",
                            end - self.first_task[shape]
                        ));
                    }
                    let mut devices = DeviceSet::EMPTY;
                    for &device in &placed.devices {
                        if device >= MAX_GPUS_PER_NODE || devices.contains(device) {
                            return Err(format!(
                                "{what}: device list {:?} is not a set of device indices below {MAX_GPUS_PER_NODE}",
                                placed.devices
                            ));
                        }
                        devices = devices.with(device);
                    }
                    assignment[next_task[shape]] = Some(Placement {
                        node: node as u32,
                        devices,
                    });
                    next_task[shape] += 1;
                }
            }
        }
        Ok(assignment)
    }

    /// Checks `configurations` against the rules (the model's checker) and, for power and
    /// fragmentation, that exactly each shape's `placed` tasks are placed; then evaluates
    /// every objective with the model's power model and fragment measure.
    pub(crate) fn evaluate(
        &self,
        objective: Option<Objective>,
        configurations: &[Configuration],
    ) -> Result<InstanceValues, String> {
        let assignment = self.assignment(configurations)?;
        let violations = check_placements(
            &self.cluster,
            self.tasks
                .iter()
                .zip(&assignment)
                .filter_map(|(task, placement)| placement.map(|p| (task, p))),
        );
        if let Some(first) = violations.first() {
            return Err(format!(
                "{} placement violation(s), the first: {first}",
                violations.len()
            ));
        }
        if matches!(objective, Some(Objective::Power | Objective::Frag)) {
            for (shape, &placed) in self.placed.iter().enumerate() {
                let end = self
                    .first_task
                    .get(shape + 1)
                    .copied()
                    .unwrap_or(self.tasks.len());
                let got = assignment[self.first_task[shape]..end]
                    .iter()
                    .filter(|p| p.is_some())
                    .count();
                if got != placed {
                    return Err(format!(
                        "shape {shape}: {got} tasks placed, the problem places exactly {placed}"
                    ));
                }
            }
        }
        let state = state_of(&self.cluster, &self.tasks, &assignment);
        Ok(InstanceValues {
            power_watts: power_watts(&self.cluster, &state),
            alloc_gpu_milli: alloc_gpu_milli(&self.tasks, &assignment),
            frag_milli: frag_milli(&self.cluster, &self.typical, &state),
        })
    }
}

/// The file's cluster (its node types in the file's order, `count` nodes each), and the
/// index of each node type's first node.
fn rebuilt_cluster(
    file: &InstanceFile,
    profile: CpuPowerProfile,
) -> Result<(Cluster, Vec<usize>), String> {
    // First: it registers the names of models from a GPU-model file, which the node
    // types then parse.
    let models = std::sync::Arc::new(rebuilt_gpu_models(file)?);
    let mut nodes = Vec::new();
    let mut first_node = Vec::new();
    for (index, spec) in file.node_types.iter().enumerate() {
        let what = format!("node_types[{index}]");
        let node_type = NodeType {
            gpu_model: spec
                .gpu_model
                .as_deref()
                .map(|name| parse_model(name, &what))
                .transpose()?,
            gpu_count: spec.gpu_count,
            cpu_milli: spec.cpu_milli,
            memory_mib: spec.memory_mib,
        };
        first_node.push(nodes.len());
        nodes.extend((0..spec.count).map(|k| (format!("type{index}-{k}"), node_type)));
    }
    let cluster = Cluster::with_gpu_models(nodes, profile, models).map_err(|e| e.to_string())?;
    // Types are numbered in order of first appearance: the file's order, as long as no
    // two listed types are equal.
    if cluster.node_types.len() != file.node_types.iter().filter(|t| t.count > 0).count() {
        return Err("node_types lists the same node type twice".into());
    }
    Ok((cluster, first_node))
}

/// The file's power parameters of each node type are gapbench's own under its profile.
fn check_power_parameters(
    file: &InstanceFile,
    cluster: &Cluster,
    first_node: &[usize],
) -> Result<(), String> {
    for (index, spec) in file.node_types.iter().enumerate() {
        if spec.count == 0 {
            continue;
        }
        let power = cluster.power_model(first_node[index] as u32);
        let stated = (
            spec.cpu_socket_idle_watts,
            spec.cpu_socket_full_watts,
            spec.cores_per_socket,
            spec.gpu_idle_watts,
            spec.gpu_full_watts,
        );
        let own = (
            power.socket.idle_watts,
            power.socket.full_watts,
            power.socket.cores_per_socket,
            power.gpu.map_or(0, |g| g.idle_watts),
            power.gpu.map_or(0, |g| g.full_watts),
        );
        if stated != own {
            return Err(format!(
                "node_types[{index}]: power parameters {stated:?} (socket idle, socket full, cores per socket, GPU idle, GPU full) differ from gapbench's {} profile {own:?}",
                file.provenance.cpu_power_profile
            ));
        }
    }
    Ok(())
}

/// The file's tasks (`arrived` of each shape), and the index of each shape's first task.
fn rebuilt_tasks(file: &InstanceFile) -> Result<(Vec<Task>, Vec<usize>), String> {
    let mut tasks = Vec::new();
    let mut first_task = Vec::new();
    for (index, shape) in file.shapes.iter().enumerate() {
        let what = format!("shapes[{index}]");
        if shape.placed > shape.arrived {
            return Err(format!(
                "{what}: {} placed of {} arrived",
                shape.placed, shape.arrived
            ));
        }
        let mut task = Task::new(
            "",
            shape.cpu_milli,
            shape.memory_mib,
            shape.gpu_count,
            shape.gpu_milli,
        );
        if (task.gpu_count, task.gpu_milli) != (shape.gpu_count, shape.gpu_milli) {
            return Err(format!(
                "{what}: gpu_count and gpu_milli must both be 0 or both positive"
            ));
        }
        task.gpu_models = model_set(&shape.gpu_models, &what)?;
        first_task.push(tasks.len());
        tasks.extend((0..shape.arrived).map(|k| Task {
            name: format!("shape{index}-{k}"),
            ..task.clone()
        }));
    }
    Ok((tasks, first_task))
}

/// The file's typical pods, for the fragmentation measure.
fn rebuilt_typical_pods(file: &InstanceFile) -> Result<TypicalPods, String> {
    let pods = file
        .fragmentation_model
        .typical_pods
        .iter()
        .enumerate()
        .map(|(index, pod)| {
            Ok(TypicalPod {
                cpu_milli: pod.cpu_milli,
                gpu_milli: pod.gpu_milli,
                gpu_count: pod.gpu_count,
                gpu_models: model_set(&pod.gpu_models, &format!("typical_pods[{index}]"))?,
                count: pod.count,
                probability: pod.probability,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(TypicalPods {
        pods,
        distinct_shapes: file.fragmentation_model.distinct_shapes,
        coverage_pct: file.fragmentation_model.coverage_pct,
    })
}

/// Re-evaluates every stored placement of `file` — the heuristic's and each problem's —
/// with the model crate, and errors on the first whose value differs from the one stored
/// (power and allocation exactly, fragmentation within 1e-9 relative: the file's node order
/// sums the same floats in another order).
pub fn verify_instance(file: &InstanceFile) -> Result<RebuiltInstance, SolveError> {
    verified(file).map_err(SolveError::Instance)
}

fn verified(file: &InstanceFile) -> Result<RebuiltInstance, String> {
    let rebuilt = RebuiltInstance::from_file(file)?;
    let heuristic = rebuilt
        .evaluate(None, &file.heuristic.placement)
        .map_err(|e| format!("heuristic placement: {e}"))?;
    let heuristic_claims = [
        (Objective::Power, file.heuristic.power_watts),
        (Objective::Alloc, file.heuristic.alloc_gpu_milli),
        (Objective::Frag, file.heuristic.frag_milli),
    ];
    for (objective, stored) in heuristic_claims {
        agree(objective, stored, heuristic.of(objective))
            .map_err(|e| format!("heuristic {}: {e}", objective.name()))?;
    }
    for problem in &file.problems {
        let Some(stored) = problem.value else {
            continue;
        };
        let name = problem.objective.name();
        if let Some(bound) = problem.bound {
            bound_on_its_side(problem.objective, stored, bound)
                .map_err(|e| format!("{name}: {e}"))?;
        }
        let values = rebuilt
            .evaluate(Some(problem.objective), &problem.placement)
            .map_err(|e| format!("{name} placement: {e}"))?;
        agree(problem.objective, stored, values.of(problem.objective))
            .map_err(|e| format!("{name}: {e}"))?;
        if let Some(power) = problem.power_watts {
            agree(Objective::Power, power, values.power_watts as f64)
                .map_err(|e| format!("{name} placement's power: {e}"))?;
        }
    }
    Ok(rebuilt)
}

/// A proven bound lies on its side of any placement's value: at most the value when
/// minimising (power, fragmentation), at least it when maximising (allocation); within the
/// solver's feasibility tolerance (1e-6 relative).
fn bound_on_its_side(objective: Objective, value: f64, bound: f64) -> Result<(), String> {
    let tolerance = 1e-6 * value.abs().max(1.0);
    let (wrong, side) = if objective == Objective::Alloc {
        (
            bound < value - tolerance,
            "an upper bound of a maximisation below",
        )
    } else {
        (
            bound > value + tolerance,
            "a lower bound of a minimisation above",
        )
    };
    if wrong || bound.is_nan() {
        return Err(format!(
            "bound {bound} is on the wrong side of the value {value} ({side} its own incumbent)"
        ));
    }
    Ok(())
}

fn agree(objective: Objective, stored: f64, computed: f64) -> Result<(), String> {
    let tolerance = match objective {
        Objective::Frag => 1e-9 * stored.abs().max(1.0),
        Objective::Power | Objective::Alloc => 0.0,
    };
    if (stored - computed).abs() > tolerance {
        return Err(format!(
            "stored value {stored}, the placement evaluates to {computed}"
        ));
    }
    Ok(())
}
