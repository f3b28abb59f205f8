//! Where a phase's time goes, independent of how many cores ran it: the core-seconds of its
//! work and its critical path, the longest chain of that work which must run in sequence.
//! Their ratio is what more cores could buy at best (Brent: with `p` cores a phase takes at
//! least `max(work / p, critical path)`), so anyone can see it without owning the cores.

use std::time::Instant;

/// Core-seconds of work and the critical path through it, both in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Work {
    /// Σ of the wall time of every piece of work, each run on one core.
    pub core_seconds: f64,
    /// The longest chain of pieces that must run one after another.
    pub critical_path_seconds: f64,
}

impl Work {
    /// One piece of work of `seconds` on one core.
    pub fn single(seconds: f64) -> Work {
        Work {
            core_seconds: seconds,
            critical_path_seconds: seconds,
        }
    }

    /// `f` run as one piece of work on one core, and its time.
    pub fn timed<T>(f: impl FnOnce() -> T) -> (T, Work) {
        let start = Instant::now();
        let value = f();
        (value, Work::single(start.elapsed().as_secs_f64()))
    }

    /// This work and `other`, free to run side by side.
    pub fn beside(self, other: Work) -> Work {
        Work {
            core_seconds: self.core_seconds + other.core_seconds,
            critical_path_seconds: self.critical_path_seconds.max(other.critical_path_seconds),
        }
    }

    /// This work, then `other`, which needs it done first.
    pub fn then(self, other: Work) -> Work {
        Work {
            core_seconds: self.core_seconds + other.core_seconds,
            critical_path_seconds: self.critical_path_seconds + other.critical_path_seconds,
        }
    }

    /// Pieces free to run side by side.
    pub fn all_beside(pieces: impl IntoIterator<Item = Work>) -> Work {
        pieces.into_iter().fold(Work::default(), Work::beside)
    }

    /// The most `cores` could speed this work up over one core: `work / max(work / cores,
    /// critical path)`.
    pub fn best_speedup(&self, cores: usize) -> f64 {
        let floor = (self.core_seconds / cores.max(1) as f64).max(self.critical_path_seconds);
        if floor > 0.0 {
            self.core_seconds / floor
        } else {
            1.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Work;

    #[test]
    fn chains_add_up_and_side_by_side_work_takes_the_longest() {
        let (a, b, c) = (Work::single(2.0), Work::single(3.0), Work::single(5.0));
        // a then (b beside c): 10 core-seconds, the chain a → c of 7 s.
        let work = a.then(b.beside(c));
        assert_eq!(work.core_seconds, 10.0);
        assert_eq!(work.critical_path_seconds, 7.0);
        assert_eq!(Work::all_beside([a, b, c]).critical_path_seconds, 5.0);
        assert_eq!(Work::all_beside([]), Work::default());
        // Two cores: max(10 / 2, 7) = 7 s, so at best 10 / 7 faster; many cores change nothing.
        assert!((work.best_speedup(2) - 10.0 / 7.0).abs() < 1e-12);
        assert_eq!(work.best_speedup(64), work.best_speedup(8));
        assert_eq!(work.best_speedup(1), 1.0);
    }
}
