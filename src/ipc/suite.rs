//! bb-ipc's suite: the local calls first (avgt), then per transport and mode its floor
//! and the remote calls, each with the local call and the floor, interleaved, as
//! baselines.

use super::calls::Call;
use super::client::{Floor, Local, Pin, Remote};
use super::options::Options;
use super::transport::Transport;
use crate::harness::benchmark::{Benchmark, PairedBaseline, Settings, Setup, TimeUnit, Workload};
use crate::harness::cli::Mode;
use crate::harness::{Profiles, Suite};
use crate::util::error::Result;
use std::time::Duration;

pub fn suite(options: &Options) -> Result<Suite> {
    // avgt for every row; sample (latency percentiles) for the remote rows too, unless
    // --mode asks for one mode.
    let (local_modes, remote_modes) = match options.flags.mode {
        Some(m) => (vec![m], vec![m]),
        None => (
            vec![Mode::AverageTime],
            vec![Mode::AverageTime, Mode::Sample],
        ),
    };
    let mut benchmarks = Vec::new();
    let mut locals = Vec::new();
    for &call in options.calls.iter().filter(|_| options.local) {
        for &mode in &local_modes {
            let b = local(call, mode, options.pin);
            locals.push((call, b.label()));
            benchmarks.push(b);
        }
    }
    for &t in &options.transports {
        for &mode in &remote_modes {
            benchmarks.push(floor(t, mode, options.pin));
            for &call in &options.calls {
                benchmarks.push(remote(call, t, mode, options.pin, &locals));
            }
        }
    }
    let mut suite = Suite::new(TimeUnit::Micros, profiles(), benchmarks);
    // Each side pins itself to its own CPU.
    suite.pin_process = false;
    suite.answer = Some(super::answer::answer);
    Ok(suite)
}

fn profiles() -> Profiles {
    let settings = |warmup_iterations, warmup_ms, iterations, time_ms, forks| Settings {
        mode: Mode::AverageTime,
        warmup_iterations,
        warmup_time: Duration::from_millis(warmup_ms),
        iterations,
        time: Duration::from_millis(time_ms),
        forks,
        timeout: Duration::from_secs(60),
    };
    Profiles {
        quick: settings(1, 50, 3, 100, 1),
        standard: settings(2, 200, 5, 300, 2),
        full: settings(3, 1000, 5, 1000, 2),
    }
}

/// `bb.ipc.local`: the call made in-process, in nanoseconds.
fn local(call: Call, mode: Mode, pin: Pin) -> Benchmark {
    let mut b = Benchmark::new(
        "bb.ipc.local",
        Box::new(move || Ok(Box::new(Local::start(call, pin)?) as Box<dyn Workload>)),
    )
    .param("call", call.name());
    b.mode = Some(mode);
    b.unit = Some(TimeUnit::Nanos);
    b.rate = Some("calls".into());
    b
}

/// `bb.ipc.floor`: the bare round trip of `transport`.
fn floor(transport: Transport, mode: Mode, pin: Pin) -> Benchmark {
    let mut b = Benchmark::new("bb.ipc.floor", floor_setup(transport, pin))
        .param("transport", transport.name());
    b.mode = Some(mode);
    b.rate = Some("round trips".into());
    b
}

/// `bb.ipc.remote`: the call into a server child, against the local call (when there
/// is one among `locals`) and against the floor.
fn remote(call: Call, t: Transport, mode: Mode, pin: Pin, locals: &[(Call, String)]) -> Benchmark {
    let mut b = Benchmark::new(
        "bb.ipc.remote",
        Box::new(move || Ok(Box::new(Remote::start(call, t, pin)?) as Box<dyn Workload>)),
    )
    .param("call", call.name())
    .param("transport", t.name());
    b.mode = Some(mode);
    b.rate = Some("calls".into());
    if let Some((_, local)) = locals.iter().find(|(c, _)| *c == call) {
        b.baselines.push(("vs local".into(), local.clone()));
    }
    // The floor in iterations interleaved with the calls', on its own server child over
    // the same transport with the same pinning.
    b.paired = Some(PairedBaseline {
        metric: "vs floor".into(),
        setup: floor_setup(t, pin),
        ops_per_invocation: None,
    });
    b
}

/// The floor of `transport`: a 1-byte ping-pong with a server child of its own.
fn floor_setup(transport: Transport, pin: Pin) -> Setup {
    Box::new(move || Ok(Box::new(Floor::start(transport, pin)?) as Box<dyn Workload>))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::cli::parse_from;
    use crate::ipc::args::Args;

    fn suite_of(argv: &[&str]) -> Suite {
        let args: Args = parse_from(argv).unwrap_or_else(|_| panic!("{argv:?}"));
        suite(&Options::from_args(&args).unwrap()).unwrap()
    }

    #[test]
    fn local_calls_then_per_transport_and_mode_the_floor_and_the_remote_calls() {
        let s = suite_of(&[
            "--calls",
            "method_no_args,method_a1",
            "--transport",
            "unix,pipes",
        ]);
        let rows: Vec<(String, &str)> = s
            .benchmarks
            .iter()
            .map(|b| (b.label(), b.mode.unwrap().short()))
            .collect();
        let row = |label: &str, mode| (label.to_string(), mode);
        assert_eq!(rows.len(), 2 + 2 * 2 * 3);
        assert_eq!(
            rows[..6],
            [
                row("bb.ipc.local (call=method_no_args)", "avgt"),
                row("bb.ipc.local (call=method_a1)", "avgt"),
                row("bb.ipc.floor (transport=unix)", "avgt"),
                row(
                    "bb.ipc.remote (call=method_no_args, transport=unix)",
                    "avgt"
                ),
                row("bb.ipc.remote (call=method_a1, transport=unix)", "avgt"),
                row("bb.ipc.floor (transport=unix)", "sample"),
            ]
        );
        assert_eq!(rows[8], row("bb.ipc.floor (transport=pipes)", "avgt"));
        let remote = &s.benchmarks[4];
        assert_eq!(
            remote.baselines,
            [(
                "vs local".to_string(),
                "bb.ipc.local (call=method_a1)".to_string()
            )]
        );
        assert!(remote.paired.is_some());
        assert_eq!(s.benchmarks[0].unit, Some(TimeUnit::Nanos));
        assert_eq!(s.unit, TimeUnit::Micros);
        assert!(!s.pin_process);
    }

    #[test]
    fn mode_asks_for_one_mode_and_no_local_leaves_out_the_local_calls() {
        let s = suite_of(&["--calls", "method_a2", "--mode", "sample"]);
        let modes: Vec<_> = s.benchmarks.iter().map(|b| b.mode.unwrap()).collect();
        // The local call, then per default transport (unix, shm) the floor and the call.
        assert_eq!(modes, [Mode::Sample; 5]);
        let s = suite_of(&["--calls", "method_a2", "--no-local"]);
        assert_eq!(s.benchmarks.len(), 2 * 4);
        assert!(s.benchmarks.iter().all(|b| b.baselines.is_empty()));
    }
}
