//! Between the model and concrete placements: warm starts from a placement (in the
//! canonical order the symmetry breaking expects) and decoding a solution back to one.

use gapbench_model::{DeviceSet, NodeId, Placement, MILLI_GPU_PER_GPU};
use good_lp::Variable;

use super::*;
use crate::shapes::{ShapeKind, Shapes};

impl PlacementModel<'_> {
    /// Start values for `x`, `w`, `z` from canonical loads.
    pub fn fill_start(&self, loads: &[NodeLoad], start: &mut [f64]) {
        for (vars, load) in self.nodes.iter().zip(loads) {
            for (x, &c) in vars.count.iter().zip(&load.count) {
                if let Some(x) = x {
                    start[self.cols.col(*x)] = f64::from(c);
                }
            }
            for (d, w) in vars.whole.iter().enumerate() {
                if let Some(w) = w {
                    start[self.cols.col(*w)] = if load.whole[d] { 1.0 } else { 0.0 };
                }
            }
            for (d, row) in vars.share.iter().enumerate() {
                for (j, z) in row.iter().enumerate() {
                    if let Some(z) = z {
                        start[self.cols.col(*z)] = f64::from(load.share[d][j]);
                    }
                }
            }
        }
    }

    /// One placement per task (`task_count` = the snapshot's task count) from solved column
    /// values; tasks outside the shape set, or not chosen, stay `None`.
    pub fn decode(
        &self,
        values: &[f64],
        task_count: usize,
    ) -> Result<Vec<Option<Placement>>, String> {
        let value = |v: Variable| -> Result<u32, String> {
            let raw = values[self.cols.col(v)];
            let rounded = raw.round();
            if (raw - rounded).abs() > 1e-4 || rounded < 0.0 {
                return Err(format!("solver returned a non-integral count {raw}"));
            }
            Ok(rounded as u32)
        };
        let mut placement = vec![None; task_count];
        // Next unplaced task of each shape.
        let mut next_task = vec![0usize; self.shapes.shapes.len()];
        for vars in &self.nodes {
            let mut whole_devices = Vec::new();
            for (d, w) in vars.whole.iter().enumerate() {
                if let Some(w) = w {
                    if value(*w)? == 1 {
                        whole_devices.push(d);
                    }
                }
            }
            // Sharing slots per class: device d repeated z[d][j] times.
            let mut slots: Vec<Vec<usize>> = vec![Vec::new(); self.shapes.share_milli.len()];
            for (d, row) in vars.share.iter().enumerate() {
                for (j, z) in row.iter().enumerate() {
                    if let Some(z) = z {
                        for _ in 0..value(*z)? {
                            slots[j].push(d);
                        }
                    }
                }
            }
            let mut next_whole = 0;
            let mut next_slot = vec![0usize; slots.len()];
            for (s, x) in vars.count.iter().enumerate() {
                let Some(x) = x else { continue };
                let shape = &self.shapes.shapes[s];
                for _ in 0..value(*x)? {
                    let task = *shape.tasks.get(next_task[s]).ok_or_else(|| {
                        format!(
                            "solver placed more tasks of a shape than there are ({})",
                            shape.count()
                        )
                    })?;
                    next_task[s] += 1;
                    let devices = match shape.kind() {
                        ShapeKind::CpuOnly => DeviceSet::EMPTY,
                        ShapeKind::Whole => {
                            let k = usize::from(shape.gpu_count);
                            let taken = whole_devices
                                .get(next_whole..next_whole + k)
                                .ok_or("solver's whole-device count does not match its tasks")?;
                            next_whole += k;
                            taken.iter().fold(DeviceSet::EMPTY, |set, &d| set.with(d))
                        }
                        ShapeKind::Share => {
                            let j = self
                                .shapes
                                .share_class(s)
                                .expect("sharing shape has a class");
                            let d = *slots[j]
                                .get(next_slot[j])
                                .ok_or("solver's device slots do not match its sharing tasks")?;
                            next_slot[j] += 1;
                            DeviceSet::single(d)
                        }
                    };
                    placement[task] = Some(Placement {
                        node: vars.node,
                        devices,
                    });
                }
            }
        }
        Ok(placement)
    }
}

