//! The progress line on stderr: what runs now and the ETA of the whole run, scaled by how
//! far off the plan's estimates have been so far.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// A progress line with an ETA on stderr, shown only when stderr is a terminal.
pub struct Progress {
    enabled: bool,
    start: Instant,
    total: Duration,
    done: Duration,
}

impl Progress {
    pub fn new(total: Duration) -> Progress {
        Progress {
            enabled: std::io::stderr().is_terminal(),
            start: Instant::now(),
            total,
            done: Duration::ZERO,
        }
    }

    /// Says what starts now; `estimate` is how long it should take.
    pub fn step(&mut self, what: &str, estimate: Duration) {
        if self.enabled {
            let elapsed = self.start.elapsed();
            // Scale the remaining estimate by how far off the estimates have been so far.
            let pace = if self.done > Duration::ZERO {
                elapsed.as_secs_f64() / self.done.as_secs_f64()
            } else {
                1.0
            };
            let eta = (self.total.saturating_sub(self.done)).as_secs_f64() * pace;
            let _ = write!(
                std::io::stderr(),
                "\r\x1b[K{what}  ETA {}:{:02}",
                eta as u64 / 60,
                eta as u64 % 60
            );
        }
        self.done += estimate;
    }

    pub fn finish(&self) {
        if self.enabled {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
        }
    }
}
