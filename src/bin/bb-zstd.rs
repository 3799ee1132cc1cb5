//! bb-zstd: how fast is zstd streaming compression and decompression here, and how does
//! it scale with threads? A queue of jobs consumed by THREADS threads, each job a
//! streaming compress (write, flush, write, finish) or a streaming decompress (a frame
//! decoded twice), as zstd-ruby's multi-threaded streaming benchmarks do.

use boardbench::harness::cli::{self, HasCommon};
use boardbench::harness::fork;
use boardbench::zstd::corpus::{self, CITY_JSON_SIZE};
use boardbench::zstd::{compress_whole, job_time, Config, Op, Pool};
use boardbench::{
    Benchmark, Error, Metric, Mode, Profiles, Result, Settings, Suite, TimeUnit, Workload,
};
use std::sync::Arc;
use std::time::Duration;

boardbench::bench_args! {
    /// Measure zstd streaming compression and decompression across threads.
    #[argh(
        example = "bb-zstd --quick\nbb-zstd --input city.json --threads 1,2,4 --level 3\nTHREADS=4 GUESSES=1000 bb-zstd --input city.json --op compress"
    )]
    pub struct Args {
        /// compress, decompress or both (default both)
        #[argh(option, default = "String::from(\"both\")")]
        pub op: String,
        /// jobs per single shot in --mode ss, as the original's GUESSES (default: $GUESSES, else 1000; 50 with --quick); timed modes queue jobs for as long as an iteration lasts
        #[argh(option)]
        pub jobs: Option<u64>,
        /// thread counts, a list such as 1,2,4 (default: $THREADS, else the online CPUs)
        #[argh(option, from_str_fn(boardbench::harness::cli::parse_usize_list))]
        pub threads: Option<Vec<usize>>,
        /// input file (default: a generated JSON corpus like city.json)
        #[argh(option)]
        pub input: Option<std::path::PathBuf>,
        /// size of the generated corpus (default 1779136 bytes, city.json's size)
        #[argh(option, from_str_fn(boardbench::harness::cli::parse_size))]
        pub size: Option<u64>,
        /// zstd level, negative fast levels up to 22 (default 3)
        #[argh(option, default = "3")]
        pub level: i32,
        /// allow more than 64 threads per online CPU (up to 65536)
        #[argh(switch)]
        pub oversubscribe: bool,
        /// one encoder/decoder per thread, reset between jobs, instead of one per job
        #[argh(switch)]
        pub reuse_context: bool,
    }
}

fn main() {
    boardbench::main_with(|| {
        let args: Args = cli::parse_args();
        run(&args)
    })
}

