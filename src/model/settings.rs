//! How a benchmark runs, as data: its settings (iterations, times, forks, mode), the
//! estimate of a fork's length they imply, the unit of its scores, and the extra metrics a
//! workload reports.

use crate::model::modes::Mode;
use crate::model::noise::NoiseSource;
use crate::stats::uncertainty::NOISE_BAND;
use std::time::Duration;

/// How many iterations of what length, in which mode.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub mode: Mode,
    pub warmup_iterations: u32,
    pub warmup_time: Duration,
    pub iterations: u32,
    pub time: Duration,
    /// The forks every benchmark runs, and the fewest a headline row runs with
    /// `precision`.
    pub forks: u32,
    pub timeout: Duration,
    /// `--precision`: forks are added to a headline row, up to `max_forks`, until its
    /// honest relative error is at most this (0.02: ±2%); None: `forks`, no more.
    pub precision: Option<f64>,
    /// `--max-forks`: the most forks a headline row runs to reach `precision`, its budget.
    pub max_forks: u32,
    /// The relative half-width of a score from fewer than three forks: how far this
    /// binary's rows moved between A/A runs of one fork each (scripts/bench-aa.sh).
    pub noise_band: f64,
    /// How far this binary's rows move between whole runs beyond their forks' spread,
    /// relative (A/A runs minutes apart, scripts/bench-aa.sh): what the interval of a
    /// score meant for the next run adds, and what two runs must differ by.
    pub run_floor: f64,
    /// Where `noise_band` and `run_floor` came from: this board's calibration, or the
    /// binary's default (no run floor, and a band from another machine).
    pub noise_source: NoiseSource,
}

impl Settings {
    /// The most forks a benchmark may run: `max_forks` for a headline row with a
    /// precision to reach, else `forks`.
    pub fn most_forks(&self, headline: bool) -> u32 {
        match (self.precision, headline && self.forks > 0) {
            (Some(_), true) => self.max_forks.max(self.forks),
            _ => self.forks,
        }
    }
}

/// A person's flags, as they set a profile's settings. The harness's common flags
/// implement it: the flags and their meaning are the harness's, the settings the model's.
pub trait SettingsFlags {
    /// Sets over `settings` what the flags give.
    fn apply(&self, settings: &mut Settings);
}

impl Settings {
    /// These defaults with every flag the person gave applied over them.
    pub fn with_flags(mut self, flags: &impl SettingsFlags) -> Settings {
        flags.apply(&mut self);
        self
    }

    /// The quick profile: the whole binary in well under a minute on a board.
    pub fn quick() -> Settings {
        Settings {
            mode: Mode::Throughput,
            warmup_iterations: 1,
            warmup_time: Duration::from_millis(500),
            iterations: 3,
            time: Duration::from_secs(1),
            forks: 1,
            timeout: Duration::from_secs(600),
            precision: None,
            max_forks: 1,
            noise_band: NOISE_BAND,
            run_floor: 0.0,
            noise_source: NoiseSource::Default,
        }
    }

    /// The full profile: what a person leaves running (JMH's `-w 5 -wt 3s -i 10 -mt 3s`
    /// and its five forks).
    pub fn full() -> Settings {
        Settings {
            mode: Mode::Throughput,
            warmup_iterations: 5,
            warmup_time: Duration::from_secs(3),
            iterations: 10,
            time: Duration::from_secs(3),
            forks: 5,
            timeout: Duration::from_secs(600),
            precision: None,
            max_forks: 5,
            noise_band: NOISE_BAND,
            run_floor: 0.0,
            noise_source: NoiseSource::Default,
        }
    }

    /// `self` with a binary's default band of a lone fork ([`Settings::noise_band`]),
    /// where its board has no noise profile.
    pub fn with_band(self, noise_band: f64) -> Settings {
        Settings { noise_band, ..self }
    }

    /// The standard profile's precision on top of `self`: headline rows run from
    /// `self.forks` up to twice as many forks until their honest ± is within 2%.
    pub fn with_precision(self) -> Settings {
        Settings {
            precision: Some(STANDARD_PRECISION),
            max_forks: self.forks.saturating_mul(2),
            ..self
        }
    }

    /// How long one fork should take: its start (`start`, timed on this machine, or
    /// [`FORK_START_GUESS`]) and its benchmark's set-up, then every iteration, each timed
    /// one running `time` and one more invocation; a single shot runs one invocation
    /// (`invocation`, where the benchmark can tell, else a guess).
    pub fn estimated_fork_time(&self, invocation: Option<Duration>, start: Duration) -> Duration {
        // Saturating: absurd flags make an absurd plan (which the harness refuses), not
        // an overflow.
        let iterations = self.warmup_iterations.saturating_add(self.iterations);
        let iterating = match self.mode {
            Mode::SingleShot => invocation
                .unwrap_or(SINGLE_SHOT_GUESS)
                .max(PER_ITERATION)
                .saturating_mul(iterations),
            _ => {
                let overrun = invocation.unwrap_or(Duration::ZERO) + PER_ITERATION;
                [
                    self.warmup_time.saturating_mul(self.warmup_iterations),
                    self.time.saturating_mul(self.iterations),
                    overrun.saturating_mul(iterations),
                ]
                .into_iter()
                .fold(Duration::ZERO, Duration::saturating_add)
            }
        };
        start.saturating_add(FORK_SET_UP).saturating_add(iterating)
    }
}

/// The standard profile's `--precision`: a headline row's honest ± within 2% of its score.
pub const STANDARD_PRECISION: f64 = 0.02;

/// A fork's start where it could not be timed: this binary re-executed, its flags read
/// and its suite built, as on a 2-core VM.
pub const FORK_START_GUESS: Duration = Duration::from_millis(20);
/// Setting a fork's benchmark up once it has started (a file opened, a server spawned, a
/// batch calibrated) and reporting back: a constant of the estimate.
const FORK_SET_UP: Duration = Duration::from_millis(10);
/// What an iteration costs beyond its time: the harness's bookkeeping and the
/// workload's untimed checks.
const PER_ITERATION: Duration = Duration::from_millis(2);
/// A single shot whose length the benchmark cannot tell.
const SINGLE_SHOT_GUESS: Duration = Duration::from_millis(20);

/// The unit of time-per-operation scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Seconds,
    Millis,
    Micros,
    Nanos,
}

impl TimeUnit {
    pub fn label(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "s",
            TimeUnit::Millis => "ms",
            TimeUnit::Micros => "us",
            TimeUnit::Nanos => "ns",
        }
    }

    /// Converts seconds into this unit.
    pub fn from_secs(self, s: f64) -> f64 {
        match self {
            TimeUnit::Seconds => s,
            TimeUnit::Millis => s * 1e3,
            TimeUnit::Micros => s * 1e6,
            TimeUnit::Nanos => s * 1e9,
        }
    }

    /// The unit of the primary score in `mode`: ops/s, or time per op.
    pub fn score_unit(self, mode: Mode) -> String {
        match mode {
            Mode::Throughput => "ops/s".to_string(),
            _ => format!("{}/op", self.label()),
        }
    }
}

/// One value a workload reports per iteration beside the primary score
/// (a compression ratio, a server's CPU per call).
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub name: String,
    pub unit: String,
    pub value: f64,
}
