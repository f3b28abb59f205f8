//! The ground truth every figure rests on — the placement checker, the power model, the
//! fragmentation measure and the cluster-state bookkeeping — on small cases computed by hand.
//! One test binary (not four) so that `cargo mutants` relinks once per mutant.

mod checker;
mod frag;
mod power;
mod state;
