//! A benchmark's result ([`BenchResult`]): every fork's iterations gathered, summarised,
//! and annotated with CPU, memory, throttling and where a paired baseline ran; what it
//! derives (its percentiles, the load it was offered and whether it held it:
//! [`OfferedLoad`]); plus speedup and efficiency across thread counts, and ratios to
//! baselines measured apart.

use crate::model::modes::Mode;
use crate::model::params;
use crate::model::settings::{Settings, TimeUnit};
use crate::model::warning::Warning;
use crate::stats::histogram::Histogram;
use crate::stats::paired::PairedRatio;
use crate::stats::uncertainty::Uncertainty;
use crate::stats::{
    multiset, percentile_of_counts, percentiles_of, percentiles_of_counts, Summary,
};
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

    /// The metric's mean with the uncertainty it really has, over its forks' means; `band`
    /// is one fork's noise band (its result's [`Settings::noise_band`]).
    pub fn uncertainty(&self, band: f64) -> Uncertainty {
        let means: Vec<f64> = self.raw.iter().map(|f| mean(f)).collect();
        Uncertainty::of(self.summary.mean, &means, band)
    }
}

/// The mean of `values` (NaN for none).
fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Everything known about one benchmark after all its forks ran.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchResult {
    /// The place of the benchmark it came from in its suite's list: what pairs the
    /// result with that benchmark's row ([`crate::model::answer::with_rows`]).
    pub index: usize,
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
    /// (metric name, label of the benchmark to divide by), from [`Benchmark::baselines`](crate::harness::benchmark::Benchmark::baselines).
    pub baselines: Vec<(String, String)>,
    /// Where the iterations of a paired baseline ([`Benchmark::paired`](crate::harness::benchmark::Benchmark::paired)) and this
    /// benchmark's ran.
    pub placements: Option<PairedPlacements>,
    /// The operations per second the workload was asked to hold ([`Benchmark::offered_rate`](crate::harness::benchmark::Benchmark::offered_rate)).
    pub offered_rate: Option<f64>,
    /// Where forks were added until a precision was reached: whether it was.
    pub precision: Option<Precision>,
    /// Whether the binary's answer quotes it ([`Benchmark::headline`](crate::harness::benchmark::Benchmark::headline)).
    pub headline: bool,
    /// In an A/B run (`--against`), the other build's side of this row.
    pub versus: Option<Versus>,
}

/// A build of a binary, as an A/B run names it: its path as given and the SHA-1 of its
/// contents, which tells two builds at one path apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Build {
    pub path: String,
    pub sha1: String,
}

/// An A/B row's other side: both builds, the other's result over its forks, and how many
/// times faster this build is, from the pairs of forks (None where no pair had a number).
#[derive(Debug, Clone, PartialEq)]
pub struct Versus {
    pub this: Build,
    pub other: Build,
    pub result: Box<BenchResult>,
    pub ratio: Option<PairedRatio>,
}

/// A headline row's `--precision`: the target, whether its honest error reached it, and
/// the wall time its forks took (the budget spent where it did not).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Precision {
    pub target: f64,
    pub reached: bool,
    pub seconds: f64,
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

/// The JMH version whose layout boardbench's reports follow (`jmhVersion`), and so its
/// names of sample mode's percentile metrics.
pub const JMH_LAYOUT_VERSION: &str = "1.37";

