//! The plan of a run, known before it starts: how many benchmarks, forks and iterations,
//! and how long it should take. Printed on stderr before the first benchmark, and alone
//! on stdout with `--dry-run`, which measures nothing.

use super::benchmark::{Benchmark, Settings, TimeUnit};
use super::cli::{Mode, Profile};
use crate::system::activity;
use crate::util::format::{count, format_duration, format_estimate, percent};
use std::time::Duration;

/// One benchmark as it will run.
pub struct Planned {
    pub label: String,
    pub settings: Settings,
    /// With a precision to reach, the most forks it may take.
    pub most_forks: u32,
    pub estimate: Duration,
}

/// What a run will do.
pub struct Plan {
    pub profile: Profile,
    /// What the binary does once before the benchmarks, and its estimate (see
    /// [`super::Prelude`]).
    pub prelude: Option<(String, Duration)>,
    /// How long working out the estimates took before the plan (a calibration, a probe
    /// of a remote source), where it took long enough to tell: part of the run too.
    pub planning: Option<Duration>,
    /// The longest `--idle-wait` waits for the board to go idle first.
    pub idle_wait: Duration,
    pub benchmarks: Vec<Planned>,
}

/// The longest run planned: flags that ask for more are a mistake (`--iterations` and
/// `--time` with their units swapped, a digit too many), refused before anything runs.
pub const LONGEST_RUN: Duration = Duration::from_secs(366 * 24 * 3600);

/// Refuses a run planned to take `total`, longer than [`LONGEST_RUN`], naming the flags
/// that make it.
pub fn check_length(total: Duration) -> crate::util::error::Result<()> {
    if total <= LONGEST_RUN {
        return Ok(());
    }
    let length = match total {
        Duration::MAX => "without end".to_string(),
        _ => format!("of {} days", total.as_secs() / 86_400),
    };
    Err(crate::util::error::Error::usage(format!(
        "--iterations, --time, --warmup, --warmup-time and --forks (or --max-forks) plan a run {length}, more than a year: check their values"
    )))
}

/// Planning shorter than this is left out of the plan.
pub const PLANNING_SHOWN: Duration = Duration::from_millis(50);

impl Plan {
    /// The plan of `benchmarks`, each fork started in `start` ([`super::fork::time_start`]).
    pub fn new(
        profile: Profile,
        settings: &Settings,
        unit: TimeUnit,
        benchmarks: &[Benchmark],
        start: Duration,
    ) -> Plan {
        let benchmarks = benchmarks
            .iter()
            .map(|b| {
                let (settings, _) = b.effective(settings, unit);
                Planned {
                    label: b.label(),
                    most_forks: settings.most_forks(b.headline),
                    estimate: b.estimated_time(&settings, start),
                    settings,
                }
            })
            .collect();
        Plan {
            profile,
            prelude: None,
            idle_wait: Duration::ZERO,
            planning: None,
            benchmarks,
        }
    }

    /// The whole run: the look at other processes' activity before it, the prelude, and
    /// every benchmark.
    pub fn total(&self) -> Duration {
        let prelude = self.prelude.as_ref().map_or(Duration::ZERO, |p| p.1);
        let planning = self.planning.unwrap_or_default();
        let benchmarks = self.benchmarks.iter().map(|b| b.estimate);
        [activity::WINDOW, self.idle_wait, planning, prelude]
            .into_iter()
            .chain(benchmarks)
            .fold(Duration::ZERO, Duration::saturating_add)
    }

    /// `profile standard: about 2 min 10 s` (`at most` where forks are added until a
    /// precision is reached), the end of the header line.
    pub fn summary(&self) -> String {
        format!(
            "profile {}: {} {}",
            self.profile.name(),
            self.about(),
            format_estimate(self.total())
        )
    }

    /// `about`, or `at most` where a benchmark may add forks to reach a precision.
    fn about(&self) -> &'static str {
        match self
            .benchmarks
            .iter()
            .any(|b| b.most_forks > b.settings.forks)
        {
            true => "at most",
            false => "about",
        }
    }

    /// The `--dry-run` report: the prelude's line, a line per benchmark, then the total,
    /// whose last line `estimated duration: ... (N s)` scripts read (run-all sums them).
    pub fn render(&self, program: &str) -> String {
        let width = self
            .benchmarks
            .iter()
            .map(|b| b.label.chars().count())
            .max()
            .unwrap_or(0);
        let mut out = format!(
            "# {program} --dry-run, profile {}: {}\n",
            self.profile.name(),
            count(self.benchmarks.len() as u64, "benchmark")
        );
        if let Some(took) = self.planning {
            out.push_str(&format!(
                "planning: the estimates took {}\n",
                format_estimate(took)
            ));
        }
        if !self.idle_wait.is_zero() {
            out.push_str(&format!(
                "first: wait for the board to go idle  at most {}\n",
                format_estimate(self.idle_wait)
            ));
        }
        if let Some((what, estimate)) = &self.prelude {
            out.push_str(&format!(
                "first: {what}  about {}\n",
                format_estimate(*estimate)
            ));
        }
        for b in &self.benchmarks {
            let s = &b.settings;
            out.push_str(&format!(
                "{:<width$}  {:<6}  {}, {}  {}\n",
                b.label,
                s.mode.short(),
                forks(s, b.most_forks),
                iterations(s),
                match b.most_forks > s.forks {
                    true => format!("at most {}", format_estimate(b.estimate)),
                    false => format!("about {}", format_estimate(b.estimate)),
                }
            ));
        }
        // With a precision to reach, the total is the most the run may take.
        out.push_str(&format!(
            "estimated duration: {} {} ({:.1} s)\n",
            self.about(),
            format_estimate(self.total()),
            self.total().as_secs_f64()
        ));
        out
    }
}

