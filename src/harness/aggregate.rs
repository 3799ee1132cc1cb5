//! From what the forks sent back to a benchmark's result (scores, histograms, metrics,
//! accounting), and what the results of a run add to each other: speedup and efficiency
//! across thread counts, ratios to baselines.

use super::benchmark::Benchmark;
use super::runner::ForkResult;
use crate::model::result::{BenchResult, PairedPlacements, Secondary};
use crate::model::settings::{Settings, TimeUnit};
use crate::stats::histogram::Histogram;
use crate::stats::Summary;
use crate::system::cpu::CpuUsage;
use crate::system::throttle::ThrottleReport;

/// The result of `bench`, the suite's benchmark `index`, from its forks' reports.
pub(crate) fn from_forks(
    index: usize,
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
        index,
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
        precision: None,
        headline: bench.headline,
        versus: None,
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
            .filter_map(|r| Some((threads_of(r)?, r.score().mean)))
            .collect();
        if group.len() < 2 {
            continue;
        }
        let (base_threads, base_score) = group.iter().copied().fold(
            (f64::INFINITY, f64::NAN),
            |a, b| if b.0 < a.0 { b } else { a },
        );
        // The score the reports print: in sample mode over every sample, as JMH's.
        let score = results[i].score().mean;
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

/// The answer `suite` gives over the results of a run of its benchmarks in its standard
/// profile where the forks of each report what `recorded` makes of it, but those whose
/// index is among `failed` (which have none): the results built, scaled and compared as
/// the harness builds them after a run. For tests of an answer over fixed figures.
#[cfg(test)]
pub(crate) fn answer_over(
    suite: &super::Suite,
    failed: &[usize],
    recorded: impl Fn(&Benchmark) -> Vec<ForkResult>,
) -> Vec<String> {
    let mut results: Vec<BenchResult> = suite
        .benchmarks
        .iter()
        .enumerate()
        .filter(|(index, _)| !failed.contains(index))
        .map(|(index, bench)| {
            let (settings, unit) = bench.effective(&suite.profiles.standard, suite.unit);
            from_forks(
                index,
                bench,
                &settings,
                unit,
                recorded(bench),
                <_>::default(),
            )
        })
        .collect();
    add_scaling(&mut results);
    add_ratios(&mut results);
    (suite.answer.as_ref().expect("the suite answers"))(&results)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::modes::Mode;
    use crate::model::result::placement_warning;
    use crate::model::result::tests::sample_result;

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
            from_forks(
                3,
                &bench,
                &settings,
                TimeUnit::Micros,
                forks,
                <_>::default(),
            )
        };
        let r = result(apart.clone());
        assert_eq!(r.index, 3, "the benchmark's place in its suite");
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
        // One warning for the run, however many benchmarks had such pairs.
        let alike = result(same.clone());
        let w = placement_warning(&[alike.clone(), r.clone(), r])
            .unwrap()
            .to_string();
        assert!(
            w.starts_with("unpinned, 2 of 3 paired benchmarks had a baseline run elsewhere"),
            "{w}"
        );
        assert!(
            w.contains("(2 of 12 pairs; first: bb.i.remote, thrpt, 'vs floor'"),
            "{w}"
        );
        assert!(
            w.contains(
                "baseline client 0, server 0 (same core); measured client 0, server 1 (cross-core)"
            ),
            "{w}"
        );
        assert_eq!(placement_warning(&[alike]), None);
        assert_eq!(
            placement_warning(&[sample_result("bb.z.c", "1", vec![1.0])]),
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

    #[test]
    fn sample_mode_scales_the_score_the_reports_print_not_the_iteration_mean() {
        // The same samples at 1 and 2 threads; iteration means made to differ 7-fold.
        let one = crate::model::result::tests::sample_mode_result();
        let mut two = one.clone();
        for (k, v) in &mut two.params {
            if k == "threads" {
                *v = "2".into();
            }
        }
        two.raw = vec![vec![50.0, 50.0], vec![50.0]];
        two.summary = Summary::of(&[50.0, 50.0, 50.0]);
        assert!((one.summary.mean / two.summary.mean - 7.34).abs() < 0.01);
        let mut rs = vec![one, two];
        add_scaling(&mut rs);
        let speedup = rs[1].secondary("speedup").unwrap().summary.mean;
        assert_eq!(speedup, rs[0].score().mean / rs[1].score().mean);
        assert_eq!(
            speedup, 1.0,
            "over every sample, as JMH's score and the JSON's"
        );
        assert_eq!(rs[1].secondary("efficiency").unwrap().summary.mean, 0.5);
    }
}
