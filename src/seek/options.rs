//! bb-seek's flags and environment checked, before anything is generated or run: a run's
//! ([`Options`]: sizes, sources and their streams, every size's reads) and `gen`'s
//! ([`GenOptions`]). A bad value is a usage error (exit 2) that names its flag.

use super::args::{Args, GenArgs};
use super::client::{self, StreamConfig};
use super::data::Object;
use super::existing::{self, Existing};
use super::http::DEFAULT_REQUEST_TIMEOUT;
use super::pattern::{self, Read, Reads};
use super::s3::{self, Parts};
use super::spec::{self, ObjectSpec, SourceSpec};
use crate::harness::cli::{self, CommonArgs, HasCommon, Mode};
use crate::s3::Location;
use crate::util::error::{Error, Result};
use crate::util::format::printable;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

const DEFAULT_SIZES: [u64; 3] = [1 << 20, 4 << 20, 16 << 20];
const DEFAULT_READ_SIZES: [u64; 2] = [4 << 10, 1 << 20];
const DEFAULT_DIR: &str = "./data";
/// A pattern file's size at most: a million reads take about 20 MiB of text.
const PATTERN_FILE_MAX: u64 = 64 << 20;
/// A shot may ask for this many times its object's size at most: more is a mistake (a
/// shot of hours), refused before anything runs.
const ASKED_PER_SIZE_MAX: u64 = 16;

/// An environment variable's value, or None: [`std::env::var`] in a run, a table in a test.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// A run, checked.
pub struct Options {
    pub flags: CommonArgs,
    /// The object sizes, in order.
    pub sizes: Vec<u64>,
    /// `plain`, `stream`, or both.
    pub clients: Vec<String>,
    /// Every source, resolved (S3's settings read), with its stream's knobs.
    pub sources: Vec<(SourceSpec, StreamConfig)>,
    pub cold: bool,
    pub request_timeout: Duration,
    /// Each size's object and the patterns read from it.
    pub objects: Vec<(Object, Vec<Plan>)>,
    /// `--object`'s objects, each at its own place (then `sizes`, `sources` and
    /// `objects` are empty), and the patterns read from each.
    pub existing: Vec<(Existing, Vec<Plan>)>,
}

/// One pattern over one object.
#[derive(Clone)]
pub struct Plan {
    /// The pattern's name: a built-in one, or `custom` for `--pattern-file`.
    pub name: String,
    /// The sequential pattern's read size.
    pub read_size: Option<u64>,
    /// Shared by the benchmarks of every client and source.
    pub reads: Arc<Reads>,
}

impl Options {
    pub fn from_args(args: &Args) -> Result<Options> {
        Options::from_args_with(args, &|name| std::env::var(name).ok())
    }

    /// [`Options::from_args`], with `env` for environment variables (`BUCKET`, `PREFIX`
    /// and S3's settings).
    pub fn from_args_with(args: &Args, env: Env) -> Result<Options> {
        let flags = args.common()?;
        if args.object.is_some() && (args.sizes.is_some() || args.source.is_some()) {
            return Err(Error::usage(
                "--object names the objects to read, each where it is: give it without --sizes and --source",
            ));
        }
        let sizes = match &args.object {
            Some(_) => Vec::new(),
            None => args.sizes.clone().unwrap_or(DEFAULT_SIZES.to_vec()),
        };
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
        let sources = match &args.object {
            Some(_) => Vec::new(),
            None => sources(args, env)?,
        };
        let sources = sources
            .into_iter()
            .map(|spec| {
                let stream = stream_config(args, &spec)?;
                Ok((spec, stream))
            })
            .collect::<Result<Vec<_>>>()?;
        if args.cold && flags.mode.is_some_and(|m| m != Mode::SingleShot) {
            return Err(Error::usage(
                "--cold drops the cache before each single shot: use it with --mode ss",
            ));
        }
        let custom = custom_pattern(args)?;
        let objects = sizes
            .iter()
            .map(|&size| {
                let what = format!("--sizes {}", size_text(size));
                let plans = plans(&what, size, custom.as_ref(), &patterns, &read_sizes)?;
                Ok((Object::new(size, flags.seed), plans))
            })
            .collect::<Result<Vec<_>>>()?;
        let existing = match &args.object {
            Some(objects) => existing_objects(args, env, objects, request_timeout)?
                .into_iter()
                .map(|e| {
                    let what = format!("--object {}", printable(&e.spec.label));
                    let size = e.object.size;
                    let plans = plans(&what, size, custom.as_ref(), &patterns, &read_sizes)?;
                    Ok((e, plans))
                })
                .collect::<Result<Vec<_>>>()?,
            None => Vec::new(),
        };
        Ok(Options {
            flags,
            sizes,
            clients,
            sources,
            cold: args.cold,
            request_timeout,
            objects,
            existing,
        })
    }

