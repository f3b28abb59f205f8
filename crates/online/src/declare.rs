//! The `declare_policies!` macro behind the one table of native policies
//! (`policies/mod.rs`): it turns each line of that table into the module, a
//! [`PolicyKind`](crate::PolicyKind) variant, its entry in `ALL`, its names, its
//! GPU-selection tie rank and its constructor (`registry.rs` derives the rest). A leaf:
//! the table uses it, and the registry uses the table.

/// Declares the native policies. One line per policy:
///
/// `Kind = module::Type, "name", ["other", "spellings"], tie_rank, "what it prefers";`
///
/// - `module` is the policy's file `policies/<module>.rs`; `Type` implements
///   [`Policy`](crate::Policy) and `Default` (the scheduler builds a fresh one per run).
/// - `tie_rank`: when two policies of a mix have the same largest weight, the one with the
///   smaller rank chooses the GPUs (reference-semantics §5.9). Built-ins keep the reference's
///   visiting order 0–6; a new policy states its own (distinct, tested).
macro_rules! declare_policies {
    ($($kind:ident = $module:ident :: $ty:ident, $name:literal, [$($alias:literal),*],
        $tie_rank:literal, $summary:literal;)+) => {
        $(pub(crate) mod $module;)+
        $(pub use $module::$ty;)+

        /// The native score plugins, in the order of the registration table.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum PolicyKind {
            $($kind,)+
        }

        impl PolicyKind {
            /// Every native policy, in the order of the registration table.
            pub const ALL: &'static [PolicyKind] = &[$(PolicyKind::$kind,)+];

            /// The canonical name used in specs, file names and figures.
            pub fn name(self) -> &'static str {
                match self {
                    $(PolicyKind::$kind => $name,)+
                }
            }

            /// Other accepted spellings (matched like the name: case, `-` and `_` ignored).
            pub fn aliases(self) -> &'static [&'static str] {
                match self {
                    $(PolicyKind::$kind => &[$($alias),*],)+
                }
            }

            /// Who chooses the GPUs when policies of a mix tie on the largest weight: the
            /// smallest rank (reference-semantics §5.9).
            pub fn selection_tie_rank(self) -> u8 {
                match self {
                    $(PolicyKind::$kind => $tie_rank,)+
                }
            }

            /// What the policy prefers, in one line (for `--help` and the table of `docs/own-policy.md`).
            pub fn summary(self) -> &'static str {
                match self {
                    $(PolicyKind::$kind => $summary,)+
                }
            }

            /// The file that implements it, relative to the repository root.
            pub fn source_file(self) -> &'static str {
                match self {
                    $(PolicyKind::$kind => concat!(
                        "crates/online/src/policies/", stringify!($module), ".rs"
                    ),)+
                }
            }

            /// A fresh instance.
            pub fn new_policy(self) -> Box<dyn $crate::policy::Policy> {
                match self {
                    $(PolicyKind::$kind => Box::new(<$module::$ty as Default>::default()),)+
                }
            }
        }
    };
}

pub(crate) use declare_policies;
