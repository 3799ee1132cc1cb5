//! Conditions that make a result less trustworthy, as data with a Display: the governor,
//! a busy machine, throttling, unlike placements, and notes; `util::terminal::warn`
//! prints them.

use crate::system::env::Environment;
use crate::system::placement::PairPlacement;
use std::fmt;

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

/// The warnings about the machine at start.
pub fn environment_warnings(env: &Environment) -> Vec<Warning> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn governor_and_load_warnings() {
        let env = Environment {
            governor: Some("ondemand".into()),
            load_avg: Some([3.0, 1.0, 1.0]),
            cores_online: 4,
            ..Default::default()
        };
        let w = environment_warnings(&env);
        assert_eq!(w.len(), 2);
        assert!(w[0].to_string().contains("'ondemand'"));
        assert!(w[1].to_string().contains("load average 3.00 on 4 cores"));
        let quiet = Environment {
            governor: Some("performance".into()),
            load_avg: Some([0.1, 0.0, 0.0]),
            cores_online: 4,
            ..Default::default()
        };
        assert!(environment_warnings(&quiet).is_empty());
    }
}
