//! The runner: the measured loop of warm-up and measurement iterations of one benchmark
//! in one process, with the batch calibrated for fast operations and a paired baseline's
//! iterations interleaved where the benchmark has one. Forks, timeouts and reports are
//! built around this loop elsewhere.

use super::benchmark::{Benchmark, Metric, PairedBaseline, Settings, TimeUnit, Workload};
use super::cli::Mode;
use super::{turns, watchdog};
use crate::stats::histogram::Histogram;
use crate::system::counters::{Counters, Counts};
use crate::system::cpu::{self, CpuMeter, CpuUsage};
use crate::system::placement::{self, PairPlacement, Placement};
use crate::util::error::Result;
use std::time::{Duration, Instant};

/// What one process measured of one benchmark.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ForkResult {
    /// One primary score per measurement iteration.
    pub scores: Vec<f64>,
    /// Per-iteration metrics (name, unit, one value per iteration).
    pub metrics: Vec<(String, String, Vec<f64>)>,
    /// Per-operation latency in nanoseconds (sample mode only).
    pub histogram: Option<Histogram>,
    /// The same latencies, one histogram per measurement iteration (sample mode only):
    /// JMH's `rawDataHistogram` lists each iteration's samples.
    pub iteration_histograms: Vec<Histogram>,
    pub cpu: CpuUsage,
    pub peak_rss_kib: Option<u64>,
    pub ops: u64,
    /// Where each measured iteration and its paired baseline's ran, one per iteration.
    pub pairs: Vec<PairPlacement>,
}

