//! bb-zstd's flags and environment (THREADS, GUESSES, as the original benchmark took
//! them) checked and resolved against the profile, and the input read or generated. Each
//! check's message names its flag or variable; a bad value is exit code 2.

use super::args::Args;
use super::corpus::{self, CITY_JSON_SIZE};
use super::{Lock, Op};
use crate::harness::cli::{self, CommonArgs, HasCommon};
use crate::model::modes::Mode;
use crate::util::error::{Error, Result};
use std::sync::Arc;

/// Threads per online CPU allowed without --oversubscribe.
const THREADS_PER_CPU: usize = 64;
/// Threads allowed at all.
const MAX_THREADS: usize = 1 << 16;

/// What the flags chose, checked, with the input loaded.
pub(crate) struct Options {
    pub common: CommonArgs,
    pub ops: Vec<Op>,
    /// Jobs per single shot.
    pub jobs: u64,
    pub threads: Vec<usize>,
    pub level: i32,
    pub reuse_context: bool,
    /// The locks to measure, each a benchmark of its own.
    pub locks: Vec<Lock>,
    pub input: Arc<Vec<u8>>,
    /// The input as the `input` parameter shows it: the file's name, or `generated-SIZE`.
    pub input_name: String,
    /// Timed modes keep every thread busy across invocations, so an iteration lasts
    /// --time whatever --jobs says; a single shot is exactly --jobs jobs.
    pub keep_busy: bool,
}

impl Options {
    pub fn from_args(args: &Args) -> Result<Options> {
        Options::from_args_with(args, &|name| std::env::var(name).ok())
    }

    /// [`Options::from_args`], with the environment read through `env`.
    pub fn from_args_with(args: &Args, env: &dyn Fn(&str) -> Option<String>) -> Result<Options> {
        let common = args.common()?;
        let ops = match args.op.as_str() {
            "compress" => vec![Op::Compress],
            "decompress" => vec![Op::Decompress],
            "both" => vec![Op::Compress, Op::Decompress],
            other => {
                return Err(Error::usage(format!(
                    "--op: unknown value '{other}' (expected compress, decompress or both)"
                )))
            }
        };
        let locks = locks(&args.lock)?;
        let jobs = match args.jobs {
            Some(n) => n,
            None => env_number(env, "GUESSES")?.unwrap_or(common.profile.pick(50, 1000, 1000)),
        };
        cli::check_positive("--jobs", jobs)?;
        let threads = match &args.threads {
            Some(list) => list.clone(),
            None => match env_number(env, "THREADS")? {
                Some(n) => vec![n as usize],
                None => default_threads(online_cpus()),
            },
        };
        check_threads(&threads, args.oversubscribe)?;
        let levels = zstd::compression_level_range();
        if !levels.contains(&args.level) {
            return Err(Error::usage(format!(
                "--level {}: zstd accepts {} to {}",
                args.level,
                levels.start(),
                levels.end()
            )));
        }
        let most_threads = threads.iter().copied().max().unwrap_or(1) as u64;
        let (input, input_name) = input(args, common.seed, most_threads)?;
        Ok(Options {
            ops,
            jobs,
            threads,
            level: args.level,
            reuse_context: args.reuse_context,
            locks,
            input: Arc::new(input),
            input_name,
            keep_busy: matches!(
                common.mode.unwrap_or(Mode::Throughput),
                Mode::Throughput | Mode::AverageTime
            ),
            common,
        })
    }
}

/// The thread counts when none are asked for: one, and every online CPU, so that the
/// default answer says how it scales (one alone on a single-core board).
fn default_threads(online: usize) -> Vec<usize> {
    match online {
        0 | 1 => vec![1],
        n => vec![1, n],
    }
}

/// `--lock`'s list: `none`, `global`, each at most once.
fn locks(list: &str) -> Result<Vec<Lock>> {
    let mut locks = Vec::new();
    for word in list.split(',').map(str::trim) {
        let lock = match word {
            "none" => Lock::None,
            "global" => Lock::Global,
            other => {
                return Err(Error::usage(format!(
                    "--lock {list}: unknown value '{other}' (expected none, global or none,global)"
                )))
            }
        };
        if locks.contains(&lock) {
            return Err(Error::usage(format!(
                "--lock {list}: '{word}' is given twice"
            )));
        }
        locks.push(lock);
    }
    Ok(locks)
}

/// Beyond a few threads per CPU nothing more is measured, and a typo (100000) would
/// start them all: --oversubscribe allows up to the hard bound.
fn check_threads(threads: &[usize], oversubscribe: bool) -> Result<()> {
    let max_threads = if oversubscribe {
        MAX_THREADS
    } else {
        (THREADS_PER_CPU * online_cpus()).min(MAX_THREADS)
    };
    for &t in threads {
        cli::check_positive("--threads", t as u64)?;
        let what = if oversubscribe {
            "threads"
        } else {
            "threads here (64 per online CPU; --oversubscribe allows more)"
        };
        cli::check_at_most("--threads", t as u64, max_threads as u64, what)?;
    }
    Ok(())
}

/// The input and its name: `--input`'s file, or the corpus generated from `seed`; either
/// refused where it, its frames and an output buffer of twice it for each of
/// `most_threads` threads would not fit in memory.
fn input(args: &Args, seed: u64, most_threads: u64) -> Result<(Vec<u8>, String)> {
    let memory_for = |size: u64| size.saturating_mul(4 + 2 * most_threads);
    let (input, name) = match &args.input {
        Some(path) => {
            let bad = |e: std::io::Error| Error::usage(format!("--input {}: {e}", path.display()));
            let len = std::fs::metadata(path).map_err(bad)?.len();
            cli::check_fits_in_memory("--input", &path.display().to_string(), memory_for(len))?;
            let name = path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            (std::fs::read(path).map_err(bad)?, name)
        }
        None => {
            let size = args.size.unwrap_or(CITY_JSON_SIZE);
            cli::check_positive("--size", size)?;
            cli::check_fits_in_memory("--size", &size.to_string(), memory_for(size))?;
            (
                corpus::generate(size as usize, seed),
                format!("generated-{size}"),
            )
        }
    };
    if input.is_empty() {
        return Err(Error::usage("--input: the file is empty"));
    }
    Ok((input, name))
}

