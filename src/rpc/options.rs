//! bb-rpc's flags checked and resolved against the profile: every axis of the benchmark
//! matrix ([`Options`]), and `bb-rpc serve`'s server ([`ServeOptions`]). Each check's
//! message names its flag; a bad value is exit code 2.

use super::args::{Args, Rates, ServeArgs, DEFAULT_MAX_CONNECTIONS};
use super::config::ClientConfig;
use super::plan::{frame_len, in_flight, Style, Target};
use super::protocol::Codec;
use super::server::ServerConfig;
use super::sweep::LOADS;
use crate::harness::cli::{self, CommonArgs, HasCommon};
use crate::model::modes::Mode;
use crate::net::addr::Addr;
use crate::system::pinning::{placements, Pinning};
use crate::util::error::{Error, Result};
use std::time::Duration;

/// Calls in flight per connection at most: each holds a request and its reply.
const MAX_DEPTH: u64 = 65536;

/// What a row offers: nothing (a closed loop), a rate per connection, or a share of its
/// group's closed-loop maximum (`--rate sweep`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Offered {
    Closed,
    Rate(f64),
    Share(f64),
}

/// Every choice the flags made, checked: the rows are all their combinations.
#[derive(Clone)]
pub(crate) struct Options {
    pub common: CommonArgs,
    pub targets: Vec<Target>,
    pub payloads: Vec<u64>,
    pub styles: Vec<Style>,
    pub codecs: Vec<Codec>,
    pub depths: Vec<usize>,
    /// The floor at depth 1 for sync, and at each depth the pipelined styles run at (or
    /// that --depth names).
    pub floor_depths: Vec<usize>,
    pub connections: Vec<usize>,
    pub offered: Vec<Offered>,
    /// The clients' codec, frame limit and timeout; each row sets its codec and address.
    pub client: ClientConfig,
    /// Throughput or average time: pipelines drain at the end of every invocation.
    pub timed: bool,
    /// Where a spawned server's client and server run, each a row of its own: the first
    /// is the main placement, where every row runs; the others have the headline rows
    /// (sync at depth 1 and its floor), so the answer can say both.
    pub placements: Vec<Pinning>,
}

impl Options {
    pub fn from_args(args: &Args) -> Result<Options> {
        let common = args.common()?;
        let profile = common.profile;
        let codecs = args
            .codec
            .clone()
            .unwrap_or(vec![Codec::Raw, Codec::Msgpack]);
        let offered = offered(args, &common)?;
        let open_loop = args.rate.is_some();
        let styles = match open_loop {
            true => vec![Style::Async],
            false => args
                .client
                .clone()
                .unwrap_or(vec![Style::Sync, Style::Async, Style::Future]),
        };
        let depths = args.depth.clone().unwrap_or(match open_loop {
            true => vec![64],
            false => profile.pick(vec![1, 64], vec![1, 64], vec![1, 8, 64]),
        });
        let connections = args.connections.clone().unwrap_or(vec![1]);
        let payloads = args.payload.clone().unwrap_or(profile.pick(
            vec![16],
            vec![16, 1024],
            vec![16, 1024, 65536],
        ));
        let max_frame = max_frame(args.max_frame)?;
        let timeout = args.call_timeout.unwrap_or(Duration::from_secs(10));
        check_depths(&depths)?;
        check_connections(&connections, args.connect.is_none())?;
        check_payloads(&payloads, max_frame)?;
        check_memory(
            &styles,
            &depths,
            &payloads,
            &connections,
            args.connect.is_none(),
        )?;
        if timeout.is_zero() {
            return Err(Error::usage("--call-timeout must be longer than 0"));
        }
        let targets = targets(args)?;
        if styles.contains(&Style::Floor) && args.connect.is_some() {
            return Err(Error::usage(
                "--client floor needs the spawned server (it has no RPC layer to reach with --connect)",
            ));
        }
        let mode = common.mode.unwrap_or(Mode::Throughput);
        let pipelined = args.depth.is_some() || styles.iter().any(|s| s.pipelined());
        let floor_depths: Vec<usize> = std::iter::once(1)
            .chain(depths.iter().copied().filter(|&d| pipelined && d > 1))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        Ok(Options {
            targets,
            payloads,
            styles,
            codecs,
            depths,
            floor_depths,
            connections,
            offered,
            client: ClientConfig {
                addr: Addr::Unix(Default::default()),
                codec: Codec::Raw,
                max_frame,
                timeout,
            },
            timed: matches!(mode, Mode::Throughput | Mode::AverageTime),
            placements: placements(common.pin.as_deref(), common.unpinned),
            common,
        })
    }
}

