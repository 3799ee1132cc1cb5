//! `--cooldown`: before each benchmark, wait until the SoC is cooler than a threshold, as
//! sbc-bench does, so that every benchmark starts at about the same temperature instead
//! of in the heat the one before left behind. The wait is bounded (`--cooldown-max`), so
//! a board that never cools down below the threshold still runs, with a warning.

use crate::util::error::{Error, Result};
use crate::util::format::format_duration;
use crate::util::terminal::{program_name, warn};
use std::time::{Duration, Instant};

/// How long `--cooldown` waits at most before each benchmark without `--cooldown-max`.
pub const DEFAULT_MAX_WAIT: Duration = Duration::from_secs(300);

/// How often the temperature is read while waiting.
pub const POLL: Duration = Duration::from_secs(1);

/// `--cooldown TEMP` with `--cooldown-max D`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cooldown {
    /// Wait until the SoC is below this, in °C.
    pub below_c: f64,
    /// Wait at most this long before each benchmark.
    pub max_wait: Duration,
}

/// What one wait came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// No temperature could be read: nothing to wait for.
    NoSensor,
    /// Below the threshold: at `from` already (`waited` about zero), or it cooled down to `to`.
    Cool {
        waited: Duration,
        from: f64,
        to: f64,
    },
    /// Still at `temp` when the bound ran out.
    GaveUp { waited: Duration, temp: f64 },
}

impl Cooldown {
    /// The cooldown the flags ask for: none without `--cooldown`; `--cooldown-max` alone
    /// is a usage error, since it would do nothing.
    pub fn from_flags(
        below_c: Option<f64>,
        max_wait: Option<Duration>,
    ) -> Result<Option<Cooldown>> {
        match (below_c, max_wait) {
            (None, None) => Ok(None),
            (None, Some(_)) => Err(Error::usage(
                "--cooldown-max bounds the wait of --cooldown: give --cooldown TEMP too",
            )),
            (Some(below_c), max_wait) => Ok(Some(Cooldown {
                below_c,
                max_wait: max_wait.unwrap_or(DEFAULT_MAX_WAIT),
            })),
        }
    }

    /// Reads the temperature with `read` every `poll` until it is below the threshold,
    /// for at most `max_wait`; calls `on_hot` with the first reading when it has to wait.
    pub fn wait(
        &self,
        poll: Duration,
        mut read: impl FnMut() -> Option<f64>,
        on_hot: impl FnOnce(f64),
    ) -> Outcome {
        let start = Instant::now();
        let Some(from) = read() else {
            return Outcome::NoSensor;
        };
        if from >= self.below_c {
            on_hot(from);
        }
        let mut temp = from;
        loop {
            let waited = start.elapsed();
            if temp < self.below_c {
                return Outcome::Cool {
                    waited,
                    from,
                    to: temp,
                };
            }
            if waited >= self.max_wait {
                return Outcome::GaveUp { waited, temp };
            }
            std::thread::sleep(poll.min(self.max_wait - waited));
            match read() {
                Some(t) => temp = t,
                None => return Outcome::NoSensor,
            }
        }
    }
}

/// Waits before each benchmark of a run and says so on stderr; warns once when there is
/// no temperature to read.
pub struct Cooler {
    cooldown: Cooldown,
    warned_no_sensor: bool,
}

impl Cooler {
    pub fn new(cooldown: Cooldown) -> Cooler {
        Cooler {
            cooldown,
            warned_no_sensor: false,
        }
    }

