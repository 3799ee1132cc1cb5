//! A benchmark's result: every fork's iterations gathered, summarised, and annotated with
//! CPU, memory, throttling and where a paired baseline ran; plus speedup and efficiency
//! across thread counts, and ratios to baselines measured apart.

use crate::model::modes::Mode;
use crate::model::params;
use crate::model::settings::{Settings, TimeUnit};
use crate::model::warning::Warning;
use crate::stats::histogram::Histogram;
use crate::stats::{percentiles_of, Summary, PERCENTILES};
use crate::system::cpu::CpuUsage;
use crate::system::placement::PairPlacement;
use crate::system::throttle::ThrottleReport;

/// A metric beside the primary score (MB/s, a ratio, speedup), with its raw data per fork.
#[derive(Debug, Clone, PartialEq)]
pub struct Secondary {
    pub name: String,
    pub unit: String,
    pub raw: Vec<Vec<f64>>,
    pub summary: Summary,
}

impl Secondary {
    pub(crate) fn new(name: &str, unit: &str, raw: Vec<Vec<f64>>) -> Secondary {
        let all: Vec<f64> = raw.iter().flatten().copied().collect();
        Secondary {
            name: name.to_string(),
            unit: unit.to_string(),
            summary: Summary::of(&all),
            raw,
        }
    }
}

/// Everything known about one benchmark after all its forks ran.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchResult {
    pub name: String,
    pub params: Vec<(String, String)>,
    pub threads: usize,
    pub settings: Settings,
    pub time_unit: TimeUnit,
    /// Primary scores: one list per fork, one score per iteration.
    pub raw: Vec<Vec<f64>>,
    pub summary: Summary,
    /// Per-operation latency in nanoseconds (sample mode).
    pub histogram: Option<Histogram>,
    /// The same latencies per fork and measurement iteration (sample mode): JMH's
    /// `rawDataHistogram`.
    pub iteration_histograms: Vec<Vec<Histogram>>,
    pub secondary: Vec<Secondary>,
    pub cpu: CpuUsage,
    pub peak_rss_kib: Option<u64>,
    pub throttle: ThrottleReport,
    pub ops: u64,
    /// (metric name, label of the benchmark to divide by), from [`Benchmark::baselines`].
    pub baselines: Vec<(String, String)>,
    /// Where the iterations of a paired baseline ([`Benchmark::paired`]) and this
    /// benchmark's ran.
    pub placements: Option<PairedPlacements>,
    /// The operations per second the workload was asked to hold ([`Benchmark::offered_rate`]).
    pub offered_rate: Option<f64>,
}

/// How far below its offered load a result fell: past this share of the target, its
/// latencies are those of a queue that kept growing, not of the load asked for.
pub const SATURATION_SHORTFALL: f64 = 0.01;

/// An offered load and what was achieved of it over the measured iterations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OfferedLoad {
    pub target: f64,
    pub achieved: f64,
}

impl OfferedLoad {
    /// Whether the achieved rate fell short of the target by more than 1% (or is unknown:
    /// nothing measured).
    pub fn saturated(&self) -> bool {
        let held = self.achieved >= self.target * (1.0 - SATURATION_SHORTFALL);
        !held
    }
}

/// Where each pair of a paired baseline's iteration and the measured one after it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedPlacements {
    /// The paired ratio's name (`vs floor`).
    pub metric: String,
    /// One list per fork, one placement per iteration pair.
    pub forks: Vec<Vec<PairPlacement>>,
}

impl PairedPlacements {
    pub fn pairs(&self) -> usize {
        self.forks.iter().map(Vec::len).sum()
    }

    /// The pairs whose two iterations ran placed differently.
    pub fn differing(&self) -> impl Iterator<Item = &PairPlacement> {
        self.forks.iter().flatten().filter(|p| p.differs())
    }
}

/// The percentiles JMH derives as secondary metrics in sample mode, with their names.
pub const SAMPLE_PERCENTILES: [(&str, f64); 8] = [
    ("p0.00", 0.0),
    ("p0.50", 50.0),
    ("p0.90", 90.0),
    ("p0.95", 95.0),
    ("p0.99", 99.0),
    ("p0.999", 99.9),
    ("p0.9999", 99.99),
    ("p1.00", 100.0),
];

/// One of JMH's sample-mode percentile metrics (`<method>·p0.99`): the percentile over
/// every sample of the run, and per fork the percentile of each iteration's samples.
#[derive(Debug, Clone, PartialEq)]
pub struct PercentileMetric {
    pub name: String,
    pub score: f64,
    pub raw: Vec<Vec<f64>>,
}

