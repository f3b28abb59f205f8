//! Who runs on each GPU device: tenants, their summed actual utilisation, GPU memory,
//! reservation and clock. `ClusterState` keeps reservations for the feasibility filter; this table
//! keeps what time mode needs on top (and, for oversubscribing policies, the only GPU view).

use gapbench_model::{Cluster, NodeId, MAX_GPUS_PER_NODE};

/// The load of one device.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceLoad {
    /// Task indices, in the order they joined.
    pub tenants: Vec<u32>,
    /// Σ actual utilisation of the tenants, per mille (may exceed 1000).
    pub util_permille: u32,
    /// Σ peak GPU memory share of the tenants, per mille of the device's memory.
    pub memory_permille: u32,
    /// Σ reserved milli-GPU (may exceed 1000 under oversubscription).
    pub reserved_milli: u32,
    /// The clock each tenant asks for, per mille of `f_max`, in tenant order.
    pub clocks: Vec<u16>,
}

impl DeviceLoad {
    /// The device's clock, per mille of `f_max`: tenants sharing a GPU share one clock, the
    /// highest any asks for (time-and-budgets §3.3, L0) [D]; full when idle.
    pub fn clock_permille(&self) -> u16 {
        self.clocks.iter().copied().max().unwrap_or(1000)
    }
}

/// Every device of the cluster, node by node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceTable {
    loads: Vec<DeviceLoad>,
    gpu_counts: Vec<u8>,
    /// Devices with at least one tenant.
    pub busy_devices: u32,
    /// Σ reserved milli-GPU over all devices (above capacity under oversubscription).
    pub reserved_milli_total: u64,
}

impl DeviceTable {
    pub fn new(cluster: &Cluster) -> Self {
        DeviceTable {
            loads: vec![DeviceLoad::default(); cluster.len() * MAX_GPUS_PER_NODE],
            gpu_counts: (0..cluster.len() as NodeId)
                .map(|n| cluster.node_type(n).gpu_count)
                .collect(),
            busy_devices: 0,
            reserved_milli_total: 0,
        }
    }

    pub fn device(&self, node: NodeId, device: usize) -> &DeviceLoad {
        &self.loads[node as usize * MAX_GPUS_PER_NODE + device]
    }

    /// The existing devices of a node.
    pub fn node(&self, node: NodeId) -> &[DeviceLoad] {
        let start = node as usize * MAX_GPUS_PER_NODE;
        &self.loads[start..start + usize::from(self.gpu_counts[node as usize])]
    }

    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &mut self,
        node: NodeId,
        device: usize,
        task: u32,
        util: u32,
        memory: u32,
        reserved: u32,
        clock_permille: u16,
    ) {
        let load = &mut self.loads[node as usize * MAX_GPUS_PER_NODE + device];
        if load.tenants.is_empty() {
            self.busy_devices += 1;
        }
        load.tenants.push(task);
        load.clocks.push(clock_permille);
        load.util_permille += util;
        load.memory_permille += memory;
        load.reserved_milli += reserved;
        self.reserved_milli_total += u64::from(reserved);
    }

    pub fn remove(
        &mut self,
        node: NodeId,
        device: usize,
        task: u32,
        util: u32,
        memory: u32,
        reserved: u32,
    ) {
        let load = &mut self.loads[node as usize * MAX_GPUS_PER_NODE + device];
        let at = load
            .tenants
            .iter()
            .position(|&t| t == task)
            .expect("a task leaves only devices it is on");
        load.tenants.remove(at);
        load.clocks.remove(at);
        load.util_permille -= util;
        load.memory_permille -= memory;
        load.reserved_milli -= reserved;
        self.reserved_milli_total -= u64::from(reserved);
        if load.tenants.is_empty() {
            self.busy_devices -= 1;
        }
    }

    /// Changes the clock `task` asks for on `device` of `node`.
    pub fn set_clock(&mut self, node: NodeId, device: usize, task: u32, clock_permille: u16) {
        let load = &mut self.loads[node as usize * MAX_GPUS_PER_NODE + device];
        let at = load
            .tenants
            .iter()
            .position(|&t| t == task)
            .expect("a task re-clocks only devices it is on");
        load.clocks[at] = clock_permille;
    }
}
