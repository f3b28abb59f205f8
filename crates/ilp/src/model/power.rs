//! The power piece of the assignment model: node power from its device loads, and the
//! cluster-wide cuts that tighten it.

use gapbench_model::NodeId;
use good_lp::{Expression, Variable};

use super::*;
use crate::shapes::ShapeKind;

impl PlacementModel<'_> {
    /// Adds the power model of spec §6 and returns its dynamic part and constant.
    ///
    /// Per node: `idle_cores ∈ ℤ, 2000·idle_cores ≤ cpu_cap − Σ cpu·x`,
    /// `active ∈ ℤ, cores_per_socket·active ≥ real_cores − idle_cores`, so that at a minimum
    /// `active = ceil((real − floor(cpu_left/2000))/cores_per_socket)` exactly as the model;
    /// per device: `working ∈ {0,1}`, `used ≤ 1000·working` (any allocation makes it work).
    /// `P = Σ_n idle_cpu·sockets + (full_cpu − idle_cpu)·active
    ///    + Σ_d idle_gpu + (full_gpu − idle_gpu)·working`.
    pub fn add_power(&mut self) -> PowerTerms {
        let mut dynamic_watts = Expression::default();
        let mut constant_watts = 0.0;
        let mut nodes = Vec::with_capacity(self.nodes.len());
        for n in 0..self.nodes.len() {
            let node_type = *self.cluster.node_type(n as NodeId);
            let model = *self.cluster.power_model(n as NodeId);
            let max_idle_cores = node_type.cpu_milli / 2000;
            let idle_cores = self.cols.integer(0.0, f64::from(max_idle_cores));
            let active = self.cols.integer(0.0, f64::from(model.sockets));
            let cpu = self.cpu_used_milli(n);
            self.rows
                .push((2000.0 * idle_cores + cpu).leq(f64::from(node_type.cpu_milli)));
            let cores = f64::from(model.socket.cores_per_socket);
            self.rows
                .push((cores * active + idle_cores).geq(f64::from(model.real_cores)));
            let socket_idle = f64::from(model.socket.idle_watts);
            let socket_full = f64::from(model.socket.full_watts);
            constant_watts += socket_idle * f64::from(model.sockets);
            dynamic_watts.add_mul(socket_full - socket_idle, active);
            // Node-used indicator: any task with CPU on the node makes at least one socket
            // active (real − floor((cap − c)/2000) ≥ 1 for every c ≥ 1), so
            // x[n,s] ≤ M_s·y (cpu_s > 0) and active ≥ y. Linking the GPUs to it
            // (working ≤ y) is valid when every GPU shape that may come here uses CPU.
            let used = self.cols.binary();
            self.rows.push((active - used).geq(0.0));
            let mut gpu_tasks_use_cpu = true;
            for (shape, x) in self.shapes.shapes.iter().zip(&self.nodes[n].count) {
                let Some(x) = *x else { continue };
                if shape.cpu_milli > 0 {
                    let most = f64::from(shape.max_per_node(&node_type));
                    self.rows.push((x - most * used).leq(0.0));
                } else if shape.gpu_count > 0 {
                    gpu_tasks_use_cpu = false;
                }
            }
            let mut working = Vec::new();
            if let Some(gpu) = model.gpu {
                let (idle, full) = (f64::from(gpu.idle_watts), f64::from(gpu.full_watts));
                for d in 0..usize::from(node_type.gpu_count) {
                    let u = self.cols.binary();
                    let used = used_gpu_milli(&self.nodes[n], self.shapes, d);
                    self.rows.push(used.leq(MILLI * u));
                    for epsilon in DFF_EPSILONS {
                        let load = dff_load(&self.nodes[n], self.shapes, d, epsilon);
                        self.rows.push(load.leq(u));
                    }
                    constant_watts += idle;
                    dynamic_watts.add_mul(full - idle, u);
                    working.push(u);
                }
                for pair in working.windows(2) {
                    self.rows.push((pair[0] - pair[1]).geq(0.0));
                }
                if let (Some(&first), true) = (working.first(), gpu_tasks_use_cpu) {
                    self.rows.push((first - used).leq(0.0));
                }
            }
            nodes.push(NodePowerVars {
                idle_cores,
                active,
                used,
                working,
            });
        }
        if self.demand == Demand::Exactly {
            self.add_global_power_cuts(&nodes);
        }
        PowerTerms {
            nodes,
            dynamic_watts,
            constant_watts,
        }
    }

    /// Two rounded global counts, valid when the task set is fixed (their right-hand sides
    /// are then constants), that the per-node LP misses:
    /// - active sockets: summing `cps_n·active_n ≥ real_n − idle_n` and
    ///   `2000·idle_n ≤ cap_n − used_n` gives
    ///   `Σ_n active_n ≥ ⌈(Σ_n (real_n − cap_n/2000) + Σ_tasks cpu/2000) / max_n cps_n⌉`;
    /// - working devices: every whole-GPU task needs its own devices and, on every other
    ///   device, the dual feasible weights `f_ε` of its sharing tasks sum to at most 1, so
    ///   `Σ_{n,d} working ≥ ⌈Σ_s k_s·count_s + Σ_{s share} f_ε(m_s)·count_s⌉` for each ε.
    fn add_global_power_cuts(&mut self, nodes: &[NodePowerVars]) {
        let mut cores_needed = 0.0;
        let mut max_cores_per_socket = 1.0f64;
        for n in 0..self.nodes.len() {
            let node_type = self.cluster.node_type(n as NodeId);
            let model = self.cluster.power_model(n as NodeId);
            cores_needed += f64::from(model.real_cores) - f64::from(node_type.cpu_milli) / 2000.0;
            max_cores_per_socket =
                max_cores_per_socket.max(f64::from(model.socket.cores_per_socket));
        }
        let task_cpu: f64 = self
            .shapes
            .shapes
            .iter()
            .map(|s| f64::from(s.cpu_milli) * s.count() as f64)
            .sum();
        cores_needed += task_cpu / 2000.0;
        let sockets: Expression = nodes.iter().map(|v| v.active).sum();
        self.rows
            .push(sockets.geq(((cores_needed / max_cores_per_socket) - 1e-9).ceil()));
        let working: Vec<Variable> = nodes
            .iter()
            .flat_map(|v| v.working.iter().copied())
            .collect();
        if working.is_empty() {
            return;
        }
        let whole: f64 = self
            .shapes
            .shapes
            .iter()
            .filter(|s| s.kind() == ShapeKind::Whole)
            .map(|s| f64::from(s.gpu_count) * s.count() as f64)
            .sum();
        let devices_needed = DFF_EPSILONS
            .iter()
            .map(|&e| {
                whole
                    + self
                        .shapes
                        .shapes
                        .iter()
                        .filter(|s| s.kind() == ShapeKind::Share)
                        .map(|s| dff(e, s.gpu_milli) * s.count() as f64)
                        .sum::<f64>()
            })
            .fold(0.0, f64::max);
        let total: Expression = working.into_iter().sum();
        self.rows.push(total.geq((devices_needed - 1e-9).ceil()));
    }
}

