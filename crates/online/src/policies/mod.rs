//! Every native online policy, one file each, and the one table that registers them.
//!
//! Adding a policy: write `policies/<module>.rs` (a `Default` type implementing
//! [`Policy`](crate::Policy)) and add its line below. Parsing, names, `PolicyKind::ALL`, the
//! scheduler, `--help`, the table of `docs/own-policy.md` and the benchmarks all follow from that line
//! (see `declare.rs` and `registry.rs`; `docs/own-policy.md`, "A native policy").

use crate::declare::declare_policies;

declare_policies! {
    // Kind     = module::Type,                 name,         other spellings,  tie rank, what it prefers
    Random        = random::RandomPolicy,       "random",     [],                0, "one uniformly random feasible node";
    DotProduct    = dot_product::DotProduct,    "dotprod",    ["dotproduct"],    1, "free resources least aligned with the request (Tetris-like)";
    GpuClustering = gpu_clustering::GpuClustering, "clustering", ["gpuclustering"], 2, "nodes already running GPU tasks of the same kind";
    GpuPacking    = gpu_packing::GpuPacking,    "packing",    ["gpupacking"],    3, "partially used GPUs, then partially used nodes, then idle nodes";
    BestFit       = best_fit::BestFit,          "bestfit",    [],                4, "the least free CPU and GPU left after placement";
    Fgd           = fgd::Fgd,                   "fgd",        [],                5, "the least growth of GPU fragmentation (FGD, ATC'23)";
    Pwr           = pwr::Pwr,                   "pwr",        [],                6, "the least growth of node power (PWR, CCGrid'25)";
}

/// A fresh instance of the native policy of `kind`.
pub fn new_policy(kind: PolicyKind) -> Box<dyn crate::Policy> {
    kind.new_policy()
}