/// What the rows offer: open-loop rows run alone, over the pipelined client, in sample
/// mode.
fn offered(args: &Args, common: &CommonArgs) -> Result<Vec<Offered>> {
    let Some(rates) = &args.rate else {
        return Ok(vec![Offered::Closed]);
    };
    if args.client.is_some() {
        return Err(Error::usage(
            "--rate drives its own pipelined client (bb.rpc.open): leave out --client",
        ));
    }
    if common.mode.is_some_and(|m| m != Mode::Sample) {
        return Err(Error::usage(
            "--rate measures latency at a load: it runs in --mode sample only",
        ));
    }
    Ok(match rates {
        Rates::Fixed(rates) => rates.iter().map(|&r| Offered::Rate(r)).collect(),
        Rates::Sweep => LOADS.iter().map(|&l| Offered::Share(l)).collect(),
    })
}

fn check_depths(depths: &[usize]) -> Result<()> {
    for &d in depths {
        cli::check_positive("--depth", d as u64)?;
        cli::check_at_most(
            "--depth",
            d as u64,
            MAX_DEPTH,
            "calls in flight per connection",
        )?;
    }
    Ok(())
}

fn check_connections(connections: &[usize], spawned: bool) -> Result<()> {
    for &c in connections {
        cli::check_positive("--connections", c as u64)?;
        // The spawned server keeps one connection for its stats (the control one).
        if spawned {
            cli::check_at_most(
                "--connections",
                c as u64,
                DEFAULT_MAX_CONNECTIONS as u64 - 1,
                "connections to the spawned server (its --max-connections, less the control connection)",
            )?;
        }
    }
    Ok(())
}

fn check_payloads(payloads: &[u64], max_frame: u32) -> Result<()> {
    for &p in payloads {
        // Echo's reply is its payload plus at most 5 bytes of MessagePack header.
        if p + 5 > max_frame as u64 {
            return Err(Error::usage(format!(
                "--payload {p}: larger than --max-frame {max_frame} allows"
            )));
        }
    }
    Ok(())
}

/// Refuses a run whose calls would not fit in memory, before anything is allocated: on
/// each connection the client holds the calls it has in flight, up to the flow-control
/// window ([`in_flight`]), twice (the requests of one write; a future's replies kept for
/// its caller), and four frames besides (the call encoded once, its reply, the frame being
/// read, the sync stub's call); a paired floor, its calls in flight and a read buffer; a
/// spawned server, a request and its reply. It must fit in what the machine has
/// (MemAvailable), and in what the address-space limit (`ulimit -v`) leaves this process
/// where that is lower. One line naming `--depth` and `--payload`, exit 2.
fn check_memory(
    styles: &[Style],
    depths: &[usize],
    payloads: &[u64],
    connections: &[usize],
    spawned: bool,
) -> Result<()> {
    let (Some(&p), Some(&c)) = (payloads.iter().max(), connections.iter().max()) else {
        return Ok(());
    };
    let deep = styles.iter().any(|s| s.pipelined() || *s == Style::Floor);
    let d = match deep {
        true => depths.iter().copied().max().unwrap_or(1),
        false => 1,
    };
    let needed = memory_needed(
        styles.contains(&Style::Floor),
        in_flight(d, p),
        p,
        c,
        spawned,
    );
    let Some((room, whose)) = crate::system::cpu::memory_room() else {
        return Ok(());
    };
    if needed <= room {
        return Ok(());
    }
    let flags = match (deep, c) {
        (true, 1) => format!("--depth {d} with --payload {p}"),
        (true, _) => format!("--depth {d} with --payload {p} and --connections {c}"),
        (false, _) => format!("--payload {p} with --connections {c}"),
    };
    Err(Error::usage(format!(
        "{flags}: the run would need about {} MiB of memory and {whose} {} MiB",
        needed.div_ceil(1 << 20),
        room >> 20
    )))
}

/// The bytes a run holds with `connections` connections each keeping `calls` calls of
/// `payload` bytes in flight (and a paired `floor` as deep), a `spawned` server's
/// included: see [`check_memory`].
fn memory_needed(
    floor: bool,
    calls: usize,
    payload: u64,
    connections: usize,
    spawned: bool,
) -> u64 {
    let calls = calls as u64;
    let floor = if floor { calls.saturating_add(1) } else { 0 };
    let server = if spawned { 2 } else { 0 };
    let frames = calls
        .saturating_mul(2)
        .saturating_add(4 + server)
        .saturating_add(floor);
    frame_len(payload)
        .saturating_mul(frames)
        .saturating_mul(connections as u64)
}

