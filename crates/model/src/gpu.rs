//! GPU models and sets of allowed models.
//!
//! A [`GpuModel`] is a small id for a model *name*. The nine models of the openb traces are
//! built in with fixed ids 0–8 (so every output about them is what it always was); a GPU-model
//! file ([`crate::gpu_models`]) registers further names, which take the next ids in the order
//! they are first registered (a command loads one file, so in file order). Names are
//! identity, kept process-wide so a task list can name a model without a table at hand;
//! what a model *is* (power, memory) is data held per cluster in a
//! [`crate::gpu_models::GpuModelTable`], so two clusters may give one name different watts.

use std::fmt;
use std::sync::RwLock;

use crate::error::InputError;

/// A GPU model: an index into the process-wide list of model names. `G1`–`G3` are
/// Alibaba's undisclosed models of the openb traces.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GpuModel(u8);

/// The most GPU models one process may name (built-in and registered), the width of a
/// [`GpuModelSet`]'s mask.
pub const MAX_GPU_MODELS: usize = 64;

const BUILT_IN_NAMES: [&str; 9] = [
    "T4", "A10", "P100", "V100M16", "V100M32", "A100", "G1", "G2", "G3",
];

/// Names registered beyond the built-ins, by id − 9. Append-only; a name is never removed,
/// so an id, once handed out, names the same model for the life of the process.
static REGISTERED: RwLock<Vec<&'static str>> = RwLock::new(Vec::new());

fn registered_names() -> std::sync::RwLockReadGuard<'static, Vec<&'static str>> {
    // A panic while holding the lock cannot leave the list half-written (a push is
    // atomic with respect to readers), so a poisoned lock is still sound to read.
    REGISTERED.read().unwrap_or_else(|e| e.into_inner())
}

impl GpuModel {
    pub const T4: GpuModel = GpuModel(0);
    pub const A10: GpuModel = GpuModel(1);
    pub const P100: GpuModel = GpuModel(2);
    pub const V100M16: GpuModel = GpuModel(3);
    pub const V100M32: GpuModel = GpuModel(4);
    pub const A100: GpuModel = GpuModel(5);
    pub const G1: GpuModel = GpuModel(6);
    pub const G2: GpuModel = GpuModel(7);
    pub const G3: GpuModel = GpuModel(8);

    /// The models of the openb traces, in id order.
    pub const BUILT_IN: [GpuModel; 9] = [
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
        match BUILT_IN_NAMES.get(self.index()) {
            Some(name) => name,
            None => registered_names()[self.index() - BUILT_IN_NAMES.len()],
        }
    }

    /// The model named `name`, built in or registered; `None` for a name never registered.
    pub fn parse(name: &str) -> Option<GpuModel> {
        if let Some(i) = BUILT_IN_NAMES.iter().position(|n| *n == name) {
            return Some(GpuModel(i as u8));
        }
        let names = registered_names();
        let i = names.iter().position(|n| *n == name)?;
        Some(GpuModel((BUILT_IN_NAMES.len() + i) as u8))
    }

    /// The model named `name`, registering the name when it is new. Refuses a name a
    /// task's `gpu_spec` could not write (empty, with `|`, `,`, quotes or surrounding
    /// spaces) and a process that would name more than [`MAX_GPU_MODELS`] models.
    pub fn register(name: &str) -> Result<GpuModel, String> {
        if name.is_empty() || name.trim() != name || name.contains(['|', ',', '"', '\n', '\r']) {
            return Err(format!(
                "`{name}` cannot be a GPU model name: it must be non-empty, without surrounding spaces, `|`, `,` or quotes"
            ));
        }
        if let Some(model) = GpuModel::parse(name) {
            return Ok(model);
        }
        let mut names = REGISTERED.write().unwrap_or_else(|e| e.into_inner());
        // Another thread may have registered it between the read and the write lock.
        if let Some(i) = names.iter().position(|n| *n == name) {
            return Ok(GpuModel((BUILT_IN_NAMES.len() + i) as u8));
        }
        let id = BUILT_IN_NAMES.len() + names.len();
        if id >= MAX_GPU_MODELS {
            return Err(format!(
                "`{name}` would be GPU model {}: at most {MAX_GPU_MODELS} GPU models (built-in and from files) are supported",
                id + 1
            ));
        }
        // Leaked once per distinct name (at most 55 in a process) so `name()` can lend it.
        names.push(Box::leak(name.to_string().into_boxed_str()));
        Ok(GpuModel(id as u8))
    }

