//! The one random number generator of a run.
//!
//! The reference uses Go's `math/rand`; we do not reproduce it bit for bit (reference-
//! semantics §3.1) but use ChaCha8 — a fixed, portable, documented algorithm — seeded from
//! the run's seed, with rand's uniform integer sampling. Versions are pinned by
//! `Cargo.lock`, so a seed gives the same stream on every machine and thread count.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The generator every random choice of a run draws from, in a fixed order.
pub type SimRng = ChaCha8Rng;

pub fn seeded(seed: u64) -> SimRng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// A uniformly random index in `0..len` (`len > 0`).
pub fn uniform_index(rng: &mut SimRng, len: usize) -> usize {
    rng.random_range(0..len)
}

/// Fisher–Yates from the back, the structure of Go's `rand.Shuffle`: for `i = n−1 … 1`
/// swap element `i` with a uniformly random `j ≤ i`.
pub fn shuffle<T>(rng: &mut SimRng, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = uniform_index(rng, i + 1);
        items.swap(i, j);
    }
}

/// A generator for one named thing (a task's derived attributes, a workload class), keyed by
/// `seed`, a `purpose` and the thing's `key`: the same triple gives the same stream whatever
/// else was drawn before, so every policy and every bound sees identical derived numbers.
/// The key is hashed with 64-bit FNV-1a (stable across platforms and releases).
pub fn keyed(seed: u64, purpose: &str, key: &str) -> SimRng {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    for byte in purpose.bytes().chain([0]).chain(key.bytes()) {
        hash = (hash ^ u64::from(byte)).wrapping_mul(PRIME);
    }
    ChaCha8Rng::seed_from_u64(hash ^ seed.rotate_left(32))
}