/// The server given (`--connect`), or one spawned per benchmark on each `--transport`.
fn targets(args: &Args) -> Result<Vec<Target>> {
    Ok(match (&args.connect, &args.transport) {
        (Some(_), Some(_)) => {
            return Err(Error::usage(
                "--transport applies to the spawned server only, not with --connect",
            ))
        }
        (Some(addr), None) => vec![Target::Remote(addr.clone())],
        (None, t) => t
            .clone()
            .unwrap_or(vec!["unix".into(), "tcp".into()])
            .iter()
            .map(|t| Target::Local {
                transport: if t == "unix" { "unix" } else { "tcp" },
            })
            .collect(),
    })
}

/// `--max-frame`, on both sides: at least 1, at most what a frame's u32 length holds.
fn max_frame(flag: Option<u64>) -> Result<u32> {
    let bytes = flag.unwrap_or(crate::wire::DEFAULT_MAX_FRAME as u64);
    cli::check_positive("--max-frame", bytes)?;
    u32::try_from(bytes).map_err(|_| Error::usage(format!("--max-frame {bytes}: at most 4g - 1")))
}

/// `bb-rpc serve`'s flags, checked.
pub(crate) struct ServeOptions {
    pub listen: Addr,
    pub pin: Option<Vec<usize>>,
    pub server: ServerConfig,
}

