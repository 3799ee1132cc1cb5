//! bb-seek: how do read patterns (whole sequential, forward seeks, backward seeks,
//! Parquet-like) perform on 1/4/16 MiB objects, through a seekable stream with read-ahead
//! against a plain ranged client, on local storage and over HTTP ranges? Single shots as
//! the original JMH benchmarks, every byte checked against the generated data.

use boardbench::cli::{self, HasCommon};
use boardbench::seek::client::{self, Plain, Reader, Stream, StreamConfig};
use boardbench::seek::data::{self, Object, Outcome};
use boardbench::seek::file::FileSource;
use boardbench::seek::http::{self, Url};
use boardbench::seek::pattern::{self, Read};
use boardbench::seek::source::{Counters, SourceSpec};
use boardbench::warnings::{warn, Warning};
use boardbench::{Benchmark, Error, Metric, Mode, Result, Settings, Suite, TimeUnit, Workload};
use std::path::PathBuf;

boardbench::bench_args! {
    /// Measure read patterns through a seekable stream against a plain client, on local
    /// files and over HTTP ranges. Generates its objects when they are missing.
    #[argh(
        example = "bb-seek --quick\nbb-seek --source file:/mnt/usb/data --cold --sizes 16m\nbb-seek gen --dest http://nas.local:8080/bench/ && bb-seek --source http://nas.local:8080/bench/"
    )]
    pub struct Args {
        /// object sizes, a list (default 1m,4m,16m: random-1mb.txt, random-4mb.txt, random-16mb.txt)
        #[argh(option, from_str_fn(boardbench::cli::parse_size_list))]
        pub sizes: Option<Vec<u64>>,
        /// patterns, a list of sequential, forward, backward, parquet (default all)
        #[argh(option, from_str_fn(parse_patterns))]
        pub pattern: Option<Vec<String>>,
        /// your own pattern instead: a file of offset,length lines (negative offsets count from the end)
        #[argh(option)]
        pub pattern_file: Option<PathBuf>,
        /// clients, a list of plain, stream (default both)
        #[argh(option, from_str_fn(parse_clients))]
        pub client: Option<Vec<String>>,
        /// read sizes of the sequential pattern, a list (default 4k,1m)
        #[argh(option, from_str_fn(boardbench::cli::parse_size_list))]
        pub read_size: Option<Vec<u64>>,
        /// where the objects are, a list of file:DIR and http://HOST:PORT/PREFIX/ (default file:./data)
        #[argh(option, from_str_fn(boardbench::seek::source::parse_source_list))]
        pub source: Option<Vec<SourceSpec>>,
        /// drop each object's cached pages before every shot (posix_fadvise DONTNEED), so reads come from the storage
        #[argh(switch)]
        pub cold: bool,
        /// stream: fetches are aligned to and cached in blocks of this size (default 64k)
        #[argh(option, from_str_fn(boardbench::cli::parse_size))]
        pub block_size: Option<u64>,
        /// stream: the block cache's bound (default 8m for HTTP, 256k for files)
        #[argh(option, from_str_fn(boardbench::cli::parse_size))]
        pub cache_size: Option<u64>,
        /// stream: the first read-ahead of a sequential run (default 128k for HTTP, 64k for files)
        #[argh(option, from_str_fn(boardbench::cli::parse_size))]
        pub readahead_min: Option<u64>,
        /// stream: the read-ahead doubles per sequential fetch up to this (default 4m for HTTP, 128k for files)
        #[argh(option, from_str_fn(boardbench::cli::parse_size))]
        pub readahead_max: Option<u64>,
        /// stream: a first read this close to the end fetches this much of the tail (default 64k, 0 = off)
        #[argh(option, from_str_fn(boardbench::cli::parse_size))]
        pub tail_prefetch: Option<u64>,
        /// stream: objects up to this size are fetched whole on the first read (default 256k, 0 = off)
        #[argh(option, from_str_fn(boardbench::cli::parse_size))]
        pub whole_object_max: Option<u64>,
        #[argh(subcommand)]
        pub command: Option<Command>,
    }
}

#[derive(argh::FromArgs, Debug)]
#[argh(subcommand)]
pub enum Command {
    Gen(GenArgs),
}

