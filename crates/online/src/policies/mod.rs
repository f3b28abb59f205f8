//! Every online policy, one file each.

mod best_fit;
pub(crate) mod dot_product;
pub(crate) mod fgd;
mod gpu_clustering;
mod gpu_packing;
pub(crate) mod pwr;
mod random;

pub use best_fit::BestFit;
pub use dot_product::DotProduct;
pub use fgd::Fgd;
pub use gpu_clustering::GpuClustering;
pub use gpu_packing::GpuPacking;
pub use pwr::Pwr;
pub use random::RandomPolicy;

use crate::policy::Policy;
use crate::spec::PolicyKind;

/// A fresh instance of the policy of `kind`.
pub fn new_policy(kind: PolicyKind) -> Box<dyn Policy> {
    match kind {
        PolicyKind::Random => Box::new(RandomPolicy::default()),
        PolicyKind::DotProduct => Box::new(DotProduct),
        PolicyKind::GpuClustering => Box::new(GpuClustering),
        PolicyKind::GpuPacking => Box::new(GpuPacking),
        PolicyKind::BestFit => Box::new(BestFit),
        PolicyKind::Fgd => Box::new(Fgd),
        PolicyKind::Pwr => Box::new(Pwr),
    }
}