impl ServeOptions {
    pub fn from_args(args: &Args, serve: &ServeArgs) -> Result<ServeOptions> {
        let pin = args.common()?.pin;
        cli::check_positive("--max-connections", serve.max_connections as u64)?;
        Ok(ServeOptions {
            listen: serve.listen.clone(),
            pin,
            server: ServerConfig {
                max_frame: max_frame(serve.max_frame)?,
                idle_timeout: serve.idle_timeout.unwrap_or(Duration::from_secs(60)),
                max_connections: serve.max_connections,
                floor: serve.floor,
                quiet: serve.quiet,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(argv: &[&str]) -> Result<Options> {
        Options::from_args(&cli::parse_from(argv).unwrap())
    }

    /// The message of the usage error `argv` gives.
    fn refused(argv: &[&str]) -> String {
        crate::harness::checks::usage_message(options(argv), &argv)
    }

    #[test]
    fn a_bad_value_is_refused_with_its_flag_named() {
        for (argv, flag) in [
            (&["--depth", "0"][..], "--depth"),
            (&["--depth", "1,70000"], "--depth 70000"),
            (&["--connections", "0"], "--connections"),
            (&["--connections", "1024"], "--connections 1024"),
            (&["--payload", "20m"], "--payload 20971520"),
            (
                &["--payload", "1k", "--max-frame", "1k"],
                "--max-frame 1024",
            ),
            (&["--max-frame", "0"], "--max-frame"),
            (&["--max-frame", "5g"], "--max-frame 5368709120"),
            (&["--call-timeout", "0"], "--call-timeout"),
            (&["--rate", "1k", "--client", "sync"], "--client"),
            (&["--rate", "1k", "--mode", "thrpt"], "--mode sample"),
            (
                &["--connect", "tcp:a:1", "--transport", "unix"],
                "--transport",
            ),
            (
                &["--connect", "tcp:a:1", "--client", "floor"],
                "--client floor",
            ),
        ] {
            let e = refused(argv);
            assert!(e.contains(flag), "{argv:?}: {e}");
        }
    }

    #[test]
    fn good_values_pass() {
        let o = options(&[]).unwrap();
        assert_eq!(o.depths, [1, 64]);
        assert_eq!(o.payloads, [16, 1024]);
        assert_eq!(o.offered, [Offered::Closed]);
        assert!(o.timed);
        assert_eq!(options(&["--full"]).unwrap().depths, [1, 8, 64]);
        assert_eq!(options(&["--quick"]).unwrap().payloads, [16]);
        // A server given may take more connections than a spawned one.
        let o = options(&["--connect", "tcp:a:1", "--connections", "2000"]).unwrap();
        assert_eq!(o.connections, [2000]);
        assert!(matches!(&o.targets[..], [Target::Remote(_)]));
        let o = options(&["--rate", "sweep", "--mode", "sample"]).unwrap();
        assert_eq!(o.styles, [Style::Async]);
        assert_eq!(o.depths, [64]);
        assert_eq!(o.offered.len(), LOADS.len());
        assert!(!o.timed);
        let o = options(&["--payload", "16m", "--max-frame", "17m", "--client", "sync"]);
        assert_eq!(o.unwrap().client.max_frame, 17 << 20);
        assert_eq!(options(&["--depth", "65536"]).unwrap().depths, [65536]);
    }

    #[test]
    fn what_the_calls_hold_must_fit_in_memory() {
        // 65536 calls of 16 MiB in flight would be 2 TiB; the window keeps one, so one
        // connection holds a few frames, on any machine.
        let deep = ["--payload", "16m", "--max-frame", "17m", "--depth", "65536"];
        for client in ["async", "future", "sync", "floor"] {
            assert!(options(&[&deep[..], &["--client", client]].concat()).is_ok());
        }
        // Connections multiply it: 100000 of them (a server given takes any number)
        // would hold terabytes.
        let many = [
            &deep[..],
            &["--connections", "100000", "--connect", "tcp:a:1"],
        ]
        .concat();
        for client in ["async", "future"] {
            let e = refused(&[&many[..], &["--client", client]].concat());
            assert!(
                e.starts_with("--depth 65536 with --payload 16777216 and --connections 100000: the run would need about "),
                "{client}: {e}"
            );
        }
        // The sync stub holds its one call; the open loop is pipelined as async is.
        let e = refused(&[&many[..], &["--client", "sync"]].concat());
        assert!(
            e.starts_with("--payload 16777216 with --connections 100000: the run would need"),
            "{e}"
        );
        let e = refused(&[&many[..], &["--rate", "1k", "--mode", "sample"]].concat());
        assert!(
            e.starts_with("--depth 65536 with --payload 16777216"),
            "{e}"
        );
    }

    #[test]
    fn the_memory_a_run_needs_counts_its_calls_in_flight_and_its_frames() {
        let frame = frame_len(1 << 20);
        // 15 calls in flight twice, four frames besides, two on the spawned server.
        assert_eq!(memory_needed(false, 15, 1 << 20, 1, true), 36 * frame);
        // A paired floor as deep, with its read buffer; connections multiply.
        assert_eq!(memory_needed(true, 15, 1 << 20, 3, false), 3 * 50 * frame);
        assert_eq!(
            memory_needed(true, usize::MAX, u64::MAX, usize::MAX, true),
            u64::MAX
        );
        // The room is MemAvailable, or the address-space limit's where lower.
        let (room, whose) = crate::system::cpu::memory_room().expect("Linux says MemAvailable");
        assert!(
            room > 0 && (whose == "MemAvailable is" || whose.ends_with("(ulimit -v) leaves")),
            "{whose}"
        );
    }

    #[test]
    fn the_floor_runs_at_1_and_at_each_pipelined_depth() {
        let depths = |argv: &[&str]| options(argv).unwrap().floor_depths;
        assert_eq!(
            depths(&["--client", "sync,async,floor", "--depth", "64,8,1"]),
            [1, 8, 64]
        );
        // Sync alone runs at depth 1: so does its floor, unless --depth asks for more.
        assert_eq!(depths(&["--client", "sync,floor"]), [1]);
        assert_eq!(depths(&["--client", "sync,floor", "--depth", "4"]), [1, 4]);
    }

    #[test]
    fn the_server_checks_its_own_flags() {
        let serve = |argv: &[&str]| {
            let args: Args = cli::parse_from(argv).unwrap();
            match &args.command {
                Some(super::super::args::Command::Serve(s)) => ServeOptions::from_args(&args, s),
                None => panic!("not serve"),
            }
        };
        let listen = ["serve", "--listen", "unix:/tmp/s"];
        let e = serve(&[&listen[..], &["--max-connections", "0"]].concat())
            .err()
            .unwrap();
        assert!(e.to_string().contains("--max-connections"), "{e}");
        let e = serve(&[&listen[..], &["--max-frame", "8g"]].concat())
            .err()
            .unwrap();
        assert!(e.to_string().contains("--max-frame"), "{e}");
        let o = serve(&[&["--pin", "0"][..], &listen[..]].concat()).unwrap();
        assert_eq!(o.pin, Some(vec![0]));
        assert_eq!(o.server.idle_timeout, Duration::from_secs(60));
        assert_eq!(o.server.max_connections, DEFAULT_MAX_CONNECTIONS);
    }
}
