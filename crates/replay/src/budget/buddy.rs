//! Buddy allocation of GPUs [D, after ElasticFlow's idea, time-and-budgets §3.4]: every
//! node's GPUs split into aligned power-of-two blocks (8 → 4+4 → 2+2 → 1); a job of `2^k`
//! GPUs takes a free block of that size, splitting the smallest larger block only when
//! none is free; GPU-sharing tasks are packed best-fit into size-1 leaves.
//!
//! The pool keeps counts of free blocks per size (and the free milli-GPU of partly used
//! leaves), not node identities: a round plans from an empty pool, and every sequence of
//! takes it accepts is a real assignment of aligned blocks to jobs, so the plan places.
//! Releasing a block does not merge it with its buddy (pessimistic, never wrong).

use std::collections::BTreeMap;

use gapbench_model::Cluster;

/// Block sizes, as powers of two: 1, 2, 4, 8 GPUs.
const LEVELS: usize = 4;

/// Free GPU blocks and partly used leaves.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BuddyPool {
    /// Free aligned blocks of `2^k` GPUs.
    free_blocks: [u64; LEVELS],
    /// Partly used size-1 leaves by their free milli-GPU → how many.
    open_leaves: BTreeMap<u32, u64>,
}

impl BuddyPool {
    /// The GPUs of `cluster`: each node's count split into its binary digits (a node of 8
    /// GPUs is one block of 8; one of 6 is 4 + 2; one of 12 is 8 + 4).
    pub fn of_cluster(cluster: &Cluster) -> BuddyPool {
        let mut pool = BuddyPool::default();
        for node in 0..cluster.len() as u32 {
            pool.add_gpus(u64::from(cluster.node_type(node).gpu_count));
        }
        pool
    }

    /// A pool of `gpus` GPUs in nodes of 8 (the rest in smaller blocks).
    pub fn of_gpus(gpus: u64) -> BuddyPool {
        let mut pool = BuddyPool::default();
        pool.add_gpus(gpus);
        pool
    }

    fn add_gpus(&mut self, mut gpus: u64) {
        self.free_blocks[LEVELS - 1] += gpus / 8;
        gpus %= 8;
        for k in (0..LEVELS - 1).rev() {
            if gpus & (1 << k) != 0 {
                self.free_blocks[k] += 1;
            }
        }
    }

    /// Whole GPUs free (in free blocks).
    pub fn free_gpus(&self) -> u64 {
        (0..LEVELS).map(|k| self.free_blocks[k] << k).sum()
    }

    /// Free capacity in milli-GPU: free blocks and what partly used leaves have left.
    pub fn free_milli(&self) -> u64 {
        1000 * self.free_gpus()
            + self
                .open_leaves
                .iter()
                .map(|(&free, &count)| u64::from(free) * count)
                .sum::<u64>()
    }

    /// Takes capacity for `gpu_milli` (a multiple of 1000 for whole GPUs, in a power-of-two
    /// count up to 8; below 1000 a share of a leaf). `false` (and nothing taken) when it
    /// does not fit.
    pub fn take(&mut self, gpu_milli: u32) -> bool {
        if gpu_milli < 1000 {
            return self.take_share(gpu_milli);
        }
        match level_of(gpu_milli / 1000) {
            Some(level) => self.take_block(level),
            None => false,
        }
    }

    /// Gives back what [`take`](Self::take) took for whole GPUs (shares are never released
    /// within a round).
    pub fn release_whole(&mut self, gpu_milli: u32) {
        let level = level_of(gpu_milli / 1000).expect("a block size that was taken");
        self.free_blocks[level] += 1;
    }

    fn take_block(&mut self, level: usize) -> bool {
        let Some(from) = (level..LEVELS).find(|&k| self.free_blocks[k] > 0) else {
            return false;
        };
        self.free_blocks[from] -= 1;
        // Splitting a block of 2^from leaves one free buddy at each level below it.
        for k in level..from {
            self.free_blocks[k] += 1;
        }
        true
    }

    fn take_share(&mut self, gpu_milli: u32) -> bool {
        let best = self.open_leaves.range(gpu_milli..).next().map(|(f, _)| *f);
        let free = match best {
            Some(free) => {
                let count = self.open_leaves.get_mut(&free).expect("present");
                *count -= 1;
                if *count == 0 {
                    self.open_leaves.remove(&free);
                }
                free
            }
            None => {
                if !self.take_block(0) {
                    return false;
                }
                1000
            }
        };
        let left = free - gpu_milli;
        if left > 0 {
            *self.open_leaves.entry(left).or_insert(0) += 1;
        }
        true
    }
}

/// `k` with `2^k = gpus`, for 1, 2, 4, 8.
fn level_of(gpus: u32) -> Option<usize> {
    match gpus {
        1 => Some(0),
        2 => Some(1),
        4 => Some(2),
        8 => Some(3),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_split_only_when_needed_and_shares_pack_best_fit() {
        let mut pool = BuddyPool::of_gpus(8);
        assert!(pool.take(2000));
        // 8 → 4 + 2 + (2 taken): a 4 is still free.
        assert!(pool.take(4000));
        assert!(pool.take(600));
        assert!(pool.take(400)); // fills the same leaf exactly
        assert!(pool.take(500)); // opens the last leaf
        assert!(!pool.take(600));
        assert!(pool.take(500));
        assert_eq!(pool.free_gpus(), 0);
        assert!(!pool.take(1000));
    }

    #[test]
    fn odd_nodes_split_into_binary_blocks() {
        let mut pool = BuddyPool::of_gpus(6);
        assert!(!pool.take(8000));
        assert!(pool.take(4000));
        assert!(!pool.take(4000));
        assert!(pool.take(2000));
        assert_eq!(pool.free_gpus(), 0);
        pool.release_whole(2000);
        assert!(pool.take(1000) && pool.take(1000));
    }
}
