//! Warnings about conditions that make a result less trustworthy, printed in one place
//! on stderr; and the progress line with its ETA.

use std::fmt;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, PartialEq)]
pub enum Warning {
    /// The cpufreq governor is not `performance`: clocks change under the benchmark.
    Governor(String),
    /// Something else was running when the benchmark started.
    Busy { load: f64, cores: usize },
    /// A benchmark ran while the board throttled.
    Throttled {
        benchmark: String,
        reasons: Vec<String>,
    },
    /// Some iterations of a benchmark ran placed otherwise than its paired baseline's.
    Placement {
        benchmark: String,
        metric: String,
        differing: usize,
        pairs: usize,
        /// The first such pair.
        example: crate::placement::PairPlacement,
    },
    /// Anything a binary needs the person to know (a cache that could not be dropped).
    Note(String),
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::Governor(g) => write!(
                f,
                "the cpufreq governor is '{g}', not 'performance': clocks may change during the run \
                 (echo performance | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor)"
            ),
            Warning::Busy { load, cores } => {
                write!(f, "the machine is busy (load average {load:.2} on {cores} cores): results may be noisy")
            }
            Warning::Throttled { benchmark, reasons } => {
                write!(f, "{benchmark} ran while the board throttled ({}): its result is flagged", reasons.join("; "))
            }
            Warning::Placement { benchmark, metric, differing, pairs, example } => write!(
                f,
                "{benchmark}: in {differing} of {pairs} iteration pairs of '{metric}' the baseline \
                 ran elsewhere than the measured iteration after it (first: baseline {}; measured {}), \
                 so those ratios compare unlike placements; --pin both sides to compare like with like",
                example.baseline, example.measured
            ),
            Warning::Note(s) => f.write_str(s),
        }
    }
}

/// Prints a line on stderr like `eprintln!`, but a closed or broken stderr is ignored
/// instead of panicking: losing a message must not stop a run, least of all the
/// watchdog's that ends a stuck one.
#[macro_export]
macro_rules! stderr {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// Prints a warning on stderr.
pub fn warn(w: &Warning) {
    crate::stderr!("{}: warning: {w}", crate::cli::program_name());
}

/// The warnings about the machine at start.
pub fn environment_warnings(env: &crate::env::Environment) -> Vec<Warning> {
    let mut out = Vec::new();
    if let Some(g) = env.governor.as_deref().filter(|g| *g != "performance") {
        out.push(Warning::Governor(g.to_string()));
    }
    if let Some([load, _, _]) = env.load_avg {
        if load > (0.3 * env.cores_online as f64).max(0.5) {
            out.push(Warning::Busy {
                load,
                cores: env.cores_online,
            });
        }
    }
    out
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn governor_and_load_warnings() {
        let env = crate::env::Environment {
            governor: Some("ondemand".into()),
            load_avg: Some([3.0, 1.0, 1.0]),
            cores_online: 4,
            ..Default::default()
        };
        let w = environment_warnings(&env);
        assert_eq!(w.len(), 2);
        assert!(w[0].to_string().contains("'ondemand'"));
        assert!(w[1].to_string().contains("load average 3.00 on 4 cores"));
        let quiet = crate::env::Environment {
            governor: Some("performance".into()),
            load_avg: Some([0.1, 0.0, 0.0]),
            cores_online: 4,
            ..Default::default()
        };
        assert!(environment_warnings(&quiet).is_empty());
    }
}
