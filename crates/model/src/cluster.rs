//! The cluster: nodes and their (deduplicated) node types.

use std::sync::Arc;

use crate::error::InputError;
use crate::gpu::GpuModel;
use crate::gpu_models::GpuModelTable;
use crate::power::{CpuPowerProfile, PowerModel};

pub type NodeId = u32;
pub type NodeTypeId = u16;

/// What a node is made of. Nodes with equal types behave identically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeType {
    /// `None` for CPU-only nodes.
    pub gpu_model: Option<GpuModel>,
    pub gpu_count: u8,
    pub cpu_milli: u32,
    pub memory_mib: u64,
}

impl NodeType {
    pub fn gpu_milli(&self) -> u32 {
        u32::from(self.gpu_count) * crate::MILLI_GPU_PER_GPU
    }

    /// Short human label, e.g. `8xG2/96c/384G`.
    pub fn label(&self) -> String {
        let gpus = match self.gpu_model {
            Some(model) => format!("{}x{}", self.gpu_count, model),
            None => "cpu-only".to_string(),
        };
        format!(
            "{gpus}/{}c/{}G",
            self.cpu_milli / 1000,
            self.memory_mib / 1024
        )
    }
}

/// One node of the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    pub type_id: NodeTypeId,
}

/// A set of nodes, their types and the power model of each type.
#[derive(Debug, Clone)]
pub struct Cluster {
    pub nodes: Vec<Node>,
    pub node_types: Vec<NodeType>,
    pub power_models: Vec<PowerModel>,
    pub cpu_power_profile: CpuPowerProfile,
    /// The GPU models' power the node types were built with; a cluster cut from this one
    /// (a sample, one node type) is built with the same table.
    pub gpu_models: Arc<GpuModelTable>,
}

impl Cluster {
    /// Builds a cluster of the built-in GPU models ([`Cluster::with_gpu_models`]).
    pub fn new(
        nodes: impl IntoIterator<Item = (String, NodeType)>,
        cpu_power_profile: CpuPowerProfile,
    ) -> Result<Self, InputError> {
        Cluster::with_gpu_models(nodes, cpu_power_profile, GpuModelTable::shared_built_in())
    }

    /// Builds a cluster whose GPU power comes from `gpu_models`; node types are numbered in
    /// order of first appearance.
    ///
    /// Errors name the node when its GPU model has no power profile or it has more GPUs
    /// than a device set can hold.
    pub fn with_gpu_models(
        nodes: impl IntoIterator<Item = (String, NodeType)>,
        cpu_power_profile: CpuPowerProfile,
        gpu_models: Arc<GpuModelTable>,
    ) -> Result<Self, InputError> {
        let mut cluster = Cluster {
            nodes: Vec::new(),
            node_types: Vec::new(),
            power_models: Vec::new(),
            cpu_power_profile,
            gpu_models,
        };
        // Type lookup by hash: a node list of many distinct types stays linear.
        let mut type_ids: std::collections::HashMap<NodeType, NodeTypeId> =
            std::collections::HashMap::new();
        for (name, node_type) in nodes {
            if usize::from(node_type.gpu_count) > crate::MAX_GPUS_PER_NODE {
                return Err(InputError::invalid(format!(
                    "node `{name}` has {} GPUs; at most {} per node are supported",
                    node_type.gpu_count,
                    crate::MAX_GPUS_PER_NODE
                )));
            }
            if node_type.gpu_count > 0 && node_type.gpu_model.is_none() {
                return Err(InputError::invalid(format!(
                    "node `{name}` has GPUs but no GPU model"
                )));
            }
            let type_id = match type_ids.get(&node_type) {
                Some(&id) => id,
                None => {
                    let id = NodeTypeId::try_from(cluster.node_types.len()).map_err(|_| {
                        InputError::invalid(format!(
                            "node `{name}` would be node type {}: at most {} distinct node types (CPU, memory, GPU count and model) are supported",
                            cluster.node_types.len() + 1,
                            usize::from(NodeTypeId::MAX) + 1
                        ))
                    })?;
                    let gpu = match node_type.gpu_model {
                        None => None,
                        Some(model) => Some(cluster.gpu_models.power(model).ok_or_else(|| {
                            InputError::invalid(format!(
                                "node `{name}`: GPU model {model} has no power profile"
                            ))
                        })?),
                    };
                    let socket = cpu_power_profile.socket_for(node_type.gpu_model);
                    cluster.node_types.push(node_type);
                    cluster
                        .power_models
                        .push(PowerModel::new(socket, gpu, node_type.cpu_milli));
                    type_ids.insert(node_type, id);
                    id
                }
            };
            cluster.nodes.push(Node { name, type_id });
        }
        Ok(cluster)
    }

    /// A cluster of `nodes` with this cluster's CPU power profile and GPU models.
    pub fn sibling(
        &self,
        nodes: impl IntoIterator<Item = (String, NodeType)>,
    ) -> Result<Cluster, InputError> {
        Cluster::with_gpu_models(nodes, self.cpu_power_profile, self.gpu_models.clone())
    }

    /// The training-job profile of `model` on this cluster: the model's clock range with
    /// the power this cluster gives it; `None` without a power profile or clock range.
    pub fn dvfs_profile(&self, model: GpuModel) -> Option<crate::training::DvfsProfile> {
        crate::training::DvfsProfile::with_power(model, self.gpu_models.power(model)?)
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn node_type(&self, node: NodeId) -> &NodeType {
        &self.node_types[usize::from(self.nodes[node as usize].type_id)]
    }

    pub fn power_model(&self, node: NodeId) -> &PowerModel {
        &self.power_models[usize::from(self.nodes[node as usize].type_id)]
    }

    /// Total GPU capacity in milli-GPU (the denominator of every `%` curve).
    pub fn gpu_capacity_milli(&self) -> u64 {
        self.nodes
            .iter()
            .map(|n| u64::from(self.node_types[usize::from(n.type_id)].gpu_milli()))
            .sum()
    }

    pub fn gpu_count(&self) -> u64 {
        self.nodes
            .iter()
            .map(|n| u64::from(self.node_types[usize::from(n.type_id)].gpu_count))
            .sum()
    }

    pub fn cpu_capacity_milli(&self) -> u64 {
        self.nodes
            .iter()
            .map(|n| u64::from(self.node_types[usize::from(n.type_id)].cpu_milli))
            .sum()
    }

    /// Node count per node type, in type order.
    pub fn type_counts(&self) -> Vec<usize> {
        let mut counts = vec![0; self.node_types.len()];
        for node in &self.nodes {
            counts[usize::from(node.type_id)] += 1;
        }
        counts
    }
}