    /// Waits until the SoC is cool enough to start `label`, or the bound runs out.
    pub fn before(&mut self, label: &str) {
        let c = self.cooldown;
        let program = program_name();
        let outcome = c.wait(POLL, super::env::soc_temperature, |from| {
            crate::stderr!(
                "{program}: {from:.1}°C: waiting up to {} for the SoC to cool below {:.1}°C before {label}",
                format_duration(c.max_wait),
                c.below_c,
            );
        });
        match outcome {
            Outcome::NoSensor if !self.warned_no_sensor => {
                self.warned_no_sensor = true;
                warn(&"--cooldown: no temperature sensor (no readable /sys/class/thermal/thermal_zone*/temp): not waiting"
                        .to_string());
            }
            Outcome::Cool { waited, from, to } if from >= c.below_c => crate::stderr!(
                "{program}: cooled down from {from:.1}°C to {to:.1}°C in {:.1}s",
                waited.as_secs_f64()
            ),
            Outcome::GaveUp { waited, temp } => warn(&format!(
                "--cooldown: still {temp:.1}°C after waiting {:.1}s (--cooldown-max {}) for below {:.1}°C: running {label} anyway",
                waited.as_secs_f64(),
                format_duration(c.max_wait),
                c.below_c
            )),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLL: Duration = Duration::from_millis(5);

    fn cooldown(below_c: f64, max_wait_ms: u64) -> Cooldown {
        Cooldown {
            below_c,
            max_wait: Duration::from_millis(max_wait_ms),
        }
    }

    #[test]
    fn waits_until_below_the_threshold() {
        let mut temps = [70.0, 65.0, 60.0, 59.5, 50.0].into_iter();
        let mut hot = None;
        let outcome = cooldown(60.0, 10_000).wait(POLL, || temps.next(), |t| hot = Some(t));
        match outcome {
            Outcome::Cool { waited, from, to } => {
                assert_eq!((from, to), (70.0, 59.5), "stops at the first reading below");
                assert!(waited >= 3 * POLL, "three waits: {waited:?}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(hot, Some(70.0), "told before waiting");
        assert_eq!(temps.next(), Some(50.0));
    }

    #[test]
    fn already_cool_does_not_wait_or_say_so() {
        let mut reads = 0;
        let outcome = cooldown(60.0, 10_000).wait(
            POLL,
            || {
                reads += 1;
                Some(45.0)
            },
            |_| panic!("not hot"),
        );
        assert!(
            matches!(outcome, Outcome::Cool { from, to, .. } if from == 45.0 && to == 45.0),
            "{outcome:?}"
        );
        assert_eq!(reads, 1, "one reading, no wait");
    }

    #[test]
    fn gives_up_when_the_bound_runs_out() {
        let start = Instant::now();
        let mut reads = 0;
        let outcome = cooldown(60.0, 40).wait(
            POLL,
            || {
                reads += 1;
                Some(80.0)
            },
            |_| {},
        );
        assert!(
            matches!(outcome, Outcome::GaveUp { temp, .. } if temp == 80.0),
            "{outcome:?}"
        );
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(40) && took < Duration::from_secs(2),
            "{took:?}"
        );
        assert!(reads >= 2, "read again while waiting: {reads}");
    }

    #[test]
    fn no_sensor_means_no_wait() {
        let outcome = cooldown(60.0, 10_000).wait(POLL, || None, |_| panic!("not hot"));
        assert_eq!(outcome, Outcome::NoSensor);
        // A sensor that vanishes while waiting ends the wait too.
        let mut temps = [Some(70.0), None].into_iter();
        let outcome = cooldown(60.0, 10_000).wait(POLL, || temps.next().flatten(), |_| {});
        assert_eq!(outcome, Outcome::NoSensor);
    }

    #[test]
    fn flags_give_the_threshold_and_the_bound() {
        assert_eq!(Cooldown::from_flags(None, None), Ok(None));
        assert_eq!(
            Cooldown::from_flags(Some(60.0), None),
            Ok(Some(Cooldown {
                below_c: 60.0,
                max_wait: DEFAULT_MAX_WAIT
            }))
        );
        let c = Cooldown::from_flags(Some(55.0), Some(Duration::from_secs(30)));
        assert_eq!(c.unwrap().unwrap().max_wait, Duration::from_secs(30));
        let e = Cooldown::from_flags(None, Some(Duration::from_secs(30))).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("--cooldown TEMP"), "{e}");
    }
}