    /// The directories of the local sources.
    pub fn dirs(&self) -> impl Iterator<Item = &PathBuf> {
        self.sources.iter().filter_map(|(spec, _)| match spec {
            SourceSpec::File(dir) => Some(dir),
            _ => None,
        })
    }
}

/// `--object`'s objects: each named once, its place resolved (S3's settings read once for
/// all), its stream's knobs checked, then what its place says of it (its size; a HEAD for
/// a remote one).
fn existing_objects(
    args: &Args,
    env: Env,
    objects: &[ObjectSpec],
    timeout: Duration,
) -> Result<Vec<Existing>> {
    for (i, o) in objects.iter().enumerate() {
        if objects[..i].iter().any(|p| p.label == o.label) {
            return Err(Error::usage(format!(
                "--object: {} is named twice",
                crate::util::format::printable(&o.label)
            )));
        }
    }
    let places = spec::resolve_all(
        objects.iter().map(|o| o.place.clone()).collect(),
        env,
        args.no_sign,
        args.addressing.flatten(),
    )?;
    let specs: Vec<(ObjectSpec, StreamConfig)> = objects
        .iter()
        .zip(places)
        .map(|(o, place)| {
            let stream = stream_config(args, &place)?;
            Ok((ObjectSpec { place, ..o.clone() }, stream))
        })
        .collect::<Result<_>>()?;
    specs
        .into_iter()
        .map(|(spec, stream)| {
            let stat = existing::stat(&spec, timeout)?;
            Ok(Existing {
                object: Object::existing(&spec.name, stat.size),
                spec,
                stream,
                stat,
            })
        })
        .collect()
}

/// `--source`, else, as the original, the S3 place that `BUCKET` (and `PREFIX`) name,
/// else `./data`; each with what it takes to reach it.
fn sources(args: &Args, env: Env) -> Result<Vec<SourceSpec>> {
    let from_env = Location::from_env(env).transpose().map_err(Error::usage)?;
    let sources = match (&args.source, from_env) {
        (Some(sources), _) => sources.clone(),
        (None, Some(location)) => vec![SourceSpec::s3(location)],
        (None, None) => vec![SourceSpec::File(PathBuf::from(DEFAULT_DIR))],
    };
    spec::resolve_all(sources, env, args.no_sign, args.addressing.flatten())
}

/// The stream's knobs: the flags given, over the defaults of the source's kind.
fn stream_config(args: &Args, spec: &SourceSpec) -> Result<StreamConfig> {
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
}

/// `--pattern-file`'s text and the flag with its value, for messages.
fn custom_pattern(args: &Args) -> Result<Option<(String, String)>> {
    let Some(path) = &args.pattern_file else {
        return Ok(None);
    };
    let what = format!("--pattern-file {}", path.display());
    let len = std::fs::metadata(path)
        .map_err(|e| Error::usage(format!("{what}: {e}")))?
        .len();
    cli::check_at_most(&what, len, PATTERN_FILE_MAX, "bytes of reads")?;
    let text = std::fs::read_to_string(path).map_err(|e| Error::usage(format!("{what}: {e}")))?;
    Ok(Some((text, what)))
}

/// The patterns over an object of `size` (`object` names it: `--sizes 5`, `--object
/// PATH`): the custom one alone, or each built-in one (the sequential one once per read
/// size), every one of them reading something from it.
fn plans(
    object: &str,
    size: u64,
    custom: Option<&(String, String)>,
    patterns: &[String],
    read_sizes: &[u64],
) -> Result<Vec<Plan>> {
    let plan = |name: &str, read_size, reads| Plan {
        name: name.to_string(),
        read_size,
        reads: Arc::new(reads),
    };
    if let Some((text, what)) = custom {
        let reads = pattern::parse_file(text, size, what)?;
        check_pattern(what, size, &reads)?;
        return Ok(vec![plan("custom", None, Reads::List(reads))]);
    }
    check_small(object, size, patterns)?;
    let mut plans = Vec::new();
    for p in patterns {
        if p == "sequential" {
            for &rs in read_sizes {
                plans.push(plan(p, Some(rs), Reads::built_in(p, size, rs)));
            }
        } else {
            plans.push(plan(p, None, Reads::built_in(p, size, 0)));
        }
    }
    Ok(plans)
}