/// Whether the measured iterations are counted (`--counters`, where the parent found
/// counters permitted): set once a process, before its first benchmark.
static COUNTING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Counts the measured iterations of every benchmark this process runs from now on.
pub fn count_iterations(on: bool) {
    COUNTING.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// The counters' metrics of one iteration of `ops` operations (of `bytes` each, where
/// they have bytes): cycles and instructions per operation, IPC, cache misses per
/// operation where counted, cycles per byte.
fn counted_metrics(counts: Counts, ops: u64, bytes: Option<f64>) -> Vec<Metric> {
    let ops = ops.max(1) as f64;
    let metric = |name: &str, value: f64| Metric {
        name: name.into(),
        unit: name.into(),
        value,
    };
    let mut out = vec![
        metric("cycles/op", counts.cycles as f64 / ops),
        metric("instructions/op", counts.instructions as f64 / ops),
        metric(
            "IPC",
            counts.instructions as f64 / (counts.cycles as f64).max(1.0),
        ),
    ];
    if let Some(misses) = counts.cache_misses {
        out.push(metric("cache-misses/op", misses as f64 / ops));
    }
    if let Some(bytes) = bytes.filter(|b| *b > 0.0) {
        out.push(metric("cycles/byte", counts.cycles as f64 / (ops * bytes)));
    }
    out
}

/// Runs warm-up and measurement iterations of `bench` in this process.
pub fn run_in_process(
    bench: &Benchmark,
    settings: &Settings,
    unit: TimeUnit,
) -> Result<ForkResult> {
    let rss_reset = cpu::reset_peak_rss();
    // Opened before the set-up, so that the threads it starts inherit them.
    let mut counters = COUNTING
        .load(std::sync::atomic::Ordering::Relaxed)
        .then(|| Counters::open().ok())
        .flatten();
    let label = bench.label();
    // In an A/B pair each step (this set-up, every iteration, the finish) waits its turn.
    turns::next_step();
    watchdog::arm(settings.timeout, format!("setting up {label}"));
    let workload = (bench.setup)()?;
    #[cfg(feature = "fault-injection")]
    let workload = super::drift::wrap(workload);
    let mut workload = workload;
    let batch = batch_size(
        workload.as_mut(),
        bench.ops_per_invocation,
        settings,
        &label,
    )?;
    let mut pairing = Pairing::start(bench, settings, &label)?;
    for i in 0..settings.warmup_iterations {
        turns::next_step();
        if let Some(p) = pairing.as_mut() {
            p.warm_up(i, settings)?;
        }
        watchdog::arm(
            settings.timeout,
            format!("warm-up iteration {} of {label}", i + 1),
        );
        iteration(
            workload.as_mut(),
            settings.mode,
            batch,
            settings.warmup_time,
            None,
        )?;
        workload.latencies();
        workload.after_iteration()?;
    }
    let mut result = ForkResult::default();
    let mut histogram = (settings.mode == Mode::Sample).then(Histogram::new);
    let peers_before = workload.peer_cpu()?;
    // CPU is counted over the timed iterations only, not the untimed checks between.
    let mut meter = CpuMeter::paused();
    for i in 0..settings.iterations {
        turns::next_step();
        let baseline = pairing
            .as_mut()
            .map(|p| p.baseline(i, settings))
            .transpose()?;
        watchdog::arm(settings.timeout, format!("iteration {} of {label}", i + 1));
        let mut this_iteration = histogram.as_ref().map(|_| Histogram::new());
        meter.resume();
        if let Some(c) = counters.as_mut() {
            c.start();
        }
        let timed = iteration(
            workload.as_mut(),
            settings.mode,
            batch,
            settings.time,
            this_iteration.as_mut(),
        );
        meter.pause();
        let counted = counters.as_mut().map(|c| {
            c.stop();
            c.read()
        });
        let (elapsed, ops) = timed?;
        // An open loop's latencies are its calls' own, and so is its score: their mean.
        let mut score = score(settings.mode, unit, elapsed, ops);
        if let (Some(own), Some(h)) = (workload.latencies(), this_iteration.as_mut()) {
            score = unit.from_secs(own.mean().unwrap_or(f64::NAN) / 1e9);
            *h = own;
        }
        if let (Some(all), Some(h)) = (histogram.as_mut(), this_iteration) {
            all.merge(&h);
            result.iteration_histograms.push(h);
        }
        if let (Some(p), Some(b)) = (pairing.as_mut(), baseline) {
            p.pair(b, workload.as_mut(), elapsed, ops);
        }
        workload.after_iteration()?;
        result.ops += ops;
        result.scores.push(score);
        let mut metrics = workload.iteration_metrics();
        if let Some(bytes) = bench.bytes_per_op {
            metrics.push(Metric {
                name: "MB/s".into(),
                unit: "MB/s".into(),
                value: bytes * ops as f64 / elapsed.as_secs_f64() / 1e6,
            });
        }
        if let Some(counts) = counted {
            metrics.extend(counted_metrics(counts, ops, bench.bytes_per_op));
        }
        if let Some(rate) = &bench.rate {
            let name = format!("{rate}/s");
            metrics.push(Metric {
                unit: name.clone(),
                name,
                value: ops as f64 / elapsed.as_secs_f64(),
            });
        }
        for m in metrics {
            match result.metrics.iter_mut().find(|(n, _, _)| *n == m.name) {
                Some((_, _, values)) => values.push(m.value),
                None => result.metrics.push((m.name, m.unit, vec![m.value])),
            }
        }
    }
    let peers = workload.peer_cpu()? - peers_before;
    result.cpu = meter.stop(peers);
    turns::next_step();
    watchdog::arm(settings.timeout, format!("finishing {label}"));
    workload.finish()?;
    drop(workload);
    if let Some(p) = pairing {
        p.finish(settings, &mut result)?;
    }
    watchdog::disarm();
    result.histogram = histogram;
    result.peak_rss_kib = if rss_reset { cpu::peak_rss_kib() } else { None };
    Ok(result)
}

/// The primary score of one iteration.
fn score(mode: Mode, unit: TimeUnit, elapsed: Duration, ops: u64) -> f64 {
    let secs = elapsed.as_secs_f64();
    match mode {
        Mode::Throughput => ops as f64 / secs,
        _ => unit.from_secs(secs / ops as f64),
    }
}

/// Operations per invocation: the benchmark's fixed number, a calibrated batch in the
/// timed modes, otherwise one.
fn batch_size(
    workload: &mut dyn Workload,
    fixed: Option<u64>,
    settings: &Settings,
    what: &str,
) -> Result<u64> {
    match (fixed, settings.mode) {
        (Some(n), _) => Ok(n.max(1)),
        (None, Mode::Throughput | Mode::AverageTime) => {
            watchdog::arm(settings.timeout, format!("calibrating {what}"));
            calibrate(workload)
        }
        (None, _) => Ok(1),
    }
}

/// A benchmark's paired baseline, set up in the measuring process, and its pairs so far.
struct Pairing<'a> {
    paired: &'a PairedBaseline,
    /// `the baseline (vs floor) of LABEL`, for the watchdog's messages.
    what: String,
    workload: Box<dyn Workload>,
    batch: u64,
    ratios: Vec<f64>,
    placements: Vec<PairPlacement>,
}