/// The name JMH `version` gives a sample-mode percentile metric `name` (`p0.99`) of a
/// benchmark whose method is `method`: from 1.37 the bare name, before it
/// `method·p0.99` (U+00B7); a version that does not parse counts as the newest.
pub fn percentile_label(version: &str, method: &str, name: &str) -> String {
    let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
    let older = match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor) < (1, 37),
        _ => false,
    };
    if older {
        format!("{method}\u{b7}{name}")
    } else {
        name.to_string()
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

/// The one warning of a run whose paired baselines ran some iterations placed otherwise
/// than the measured iteration after them (unpinned: `--pin none`), so that those ratios
/// compare unlike placements; None where every pair ran alike.
pub fn placement_warning(results: &[BenchResult]) -> Option<Warning> {
    let paired: Vec<(&BenchResult, &PairedPlacements)> = results
        .iter()
        .filter_map(|r| Some((r, r.placements.as_ref()?)))
        .collect();
    let (first, p) = paired
        .iter()
        .find(|(_, p)| p.differing().next().is_some())?;
    Some(Warning::Placement {
        benchmark: first.label(),
        mode: first.mode().short().to_string(),
        metric: p.metric.clone(),
        differing: paired.iter().map(|(_, p)| p.differing().count()).sum(),
        pairs: paired.iter().map(|(_, p)| p.pairs()).sum(),
        benchmarks: paired
            .iter()
            .filter(|(_, p)| p.differing().next().is_some())
            .count(),
        paired: paired.len(),
        example: p.differing().next()?.clone(),
    })
}

impl BenchResult {
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
        let mean = self.score().mean;
        match self.mode() {
            Mode::Throughput => 1.0 / mean,
            _ => mean / self.time_unit.from_secs(1.0),
        }
    }

    /// JMH's `Cnt` (CSV `Samples`): in sample mode the number of timed operations, as
    /// JMH counts samples there; otherwise the number of measured iterations.
    pub fn sample_count(&self) -> u64 {
        self.score().n as u64
    }

    pub fn secondary(&self, name: &str) -> Option<&Secondary> {
        self.secondary.iter().find(|s| s.name == name)
    }

    /// The samples of one iteration's histogram as (value in the score's unit, count),
    /// lowest first: JMH's `rawDataHistogram` of that iteration, each nanosecond value
    /// times JMH's multiplier (the unit's count in a day over the nanoseconds in a day,
    /// so exactly 1 for ns/op).
    pub fn samples_of(&self, h: &Histogram) -> Vec<(f64, u64)> {
        const DAY: f64 = 86_400.0;
        let multiplier = self.time_unit.from_secs(DAY) / (DAY * 1e9);
        h.values()
            .map(|(ns, count)| (multiplier * ns, count))
            .collect()
    }

    /// Every sample of the run as JMH keeps them in sample mode: the iterations'
    /// [`BenchResult::samples_of`] in one multiset (the whole histogram where the
    /// iterations' are unknown). None without a histogram.
    pub fn samples(&self) -> Option<Vec<(f64, u64)>> {
        let all = self.histogram.as_ref()?;
        let iterations = self.iteration_histograms.iter().flatten();
        Some(if self.iteration_histograms.iter().all(Vec::is_empty) {
            multiset(self.samples_of(all))
        } else {
            multiset(iterations.flat_map(|h| self.samples_of(h)))
        })
    }

    /// The primary score as JMH reports it: in sample mode Score, Error, confidence and
    /// Cnt over every sample (JMH's `MultisetStatistics`), otherwise over the iterations'
    /// scores ([`BenchResult::summary`]).
    pub fn score(&self) -> Summary {
        match self.samples() {
            Some(samples) if self.mode() == Mode::Sample => Summary::of_counts(&samples),
            _ => self.summary.clone(),
        }
    }

    /// Each fork's speed: its mean score where higher is faster (throughput), else its
    /// inverse (time per operation), so that a ratio of speeds reads `x faster`.
    pub fn fork_speeds(&self) -> Vec<f64> {
        let means = self.fork_means().into_iter();
        match self.mode() {
            Mode::Throughput => means.collect(),
            _ => means.map(|m| 1.0 / m).collect(),
        }
    }

    /// Each fork's mean score: in sample mode over its samples (as the score is over every
    /// sample), otherwise over its iterations.
    pub fn fork_means(&self) -> Vec<f64> {
        let by_sample = self.mode() == Mode::Sample
            && self.histogram.is_some()
            && !self.iteration_histograms.iter().all(Vec::is_empty);
        if !by_sample {
            return self.raw.iter().map(|f| mean(f)).collect();
        }
        let fork_mean = |fork: &Vec<Histogram>| {
            let (sum, n) = fork
                .iter()
                .flat_map(|h| self.samples_of(h))
                .fold((0.0, 0u64), |(s, n), (v, c)| (s + v * c as f64, n + c));
            sum / n as f64
        };
        self.iteration_histograms.iter().map(fork_mean).collect()
    }

    /// The score with the uncertainty it really has, for the next run: over forks, not
    /// iterations, with the binary's run floor ([`crate::stats::uncertainty`]); what the
    /// answers print and the JSON's `boardbench.error` is.
    pub fn uncertainty(&self) -> Uncertainty {
        self.uncertainty_in_run()
            .with_floor(self.settings.run_floor)
    }

    /// The variance of ln(score) at each level, so that a later run can size its
    /// repetitions: between iterations and between forks from this row's own data, and
    /// between runs from this board's calibration (None where there is none).
    pub fn variance(&self) -> [Option<f64>; 3] {
        use crate::stats::components::{Components, NEXT_RUN};
        let own = Components::of(&[vec![self.raw.clone()]]);
        let runs = match self.settings.noise_source {
            crate::model::noise::NoiseSource::Calibration { .. } => {
                Some((self.settings.run_floor.ln_1p() / NEXT_RUN).powi(2))
            }
            crate::model::noise::NoiseSource::Default => None,
        };
        [own.iterations, own.forks, runs]
    }

    /// The same within this run alone, without the run floor: what two rows of one run
    /// are told apart by (a shift of the whole run moves both).
    pub fn uncertainty_in_run(&self) -> Uncertainty {
        let score = self.score();
        Uncertainty::of(score.mean, &self.fork_means(), self.settings.noise_band)
    }

    /// JMH's scorePercentiles: of the samples where there is a histogram (JMH's
    /// estimator over its values and counts), otherwise of the iteration scores.
    pub fn percentiles(&self) -> Vec<(f64, f64)> {
        match self.samples() {
            Some(samples) if !samples.is_empty() => percentiles_of_counts(&samples),
            _ => percentiles_of(&self.raw),
        }
    }

    /// In sample mode, the secondary metrics JMH derives from the samples: `p0.00` …
    /// `p1.00`, named as [`JMH_LAYOUT_VERSION`] names them ([`percentile_label`], the
    /// method being the last part of the benchmark's name), each the percentile over all
    /// samples, with the percentile of each iteration as its raw data. Empty in other
    /// modes.
    pub fn sample_percentiles(&self) -> Vec<PercentileMetric> {
        let Some(all) = self.samples().filter(|_| self.mode() == Mode::Sample) else {
            return Vec::new();
        };
        let iterations: Vec<Vec<Vec<(f64, u64)>>> = self
            .iteration_histograms
            .iter()
            .map(|fork| fork.iter().map(|h| multiset(self.samples_of(h))).collect())
            .collect();
        let method = self.name.rsplit('.').next().unwrap_or(&self.name);
        SAMPLE_PERCENTILES
            .iter()
            .map(|&(name, p)| PercentileMetric {
                name: percentile_label(JMH_LAYOUT_VERSION, method, name),
                score: percentile_of_counts(&all, p),
                raw: iterations
                    .iter()
                    .map(|fork| fork.iter().map(|h| percentile_of_counts(h, p)).collect())
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
            index: 0,
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
            precision: None,
            headline: true,
            versus: None,
        }
    }

    /// [`sample_result`] with these forks' iteration scores.
    pub fn forked_result(name: &str, threads: &str, forks: Vec<Vec<f64>>) -> BenchResult {
        let mut r = sample_result(name, threads, forks.concat());
        r.settings.forks = forks.len() as u32;
        r.settings.iterations = forks.first().map_or(0, |f| f.len() as u32);
        r.raw = forks;
        r
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
            ["p0.00", "p0.50", "p0.90", "p0.95", "p0.99", "p0.999", "p0.9999", "p1.00"],
            "JMH 1.37's names"
        );
        // The histogram's values, as rawDataHistogram writes them: within 0.4%.
        let near = |a: f64, b: f64| (a - b).abs() <= 0.004 * b;
        assert!(near(p[0].score, 1.0), "the minimum, in us: {}", p[0].score);
        assert_eq!(p[7].score, 1000.0, "the exact maximum");
        // Position 0.5 × 111 = 55.5: between the 55th and 56th samples.
        assert!(near(p[1].score, 55.5), "{}", p[1].score);
        assert!(
            near(p[0].raw[0][0], 1.0) && near(p[0].raw[0][1], 51.0),
            "{:?}",
            p[0].raw
        );
        assert_eq!(p[0].raw[1], vec![1000.0]);
        assert_eq!(p[7].raw, vec![vec![50.0, 100.0], vec![1000.0]]);
        assert!(sample_result("bb.x", "1", vec![1.0])
            .sample_percentiles()
            .is_empty());
    }

    #[test]
    fn percentile_names_follow_the_jmh_version() {
        assert_eq!(percentile_label("1.37", "remote", "p0.99"), "p0.99");
        assert_eq!(percentile_label("1.38", "remote", "p0.99"), "p0.99");
        assert_eq!(percentile_label("2.0", "remote", "p0.99"), "p0.99");
        assert_eq!(percentile_label("1.36", "remote", "p0.99"), "remote·p0.99");
        assert_eq!(percentile_label("1.21", "remote", "p0.99"), "remote·p0.99");
        assert_eq!(percentile_label(JMH_LAYOUT_VERSION, "x", "p1.00"), "p1.00");
    }

    #[test]
    fn sample_mode_scores_every_sample_as_jmh_does() {
        // Two iterations in ns, below 128 ns where a bucket is one value: 100 ×3 and 50,
        // then 120. The iteration scores (87.5 and 120) are not what JMH scores.
        let mut r = sample_result("bb.ipc.remote", "1", vec![87.5, 120.0]);
        r.settings.mode = Mode::Sample;
        r.time_unit = TimeUnit::Nanos;
        let mut first = Histogram::new();
        first.record_n(100, 3);
        first.record(50);
        let mut second = Histogram::new();
        second.record(120);
        r.iteration_histograms = vec![vec![first.clone(), second.clone()]];
        first.merge(&second);
        r.histogram = Some(first);
        // JMH: mean Σv/n, stdev with n − 1, error t(0.9995, n − 1) · stdev / √n.
        let values = [100.0, 100.0, 100.0, 50.0, 120.0];
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let stdev = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        let t = crate::stats::student_t::student_t_quantile(0.9995, n - 1.0);
        let s = r.score();
        assert_eq!((s.n, s.mean), (5, 94.0));
        assert_eq!(mean, 94.0);
        assert!(
            (s.stdev - stdev).abs() < 1e-12,
            "{} against {stdev}",
            s.stdev
        );
        assert!(
            (s.error - t * stdev / n.sqrt()).abs() < 1e-12,
            "{}",
            s.error
        );
        assert!((t - 8.6103).abs() < 1e-4, "{t}");
        assert_eq!(s.confidence(), (94.0 - s.error, 94.0 + s.error));
        assert_eq!(r.sample_count(), 5);
        assert_eq!(r.summary.mean, 103.75, "the iterations' mean stays apart");
        // JMH's percentile: p50 at position 3 is 100; p90 at 5.4 is the maximum.
        let p = r.percentiles();
        assert_eq!(
            (p[0], p[1], p[2]),
            ((0.0, 50.0), (50.0, 100.0), (90.0, 120.0))
        );
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
