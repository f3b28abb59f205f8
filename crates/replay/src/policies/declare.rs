//! The `declare_time_policies!` macro behind the one table of time policies
//! (`policies/mod.rs`), as the online crate's `declare_policies!` is for sweep policies: it
//! turns each line into a [`TimePolicyKind`](super::TimePolicyKind) variant, its entry in
//! `ALL`, its name, help group, power levers, budget and constructor. Everything else that
//! lists time policies (parsing, the help text, the budgeted and baseline lists, the tests'
//! "every time policy") is derived in `policies/mod.rs` from `TimePolicyKind::ALL`.
//!
//! A leaf: the names it expands to (`PolicySettings`, `PowerLevers`, `TimePolicyGroup`,
//! `BudgetTarget`, `TimePolicy`) are resolved where the table is written.

/// Declares the time policies. One line per policy:
///
/// `Kind = "name", Group, [levers], budget, |settings| constructor;`
///
/// - `Group` is its [`TimePolicyGroup`](super::TimePolicyGroup) (how the help text lists it).
/// - `levers`: the [`PowerLevers`](super::PowerLevers) fields it uses, by name.
/// - `budget`: `Some(BudgetTarget::…)` for a policy that plans to a budget (and so is written
///   `name@share`), `None` otherwise.
/// - `constructor`: an expression of the `settings: &PolicySettings` that builds the policy.
macro_rules! declare_time_policies {
    ($($kind:ident = $name:literal, $group:ident, [$($lever:ident),*], $budget:expr,
        |$settings:ident| $build:expr;)+) => {
        /// The time policies of the table, in its order.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum TimePolicyKind {
            $($kind,)+
        }

        impl TimePolicyKind {
            /// Every time policy, in the order of the table.
            pub const ALL: &'static [TimePolicyKind] = &[$(TimePolicyKind::$kind,)+];

            /// The name written in specs, on the command line and in file names.
            pub fn name(self) -> &'static str {
                match self {
                    $(TimePolicyKind::$kind => $name,)+
                }
            }

            /// How the help text lists it.
            pub fn group(self) -> TimePolicyGroup {
                match self {
                    $(TimePolicyKind::$kind => TimePolicyGroup::$group,)+
                }
            }

            /// What it may do that draws less power than the trace's requests at full clock
            /// on reserved devices.
            pub fn levers(self) -> PowerLevers {
                match self {
                    $(TimePolicyKind::$kind => PowerLevers {
                        $($lever: true,)*
                        ..PowerLevers::default()
                    },)+
                }
            }

            /// What it plans to: `Some` for the budgeted policies (written `name@share`).
            pub fn budget(self) -> Option<BudgetTarget> {
                match self {
                    $(TimePolicyKind::$kind => $budget,)+
                }
            }

            /// A fresh instance with `settings` (the policies that take none ignore them).
            pub fn build(self, settings: &PolicySettings) -> Box<dyn TimePolicy> {
                match self {
                    $(TimePolicyKind::$kind => {
                        #[allow(unused_variables)]
                        let $settings = settings;
                        Box::new($build)
                    })+
                }
            }
        }
    };
}

pub(crate) use declare_time_policies;
