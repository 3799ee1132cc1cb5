//! Command-line conventions shared by every binary: the common flags (defined once, in
//! [`bench_args!`](crate::bench_args)) and argument parsing that answers a bad flag with
//! one line on stderr and exit code 2. The value parsers (`util::parse`), the modes and
//! formats (`model::modes`) and the checks (`checks`) are re-exported here, so that a
//! measurement's flags name one module.

pub use super::checks::{check_at_most, check_fits_in_memory, check_positive};
pub use crate::model::modes::{parse_format, parse_mode, Format, Mode, Profile};
use crate::model::settings::{Settings, SettingsFlags};
pub use crate::system::cooldown::Cooldown;
pub use crate::system::governor::parse_governor;
pub use crate::system::topology::{parse_cluster, Cluster, ClusterChoice};
use crate::util::error::{Error, Result};
pub use crate::util::parse::{
    parse_choices, parse_duration, parse_list, parse_size, parse_size_list, parse_temperature,
    parse_usize_list,
};
use crate::util::terminal::program_name;
use std::path::PathBuf;
use std::time::Duration;

/// The flags every binary takes, collected from the binary's own argument struct.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommonArgs {
    pub mode: Option<Mode>,
    pub warmup: Option<u32>,
    pub warmup_time: Option<Duration>,
    pub iterations: Option<u32>,
    pub time: Option<Duration>,
    pub forks: Option<u32>,
    /// `--precision`: Some(0.0) for `off`.
    pub precision: Option<f64>,
    pub max_forks: Option<u32>,
    pub timeout: Option<Duration>,
    pub format: Option<Format>,
    pub output: Option<PathBuf>,
    pub profile: Profile,
    /// Print the plan (benchmarks, settings, estimated duration) and measure nothing.
    pub dry_run: bool,
    /// `--pin`'s CPUs.
    pub pin: Option<Vec<usize>>,
    /// `--pin none`: two-sided measurements left where the scheduler puts them.
    pub unpinned: bool,
    pub seed: u64,
    /// `--cooldown` and `--cooldown-max`: wait for the SoC to cool before each benchmark.
    pub cooldown: Option<Cooldown>,
    /// `--fail-on-error`: stop at the first benchmark that fails (JMH's `-foe`) instead
    /// of going on with the others.
    pub fail_on_error: bool,
    /// `--against`: another build of this binary, run fork by fork in pairs with this one.
    pub against: Option<PathBuf>,
    /// The cluster the process is pinned to (so every fork, thread and default placement
    /// is among its cores): `--cluster`'s, or on a big.LITTLE board with neither it nor
    /// `--pin`, the big one.
    pub cluster: Option<Cluster>,
    /// Whether `cluster` is the default's choice, not `--cluster`'s.
    pub cluster_by_default: bool,
    /// The longest to wait for the board to go idle before measuring: `--idle-wait`,
    /// else `BB_IDLE_WAIT`, else a minute in the standard and full profiles.
    pub idle_wait: Duration,
    /// `--governor`: the cpufreq governor every policy is set to for the run.
    pub governor: Option<String>,
    /// `--monitor`: how often the sensors are read through the run (zero: never).
    pub monitor: Duration,
    /// `--counters`: cycles and instructions per operation from the PMU.
    pub counters: bool,
    /// `--noise`: this board's noise profile, where not `BB_NOISE`'s or the default's.
    pub noise: Option<PathBuf>,
}