impl BenchResult {
    /// The warning that some of this benchmark's iterations ran placed otherwise than the
    /// paired baseline's before them, so that their ratio compares unlike placements.
    pub fn placement_warning(&self) -> Option<Warning> {
        let p = self.placements.as_ref()?;
        let first = p.differing().next()?.clone();
        Some(Warning::Placement {
            benchmark: self.label(),
            mode: self.mode().short().to_string(),
            metric: p.metric.clone(),
            differing: p.differing().count(),
            pairs: p.pairs(),
            example: first,
        })
    }

    /// The offered load and the rate achieved over the measured iterations (operations
    /// over their wall time), for a benchmark that was offered one.
    pub fn offered_load(&self) -> Option<OfferedLoad> {
        Some(OfferedLoad {
            target: self.offered_rate?,
            achieved: self.ops as f64 / self.cpu.wall,
        })
    }

    /// Whether this result fell short of its offered load (see [`OfferedLoad::saturated`]).
    pub fn saturated(&self) -> bool {
        self.offered_load().is_some_and(|l| l.saturated())
    }

    pub fn mode(&self) -> Mode {
        self.settings.mode
    }

    pub fn unit(&self) -> String {
        self.time_unit.score_unit(self.mode())
    }

    pub fn label(&self) -> String {
        params::label(&self.name, &self.params)
    }

    pub fn param(&self, key: &str) -> Option<&str> {
        params::param_value(&self.params, key)
    }

    /// The mean time per operation in seconds, whatever the mode and unit.
    pub fn seconds_per_op(&self) -> f64 {
        match self.mode() {
            Mode::Throughput => 1.0 / self.summary.mean,
            _ => self.summary.mean / self.time_unit.from_secs(1.0),
        }
    }

    /// JMH's `Cnt` (CSV `Samples`): in sample mode the number of timed operations, as
    /// JMH counts samples there; otherwise the number of measured iterations.
    pub fn sample_count(&self) -> u64 {
        match (&self.histogram, self.mode()) {
            (Some(h), Mode::Sample) => h.count(),
            _ => self.summary.n as u64,
        }
    }

    pub fn secondary(&self, name: &str) -> Option<&Secondary> {
        self.secondary.iter().find(|s| s.name == name)
    }

    /// JMH's scorePercentiles: of the per-operation latencies in sample mode, otherwise of
    /// the iteration scores.
    pub fn percentiles(&self) -> Vec<(f64, f64)> {
        match &self.histogram {
            Some(h) if h.count() > 0 => PERCENTILES
                .iter()
                .map(|&p| (p, self.latency_percentile(h, p)))
                .collect(),
            _ => percentiles_of(&self.raw),
        }
    }

    /// Percentile `p` of a latency histogram in the score's unit; the 0th is the exact
    /// minimum, as the 100th is the maximum. NaN for an empty histogram.
    fn latency_percentile(&self, h: &Histogram, p: f64) -> f64 {
        let ns = if p == 0.0 {
            h.min().map(|m| m as f64)
        } else {
            h.percentile(p)
        };
        self.time_unit.from_secs(ns.unwrap_or(f64::NAN) / 1e9)
    }

    /// A latency in nanoseconds (a histogram value) in the score's unit.
    pub fn latency_in_unit(&self, ns: f64) -> f64 {
        self.time_unit.from_secs(ns / 1e9)
    }

