//! Command-line conventions shared by every binary: the common flags (defined once, in
//! [`bench_args!`](crate::bench_args)), value parsers for durations, sizes and lists, and argument parsing
//! that answers a bad flag with one line on stderr and exit code 2.

use crate::error::{Error, Result};
use crate::output::warnings::program_name;
pub use crate::system::cooldown::Cooldown;
use std::path::PathBuf;
use std::time::Duration;

/// How the harness measures, named as in JMH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Operations per second over a timed iteration.
    Throughput,
    /// Time per operation over a timed iteration.
    AverageTime,
    /// One invocation per iteration, cold: time per operation.
    SingleShot,
    /// Every invocation timed on its own: a latency distribution.
    Sample,
}

impl Mode {
    /// JMH's short name: thrpt, avgt, ss, sample.
    pub fn short(self) -> &'static str {
        match self {
            Mode::Throughput => "thrpt",
            Mode::AverageTime => "avgt",
            Mode::SingleShot => "ss",
            Mode::Sample => "sample",
        }
    }

    /// Whether a bigger score is better (throughput) or worse (time per op).
    pub fn higher_is_better(self) -> bool {
        self == Mode::Throughput
    }
}

/// How long and how thorough a run is; the same three profiles on every binary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Profile {
    /// A smoke run: the whole binary in well under a minute.
    Quick,
    /// The default: sound statistics, the whole suite within about 15 minutes.
    #[default]
    Standard,
    /// JMH's habits, for a run left overnight.
    Full,
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::Quick => "quick",
            Profile::Standard => "standard",
            Profile::Full => "full",
        }
    }

    /// This profile's value among the three.
    pub fn pick<T>(self, quick: T, standard: T, full: T) -> T {
        match self {
            Profile::Quick => quick,
            Profile::Standard => standard,
            Profile::Full => full,
        }
    }

    /// The profile the switches `--quick`, `--standard` and `--full` choose: at most one.
    pub fn from_switches(quick: bool, standard: bool, full: bool) -> Result<Profile> {
        match (quick, standard, full) {
            (false, false, false) | (false, true, false) => Ok(Profile::Standard),
            (true, false, false) => Ok(Profile::Quick),
            (false, false, true) => Ok(Profile::Full),
            _ => Err(Error::usage(
                "--quick, --standard and --full choose one profile: give at most one",
            )),
        }
    }
}

/// The report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Csv,
    Json,
    /// Ruby's Benchmark.bm layout: user, system, total and (real) per benchmark.
    Bm,
}

/// Parses `thrpt`, `avgt`, `ss` or `sample` (JMH's long names work too).
pub fn parse_mode(s: &str) -> std::result::Result<Mode, String> {
    match s {
        "thrpt" | "throughput" | "Throughput" => Ok(Mode::Throughput),
        "avgt" | "AverageTime" => Ok(Mode::AverageTime),
        "ss" | "SingleShotTime" => Ok(Mode::SingleShot),
        "sample" | "SampleTime" => Ok(Mode::Sample),
        _ => Err(format!(
            "unknown mode '{s}' (expected thrpt, avgt, ss or sample)"
        )),
    }
}

/// Parses `text`, `csv`, `json` or `bm`.
pub fn parse_format(s: &str) -> std::result::Result<Format, String> {
    match s {
        "text" => Ok(Format::Text),
        "csv" => Ok(Format::Csv),
        "json" => Ok(Format::Json),
        "bm" => Ok(Format::Bm),
        _ => Err(format!(
            "unknown format '{s}' (expected text, csv, json or bm)"
        )),
    }
}

/// Splits `1.5ms` into 1.5 and `ms`; None when there is no leading number.
fn number_and_unit(s: &str) -> Option<(f64, &str)> {
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    Some((number.parse().ok()?, unit))
}