impl SettingsFlags for CommonArgs {
    fn apply(&self, settings: &mut Settings) {
        if let Some(m) = self.mode {
            settings.mode = m;
        }
        if let Some(n) = self.warmup {
            settings.warmup_iterations = n;
        }
        if let Some(t) = self.warmup_time {
            settings.warmup_time = t;
        }
        if let Some(n) = self.iterations {
            settings.iterations = n;
        }
        if let Some(t) = self.time {
            settings.time = t;
        }
        match self.forks {
            Some(n) => settings.forks = n,
            // An A/B row's pairs are its unit: at least as many as an interval over them
            // needs, so that it follows the noise there is, not a band measured elsewhere.
            None if self.against.is_some() => {
                let fewest = crate::stats::uncertainty::MIN_FORKS as u32;
                settings.max_forks = settings.max_forks.max(fewest);
                settings.forks = settings.forks.max(fewest);
            }
            None => {}
        }
        if let Some(p) = self.precision {
            settings.precision = (p > 0.0).then_some(p);
        }
        if let Some(n) = self.max_forks {
            settings.max_forks = n;
        }
        if let Some(t) = self.timeout {
            settings.timeout = t;
        }
    }
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
            /// forks: each benchmark runs in this many fresh copies of the process (0 = in this process); with --precision, the fewest
            #[argh(option)]
            pub forks: Option<u32>,
            /// add forks to a headline row until its ± (over forks: where the next run lands, 95%) is within this share of its score, up to --max-forks (2%; off: exactly --forks; default 2% in the standard profile, off otherwise)
            #[argh(option, from_str_fn($crate::harness::cli::parse_precision))]
            pub precision: Option<f64>,
            /// the most forks a headline row runs to reach --precision: its time budget (default 2 × --forks in the standard profile; with --against, the most pairs)
            #[argh(option)]
            pub max_forks: Option<u32>,
            /// an iteration that runs longer than this fails the run (default 10m)
            #[argh(option, from_str_fn($crate::harness::cli::parse_duration))]
            pub timeout: Option<std::time::Duration>,
            /// report format: text, csv, json, jmh (JMH's JSON keys only, for strict readers) or bm (default text, or from the --output extension)
            #[argh(option, from_str_fn($crate::harness::cli::parse_format))]
            pub format: Option<$crate::harness::cli::Format>,
            /// write the report to this file (atomically: a temporary file, then renamed)
            #[argh(option, from_str_fn($crate::util::file::parse_output))]
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
            /// CPUs to pin to, a list (0,1), or none; each binary says how it uses them (bb-ipc and bb-rpc: by default each two-sided row on one core and across two)
            #[argh(option, from_str_fn($crate::harness::cli::parse_pin))]
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
            /// stop at the first benchmark that fails (default: report the others, name the failures, exit 1)
            #[argh(switch)]
            pub fail_on_error: bool,
            /// another build of this binary (./old/bb-zstd) to measure against: each fork of a row paired with one of it, in ABBA order, and the answer says which is faster
            #[argh(option)]
            pub against: Option<std::path::PathBuf>,
            /// run on one cluster of a big.LITTLE board: big (its fastest cores), little, or a cpufreq policy's number (4: policy4); pins the run to its cores and the answer names it (default on a board whose clusters differ: big, unless --pin says where; elsewhere, where the scheduler puts it)
            #[argh(option, from_str_fn($crate::harness::cli::parse_cluster))]
            pub cluster: Option<$crate::harness::cli::ClusterChoice>,
            /// before measuring, wait up to this long (at most 24h) for other processes to use under 2.5% of the cores (3 s in a row), then measure anyway with the rows flagged busy; 0 skips it (default 60s in the standard and full profiles, 0 in quick; BB_IDLE_WAIT sets the default, for CI)
            #[argh(option, from_str_fn($crate::harness::cli::parse_idle_wait))]
            pub idle_wait: Option<std::time::Duration>,
            /// set every cpufreq policy to this governor (performance) for the run, and back on every way out; where it may not (not root), it says so once and measures as the board is
            #[argh(option, from_str_fn($crate::harness::cli::parse_governor))]
            pub governor: Option<String>,
            /// read the sensors (temperatures, each cluster's clock, throttle bits, swap, free memory) this often through the run, in a thread of the parent, never of a measured fork; each row's readings go into the JSON; 0: off (default 1s; off with --forks 0)
            #[argh(option, default = "std::time::Duration::from_secs(1)", from_str_fn($crate::harness::cli::parse_monitor))]
            pub monitor: std::time::Duration,
            /// count cycles and instructions (and cache misses where the PMU offers them) of the measured threads through perf_event_open: cycles/op, instructions/op, IPC and, where an operation has bytes, cycles/byte, as secondary metrics; where perf events are not permitted, one line says so and the run goes on without them
            #[argh(switch)]
            pub counters: bool,
            /// this board's noise profile, which scripts/run-all.sh --calibrate writes: the run floor and band of a lone fork each ± uses (default $BB_NOISE, else ~/.config/boardbench/noise.json where there is one; without one, the run-to-run part is not measured and the answer says so)
            #[argh(option)]
            pub noise: Option<std::path::PathBuf>,
        }

        impl $crate::harness::cli::HasCommon for $name {
            fn common(&self) -> $crate::util::error::Result<$crate::harness::cli::CommonArgs> {
                let (cluster, cluster_by_default) = $crate::harness::cli::resolve_cluster(
                    self.cluster,
                    self.pin.is_some(),
                    self.dry_run,
                )?;
                Ok($crate::harness::cli::CommonArgs {
                    mode: self.mode,
                    warmup: self.warmup,
                    warmup_time: self.warmup_time,
                    iterations: self.iterations,
                    time: self.time,
                    forks: self.forks,
                    precision: self.precision,
                    max_forks: self.max_forks,
                    timeout: self.timeout,
                    format: self.format,
                    output: self.output.clone(),
                    profile: $crate::harness::cli::Profile::from_switches(
                        self.quick,
                        self.standard,
                        self.full,
                    )?,
                    dry_run: self.dry_run,
                    pin: self.pin.clone().filter(|cpus| !cpus.is_empty()),
                    unpinned: self.pin.as_ref().is_some_and(|cpus| cpus.is_empty()),
                    cluster,
                    cluster_by_default,
                    idle_wait: $crate::harness::cli::idle_wait(
                        self.idle_wait,
                        $crate::harness::cli::Profile::from_switches(
                            self.quick,
                            self.standard,
                            self.full,
                        )?,
                        std::env::var_os("BB_IDLE_WAIT").as_deref(),
                    )?,
                    governor: self.governor.clone(),
                    monitor: self.monitor,
                    counters: self.counters,
                    noise: self.noise.clone(),
                    seed: self.seed,
                    cooldown: $crate::harness::cli::Cooldown::from_flags(
                        self.cooldown,
                        self.cooldown_max,
                    )?,
                    fail_on_error: self.fail_on_error,
                    against: self.against.clone(),
                })
            }
        }
    };
}