/// A baseline iteration just measured, waiting for the measured iteration after it.
struct BaselineHalf {
    seconds_per_op: f64,
    placement: Placement,
    /// The client's CPU as the measured iteration starts.
    measured_start: Option<usize>,
}

impl<'a> Pairing<'a> {
    /// Sets up `bench`'s paired baseline, if it has one, and sizes its batch.
    fn start(
        bench: &'a Benchmark,
        settings: &Settings,
        label: &str,
    ) -> Result<Option<Pairing<'a>>> {
        let Some(paired) = &bench.paired else {
            return Ok(None);
        };
        let what = format!("the baseline ({}) of {label}", paired.metric);
        watchdog::arm(settings.timeout, format!("setting up {what}"));
        let mut workload = (paired.setup)()?;
        let batch = batch_size(
            workload.as_mut(),
            paired.ops_per_invocation,
            settings,
            &what,
        )?;
        Ok(Some(Pairing {
            paired,
            what,
            workload,
            batch,
            ratios: Vec::new(),
            placements: Vec::new(),
        }))
    }

    /// The baseline's warm-up iteration `i`, before the benchmark's.
    fn warm_up(&mut self, i: u32, settings: &Settings) -> Result<()> {
        watchdog::arm(
            settings.timeout,
            format!("warm-up iteration {} of {}", i + 1, self.what),
        );
        let w = self.workload.as_mut();
        iteration(w, settings.mode, self.batch, settings.warmup_time, None)?;
        w.after_iteration()
    }

    /// The baseline's measurement iteration `i`, just before the benchmark's.
    fn baseline(&mut self, i: u32, settings: &Settings) -> Result<BaselineHalf> {
        watchdog::arm(
            settings.timeout,
            format!("iteration {} of {}", i + 1, self.what),
        );
        let w = self.workload.as_mut();
        let start = placement::current_cpu();
        let (elapsed, ops) = iteration(w, settings.mode, self.batch, settings.time, None)?;
        let end = placement::current_cpu();
        let placement = Placement::new([start, end], w.peer_placement());
        w.after_iteration()?;
        Ok(BaselineHalf {
            seconds_per_op: elapsed.as_secs_f64() / ops as f64,
            placement,
            measured_start: placement::current_cpu(),
        })
    }

    /// Pairs the measured iteration that just ended (`elapsed` for `ops`) with the baseline
    /// iteration before it: one ratio, one placement.
    fn pair(
        &mut self,
        baseline: BaselineHalf,
        measured: &mut dyn Workload,
        elapsed: Duration,
        ops: u64,
    ) {
        let end = placement::current_cpu();
        let seconds_per_op = elapsed.as_secs_f64() / ops as f64;
        self.ratios.push(seconds_per_op / baseline.seconds_per_op);
        self.placements.push(PairPlacement {
            baseline: baseline.placement,
            measured: Placement::new([baseline.measured_start, end], measured.peer_placement()),
        });
    }

    /// Stops the baseline and adds the ratios (a metric with one value per iteration) and
    /// the placements to `result`.
    fn finish(mut self, settings: &Settings, result: &mut ForkResult) -> Result<()> {
        watchdog::arm(settings.timeout, format!("finishing {}", self.what));
        self.workload.finish()?;
        result
            .metrics
            .push((self.paired.metric.clone(), "x".into(), self.ratios));
        result.pairs = self.placements;
        Ok(())
    }
}

/// Finds a batch size whose invocation takes at least a millisecond, so timing overhead
/// stays negligible next to fast operations. The calibration runs count as warm-up.
fn calibrate(workload: &mut dyn Workload) -> Result<u64> {
    let mut batch = 1u64;
    loop {
        let start = Instant::now();
        workload.run(batch)?;
        if start.elapsed() >= Duration::from_millis(1) || batch >= 1 << 24 {
            return Ok(batch);
        }
        batch *= 2;
    }
}