/// Parses a duration such as `500ms`, `3s`, `1.5s`, `1m`, `2h`, `100us`, `0`.
pub fn parse_duration(s: &str) -> std::result::Result<Duration, String> {
    let bad = || format!("invalid duration '{s}' (expected a number and a unit: 500ms, 3s, 1m)");
    let (value, unit) = number_and_unit(s).ok_or_else(bad)?;
    let seconds = match unit {
        "ns" => value / 1e9,
        "us" | "µs" => value / 1e6,
        "ms" => value / 1e3,
        "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        "" if value == 0.0 => 0.0,
        _ => return Err(bad()),
    };
    if !seconds.is_finite() || seconds > 1e9 {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Parses a temperature in °C: `60C`, `60`, `62.5°C`.
pub fn parse_temperature(s: &str) -> std::result::Result<f64, String> {
    let bad = || format!("invalid temperature '{s}' (expected degrees Celsius up to 150: 60C, 60)");
    let (value, unit) = number_and_unit(s).ok_or_else(bad)?;
    let celsius = matches!(unit, "" | "C" | "c" | "°C");
    if celsius && value > 0.0 && value <= 150.0 {
        Ok(value)
    } else {
        Err(bad())
    }
}

/// Parses a size in bytes: `4096`, `4k`, `1m`, `16mb`, `1.5MiB`, `2g` (powers of 1024).
pub fn parse_size(s: &str) -> std::result::Result<u64, String> {
    let bad = || format!("invalid size '{s}' (expected bytes or a number with k, m or g: 4k, 1m)");
    let (value, unit) = number_and_unit(s).ok_or_else(bad)?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1u64,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(bad()),
    };
    let bytes = value * scale as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 / 2.0 {
        return Err(bad());
    }
    Ok(bytes.round() as u64)
}

/// Parses a comma-separated list with `item` for each element (`1,2,4`).
pub fn parse_list<T>(
    s: &str,
    item: impl Fn(&str) -> std::result::Result<T, String>,
) -> std::result::Result<Vec<T>, String> {
    let items: Vec<T> = s
        .split(',')
        .map(|x| item(x.trim()))
        .collect::<std::result::Result<_, _>>()?;
    if items.is_empty() {
        return Err(format!("empty list '{s}'"));
    }
    Ok(items)
}

/// Parses a list of non-negative integers (`1,2,4`).
pub fn parse_usize_list(s: &str) -> std::result::Result<Vec<usize>, String> {
    parse_list(s, |x| {
        x.parse::<usize>()
            .map_err(|_| format!("invalid number '{x}' in list '{s}'"))
    })
}

/// Parses a list of sizes (`16,1k,64k`).
pub fn parse_size_list(s: &str) -> std::result::Result<Vec<u64>, String> {
    parse_list(s, parse_size)
}

/// Parses a list of words (`compress,decompress`), each checked against `allowed`.
pub fn parse_choices(s: &str, allowed: &[&str]) -> std::result::Result<Vec<String>, String> {
    parse_list(s, |x| {
        if allowed.contains(&x) {
            Ok(x.to_string())
        } else {
            Err(format!(
                "unknown value '{x}' (expected one of {})",
                allowed.join(", ")
            ))
        }
    })
}

/// The flags every binary takes, collected from the binary's own argument struct.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommonArgs {
    pub mode: Option<Mode>,
    pub warmup: Option<u32>,
    pub warmup_time: Option<Duration>,
    pub iterations: Option<u32>,
    pub time: Option<Duration>,
    pub forks: Option<u32>,
    pub timeout: Option<Duration>,
    pub format: Option<Format>,
    pub output: Option<PathBuf>,
    pub profile: Profile,
    /// Print the plan (benchmarks, settings, estimated duration) and measure nothing.
    pub dry_run: bool,
    pub pin: Option<Vec<usize>>,
    pub seed: u64,
    /// `--cooldown` and `--cooldown-max`: wait for the SoC to cool before each benchmark.
    pub cooldown: Option<Cooldown>,
}

/// Implemented by every binary's argument struct through [`bench_args!`](crate::bench_args).
pub trait HasCommon {
    /// The common flags; an error when they contradict each other (two profiles).
    fn common(&self) -> Result<CommonArgs>;
}

