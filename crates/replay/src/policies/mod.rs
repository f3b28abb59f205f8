//! Time-mode policies, one file each.

pub mod eaco;
pub mod fifo;
pub mod fifo_packed;
pub mod gandiva;
pub mod gpu_sets;
pub mod online;

pub use eaco::{Eaco, EacoConfig};
pub use fifo::FifoExclusive;
pub use fifo_packed::FifoPacked;
pub use gandiva::Gandiva;
pub use online::OnlinePolicy;