/// The forks a benchmark runs, `5 forks`, or with a precision to reach `5-15 forks to ±2%`.
pub(crate) fn forks(s: &Settings, most: u32) -> String {
    match s.precision {
        Some(p) if most > s.forks => {
            format!("{}-{most} forks to ±{}%", s.forks, percent(p))
        }
        _ => count(s.forks, "fork"),
    }
}

/// The iterations of one fork as the plan and the header name them: a single shot has
/// no iteration time (`warm-up 1 shot, 5 shots`), a timed iteration has
/// (`warm-up 1 × 3s, 5 × 3s`).
pub(crate) fn iterations(s: &Settings) -> String {
    match s.mode {
        Mode::SingleShot => format!(
            "warm-up {}, {}",
            count(s.warmup_iterations, "shot"),
            count(s.iterations, "shot")
        ),
        _ => format!(
            "warm-up {} × {}, {} × {}",
            s.warmup_iterations,
            format_duration(s.warmup_time),
            s.iterations,
            format_duration(s.time)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fork's start, as if timed.
    const START: Duration = Duration::from_millis(20);

    fn bench(name: &str) -> Benchmark {
        Benchmark::new(name, Box::new(|| unreachable!("a plan runs nothing")))
    }

    #[test]
    fn estimates_add_up_over_benchmarks_forks_and_iterations() {
        let s = Settings {
            forks: 2,
            ..Settings::full()
        };
        let mut shot = bench("bb.x.shot").param("k", 1);
        shot.mode = Some(Mode::SingleShot);
        shot.invocation_estimate = Some(Duration::from_millis(500));
        let plan = Plan::new(
            Profile::Full,
            &s,
            TimeUnit::Millis,
            &[bench("bb.x.timed"), shot],
            START,
        );
        // 2 forks × (45 s of iterations + 15 × 2 ms + 20 ms to start + 10 ms to set up):
        // 90.12 s.
        assert_eq!(plan.benchmarks[0].estimate, Duration::from_millis(90_120));
        // 2 forks × (15 shots × 500 ms + 30 ms): 15.06 s.
        assert_eq!(plan.benchmarks[1].estimate, Duration::from_millis(15_060));
        let text = plan.render("bb-x");
        assert!(
            text.starts_with("# bb-x --dry-run, profile full: 2 benchmarks\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "bb.x.shot (k=1)  ss      2 forks, warm-up 5 shots, 10 shots  about 15 s\n"
            ),
            "{text}"
        );
        // And a quarter of a second watching other processes first.
        assert!(
            text.ends_with("estimated duration: about 1 min 45 s (105.4 s)\n"),
            "{text}"
        );
        assert_eq!(plan.summary(), "profile full: about 1 min 45 s");
        // A paired baseline runs as many iterations again, set up in the same fork.
        let mut paired = bench("bb.x.paired");
        paired.paired = Some(crate::harness::benchmark::PairedBaseline {
            metric: "vs floor".into(),
            setup: Box::new(|| unreachable!("a plan runs nothing")),
            ops_per_invocation: None,
        });
        let mut plan = Plan::new(Profile::Full, &s, TimeUnit::Millis, &[paired], START);
        assert_eq!(plan.benchmarks[0].estimate, Duration::from_millis(180_240));
        // A prelude (a probe before the benchmarks) has its line and counts in the total.
        plan.prelude = Some(("probing x".into(), Duration::from_millis(1_500)));
        let text = plan.render("bb-x");
        assert!(
            text.contains("benchmark\nfirst: probing x  about 1.5 s\nbb.x.paired  "),
            "{text}"
        );
        assert_eq!(plan.total(), Duration::from_millis(181_990));
        // Estimates that took work (a probe of the source) count too, on their line.
        plan.planning = Some(Duration::from_millis(220));
        let text = plan.render("bb-x");
        assert!(
            text.contains("benchmark\nplanning: the estimates took 0.2 s\nfirst: "),
            "{text}"
        );
        assert_eq!(plan.total(), Duration::from_millis(182_210));
    }
}