    /// Every model named so far, built-in first, then in registration order.
    pub fn all_named() -> Vec<GpuModel> {
        let count = BUILT_IN_NAMES.len() + registered_names().len();
        (0..count).map(|i| GpuModel(i as u8)).collect()
    }

    /// The id: 0–8 for the built-in models, then registration order.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    pub fn is_built_in(self) -> bool {
        self.index() < BUILT_IN_NAMES.len()
    }

    fn bit(self) -> u64 {
        1 << self.0
    }
}

impl fmt::Display for GpuModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Debug for GpuModel {
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
    mask: u64,
    spec: String,
}

impl GpuModelSet {
    pub fn any() -> Self {
        Self::default()
    }

    /// Parses a `|`-separated model list; empty pieces are dropped (as the reference's
    /// CSV-to-YAML conversion does), order and duplicates kept in the text. A name must be
    /// built in or registered by a GPU-model file loaded before.
    pub fn parse(spec: &str) -> Result<Self, InputError> {
        let pieces: Vec<&str> = spec.split('|').filter(|p| !p.is_empty()).collect();
        let mut mask = 0;
        for piece in &pieces {
            let model = GpuModel::parse(piece).ok_or_else(|| {
                InputError::invalid(format!(
                    "unknown GPU model `{piece}` (known: {}; name others in a GPU-model file, --gpu-models)",
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
        Self::parse(&spec).expect("named models always parse")
    }

    pub fn is_any(&self) -> bool {
        self.mask == 0
    }

    pub fn allows(&self, model: GpuModel) -> bool {
        self.mask == 0 || self.mask & model.bit() != 0
    }

    /// The bit mask of allowed models (0 = any), bit `i` for model id `i`; cheap to compare
    /// and hash.
    pub fn mask(&self) -> u64 {
        self.mask
    }

    /// The normalised spec text (`""` when any model is allowed).
    pub fn spec(&self) -> &str {
        &self.spec
    }
}

/// Every model named so far, comma-separated (built-in first).
pub fn known_models() -> String {
    GpuModel::all_named()
        .iter()
        .map(|m| m.name())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_models_keep_their_ids_and_names() {
        for (i, model) in GpuModel::BUILT_IN.into_iter().enumerate() {
            assert_eq!(model.index(), i);
            assert_eq!(GpuModel::parse(model.name()), Some(model));
            assert!(model.is_built_in());
        }
        assert_eq!(GpuModel::G2.to_string(), "G2");
        assert_eq!(format!("{:?}", Some(GpuModel::T4)), "Some(T4)");
    }

    #[test]
    fn registering_a_name_twice_gives_one_id_and_sets_accept_it() {
        let first = GpuModel::register("TestModel-gpu-rs").unwrap();
        assert_eq!(GpuModel::register("TestModel-gpu-rs"), Ok(first));
        assert!(!first.is_built_in());
        assert_eq!(first.name(), "TestModel-gpu-rs");
        assert_eq!(GpuModel::register("A10"), Ok(GpuModel::A10));
        let set = GpuModelSet::parse("TestModel-gpu-rs|T4").unwrap();
        assert!(set.allows(first) && set.allows(GpuModel::T4) && !set.allows(GpuModel::A10));
    }

    #[test]
    fn names_a_gpu_spec_cannot_write_are_refused() {
        for bad in ["", " A", "A|B", "A,B", "say \"x\""] {
            assert!(GpuModel::register(bad).is_err(), "{bad:?}");
        }
        assert!(GpuModel::parse("never-registered-x").is_none());
    }
}