/// `--precision`'s value: a percentage above 0 and below 100 (`2%`, `2`), as a fraction,
/// or `off` (0).
pub fn parse_precision(s: &str) -> std::result::Result<f64, String> {
    if s.trim() == "off" {
        return Ok(0.0);
    }
    match crate::util::parse::parse_percent(s) {
        Ok(p) if p > 0.0 && p < 1.0 => Ok(p),
        _ => Err(format!(
            "invalid precision '{s}' (expected a percentage above 0 and below 100, such as 2%, or off)"
        )),
    }
}

/// `--monitor`'s value: a duration of at least 100 ms, or 0 (off): a reading on a Pi is a
/// `vcgencmd` process, which every millisecond would be a load of its own.
pub fn parse_monitor(s: &str) -> std::result::Result<Duration, String> {
    let every = parse_duration(s)?;
    match every.is_zero() || every >= Duration::from_millis(100) {
        true => Ok(every),
        false => Err(format!(
            "invalid interval '{s}' (expected 100ms or more, or 0 for no monitor)"
        )),
    }
}

/// The longest `--idle-wait`: a board busy for a day is not going idle for the run,
/// and a longer wait is a unit mistyped (`60h` for `60s`).
pub const LONGEST_IDLE_WAIT: Duration = Duration::from_secs(24 * 3600);

/// `--idle-wait`'s value (and `BB_IDLE_WAIT`'s): a duration up to a day, 0 for none.
pub fn parse_idle_wait(s: &str) -> std::result::Result<Duration, String> {
    let wait = parse_duration(s)?;
    match wait <= LONGEST_IDLE_WAIT {
        true => Ok(wait),
        false => Err(format!(
            "invalid wait '{s}' (expected at most 24h, or 0 for no wait)"
        )),
    }
}

