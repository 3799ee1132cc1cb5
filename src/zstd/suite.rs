//! bb-zstd's suite: a benchmark per thread count, operation and lock, each with the input's
//! compression ratio and, for single shots, an estimate of their length that the
//! harness works out in the parent; and the profiles.

use super::options::Options;
use super::{compress_whole, job_time, Config, Lock, Pool};
use crate::harness::benchmark::{Benchmark, Metric, Settings, TimeUnit, Workload};
use crate::harness::{Profiles, Suite};
use crate::model::answer::with_rows;
use crate::util::error::Result;
use std::sync::Arc;
use std::time::Duration;

/// The suite `options` ask for.
pub(crate) fn suite(options: &Options) -> Result<Suite> {
    // The compression ratio of the input, a property of the data and the level, not a
    // measurement: reported once per benchmark.
    let frame = Arc::new(compress_whole(&options.input, options.level)?);
    let ratio = options.input.len() as f64 / frame.len() as f64;
    let mut benchmarks = Vec::new();
    let mut rows = Vec::new();
    // A lock's rows beside each other: one thread count's cpu% with and without it.
    for &threads in &options.threads {
        for &op in &options.ops {
            for &lock in &options.locks {
                let config = Config {
                    op,
                    threads,
                    level: options.level,
                    reuse_context: options.reuse_context,
                    input: options.input.clone(),
                    input_name: options.input_name.clone(),
                    lock,
                    keep_busy: options.keep_busy,
                };
                benchmarks.push(benchmark(options, config.clone(), &frame, ratio));
                rows.push(config);
            }
        }
    }
    let mut suite = Suite::new(TimeUnit::Millis, profiles(), benchmarks);
    suite.answer = Some(with_rows(rows, super::answer::answer));
    Ok(suite)
}

fn benchmark(options: &Options, config: Config, frame: &Arc<Vec<u8>>, ratio: f64) -> Benchmark {
    let threads = config.threads;
    let mut b = Benchmark::new(
        format!("bb.zstd.{}", config.op.name()),
        Box::new({
            let config = config.clone();
            move || Ok(Box::new(Pool::start(&config)?) as Box<dyn Workload>)
        }),
    )
    .param("input", &config.input_name)
    .param("level", config.level)
    .param(
        "context",
        if config.reuse_context {
            "thread"
        } else {
            "job"
        },
    )
    .param("threads", threads)
    .param("lock", config.lock.name());
    b.threads = threads;
    if !options.keep_busy {
        let jobs = options.jobs;
        b.ops_per_invocation = Some(jobs);
        // A single shot's length, for the plan: each thread's share of the jobs, or all
        // of them one after another where the lock makes the threads take turns.
        let serial = match config.lock {
            Lock::None => jobs.div_ceil(threads as u64),
            Lock::Global => jobs,
        };
        let frame = frame.clone();
        b.estimate_invocation(move || Ok(job_time(&config, &frame)? * serial as u32));
    }
    b.bytes_per_op = Some(2.0 * options.input.len() as f64);
    b.constants.push(Metric {
        name: "ratio".into(),
        unit: "x".into(),
        value: ratio,
    });
    b
}

/// Short iterations: the default matrix has eight rows (two thread counts, two
/// operations, with and without the lock), and the standard profile spends its time on
/// five forks of each, the unit of replication (docs/method.md).
/// A default, for a board with no noise profile of its own (`run-all.sh --calibrate`):
/// measured on the 2-core x86 VM, and said so wherever it is used. One fork's noise
/// band: between quick A/A runs of one fork each, bb-zstd's rows moved by up to x1.61 (compress, one thread); ±35% holds
/// 99% of them in quadrature (BENCHMARKS.md, "A/A").
const NOISE_BAND: f64 = 0.35;