pub(crate) struct NodePowerVars {
    pub idle_cores: Variable,
    pub active: Variable,
    /// Some task with CPU runs on the node.
    pub used: Variable,
    pub working: Vec<Variable>,
}

/// The power piece: `P = constant_watts + dynamic_watts`.
pub(crate) struct PowerTerms {
    pub nodes: Vec<NodePowerVars>,
    pub dynamic_watts: Expression,
    pub constant_watts: f64,
}

impl PowerTerms {
    pub fn fill_start(&self, model: &PlacementModel, loads: &[NodeLoad], start: &mut [f64]) {
        for (n, (vars, load)) in self.nodes.iter().zip(loads).enumerate() {
            let node_type = model.cluster.node_type(n as NodeId);
            let power = model.cluster.power_model(n as NodeId);
            let cpu_left = u64::from(node_type.cpu_milli) - load.cpu_used_milli;
            let idle_cores = (cpu_left / 2000) as u32;
            let active = power
                .real_cores
                .saturating_sub(idle_cores)
                .div_ceil(power.socket.cores_per_socket);
            start[model.cols.col(vars.idle_cores)] = f64::from(idle_cores);
            let used = load.cpu_used_milli > 0;
            start[model.cols.col(vars.used)] = if used { 1.0 } else { 0.0 };
            start[model.cols.col(vars.active)] = f64::from(active);
            for (d, u) in vars.working.iter().enumerate() {
                let working = load.used_gpu_milli(d, &model.shapes.share_milli) > 0;
                start[model.cols.col(*u)] = if working { 1.0 } else { 0.0 };
            }
        }
    }
}
