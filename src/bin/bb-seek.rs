//! bb-seek: how do read patterns (whole sequential, forward seeks, backward seeks,
//! Parquet-like) perform on objects of any size (1/4/16 MiB by default), through a
//! seekable stream with read-ahead against a plain ranged client, on local storage and
//! over HTTP ranges? Single shots as the original JMH benchmarks, the bytes read checked
//! against the generated data, in memory bounded by the cache, not by the object.

use boardbench::harness::cli::{self, HasCommon};
use boardbench::harness::fork;
use boardbench::report::print_stdout;
use boardbench::s3::{Addressing, Location};
use boardbench::seek::client::{self, StreamConfig};
use boardbench::seek::data::Object;
use boardbench::seek::gen;
use boardbench::seek::http::DEFAULT_REQUEST_TIMEOUT;
use boardbench::seek::pattern::{self, Read, Reads};
use boardbench::seek::s3;
use boardbench::seek::spec::{S3Place, SourceSpec};
use boardbench::net::tls;
use boardbench::seek::workload::{self, Case, SeekOp};
use boardbench::{Benchmark, Error, Mode, Profiles, Result, Settings, Suite, TimeUnit, Workload};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

boardbench::bench_args! {
    /// Measure read patterns through a seekable stream against a plain client, on local
    /// files and over HTTP ranges. Generates its objects when they are missing.
    #[argh(
        example = "bb-seek --quick\nbb-seek --source file:/mnt/usb/data --cold --sizes 16m\nbb-seek gen --dest http://nas.local:8080/bench/ && bb-seek --source http://nas.local:8080/bench/"
    )]
    pub struct Args {
        /// object sizes, a list, any size (default 1m,4m,16m: random-1mb.txt, random-4mb.txt, random-16mb.txt; 1g is random-1gb.txt)
        #[argh(option, from_str_fn(boardbench::harness::cli::parse_size_list))]
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
        #[argh(option, from_str_fn(boardbench::harness::cli::parse_size_list))]
        pub read_size: Option<Vec<u64>>,
        /// where the objects are, a list of file:DIR, http(s)://HOST:PORT/PREFIX/ and s3://BUCKET/PREFIX/ (default s3://$BUCKET/$PREFIX when BUCKET is set, else file:./data)
        #[argh(option, from_str_fn(boardbench::seek::spec::parse_source_list))]
        pub source: Option<Vec<SourceSpec>>,
        /// drop each object's cached pages before every shot (posix_fadvise DONTNEED), so reads come from the storage
        #[argh(switch)]
        pub cold: bool,
        /// stream: fetches are aligned to and cached in blocks of this size (default 64k)
        #[argh(option, from_str_fn(boardbench::harness::cli::parse_size))]
        pub block_size: Option<u64>,
        /// stream: the block cache's bound (default 8m for HTTP, 256k for files)
        #[argh(option, from_str_fn(boardbench::harness::cli::parse_size))]
        pub cache_size: Option<u64>,
        /// stream: the first read-ahead of a sequential run (default 128k for HTTP, 64k for files)
        #[argh(option, from_str_fn(boardbench::harness::cli::parse_size))]
        pub readahead_min: Option<u64>,
        /// stream: the read-ahead doubles per sequential fetch up to this (default 4m for HTTP, 128k for files)
        #[argh(option, from_str_fn(boardbench::harness::cli::parse_size))]
        pub readahead_max: Option<u64>,
        /// stream: a first read this close to the end fetches this much of the tail (default 64k, 0 = off)
        #[argh(option, from_str_fn(boardbench::harness::cli::parse_size))]
        pub tail_prefetch: Option<u64>,
        /// stream: objects up to this size are fetched whole on the first read (default 256k, 0 = off)
        #[argh(option, from_str_fn(boardbench::harness::cli::parse_size))]
        pub whole_object_max: Option<u64>,
        /// HTTP: how long one request may take, connect, answer, body and one retry on a fresh connection together (default 30s; uploads a second more per MiB)
        #[argh(option, from_str_fn(boardbench::harness::cli::parse_duration))]
        pub request_timeout: Option<Duration>,
        /// S3: send requests unsigned, for public buckets
        #[argh(switch)]
        pub no_sign: bool,
        /// S3: address the bucket as virtual (BUCKET.HOST/KEY), path (HOST/BUCKET/KEY) or auto (default: the AWS config's addressing_style, else virtual on AWS, path elsewhere)
        #[argh(option, from_str_fn(parse_addressing))]
        pub addressing: Option<Option<Addressing>>,
        /// HTTPS: trust only the certificate authorities of this PEM file (a private CA), instead of the system's (as curl's --cacert)
        #[argh(option)]
        pub ca_file: Option<PathBuf>,
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
/// directory, keeping valid ones; or upload them to an HTTP server with PUT, or to an S3
/// bucket (made when missing; large objects in parts).
#[derive(argh::FromArgs, Debug)]
#[argh(
    subcommand,
    name = "gen",
    example = "bb-seek gen --dir ./data\nbb-seek gen --dest http://127.0.0.1:8080/bench/ --sizes 1m\nbb-seek gen --dest s3://my-bucket/bench/ --sizes 1m,4m,16m,1g"
)]
pub struct GenArgs {
    /// the directory to write to (default ./data)
    #[argh(option)]
    pub dir: Option<PathBuf>,
    /// upload to this http(s)://HOST:PORT/PREFIX/ or s3://BUCKET/PREFIX/ instead, skipping objects already there with the right size
    #[argh(option)]
    pub dest: Option<String>,
    /// S3: objects larger than this are uploaded in parts (default 64m)
    #[argh(option, from_str_fn(boardbench::harness::cli::parse_size))]
    pub multipart_threshold: Option<u64>,
    /// S3: the size of each part of a multipart upload, 5m to 5g (default 8m)
    #[argh(option, from_str_fn(boardbench::harness::cli::parse_size))]
    pub part_size: Option<u64>,
    /// object sizes, a list (default 1m,4m,16m)
    #[argh(option, from_str_fn(boardbench::harness::cli::parse_size_list))]
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

fn parse_addressing(s: &str) -> std::result::Result<Option<Addressing>, String> {
    Addressing::parse(s)
}

fn parse_clients(s: &str) -> std::result::Result<Vec<String>, String> {
    cli::parse_choices(s, &client::CLIENTS)
}

fn main() {
    boardbench::main_with(|| {
        let args: Args = cli::parse_args();
        tls::configure(args.ca_file.as_deref())?;
        match &args.command {
            Some(Command::Gen(g)) => generate(g, &args, request_timeout(&args)?),
            None => run(&args),
        }
    })
}

/// Every size at least a byte. Any size fits in memory: objects are generated, read and
/// checked in bounded pieces (a local directory's room is checked where it is known).
fn check_sizes(flag: &str, sizes: &[u64]) -> Result<()> {
    sizes.iter().try_for_each(|&s| cli::check_positive(flag, s))
}

/// `--request-timeout`, at least a millisecond.
fn request_timeout(args: &Args) -> Result<Duration> {
    let timeout = args.request_timeout.unwrap_or(DEFAULT_REQUEST_TIMEOUT);
    if timeout < Duration::from_millis(1) {
        return Err(Error::usage("--request-timeout must be at least 1ms"));
    }
    Ok(timeout)
}

/// A pattern file's size at most: a million reads take about 20 MiB of text.
const PATTERN_FILE_MAX: u64 = 64 << 20;
/// A shot may ask for this many times its object's size at most: more is a mistake (a
/// shot of hours), refused before anything runs.
const ASKED_PER_SIZE_MAX: u64 = 16;

/// Refuses a pattern whose reads ask for more than [`ASKED_PER_SIZE_MAX`] times the
/// object; `what` names the flag and its value.
fn check_pattern(what: &str, size: u64, reads: &[Read]) -> Result<()> {
    let asked = pattern::asked(reads);
    let max = size.saturating_mul(ASKED_PER_SIZE_MAX);
    if asked > max {
        return Err(Error::usage(format!(
            "{what}: the reads ask for {asked} bytes per shot, more than {ASKED_PER_SIZE_MAX} times the {size}-byte object ({max} bytes at most)"
        )));
    }
    Ok(())
}

/// `bb-seek gen`: objects into a directory, onto an HTTP server, or into an S3 bucket.
fn generate(g: &GenArgs, args: &Args, timeout: Duration) -> Result<()> {
    let seed = g.seed.unwrap_or(args.seed);
    let sizes = g.sizes.clone().unwrap_or(DEFAULT_SIZES.to_vec());
    check_sizes("--sizes", &sizes)?;
    let parts = gen::Parts {
        threshold: g
            .multipart_threshold
            .unwrap_or(s3::DEFAULT_MULTIPART_THRESHOLD),
        part_size: g.part_size.unwrap_or(s3::DEFAULT_PART_SIZE),
    };
    let out = match (&g.dir, &g.dest) {
        (Some(_), Some(_)) => return Err(Error::usage("gen: give --dir or --dest, not both")),
        (_, Some(dest)) => {
            let spec = SourceSpec::parse(dest).map_err(|e| Error::usage(format!("--dest: {e}")))?;
            if let SourceSpec::S3(_) = spec {
                check_parts(&parts, &sizes)?;
            }
            let spec = spec.resolve(args.no_sign, args.addressing.flatten())?;
            match &spec {
                SourceSpec::Http(_) => gen::upload(&spec, &sizes, seed, timeout, None)?,
                SourceSpec::S3(S3Place {
                    objects: Some(objects),
                    ..
                }) => {
                    say_where(objects);
                    if s3::ensure_bucket(objects, timeout)? {
                        boardbench::stderr!("bb-seek: made the bucket {}", objects.location.bucket);
                    }
                    gen::upload(&spec, &sizes, seed, timeout, Some(parts))?
                }
                _ => {
                    return Err(Error::usage(format!(
                    "--dest: '{dest}' is not an http:// or s3:// place (use --dir for a directory)"
                )))
                }
            }
        }
        (dir, None) => {
            let dir = dir.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_DIR));
            gen::check_room("--sizes", &dir, &sizes, seed)?;
            gen::write_dir(&dir, &sizes, seed)?
        }
    };
    print_stdout(&out)
}

