//! A fault for the tests only (the `fault-injection` feature, which `make test` turns on;
//! the binaries carried to a board have none of it): `BB_FAULT_DRIFT=START:US` makes
//! every invocation of a workload cost `US` microseconds more for each second since
//! `START` (Unix time in milliseconds), a machine that slows down through a run, alike in
//! every process that shares `START`. Two runs of one build one after the other then
//! differ; the pairs of forks of an A/B run (`--against`) do not.

use super::benchmark::Workload;
use crate::model::settings::Metric;
use crate::stats::histogram::Histogram;
use crate::system::cpu::CpuTime;
use crate::util::error::Result;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const DRIFT_ENV: &str = "BB_FAULT_DRIFT";

/// `workload` made to drift where `BB_FAULT_DRIFT` asks for it, else as it is.
pub(crate) fn wrap(workload: Box<dyn Workload>) -> Box<dyn Workload> {
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

    fn iteration_metrics(&mut self) -> Vec<Metric> {
        self.inner.iteration_metrics()
    }

    fn peer_cpu(&mut self) -> Result<CpuTime> {
        self.inner.peer_cpu()
    }

    fn peer_placement(&mut self) -> Vec<usize> {
        self.inner.peer_placement()
    }

    fn after_iteration(&mut self) -> Result<()> {
        self.inner.after_iteration()
    }

    fn latencies(&mut self) -> Option<Histogram> {
        self.inner.latencies()
    }

    fn finish(&mut self) -> Result<()> {
        self.inner.finish()
    }
}