    /// In sample mode, the secondary metrics JMH derives from the samples:
    /// `<method>·p0.00` … `<method>·p1.00` (the method being the last part of the
    /// benchmark's name, U+00B7 between), each the percentile over all samples, with the
    /// percentile of each iteration as its raw data. Empty in other modes.
    pub fn sample_percentiles(&self) -> Vec<PercentileMetric> {
        let Some(all) = self
            .histogram
            .as_ref()
            .filter(|_| self.mode() == Mode::Sample)
        else {
            return Vec::new();
        };
        let method = self.name.rsplit('.').next().unwrap_or(&self.name);
        SAMPLE_PERCENTILES
            .iter()
            .map(|&(name, p)| PercentileMetric {
                name: format!("{method}\u{b7}{name}"),
                score: self.latency_percentile(all, p),
                raw: self
                    .iteration_histograms
                    .iter()
                    .map(|fork| fork.iter().map(|h| self.latency_percentile(h, p)).collect())
                    .collect(),
            })
            .collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A result with the given scores, for report tests.
    pub fn sample_result(name: &str, threads: &str, scores: Vec<f64>) -> BenchResult {
        BenchResult {
            name: name.to_string(),
            params: vec![
                ("level".into(), "3".into()),
                ("threads".into(), threads.into()),
            ],
            threads: threads.parse().unwrap(),
            settings: Settings {
                forks: 1,
                iterations: scores.len() as u32,
                ..Settings::quick()
            },
            time_unit: TimeUnit::Millis,
            summary: Summary::of(&scores),
            raw: vec![scores],
            histogram: None,
            iteration_histograms: vec![],
            secondary: vec![],
            cpu: CpuUsage {
                wall: 2.0,
                process: crate::system::cpu::CpuTime {
                    user: 3.5,
                    sys: 0.25,
                },
                children: Default::default(),
            },
            peak_rss_kib: Some(10240),
            throttle: ThrottleReport::default(),
            ops: 100,
            baselines: vec![],
            placements: None,
            offered_rate: None,
        }
    }




    /// A sample-mode result of two forks: latencies 1..=100 µs in fork 1's two iterations
    /// (1..=50 and 51..=100) and 1 ms ten times in fork 2's one iteration.
    pub fn sample_mode_result() -> BenchResult {
        let mut r = sample_result("bb.ipc.remote", "1", vec![25.5, 75.5, 1000.0]);
        r.settings.mode = Mode::Sample;
        r.time_unit = TimeUnit::Micros;
        r.raw = vec![vec![25.5, 75.5], vec![1000.0]];
        let us = |range: std::ops::RangeInclusive<u64>| {
            let mut h = Histogram::new();
            for v in range {
                h.record(v * 1000);
            }
            h
        };
        let mut slow = Histogram::new();
        slow.record_n(1_000_000, 10);
        r.iteration_histograms = vec![vec![us(1..=50), us(51..=100)], vec![slow]];
        let mut all = Histogram::new();
        for h in r.iteration_histograms.iter().flatten() {
            all.merge(h);
        }
        r.histogram = Some(all);
        r
    }

    #[test]
    fn sample_mode_counts_samples_and_derives_jmh_percentile_metrics() {
        let r = sample_mode_result();
        assert_eq!(r.sample_count(), 110, "every sample, not the 3 iterations");
        assert_eq!(sample_result("bb.x", "1", vec![1.0, 2.0]).sample_count(), 2);
        let p = r.sample_percentiles();
        let names: Vec<&str> = p.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "remote·p0.00",
                "remote·p0.50",
                "remote·p0.90",
                "remote·p0.95",
                "remote·p0.99",
                "remote·p0.999",
                "remote·p0.9999",
                "remote·p1.00"
            ]
        );
        assert_eq!(p[0].score, 1.0, "the exact minimum, in us");
        assert_eq!(p[7].score, 1000.0, "the exact maximum");
        assert!((p[1].score - 55.0).abs() < 0.5, "{}", p[1].score);
        assert_eq!(p[0].raw, vec![vec![1.0, 51.0], vec![1000.0]]);
        assert_eq!(p[7].raw, vec![vec![50.0, 100.0], vec![1000.0]]);
        assert!(sample_result("bb.x", "1", vec![1.0])
            .sample_percentiles()
            .is_empty());
    }

    #[test]
    fn a_result_short_of_its_offered_load_by_more_than_one_percent_is_saturated() {
        let mut r = sample_result("bb.r.open", "1", vec![50.0]);
        assert!(r.offered_load().is_none() && !r.saturated());
        // 100 operations over 2 s of measured wall time: 50/s.
        for (target, saturated) in [(50.0, false), (50.5, false), (50.6, true), (1e6, true)] {
            r.offered_rate = Some(target);
            let load = r.offered_load().unwrap();
            assert_eq!(load.achieved, 50.0);
            assert_eq!(r.saturated(), saturated, "target {target}");
        }
        r.cpu.wall = 0.0;
        r.ops = 0;
        assert!(r.saturated(), "nothing achieved is saturated, not NaN");
    }

    #[test]
    fn percentiles_of_iterations_without_histogram() {
        let r = sample_result("bb.z.c", "1", vec![1.0, 2.0, 3.0, 4.0]);
        let p = r.percentiles();
        assert_eq!(p[0], (0.0, 1.0));
        assert_eq!(p[1], (50.0, 2.5));
        assert_eq!(p[9], (100.0, 4.0));
    }
}
