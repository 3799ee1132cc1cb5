//! A benchmark's result: every fork's iterations gathered, summarised, and annotated with
//! CPU, memory, throttling and where a paired baseline ran; plus speedup and efficiency
//! across thread counts, and ratios to baselines measured apart.

use super::benchmark::{self, Benchmark, Settings, TimeUnit};
use super::cli::Mode;
use super::runner::ForkResult;
use crate::output::warnings::Warning;
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
    fn new(name: &str, unit: &str, raw: Vec<Vec<f64>>) -> Secondary {
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
    pub fn from_forks(
        bench: &Benchmark,
        settings: &Settings,
        time_unit: TimeUnit,
        forks: Vec<ForkResult>,
        throttle: ThrottleReport,
    ) -> BenchResult {
        let raw: Vec<Vec<f64>> = forks.iter().map(|f| f.scores.clone()).collect();
        let all: Vec<f64> = raw.iter().flatten().copied().collect();
        let mut histogram: Option<Histogram> = None;
        let mut secondary: Vec<Secondary> = Vec::new();
        let mut cpu = CpuUsage::default();
        for f in &forks {
            if let Some(h) = &f.histogram {
                histogram.get_or_insert_with(Histogram::new).merge(h);
            }
            cpu = cpu.combine(&f.cpu);
        }
        // Metrics keep the order of the first fork; each gets one raw list per fork.
        if let Some(first) = forks.first() {
            for (name, unit, _) in &first.metrics {
                let per_fork = forks
                    .iter()
                    .map(|f| {
                        f.metrics
                            .iter()
                            .find(|(n, _, _)| n == name)
                            .map(|(_, _, v)| v.clone())
                            .unwrap_or_default()
                    })
                    .collect();
                secondary.push(Secondary::new(name, unit, per_fork));
            }
        }
        for c in &bench.constants {
            secondary.push(Secondary::new(&c.name, &c.unit, vec![vec![c.value]]));
        }
        BenchResult {
            name: bench.name.clone(),
            params: bench.params.clone(),
            threads: bench.threads,
            settings: settings.clone(),
            time_unit,
            summary: Summary::of(&all),
            raw,
            histogram,
            iteration_histograms: forks
                .iter()
                .map(|f| f.iteration_histograms.clone())
                .collect(),
            secondary,
            cpu,
            peak_rss_kib: forks.iter().filter_map(|f| f.peak_rss_kib).max(),
            throttle,
            ops: forks.iter().map(|f| f.ops).sum(),
            baselines: bench.baselines.clone(),
            placements: bench.paired.as_ref().map(|p| PairedPlacements {
                metric: p.metric.clone(),
                forks: forks.iter().map(|f| f.pairs.clone()).collect(),
            }),
            offered_rate: bench.offered_rate,
        }
    }

    /// The warning that some of this benchmark's iterations ran placed otherwise than the
    /// paired baseline's before them, so that their ratio compares unlike placements.
    pub fn placement_warning(&self) -> Option<Warning> {
        let p = self.placements.as_ref()?;
        let first = p.differing().next()?.clone();
        Some(Warning::Placement {
            benchmark: self.label(),
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
        benchmark::label(&self.name, &self.params)
    }

    pub fn param(&self, key: &str) -> Option<&str> {
        benchmark::param_value(&self.params, key)
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

    #[cfg(test)]
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

/// Adds speedup and efficiency against the fewest threads to every benchmark that was run
/// with several `threads` values and otherwise equal parameters.
pub fn add_scaling(results: &mut [BenchResult]) {
    let others = |r: &BenchResult| -> Vec<(String, String)> {
        r.params
            .iter()
            .filter(|(k, _)| k != "threads")
            .cloned()
            .collect()
    };
    let threads_of = |r: &BenchResult| r.param("threads").and_then(|t| t.parse::<f64>().ok());
    for i in 0..results.len() {
        let Some(threads) = threads_of(&results[i]) else {
            continue;
        };
        let group: Vec<(f64, f64)> = results
            .iter()
            .filter(|r| {
                r.name == results[i].name
                    && others(r) == others(&results[i])
                    && r.mode() == results[i].mode()
            })
            .filter_map(|r| Some((threads_of(r)?, r.summary.mean)))
            .collect();
        if group.len() < 2 {
            continue;
        }
        let (base_threads, base_score) = group.iter().copied().fold(
            (f64::INFINITY, f64::NAN),
            |a, b| if b.0 < a.0 { b } else { a },
        );
        let score = results[i].summary.mean;
        let speedup = if results[i].mode().higher_is_better() {
            score / base_score
        } else {
            base_score / score
        };
        let efficiency = speedup * base_threads / threads;
        results[i]
            .secondary
            .push(Secondary::new("speedup", "x", vec![vec![speedup]]));
        results[i]
            .secondary
            .push(Secondary::new("efficiency", "x", vec![vec![efficiency]]));
    }
}

/// Adds each benchmark's ratios to its baselines: its time per operation over the
/// baseline's (a remote call against a local one, a call against a bare round trip), the
/// baseline taken in the same mode where it ran in several. Modes and units may differ.
pub fn add_ratios(results: &mut [BenchResult]) {
    for i in 0..results.len() {
        for (metric, label) in results[i].baselines.clone() {
            let mode = results[i].mode();
            let candidates = || results.iter().filter(|r| r.label() == label);
            let Some(base) = candidates()
                .find(|r| r.mode() == mode)
                .or_else(|| candidates().next())
            else {
                continue;
            };
            let ratio = results[i].seconds_per_op() / base.seconds_per_op();
            results[i]
                .secondary
                .push(Secondary::new(&metric, "x", vec![vec![ratio]]));
        }
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

    #[test]
    fn ratios_against_baselines_across_units_and_modes() {
        let mut local = sample_result("bb.i.local", "1", vec![500.0]);
        local.time_unit = TimeUnit::Nanos;
        local.settings.mode = Mode::AverageTime;
        let mut remote_avgt = sample_result("bb.i.remote", "1", vec![20.0, 20.0]);
        remote_avgt.time_unit = TimeUnit::Micros;
        remote_avgt.settings.mode = Mode::AverageTime;
        let mut remote_sample = remote_avgt.clone();
        remote_sample.settings.mode = Mode::Sample;
        remote_sample.summary = Summary::of(&[30.0]);
        let mut floor_thrpt = sample_result("bb.i.floor", "1", vec![100_000.0]);
        floor_thrpt.settings.mode = Mode::Throughput;
        let mut floor_sample = sample_result("bb.i.floor", "1", vec![15.0]);
        floor_sample.time_unit = TimeUnit::Micros;
        floor_sample.settings.mode = Mode::Sample;
        for r in [&mut remote_avgt, &mut remote_sample] {
            r.baselines = vec![
                ("vs local".into(), local.label()),
                ("vs floor".into(), floor_thrpt.label()),
                ("vs missing".into(), "bb.nothing".into()),
            ];
        }
        let mut rs = vec![local, floor_thrpt, floor_sample, remote_avgt, remote_sample];
        add_ratios(&mut rs);
        let ratio = |r: &BenchResult, m: &str| r.secondary(m).unwrap().summary.mean;
        // 20 us against 500 ns; against 100k ops/s (10 us) when no floor ran in avgt.
        assert!((ratio(&rs[3], "vs local") - 40.0).abs() < 1e-9);
        assert!((ratio(&rs[3], "vs floor") - 2.0).abs() < 1e-9);
        // The sample-mode call against the sample-mode floor: 30 / 15.
        assert!((ratio(&rs[4], "vs local") - 60.0).abs() < 1e-9);
        assert!((ratio(&rs[4], "vs floor") - 2.0).abs() < 1e-9);
        assert!(rs[3].secondary("vs missing").is_none());
        assert!(rs[0].secondary.is_empty());
    }

    #[test]
    fn paired_ratios_keep_one_raw_value_per_pair_and_unlike_placements_warn() {
        use crate::harness::benchmark::PairedBaseline;
        use crate::system::placement::PairPlacement;
        let mut bench = Benchmark::new("bb.i.remote", Box::new(|| unreachable!()));
        bench.paired = Some(PairedBaseline {
            metric: "vs floor".into(),
            setup: Box::new(|| unreachable!()),
            ops_per_invocation: None,
        });
        let same = PairPlacement::decode("0/0 0/0").unwrap();
        let apart = PairPlacement::decode("0/0 0/1").unwrap();
        let fork = |ratios: Vec<f64>, pairs: Vec<PairPlacement>| ForkResult {
            scores: vec![10.0; ratios.len()],
            metrics: vec![("vs floor".into(), "x".into(), ratios)],
            pairs,
            ..Default::default()
        };
        let result = |second: PairPlacement| {
            let forks = vec![
                fork(vec![2.0, 3.0], vec![same.clone(), same.clone()]),
                fork(vec![4.0, 3.0], vec![same.clone(), second]),
            ];
            let settings = Settings::quick();
            BenchResult::from_forks(&bench, &settings, TimeUnit::Micros, forks, <_>::default())
        };
        let r = result(apart.clone());
        let m = r.secondary("vs floor").unwrap();
        assert_eq!(
            (m.unit.as_str(), m.raw.clone()),
            ("x", vec![vec![2.0, 3.0], vec![4.0, 3.0]])
        );
        assert_eq!(
            m.summary,
            Summary::of(&[2.0, 3.0, 4.0, 3.0]),
            "the mean of the pairs"
        );
        assert!(m.summary.error.is_finite() && m.summary.error > 0.0);
        let p = r.placements.as_ref().unwrap();
        assert_eq!((p.pairs(), p.differing().count()), (4, 1));
        let w = r.placement_warning().unwrap().to_string();
        assert!(w.contains("in 1 of 4 iteration pairs of 'vs floor'"), "{w}");
        assert!(
            w.contains(
                "baseline client 0, server 0 (same core); measured client 0, server 1 (cross-core)"
            ),
            "{w}"
        );
        assert_eq!(result(same.clone()).placement_warning(), None);
        assert_eq!(
            sample_result("bb.z.c", "1", vec![1.0]).placement_warning(),
            None
        );
    }

    #[test]
    fn scaling_against_one_thread() {
        let mut rs = vec![
            sample_result("bb.z.c", "1", vec![100.0, 100.0, 100.0]),
            sample_result("bb.z.c", "2", vec![180.0, 180.0, 180.0]),
            sample_result("bb.z.d", "1", vec![50.0, 50.0, 50.0]),
        ];
        add_scaling(&mut rs);
        assert_eq!(rs[0].secondary("speedup").unwrap().summary.mean, 1.0);
        assert!((rs[1].secondary("speedup").unwrap().summary.mean - 1.8).abs() < 1e-12);
        assert!((rs[1].secondary("efficiency").unwrap().summary.mean - 0.9).abs() < 1e-12);
        assert!(
            rs[2].secondary("speedup").is_none(),
            "a lone thread count has nothing to scale against"
        );
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
