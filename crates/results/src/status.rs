//! How a solve ended, and the one set of labels that says so in every file.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// How a solve ended.
#[derive(Debug, Clone, PartialEq)]
pub enum SolveStatus {
    /// The incumbent is proven optimal: bound = incumbent (within HiGHS's tolerances).
    Optimal,
    /// HiGHS stopped at the requested relative gap; the optimum lies between bound and incumbent.
    GapLimit,
    /// The time limit was reached; the optimum lies between bound and incumbent.
    TimeLimitWithIncumbent,
    /// Column generation converged: the bound is at least the configuration LP's proven
    /// optimum, and branch-and-price in the time left (`ilp::cg::branch`) did not close the
    /// integer gap between it and the incumbent. The optimum lies between bound and incumbent.
    LpBound,
    /// No placement satisfies the constraints.
    Infeasible,
    /// The bound comes from a relaxation of an aggregated model (full cluster); the
    /// incumbent is the heuristic's own placement, the only placement known.
    RelaxationBound,
    /// Not attempted: no formulation for this objective at this size (the reason says why).
    Unsupported(String),
    Error(String),
}

const UNSUPPORTED: &str = "unsupported: ";
const ERROR: &str = "error: ";

impl SolveStatus {
    /// Short label for tables and CSV; [`parse`](Self::parse) reads every label back.
    pub fn label(&self) -> String {
        match self {
            SolveStatus::Optimal => "optimal".into(),
            SolveStatus::GapLimit => "gap_limit".into(),
            SolveStatus::TimeLimitWithIncumbent => "time_limit".into(),
            SolveStatus::LpBound => "lp_bound".into(),
            SolveStatus::Infeasible => "infeasible".into(),
            SolveStatus::RelaxationBound => "relaxation_bound".into(),
            SolveStatus::Unsupported(reason) => format!("{UNSUPPORTED}{reason}"),
            SolveStatus::Error(message) => format!("{ERROR}{message}"),
        }
    }

    /// The status a [`label`](Self::label) names; `None` for any other text.
    pub fn parse(label: &str) -> Option<SolveStatus> {
        Some(match label {
            "optimal" => SolveStatus::Optimal,
            "gap_limit" => SolveStatus::GapLimit,
            "time_limit" => SolveStatus::TimeLimitWithIncumbent,
            "lp_bound" => SolveStatus::LpBound,
            "infeasible" => SolveStatus::Infeasible,
            "relaxation_bound" => SolveStatus::RelaxationBound,
            other => {
                if let Some(reason) = other.strip_prefix(UNSUPPORTED) {
                    SolveStatus::Unsupported(reason.to_string())
                } else if let Some(message) = other.strip_prefix(ERROR) {
                    SolveStatus::Error(message.to_string())
                } else {
                    return None;
                }
            }
        })
    }

    pub fn is_optimal(&self) -> bool {
        *self == SolveStatus::Optimal
    }
}

impl Serialize for SolveStatus {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.label())
    }
}

impl<'de> Deserialize<'de> for SolveStatus {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        SolveStatus::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format_args!(
                "status {text:?} is not optimal, gap_limit, time_limit, lp_bound, infeasible, relaxation_bound, unsupported: … or error: …"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_label_parses_back() {
        for status in [
            SolveStatus::Optimal,
            SolveStatus::GapLimit,
            SolveStatus::TimeLimitWithIncumbent,
            SolveStatus::LpBound,
            SolveStatus::Infeasible,
            SolveStatus::RelaxationBound,
            SolveStatus::Unsupported("no fragmentation bound beyond 40 nodes".into()),
            SolveStatus::Error("HiGHS said \"no\", twice".into()),
            SolveStatus::Error(String::new()),
        ] {
            assert_eq!(SolveStatus::parse(&status.label()), Some(status.clone()));
            let json = serde_json::to_string(&status).unwrap();
            assert_eq!(serde_json::from_str::<SolveStatus>(&json).unwrap(), status);
        }
    }

    #[test]
    fn other_text_is_no_status() {
        for text in ["solved", "relaxation", "error", "Optimal", ""] {
            assert_eq!(SolveStatus::parse(text), None, "{text}");
        }
        let error = serde_json::from_str::<SolveStatus>("\"solved\"").unwrap_err();
        assert!(error.to_string().contains("solved"), "{error}");
    }
}