/// One iteration: returns its wall time and the operations done.
fn iteration(
    workload: &mut dyn Workload,
    mode: Mode,
    batch: u64,
    time: Duration,
    mut histogram: Option<&mut Histogram>,
) -> Result<(Duration, u64)> {
    let start = Instant::now();
    let mut ops = 0;
    loop {
        let invocation = Instant::now();
        workload.run(batch)?;
        ops += batch;
        let now = Instant::now();
        if let Some(h) = histogram.as_deref_mut() {
            h.record((now - invocation).as_nanos() as u64 / batch);
        }
        if mode == Mode::SingleShot || now - start >= time {
            return Ok((now - start, ops));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::benchmark::Setup;

    /// Counts operations and sleeps a fixed time per invocation.
    struct Sleepy {
        per_call: Duration,
        calls: std::rc::Rc<std::cell::Cell<u64>>,
    }

    impl Workload for Sleepy {
        fn run(&mut self, ops: u64) -> Result<()> {
            self.calls.set(self.calls.get() + ops);
            std::thread::sleep(self.per_call);
            Ok(())
        }
        fn iteration_metrics(&mut self) -> Vec<Metric> {
            vec![Metric {
                name: "calls".into(),
                unit: "#".into(),
                value: self.calls.get() as f64,
            }]
        }
    }

    fn sleepy(
        per_call: Duration,
        fixed: Option<u64>,
    ) -> (Benchmark, std::rc::Rc<std::cell::Cell<u64>>) {
        let calls = std::rc::Rc::new(std::cell::Cell::new(0));
        let c = calls.clone();
        let mut b = Benchmark::new(
            "bb.test.sleep",
            Box::new(move || {
                Ok(Box::new(Sleepy {
                    per_call,
                    calls: c.clone(),
                }) as Box<dyn Workload>)
            }),
        );
        b.ops_per_invocation = fixed;
        b.bytes_per_op = Some(1e6);
        (b, calls)
    }

    fn settings(mode: Mode) -> Settings {
        Settings {
            mode,
            warmup_iterations: 1,
            warmup_time: Duration::from_millis(20),
            iterations: 3,
            time: Duration::from_millis(30),
            forks: 0,
            timeout: Duration::from_secs(30),
            precision: None,
            max_forks: 0,
            noise_band: crate::stats::uncertainty::NOISE_BAND,
            run_floor: 0.0,
            noise_source: Default::default(),
        }
    }

    #[test]
    fn single_shot_runs_exactly_one_invocation_per_iteration() {
        let (b, calls) = sleepy(Duration::from_millis(5), Some(10));
        let r = run_in_process(&b, &settings(Mode::SingleShot), TimeUnit::Millis).unwrap();
        assert_eq!(
            calls.get(),
            40,
            "1 warm-up + 3 measured invocations of 10 ops"
        );
        assert_eq!(r.ops, 30);
        assert_eq!(r.scores.len(), 3);
        for s in &r.scores {
            assert!(*s >= 0.5, "5 ms over 10 ops is at least 0.5 ms/op: {s}");
        }
        assert_eq!(r.metrics[0].2, vec![20.0, 30.0, 40.0]);
        assert_eq!(r.metrics[1].0, "MB/s");
    }

    #[test]
    fn rate_metric_and_per_benchmark_overrides() {
        let (mut b, _) = sleepy(Duration::from_millis(2), Some(4));
        b.rate = Some("calls".into());
        b.mode = Some(Mode::AverageTime);
        b.unit = Some(TimeUnit::Nanos);
        let (s, unit) = b.effective(&settings(Mode::Throughput), TimeUnit::Millis);
        assert_eq!((s.mode, unit), (Mode::AverageTime, TimeUnit::Nanos));
        let r = run_in_process(&b, &s, unit).unwrap();
        let (name, metric_unit, values) = &r.metrics[2];
        assert_eq!(
            (name.as_str(), metric_unit.as_str()),
            ("calls/s", "calls/s")
        );
        for (rate, per_op_ns) in values.iter().zip(&r.scores) {
            // 4 ops per 2 ms sleep: at most 2000 calls/s, and calls/s = 1e9 / ns per op.
            assert!(*rate > 0.0 && *rate <= 2000.0, "{rate}");
            assert!((rate * per_op_ns / 1e9 - 1.0).abs() < 1e-9);
        }
        let (s, unit) = Benchmark::new("x", Box::new(|| unreachable!()))
            .effective(&settings(Mode::Sample), TimeUnit::Micros);
        assert_eq!((s.mode, unit), (Mode::Sample, TimeUnit::Micros));
    }

    #[test]
    fn throughput_iterations_last_their_time() {
        let (b, _) = sleepy(Duration::from_millis(2), None);
        let r = run_in_process(&b, &settings(Mode::Throughput), TimeUnit::Millis).unwrap();
        assert_eq!(r.scores.len(), 3);
        assert!(r.cpu.wall >= 0.09, "{:?}", r.cpu);
        for s in &r.scores {
            assert!(*s > 0.0 && *s <= 500.0, "at most one op per 2 ms: {s}");
        }
        assert!(r.histogram.is_none());
    }

    #[test]
    fn sample_mode_records_every_invocation() {
        let (b, _) = sleepy(Duration::from_millis(1), None);
        let r = run_in_process(&b, &settings(Mode::Sample), TimeUnit::Micros).unwrap();
        let h = r.histogram.unwrap();
        assert_eq!(h.count(), r.ops);
        let per_iteration: Vec<u64> = r.iteration_histograms.iter().map(|h| h.count()).collect();
        assert_eq!(per_iteration.len(), 3, "one histogram per iteration");
        assert_eq!(per_iteration.iter().sum::<u64>(), h.count());
        assert!(
            h.percentile(50.0).unwrap() >= 1e6,
            "1 ms sleeps take at least 1e6 ns"
        );
    }

    #[test]
    fn workload_errors_end_the_benchmark() {
        struct Failing;
        impl Workload for Failing {
            fn run(&mut self, _: u64) -> Result<()> {
                Err(crate::util::error::Error::failed("verification mismatch"))
            }
        }
        let b = Benchmark::new(
            "bb.test.fail",
            Box::new(|| Ok(Box::new(Failing) as Box<dyn Workload>)),
        );
        let e = run_in_process(&b, &settings(Mode::Throughput), TimeUnit::Millis).unwrap_err();
        assert_eq!(e.to_string(), "verification mismatch");
        assert_eq!(e.exit_code(), 1);
    }

    #[test]
    fn after_iteration_runs_untimed_after_every_iteration() {
        /// Sleeps only in `after_iteration`, and fails there on its fourth call.
        struct Checked {
            calls: u32,
        }
        impl Workload for Checked {
            fn run(&mut self, _: u64) -> Result<()> {
                Ok(())
            }
            fn after_iteration(&mut self) -> Result<()> {
                self.calls += 1;
                std::thread::sleep(Duration::from_millis(50));
                if self.calls == 4 {
                    return Err(crate::util::error::Error::failed(
                        "check of iteration 4 failed",
                    ));
                }
                Ok(())
            }
        }
        let b = Benchmark::new(
            "bb.test.checked",
            Box::new(|| Ok(Box::new(Checked { calls: 0 }) as Box<dyn Workload>)),
        );
        let mut s = settings(Mode::SingleShot);
        s.iterations = 2;
        let r = run_in_process(&b, &s, TimeUnit::Millis).unwrap();
        for score in &r.scores {
            assert!(*score < 50.0, "the 50 ms check is not timed: {score} ms");
        }
        s.iterations = 3;
        let e = run_in_process(&b, &s, TimeUnit::Millis).unwrap_err();
        assert_eq!(
            e.to_string(),
            "check of iteration 4 failed",
            "1 warm-up + 3"
        );
    }

    /// Sleeps `per_op` × the machine's speed of the moment per operation; the speed
    /// changes after every iteration of the measured workload (`advance`), as a loaded
    /// machine's would between iterations.
    struct Drifting {
        per_op: Duration,
        phase: std::rc::Rc<std::cell::Cell<usize>>,
        advance: bool,
        ops: std::rc::Rc<std::cell::Cell<u64>>,
    }

    /// Slowdowns far enough apart that a ratio across two phases is far from one within.
    const SLOWDOWN: [u32; 4] = [1, 5, 2, 1];

    impl Workload for Drifting {
        fn run(&mut self, ops: u64) -> Result<()> {
            self.ops.set(self.ops.get() + ops);
            let slowdown = SLOWDOWN[self.phase.get() % SLOWDOWN.len()];
            std::thread::sleep(self.per_op * slowdown * ops as u32);
            Ok(())
        }
        fn after_iteration(&mut self) -> Result<()> {
            if self.advance {
                self.phase.set(self.phase.get() + 1);
            }
            Ok(())
        }
    }

    #[test]
    fn a_paired_baseline_gives_one_ratio_per_iteration_from_adjacent_iterations() {
        use std::cell::Cell;
        use std::rc::Rc;
        let phase = Rc::new(Cell::new(0));
        let counts = [(); 2].map(|_| Rc::new(Cell::new(0u64)));
        let drifting = |per_op_ms: u64, advance: bool, ops: &Rc<Cell<u64>>| -> Setup {
            let (phase, ops) = (phase.clone(), ops.clone());
            Box::new(move || {
                Ok(Box::new(Drifting {
                    per_op: Duration::from_millis(per_op_ms),
                    phase: phase.clone(),
                    advance,
                    ops: ops.clone(),
                }) as Box<dyn Workload>)
            })
        };
        // A call of 60 ms against a floor of 20 ms, both slowed alike in each phase: long
        // enough that a sleep overshooting by milliseconds on a loaded machine keeps the
        // ratio near 3.
        let mut b = Benchmark::new("bb.test.call", drifting(60, true, &counts[0]));
        b.ops_per_invocation = Some(1);
        b.paired = Some(PairedBaseline {
            metric: "vs floor".into(),
            setup: drifting(20, false, &counts[1]),
            ops_per_invocation: Some(1),
        });
        let s = settings(Mode::SingleShot);
        let r = run_in_process(&b, &s, TimeUnit::Millis).unwrap();
        assert_eq!(
            (counts[0].get(), counts[1].get()),
            (4, 4),
            "1 warm-up + 3 iterations each"
        );
        let (name, unit, ratios) = r.metrics.last().unwrap();
        assert_eq!((name.as_str(), unit.as_str()), ("vs floor", "x"));
        assert_eq!(ratios.len(), 3, "one ratio per iteration: {ratios:?}");
        // Paired with its own phase's floor each ratio is 3; paired across phases it
        // would be 15, 1.2 or 6.
        for ratio in ratios {
            assert!((2.0..4.0).contains(ratio), "{ratios:?}");
        }
        let ms: Vec<u32> = r.scores.iter().map(|s| (s / 60.0).round() as u32).collect();
        assert_eq!(
            ms,
            [5, 2, 1],
            "the scores are the call's alone: {:?}",
            r.scores
        );
        assert_eq!(r.pairs.len(), 3);
        for p in &r.pairs {
            assert!(!p.baseline.client.is_empty() && !p.measured.client.is_empty());
            assert!(p.measured.server.is_empty(), "no peer to read: {p:?}");
        }
        assert!(
            run_in_process(&b, &settings(Mode::Sample), TimeUnit::Millis)
                .unwrap()
                .histogram
                .unwrap()
                .percentile(50.0)
                .unwrap()
                >= 60e6,
            "only the calls are in the histogram"
        );
    }

    #[test]
    fn cpu_counts_only_the_timed_iterations() {
        /// Sleeps when timed; spins 100 ms in the untimed check after each iteration.
        struct SpinsAfter;
        impl Workload for SpinsAfter {
            fn run(&mut self, _: u64) -> Result<()> {
                std::thread::sleep(Duration::from_millis(1));
                Ok(())
            }
            fn after_iteration(&mut self) -> Result<()> {
                let until = Instant::now() + Duration::from_millis(100);
                while Instant::now() < until {
                    std::hint::black_box(0);
                }
                Ok(())
            }
        }
        let b = Benchmark::new(
            "bb.test.spins",
            Box::new(|| Ok(Box::new(SpinsAfter) as Box<dyn Workload>)),
        );
        let r = run_in_process(&b, &settings(Mode::Throughput), TimeUnit::Millis).unwrap();
        // Three iterations of 30 ms; the three 100 ms spins after them are not counted.
        assert!(r.cpu.wall >= 0.09 && r.cpu.wall < 0.25, "{:?}", r.cpu);
        assert!(r.cpu.process.total() < 0.15, "{:?}", r.cpu);
    }

    #[test]
    fn counted_iterations_give_per_operation_figures() {
        let counts = Counts {
            cycles: 8_000,
            instructions: 20_000,
            cache_misses: Some(40),
        };
        let got: Vec<(String, f64)> = counted_metrics(counts, 4, Some(1000.0))
            .into_iter()
            .map(|m| (m.name, m.value))
            .collect();
        let want = [
            ("cycles/op", 2000.0),
            ("instructions/op", 5000.0),
            ("IPC", 2.5),
            ("cache-misses/op", 10.0),
            ("cycles/byte", 2.0),
        ];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for ((name, value), (n, v)) in got.iter().zip(want) {
            assert_eq!((name.as_str(), *value), (n, v));
        }
        let plain = counted_metrics(Counts::default(), 0, None);
        assert!(plain.iter().all(|m| m.value.is_finite()), "{plain:?}");
        assert!(!plain.iter().any(|m| m.name == "cycles/byte"));
    }
}