/// Declares a binary's argument struct with the common flags appended, so that the same
/// flag names mean the same thing on every binary. Every field of the binary ends in a comma.
///
/// ```ignore
/// boardbench::bench_args! {
///     /// Measure something.
///     #[argh(example = "bb-x --quick")]
///     pub struct Args {
///         /// how many things
///         #[argh(option, default = "1")]
///         pub things: u32,
///     }
/// }
/// ```
#[macro_export]
macro_rules! bench_args {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $($fields:tt)*
        }
    ) => {
        #[derive(argh::FromArgs, Debug)]
        $(#[$meta])*
        pub struct $name {
            // Passed through as raw tokens: argh must see `Option<...>` itself, which it
            // cannot through a `$ty:ty` fragment.
            $($fields)*
            /// benchmark mode: thrpt (ops/s), avgt (time/op), ss (single cold shot), sample (latency distribution)
            #[argh(option, from_str_fn($crate::harness::cli::parse_mode))]
            pub mode: Option<$crate::harness::cli::Mode>,
            /// warm-up iterations per fork
            #[argh(option)]
            pub warmup: Option<u32>,
            /// time of one warm-up iteration (500ms, 3s, 1m)
            #[argh(option, from_str_fn($crate::harness::cli::parse_duration))]
            pub warmup_time: Option<std::time::Duration>,
            /// measurement iterations per fork
            #[argh(option)]
            pub iterations: Option<u32>,
            /// time of one measurement iteration (500ms, 3s, 1m)
            #[argh(option, from_str_fn($crate::harness::cli::parse_duration))]
            pub time: Option<std::time::Duration>,
            /// forks: each benchmark runs in this many fresh copies of the process (0 = in this process)
            #[argh(option)]
            pub forks: Option<u32>,
            /// an iteration that runs longer than this fails the run (default 10m)
            #[argh(option, from_str_fn($crate::harness::cli::parse_duration))]
            pub timeout: Option<std::time::Duration>,
            /// report format: text, csv, json or bm (default text, or from the --output extension)
            #[argh(option, from_str_fn($crate::harness::cli::parse_format))]
            pub format: Option<$crate::harness::cli::Format>,
            /// write the report to this file (atomically: a temporary file, then renamed)
            #[argh(option, from_str_fn($crate::output::file::parse_output))]
            pub output: Option<std::path::PathBuf>,
            /// the quick profile: a smoke run, fewer and shorter iterations, smaller inputs
            #[argh(switch)]
            pub quick: bool,
            /// the standard profile (the default): sound statistics in minutes
            #[argh(switch)]
            pub standard: bool,
            /// the full profile: JMH's habits, more of everything, for a run left overnight
            #[argh(switch)]
            pub full: bool,
            /// print the plan (benchmarks, settings, estimated duration) and exit without measuring
            #[argh(switch)]
            pub dry_run: bool,
            /// CPUs to pin to, a list (0,1); each binary says how it uses them
            #[argh(option, from_str_fn($crate::harness::cli::parse_usize_list))]
            pub pin: Option<Vec<usize>>,
            /// seed of the generated inputs (default 42)
            #[argh(option, default = "42")]
            pub seed: u64,
            /// before each benchmark, wait until the SoC is cooler than this (60C, 60), reading it every second
            #[argh(option, from_str_fn($crate::harness::cli::parse_temperature))]
            pub cooldown: Option<f64>,
            /// the longest --cooldown waits before each benchmark; then it warns and runs (default 5m)
            #[argh(option, from_str_fn($crate::harness::cli::parse_duration))]
            pub cooldown_max: Option<std::time::Duration>,
        }

        impl $crate::harness::cli::HasCommon for $name {
            fn common(&self) -> $crate::Result<$crate::harness::cli::CommonArgs> {
                Ok($crate::harness::cli::CommonArgs {
                    mode: self.mode,
                    warmup: self.warmup,
                    warmup_time: self.warmup_time,
                    iterations: self.iterations,
                    time: self.time,
                    forks: self.forks,
                    timeout: self.timeout,
                    format: self.format,
                    output: self.output.clone(),
                    profile: $crate::harness::cli::Profile::from_switches(
                        self.quick,
                        self.standard,
                        self.full,
                    )?,
                    dry_run: self.dry_run,
                    pin: self.pin.clone(),
                    seed: self.seed,
                    cooldown: $crate::harness::cli::Cooldown::from_flags(
                        self.cooldown,
                        self.cooldown_max,
                    )?,
                })
            }
        }
    };
}

/// Parses this process's arguments into `T`. `--help` prints and exits 0; a bad flag or
/// value prints one line naming it on stderr and exits 2.
pub fn parse_args<T: argh::FromArgs>() -> T {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    match parse_from::<T>(&refs) {
        Ok(t) => t,
        Err(ParseExit::Help(text)) => {
            print!("{text}");
            std::process::exit(0)
        }
        Err(ParseExit::Usage(e)) => {
            crate::stderr!("{}: {e}", program_name());
            std::process::exit(2)
        }
    }
}

/// Why parsing stopped early.
#[derive(Debug, PartialEq)]
pub enum ParseExit {
    Help(String),
    Usage(Error),
}