/// Refuses an object too small for a pattern asked for (`forward` and `backward` read
/// tenths of it: under 10 bytes their reads are empty, and a shot would read nothing),
/// naming the object, the size they need and the patterns that would read it.
fn check_small(object: &str, size: u64, patterns: &[String]) -> Result<()> {
    let (small, fit): (Vec<&String>, Vec<&String>) =
        patterns.iter().partition(|p| size < pattern::min_size(p));
    let Some(need) = small.iter().map(|p| pattern::min_size(p)).max() else {
        return Ok(());
    };
    let names: Vec<&str> = small.iter().map(|p| p.as_str()).collect();
    let instead = match fit.is_empty() {
        true => "sequential,parquet".to_string(),
        false => fit.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(","),
    };
    Err(Error::usage(format!(
        "{object}: {}, too small for {}, which {} tenths of the object: {} {need} bytes or more \
         (or read it with --pattern {instead})",
        crate::util::format::count(size, "byte"),
        names.join(" and "),
        match names.len() {
            1 => "reads",
            _ => "read",
        },
        match names.len() {
            1 => "it needs",
            _ => "they need",
        },
    )))
}

/// A size as `--sizes` takes it: `4k`, `1m`, or bytes.
fn size_text(size: u64) -> String {
    match size {
        s if s >= 1 << 10 && s.is_multiple_of(1 << 20) => format!("{}m", s >> 20),
        s if s >= 1 << 10 && s.is_multiple_of(1 << 10) => format!("{}k", s >> 10),
        s => s.to_string(),
    }
}

/// `bb-seek gen`, checked.
pub struct GenOptions {
    pub dest: Dest,
    pub sizes: Vec<u64>,
    pub seed: u64,
    /// How long one request may take.
    pub timeout: Duration,
}

/// Where `gen` puts the objects.
pub enum Dest {
    Dir(PathBuf),
    /// An HTTP server or an S3 bucket (resolved), and for S3 when uploads go in parts.
    Upload {
        spec: SourceSpec,
        parts: Option<Parts>,
    },
}

impl GenOptions {
    /// `gen`'s flags, and those before it that it takes (`--request-timeout`, `--seed`,
    /// `--no-sign`, `--addressing`).
    pub fn from_args(gen: &GenArgs, args: &Args) -> Result<GenOptions> {
        GenOptions::from_args_with(gen, args, &|name| std::env::var(name).ok())
    }

    /// [`GenOptions::from_args`], with `env` for environment variables (S3's settings).
    pub fn from_args_with(gen: &GenArgs, args: &Args, env: Env) -> Result<GenOptions> {
        if args.object.is_some() {
            return Err(Error::usage(
                "--object names existing objects for a run to read: gen makes bb-seek's own",
            ));
        }
        let timeout = request_timeout(args)?;
        let seed = gen.seed.unwrap_or(args.seed);
        let sizes = gen.sizes.clone().unwrap_or(DEFAULT_SIZES.to_vec());
        check_sizes("--sizes", &sizes)?;
        let parts = Parts {
            threshold: gen
                .multipart_threshold
                .unwrap_or(s3::DEFAULT_MULTIPART_THRESHOLD),
            part_size: gen.part_size.unwrap_or(s3::DEFAULT_PART_SIZE),
        };
        let dest = match (&gen.dir, &gen.dest) {
            (Some(_), Some(_)) => return Err(Error::usage("gen: give --dir or --dest, not both")),
            (_, Some(dest)) => {
                let spec =
                    SourceSpec::parse(dest).map_err(|e| Error::usage(format!("--dest: {e}")))?;
                let parts = match spec {
                    SourceSpec::S3(_) => {
                        check_parts(&parts, &sizes)?;
                        Some(parts)
                    }
                    _ => None,
                };
                let spec = spec.resolve(env, args.no_sign, args.addressing.flatten())?;
                if let SourceSpec::File(_) = spec {
                    return Err(Error::usage(format!(
                        "--dest: '{dest}' is not an http:// or s3:// place (use --dir for a directory)"
                    )));
                }
                Dest::Upload { spec, parts }
            }
            (dir, None) => Dest::Dir(dir.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_DIR))),
        };
        Ok(GenOptions {
            dest,
            sizes,
            seed,
            timeout,
        })
    }
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

