//! bb-rpc: how many RPCs per second with one call in flight (sync) against many (async,
//! future), over a Unix socket or TCP, and what framing and marshalling cost. Without
//! `--connect` it spawns its own server per benchmark; `bb-rpc serve` is that server.

use boardbench::harness::cli::{self, HasCommon};
use boardbench::rpc::addr::Addr;
use boardbench::rpc::client::ClientConfig;
use boardbench::rpc::open_loop::{calls_per_invocation, MAX_RATE};
use boardbench::rpc::protocol::Codec;
use boardbench::rpc::server::{self, ServerConfig};
use boardbench::rpc::sweep::{self, LOADS};
use boardbench::rpc::workload::{Plan, RpcWorkload, Style, Target};
use boardbench::{
    Benchmark, Error, Mode, PairedBaseline, Prelude, Profiles, Result, Settings, Suite, TimeUnit,
    Workload,
};
use std::time::Duration;

boardbench::bench_args! {
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
        #[argh(option, from_str_fn(boardbench::harness::cli::parse_usize_list))]
        pub depth: Option<Vec<usize>>,
        /// connections, each with its own thread, a list (default 1)
        #[argh(option, from_str_fn(boardbench::harness::cli::parse_usize_list))]
        pub connections: Option<Vec<usize>>,
        /// echo payload sizes, a list (default 16,1024; 16 with --quick; 16,1024,65536 with --full)
        #[argh(option, from_str_fn(boardbench::harness::cli::parse_size_list))]
        pub payload: Option<Vec<u64>>,
        /// largest frame payload accepted, on both sides (default 16m)
        #[argh(option, from_str_fn(boardbench::harness::cli::parse_size))]
        pub max_frame: Option<u64>,
        /// the longest wait for a connection or a reply before the run fails (default 10s)
        #[argh(option, from_str_fn(boardbench::harness::cli::parse_duration))]
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
#[derive(argh::FromArgs, Debug)]
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
    #[argh(option, from_str_fn(boardbench::harness::cli::parse_size))]
    pub max_frame: Option<u64>,
    /// close a connection that sends nothing for this long (default 60s; 0: never)
    #[argh(option, from_str_fn(boardbench::harness::cli::parse_duration))]
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

fn parse_addr(s: &str) -> std::result::Result<Addr, String> {
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
                "invalid rate '{x}' (expected calls per second per connection, above 0 and at most {}: 500, 1k, 2.5k)",
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
        if rate > 0.0 && rate <= MAX_RATE {
            Ok(rate)
        } else {
            Err(bad())
        }
    })
    .map(Rates::Fixed)
}