/// Parses `args` (without the program name) into `T`.
/// An option given twice keeps its later value (`--time 3s ... --time 100ms`), so flags
/// appended after a profile, or `BB_FLAGS_<name>` after `BB_FLAGS`, override what came
/// before; argh itself refuses repeats, so the earlier occurrence is dropped and the
/// arguments parsed again.
pub fn parse_from<T: argh::FromArgs>(args: &[&str]) -> std::result::Result<T, ParseExit> {
    let mut args = args.to_vec();
    loop {
        match parse_once::<T>(&args) {
            Err(ParseExit::Usage(e)) => match earlier_duplicate(&args, &e.to_string()) {
                Some(i) => {
                    args.drain(i..(i + 2).min(args.len()));
                }
                None => return Err(ParseExit::Usage(e)),
            },
            parsed => return parsed,
        }
    }
}

/// Where the occurrence that argh's "duplicate values" error refers to was first given:
/// the last `--flag VALUE` pair before the repeat named in `message`.
fn earlier_duplicate(args: &[&str], message: &str) -> Option<usize> {
    let rest = message.strip_prefix("Error parsing option '")?;
    let (flag, rest) = rest.split_once("' with value '")?;
    let (value, _) = rest.split_once("': duplicate values provided")?;
    let repeat = (1..args.len())
        .rev()
        .find(|&i| args[i - 1] == flag && args[i] == value)?
        - 1;
    args[..repeat].iter().rposition(|a| *a == flag)
}

fn parse_once<T: argh::FromArgs>(args: &[&str]) -> std::result::Result<T, ParseExit> {
    let name = program_name();
    T::from_args(&[name.as_str()], args).map_err(|exit| match exit.status {
        Ok(()) => ParseExit::Help(exit.output),
        Err(()) => {
            // argh's message is a line, or a heading with the flags under it
            // ("Required options not provided:\n    --x"): keep all of it on one line.
            let message: Vec<&str> = exit
                .output
                .lines()
                .map(str::trim)
                .take_while(|l| !l.is_empty())
                .collect();
            let first = if message.is_empty() {
                "invalid arguments".to_string()
            } else {
                message.join(" ")
            };
            ParseExit::Usage(Error::usage(format!("{first} (see --help)")))
        }
    })
}

/// Rejects a zero where at least one is needed: `check_positive("--threads", 0)`.
pub fn check_positive(flag: &str, value: u64) -> Result<()> {
    if value == 0 {
        Err(Error::usage(format!("{flag} must be at least 1")))
    } else {
        Ok(())
    }
}

/// In tests: the message of `result`'s usage error (exit code 2), where `what` (the
/// arguments given) must be refused.
#[cfg(test)]
pub(crate) fn usage_message<T>(result: Result<T>, what: &dyn std::fmt::Debug) -> String {
    match result {
        Ok(_) => panic!("{what:?} passed"),
        Err(e) => {
            assert_eq!(e.exit_code(), 2, "{what:?}: {e}");
            e.to_string()
        }
    }
}

/// Rejects a value above `max` before anything is allocated for it:
/// `check_at_most("--depth", d, 65536, "calls in flight per connection")`.
pub fn check_at_most(flag: &str, value: u64, max: u64, what: &str) -> Result<()> {
    if value > max {
        Err(Error::usage(format!(
            "{flag} {value}: at most {max} {what}"
        )))
    } else {
        Ok(())
    }
}