fn run(args: &Args) -> Result<()> {
    let flags = args.common()?;
    let ops: Vec<Op> = match args.op.as_str() {
        "compress" => vec![Op::Compress],
        "decompress" => vec![Op::Decompress],
        "both" => vec![Op::Compress, Op::Decompress],
        other => {
            return Err(Error::usage(format!(
                "--op: unknown value '{other}' (expected compress, decompress or both)"
            )))
        }
    };
    let jobs = match args.jobs {
        Some(n) => n,
        None => env_number("GUESSES")?.unwrap_or(flags.profile.pick(50, 1000, 1000)),
    };
    cli::check_positive("--jobs", jobs)?;
    let threads = match &args.threads {
        Some(list) => list.clone(),
        None => vec![env_number("THREADS")?.map_or_else(online_cpus, |n| n as usize)],
    };
    // Beyond a few threads per CPU nothing more is measured, and a typo (100000) would
    // start them all: --oversubscribe allows up to the hard bound.
    let max_threads = if args.oversubscribe {
        MAX_THREADS
    } else {
        (THREADS_PER_CPU * online_cpus()).min(MAX_THREADS)
    };
    for &t in &threads {
        cli::check_positive("--threads", t as u64)?;
        let what = if args.oversubscribe {
            "threads"
        } else {
            "threads here (64 per online CPU; --oversubscribe allows more)"
        };
        cli::check_at_most("--threads", t as u64, max_threads as u64, what)?;
    }
    let most_threads = threads.iter().copied().max().unwrap_or(1) as u64;
    // The input, its frames, and an output buffer of twice the input per thread.
    let memory_for = |size: u64| size.saturating_mul(4 + 2 * most_threads);
    let levels = zstd::compression_level_range();
    if !levels.contains(&args.level) {
        return Err(Error::usage(format!(
            "--level {}: zstd accepts {} to {}",
            args.level,
            levels.start(),
            levels.end()
        )));
    }
    let (input, input_name) = match &args.input {
        Some(path) => (
            {
                let bad =
                    |e: std::io::Error| Error::usage(format!("--input {}: {e}", path.display()));
                let len = std::fs::metadata(path).map_err(bad)?.len();
                cli::check_fits_in_memory("--input", &path.display().to_string(), memory_for(len))?;
                std::fs::read(path).map_err(bad)?
            },
            path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
        ),
        None => {
            let size = args.size.unwrap_or(CITY_JSON_SIZE);
            cli::check_positive("--size", size)?;
            cli::check_fits_in_memory("--size", &size.to_string(), memory_for(size))?;
            (
                corpus::generate(size as usize, flags.seed),
                format!("generated-{size}"),
            )
        }
    };
    if input.is_empty() {
        return Err(Error::usage("--input: the file is empty"));
    }
    let input: Arc<Vec<u8>> = Arc::new(input);
    // The compression ratio of the input, a property of the data and the level, not a
    // measurement: reported once per benchmark.
    let frame = compress_whole(&input, args.level)?;
    let ratio = input.len() as f64 / frame.len() as f64;
    // Timed modes keep every thread busy across invocations, so an iteration lasts
    // --time whatever --jobs says; a single shot is exactly --jobs jobs.
    let keep_busy = matches!(
        flags.mode.unwrap_or(Mode::Throughput),
        Mode::Throughput | Mode::AverageTime
    );
    let mut benchmarks = Vec::new();
    for &t in &threads {
        for &op in &ops {
            let config = Config {
                op,
                threads: t,
                level: args.level,
                reuse_context: args.reuse_context,
                input: input.clone(),
                keep_busy,
            };
            // A single shot's length, for the plan: only the parent plans.
            let shot_estimate = match (keep_busy, fork::is_child()) {
                (false, false) => Some(job_time(&config, &frame)? * jobs.div_ceil(t as u64) as u32),
                _ => None,
            };
            let mut b = Benchmark::new(
                format!("bb.zstd.{}", op.name()),
                Box::new(move || Ok(Box::new(Pool::start(&config)?) as Box<dyn Workload>)),
            )
            .param("input", &input_name)
            .param("level", args.level)
            .param("context", if args.reuse_context { "thread" } else { "job" })
            .param("threads", t);
            b.threads = t;
            if !keep_busy {
                b.ops_per_invocation = Some(jobs);
                b.invocation_estimate = shot_estimate;
            }
            b.bytes_per_op = Some(2.0 * input.len() as f64);
            b.constants.push(Metric {
                name: "ratio".into(),
                unit: "x".into(),
                value: ratio,
            });
            benchmarks.push(b);
        }
    }
    let profiles = Profiles {
        quick: Settings::quick(),
        standard: Settings {
            warmup_iterations: 1,
            warmup_time: Duration::from_secs(1),
            iterations: 5,
            time: Duration::from_secs(1),
            forks: 2,
            ..Settings::full()
        },
        full: Settings::full(),
    };
    boardbench::run_suite(
        Suite {
            unit: TimeUnit::Millis,
            profiles,
            benchmarks,
            pin_process: true,
            notes: vec![],
            prepare: vec![],
        },
        &flags,
    )
}

/// Reads a positive number from an environment variable, as the original benchmark took
/// THREADS and GUESSES.
fn env_number(name: &str) -> Result<Option<u64>> {
    match std::env::var(name) {
        Err(_) => Ok(None),
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(Error::usage(format!(
                "environment variable {name}='{v}' is not a positive number"
            ))),
        },
    }
}

/// Threads per online CPU allowed without --oversubscribe.
const THREADS_PER_CPU: usize = 64;
/// Threads allowed at all.
const MAX_THREADS: usize = 1 << 16;

fn online_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
