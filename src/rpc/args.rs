//! bb-rpc's flags: the benchmark's, with the common ones, and `bb-rpc serve`'s (which
//! also builds a spawned server's arguments, so that they are named in one place).

use super::open_loop::{rate_param, MAX_RATE};
use super::plan::Style;
use super::protocol::Codec;
use crate::harness::cli;
use crate::net::addr::Addr;
use std::time::Duration;

crate::bench_args! {
    /// Measure RPCs per second, sync against async, over Unix sockets and TCP.
    #[argh(
        example = "bb-rpc --quick\nbb-rpc --transport unix --codec raw --client sync,async --depth 1,64\nbb-rpc serve --listen tcp:0.0.0.0:7700      (on the board)\nbb-rpc --connect tcp:pi.local:7700          (on the laptop)"
    )]
    pub struct Args {
        #[argh(subcommand)]
        pub command: Option<Command>,
        /// a server to measure (unix:PATH or tcp:HOST:PORT); default: spawn one per benchmark
        #[argh(option, from_str_fn(parse_addr))]
        pub connect: Option<Addr>,
        /// transports of the spawned server: unix, tcp or both (default unix,tcp)
        #[argh(option, from_str_fn(parse_transports))]
        pub transport: Option<Vec<String>>,
        /// codecs: raw, msgpack (default both)
        #[argh(option, from_str_fn(parse_codecs))]
        pub codec: Option<Vec<Codec>>,
        /// client styles: sync, async, future, floor (default sync,async,future; floor is plain length-prefixed echo without the RPC layer, at depth 1 and at each depth of async and future)
        #[argh(option, from_str_fn(parse_styles))]
        pub client: Option<Vec<Style>>,
        /// calls in flight per connection for async and future, a list (default 1,64; 1,8,64 with --full)
        #[argh(option, from_str_fn(crate::harness::cli::parse_usize_list))]
        pub depth: Option<Vec<usize>>,
        /// connections, each with its own thread, a list (default 1)
        #[argh(option, from_str_fn(crate::harness::cli::parse_usize_list))]
        pub connections: Option<Vec<usize>>,
        /// echo payload sizes, a list (default 16,1024; 16 with --quick; 16,1024,65536 with --full)
        #[argh(option, from_str_fn(crate::harness::cli::parse_size_list))]
        pub payload: Option<Vec<u64>>,
        /// largest frame payload accepted, on both sides (default 16m)
        #[argh(option, from_str_fn(crate::harness::cli::parse_size))]
        pub max_frame: Option<u64>,
        /// the longest wait for a connection or a reply before the run fails (default 10s)
        #[argh(option, from_str_fn(crate::harness::cli::parse_duration))]
        pub call_timeout: Option<Duration>,
        /// open loop: calls per second per connection sent on a schedule, a list (1k,5k,20k), or sweep (10% to 100% of the closed-loop maximum); latency from each call's due time, mode sample (default: none, closed loop only)
        #[argh(option, from_str_fn(parse_rates))]
        pub rate: Option<Rates>,
    }
}

/// Subcommands.
#[derive(argh::FromArgs, Debug)]
#[argh(subcommand)]
pub enum Command {
    Serve(ServeArgs),
}

/// Serve bb-rpc's methods (echo, add, stats) until SIGINT or SIGTERM.
#[derive(argh::FromArgs, Debug, PartialEq)]
#[argh(
    subcommand,
    name = "serve",
    example = "bb-rpc serve --listen unix:/tmp/bb-rpc.sock\nbb-rpc serve --listen tcp:0.0.0.0:7700"
)]
pub struct ServeArgs {
    /// where to listen: unix:PATH or tcp:HOST:PORT (port 0: any free port; the address is printed)
    #[argh(option, from_str_fn(parse_addr))]
    pub listen: Addr,
    /// largest frame payload accepted (default 16m)
    #[argh(option, from_str_fn(crate::harness::cli::parse_size))]
    pub max_frame: Option<u64>,
    /// close a connection that sends nothing for this long (default 60s; 0: never)
    #[argh(option, from_str_fn(crate::harness::cli::parse_duration))]
    pub idle_timeout: Option<Duration>,
    /// most connections served at once; more are told so and closed (default 1024)
    #[argh(option, default = "DEFAULT_MAX_CONNECTIONS")]
    pub max_connections: usize,
    /// plain byte echo without handshake or frames (the floor of the benchmark)
    #[argh(switch)]
    pub floor: bool,
    /// no summary line when stopping
    #[argh(switch)]
    pub quiet: bool,
}

pub(crate) fn parse_addr(s: &str) -> std::result::Result<Addr, String> {
    Addr::parse(s)
}

fn parse_transports(s: &str) -> std::result::Result<Vec<String>, String> {
    cli::parse_choices(s, &["unix", "tcp"])
}

fn parse_codecs(s: &str) -> std::result::Result<Vec<Codec>, String> {
    cli::parse_list(s, Codec::parse)
}

fn parse_styles(s: &str) -> std::result::Result<Vec<Style>, String> {
    cli::parse_list(s, |x| {
        Style::parse(x).ok_or_else(|| {
            format!(
                "unknown client '{x}' (expected one of {})",
                Style::NAMES.join(", ")
            )
        })
    })
}

