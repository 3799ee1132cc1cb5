//! A fault for the tests only (the `fault-injection` feature, which `make test` turns on;
//! the binaries carried to a board have none of it): `BB_FAULT_DRIFT=START:US` makes
//! every invocation of a workload cost `US` microseconds more for each second since
//! `START` (Unix time in milliseconds), a machine that slows down through a run, alike in
//! every process that shares `START`. Two runs of one build one after the other then
//! differ; the pairs of forks of an A/B run (`--against`) do not.
//!
//! `BB_FAULT_SLOWER=PERCENT` makes every bb-zstd job spin on its worker's CPU for PERCENT
//! of the time it took, after it ([`spin_after`]): a build exactly that much slower,
//! from the same compile (so with the same code layout), which an A/B run must see
//! (`tests/it/ab.rs`, scripts/bench-ab-power.sh: a wrapper script that sets it is the
//! "other build"). In the job, not around an invocation: the pool keeps jobs in flight
//! on other threads while the calling thread waits, which would absorb a spin there.
//! `BB_FAULT_TRACE=FILE` appends a line `PID START END` (nanoseconds on the monotonic
//! clock) for every invocation to FILE: the tests read when each process worked.
//!
//! `BB_FAULT_NOISE=US,RUN,FORK,ITERATION` makes a row synthetic, of known noise: each
//! invocation spins for US microseconds × e^(r + f + i) instead of its work, where r,
//! f and i are normal draws with those standard deviations (log scale): r once a run
//! (seeded by `BB_FAULT_RUN`, which the test sets to the run's number, so every fork of
//! a run shares it), f once a fork (seeded by the process), i once an iteration. The
//! truth (r = f = i = 0) is known, so coverage and false verdicts can be counted against
//! it through the real harness (`tests/it/noise.rs`).

use super::benchmark::Workload;
use crate::model::settings::Metric;
use crate::stats::histogram::Histogram;
use crate::system::cpu::CpuTime;
use crate::util::error::Result;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const DRIFT_ENV: &str = "BB_FAULT_DRIFT";
const SLOWER_ENV: &str = "BB_FAULT_SLOWER";
const TRACE_ENV: &str = "BB_FAULT_TRACE";
const NOISE_ENV: &str = "BB_FAULT_NOISE";
const RUN_ENV: &str = "BB_FAULT_RUN";

/// The calls every wrapper passes through to the workload it wraps; `but
/// after_iteration` leaves that one to the wrapper.
macro_rules! pass_through {
    () => {
        pass_through!(but after_iteration);

        fn after_iteration(&mut self) -> Result<()> {
            self.inner.after_iteration()
        }
    };
    (but after_iteration) => {
        fn iteration_metrics(&mut self) -> Vec<Metric> {
            self.inner.iteration_metrics()
        }

        fn peer_cpu(&mut self) -> Result<CpuTime> {
            self.inner.peer_cpu()
        }

        fn peer_placement(&mut self) -> Vec<usize> {
            self.inner.peer_placement()
        }

        fn latencies(&mut self) -> Option<Histogram> {
            self.inner.latencies()
        }

        fn finish(&mut self) -> Result<()> {
            self.inner.finish()
        }
    };
}

/// `workload` made to drift and traced where the variables ask for it.
pub(crate) fn wrap(workload: Box<dyn Workload>) -> Box<dyn Workload> {
    let workload = synthetic(drifting(workload));
    match std::env::var_os(TRACE_ENV) {
        Some(path) => Box::new(Traced {
            inner: workload,
            path: path.into(),
        }),
        None => workload,
    }
}

/// `workload` made to drift where `BB_FAULT_DRIFT` asks for it, else as it is.
fn drifting(workload: Box<dyn Workload>) -> Box<dyn Workload> {
    let value = std::env::var(DRIFT_ENV).unwrap_or_default();
    let parsed = value
        .split_once(':')
        .and_then(|(start, us)| Some((start.parse::<u64>().ok()?, us.parse::<f64>().ok()?)));
    match parsed {
        Some((start, us_per_s)) if us_per_s.is_finite() && us_per_s >= 0.0 => Box::new(Drifting {
            inner: workload,
            start: UNIX_EPOCH + Duration::from_millis(start),
            us_per_s,
        }),
        _ => workload,
    }
}

