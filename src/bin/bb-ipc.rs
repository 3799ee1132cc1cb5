//! bb-ipc: what does a method call into another process cost here, by argument shape,
//! against a local call? A server child answers calls (no args, a default, 1/2/3 args,
//! varargs, keywords, a block that calls back) over a Unix socket or another transport,
//! as dRuby's `drbunix:` benchmark on a Raspberry Pi did; beside each transport, its bare
//! 1-byte round trip (the floor), and the same functions called in-process.

use boardbench::harness::cli::{self, HasCommon, Mode};
use boardbench::ipc::calls::{self, Call};
use boardbench::ipc::client::{Floor, Local, Pin, Remote};
use boardbench::ipc::transport::Transport;
use boardbench::{
    Benchmark, Error, PairedBaseline, Profiles, Result, Settings, Setup, Suite, TimeUnit, Workload,
};
use std::time::Duration;

boardbench::bench_args! {
    /// Measure a method call into another process against a local call.
    #[argh(
        example = "bb-ipc --quick\nbb-ipc --transport unix,pipes,tcp --calls method_no_args,method_block\nbb-ipc --pin 0,1 --format bm\nbb-ipc --pin 0 --mode sample"
    )]
    pub struct Args {
        /// transports, a list of unix, seqpacket, socketpair, pipes, tcp (default unix)
        #[argh(option, from_str_fn(parse_transports))]
        pub transport: Option<Vec<Transport>>,
        /// calls, a list (default all): method_no_args, method_default, method_a1, method_a2, method_a3, method_args, method_keywords, method_block
        #[argh(option, from_str_fn(parse_calls))]
        pub calls: Option<Vec<Call>>,
        /// leave out the local calls (and so the remote/local ratios)
        #[argh(switch)]
        pub no_local: bool,
    }
}

fn parse_transports(s: &str) -> std::result::Result<Vec<Transport>, String> {
    Ok(cli::parse_choices(s, &Transport::names())?
        .iter()
        .filter_map(|t| Transport::from_name(t))
        .collect())
}

fn parse_calls(s: &str) -> std::result::Result<Vec<Call>, String> {
    Ok(cli::parse_choices(s, &Call::names())?
        .iter()
        .filter_map(|c| Call::from_name(c))
        .collect())
}

fn main() {
    boardbench::ipc::server::serve_if_child();
    boardbench::main_with(|| {
        let args: Args = cli::parse_args();
        run(&args)
    })
}

fn run(args: &Args) -> Result<()> {
    let flags = args.common()?;
    let transports = args.transport.clone().unwrap_or(vec![Transport::Unix]);
    let calls = args.calls.clone().unwrap_or(calls::ALL.to_vec());
    let pin = pin(flags.pin.as_deref())?;
    // avgt for every row; sample (latency percentiles) for the remote rows too, unless
    // --mode asks for one mode.
    let (local_modes, remote_modes) = match flags.mode {
        Some(m) => (vec![m], vec![m]),
        None => (
            vec![Mode::AverageTime],
            vec![Mode::AverageTime, Mode::Sample],
        ),
    };
    let mut benchmarks = Vec::new();
    let mut local_labels = Vec::new();
    for &call in calls.iter().filter(|_| !args.no_local) {
        for &mode in &local_modes {
            let mut b = Benchmark::new(
                "bb.ipc.local",
                Box::new(move || Ok(Box::new(Local::start(call, pin)?) as Box<dyn Workload>)),
            )
            .param("call", call.name());
            b.mode = Some(mode);
            b.unit = Some(TimeUnit::Nanos);
            b.rate = Some("calls".into());
            local_labels.push((call, b.label()));
            benchmarks.push(b);
        }
    }
    for &t in &transports {
        for &mode in &remote_modes {
            let mut floor =
                Benchmark::new("bb.ipc.floor", floor_setup(t, pin)).param("transport", t.name());
            floor.mode = Some(mode);
            floor.rate = Some("round trips".into());
            benchmarks.push(floor);
            for &call in &calls {
                let mut b = Benchmark::new(
                    "bb.ipc.remote",
                    Box::new(move || {
                        Ok(Box::new(Remote::start(call, t, pin)?) as Box<dyn Workload>)
                    }),
                )
                .param("call", call.name())
                .param("transport", t.name());
                b.mode = Some(mode);
                b.rate = Some("calls".into());
                if let Some((_, local)) = local_labels.iter().find(|(c, _)| *c == call) {
                    b.baselines.push(("vs local".into(), local.clone()));
                }
                // The floor in iterations interleaved with the calls', on its own server
                // child over the same transport with the same pinning.
                b.paired = Some(PairedBaseline {
                    metric: "vs floor".into(),
                    setup: floor_setup(t, pin),
                    ops_per_invocation: None,
                });
                benchmarks.push(b);
            }
        }
    }
    let settings = |warmup_iterations, warmup_ms, iterations, time_ms, forks| Settings {
        mode: Mode::AverageTime,
        warmup_iterations,
        warmup_time: Duration::from_millis(warmup_ms),
        iterations,
        time: Duration::from_millis(time_ms),
        forks,
        timeout: Duration::from_secs(60),
    };
    let profiles = Profiles {
        quick: settings(1, 50, 3, 100, 1),
        standard: settings(2, 200, 5, 300, 2),
        full: settings(3, 1000, 5, 1000, 2),
    };
    let mut suite = Suite::new(TimeUnit::Micros, profiles, benchmarks);
    suite.pin_process = false;
    boardbench::run_suite(suite, &flags)
}

/// The floor of `transport`: a 1-byte ping-pong with a server child of its own.
fn floor_setup(transport: Transport, pin: Pin) -> Setup {
    Box::new(move || Ok(Box::new(Floor::start(transport, pin)?) as Box<dyn Workload>))
}

/// `--pin CLIENT,SERVER`, or `--pin CPU` for both on one CPU; each must be one this
/// process may run on.
fn pin(cpus: Option<&[usize]>) -> Result<Pin> {
    let Some(cpus) = cpus else {
        return Ok(Pin::default());
    };
    if cpus.len() > 2 {
        return Err(Error::usage(
            "--pin takes CLIENT_CPU,SERVER_CPU or one CPU for both",
        ));
    }
    let allowed = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0))
        .map_err(|e| Error::failed(format!("reading this process's CPUs: {e}")))?;
    for &cpu in cpus {
        if !allowed.is_set(cpu).unwrap_or(false) {
            return Err(Error::usage(format!(
                "--pin: CPU {cpu} is not one this process may run on"
            )));
        }
    }
    Ok(Pin {
        client: Some(cpus[0]),
        server: Some(*cpus.last().unwrap_or(&cpus[0])),
    })
}