/// `--pin`'s value: a list of CPUs, or `none` (an empty list: unpinned).
pub fn parse_pin(s: &str) -> std::result::Result<Vec<usize>, String> {
    match s.trim() {
        "none" => Ok(Vec::new()),
        _ => parse_usize_list(s).map_err(|e| format!("{e} (expected CPUs such as 0,1, or none)")),
    }
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

/// The longest wait for an idle board: `--idle-wait`'s, else `BB_IDLE_WAIT`'s (a machine
/// running tests side by side, which never goes idle, sets it to 0), else a minute in
/// the standard and full profiles, as sbc-bench waits, and none in the quick one.
pub fn idle_wait(
    flag: Option<Duration>,
    profile: Profile,
    variable: Option<&std::ffi::OsStr>,
) -> Result<Duration> {
    if let Some(wait) = flag {
        return Ok(wait);
    }
    if let Some(value) = variable.filter(|v| !v.is_empty()) {
        let text = value.to_string_lossy();
        return parse_idle_wait(&text).map_err(|why| {
            Error::usage(format!(
                "BB_IDLE_WAIT: {}",
                crate::util::format::printable(&why)
            ))
        });
    }
    Ok(match profile {
        Profile::Quick => Duration::ZERO,
        _ => Duration::from_secs(60),
    })
}

/// The cluster the run is pinned to, and whether the default chose it: `--cluster`'s,
/// checked (not beside `--pin`, one the board has, and unless in a `--dry-run`, which
/// pins nothing, with a core this process may run on; its cores cut to those); with
/// neither flag on a big.LITTLE board, the big cluster where this process may run on it,
/// since a run left to the scheduler lands on either and its figure with it. Outside a
/// `--dry-run` the process is pinned to it here, before any placement is chosen.
pub fn resolve_cluster(
    choice: Option<ClusterChoice>,
    pinned: bool,
    dry_run: bool,
) -> Result<(Option<Cluster>, bool)> {
    use crate::system::topology::{cpu_ranges, Topology};
    if choice.is_some() && pinned {
        return Err(Error::usage(
            "--cluster and --pin both say where to run: give one",
        ));
    }
    let topology = Topology::read(&crate::system::sysfs::sysroot());
    let allowed = crate::system::pinning::allowed_cpus();
    let on_allowed = |cluster: &Cluster| {
        let mut cut = cluster.clone();
        cut.cpus.retain(|c| dry_run || allowed.contains(c));
        (!cut.cpus.is_empty()).then_some(cut)
    };
    let Some(choice) = choice else {
        let by_default = match (pinned, topology.heterogeneous()) {
            (false, true) => topology.big().and_then(|big| on_allowed(&big)),
            _ => None,
        };
        if let Some(cluster) = by_default.as_ref().filter(|_| !dry_run) {
            pin_to_cluster(cluster, "by default")?;
        }
        let chosen = by_default.is_some();
        return Ok((by_default, chosen));
    };
    let shown = match choice {
        ClusterChoice::Big => "big".to_string(),
        ClusterChoice::Little => "little".to_string(),
        ClusterChoice::Policy(n) => n.to_string(),
    };
    let cluster = topology
        .pick(choice)
        .map_err(|why| Error::usage(format!("--cluster {shown}: {why}")))?;
    match on_allowed(&cluster) {
        Some(cut) => {
            if !dry_run {
                pin_to_cluster(&cut, &format!("--cluster {shown}"))?;
            }
            Ok((Some(cut), false))
        }
        None => Err(Error::usage(format!(
            "--cluster {shown}: none of its cores ({}) is one this process may run on (cpu{})",
            cluster.cpu_names(),
            cpu_ranges(&allowed)
        ))),
    }
}

/// Pins this process to `cluster`'s cores; `why` names what chose it in the error.
fn pin_to_cluster(cluster: &Cluster, why: &str) -> Result<()> {
    crate::system::pinning::pin_process(&cluster.cpus)
        .map_err(|e| Error::usage(format!("{why} ({}): {e}", cluster.cpu_names())))
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::bench_args! {
        /// Test arguments.
        pub struct TestArgs {
            /// a list of thread counts
            #[argh(option, from_str_fn(crate::harness::cli::parse_usize_list))]
            pub threads: Option<Vec<usize>>,
        }
    }

    #[test]
    fn flags_override_profile() {
        let flags = CommonArgs {
            iterations: Some(7),
            mode: Some(Mode::Sample),
            ..Default::default()
        };
        let s = Settings::quick().with_flags(&flags);
        assert_eq!((s.iterations, s.mode, s.forks), (7, Mode::Sample, 1));
        // --against: the quick profile's one fork becomes three pairs, unless --forks says.
        let against = CommonArgs {
            against: Some("./old".into()),
            ..Default::default()
        };
        assert_eq!(Settings::quick().with_flags(&against).forks, 3);
        assert_eq!(Settings::full().with_flags(&against).forks, 5);
        let one = CommonArgs {
            forks: Some(1),
            ..against
        };
        assert_eq!(Settings::quick().with_flags(&one).forks, 1);
    }

    #[test]
    fn precision_takes_a_percentage_or_off() {
        assert_eq!(parse_precision("2%"), Ok(0.02));
        assert_eq!(parse_precision("0.5"), Ok(0.005));
        assert_eq!(parse_precision("off"), Ok(0.0));
        for bad in ["0", "0%", "100%", "-1", "x", ""] {
            let e = parse_precision(bad).unwrap_err();
            assert!(e.contains("invalid precision"), "{bad}: {e}");
        }
        match parse_from::<TestArgs>(&["--precision", "200%"]) {
            Err(ParseExit::Usage(e)) => assert!(e.to_string().contains("--precision"), "{e}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn pin_takes_cpus_or_none() {
        let common = |argv: &[&str]| parse_from::<TestArgs>(argv).unwrap().common().unwrap();
        let c = common(&["--pin", "none"]);
        assert_eq!((c.pin, c.unpinned), (None, true));
        let c = common(&["--pin", "0,1"]);
        assert_eq!((c.pin, c.unpinned), (Some(vec![0, 1]), false));
        let c = common(&[]);
        assert_eq!((c.pin, c.unpinned), (None, false));
        match parse_from::<TestArgs>(&["--pin", "nope"]) {
            Err(ParseExit::Usage(e)) => {
                let e = e.to_string();
                assert!(e.contains("--pin") && e.contains("or none"), "{e}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn common_flags_parse_and_bad_flags_get_one_line() {
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