/// Write the objects (random-1mb.txt, ...) and a manifest of sizes and checksums to a
/// directory, keeping valid ones; or upload them to an HTTP server with PUT.
#[derive(argh::FromArgs, Debug)]
#[argh(
    subcommand,
    name = "gen",
    example = "bb-seek gen --dir ./data\nbb-seek gen --dest http://127.0.0.1:8080/bench/ --sizes 1m"
)]
pub struct GenArgs {
    /// the directory to write to (default ./data)
    #[argh(option)]
    pub dir: Option<PathBuf>,
    /// upload to this http://HOST:PORT/PREFIX/ with PUT instead, skipping objects already there with the right size
    #[argh(option)]
    pub dest: Option<String>,
    /// object sizes, a list (default 1m,4m,16m)
    #[argh(option, from_str_fn(boardbench::cli::parse_size_list))]
    pub sizes: Option<Vec<u64>>,
    /// seed of the objects' bytes (default: --seed before gen, 42)
    #[argh(option)]
    pub seed: Option<u64>,
}

const DEFAULT_SIZES: [u64; 3] = [1 << 20, 4 << 20, 16 << 20];
const DEFAULT_READ_SIZES: [u64; 2] = [4 << 10, 1 << 20];
const DEFAULT_DIR: &str = "./data";

fn parse_patterns(s: &str) -> std::result::Result<Vec<String>, String> {
    cli::parse_choices(s, &pattern::BUILT_IN)
}

fn parse_clients(s: &str) -> std::result::Result<Vec<String>, String> {
    cli::parse_choices(s, &client::CLIENTS)
}

fn main() {
    boardbench::main_with(|| {
        let args: Args = cli::parse_args();
        match &args.command {
            Some(Command::Gen(g)) => generate(g, args.seed),
            None => run(&args),
        }
    })
}

fn check_sizes(flag: &str, sizes: &[u64]) -> Result<()> {
    for &s in sizes {
        cli::check_positive(flag, s)?;
    }
    Ok(())
}

/// `bb-seek gen`: objects into a directory, or onto an HTTP server.
fn generate(g: &GenArgs, top_seed: u64) -> Result<()> {
    let seed = g.seed.unwrap_or(top_seed);
    let sizes = g.sizes.clone().unwrap_or(DEFAULT_SIZES.to_vec());
    check_sizes("--sizes", &sizes)?;
    let mut out = String::new();
    match (&g.dir, &g.dest) {
        (Some(_), Some(_)) => return Err(Error::usage("gen: give --dir or --dest, not both")),
        (_, Some(dest)) => {
            let url = Url::parse(dest).map_err(|e| Error::usage(format!("--dest: {e}")))?;
            let mut client = http::Client::new(&url);
            let mut entries = Vec::new();
            for &size in &sizes {
                let object = Object::new(size, seed);
                let bytes = object.bytes();
                let what = if client.size(&object.name)? == Some(size) {
                    "kept (already there with this size)"
                } else {
                    client.put(&object.name, &bytes)?;
                    "uploaded"
                };
                out.push_str(&format!(
                    "{}  {size} bytes  {what}\n",
                    url.object(&object.name)
                ));
                entries.push((object.name, size, data::checksum(&bytes)));
            }
            client.put(data::MANIFEST, data::manifest(seed, &entries).as_bytes())?;
            out.push_str(&format!("{}  manifest\n", url.object(data::MANIFEST)));
        }
        (dir, None) => {
            let dir = dir.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_DIR));
            for (object, outcome) in data::ensure_dir(&dir, &sizes, seed, true)? {
                let what = match outcome {
                    Outcome::Kept => "kept (valid)",
                    Outcome::Written => "written",
                };
                out.push_str(&format!(
                    "{}  {} bytes  {what}\n",
                    dir.join(&object.name).display(),
                    object.size
                ));
            }
            out.push_str(&format!(
                "{}  manifest\n",
                dir.join(data::MANIFEST).display()
            ));
        }
    }
    boardbench::report::print_stdout(&out)
}

/// One benchmark's fixed description, captured by its set-up.
#[derive(Clone)]
struct Case {
    source: SourceSpec,
    object: Object,
    reads: Vec<Read>,
    client: String,
    stream: StreamConfig,
    cold: bool,
}