/// A rate as the `rate` parameter shows it: calls per second, at most three decimals.
fn rate_param(rate: f64) -> String {
    let text = format!("{rate:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn main() {
    boardbench::main_with(|| {
        let args: Args = cli::parse_args();
        match &args.command {
            Some(Command::Serve(serve)) => run_server(&args, serve),
            None => run(&args),
        }
    })
}

fn max_frame(flag: Option<u64>) -> Result<u32> {
    let bytes = flag.unwrap_or(boardbench::wire::DEFAULT_MAX_FRAME as u64);
    cli::check_positive("--max-frame", bytes)?;
    u32::try_from(bytes).map_err(|_| Error::usage(format!("--max-frame {bytes}: at most 4g - 1")))
}

fn run_server(args: &Args, serve: &ServeArgs) -> Result<()> {
    if let Some(cpus) = &args.common()?.pin {
        boardbench::pin_process(cpus)?;
    }
    cli::check_positive("--max-connections", serve.max_connections as u64)?;
    server::serve(
        &serve.listen,
        ServerConfig {
            max_frame: max_frame(serve.max_frame)?,
            idle_timeout: serve.idle_timeout.unwrap_or(Duration::from_secs(60)),
            max_connections: serve.max_connections,
            floor: serve.floor,
            quiet: serve.quiet,
        },
    )
}

/// `serve --max-connections`'s default, which the spawned servers keep.
const DEFAULT_MAX_CONNECTIONS: usize = 1024;

/// Calls in flight per connection at most: each holds a request and its reply.
const MAX_DEPTH: u64 = 65536;

/// What a row offers: nothing (a closed loop), a rate per connection, or a share of its
/// group's closed-loop maximum (`--rate sweep`).
#[derive(Debug, Clone, Copy)]
enum Offered {
    Closed,
    Rate(f64),
    Share(f64),
}

/// Every choice the flags made, checked: the rows are all their combinations.
#[derive(Clone)]
struct Matrix {
    targets: Vec<Target>,
    payloads: Vec<u64>,
    styles: Vec<Style>,
    codecs: Vec<Codec>,
    depths: Vec<usize>,
    /// The floor at depth 1 for sync, and at each depth the pipelined styles run at (or
    /// that --depth names).
    floor_depths: Vec<usize>,
    connections: Vec<usize>,
    offered: Vec<Offered>,
    client: ClientConfig,
    seed: u64,
    pin: Option<Vec<usize>>,
    /// Throughput or average time: pipelines drain at the end of every invocation.
    timed: bool,
}

/// The rows of a sweep that share one closed-loop maximum, and how to probe it.
struct SweepGroup {
    label: String,
    plan: Plan,
}

fn run(args: &Args) -> Result<()> {
    let flags = args.common()?;
    let profile = flags.profile;
    let codecs = args
        .codec
        .clone()
        .unwrap_or(vec![Codec::Raw, Codec::Msgpack]);
    // Open-loop rows run alone, over the pipelined client, in sample mode.
    let offered: Vec<Offered> = match &args.rate {
        None => vec![Offered::Closed],
        Some(rates) => {
            if args.client.is_some() {
                return Err(Error::usage(
                    "--rate drives its own pipelined client (bb.rpc.open): leave out --client",
                ));
            }
            if flags.mode.is_some_and(|m| m != Mode::Sample) {
                return Err(Error::usage(
                    "--rate measures latency at a load: it runs in --mode sample only",
                ));
            }
            match rates {
                Rates::Fixed(rates) => rates.iter().map(|&r| Offered::Rate(r)).collect(),
                Rates::Sweep => LOADS.iter().map(|&l| Offered::Share(l)).collect(),
            }
        }
    };
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
    for &d in &depths {
        cli::check_positive("--depth", d as u64)?;
        cli::check_at_most(
            "--depth",
            d as u64,
            MAX_DEPTH,
            "calls in flight per connection",
        )?;
    }
    for &c in &connections {
        cli::check_positive("--connections", c as u64)?;
        // The spawned server keeps one connection for its stats (the control one).
        if args.connect.is_none() {
            cli::check_at_most(
                "--connections",
                c as u64,
                DEFAULT_MAX_CONNECTIONS as u64 - 1,
                "connections to the spawned server (its --max-connections, less the control connection)",
            )?;
        }
    }
    for &p in &payloads {
        // Echo's reply is its payload plus at most 5 bytes of MessagePack header.
        if p + 5 > max_frame as u64 {
            return Err(Error::usage(format!(
                "--payload {p}: larger than --max-frame {max_frame} allows"
            )));
        }
    }
    if timeout.is_zero() {
        return Err(Error::usage("--call-timeout must be longer than 0"));
    }
    let targets: Vec<Target> = match (&args.connect, &args.transport) {
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
    };
    if styles.contains(&Style::Floor) && args.connect.is_some() {
        return Err(Error::usage(
            "--client floor needs the spawned server (it has no RPC layer to reach with --connect)",
        ));
    }
    let mode = flags.mode.unwrap_or(Mode::Throughput);
    let pipelined = args.depth.is_some() || styles.iter().any(|s| s.pipelined());
    let floor_depths: Vec<usize> = std::iter::once(1)
        .chain(depths.iter().copied().filter(|&d| pipelined && d > 1))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let matrix = Matrix {
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
        seed: flags.seed,
        pin: flags.pin.clone(),
        timed: matches!(mode, Mode::Throughput | Mode::AverageTime),
    };
    let profiles = Profiles {
        quick: Settings {
            warmup_time: Duration::from_millis(200),
            time: Duration::from_millis(300),
            ..Settings::quick()
        },
        standard: Settings {
            warmup_iterations: 2,
            warmup_time: Duration::from_millis(300),
            iterations: 5,
            time: Duration::from_millis(500),
            forks: 1,
            ..Settings::full()
        },
        full: Settings::full(),
    };
    let (mut benchmarks, groups) = benchmarks(&matrix, None);
    let mut prelude = None;
    if !groups.is_empty() {
        if boardbench::harness::fork::is_child() {
            let maxima = sweep::from_parent(groups.len())?;
            benchmarks = benchmarks_at(&matrix, &maxima);
        } else {
            // The probe runs as long as an iteration of the rows it sizes.
            let time = profiles.pick(profile).with_flags(&flags).time;
            prelude = Some(Prelude {
                what: format!(
                    "probing the closed-loop maximum of {} sweep group{}",
                    groups.len(),
                    if groups.len() == 1 { "" } else { "s" }
                ),
                estimate: sweep::probe_estimate(groups.len(), time),
                run: Box::new(move || {
                    let maxima = probe_maxima(&groups, time)?;
                    sweep::pass_to_forks(&maxima);
                    Ok(benchmarks_at(&matrix, &maxima))
                }),
            });
        }
    }
    boardbench::run_suite_with_prelude(
        Suite {
            unit: TimeUnit::Micros,
            profiles,
            benchmarks,
            pin_process: false,
            notes: vec![],
            prepare: vec![],
        },
        prelude,
        &flags,
    )
}

/// Each sweep group's closed-loop maximum, calls per second over its connections, each
/// printed on stderr as it is found.
fn probe_maxima(groups: &[SweepGroup], time: Duration) -> Result<Vec<f64>> {
    let mut maxima = Vec::new();
    for g in groups {
        let max = sweep::closed_loop_max(&g.plan, time)?;
        boardbench::stderr!(
            "bb-rpc: closed-loop maximum {max:.0} calls/s for {}; the sweep offers {} to {} of it",
            g.label,
            sweep::load_param(LOADS[0]),
            sweep::load_param(LOADS[LOADS.len() - 1]),
        );
        maxima.push(max);
    }
    Ok(maxima)
}

/// The rows with every sweep group's maximum known.
fn benchmarks_at(matrix: &Matrix, maxima: &[f64]) -> Vec<Benchmark> {
    benchmarks(matrix, Some(maxima)).0
}

/// The rows of `matrix`, and the groups of its sweep rows; without `maxima` (one per
/// group), a sweep row's rate shows as its share (`rate=50% of max`).
fn benchmarks(m: &Matrix, maxima: Option<&[f64]>) -> (Vec<Benchmark>, Vec<SweepGroup>) {
    let ops_per_invocation = |style: Style, depth: usize, conns: usize| {
        (m.timed && (style.pipelined() || depth > 1 || conns > 1))
            .then_some((64 * depth * conns) as u64)
    };
    let mut benchmarks = Vec::new();
    let mut groups: Vec<SweepGroup> = Vec::new();
    for target in &m.targets {
        for &payload in &m.payloads {
            for &style in &m.styles {
                let style_codecs = if style == Style::Floor {
                    vec![None]
                } else {
                    m.codecs.iter().map(|&c| Some(c)).collect()
                };
                let style_depths = match style {
                    Style::Floor => m.floor_depths.clone(),
                    s if s.pipelined() => m.depths.clone(),
                    _ => vec![1],
                };
                for codec in style_codecs {
                    for &depth in &style_depths {
                        for (&conns, &offered) in m
                            .connections
                            .iter()
                            .flat_map(|c| m.offered.iter().map(move |o| (c, o)))
                        {
                            let mut plan = Plan {
                                target: target.clone(),
                                style,
                                client: ClientConfig {
                                    codec: codec.unwrap_or(Codec::Raw),
                                    ..m.client.clone()
                                },
                                payload: payload as usize,
                                depth,
                                connections: conns,
                                seed: m.seed,
                                pin: m.pin.clone(),
                                rate: None,
                            };
                            // With the floor asked for, every RPC row also measures it in
                            // interleaved iterations, on a floor server of its own with the
                            // same transport, payload, depth, connections and pinning.
                            let paired = (m.styles.contains(&Style::Floor)
                                && style != Style::Floor)
                                .then(|| {
                                    let floor = plan.floor();
                                    PairedBaseline {
                                        metric: "vs floor".into(),
                                        setup: Box::new(move || {
                                            Ok(Box::new(RpcWorkload::setup(&floor)?)
                                                as Box<dyn Workload>)
                                        }),
                                        ops_per_invocation: ops_per_invocation(
                                            Style::Floor,
                                            depth,
                                            conns,
                                        ),
                                    }
                                });
                            let transport = match target {
                                Target::Local { transport } => transport.to_string(),
                                Target::Remote(a) => a.transport().to_string(),
                            };
                            let name = match offered {
                                Offered::Closed => style.name(),
                                _ => "open",
                            };
                            let group_params = [
                                ("transport", transport),
                                ("codec", codec.map_or("none", |c| c.name()).to_string()),
                                ("payload", payload.to_string()),
                                ("depth", depth.to_string()),
                                ("connections", conns.to_string()),
                            ];
                            // A share's rate per connection, once its group's maximum is known.
                            let (rate, load) = match offered {
                                Offered::Closed => (None, None),
                                Offered::Rate(r) => (Some(r), None),
                                Offered::Share(share) => {
                                    let label = group_params
                                        .iter()
                                        .map(|(k, v)| format!("{k}={v}"))
                                        .collect::<Vec<_>>()
                                        .join(", ");
                                    let label = format!("bb.rpc.open ({label})");
                                    let group = match groups.iter().position(|g| g.label == label) {
                                        Some(i) => i,
                                        None => {
                                            groups.push(SweepGroup {
                                                label,
                                                plan: plan.clone(),
                                            });
                                            groups.len() - 1
                                        }
                                    };
                                    let rate = maxima.map(|all| {
                                        (share * all[group] / conns as f64)
                                            .round()
                                            .clamp(1.0, MAX_RATE)
                                    });
                                    (rate, Some(share))
                                }
                            };
                            plan.rate = rate;
                            let mut b = Benchmark::new(
                                format!("bb.rpc.{name}"),
                                Box::new(move || {
                                    Ok(Box::new(RpcWorkload::setup(&plan)?) as Box<dyn Workload>)
                                }),
                            );
                            for (k, v) in group_params {
                                b = b.param(k, v);
                            }
                            b.threads = conns;
                            b.ops_per_invocation = ops_per_invocation(style, depth, conns);
                            b.paired = paired;
                            if !matches!(offered, Offered::Closed) {
                                b.mode = Some(Mode::Sample);
                                // The achieved rate, over all connections, beside the latencies.
                                b.rate = Some("calls".into());
                            }
                            match (rate, load) {
                                (Some(rate), _) => {
                                    let per_connection = calls_per_invocation(rate);
                                    b = b.param("rate", rate_param(rate));
                                    b.ops_per_invocation = Some(per_connection * conns as u64);
                                    b.offered_rate = Some(rate * conns as f64);
                                    b.invocation_estimate =
                                        Some(Duration::from_secs_f64(per_connection as f64 / rate));
                                }
                                // Before the probe: the plan shows the share.
                                (None, Some(share)) => {
                                    b = b.param(
                                        "rate",
                                        format!("{} of max", sweep::load_param(share)),
                                    );
                                    b.invocation_estimate = Some(OPEN_LOOP_INVOCATION);
                                }
                                (None, None) => {}
                            }
                            if let Some(share) = load {
                                b = b.param("load", sweep::load_param(share));
                            }
                            benchmarks.push(b);
                        }
                    }
                }
            }
        }
    }
    (benchmarks, groups)
}

/// An open-loop invocation's length where its rate is not known yet (a sweep's plan):
/// the slice of the schedule each holds, at rates above 100 calls/s.
const OPEN_LOOP_INVOCATION: Duration = Duration::from_millis(10);
