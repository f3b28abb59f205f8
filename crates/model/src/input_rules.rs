//! What the task loader may change in a row, and how it says so.
//!
//! The reference simulator converts a few values when it turns a pod CSV into pods
//! (reference-semantics §1.2): GPU milli above 1000 becomes 1000, GPU fields of a task with
//! no GPU count are dropped, and so on. gapbench keeps those rules by default, for fidelity,
//! but never silently: every converted value is counted per kind with the first line it
//! happened on ([`Adjustment`]), the CLI prints the counts and the manifest records them.
//! [`InputRules::Strict`] rejects such rows instead, with file, line and column.

use serde::{Deserialize, Serialize};

/// How the task loader treats values the reference simulator would convert.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputRules {
    /// Convert as the reference does, and count every conversion.
    #[default]
    Reference,
    /// Reject every row the reference would convert.
    Strict,
}

/// A kind of value the reference's conversion changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdjustmentKind {
    /// `gpu_milli` above 1000 on a GPU task: read as 1000 (one whole GPU).
    GpuMilliAboveWhole,
    /// `num_gpu` ≥ 1 with `gpu_milli` ≤ 0: read as a CPU-only task.
    GpuCountWithoutMilli,
    /// `gpu_milli` ≠ 0 on a task with `num_gpu` 0: the GPU milli is ignored.
    GpuMilliWithoutCount,
    /// A `gpu_spec` on a CPU-only task: ignored.
    GpuSpecOnCpuOnlyTask,
}

impl AdjustmentKind {
    /// What happened to the value, for warnings and strict-mode errors.
    pub fn describe(self) -> &'static str {
        match self {
            AdjustmentKind::GpuMilliAboveWhole => {
                "gpu_milli above 1000 on a GPU task is read as 1000 (one whole GPU)"
            }
            AdjustmentKind::GpuCountWithoutMilli => {
                "num_gpu ≥ 1 with gpu_milli ≤ 0 is read as a CPU-only task"
            }
            AdjustmentKind::GpuMilliWithoutCount => {
                "gpu_milli on a task with num_gpu 0 is ignored (CPU-only task)"
            }
            AdjustmentKind::GpuSpecOnCpuOnlyTask => "gpu_spec on a CPU-only task is ignored",
        }
    }

    /// The column whose value changes.
    pub fn column(self) -> &'static str {
        match self {
            AdjustmentKind::GpuMilliAboveWhole
            | AdjustmentKind::GpuCountWithoutMilli
            | AdjustmentKind::GpuMilliWithoutCount => "gpu_milli",
            AdjustmentKind::GpuSpecOnCpuOnlyTask => "gpu_spec",
        }
    }
}

/// How many rows of one kind were converted, and the first line it happened on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adjustment {
    pub kind: AdjustmentKind,
    pub rows: u64,
    pub first_line: u64,
}

impl Adjustment {
    /// A warning line naming the file, e.g.
    /// `t.csv: 3 rows (first at line 17): gpu_milli above 1000 … is read as 1000 …`.
    pub fn warning(&self, file: &str) -> String {
        format!(
            "{file}: {} row{} (first at line {}): {} as the reference simulator does (reference-semantics §1.2); --input-rules strict rejects such rows",
            self.rows,
            if self.rows == 1 { "" } else { "s" },
            self.first_line,
            self.kind.describe()
        )
    }
}

/// Collects adjustments in a fixed order (by kind), whatever the row order.
#[derive(Debug, Default)]
pub(crate) struct AdjustmentLog {
    adjustments: Vec<Adjustment>,
}

impl AdjustmentLog {
    pub(crate) fn record(&mut self, kind: AdjustmentKind, line: u64) {
        match self.adjustments.iter_mut().find(|a| a.kind == kind) {
            Some(adjustment) => adjustment.rows += 1,
            None => self.adjustments.push(Adjustment {
                kind,
                rows: 1,
                first_line: line,
            }),
        }
    }

    pub(crate) fn into_sorted(mut self) -> Vec<Adjustment> {
        self.adjustments.sort_by_key(|a| a.kind);
        self.adjustments
    }
}