/// The part size within S3's limits, and few enough parts for every size.
fn check_parts(parts: &Parts, sizes: &[u64]) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::cli::{parse_from, ParseExit};

    fn args(argv: &[&str]) -> Args {
        match parse_from::<Args>(argv) {
            Ok(args) => args,
            Err(ParseExit::Usage(e)) => panic!("{argv:?}: {e}"),
            Err(ParseExit::Help(_)) => panic!("{argv:?}: help"),
        }
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn run(argv: &[&str], env: Env) -> Result<Options> {
        Options::from_args_with(&args(argv), env)
    }

    /// The message of the usage error `argv` gets; panics when it passes.
    fn refusal(argv: &[&str]) -> String {
        let result = match argv.contains(&"gen") {
            true => match &args(argv).command {
                Some(super::super::args::Command::Gen(g)) => {
                    GenOptions::from_args_with(g, &args(argv), &no_env).map(|_| ())
                }
                None => unreachable!(),
            },
            false => run(argv, &no_env).map(|_| ()),
        };
        match result {
            Ok(()) => panic!("{argv:?} passed"),
            Err(e) => {
                assert_eq!(e.exit_code(), 2, "{argv:?}: {e}");
                e.to_string()
            }
        }
    }

    #[test]
    fn the_defaults_read_every_pattern_of_three_objects_in_data() {
        let o = run(&[], &no_env).unwrap();
        assert_eq!(o.sizes, DEFAULT_SIZES);
        assert_eq!(o.clients, ["plain", "stream"]);
        assert_eq!(o.sources.len(), 1);
        assert_eq!(o.sources[0].0.label(), "file:./data");
        assert_eq!(o.sources[0].1, StreamConfig::local());
        assert_eq!(o.request_timeout, DEFAULT_REQUEST_TIMEOUT);
        assert_eq!(o.dirs().count(), 1);
        let (object, plans) = &o.objects[0];
        assert_eq!(object.name, "random-1mb.txt");
        let names: Vec<_> = plans
            .iter()
            .map(|p| (p.name.as_str(), p.read_size))
            .collect();
        assert_eq!(
            names,
            [
                ("sequential", Some(4 << 10)),
                ("sequential", Some(1 << 20)),
                ("forward", None),
                ("backward", None),
                ("parquet", None)
            ]
        );
    }

    #[test]
    fn good_flags_pass() {
        let o = run(
            &[
                "--sizes",
                "64k",
                "--source",
                "http://127.0.0.1:1/x/,file:d",
                "--block-size",
                "4k",
                "--cold",
                "--mode",
                "ss",
                "--client",
                "stream",
                "--request-timeout",
                "1ms",
            ],
            &no_env,
        )
        .unwrap();
        assert_eq!(o.sources[0].1.block_size, 4 << 10);
        assert_eq!(
            o.sources[0].1.cache_size,
            StreamConfig::default().cache_size
        );
        assert_eq!(o.sources[1].1.cache_size, StreamConfig::local().cache_size);
        assert_eq!(o.dirs().collect::<Vec<_>>(), [&PathBuf::from("d")]);
        assert!(o.cold);
        assert_eq!(o.clients, ["stream"]);
    }

    #[test]
    fn a_bad_flag_is_refused_by_name() {
        for (argv, flag) in [
            (&["--sizes", "0"][..], "--sizes"),
            (&["--read-size", "4k,0"], "--read-size"),
            (&["--request-timeout", "0"], "--request-timeout"),
            (&["--block-size", "0"], "--block-size"),
            (&["--cache-size", "1k"], "--cache-size"),
            (&["--readahead-min", "1m"], "--readahead-min"),
            (&["--cold", "--mode", "avgt"], "--cold"),
            (&["--pattern-file", "/nonexistent/reads"], "--pattern-file"),
            (&["--quick", "--full"], "--quick"),
        ] {
            let message = refusal(argv);
            assert!(message.contains(flag), "{argv:?}: {message}");
        }
    }

    #[test]
    fn a_pattern_file_is_checked_against_every_size() {
        let dir = crate::util::temp::TempDir::new("seek-options");
        let path = dir.join("reads");
        std::fs::write(&path, "0,1024\n".repeat(17)).unwrap();
        let file = path.to_str().unwrap();
        let o = run(&["--sizes", "2k", "--pattern-file", file], &no_env).unwrap();
        assert_eq!(o.objects[0].1.len(), 1);
        assert_eq!(o.objects[0].1[0].name, "custom");
        assert_eq!(o.objects[0].1[0].reads.asked(), 17 << 10);
        // 17 KiB of reads is more than 16 times a 1 KiB object.
        let message = refusal(&["--sizes", "2k,1k", "--pattern-file", file]);
        assert!(message.contains("--pattern-file"), "{message}");
        assert!(message.contains("more than 16 times"), "{message}");
        std::fs::write(&path, "0,4096\n").unwrap();
        let message = refusal(&["--sizes", "2k", "--pattern-file", file]);
        assert!(message.contains("--pattern-file"), "{message}");
    }

    #[test]
    fn bucket_names_an_s3_source_unless_source_does() {
        let env = |name: &str| match name {
            "BUCKET" => Some("bench".to_string()),
            "PREFIX" => Some("runs".to_string()),
            // Plain HTTP, so that a build without TLS takes it too.
            "AWS_ENDPOINT_URL" => Some("http://127.0.0.1:9000".to_string()),
            _ => None,
        };
        let o = run(&["--no-sign"], &env).unwrap();
        assert_eq!(o.sources[0].0.label(), "s3://bench/runs/");
        assert!(o.sources[0].0.s3_objects().is_some());
        assert_eq!(o.sources[0].1, StreamConfig::default());
        let o = run(&["--source", "file:d"], &env).unwrap();
        assert_eq!(o.sources[0].0.label(), "file:d");
        let bad = |name: &str| (name == "BUCKET").then(|| "x".to_string());
        let message = match run(&[], &bad) {
            Ok(_) => panic!("BUCKET=x passed"),
            Err(e) => e.to_string(),
        };
        assert!(message.contains("BUCKET"), "{message}");
    }

    #[test]
    fn gen_writes_to_data_by_default_and_checks_its_flags_by_name() {
        let g = args(&["--seed", "3", "gen", "--sizes", "1k"]);
        let Some(super::super::args::Command::Gen(gen)) = &g.command else {
            unreachable!()
        };
        let o = GenOptions::from_args_with(gen, &g, &no_env).unwrap();
        assert!(matches!(&o.dest, Dest::Dir(d) if d == &PathBuf::from("./data")));
        assert_eq!((o.seed, o.sizes.as_slice()), (3, &[1024][..]));
        for (line, flag) in [
            ("gen --sizes 0", "--sizes"),
            ("gen --dir d --dest http://h/", "--dest"),
            ("gen --dest ftp://h/", "--dest"),
            ("gen --dest file:d", "--dest"),
            ("gen --dest s3://bench/ --part-size 1m", "--part-size"),
            (
                "gen --dest s3://bench/ --sizes 100g --part-size 5m",
                "--part-size",
            ),
            (
                "gen --dest s3://bench/ --multipart-threshold 0",
                "--multipart-threshold",
            ),
        ] {
            let argv: Vec<&str> = line.split(' ').collect();
            let message = refusal(&argv);
            assert!(message.contains(flag), "{line}: {message}");
        }
    }

    #[test]
    fn existing_objects_are_read_at_their_own_size_and_bad_ones_refused_by_name() {
        let dir = crate::util::temp::TempDir::new("seek-objects");
        let file = dir.join("table.parquet");
        std::fs::write(&file, vec![7u8; 10_000]).unwrap();
        let path = file.to_str().unwrap();
        let o = run(
            &["--object", path, "--pattern", "parquet,sequential"],
            &no_env,
        )
        .unwrap();
        assert!(o.sizes.is_empty() && o.sources.is_empty() && o.objects.is_empty());
        assert_eq!(o.dirs().count(), 0, "nothing to generate");
        let (e, plans) = &o.existing[0];
        assert_eq!(
            (e.object.name.as_str(), e.object.size),
            ("table.parquet", 10_000)
        );
        assert!(!e.object.generated());
        assert_eq!(e.spec.label, format!("file:{path}"));
        assert_eq!(e.stat.check(), "clients-agree");
        assert_eq!(e.stream, StreamConfig::local());
        // The Parquet-like pattern scaled to the object: its footer, then 30% and 20%.
        assert_eq!(plans[0].name, "parquet");
        assert_eq!(plans[0].reads.asked(), 4 + 8192 + 3000 + 2000);
        assert_eq!(plans[1].reads.asked(), 10_000);

        let empty = dir.join("empty.log");
        std::fs::write(&empty, b"").unwrap();
        let file_url = format!("file:{path}");
        for (argv, needle) in [
            (
                vec!["--object", path, "--sizes", "1m"],
                "without --sizes and --source",
            ),
            (
                vec!["--object", path, "--source", "file:d"],
                "without --sizes and --source",
            ),
            (vec!["--object", "/nonexistent/disk.img"], "No such file"),
            (
                vec!["--object", dir.path().to_str().unwrap()],
                "not a regular file",
            ),
            (vec!["--object", empty.to_str().unwrap()], "empty (0 bytes)"),
            (
                vec!["--object", &format!("{path},{file_url}")],
                "named twice",
            ),
            (vec!["--object", path, "--block-size", "0"], "--block-size"),
        ] {
            let message = refusal(&argv);
            assert!(message.contains(needle), "{argv:?}: {message}");
            assert!(
                message.contains("--object") || needle.starts_with("--"),
                "{argv:?}: {message}"
            );
        }
        let message = refusal(&["--object", path, "gen"]);
        assert!(message.contains("--object"), "{message}");
        // A pattern file's reads are checked against the object's own size.
        let reads = dir.join("reads");
        std::fs::write(&reads, "-20000,10\n").unwrap();
        let message = refusal(&["--object", path, "--pattern-file", reads.to_str().unwrap()]);
        assert!(
            message.contains("outside the 10000-byte object"),
            "{message}"
        );
    }

    #[test]
    fn an_object_too_small_for_a_pattern_is_refused_naming_the_size_it_needs() {
        let dir = crate::util::temp::TempDir::new("seek-tiny");
        for len in [1, 5, 9] {
            let file = dir.join(format!("tiny-{len}"));
            std::fs::write(&file, vec![b'x'; len]).unwrap();
            let path = file.to_str().unwrap();
            // Every pattern by default: forward and backward would read nothing.
            let message = refusal(&["--object", path]);
            assert!(
                message.starts_with(&format!("--object file:{path}: {len} byte")),
                "{message}"
            );
            assert!(
                message.contains("too small for forward and backward"),
                "{message}"
            );
            assert!(message.contains("10 bytes or more"), "{message}");
            assert!(
                message.contains("--pattern sequential,parquet"),
                "{message}"
            );
            let message = refusal(&["--object", path, "--pattern", "backward"]);
            assert!(
                message.contains("too small for backward, which reads tenths"),
                "{message}"
            );
            // The patterns that read it run, every one of them with a read.
            let o = run(
                &["--object", path, "--pattern", "sequential,parquet"],
                &no_env,
            )
            .unwrap();
            let plans = &o.existing[0].1;
            assert_eq!(plans.len(), 3, "sequential twice, parquet");
            for p in plans {
                assert!(p.reads.count() > 0 && p.reads.asked() > 0, "{}", p.name);
            }
        }
        let file = dir.join("ten");
        std::fs::write(&file, [b'x'; 10]).unwrap();
        let o = run(&["--object", file.to_str().unwrap()], &no_env).unwrap();
        assert_eq!(o.existing[0].1.len(), 5);
        // Generated objects alike.
        let message = refusal(&["--sizes", "1k,5", "--pattern", "forward,parquet"]);
        assert!(
            message.starts_with("--sizes 5: 5 bytes, too small for forward"),
            "{message}"
        );
        assert!(message.contains("--pattern parquet"), "{message}");
    }

    #[test]
    fn a_bad_object_is_refused_by_argument_parsing_naming_the_flag() {
        for bad in [
            "s3://bench/runs/",
            "http://127.0.0.1:8080/objects/",
            "file:",
            "ftp://h/x",
            "nas.local:8080/disk.img",
            "a.img,",
        ] {
            match parse_from::<Args>(&["--object", bad]) {
                Err(ParseExit::Usage(e)) => {
                    let e = e.to_string();
                    assert!(e.contains("--object"), "{bad}: {e}");
                    assert_eq!(e.lines().count(), 1, "{bad}: {e}");
                }
                Ok(_) => panic!("{bad} passed"),
                Err(ParseExit::Help(_)) => panic!("{bad}: help"),
            }
        }
    }
}