fn run(args: &Args) -> Result<()> {
    let flags = args.common()?;
    let sizes = args.sizes.clone().unwrap_or(DEFAULT_SIZES.to_vec());
    check_sizes("--sizes", &sizes)?;
    let read_sizes = args
        .read_size
        .clone()
        .unwrap_or(DEFAULT_READ_SIZES.to_vec());
    check_sizes("--read-size", &read_sizes)?;
    let patterns = args
        .pattern
        .clone()
        .unwrap_or(pattern::BUILT_IN.map(String::from).to_vec());
    let clients = args
        .client
        .clone()
        .unwrap_or(client::CLIENTS.map(String::from).to_vec());
    let sources = args
        .source
        .clone()
        .unwrap_or_else(|| vec![SourceSpec::File(PathBuf::from(DEFAULT_DIR))]);
    // The stream's knobs: the flags given, over the defaults of the source's kind.
    let stream_config = |spec: &SourceSpec| -> Result<StreamConfig> {
        let defaults = match spec {
            SourceSpec::File(_) => StreamConfig::local(),
            SourceSpec::Http(_) => StreamConfig::default(),
        };
        let config = StreamConfig {
            block_size: args.block_size.unwrap_or(defaults.block_size),
            cache_size: args.cache_size.unwrap_or(defaults.cache_size),
            readahead_min: args.readahead_min.unwrap_or(defaults.readahead_min),
            readahead_max: args.readahead_max.unwrap_or(defaults.readahead_max),
            tail_prefetch: args.tail_prefetch.unwrap_or(defaults.tail_prefetch),
            whole_object_max: args.whole_object_max.unwrap_or(defaults.whole_object_max),
        };
        config.validate()?;
        Ok(config)
    };
    // Every flag is checked before any data is generated.
    let streams: Vec<StreamConfig> = sources.iter().map(stream_config).collect::<Result<_>>()?;
    let shots = |warmup_iterations, iterations| Settings {
        mode: Mode::SingleShot,
        warmup_iterations,
        iterations,
        forks: 1,
        ..Settings::full()
    };
    let settings = flags.profile.pick(shots(1, 5), shots(2, 10), shots(2, 15));
    if args.cold && flags.mode.is_some_and(|m| m != Mode::SingleShot) {
        return Err(Error::usage(
            "--cold drops the cache before each single shot: use it with --mode ss",
        ));
    }
    // A pattern of one's own, checked against every size before anything runs.
    let custom = match &args.pattern_file {
        Some(path) => Some((
            std::fs::read_to_string(path)
                .map_err(|e| Error::usage(format!("--pattern-file {}: {e}", path.display())))?,
            format!("--pattern-file {}", path.display()),
        )),
        None => None,
    };
    // Every size's reads, checked before anything is generated or run.
    let mut plans_by_size = Vec::new();
    for &size in &sizes {
        let mut plans: Vec<(String, Option<u64>, Vec<Read>)> = Vec::new();
        match &custom {
            Some((text, what)) => plans.push((
                "custom".into(),
                None,
                pattern::parse_file(text, size, what)?,
            )),
            None => {
                for p in &patterns {
                    if p == "sequential" {
                        for &rs in &read_sizes {
                            plans.push((p.clone(), Some(rs), pattern::built_in(p, size, rs)));
                        }
                    } else {
                        plans.push((p.clone(), None, pattern::built_in(p, size, 0)));
                    }
                }
            }
        }
        plans_by_size.push((Object::new(size, flags.seed), plans));
    }
    let parent = !boardbench::fork::is_child();
    let mut benchmarks = Vec::new();
    for (spec, stream) in sources.iter().zip(&streams) {
        if let (SourceSpec::File(dir), true, false) = (spec, parent, flags.dry_run) {
            prepare_dir(dir, &sizes, flags.seed, args.cold)?;
        }
        if let (SourceSpec::Http(url), true, true) = (spec, parent, args.cold) {
            warn(&Warning::Note(format!(
                "--cold: the page cache of the server behind {url} cannot be dropped from here; its reads are as warm as the server keeps them"
            )));
        }
        for (object, plans) in &plans_by_size {
            for (name, read_size, reads) in plans {
                for client in &clients {
                    let case = Case {
                        source: spec.clone(),
                        object: object.clone(),
                        reads: reads.clone(),
                        client: client.clone(),
                        stream: stream.clone(),
                        cold: args.cold,
                    };
                    let mut b = Benchmark::new(
                        format!("bb.seek.{name}"),
                        Box::new(move || Ok(Box::new(SeekOp::set_up(&case)?) as Box<dyn Workload>)),
                    )
                    .param("key", &object.name)
                    .param("client", client)
                    .param("source", spec.label())
                    .param("read-size", read_size.map_or("-".to_string(), size_label))
                    .param("cache", if args.cold { "cold" } else { "hot" });
                    b.bytes_per_op = Some(pattern::asked(reads) as f64);
                    benchmarks.push(b);
                }
            }
        }
    }
    boardbench::run_suite(
        Suite {
            unit: TimeUnit::Millis,
            defaults: settings,
            benchmarks,
            pin_process: true,
        },
        &flags,
    )?;
    Ok(())
}

