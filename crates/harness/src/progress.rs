//! Progress of a long bench phase: a bar with an ETA on a terminal, and a plain line every
//! tenth of the way where no terminal draws the bar (CI logs, `nohup`, Slurm), so a run of
//! many minutes is never silent.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

/// Every bar of the process draws through one `MultiProgress`, so phases that run side by
/// side (sub-cluster gap studies beside replays) each keep a line of their own.
fn bars() -> &'static MultiProgress {
    static BARS: std::sync::OnceLock<MultiProgress> = std::sync::OnceLock::new();
    BARS.get_or_init(MultiProgress::new)
}

/// A phase's progress over a known number of items; shared by the threads that run them.
pub struct Progress {
    bar: ProgressBar,
    lines: Option<LogLines>,
}

/// The plain-line fallback: `what: done/len (pct %), elapsed`.
struct LogLines {
    what: String,
    len: u64,
    done: AtomicU64,
    started: Instant,
}

impl Progress {
    /// Progress over `len` items called `what`; shows nothing unless `visible`.
    pub fn new(visible: bool, len: usize, what: &str) -> Self {
        if !visible {
            return Self {
                bar: ProgressBar::hidden(),
                lines: None,
            };
        }
        if !std::io::stderr().is_terminal() {
            eprintln!("{what}: {len} to run");
            return Self {
                bar: ProgressBar::hidden(),
                lines: Some(LogLines {
                    what: what.to_string(),
                    len: len as u64,
                    done: AtomicU64::new(0),
                    started: Instant::now(),
                }),
            };
        }
        let bar = bars().add(ProgressBar::new(len as u64));
        bar.set_style(
            ProgressStyle::with_template(&format!(
                "{{elapsed_precise}} [{{bar:40}}] {{pos}}/{{len}} {what}, ETA {{eta}}"
            ))
            .expect("valid template")
            .progress_chars("=> "),
        );
        Self { bar, lines: None }
    }

    /// One more item done.
    pub fn inc(&self, items: u64) {
        self.bar.inc(items);
        if let Some(lines) = &self.lines {
            let done = lines.done.fetch_add(items, Ordering::Relaxed) + items;
            if tenth_crossed(done - items, done, lines.len) {
                eprintln!(
                    "{}: {done}/{} ({} %), {:.0} s",
                    lines.what,
                    lines.len,
                    done * 100 / lines.len.max(1),
                    lines.started.elapsed().as_secs_f64()
                );
            }
        }
    }

    /// The phase is over: the bar disappears (its outcome is printed by the caller).
    pub fn finish_and_clear(&self) {
        self.bar.finish_and_clear();
        bars().remove(&self.bar);
    }
}

/// How long work runs before [`LateProgress`] shows itself.
const LATE_AFTER: Duration = Duration::from_secs(3);

/// Progress that shows itself only once the work has run a few seconds ([`LATE_AFTER`]):
/// a long replay is never silent, and the many short ones of a test log print nothing.
pub struct LateProgress {
    started: Instant,
    len: usize,
    what: String,
    /// Items done so far, and the progress once shown.
    state: Mutex<(u64, Option<Progress>)>,
}

impl LateProgress {
    /// Progress over `len` items called `what`, hidden for its first seconds.
    pub fn new(len: usize, what: &str) -> LateProgress {
        LateProgress {
            started: Instant::now(),
            len,
            what: what.to_string(),
            state: Mutex::new((0, None)),
        }
    }

    /// `items` more done.
    pub fn inc(&self, items: u64) {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        state.0 += items;
        match &state.1 {
            Some(progress) => progress.inc(items),
            None if self.started.elapsed() >= LATE_AFTER => {
                let progress = Progress::new(true, self.len, &self.what);
                progress.inc(state.0);
                state.1 = Some(progress);
            }
            None => {}
        }
    }

    /// The work is over: the bar, if shown, disappears.
    pub fn finish_and_clear(&self) {
        let state = self
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(progress) = &state.1 {
            progress.finish_and_clear();
        }
    }
}

/// Whether going from `before` to `after` items of `len` passes a multiple of a tenth.
fn tenth_crossed(before: u64, after: u64, len: u64) -> bool {
    len > 0 && before * 10 / len < after * 10 / len
}

#[cfg(test)]
mod tests {
    use super::tenth_crossed;

    #[test]
    fn a_line_every_tenth_of_the_way_and_at_the_end() {
        let lines: Vec<u64> = (1..=25).filter(|&i| tenth_crossed(i - 1, i, 25)).collect();
        assert_eq!(lines, vec![3, 5, 8, 10, 13, 15, 18, 20, 23, 25]);
        // Fewer items than tenths: a line for each item.
        let few: Vec<u64> = (1..=3).filter(|&i| tenth_crossed(i - 1, i, 3)).collect();
        assert_eq!(few, vec![1, 2, 3]);
        assert!(!tenth_crossed(0, 0, 0));
    }
}