/// What a concrete placement puts on one node, in the model's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodeLoad {
    /// Tasks per shape.
    pub count: Vec<u32>,
    /// Per device: given to whole-GPU tasks.
    pub whole: Vec<bool>,
    /// Per device, per sharing class: tasks.
    pub share: Vec<Vec<u32>>,
    pub cpu_used_milli: u64,
}

impl NodeLoad {
    fn empty(shapes: &Shapes, devices: usize) -> Self {
        NodeLoad {
            count: vec![0; shapes.shapes.len()],
            whole: vec![false; devices],
            share: vec![vec![0; shapes.share_milli.len()]; devices],
            cpu_used_milli: 0,
        }
    }

    pub fn used_gpu_milli(&self, d: usize, share_milli: &[u16]) -> u32 {
        if self.whole[d] {
            return MILLI_GPU_PER_GPU;
        }
        self.share[d]
            .iter()
            .zip(share_milli)
            .map(|(&c, &m)| c * u32::from(m))
            .sum()
    }

    fn key_x128(&self, shapes: &Shapes) -> u64 {
        self.count
            .iter()
            .zip(&shapes.shapes)
            .map(|(&c, s)| u64::from(c) * s.order_key_x128())
            .sum()
    }
}

/// The loads of a placement, rearranged to satisfy the model's symmetry breaking: devices
/// of each node sorted by load (whole ones first on ties), and the loads of identical nodes
/// sorted by key (descending; ties keep node order). The result is the same placement up to
/// renaming identical nodes and devices, so it has the same power, allocation and
/// fragmentation.
pub(crate) fn canonical_loads(
    model: &PlacementModel,
    tasks_placement: &[Option<Placement>],
    shape_of: &[Option<usize>],
) -> Result<Vec<NodeLoad>, String> {
    let cluster = model.cluster;
    let shapes = model.shapes;
    let mut loads: Vec<NodeLoad> = (0..cluster.len() as NodeId)
        .map(|n| NodeLoad::empty(shapes, usize::from(cluster.node_type(n).gpu_count)))
        .collect();
    for (task, placement) in tasks_placement.iter().enumerate() {
        let (Some(placement), Some(s)) = (placement, shape_of[task]) else {
            continue;
        };
        let load = loads
            .get_mut(placement.node as usize)
            .ok_or_else(|| format!("placement on unknown node {}", placement.node))?;
        let shape = &shapes.shapes[s];
        load.count[s] += 1;
        load.cpu_used_milli += u64::from(shape.cpu_milli);
        for d in placement.devices.iter() {
            if d >= load.whole.len() {
                return Err(format!(
                    "placement on missing device {d} of node {}",
                    placement.node
                ));
            }
            match shape.kind() {
                ShapeKind::Whole => load.whole[d] = true,
                ShapeKind::Share => {
                    let j = shapes.share_class(s).expect("sharing shape has a class");
                    load.share[d][j] += 1;
                }
                ShapeKind::CpuOnly => {}
            }
        }
    }
    for load in &mut loads {
        let devices = load.whole.len();
        let mut order: Vec<usize> = (0..devices).collect();
        order.sort_by_key(|&d| {
            (
                std::cmp::Reverse(load.used_gpu_milli(d, &shapes.share_milli)),
                std::cmp::Reverse(load.whole[d]),
                d,
            )
        });
        load.whole = order.iter().map(|&d| load.whole[d]).collect();
        load.share = order.iter().map(|&d| load.share[d].clone()).collect();
    }
    let mut canonical = loads.clone();
    for group in &model.groups {
        let mut members: Vec<NodeId> = group.clone();
        members.sort_by_key(|&n| (std::cmp::Reverse(loads[n as usize].key_x128(shapes)), n));
        for (&slot, &from) in group.iter().zip(&members) {
            canonical[slot as usize] = loads[from as usize].clone();
        }
    }
    Ok(canonical)
}
