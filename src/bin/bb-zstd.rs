//! bb-zstd: how fast is zstd streaming compression and decompression here, and how does
//! it scale with threads? A queue of jobs consumed by THREADS threads, each job a
//! streaming compress (write, flush, write, finish) or a streaming decompress (a frame
//! decoded twice), as zstd-ruby's multi-threaded streaming benchmarks do.

use boardbench::cli::{self, HasCommon};
use boardbench::{Benchmark, Error, Metric, Mode, Result, Settings, Suite, TimeUnit, Workload};
use crossbeam_channel::{bounded, unbounded, Receiver, Sender};
use std::sync::Arc;
use std::time::Duration;
use zstd::stream::raw::{Decoder, Encoder, InBuffer, Operation, OutBuffer};

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
        #[argh(option, from_str_fn(boardbench::cli::parse_usize_list))]
        pub threads: Option<Vec<usize>>,
        /// input file (default: a generated JSON corpus like city.json)
        #[argh(option)]
        pub input: Option<std::path::PathBuf>,
        /// size of the generated corpus (default 1779136 bytes, city.json's size)
        #[argh(option, from_str_fn(boardbench::cli::parse_size))]
        pub size: Option<u64>,
        /// zstd level, negative fast levels up to 22 (default 3)
        #[argh(option, default = "3")]
        pub level: i32,
        /// one encoder/decoder per thread, reset between jobs, instead of one per job
        #[argh(switch)]
        pub reuse_context: bool,
    }
}

const CITY_JSON_SIZE: u64 = 1_779_136;

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
    for &t in &threads {
        cli::check_positive("--threads", t as u64)?;
    }
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
            std::fs::read(path)
                .map_err(|e| Error::usage(format!("--input {}: {e}", path.display())))?,
            path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
        ),
        None => {
            let size = args.size.unwrap_or(CITY_JSON_SIZE);
            cli::check_positive("--size", size)?;
            (
                boardbench::corpus::generate(size as usize, flags.seed),
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
    let frame = zstd::bulk::compress(&input, args.level)
        .map_err(|e| Error::failed(format!("zstd compress: {e}")))?;
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
            let shot_estimate = match (keep_busy, boardbench::fork::is_child()) {
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
    let defaults = flags.profile.pick(
        Settings::quick(),
        Settings {
            warmup_iterations: 1,
            warmup_time: Duration::from_secs(1),
            iterations: 5,
            time: Duration::from_secs(1),
            forks: 2,
            ..Settings::full()
        },
        Settings::full(),
    );
    boardbench::run_suite(
        Suite {
            unit: TimeUnit::Millis,
            defaults,
            benchmarks,
            pin_process: true,
        },
        &flags,
    )?;
    Ok(())
}

/// How long one job takes here, the fastest of three run as the workers run them, for
/// the plan of single shots.
fn job_time(config: &Config, frame: &[u8]) -> Result<Duration> {
    let shared = Shared {
        config: config.clone(),
        job_frame: Vec::new(),
        input_frame: Vec::new(),
    };
    let mut worker = Worker::new(&shared);
    let mut fastest = Duration::MAX;
    for _ in 0..3 {
        let started = std::time::Instant::now();
        match config.op {
            Op::Compress => worker.compress(&config.input, config.level, false),
            Op::Decompress => worker.decompress(frame, config.input.len(), false),
        }
        .map_err(Error::failed)?;
        fastest = fastest.min(started.elapsed());
    }
    Ok(fastest)
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

fn online_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Compress,
    Decompress,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Compress => "compress",
            Op::Decompress => "decompress",
        }
    }
}

#[derive(Clone)]
struct Config {
    op: Op,
    threads: usize,
    level: i32,
    reuse_context: bool,
    input: Arc<Vec<u8>>,
    keep_busy: bool,
}