/// `workload` made synthetic where `BB_FAULT_NOISE` asks for it, else as it is.
fn synthetic(workload: Box<dyn Workload>) -> Box<dyn Workload> {
    let value = std::env::var(NOISE_ENV).unwrap_or_default();
    let numbers: Vec<f64> = value.split(',').filter_map(|v| v.parse().ok()).collect();
    let &[us, run, fork, iteration] = numbers.as_slice() else {
        return workload;
    };
    let sane = |sd: f64| sd.is_finite() && (0.0..=2.0).contains(&sd);
    if !(us.is_finite() && us > 0.0 && us <= 1e6 && sane(run) && sane(fork) && sane(iteration)) {
        return workload;
    }
    let run_seed = std::env::var(RUN_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    let fork_seed = u64::from(std::process::id())
        ^ SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
    let mut rng = crate::util::rng::Rng::new(fork_seed);
    let offset = run * crate::util::rng::Rng::new(run_seed).normal() + fork * rng.normal();
    let mut w = Synthetic {
        inner: workload,
        us,
        offset,
        iteration,
        rng,
        factor: 1.0,
    };
    w.next_iteration();
    Box::new(w)
}

/// A row whose every invocation costs a known time with noise at known levels.
struct Synthetic {
    inner: Box<dyn Workload>,
    us: f64,
    /// The run's and this fork's draws, summed (log scale).
    offset: f64,
    /// The iterations' standard deviation (log scale).
    iteration: f64,
    rng: crate::util::rng::Rng,
    /// This iteration's factor on `us`.
    factor: f64,
}

impl Synthetic {
    fn next_iteration(&mut self) {
        self.factor = (self.offset + self.iteration * self.rng.normal()).exp();
    }
}

impl Workload for Synthetic {
    fn run(&mut self, ops: u64) -> Result<()> {
        let cost = Duration::from_secs_f64(self.us * self.factor * 1e-6 * ops as f64);
        let until = std::time::Instant::now() + cost.min(Duration::from_secs(10));
        while std::time::Instant::now() < until {
            std::hint::spin_loop();
        }
        Ok(())
    }

    fn after_iteration(&mut self) -> Result<()> {
        self.next_iteration();
        self.inner.after_iteration()
    }

    pass_through!(but after_iteration);
}

/// The share of a job's time `BB_FAULT_SLOWER` adds (0.05 for 5), read once.
fn slower_share() -> Option<f64> {
    static SHARE: std::sync::OnceLock<Option<f64>> = std::sync::OnceLock::new();
    *SHARE.get_or_init(|| {
        std::env::var(SLOWER_ENV)
            .ok()
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|p| p.is_finite() && *p > 0.0 && *p <= 1000.0)
            .map(|p| p / 100.0)
    })
}

/// Where `BB_FAULT_SLOWER` asks for it: spins on this thread for its share of the time
/// since `started` (a job's start).
pub(crate) fn spin_after(started: std::time::Instant) {
    if let Some(share) = slower_share() {
        let until = std::time::Instant::now() + started.elapsed().mul_f64(share);
        while std::time::Instant::now() < until {
            std::hint::spin_loop();
        }
    }
}

struct Drifting {
    inner: Box<dyn Workload>,
    start: SystemTime,
    us_per_s: f64,
}

impl Workload for Drifting {
    fn run(&mut self, ops: u64) -> Result<()> {
        self.inner.run(ops)?;
        let since = SystemTime::now()
            .duration_since(self.start)
            .unwrap_or_default();
        let extra = since.as_secs_f64() * self.us_per_s * 1e-6;
        std::thread::sleep(Duration::from_secs_f64(extra.min(1.0)));
        Ok(())
    }

    pass_through!();
}

/// Each invocation's start and end appended to `path`.
struct Traced {
    inner: Box<dyn Workload>,
    path: std::path::PathBuf,
}

/// Now on the monotonic clock, in nanoseconds: alike in every process of the machine.
fn monotonic_ns() -> u128 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given, which lives on this stack.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u128 * 1_000_000_000 + t.tv_nsec as u128
}

impl Workload for Traced {
    fn run(&mut self, ops: u64) -> Result<()> {
        use std::io::Write;
        let start = monotonic_ns();
        self.inner.run(ops)?;
        let line = format!("{} {start} {}\n", std::process::id(), monotonic_ns());
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&self.path)
            .and_then(|mut f| f.write_all(line.as_bytes()))
            .map_err(|e| crate::util::error::Error::io("writing BB_FAULT_TRACE", e))
    }

    pass_through!();
}