fn profiles() -> Profiles {
    Profiles {
        quick: Settings {
            warmup_time: Duration::from_millis(200),
            time: Duration::from_millis(300),
            ..Settings::quick()
        }
        .with_band(NOISE_BAND),
        standard: Settings {
            warmup_iterations: 1,
            warmup_time: Duration::from_millis(300),
            iterations: 3,
            time: Duration::from_millis(400),
            forks: 5,
            ..Settings::full()
        }
        .with_band(NOISE_BAND)
        .with_precision(),
        full: Settings::full().with_band(NOISE_BAND),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::aggregate::answer_over;
    use crate::harness::cli;
    use crate::harness::runner::ForkResult;
    use crate::system::cpu::{CpuTime, CpuUsage};

    fn suite_of(argv: &[&str]) -> Suite {
        let options = Options::from_args_with(&cli::parse_from(argv).unwrap(), &|_| None).unwrap();
        suite(&options).unwrap()
    }

    #[test]
    fn a_benchmark_per_thread_count_and_operation() {
        let s = suite_of(&[
            "--size",
            "4k",
            "--threads",
            "1,2",
            "--reuse-context",
            "--level",
            "5",
            "--lock",
            "none",
        ]);
        let labels: Vec<String> = s.benchmarks.iter().map(Benchmark::label).collect();
        assert_eq!(
            labels,
            [
                "bb.zstd.compress (input=generated-4096, level=5, context=thread, threads=1, lock=none)",
                "bb.zstd.decompress (input=generated-4096, level=5, context=thread, threads=1, lock=none)",
                "bb.zstd.compress (input=generated-4096, level=5, context=thread, threads=2, lock=none)",
                "bb.zstd.decompress (input=generated-4096, level=5, context=thread, threads=2, lock=none)",
            ]
        );
        let b = &s.benchmarks[3];
        assert_eq!(b.threads, 2);
        // A job compresses or decompresses the input twice.
        assert!(b.bytes_per_op.unwrap() > 4096.0, "{:?}", b.bytes_per_op);
        assert!(b.constants[0].value > 1.0, "the corpus compresses");
        // Timed modes keep the threads busy: no batch, nothing to estimate.
        assert!(b.ops_per_invocation.is_none() && !b.estimate_pending());
        assert!(s.pin_process);
    }

    #[test]
    fn each_lock_is_a_benchmark_of_its_own_beside_the_others() {
        let s = suite_of(&[
            "--size",
            "4k",
            "--threads",
            "1,2",
            "--lock",
            "none,global",
            "--op",
            "compress",
        ]);
        let rows: Vec<(usize, String)> = s
            .benchmarks
            .iter()
            .map(|b| (b.threads, b.label()))
            .collect();
        let row = |t: usize, lock: &str| {
            let label = format!(
                "bb.zstd.compress (input=generated-4096, level=3, context=job, threads={t}, lock={lock})"
            );
            (t, label)
        };
        assert_eq!(
            rows,
            [
                row(1, "none"),
                row(1, "global"),
                row(2, "none"),
                row(2, "global")
            ]
        );
    }

    #[test]
    fn a_single_shot_runs_its_jobs_and_leaves_its_estimate_to_the_harness() {
        let mut s = suite_of(&[
            "--size",
            "4k",
            "--threads",
            "2",
            "--mode",
            "ss",
            "--jobs",
            "5",
            "--op",
            "decompress",
        ]);
        let b = &mut s.benchmarks[0];
        assert_eq!(b.ops_per_invocation, Some(5));
        assert!(b.invocation_estimate.is_none() && b.estimate_pending());
        b.resolve_estimate().unwrap();
        assert!(b.invocation_estimate.unwrap() > Duration::ZERO);
    }

    /// A recorded run's figures: three forks of three iterations a row, a thread adding
    /// 80% of one thread's MB/s to compression and 1% to decompression, the global lock
    /// leaving one thread's; cpu% as busy as the threads.
    fn recorded(b: &Benchmark) -> Vec<ForkResult> {
        let threads = b.threads as f64;
        let (one, more) = match b.name.as_str() {
            "bb.zstd.compress" => (340.0, 0.8),
            _ => (900.0, 0.01),
        };
        let (mbs, cpu) = match b.label().contains("lock=global") {
            true => (one * 0.98, 1.02),
            false => (one * (1.0 + more * (threads - 1.0)), 0.97 * threads),
        };
        [1.0, 1.03, 0.98]
            .iter()
            .map(|f| ForkResult {
                scores: vec![mbs * f / 8.0; 3],
                metrics: vec![(
                    "MB/s".into(),
                    "MB/s".into(),
                    vec![mbs * f, mbs * f * 1.01, mbs * f * 0.99],
                )],
                cpu: CpuUsage {
                    wall: 1.0,
                    process: CpuTime {
                        user: cpu,
                        sys: 0.0,
                    },
                    children: CpuTime::default(),
                },
                ops: 100,
                ..Default::default()
            })
            .collect()
    }

    /// The answer the suite of a command line's flags gives over the recorded figures of
    /// its rows, but those `failed`.
    fn answered(line: &str, failed: &[usize]) -> Vec<String> {
        let argv: Vec<&str> = line.split_whitespace().collect();
        let s = suite_of(&argv);
        answer_over(&s, failed, recorded)
    }

    #[test]
    fn the_answer_over_recorded_results() {
        let all = "--size 4k --threads 1,2,4,8 --lock none,global";
        assert_eq!(
            answered(all, &[]),
            [
                "compress: 341 MB/s ±8.8% on 1 thread (level 3, generated-4096)",
                "  4 threads: 3.40x (efficiency 0.85, cpu 388%)",
                "  8 threads: 6.60x (efficiency 0.82, cpu 776%)",
                "  a global lock at 8 threads: 0.980x (cpu 102%); releasing it gains 6.73x",
                "decompress: 903 MB/s ±8.8% on 1 thread (level 3, generated-4096)",
                "  4 threads: 1.03x (efficiency 0.26, cpu 388%) (noise)",
                "  8 threads: 1.07x (efficiency 0.13, cpu 776%) (noise)",
                "  a global lock at 8 threads: 0.980x (cpu 102%); releasing it gains 1.09x (noise)",
            ]
        );
        // The one-thread compression failed: the answer starts at two.
        assert_eq!(
            answered(all, &[0])[..4],
            [
                "compress: 614 MB/s ±8.8% on 2 threads (level 3, generated-4096)",
                "  4 threads: 1.89x (efficiency 0.94, cpu 388%)",
                "  8 threads: 3.67x (efficiency 0.92, cpu 776%)",
                "  a global lock at 8 threads: 0.544x (cpu 102%); releasing it gains 6.73x",
            ]
        );
        let global = "--size 4k --threads 1,2 --lock global --op compress";
        assert_eq!(
            answered(global, &[]),
            [
                "compress: 334 MB/s ±8.8% on 1 thread (level 3, generated-4096, a global lock)",
                "  2 threads: 1.00x (efficiency 0.50, cpu 102%) (noise)",
            ]
        );
        assert!(answered(global, &[0, 1]).is_empty());
    }
}