/// Reads a positive number from an environment variable, as the original benchmark took
/// THREADS and GUESSES.
fn env_number(env: &dyn Fn(&str) -> Option<String>, name: &str) -> Result<Option<u64>> {
    match env(name) {
        None => Ok(None),
        Some(v) => match v.trim().parse::<u64>() {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn with_env(argv: &[&str], vars: &[(&str, &str)]) -> Result<Options> {
        let args: Args = cli::parse_from(argv).unwrap();
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Options::from_args_with(&args, &|name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    fn options(argv: &[&str]) -> Result<Options> {
        with_env(argv, &[])
    }

    fn refused(argv: &[&str], vars: &[(&str, &str)]) -> String {
        crate::harness::checks::usage_message(with_env(argv, vars), &(argv, vars))
    }

    #[test]
    fn a_bad_value_is_refused_with_its_flag_or_variable_named() {
        let small = ["--size", "1k"];
        for (argv, vars, named) in [
            (&["--op", "x"][..], &[][..], "--op"),
            (&["--lock", "gvl"], &[], "--lock gvl: unknown value 'gvl'"),
            (&["--lock", ""], &[], "--lock"),
            (&["--lock", "none,"], &[], "--lock none,"),
            (&["--lock", "global,global"], &[], "--lock global,global"),
            (&["--jobs", "0"], &[], "--jobs"),
            (&["--threads", "0"], &[], "--threads"),
            (&["--threads", "1,100000"], &[], "--threads 100000"),
            (
                &["--threads", "70000", "--oversubscribe"],
                &[],
                "--threads 70000",
            ),
            (&["--level", "99"], &[], "--level 99"),
            (&["--size", "0"], &[], "--size"),
            (&["--size", "1000g"], &[], "--size"),
            (
                &["--input", "/nonexistent/x"],
                &[],
                "--input /nonexistent/x",
            ),
            (&["--input", "/dev/null"], &[], "--input"),
            (&small, &[("THREADS", "x")], "THREADS='x'"),
            (&small, &[("GUESSES", "0")], "GUESSES='0'"),
        ] {
            let e = refused(argv, vars);
            assert!(e.contains(named), "{argv:?} {vars:?}: {e}");
        }
    }

    #[test]
    fn good_values_pass_and_the_environment_fills_in_for_flags() {
        let o = options(&["--size", "1k", "--threads", "1,2", "--op", "compress"]).unwrap();
        assert_eq!(
            (o.threads, o.ops, o.jobs),
            (vec![1, 2], vec![Op::Compress], 1000)
        );
        assert_eq!(o.input_name, "generated-1024");
        assert!(
            !o.input.is_empty() && o.input.len() <= 1024,
            "{}",
            o.input.len()
        );
        assert!(o.keep_busy);
        assert_eq!(
            o.locks,
            [Lock::None, Lock::Global],
            "with and without the lock by default"
        );
        let none = options(&["--size", "1k", "--lock", "none"]).unwrap();
        assert_eq!(none.locks, [Lock::None]);
        let both = options(&["--size", "1k", "--lock", "none, global"]).unwrap();
        assert_eq!(both.locks, [Lock::None, Lock::Global]);
        let global = options(&["--size", "1k", "--lock", "global"]).unwrap();
        assert_eq!(global.locks, [Lock::Global]);
        let vars = [("THREADS", "3"), ("GUESSES", " 20 ")];
        let o = with_env(&["--size", "1k", "--mode", "ss"], &vars).unwrap();
        assert_eq!((o.threads, o.jobs, o.keep_busy), (vec![3], 20, false));
        // Flags win over the environment.
        let o = with_env(&["--size", "1k", "--threads", "1", "--jobs", "5"], &vars).unwrap();
        assert_eq!((o.threads, o.jobs), (vec![1], 5));
        assert_eq!(options(&["--size", "1k", "--quick"]).unwrap().jobs, 50);
        assert_eq!(
            options(&["--size", "1k", "--level", "-5"]).unwrap().level,
            -5
        );
    }

    #[test]
    fn the_default_matrix_is_one_thread_and_every_cpu_with_and_without_the_lock() {
        assert_eq!(default_threads(1), [1]);
        assert_eq!(default_threads(2), [1, 2]);
        assert_eq!(default_threads(4), [1, 4]);
        let o = options(&["--size", "1k"]).unwrap();
        assert_eq!(o.threads, default_threads(online_cpus()));
        assert_eq!(o.locks, [Lock::None, Lock::Global]);
        assert_eq!(o.ops, [Op::Compress, Op::Decompress]);
    }

    #[test]
    fn an_input_file_is_read_and_named_by_its_file_name() {
        let path =
            std::env::temp_dir().join(format!("bb-zstd-options-{}.json", std::process::id()));
        std::fs::write(&path, b"{\"a\": 1}").unwrap();
        let o = options(&["--input", path.to_str().unwrap()]);
        std::fs::remove_file(&path).unwrap();
        let o = o.unwrap();
        assert_eq!(o.input.as_slice(), b"{\"a\": 1}");
        assert!(
            o.input_name.starts_with("bb-zstd-options-"),
            "{}",
            o.input_name
        );
    }
}