/// `--rate`: rates given, or a sweep of shares of the closed-loop maximum.
#[derive(Debug, Clone, PartialEq)]
pub enum Rates {
    Fixed(Vec<f64>),
    Sweep,
}

/// The smallest `--rate`: a rate is shown with three decimals (`rate=0.001`), so that a
/// smaller one would show as 0 and be planned at thousands of hours.
const MIN_RATE: f64 = 0.001;

/// Parses `--rate`: `sweep`, or calls per second, `500`, `1k`, `2.5k`, `1m` (powers of
/// 1000).
fn parse_rates(s: &str) -> std::result::Result<Rates, String> {
    if s == "sweep" {
        return Ok(Rates::Sweep);
    }
    if s.split(',').any(|x| x.trim() == "sweep") {
        return Err(format!(
            "invalid rates '{s}': sweep picks its own rates, alone (--rate sweep)"
        ));
    }
    cli::parse_list(s, |x| {
        let bad = || {
            format!(
                "invalid rate '{x}' (expected calls per second per connection, at least {} and at most {}: 500, 1k, 2.5k)",
                rate_param(MIN_RATE),
                rate_param(MAX_RATE)
            )
        };
        let (digits, scale) = match x.char_indices().last() {
            Some((i, 'k' | 'K')) => (&x[..i], 1e3),
            Some((i, 'm' | 'M')) => (&x[..i], 1e6),
            _ => (x, 1.0),
        };
        // Plain decimals only: no sign, no exponent, no inf or NaN.
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return Err(bad());
        }
        let rate = digits.parse::<f64>().map_err(|_| bad())? * scale;
        if (MIN_RATE..=MAX_RATE).contains(&rate) {
            Ok(rate)
        } else {
            Err(bad())
        }
    })
    .map(Rates::Fixed)
}

/// `serve --max-connections`'s default, which the spawned servers keep.
pub(crate) const DEFAULT_MAX_CONNECTIONS: usize = 1024;

impl ServeArgs {
    /// The arguments that start `bb-rpc serve` with these flags.
    pub(crate) fn argv(&self) -> Vec<String> {
        let mut argv = vec!["serve".into(), "--listen".into(), self.listen.to_string()];
        if let Some(bytes) = self.max_frame {
            argv.extend(["--max-frame".into(), bytes.to_string()]);
        }
        if let Some(timeout) = self.idle_timeout {
            argv.extend(["--idle-timeout".into(), format!("{}ns", timeout.as_nanos())]);
        }
        argv.extend(["--max-connections".into(), self.max_connections.to_string()]);
        for (on, flag) in [(self.floor, "--floor"), (self.quiet, "--quiet")] {
            if on {
                argv.push(flag.into());
            }
        }
        argv
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(argv: &[String]) -> Args {
        let refs: Vec<&str> = argv.iter().map(String::as_str).collect();
        cli::parse_from(&refs).unwrap()
    }

    #[test]
    fn a_spawned_servers_arguments_parse_back_to_its_flags() {
        for (floor, quiet, idle) in [
            (true, true, Duration::ZERO),
            (false, false, Duration::from_secs(60)),
        ] {
            let serve = ServeArgs {
                listen: Addr::parse("unix:/tmp/x/rpc.sock").unwrap(),
                max_frame: Some(1024),
                idle_timeout: Some(idle),
                max_connections: DEFAULT_MAX_CONNECTIONS,
                floor,
                quiet,
            };
            match parse(&serve.argv()).command {
                Some(Command::Serve(back)) => assert_eq!(back, serve),
                None => panic!("not serve: {:?}", serve.argv()),
            }
        }
        let bare = ServeArgs {
            listen: Addr::parse("tcp:127.0.0.1:0").unwrap(),
            max_frame: None,
            idle_timeout: None,
            max_connections: 3,
            floor: false,
            quiet: false,
        };
        assert_eq!(
            bare.argv(),
            [
                "serve",
                "--listen",
                "tcp:127.0.0.1:0",
                "--max-connections",
                "3"
            ]
        );
    }

    #[test]
    fn rates_parse_with_their_suffixes_and_sweep_stands_alone() {
        assert_eq!(
            parse_rates("500,1k,2.5k,1m"),
            Ok(Rates::Fixed(vec![500.0, 1e3, 2.5e3, 1e6]))
        );
        assert_eq!(parse_rates("sweep"), Ok(Rates::Sweep));
        let alone = parse_rates("sweep,1k").unwrap_err();
        assert!(
            alone.contains("sweep picks its own rates, alone"),
            "{alone}"
        );
        assert_eq!(parse_rates("0.001"), Ok(Rates::Fixed(vec![0.001])));
        for bad in [
            "0",
            "-1",
            "1e3",
            "inf",
            "x",
            "20m",
            "",
            "0.0000001",
            "0.0009",
        ] {
            let e = parse_rates(bad).unwrap_err();
            assert!(e.contains("invalid rate"), "{bad}: {e}");
        }
    }
}
