//! From event records to what users read: the per-event curve, the integer-percent grid,
//! and means over seeds.

use gapbench_model::{Cluster, ClusterMetrics, FailureReason, PreparedWorkload};
use gapbench_online::{EventRecord, SweepResult};
use gapbench_results::CurveRow;

/// Percent of cluster GPU capacity.
fn pct(milli: f64, capacity_milli: u64) -> f64 {
    100.0 * milli / capacity_milli as f64
}

/// Why each failed event of a run failed: counts per [`FailureReason`] label, in the
/// order of [`FailureReason::ALL`], reasons that did not occur left out.
pub fn failure_counts(
    cluster: &Cluster,
    prepared: &PreparedWorkload,
    result: &SweepResult,
) -> Vec<(FailureReason, usize)> {
    let mut counts = [0usize; FailureReason::ALL.len()];
    for record in result.records.iter().filter(|r| r.placement.is_none()) {
        let reason = FailureReason::of(cluster, &prepared.events[record.task as usize]);
        let slot = FailureReason::ALL.iter().position(|r| *r == reason);
        counts[slot.expect("ALL lists every reason")] += 1;
    }
    FailureReason::ALL
        .into_iter()
        .zip(counts)
        .filter(|(_, count)| *count > 0)
        .collect()
}

/// `curve.csv` of one run, as text ([`CurveRow`]s).
pub fn curve_csv(cluster: &Cluster, prepared: &PreparedWorkload, result: &SweepResult) -> String {
    let mut out = String::with_capacity(160 * (result.records.len() + 1));
    out.push_str(&CurveRow::csv_header());
    out.push('\n');
    for (event, record) in result.records.iter().enumerate() {
        out.push_str(&curve_row(cluster, prepared, event, record).csv_line());
        out.push('\n');
    }
    out
}

/// `curve.csv`'s rows of one run.
pub fn curve_rows(
    cluster: &Cluster,
    prepared: &PreparedWorkload,
    result: &SweepResult,
) -> Vec<CurveRow> {
    let records = result.records.iter().enumerate();
    records
        .map(|(event, record)| curve_row(cluster, prepared, event, record))
        .collect()
}

/// The curve's row of one event.
fn curve_row(
    cluster: &Cluster,
    prepared: &PreparedWorkload,
    event: usize,
    record: &EventRecord,
) -> CurveRow {
    let capacity = cluster.gpu_capacity_milli();
    let m = &record.metrics;
    let task = &prepared.events[record.task as usize];
    let (outcome, reason, node, devices) = match record.placement {
        Some(p) => (
            "placed",
            "",
            cluster.nodes[p.node as usize].name.clone(),
            p.devices
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("|"),
        ),
        None => (
            "failed",
            FailureReason::of(cluster, task).label(),
            String::new(),
            String::new(),
        ),
    };
    let idle = m.idle_gpu_milli();
    let q124_pct = if idle > 0.0 {
        100.0 * m.q124_gpu_milli() / idle
    } else {
        0.0
    };
    CurveRow {
        event,
        task: task.name.clone(),
        outcome,
        reason,
        node,
        devices,
        arrived_gpu_milli: record.arrived_gpu_milli,
        arrived_pct: pct(record.arrived_gpu_milli as f64, capacity),
        used_gpu_milli: m.used_gpu_milli,
        alloc_pct: pct(m.used_gpu_milli as f64, capacity),
        frag_gpu_milli: m.frag_gpu_milli(),
        frag_ratio_pct: m.frag_ratio_pct(),
        q124_pct,
        idle_gpu_milli: idle,
        power_cpu_w: m.power.cpu_watts,
        power_gpu_w: m.power.gpu_watts,
        power_total_w: m.power.total_watts(),
        used_nodes: m.used_nodes,
        used_gpus: m.used_gpus,
        arrived_cpu_milli: record.arrived_cpu_milli,
        used_cpu_milli: m.used_cpu_milli,
        failed_tasks: record.failed_tasks,
    }
}

/// The cluster's values at one point of a sweep (declared in the results crate).
pub use gapbench_results::GridSample as Sample;

/// The sample of `metrics` at `arrived_pct`.
fn sample_of(
    metrics: &ClusterMetrics,
    arrived_pct: f64,
    failed_tasks: u32,
    capacity: u64,
) -> Sample {
    Sample {
        arrived_pct,
        alloc_pct: pct(metrics.used_gpu_milli as f64, capacity),
        frag_gpu_milli: metrics.frag_gpu_milli(),
        frag_ratio_pct: metrics.frag_ratio_pct(),
        power_cpu_w: metrics.power.cpu_watts as f64,
        power_gpu_w: metrics.power.gpu_watts as f64,
        power_total_w: metrics.power.total_watts() as f64,
        used_nodes: f64::from(metrics.used_nodes),
        failed_tasks: f64::from(failed_tasks),
    }
}