/// Generates missing or wrong objects (the reviewers' "create the data if it does not
/// exist, then run"), and with `--cold` checks once that their pages can be dropped.
fn prepare_dir(dir: &std::path::Path, sizes: &[u64], seed: u64, cold: bool) -> Result<()> {
    for (object, outcome) in data::ensure_dir(dir, sizes, seed, false)? {
        if outcome == Outcome::Written {
            boardbench::stderr!(
                "{}: generated {} ({} bytes, seed {seed})",
                cli::program_name(),
                dir.join(&object.name).display(),
                object.size
            );
        }
    }
    if cold {
        let object = Object::new(sizes[0], seed);
        let path = dir.join(&object.name);
        match FileSource::open(&path, object.size).and_then(|f| f.drop_cache()) {
            Ok(cached) if cached > 0.1 => warn(&Warning::Note(format!(
                "--cold: {:.0}% of {}'s pages stay cached after posix_fadvise DONTNEED (tmpfs keeps files in memory): its reads are not cold",
                cached * 100.0,
                path.display()
            ))),
            Ok(_) => {}
            Err(e) => warn(&Warning::Note(format!(
                "--cold: could not drop the cache ({e}): reads are not cold"
            ))),
        }
    }
    Ok(())
}

/// `4k`, `1m`, or bytes.
fn size_label(size: u64) -> String {
    match size {
        s if s.is_multiple_of(1 << 20) => format!("{}m", s >> 20),
        s if s.is_multiple_of(1 << 10) => format!("{}k", s >> 10),
        s => s.to_string(),
    }
}

/// One operation: a fresh stream over the object reads the whole pattern into a buffer.
/// The buffer is checked against the generated bytes after the shot, outside the timing
/// (in timed modes, each operation but an invocation's last is checked inside it).
struct SeekOp {
    reader: Box<dyn Reader>,
    reads: Vec<Read>,
    object: Object,
    expected: Vec<u8>,
    received: Vec<u8>,
    unchecked: bool,
    cold: Option<FileSource>,
    metered: (Counters, u64),
}

impl SeekOp {
    fn set_up(case: &Case) -> Result<SeekOp> {
        let source = case.source.open(&case.object.name, case.object.size)?;
        let reader: Box<dyn Reader> = match case.client.as_str() {
            "plain" => Box::new(Plain::new(source)),
            _ => Box::new(Stream::new(source, case.stream.clone())),
        };
        let cold = match (&case.source, case.cold) {
            (SourceSpec::File(dir), true) => {
                let f = FileSource::open(&dir.join(&case.object.name), case.object.size)?;
                // Whether it worked was checked and reported once, by the parent.
                let _ = f.drop_cache();
                Some(f)
            }
            _ => None,
        };
        Ok(SeekOp {
            reader,
            reads: case.reads.clone(),
            object: case.object.clone(),
            expected: case.object.bytes(),
            received: vec![0; pattern::asked(&case.reads) as usize],
            unchecked: false,
            cold,
            metered: (Counters::default(), 0),
        })
    }

    fn check(&mut self) -> Result<()> {
        self.unchecked = false;
        let mut at = 0;
        for r in &self.reads {
            let (o, n) = (r.offset as usize, r.len as usize);
            let got = &self.received[at..at + n];
            let want = &self.expected[o..o + n];
            if got != want {
                let i = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
                return Err(Error::failed(format!(
                    "verification mismatch: byte {} of {} (in the read of {n} bytes at {o}) is 0x{:02x}, expected 0x{:02x}: \
                     the object is corrupt or was made with another --seed (rerun bb-seek gen)",
                    o + i,
                    self.object.name,
                    got[i],
                    want[i]
                )));
            }
            at += n;
        }
        Ok(())
    }
}

impl Workload for SeekOp {
    fn run(&mut self, ops: u64) -> Result<()> {
        for _ in 0..ops {
            if self.unchecked {
                self.check()?;
            }
            self.reader.start();
            let mut at = 0;
            for r in &self.reads {
                let n = r.len as usize;
                self.reader.read(r.offset, &mut self.received[at..at + n])?;
                at += n;
            }
            self.unchecked = true;
            self.metered.1 += 1;
        }
        Ok(())
    }

    fn after_iteration(&mut self) -> Result<()> {
        if self.unchecked {
            self.check()?;
        }
        if let Some(f) = &self.cold {
            f.drop_cache()?;
        }
        Ok(())
    }

    fn iteration_metrics(&mut self) -> Vec<Metric> {
        let now = self.reader.counters();
        let (before, ops) = std::mem::replace(&mut self.metered, (now, 0));
        let ops = ops.max(1) as f64;
        let requests = (now.requests - before.requests) as f64 / ops;
        let fetched = (now.bytes - before.bytes) as f64 / ops;
        let asked = pattern::asked(&self.reads) as f64;
        vec![
            Metric {
                name: "requests".into(),
                unit: "req/op".into(),
                value: requests,
            },
            Metric {
                name: "fetched".into(),
                unit: "KiB/op".into(),
                value: fetched / 1024.0,
            },
            Metric {
                name: "amplification".into(),
                unit: "x".into(),
                value: fetched / asked,
            },
        ]
    }
}
