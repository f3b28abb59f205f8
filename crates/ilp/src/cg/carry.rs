//! Columns carried from one checkpoint of a sweep to the next.
//!
//! Checkpoints of one sweep share most of their tasks, so the configurations the last
//! solve's LP and incumbent used are good columns for the next one. They are carried by
//! what they are (node type, each task slot's resources and devices), not by shape index,
//! since the next snapshot groups its own shapes; a carried configuration whose shapes are
//! gone, or that holds more tasks of a shape than the snapshot has, is dropped. Every
//! carried column is rebuilt and judged by the checker like any other.

use std::collections::HashMap;

use gapbench_model::DeviceSet;

use super::column::{Column, ColumnPool, TypeCluster};
use crate::shapes::Shapes;
use crate::solve::Objective;

/// What identifies a shape across snapshots: CPU, memory, GPUs, milli per GPU, models.
type ShapeKey = (u32, u64, u8, u16, u64);

fn key_of(shapes: &Shapes, s: usize) -> ShapeKey {
    let shape = &shapes.shapes[s];
    (
        shape.cpu_milli,
        shape.memory_mib,
        shape.gpu_count,
        shape.gpu_milli,
        shape.gpu_models.mask(),
    )
}

/// One carried configuration: its objective, node type id and slots by shape key.
type Carried = (Objective, usize, Vec<(ShapeKey, DeviceSet)>);

/// Configurations from earlier solves of one sweep, per objective.
#[derive(Debug, Clone, Default)]
pub struct ColumnCarry {
    configurations: Vec<Carried>,
}

impl ColumnCarry {
    /// Replaces what is carried for `objective` with `columns` of `pool`.
    pub(crate) fn keep(
        &mut self,
        objective: Objective,
        types: &[TypeCluster],
        shapes: &Shapes,
        pool: &ColumnPool,
        columns: impl IntoIterator<Item = usize>,
    ) {
        self.configurations.retain(|(o, _, _)| *o != objective);
        for c in columns {
            let column = &pool.columns[c];
            let slots = column
                .slots
                .iter()
                .map(|&(s, devices)| (key_of(shapes, s), devices))
                .collect();
            self.configurations
                .push((objective, types[column.type_index].type_id, slots));
        }
    }

    /// The carried configurations of `objective` that fit this snapshot, as columns.
    pub(crate) fn columns(
        &self,
        objective: Objective,
        types: &[TypeCluster],
        shapes: &Shapes,
        build: impl Fn(usize, Vec<(usize, DeviceSet)>) -> Result<Column, String>,
    ) -> Vec<Column> {
        let shape_index: HashMap<ShapeKey, usize> = (0..shapes.shapes.len())
            .map(|s| (key_of(shapes, s), s))
            .collect();
        let type_index: HashMap<usize, usize> = types
            .iter()
            .enumerate()
            .map(|(i, t)| (t.type_id, i))
            .collect();
        self.configurations
            .iter()
            .filter(|(o, _, _)| *o == objective)
            .filter_map(|(_, type_id, slots)| {
                let t = *type_index.get(type_id)?;
                let slots: Option<Vec<(usize, DeviceSet)>> = slots
                    .iter()
                    .map(|(key, devices)| Some((*shape_index.get(key)?, *devices)))
                    .collect();
                // Column::new refuses more tasks of a shape than the snapshot has.
                build(t, slots?).ok()
            })
            .collect()
    }
}