/// Field-wise sums of samples in the order they are added: means over seeds without
/// holding every seed. Each sum starts where `Iterator::sum` starts and adds in the same
/// order, so a mean equals the plain mean of the same samples bit for bit.
#[derive(Debug, Clone, Copy)]
struct SampleSum {
    sums: [f64; 9],
}

impl SampleSum {
    fn new() -> SampleSum {
        SampleSum {
            sums: [std::iter::empty::<f64>().sum(); 9],
        }
    }

    fn add(&mut self, sample: &Sample) {
        for (sum, value) in self.sums.iter_mut().zip(sample.fields()) {
            *sum += value;
        }
    }

    fn mean(&self, count: usize) -> Sample {
        Sample::from_fields(self.sums.map(|sum| sum / count as f64))
    }
}

/// Pointwise sums of integer-percent grids, over the percents every grid added reaches.
#[derive(Debug, Clone, Default)]
struct GridSum {
    count: usize,
    sums: Option<Vec<SampleSum>>,
}

impl GridSum {
    fn add(&mut self, grid: &[Sample]) {
        self.count += 1;
        let sums = self
            .sums
            .get_or_insert_with(|| vec![SampleSum::new(); grid.len()]);
        sums.truncate(grid.len());
        for (sum, sample) in sums.iter_mut().zip(grid) {
            sum.add(sample);
        }
    }

    fn mean(&self) -> Vec<Sample> {
        let sums = self.sums.iter().flatten();
        sums.map(|sum| sum.mean(self.count)).collect()
    }
}

/// The means over seeds of the final samples and of the grids, one seed added at a time.
#[derive(Debug, Clone)]
pub struct SeedMeans {
    finals: SampleSum,
    grids: GridSum,
}

impl Default for SeedMeans {
    fn default() -> Self {
        SeedMeans {
            finals: SampleSum::new(),
            grids: GridSum::default(),
        }
    }
}

impl SeedMeans {
    pub fn add(&mut self, final_sample: &Sample, grid: &[Sample]) {
        self.finals.add(final_sample);
        self.grids.add(grid);
    }

    /// Seeds added so far.
    pub fn count(&self) -> usize {
        self.grids.count
    }

    pub fn final_sample(&self) -> Sample {
        self.finals.mean(self.grids.count)
    }

    pub fn grid(&self) -> Vec<Sample> {
        self.grids.mean()
    }
}

/// For every integer `a` from 0 up to the largest arrived percent reached, the values after
/// the last event with `arrived_pct ≤ a` (the empty cluster before any such event).
pub fn integer_grid(
    cluster: &Cluster,
    empty: &ClusterMetrics,
    records: &[EventRecord],
) -> Vec<Sample> {
    let capacity = cluster.gpu_capacity_milli();
    let Some(last) = records.last() else {
        return vec![sample_of(empty, 0.0, 0, capacity)];
    };
    let top = last.arrived_gpu_milli * 100 / capacity;
    let mut grid = Vec::with_capacity(top as usize + 1);
    let mut current = (*empty, 0u32);
    let mut next = 0;
    for a in 0..=top {
        while next < records.len() && records[next].arrived_gpu_milli * 100 <= a * capacity {
            current = (records[next].metrics, records[next].failed_tasks);
            next += 1;
        }
        grid.push(sample_of(&current.0, a as f64, current.1, capacity));
    }
    grid
}

/// The values after the last event.
pub fn final_sample(cluster: &Cluster, empty: &ClusterMetrics, records: &[EventRecord]) -> Sample {
    let capacity = cluster.gpu_capacity_milli();
    match records.last() {
        Some(r) => sample_of(
            &r.metrics,
            pct(r.arrived_gpu_milli as f64, capacity),
            r.failed_tasks,
            capacity,
        ),
        None => sample_of(empty, 0.0, 0, capacity),
    }
}

/// The pointwise mean of several grids over the percents all of them reach.
pub fn mean_grid(grids: &[Vec<Sample>]) -> Vec<Sample> {
    let mut sum = GridSum::default();
    grids.iter().for_each(|grid| sum.add(grid));
    sum.mean()
}

pub fn mean_sample(samples: &[Sample]) -> Sample {
    let mut sum = SampleSum::new();
    samples.iter().for_each(|s| sum.add(s));
    sum.mean(samples.len())
}

/// A grid as CSV text (`mean_curve.csv`: [`Sample`]s).
pub fn grid_csv(grid: &[Sample]) -> String {
    Sample::csv(grid)
}
