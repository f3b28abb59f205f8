//! Where a phase's time goes, independent of how many cores ran it: the CPU seconds of its
//! work and its critical path, the longest chain of that work which must run in sequence.
//! Their ratio is what more cores could buy at best (Brent: with `p` cores a phase takes at
//! least `max(work / p, critical path)`), so anyone can see it without owning the cores.
//!
//! A piece of work is timed by its thread's CPU time, not the clock: on a machine busy with
//! other work the clock counts the waits too (a bench beside three compilers measured 3.4×
//! its CPU time). A piece must therefore run on its own thread alone: a gap solve with one
//! HiGHS thread, a sweep, a cell of one core.

use cpu_time::ThreadTime;

/// Core-seconds of work and the critical path through it, both in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Work {
    /// Σ of the CPU time of every piece of work.
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

    /// `f` run as one piece of work on this thread, and its CPU time.
    pub fn timed<T>(f: impl FnOnce() -> T) -> (T, Work) {
        let start = ThreadTime::now();
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
    fn a_piece_is_timed_by_its_cpu_time_not_the_clock() {
        // A sleep takes the clock's time but no CPU time.
        let ((), slept) = Work::timed(|| std::thread::sleep(std::time::Duration::from_millis(300)));
        assert!(slept.core_seconds < 0.1, "{slept:?}");
        // A busy loop takes CPU time.
        let (sum, busy) = Work::timed(|| {
            (0..50_000_000u64).fold(0u64, |a, i| a ^ std::hint::black_box(i).wrapping_mul(i))
        });
        assert!(sum > 0 && busy.core_seconds > 0.0, "{busy:?}");
    }

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