/// Rejects a value whose run would need `needed` bytes of memory when this machine has
/// less available (MemAvailable), before anything is allocated.
pub fn check_fits_in_memory(flag: &str, value: &str, needed: u64) -> Result<()> {
    match crate::system::cpu::available_memory() {
        Some(available) if needed > available => Err(Error::usage(format!(
            "{flag} {value}: the run would need about {} MiB of memory and {} MiB are available",
            needed >> 20,
            available >> 20
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_one_clear_usage_error() {
        assert!(check_at_most("--depth", 65536, 65536, "calls").is_ok());
        let e = check_at_most("--depth", 65537, 65536, "calls in flight").unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert_eq!(
            e.to_string(),
            "--depth 65537: at most 65536 calls in flight"
        );
        assert!(check_fits_in_memory("--size", "1k", 1024).is_ok());
        let e = check_fits_in_memory("--size", "100g", u64::MAX).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.to_string().starts_with("--size 100g: the run would need"),
            "{e}"
        );
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("3s"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        for bad in ["", "3", "s", "3x", "-1s", "1e3s", "3 s"] {
            let err = parse_duration(bad).unwrap_err();
            assert!(err.contains(&format!("'{bad}'")), "{err}");
        }
    }

    #[test]
    fn sizes_and_lists() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("16mb"), Ok(16 << 20));
        assert_eq!(parse_size("1.5MiB"), Ok(3 << 19));
        assert!(parse_size("4q").is_err());
        assert!(parse_size("").is_err());
        assert_eq!(parse_usize_list("1,2, 4"), Ok(vec![1, 2, 4]));
        assert!(parse_usize_list("1,,2")
            .unwrap_err()
            .contains("invalid number ''"));
        assert_eq!(parse_size_list("16,1k"), Ok(vec![16, 1024]));
        assert_eq!(
            parse_choices("a,b", &["a", "b"]),
            Ok(vec!["a".to_string(), "b".to_string()])
        );
        assert!(parse_choices("a,c", &["a", "b"])
            .unwrap_err()
            .contains("'c'"));
    }

    #[test]
    fn temperatures() {
        assert_eq!(parse_temperature("60C"), Ok(60.0));
        assert_eq!(parse_temperature("60"), Ok(60.0));
        assert_eq!(parse_temperature("62.5°C"), Ok(62.5));
        for bad in ["", "hot", "60F", "0", "-5C", "200C", "60 C"] {
            let err = parse_temperature(bad).unwrap_err();
            assert!(err.contains(&format!("'{bad}'")), "{err}");
        }
    }

    #[test]
    fn modes_and_formats() {
        assert_eq!(parse_mode("thrpt"), Ok(Mode::Throughput));
        assert_eq!(parse_mode("sample"), Ok(Mode::Sample));
        assert!(parse_mode("fast").is_err());
        assert_eq!(parse_format("json"), Ok(Format::Json));
        assert!(parse_format("xml").unwrap_err().contains("'xml'"));
    }

    crate::bench_args! {
        /// Test arguments.
        pub struct TestArgs {
            /// a list of thread counts
            #[argh(option, from_str_fn(crate::harness::cli::parse_usize_list))]
            pub threads: Option<Vec<usize>>,
        }
    }

    #[test]
    fn common_flags_parse_and_bad_flags_are_one_line() {
        let a: TestArgs = parse_from(&[
            "--threads",
            "1,2",
            "--time",
            "2s",
            "--quick",
            "--mode",
            "avgt",
        ])
        .unwrap();
        assert_eq!(a.threads, Some(vec![1, 2]));
        let c = a.common().unwrap();
        assert_eq!(c.time, Some(Duration::from_secs(2)));
        assert_eq!(c.mode, Some(Mode::AverageTime));
        assert_eq!(c.profile, Profile::Quick);
        assert_eq!(c.seed, 42);
        match parse_from::<TestArgs>(&["--bogus"]) {
            Err(ParseExit::Usage(e)) => {
                assert!(e.to_string().contains("--bogus"), "{e}");
                assert!(!e.to_string().contains('\n'));
                assert_eq!(e.exit_code(), 2);
            }
            other => panic!("{other:?}"),
        }
        match parse_from::<TestArgs>(&["--time", "3"]) {
            Err(ParseExit::Usage(e)) => assert!(e.to_string().contains("--time"), "{e}"),
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(parse_from::<TestArgs>(&["--help"]), Err(ParseExit::Help(h)) if h.contains("--warmup-time"))
        );
    }

    #[test]
    fn a_repeated_option_keeps_its_last_value() {
        let a: TestArgs = parse_from(&[
            "--time",
            "3s",
            "--threads",
            "1",
            "--time",
            "100ms",
            "--time",
            "1s",
        ])
        .unwrap();
        let c = a.common().unwrap();
        assert_eq!(c.time, Some(Duration::from_secs(1)));
        assert_eq!(a.threads, Some(vec![1]));
        // The same value twice, and a bad value after a good one, still work as expected.
        let a: TestArgs = parse_from(&["--time", "1s", "--time", "1s"]).unwrap();
        assert_eq!(a.common().unwrap().time, Some(Duration::from_secs(1)));
        match parse_from::<TestArgs>(&["--time", "1s", "--time", "3"]) {
            Err(ParseExit::Usage(e)) => assert!(e.to_string().contains("'3'"), "{e}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn one_profile_at_most_and_standard_by_default() {
        let profile = |args: &[&str]| parse_from::<TestArgs>(args).unwrap().common();
        assert_eq!(profile(&[]).unwrap().profile, Profile::Standard);
        assert_eq!(profile(&["--standard"]).unwrap().profile, Profile::Standard);
        assert_eq!(profile(&["--full"]).unwrap().profile, Profile::Full);
        assert!(profile(&["--full", "--dry-run"]).unwrap().dry_run);
        let e = profile(&["--quick", "--full"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("at most one"), "{e}");
        assert_eq!(Profile::Full.pick(1, 2, 3), 3);
    }
}
