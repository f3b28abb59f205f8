//! Progress of a long call, on Python's `sys.stderr` (so a notebook shows it too): nothing
//! for a call that ends within [`LATE_S`], then a line that counts what is done (seeds of a
//! sweep) or only the time (a gap study's solves, a replay), redrawn every second on a
//! terminal or notebook, written every [`LOG_EVERY_S`] where stderr is a log.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use pyo3::prelude::*;

/// A call shorter than this shows nothing.
const LATE_S: f64 = 3.0;
/// Between two lines where stderr is not a terminal.
const LOG_EVERY_S: f64 = 10.0;

/// What a progress line counts.
pub struct Counted {
    pub done: Arc<AtomicUsize>,
    pub total: usize,
    pub unit: &'static str,
}

/// The line's thread; [`Ticker::finish`] stops it and waits for its last line: call it
/// without the GIL held (inside `allow_threads`), as the thread takes the GIL to write.
/// Dropped unfinished (an error's early return), it only tells the thread to stop.
pub struct Ticker {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Ticker {
    /// Shows `what` (and `counted`, when given) once the call has lasted [`LATE_S`].
    pub fn start(what: String, counted: Option<Counted>) -> Ticker {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let thread_stop = Arc::clone(&stop);
        let thread = std::thread::spawn(move || tick(&what, counted.as_ref(), &thread_stop));
        Ticker {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops the line (ending it with the final count, when one was shown).
    pub fn finish(mut self) {
        self.signal_stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }

    fn signal_stop(&self) {
        let (stopped, wake) = &*self.stop;
        *stopped.lock().unwrap_or_else(|e| e.into_inner()) = true;
        wake.notify_all();
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.signal_stop();
    }
}

/// The line's text: `what: 3/10 seeds, 12 s`.
fn line(what: &str, counted: Option<&Counted>, started: Instant) -> String {
    let seconds = started.elapsed().as_secs_f64();
    match counted {
        Some(c) => {
            let done = c.done.load(Ordering::Relaxed);
            format!("{what}: {done}/{} {}, {seconds:.0} s", c.total, c.unit)
        }
        None => format!("{what}: running, {seconds:.0} s"),
    }
}

/// Writes to `sys.stderr` and flushes; a failing stream is left alone (progress is not
/// worth an error).
fn write(text: &str) {
    Python::with_gil(|py| {
        if let Ok(stderr) = py.import("sys").and_then(|sys| sys.getattr("stderr")) {
            let _ = stderr.call_method1("write", (text,));
            let _ = stderr.call_method0("flush");
        }
    });
}

fn stderr_is_terminal() -> bool {
    Python::with_gil(|py| {
        let stderr = py.import("sys").and_then(|sys| sys.getattr("stderr"));
        // A notebook's stream is no terminal but redraws `\r` lines as one.
        let redraws = |s: &Bound<'_, PyAny>| {
            let tty = s.call_method0("isatty").and_then(|v| v.extract::<bool>());
            tty.unwrap_or(false) || s.hasattr("pub_thread").unwrap_or(false)
        };
        stderr.map(|s| redraws(&s)).unwrap_or(false)
    })
}

fn tick(what: &str, counted: Option<&Counted>, stop: &(Mutex<bool>, Condvar)) {
    let started = Instant::now();
    let (stopped, wake) = stop;
    let mut guard = stopped.lock().unwrap_or_else(|e| e.into_inner());
    let mut shown = false;
    let mut terminal = false;
    let mut last_line = started;
    loop {
        let wait = if shown { 1.0 } else { LATE_S };
        let (next, _) = wake
            .wait_timeout_while(guard, Duration::from_secs_f64(wait), |stop| !*stop)
            .unwrap_or_else(|e| e.into_inner());
        guard = next;
        if *guard {
            break;
        }
        drop(guard);
        if !shown {
            terminal = stderr_is_terminal();
        }
        if terminal {
            write(&format!("\r{}", line(what, counted, started)));
        } else if !shown || last_line.elapsed().as_secs_f64() >= LOG_EVERY_S {
            write(&format!("{}\n", line(what, counted, started)));
            last_line = Instant::now();
        }
        shown = true;
        guard = stopped.lock().unwrap_or_else(|e| e.into_inner());
    }
    drop(guard);
    if shown {
        let end = if terminal { "\r" } else { "" };
        write(&format!("{end}{}, done\n", line(what, counted, started)));
    }
}
