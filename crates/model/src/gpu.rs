//! GPU models and sets of allowed models.

use std::fmt;

use crate::error::InputError;

/// A GPU model of the openb traces. `G1`–`G3` are Alibaba's undisclosed models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GpuModel {
    T4,
    A10,
    P100,
    V100M16,
    V100M32,
    A100,
    G1,
    G2,
    G3,
}

impl GpuModel {
    pub const ALL: [GpuModel; 9] = [
        GpuModel::T4,
        GpuModel::A10,
        GpuModel::P100,
        GpuModel::V100M16,
        GpuModel::V100M32,
        GpuModel::A100,
        GpuModel::G1,
        GpuModel::G2,
        GpuModel::G3,
    ];

    pub fn name(self) -> &'static str {
        match self {
            GpuModel::T4 => "T4",
            GpuModel::A10 => "A10",
            GpuModel::P100 => "P100",
            GpuModel::V100M16 => "V100M16",
            GpuModel::V100M32 => "V100M32",
            GpuModel::A100 => "A100",
            GpuModel::G1 => "G1",
            GpuModel::G2 => "G2",
            GpuModel::G3 => "G3",
        }
    }

    pub fn parse(name: &str) -> Option<GpuModel> {
        GpuModel::ALL.into_iter().find(|m| m.name() == name)
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

impl fmt::Display for GpuModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The GPU models a task may run on; empty means "any model".
///
/// Keeps the task's `gpu_spec` text too, because the FGD typical-pod ranking breaks ties on
/// it byte-wise (reference-semantics §5.7), duplicates and order included.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct GpuModelSet {
    mask: u16,
    spec: String,
}

impl GpuModelSet {
    pub fn any() -> Self {
        Self::default()
    }

    /// Parses a `|`-separated model list; empty pieces are dropped (as the reference's
    /// CSV-to-YAML conversion does), order and duplicates kept in the text.
    pub fn parse(spec: &str) -> Result<Self, InputError> {
        let pieces: Vec<&str> = spec.split('|').filter(|p| !p.is_empty()).collect();
        let mut mask = 0;
        for piece in &pieces {
            let model = GpuModel::parse(piece).ok_or_else(|| {
                InputError::invalid(format!(
                    "unknown GPU model `{piece}` (known: {})",
                    known_models()
                ))
            })?;
            mask |= model.bit();
        }
        Ok(Self {
            mask,
            spec: pieces.join("|"),
        })
    }

    pub fn of(models: &[GpuModel]) -> Self {
        let spec = models
            .iter()
            .map(|m| m.name())
            .collect::<Vec<_>>()
            .join("|");
        Self::parse(&spec).expect("known models always parse")
    }

    pub fn is_any(&self) -> bool {
        self.mask == 0
    }

    pub fn allows(&self, model: GpuModel) -> bool {
        self.mask == 0 || self.mask & model.bit() != 0
    }

    /// The bit mask of allowed models (0 = any); cheap to compare and hash.
    pub fn mask(&self) -> u16 {
        self.mask
    }

    /// The normalised spec text (`""` when any model is allowed).
    pub fn spec(&self) -> &str {
        &self.spec
    }
}

pub fn known_models() -> String {
    GpuModel::ALL
        .iter()
        .map(|m| m.name())
        .collect::<Vec<_>>()
        .join(", ")
}
