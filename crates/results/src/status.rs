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

/// An enum whose variants are written as fixed labels: `label`, `parse` (every label back,
/// `None` for any other text), `Display` and serde as that text.
macro_rules! labelled_status {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $label:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every status, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The text files and tables hold.
            pub fn label(self) -> &'static str {
                match self {
                    $($name::$variant => $label,)+
                }
            }

            /// The status a [`label`](Self::label) names; `None` for any other text.
            pub fn parse(label: &str) -> Option<Self> {
                match label {
                    $($label => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.label())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.label())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = String::deserialize(deserializer)?;
                $name::parse(&text).ok_or_else(|| {
                    let labels: Vec<&str> = $name::ALL.iter().map(|s| s.label()).collect();
                    serde::de::Error::custom(format_args!(
                        "status {text:?} is not one of {}",
                        labels.join(", ")
                    ))
                })
            }
        }
    };
}

labelled_status! {
    /// What a replay's energy bound proved (`gapbench_bounds::replay_bound`).
    ReplayBoundStatus {
        /// Every window's configuration LP was solved to optimality (or its bound met a
        /// placement), and the span was cut into `max_windows` windows (or no window left
        /// has a start or end inside): the bound depends on its input alone.
        Converged => "windows_converged",
        /// As `Converged`, but the round cap (`max_pricing_rounds`) stopped some windows'
        /// column generation before it converged: their Lagrangian bounds still hold, and
        /// the bound depends on its input and options alone.
        RoundLimit => "round_limit",
        /// Every window's configuration LP converged and branch and price proved every
        /// window's integer optimum (the least power of integer wake-ups and placements):
        /// the bound depends on its input alone.
        Integer => "windows_integer",
        /// As `Integer`, but some windows' trees did not close: the node cap
        /// (`max_branch_nodes`) stopped them, or a tree node's aggregates were all integral
        /// with its LP not (no row left to split on). Their bounds lie between the LP's and
        /// the integer optimum, the same on every run.
        BranchLimit => "branch_limit",
        /// The time limit stopped a window's column generation or its tree, or stopped
        /// splitting before `max_windows`: the bound still holds (Lagrangian or fallback),
        /// but may differ between runs.
        TimeLimit => "time_limit",
    }
}

impl ReplayBoundStatus {
    /// How far the status is from a bound that depends on its input alone and is the
    /// integer optimum of every window: the weakest of several seeds is the one to report.
    pub fn weakness(self) -> u8 {
        match self {
            ReplayBoundStatus::Integer => 0,
            ReplayBoundStatus::BranchLimit => 1,
            ReplayBoundStatus::Converged => 2,
            ReplayBoundStatus::RoundLimit => 3,
            ReplayBoundStatus::TimeLimit => 4,
        }
    }

    /// The mark a table gives a bound of this status (nothing where it is the same on every
    /// run and every LP converged), with what it means.
    pub fn mark(self) -> Option<(&'static str, &'static str)> {
        match self {
            ReplayBoundStatus::Integer | ReplayBoundStatus::Converged => None,
            ReplayBoundStatus::BranchLimit => Some((
                "‡",
                "branch_limit: some window's branch and price stopped at its node cap or could not split further (the bound lies between the LP's and the integer optimum, the same on every run)",
            )),
            ReplayBoundStatus::RoundLimit => Some((
                "†",
                "round_limit: some window's column generation stopped at its round cap (the bound holds and is the same on every run)",
            )),
            ReplayBoundStatus::TimeLimit => Some((
                "*",
                "time_limit: some window's column generation or tree stopped at its time limit (the bound holds, its last digits may differ between runs)",
            )),
        }
    }
}

labelled_status! {
    /// What column generation over per-job schedules reached at one budget of the
    /// JCT–budget frontier (`gapbench_bounds::frontier::colgen`).
    ColgenStatus {
        /// The bound is within the tolerance of the master LP's optimum.
        Converged => "converged",
        /// The time limit stopped it: the bound valid, the LP not reached.
        TimeLimit => "time limit",
        /// Out of rounds or of improving columns: the bound valid, the LP not reached.
        Stopped => "stopped",
        /// The budget is below the least any schedule spends.
        Infeasible => "infeasible",
    }
}

labelled_status! {
    /// The status of a budgeted point's mean-JCT bound against the frontier's master LP
    /// values at the budgets column generation tightened (`gapbench_bounds::frontier`).
    BudgetBoundStatus {
        /// Within column generation's tolerance of the LP's value at the point's spend.
        Converged => "converged",
        /// Below the LP's value there by more: the bound valid, the LP not reached.
        Open => "open",
        /// No master LP was solved: Lagrangian lines only, nothing to hold them against.
        Lagrangian => "lagrangian",
        /// The point's spend lies below every tightened budget.
        Outside => "outside",
    }
}

labelled_status! {
    /// What the time-indexed pattern LP of EaCO's bound proved
    /// (`gapbench_bounds::eaco_bound`).
    EacoLpStatus {
        /// Solved to optimality; the certified value equals the optimum up to tolerances.
        Optimal => "optimal",
        /// Stopped at the time limit: the certified value is still a valid (weaker) bound.
        TimeLimit => "time-limit",
        /// No schedule meets every window (not even in the relaxation).
        Infeasible => "infeasible",
        /// Not run (no slot length).
        Skipped => "skipped",
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

    #[test]
    fn every_bound_status_label_parses_back_and_serialises_as_itself() {
        fn round_trip<T>(all: &[T], label: fn(&T) -> &'static str, parse: fn(&str) -> Option<T>)
        where
            T: Copy + PartialEq + std::fmt::Debug + Serialize + for<'de> Deserialize<'de>,
        {
            for &status in all {
                assert_eq!(parse(label(&status)), Some(status));
                let json = serde_json::to_string(&status).unwrap();
                assert_eq!(json, format!("{:?}", label(&status)));
                assert_eq!(serde_json::from_str::<T>(&json).unwrap(), status);
            }
            assert_eq!(parse("Converged"), None);
        }
        round_trip(
            ReplayBoundStatus::ALL,
            |s| s.label(),
            ReplayBoundStatus::parse,
        );
        round_trip(ColgenStatus::ALL, |s| s.label(), ColgenStatus::parse);
        round_trip(
            BudgetBoundStatus::ALL,
            |s| s.label(),
            BudgetBoundStatus::parse,
        );
        round_trip(EacoLpStatus::ALL, |s| s.label(), EacoLpStatus::parse);
        let error = serde_json::from_str::<ColgenStatus>("\"time_limit\"").unwrap_err();
        assert!(error.to_string().contains("time limit"), "{error}");
    }
}