/// The part size within S3's limits, and few enough parts for every size.
fn check_parts(parts: &gen::Parts, sizes: &[u64]) -> Result<()> {
    let p = parts.part_size;
    if !(s3::MIN_PART_SIZE..=s3::MAX_PART_SIZE).contains(&p) {
        return Err(Error::usage(format!(
            "--part-size {p}: S3 takes parts of 5m to 5g (every part but the last)"
        )));
    }
    cli::check_positive("--multipart-threshold", parts.threshold)?;
    if let Some(&size) = sizes
        .iter()
        .find(|&&s| s > parts.threshold && s.div_ceil(p) > s3::MAX_PARTS)
    {
        return Err(Error::usage(format!(
            "--part-size {p}: a {size}-byte object would take more than {} parts; use parts of at least {} bytes",
            s3::MAX_PARTS,
            size.div_ceil(s3::MAX_PARTS)
        )));
    }
    Ok(())
}

/// The header line of an S3 place: where, how, and whose credentials (never the secret).
fn say_where(objects: &s3::S3Objects) {
    if !fork::is_child() {
        boardbench::stderr!("bb-seek: {}", objects.describe_settings());
    }
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
    let request_timeout = request_timeout(args)?;
    let patterns = args
        .pattern
        .clone()
        .unwrap_or(pattern::BUILT_IN.map(String::from).to_vec());
    let clients = args
        .client
        .clone()
        .unwrap_or(client::CLIENTS.map(String::from).to_vec());
    // As the original: BUCKET (and PREFIX) name an S3 place when --source does not.
    let from_env = Location::from_env(&|name| std::env::var(name).ok())
        .transpose()
        .map_err(Error::usage)?;
    let sources = match (&args.source, from_env) {
        (Some(sources), _) => sources.clone(),
        (None, Some(location)) => vec![SourceSpec::s3(location)],
        (None, None) => vec![SourceSpec::File(PathBuf::from(DEFAULT_DIR))],
    };
    let sources = sources
        .into_iter()
        .map(|s| s.resolve(args.no_sign, args.addressing.flatten()))
        .collect::<Result<Vec<_>>>()?;
    for spec in &sources {
        if let SourceSpec::S3(S3Place {
            objects: Some(objects),
            ..
        }) = spec
        {
            say_where(objects);
        }
    }
    if !fork::is_child() && !flags.dry_run {
        for spec in &sources {
            if let SourceSpec::File(dir) = spec {
                gen::check_room("--sizes", dir, &sizes, flags.seed)?;
            }
        }
    }
    // The stream's knobs: the flags given, over the defaults of the source's kind.
    let stream_config = |spec: &SourceSpec| -> Result<StreamConfig> {
        let defaults = match spec.is_remote() {
            false => StreamConfig::local(),
            true => StreamConfig::default(),
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
    let profiles = Profiles {
        quick: shots(1, 5),
        standard: shots(2, 10),
        full: shots(2, 15),
    };
    if args.cold && flags.mode.is_some_and(|m| m != Mode::SingleShot) {
        return Err(Error::usage(
            "--cold drops the cache before each single shot: use it with --mode ss",
        ));
    }
    // A pattern of one's own, checked against every size before anything runs.
    let custom = match &args.pattern_file {
        Some(path) => {
            let what = format!("--pattern-file {}", path.display());
            let len = std::fs::metadata(path)
                .map_err(|e| Error::usage(format!("{what}: {e}")))?
                .len();
            cli::check_at_most(&what, len, PATTERN_FILE_MAX, "bytes of reads")?;
            let text =
                std::fs::read_to_string(path).map_err(|e| Error::usage(format!("{what}: {e}")))?;
            Some((text, what))
        }
        None => None,
    };
    // Every size's reads, checked before anything is generated or run.
    let mut plans_by_size = Vec::new();
    for &size in &sizes {
        let mut plans: Vec<(String, Option<u64>, Arc<Reads>)> = Vec::new();
        match &custom {
            Some((text, what)) => {
                let reads = pattern::parse_file(text, size, what)?;
                check_pattern(what, size, &reads)?;
                plans.push(("custom".into(), None, Arc::new(Reads::List(reads))));
            }
            None => {
                for p in &patterns {
                    if p == "sequential" {
                        for &rs in &read_sizes {
                            let reads = Reads::built_in(p, size, rs);
                            plans.push((p.clone(), Some(rs), Arc::new(reads)));
                        }
                    } else {
                        let reads = Reads::built_in(p, size, 0);
                        plans.push((p.clone(), None, Arc::new(reads)));
                    }
                }
            }
        }
        plans_by_size.push((Object::new(size, flags.seed), plans));
    }
    let parent = !fork::is_child();
    let mut benchmarks = Vec::new();
    for (spec, stream) in sources.iter().zip(&streams) {
        if let (SourceSpec::File(dir), true, false) = (spec, parent, flags.dry_run) {
            gen::prepare_dir(dir, &sizes, flags.seed, args.cold)?;
        }
        if spec.is_remote() && parent && args.cold {
            gen::warn_remote_cold(&spec.label());
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
                        request_timeout,
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
                    b.bytes_per_op = Some(reads.asked() as f64);
                    b.invocation_estimate = Some(workload::shot_estimate(spec, reads));
                    benchmarks.push(b);
                }
            }
        }
    }
    boardbench::run_suite(Suite::new(TimeUnit::Millis, profiles, benchmarks), &flags)
}

/// `4k`, `1m`, `1g`, or bytes.
fn size_label(size: u64) -> String {
    match size {
        s if s.is_multiple_of(1 << 30) => format!("{}g", s >> 30),
        s if s.is_multiple_of(1 << 20) => format!("{}m", s >> 20),
        s if s.is_multiple_of(1 << 10) => format!("{}k", s >> 10),
        s => s.to_string(),
    }
}
