//! Conditions that make a result less trustworthy, as data with a Display: the governor,
//! a busy machine, throttling, unlike placements, and notes; `util::terminal::warn`
//! prints them.

use crate::system::env::Environment;
use crate::system::placement::PairPlacement;
use crate::util::format::count;
use std::fmt;
use std::time::Duration;

/// Other processes using more than this share of one core on average, just before the
/// run, make the machine busy: an idle board's kernel threads and daemons stay far
/// below it (0.01 to 0.05 on an idle Pi), a single background task at a quarter of a
/// core shifts a single-threaded result by as much.
pub const BUSY_CORES: f64 = 0.25;

#[derive(Debug, Clone, PartialEq)]
pub enum Warning {
    /// The cpufreq governor is not `performance`: clocks change under the benchmark.
    Governor(String),
    /// Other processes used `used` cores of `cores` on average over `window`, just
    /// before the run.
    Busy {
        used: f64,
        cores: usize,
        window: Duration,
    },
    /// A benchmark ran while the board throttled.
    Throttled {
        benchmark: String,
        reasons: Vec<String>,
    },
    /// Some iterations of a benchmark ran placed otherwise than its paired baseline's.
    /// Unpinned (`--pin none`), some iteration pairs of paired baselines ran placed
    /// unlike each other: said once for the run.
    Placement {
        /// The first benchmark with such a pair, and its mode, short (`avgt`).
        benchmark: String,
        mode: String,
        metric: String,
        /// Of the run's pairs, those that differed.
        differing: usize,
        pairs: usize,
        /// How many benchmarks had such pairs, of how many paired ones.
        benchmarks: usize,
        paired: usize,
        /// The first such pair.
        example: PairPlacement,
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
            Warning::Busy { used, cores, window } => write!(
                f,
                "the machine is busy: other processes used {used:.2} of {} over {:.2} s \
                 before the run: results may be noisy",
                count(*cores as u64, "core"),
                window.as_secs_f64()
            ),
            Warning::Throttled { benchmark, reasons } => {
                write!(f, "{benchmark} ran while the board throttled ({}): its result is flagged", reasons.join("; "))
            }
            Warning::Placement { benchmark, mode, metric, differing, pairs, benchmarks, paired, example } => write!(
                f,
                "unpinned, {benchmarks} of {paired} paired benchmarks had a baseline run elsewhere than \
                 the measured iteration after it ({differing} of {pairs} pairs; first: {benchmark}, {mode}, \
                 '{metric}': baseline {}; measured {}): those ratios compare unlike placements",
                example.baseline, example.measured
            ),
            Warning::Note(s) => f.write_str(s),
        }
    }
}

/// The warnings about the machine at start.
pub fn environment_warnings(env: &Environment) -> Vec<Warning> {
    let mut out = Vec::new();
    if let Some(g) = env.governor.as_deref().filter(|g| *g != "performance") {
        out.push(Warning::Governor(g.to_string()));
    }
    if let Some(b) = env.background.filter(|b| b.cores > BUSY_CORES) {
        out.push(Warning::Busy {
            used: b.cores,
            cores: env.cores_online,
            window: b.window,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn governor_and_busy_warnings() {
        use crate::system::activity::Background;
        let busy = |cores: f64| {
            Some(Background {
                cores,
                window: Duration::from_millis(252),
            })
        };
        let env = Environment {
            governor: Some("ondemand".into()),
            background: busy(1.3),
            cores_online: 4,
            ..Default::default()
        };
        let w = environment_warnings(&env);
        assert_eq!(w.len(), 2);
        assert!(w[0].to_string().contains("'ondemand'"));
        assert_eq!(
            w[1].to_string(),
            "the machine is busy: other processes used 1.30 of 4 cores over 0.25 s \
             before the run: results may be noisy"
        );
        let one = Environment {
            background: busy(0.5),
            cores_online: 1,
            ..Default::default()
        };
        assert!(environment_warnings(&one)[0]
            .to_string()
            .contains("0.50 of 1 core over"));
        // The load average the previous binary left behind is no sign of a busy machine:
        // only what ran during the window counts.
        let quiet = Environment {
            governor: Some("performance".into()),
            load_avg: Some([1.49, 0.89, 0.38]),
            background: busy(0.02),
            cores_online: 1,
            ..Default::default()
        };
        assert!(environment_warnings(&quiet).is_empty());
        let unknown = Environment {
            load_avg: Some([3.0, 3.0, 3.0]),
            cores_online: 1,
            ..Default::default()
        };
        assert!(environment_warnings(&unknown).is_empty());
    }
}
