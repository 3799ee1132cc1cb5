//! What a benchmark is, as a binary describes it to the harness: a name, parameters and
//! a workload (the measured operation, set up in the process that measures it), the
//! settings it runs with ([`Settings::with_flags`]: the common flags over a profile's),
//! its unit, and a baseline to pair its iterations with. The measured loop around these
//! is in `runner`.

use crate::model::modes::Mode;
pub use crate::model::params::label;
pub use crate::model::settings::{Metric, Settings, TimeUnit};
use crate::stats::histogram::Histogram;
use crate::system::cpu::CpuTime;
use crate::util::error::Result;
use std::time::Duration;

/// The measured operation of a benchmark, set up and ready.
pub trait Workload {
    /// Runs `ops` operations. An error ends the benchmark (exit code 1).
    fn run(&mut self, ops: u64) -> Result<()>;

    /// Extra metrics for the iteration that just ended.
    fn iteration_metrics(&mut self) -> Vec<Metric> {
        Vec::new()
    }

    /// CPU time used so far by peers this process does not reap (a server that reports
    /// its own getrusage), so the accounting includes them.
    fn peer_cpu(&mut self) -> Result<CpuTime> {
        Ok(CpuTime::default())
    }

    /// The CPUs the peers' serving threads last ran on (a server's, from /proc), read after
    /// each iteration of a benchmark with a paired baseline to compare placements; empty
    /// where they cannot be known. See `system::placement`.
    fn peer_placement(&mut self) -> Vec<usize> {
        Vec::new()
    }

    /// Untimed work after every iteration, warm-up and measured alike: checking what the
    /// iteration produced, or preparing the next one (dropping a cache). An error ends
    /// the benchmark (exit code 1).
    fn after_iteration(&mut self) -> Result<()> {
        Ok(())
    }

    /// The per-operation latencies, in nanoseconds, that the workload timed itself over
    /// the iteration that just ended, where timing each invocation would be wrong (an open
    /// loop times each call from its scheduled send); called after every iteration, warm-up
    /// too. None: the harness times the invocations.
    fn latencies(&mut self) -> Option<Histogram> {
        None
    }

    /// Called once after the last iteration, to stop servers and check final state.
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

/// A function that sets up a benchmark's workload; called in the process that measures
/// it (a fork), never in a parent that only collects results.
pub type Setup = Box<dyn Fn() -> Result<Box<dyn Workload>>>;

/// A baseline measured in the same process as its benchmark, in iterations that alternate
/// with the benchmark's own (baseline, measured, baseline, measured …), each with the
/// same time: the benchmark's time per operation over the baseline's in two adjacent
/// iterations is one raw value of `metric`, so the ratio's score and error come from pairs
/// that ran at the same time under the same pinning, not from two benchmarks measured
/// apart. Where each pair ran is recorded too (see `system::placement`).
pub struct PairedBaseline {
    /// The ratio's name (`vs floor`), a secondary metric in `x`.
    pub metric: String,
    /// Sets the baseline's workload up, after the benchmark's own.
    pub setup: Setup,
    /// Operations per invocation of the baseline, as [`Benchmark::ops_per_invocation`].
    pub ops_per_invocation: Option<u64>,
}

/// A benchmark as a binary describes it to the harness.
pub struct Benchmark {
    /// A dotted name (`bb.zstd.compress`), so JMH viewers group benchmarks.
    pub name: String,
    /// Parameters in display order.
    pub params: Vec<(String, String)>,
    /// Threads doing the work (JMH's `threads` field).
    pub threads: usize,
    /// Operations per invocation of [`Workload::run`] when the workload fixes it (a batch
    /// of jobs); otherwise the harness calibrates the batch for timed modes.
    pub ops_per_invocation: Option<u64>,
    /// Bytes each operation processes, to report MB/s.
    pub bytes_per_op: Option<f64>,
    /// What an operation is called (`calls`), to report `<rate>/s` beside any mode.
    pub rate: Option<String>,
    /// Operations per second the workload is asked to hold (an open loop's offered load,
    /// over all its threads): a result that fell short is flagged saturated.
    pub offered_rate: Option<f64>,
    /// This benchmark's mode, over the suite's (a binary that measures some benchmarks
    /// in two modes, say).
    pub mode: Option<Mode>,
    /// This benchmark's unit of time-per-operation scores, over the suite's.
    pub unit: Option<TimeUnit>,
    /// Ratios to report: (metric name, label of the benchmark to divide by); see
    /// [`add_ratios`](super::aggregate::add_ratios).
    pub baselines: Vec<(String, String)>,
    /// A baseline to measure in iterations interleaved with this benchmark's.
    pub paired: Option<PairedBaseline>,
    /// Properties of the input rather than measurements (a compression ratio): reported
    /// once, with no error.
    pub constants: Vec<Metric>,
    /// How long one invocation takes, where the binary can tell before measuring (a
    /// single shot of a fixed batch); for the plan's estimate. Where telling costs work,
    /// [`Benchmark::estimate_invocation`] fills it later.
    pub invocation_estimate: Option<Duration>,
    /// What works out `invocation_estimate` (see [`Benchmark::estimate_invocation`]).
    lazy_estimate: Option<LazyEstimate>,
    /// Whether the answer quotes it: with `--precision`, forks are added to a headline
    /// row until its ± is within the target; the others run `--forks`.
    pub headline: bool,
    pub setup: Setup,
}

/// A lazy [`Benchmark::invocation_estimate`].
type LazyEstimate = Box<dyn FnOnce() -> Result<Duration>>;

impl Benchmark {
    pub fn new(name: impl Into<String>, setup: Setup) -> Benchmark {
        Benchmark {
            name: name.into(),
            params: Vec::new(),
            threads: 1,
            ops_per_invocation: None,
            bytes_per_op: None,
            rate: None,
            offered_rate: None,
            mode: None,
            unit: None,
            baselines: Vec::new(),
            paired: None,
            constants: Vec::new(),
            invocation_estimate: None,
            lazy_estimate: None,
            headline: true,
            setup,
        }
    }