/// What every worker shares: the input, its reference frames, and the settings.
struct Shared {
    config: Config,
    /// The frame one compress job makes: input written twice around a flush.
    job_frame: Vec<u8>,
    /// The frame decompress jobs decode: the input compressed once.
    input_frame: Vec<u8>,
}

/// A worker's reusable state: its buffers, and its contexts with --reuse-context.
struct Worker {
    output: Vec<u8>,
    encoder: Option<Encoder<'static>>,
    decoder: Option<Decoder<'static>>,
}

fn io_err(what: &str) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("zstd {what}: {e}")
}

impl Worker {
    fn new(shared: &Shared) -> Worker {
        let capacity = match shared.config.op {
            Op::Compress => zstd::zstd_safe::compress_bound(2 * shared.config.input.len()) + 1024,
            // One spare byte: a frame that decodes to more than the input fills it.
            Op::Decompress => shared.config.input.len() + 1,
        };
        Worker {
            output: Vec::with_capacity(capacity),
            encoder: None,
            decoder: None,
        }
    }

    /// One compress job: a streaming encoder fed the input, flushed, fed again, finished.
    fn compress(
        &mut self,
        input: &[u8],
        level: i32,
        reuse: bool,
    ) -> std::result::Result<(), String> {
        let mut fresh;
        let encoder = if reuse {
            match &mut self.encoder {
                Some(e) => {
                    e.reinit().map_err(io_err("reset"))?;
                    e
                }
                slot => slot.insert(Encoder::new(level).map_err(io_err("encoder"))?),
            }
        } else {
            fresh = Encoder::new(level).map_err(io_err("encoder"))?;
            &mut fresh
        };
        self.output.clear();
        let mut out = OutBuffer::around(&mut self.output);
        for pass in 0..2 {
            let mut src = InBuffer::around(input);
            while src.pos() < input.len() {
                let before = (src.pos(), out.pos());
                encoder
                    .run(&mut src, &mut out)
                    .map_err(io_err("compress"))?;
                if (src.pos(), out.pos()) == before {
                    return Err("zstd compress made no progress (output buffer full)".into());
                }
            }
            loop {
                let remaining = if pass == 0 {
                    encoder.flush(&mut out)
                } else {
                    encoder.finish(&mut out, true)
                };
                if remaining.map_err(io_err("flush"))? == 0 {
                    break;
                }
                if out.pos() == out.capacity() {
                    return Err("zstd flush made no progress (output buffer full)".into());
                }
            }
        }
        Ok(())
    }

    /// Decodes `frame` with a streaming decoder; returns the decoded length. The output
    /// buffer is never grown: a frame that fills it is an error, not a realloc.
    fn decompress_once(
        decoder: &mut Decoder<'static>,
        frame: &[u8],
        output: &mut Vec<u8>,
    ) -> std::result::Result<usize, String> {
        decoder.reinit().map_err(io_err("reset"))?;
        output.clear();
        let mut out = OutBuffer::around(output);
        let mut src = InBuffer::around(frame);
        loop {
            let hint = decoder
                .run(&mut src, &mut out)
                .map_err(io_err("decompress"))?;
            if hint == 0 {
                return Ok(out.pos());
            }
            if out.pos() == out.capacity() {
                return Err(format!(
                    "decompressed output is longer than expected ({} bytes or more)",
                    out.capacity()
                ));
            }
            if src.pos() == frame.len() && hint > 0 && out.pos() < out.capacity() {
                return Err("the compressed frame is truncated".into());
            }
        }
    }

    /// One decompress job: the input's frame decoded twice.
    fn decompress(
        &mut self,
        frame: &[u8],
        expected: usize,
        reuse: bool,
    ) -> std::result::Result<(), String> {
        let mut fresh;
        let decoder = if reuse {
            match &mut self.decoder {
                Some(d) => d,
                slot => slot.insert(Decoder::new().map_err(io_err("decoder"))?),
            }
        } else {
            fresh = Decoder::new().map_err(io_err("decoder"))?;
            &mut fresh
        };
        for _ in 0..2 {
            let n = Worker::decompress_once(decoder, frame, &mut self.output)?;
            if n != expected {
                return Err(format!("decompressed {n} bytes, expected {expected}"));
            }
        }
        Ok(())
    }

