//! The three objectives a gap is measured on.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Which objective a solve, a gap row or a figure is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Objective {
    /// Total cluster power in watts (minimise).
    Power,
    /// Allocated GPU milli (maximise).
    Alloc,
    /// Cluster fragmentation Σ_n F(n) in milli-GPU (minimise).
    Frag,
}

impl Objective {
    pub const ALL: [Objective; 3] = [Objective::Power, Objective::Alloc, Objective::Frag];

    /// The label in CSVs, specs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Objective::Power => "power",
            Objective::Alloc => "alloc",
            Objective::Frag => "frag",
        }
    }

    /// Reads a [`name`](Self::name), ignoring case and surrounding space.
    pub fn parse(text: &str) -> Option<Objective> {
        Objective::ALL
            .into_iter()
            .find(|o| o.name() == text.trim().to_ascii_lowercase())
    }

    pub fn maximise(self) -> bool {
        self == Objective::Alloc
    }

    /// Power (whole watts) and allocation (whole milli) take integer values only, so their
    /// bounds may be rounded towards the incumbent.
    pub fn integral(self) -> bool {
        self != Objective::Frag
    }

    /// Decimals of its values in CSVs: whole watts and milli-GPU, fragmentation to 1e-3.
    pub fn csv_decimals(self) -> usize {
        if self.integral() {
            0
        } else {
            3
        }
    }

    /// What is optimised, for figure titles.
    pub fn description(self) -> &'static str {
        match self {
            Objective::Power => "total power (minimise)",
            Objective::Alloc => "allocated GPU (maximise)",
            Objective::Frag => "fragmented GPU (minimise)",
        }
    }

    /// The unit of its gap: relative for power and fragmentation, percentage points of GPU
    /// capacity for allocation.
    pub fn gap_axis(self) -> &'static str {
        match self {
            Objective::Alloc => "gap (percentage points of GPU capacity)",
            Objective::Power | Objective::Frag => "gap (%)",
        }
    }
}

impl Serialize for Objective {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Objective {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Objective::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format_args!("{text:?} is not power, alloc or frag"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back() {
        for objective in Objective::ALL {
            assert_eq!(Objective::parse(objective.name()), Some(objective));
            let json = serde_json::to_string(&objective).unwrap();
            assert_eq!(serde_json::from_str::<Objective>(&json).unwrap(), objective);
        }
        assert_eq!(Objective::parse(" Power "), Some(Objective::Power));
        assert_eq!(Objective::parse("watts"), None);
    }
}