    /// Has `estimate` work out [`Benchmark::invocation_estimate`] where that costs work
    /// (a job run and timed): the harness calls it in the parent before the plan, never
    /// in a fork.
    pub fn estimate_invocation(&mut self, estimate: impl FnOnce() -> Result<Duration> + 'static) {
        self.lazy_estimate = Some(Box::new(estimate));
    }

    /// Whether [`Benchmark::invocation_estimate`] is still to be worked out.
    pub fn estimate_pending(&self) -> bool {
        self.lazy_estimate.is_some()
    }

    /// Fills [`Benchmark::invocation_estimate`] as [`Benchmark::estimate_invocation`]
    /// said, once.
    pub(crate) fn resolve_estimate(&mut self) -> Result<()> {
        if let Some(estimate) = self.lazy_estimate.take() {
            self.invocation_estimate = Some(estimate()?);
        }
        Ok(())
    }

    /// The settings and unit this benchmark runs with, given the suite's.
    pub fn effective(&self, settings: &Settings, unit: TimeUnit) -> (Settings, TimeUnit) {
        let mut s = settings.clone();
        if let Some(m) = self.mode {
            s.mode = m;
        }
        (s, self.unit.unwrap_or(unit))
    }

    /// How long one fork should take with `settings`, started in `start`: a paired
    /// baseline doubles the iterations and sets up a second workload.
    pub fn estimated_fork_time(&self, settings: &Settings, start: Duration) -> Duration {
        let one = settings.estimated_fork_time(self.invocation_estimate, start);
        match self.paired {
            Some(_) => one * 2,
            None => one,
        }
    }

    /// The most deadlines (each `--timeout` long, `watchdog::arm`) a fork of it arms:
    /// its set-up, batch calibration, every iteration and its finish, twice with a
    /// paired baseline.
    pub fn most_deadlines(&self, settings: &Settings) -> u32 {
        let one = (settings.warmup_iterations)
            .saturating_add(settings.iterations)
            .saturating_add(3);
        match self.paired {
            Some(_) => one.saturating_mul(2),
            None => one,
        }
    }

    /// How long this benchmark runs with `settings`, each fork started in `start`: every
    /// fork (with a precision to reach, as many as its budget allows: the most it can
    /// take), or one run in process.
    pub fn estimated_time(&self, settings: &Settings, start: Duration) -> Duration {
        let forks = settings.most_forks(self.headline).max(1);
        self.estimated_fork_time(settings, start)
            .checked_mul(forks)
            .unwrap_or(Duration::MAX)
    }

    pub fn param(mut self, key: &str, value: impl ToString) -> Benchmark {
        self.params.push((key.to_string(), value.to_string()));
        self
    }

    /// `name (k=v, k=v)`, for progress lines and messages.
    pub fn label(&self) -> String {
        label(&self.name, &self.params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_names_the_params() {
        assert_eq!(label("bb.x", &[("a".into(), "1".into())]), "bb.x (a=1)");
    }

    #[test]
    fn a_lazy_estimate_is_worked_out_once() {
        let mut b = Benchmark::new("bb.x", Box::new(|| unreachable!("nothing runs")));
        b.estimate_invocation(|| Ok(Duration::from_millis(7)));
        assert!(b.estimate_pending());
        b.resolve_estimate().unwrap();
        assert_eq!(b.invocation_estimate, Some(Duration::from_millis(7)));
        assert!(!b.estimate_pending());
        b.invocation_estimate = Some(Duration::from_millis(1));
        b.resolve_estimate().unwrap();
        assert_eq!(b.invocation_estimate, Some(Duration::from_millis(1)));
        b.estimate_invocation(|| Err(crate::util::error::Error::failed("timing a job")));
        assert!(b.resolve_estimate().is_err());
    }
}