    fn job(&mut self, shared: &Shared) -> std::result::Result<(), String> {
        let c = &shared.config;
        match c.op {
            Op::Compress => {
                self.compress(&c.input, c.level, c.reuse_context)?;
                if self.output != shared.job_frame {
                    // A frame unlike the reference: check it decodes to the input twice.
                    verify_job_frame(&self.output, &c.input)?;
                }
                Ok(())
            }
            Op::Decompress => self.decompress(&shared.input_frame, c.input.len(), c.reuse_context),
        }
    }
}

/// Checks that `frame` decodes to `input` twice over (length and hash).
fn verify_job_frame(frame: &[u8], input: &[u8]) -> std::result::Result<(), String> {
    let mut doubled = input.to_vec();
    doubled.extend_from_slice(input);
    verify_frame(frame, &doubled)
}

/// Checks that `frame` decodes to exactly `expected` (length and FNV-1a hash).
fn verify_frame(frame: &[u8], expected: &[u8]) -> std::result::Result<(), String> {
    let mut decoder = Decoder::new().map_err(io_err("decoder"))?;
    let mut output = Vec::with_capacity(expected.len() + 1);
    let n = Worker::decompress_once(&mut decoder, frame, &mut output)
        .map_err(|e| format!("verification: {e}"))?;
    let (got, want) = (
        boardbench::rng::fnv1a64(&output),
        boardbench::rng::fnv1a64(expected),
    );
    if n != expected.len() || got != want {
        return Err(format!(
            "verification mismatch: decoded {n} bytes with hash {got:016x}, expected {} bytes with hash {want:016x}",
            expected.len()
        ));
    }
    Ok(())
}

/// THREADS workers consuming jobs from a bounded channel. In timed modes the queue is
/// kept full across invocations (a job counts when it completes); otherwise each
/// invocation queues exactly its jobs and waits for them.
struct Pool {
    jobs: Option<Sender<()>>,
    done: Receiver<std::result::Result<(), String>>,
    workers: Vec<std::thread::JoinHandle<()>>,
    /// Jobs queued or running: at most `window`, so sending never blocks.
    in_flight: usize,
    window: usize,
    keep_busy: bool,
}

impl Pool {
    fn start(config: &Config) -> Result<Pool> {
        let input = &config.input;
        let input_frame = zstd::bulk::compress(input, config.level)
            .map_err(|e| Error::failed(format!("zstd compress: {e}")))?;
        verify_frame(&input_frame, input).map_err(Error::failed)?;
        // Compress jobs compare their frames with a verified reference frame.
        let job_frame = match config.op {
            Op::Compress => {
                let mut reference = Worker::new(&Shared {
                    config: config.clone(),
                    job_frame: vec![],
                    input_frame: vec![],
                });
                reference
                    .compress(input, config.level, false)
                    .map_err(Error::failed)?;
                verify_job_frame(&reference.output, input).map_err(Error::failed)?;
                reference.output
            }
            Op::Decompress => Vec::new(),
        };
        let shared = Arc::new(Shared {
            config: config.clone(),
            job_frame,
            input_frame,
        });
        let window = 2 * config.threads;
        let (jobs_tx, jobs_rx) = bounded::<()>(window);
        let (done_tx, done_rx) = unbounded();
        let workers = (0..config.threads)
            .map(|i| {
                let (shared, jobs_rx, done_tx) = (shared.clone(), jobs_rx.clone(), done_tx.clone());
                std::thread::Builder::new()
                    .name(format!("bb-zstd-{i}"))
                    .spawn(move || {
                        let mut worker = Worker::new(&shared);
                        while jobs_rx.recv().is_ok() {
                            if done_tx.send(worker.job(&shared)).is_err() {
                                return;
                            }
                        }
                    })
                    .map_err(|e| Error::failed(format!("starting worker thread {i}: {e}")))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Pool {
            jobs: Some(jobs_tx),
            done: done_rx,
            workers,
            in_flight: 0,
            window,
            keep_busy: config.keep_busy,
        })
    }

    /// Waits for one job to complete.
    fn complete_one(&mut self) -> Result<()> {
        let result = self
            .done
            .recv()
            .map_err(|_| Error::failed("a zstd worker thread died"))?;
        self.in_flight -= 1;
        result.map_err(Error::failed)
    }
}

impl Workload for Pool {
    fn run(&mut self, ops: u64) -> Result<()> {
        let jobs = self.jobs.clone().expect("pool is running");
        let mut sent = 0u64;
        for _ in 0..ops {
            while self.in_flight < self.window && (self.keep_busy || sent < ops) {
                jobs.send(())
                    .map_err(|_| Error::failed("a zstd worker thread died"))?;
                self.in_flight += 1;
                sent += 1;
            }
            self.complete_one()?;
        }
        Ok(())
    }

