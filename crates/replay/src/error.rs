//! The replay crate's one error type: what a caller gets back from building a time policy,
//! reading a budget share, scaling arrivals, or a budget that cannot be met.

/// Why a replay cannot be set up, or could not finish its budget.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReplayError {
    /// Neither a time policy of the table nor a sweep policy spec (the spec's own reason,
    /// then the time policies).
    #[error("{reason}; time mode also knows {known}")]
    UnknownPolicy {
        reason: gapbench_online::OnlineError,
        known: String,
    },
    /// `powerflow@x` where `x` is not a number.
    #[error("`{spec}`: the budget after `@` is a share of FIFO's spend such as 0.9")]
    ShareNotANumber { spec: String },
    /// `powerflow@x` where `x` is zero, negative or not finite.
    #[error("`{spec}`: the budget share must be positive")]
    ShareNotPositive { spec: String },
    /// A budgeted policy written without its share.
    #[error("`{spec}` plans to a budget: write it as `{spec}@1.0` (a share of FIFO's spend)")]
    ShareMissing { spec: String },
    /// A share given to a policy that plans to no budget (`planners`: those that do).
    #[error("`{spec}`: only {planners} take a budget share")]
    ShareUnused { spec: String, planners: String },
    /// [`TimedWorkload::with_arrival_scale`](crate::TimedWorkload::with_arrival_scale) with a
    /// scale that is not a positive number.
    #[error("arrival scale must be a positive number, got {0}")]
    ArrivalScale(f64),
    /// The budget settings are inconsistent (e.g. a carbon budget without a series).
    #[error("{0}")]
    BudgetSettings(String),
    /// Even with every job at its most frugal configuration the budget is too small.
    #[error(
        "budget {budget:.3} {unit} is too small: the jobs need at least {least:.3} {unit} \
         even with every job at its most frugal configuration"
    )]
    BudgetTooSmall {
        budget: f64,
        least: f64,
        unit: &'static str,
    },
    /// The budget ran out at `at_s` with jobs unfinished.
    #[error(
        "budget exhausted at {at_s:.0} s with {unfinished} job(s) unfinished (they need at \
         least {least_more:.3} {unit} more); give a larger budget"
    )]
    BudgetExhausted {
        at_s: f64,
        unfinished: usize,
        least_more: f64,
        unit: &'static str,
    },
}
