//! The ground truth every figure rests on — the placement checker, the power model, the
//! fragmentation measure, the cluster-state bookkeeping and the cluster metrics — on small
//! cases computed by hand. One test binary (not five) so that `cargo mutants` relinks once per
//! mutant.

mod checker;
mod frag;
mod metrics;
mod power;
mod state;