    /// The jobs still queued at the end complete and are checked, untimed.
    fn finish(&mut self) -> Result<()> {
        while self.in_flight > 0 {
            self.complete_one()?;
        }
        Ok(())
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(op: Op, reuse_context: bool) -> Config {
        Config {
            op,
            threads: 1,
            level: 3,
            reuse_context,
            input: Arc::new(boardbench::corpus::generate(50_000, 1)),
            keep_busy: false,
        }
    }

    #[test]
    fn compress_job_frame_holds_the_input_twice() {
        for reuse in [false, true] {
            let c = config(Op::Compress, reuse);
            let shared = Shared {
                config: c.clone(),
                job_frame: vec![],
                input_frame: vec![],
            };
            let mut w = Worker::new(&shared);
            w.compress(&c.input, 3, reuse).unwrap();
            let first = w.output.clone();
            verify_job_frame(&first, &c.input).unwrap();
            w.compress(&c.input, 3, reuse).unwrap();
            assert_eq!(w.output, first, "a reset context makes the same frame");
        }
    }

    #[test]
    fn verification_catches_wrong_and_truncated_frames() {
        let input = boardbench::corpus::generate(50_000, 1);
        let mut other = input.clone();
        other[100] ^= 1;
        let err = verify_frame(&zstd::bulk::compress(&other, 3).unwrap(), &input).unwrap_err();
        assert!(err.contains("verification mismatch"), "{err}");
        let longer = [&input[..], b"x"].concat();
        let err = verify_frame(&zstd::bulk::compress(&longer, 3).unwrap(), &input).unwrap_err();
        assert!(
            err.contains("longer than expected")
                || err.contains(&format!("decoded {} bytes", longer.len())),
            "{err}"
        );
        let good = zstd::bulk::compress(&input, 3).unwrap();
        verify_frame(&good, &input).unwrap();
        let err = verify_frame(&good[..good.len() / 2], &input).unwrap_err();
        assert!(
            err.contains("truncated") || err.contains("mismatch"),
            "{err}"
        );
        assert!(verify_frame(b"not a zstd frame", &input).is_err());
    }

    #[test]
    fn decompress_job_checks_length() {
        let c = config(Op::Decompress, false);
        let frame = zstd::bulk::compress(&c.input, 3).unwrap();
        let shared = Shared {
            config: c.clone(),
            job_frame: vec![],
            input_frame: frame.clone(),
        };
        let mut w = Worker::new(&shared);
        w.job(&shared).unwrap();
        assert_eq!(w.output, *c.input);
        let err = w.decompress(&frame, c.input.len() + 1, false).unwrap_err();
        assert!(err.contains("expected"), "{err}");
    }
}
