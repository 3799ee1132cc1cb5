//! bb-ipc's suite: the local calls first (avgt), then per transport, mode and placement
//! its floor and the remote calls, each with the local call and the floor, interleaved,
//! as baselines. The main placement (the first) has every call; the others the plain
//! call and the floor, so the answer can say what a call costs on one core and across two.

use super::calls::Call;
use super::client::{Floor, Local, Pin, Remote};
use super::options::Options;
use super::transport::Transport;
use super::Row;
use crate::harness::benchmark::{Benchmark, PairedBaseline, Settings, Setup, TimeUnit, Workload};
use crate::harness::cli::Mode;
use crate::harness::{Profiles, Suite};
use crate::model::answer::{with_rows, PLACEMENT};
use crate::system::pinning::Pinning;
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
    // What each benchmark measures, for the answer.
    let mut rows = Vec::new();
    let mut locals = Vec::new();
    let main = &options.placements[0];
    for &call in options.calls.iter().filter(|_| options.local) {
        for &mode in &local_modes {
            // One side: on the main placement's client CPU.
            let mut b = local(call, mode, Pin::of(main));
            b.headline = Some(call) == options.calls.first().copied();
            locals.push((call, b.label()));
            benchmarks.push(b);
            rows.push(Row::Local { call });
        }
    }
    let plain = options.calls.first().copied();
    for &t in &options.transports {
        for &mode in &remote_modes {
            for placement in &options.placements {
                let mut f = floor(t, mode, placement);
                // The answer quotes avgt rows where both modes ran.
                f.headline = mode == Mode::AverageTime || remote_modes.len() == 1;
                benchmarks.push(f);
                rows.push(Row::Floor {
                    transport: t,
                    placement: placement.clone(),
                });
                for &call in &options.calls {
                    if placement == main || Some(call) == plain {
                        let mut b = remote(call, t, mode, placement, &locals);
                        // The answer quotes the plain call's time; the shapes as ratios.
                        b.headline = Some(call) == plain
                            && (mode == Mode::AverageTime || remote_modes.len() == 1);
                        benchmarks.push(b);
                        rows.push(Row::Remote {
                            call,
                            transport: t,
                            placement: placement.clone(),
                        });
                    }
                }
            }
        }
    }
    let mut suite = Suite::new(TimeUnit::Micros, profiles(), benchmarks);
    // Each side pins itself to its own CPU.
    suite.pin_process = false;
    suite.answer = Some(with_rows(rows, super::answer::answer));
    Ok(suite)
}

/// One fork's noise band: the plain call moved by up to ×1.71 between quick A/A runs,
/// the sample-mode tails most (BENCHMARKS.md, "A/A").
const NOISE_BAND: f64 = 0.40;

fn profiles() -> Profiles {
    let settings = |warmup_iterations, warmup_ms, iterations, time_ms, forks| Settings {
        mode: Mode::AverageTime,
        warmup_iterations,
        warmup_time: Duration::from_millis(warmup_ms),
        iterations,
        time: Duration::from_millis(time_ms),
        forks,
        timeout: Duration::from_secs(60),
        precision: None,
        max_forks: forks,
        noise_band: NOISE_BAND,
        run_floor: 0.0,
        noise_source: Default::default(),
    };
    Profiles {
        quick: settings(1, 50, 3, 100, 1),
        // Five forks: the fork is the unit of replication (docs/method.md), so the
        // standard profile spends its time on forks rather than longer iterations.
        standard: settings(1, 100, 3, 150, 5).with_precision(),
        full: settings(3, 1000, 5, 1000, 5),
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
fn floor(transport: Transport, mode: Mode, placement: &Pinning) -> Benchmark {
    let mut b = Benchmark::new("bb.ipc.floor", floor_setup(transport, Pin::of(placement)))
        .param("transport", transport.name())
        .param(PLACEMENT, placement.name());
    b.mode = Some(mode);
    b.rate = Some("round trips".into());
    b
}

/// `bb.ipc.remote`: the call into a server child, against the local call (when there
/// is one among `locals`) and against the floor.
fn remote(
    call: Call,
    t: Transport,
    mode: Mode,
    placement: &Pinning,
    locals: &[(Call, String)],
) -> Benchmark {
    let pin = Pin::of(placement);
    let mut b = Benchmark::new(
        "bb.ipc.remote",
        Box::new(move || Ok(Box::new(Remote::start(call, t, pin)?) as Box<dyn Workload>)),
    )
    .param("call", call.name())
    .param("transport", t.name())
    .param(PLACEMENT, placement.name());
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
    use crate::harness::aggregate::answer_over;
    use crate::harness::cli::parse_from;
    use crate::harness::runner::ForkResult;
    use crate::ipc::args::Args;

    fn suite_of(argv: &[&str]) -> Suite {
        suite_in(argv, None)
    }

    /// The suite of `argv`, in `placements` where given (as if this machine chose them).
    fn suite_in(argv: &[&str], placements: Option<Vec<Pinning>>) -> Suite {
        let args: Args = parse_from(argv).unwrap_or_else(|_| panic!("{argv:?}"));
        let mut options = Options::from_args(&args).unwrap();
        if let Some(p) = placements {
            options.placements = p;
        }
        suite(&options).unwrap()
    }

    #[test]
    fn local_calls_then_per_transport_and_mode_the_floor_and_the_remote_calls() {
        let s = suite_of(&[
            "--calls",
            "method_no_args,method_a1",
            "--transport",
            "unix,pipes",
            "--pin",
            "none",
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
                row("bb.ipc.floor (transport=unix, placement=none)", "avgt"),
                row(
                    "bb.ipc.remote (call=method_no_args, transport=unix, placement=none)",
                    "avgt"
                ),
                row(
                    "bb.ipc.remote (call=method_a1, transport=unix, placement=none)",
                    "avgt"
                ),
                row("bb.ipc.floor (transport=unix, placement=none)", "sample"),
            ]
        );
        assert_eq!(
            rows[8],
            row("bb.ipc.floor (transport=pipes, placement=none)", "avgt")
        );
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
    fn by_default_every_call_runs_across_two_cores_and_the_plain_call_on_one_too() {
        let two_cpus = vec![Pinning::TwoCores(0, 1), Pinning::OneCore(0)];
        let s = suite_in(
            &["--calls", "method_no_args,method_a1", "--mode", "avgt"],
            Some(two_cpus),
        );
        let rows: Vec<String> = s.benchmarks.iter().map(Benchmark::label).collect();
        let unix: Vec<&str> = rows
            .iter()
            .filter(|l| l.contains("transport=unix"))
            .map(String::as_str)
            .collect();
        assert_eq!(
            unix,
            [
                "bb.ipc.floor (transport=unix, placement=two-cores)",
                "bb.ipc.remote (call=method_no_args, transport=unix, placement=two-cores)",
                "bb.ipc.remote (call=method_a1, transport=unix, placement=two-cores)",
                "bb.ipc.floor (transport=unix, placement=one-core)",
                "bb.ipc.remote (call=method_no_args, transport=unix, placement=one-core)",
            ]
        );
        // No row of the default is left unpinned; a one-CPU machine has one placement.
        let one_cpu = suite_in(
            &["--calls", "method_no_args", "--mode", "avgt"],
            Some(vec![Pinning::OneCore(0)]),
        );
        assert!(one_cpu
            .benchmarks
            .iter()
            .all(|b| !b.label().contains("two-cores")));
        let defaults = suite_of(&[]);
        assert!(defaults
            .benchmarks
            .iter()
            .filter(|b| b.name != "bb.ipc.local")
            .all(|b| b.label().contains("placement=") && !b.label().contains("placement=none")));
    }

    #[test]
    fn mode_asks_for_one_mode_and_no_local_leaves_out_the_local_calls() {
        let s = suite_of(&["--calls", "method_a2", "--mode", "sample", "--pin", "none"]);
        let modes: Vec<_> = s.benchmarks.iter().map(|b| b.mode.unwrap()).collect();
        // The local call, then per default transport (unix, shm) the floor and the call.
        assert_eq!(modes, [Mode::Sample; 5]);
        let s = suite_of(&["--calls", "method_a2", "--no-local", "--pin", "none"]);
        assert_eq!(s.benchmarks.len(), 2 * 4);
        assert!(s.benchmarks.iter().all(|b| b.baselines.is_empty()));
    }

    /// A recorded run's figures: three forks of three iterations a row, the time of a
    /// call by call and transport (local calls in ns, the rest in us), on one core a
    /// third of across two, each remote call against its floor.
    fn recorded(b: &Benchmark) -> Vec<ForkResult> {
        let label = b.label();
        let has = |p: &str| label.contains(p);
        let call = match () {
            _ if has("call=method_block") => 7.0,
            _ if has("call=method_a1") => 1.25,
            _ => 1.0,
        };
        let floor = match () {
            _ if has("transport=tcp") => 22.0,
            _ if has("transport=shm") => 2.0,
            _ => 18.0,
        };
        let one_core = if has("placement=one-core") { 0.3 } else { 1.0 };
        let (time, vs_floor) = match b.name.as_str() {
            "bb.ipc.local" => (55.0 * call, None),
            "bb.ipc.floor" => (floor * one_core, None),
            _ => {
                let ratio = if has("transport=tcp") { 1.02 } else { 1.45 };
                (floor * one_core * call * ratio, Some(call * ratio))
            }
        };
        [1.0, 1.01, 0.99]
            .iter()
            .map(|f| ForkResult {
                scores: vec![time * f, time * f * 1.005, time * f * 0.995],
                metrics: vs_floor
                    .map(|v| ("vs floor".into(), "x".into(), vec![v * f; 3]))
                    .into_iter()
                    .collect(),
                ops: 1000,
                ..Default::default()
            })
            .collect()
    }

    /// The answer the suite of `argv` gives on a machine of two CPUs over the recorded
    /// figures of its rows, but those `failed`.
    fn answered(line: &str, failed: &[&str]) -> Vec<String> {
        let argv: Vec<&str> = line.split_whitespace().collect();
        let two_cpus = vec![Pinning::TwoCores(0, 1), Pinning::OneCore(0)];
        let s = suite_in(&argv, Some(two_cpus));
        let failed: Vec<usize> = (0..s.benchmarks.len())
            .filter(|&i| failed.contains(&s.benchmarks[i].label().as_str()))
            .collect();
        answer_over(&s, &failed, recorded)
    }

    #[test]
    fn the_answer_over_recorded_results() {
        let all = "--calls method_no_args,method_a1,method_block --transport unix,tcp,shm";
        assert_eq!(
            answered(all, &[]),
            [
                "unix: method_no_args costs 26.1 us ±3.5% on 2 cores, 7.83 us ±3.5% on 1 core",
                "  1.45x the bare round trip, 475x a local call (55 ns)",
                "  costliest shape: method_a1 at 32.6 us, 1.25x the plain call",
                "  a block (the server calls back) costs 7.00x a call without",
                "tcp: method_no_args costs 22.4 us ±3.5% on 2 cores, 6.73 us ±3.5% on 1 core",
                "  the bare round trip within noise",
                "shm: method_no_args costs 2.90 us ±3.5% on 2 cores, 870 ns ±3.5% on 1 core",
                "  1.45x the bare round trip",
            ]
        );
        let two = "--calls method_no_args,method_a1 --transport unix,shm --mode sample";
        assert_eq!(
            answered(two, &[]),
            [
                "unix: method_no_args costs 26.1 us ±3.5% on 2 cores, 7.83 us ±3.5% on 1 core",
                "  1.45x the bare round trip, 475x a local call (55 ns)",
                "  costliest shape: method_a1 at 32.6 us, 1.25x the plain call",
                "shm: method_no_args costs 2.90 us ±3.5% on 2 cores, 870 ns ±3.5% on 1 core",
                "  1.45x the bare round trip",
                "shm's bare round trip 2.00 us: unix's 9.00x",
            ]
        );
        let failed = [
            "bb.ipc.remote (call=method_no_args, transport=unix, placement=two-cores)",
            "bb.ipc.local (call=method_no_args)",
        ];
        // The plain call across two cores failed: the next call stands in for it.
        assert_eq!(
            answered(two, &failed),
            [
                "unix: method_a1 costs 32.6 us ±3.5% on 2 cores",
                "  1.81x the bare round trip, 475x a local call (69 ns)",
                "shm: method_no_args costs 2.90 us ±3.5% on 2 cores, 870 ns ±3.5% on 1 core",
                "  1.45x the bare round trip",
                "shm's bare round trip 2.00 us: unix's 9.00x",
            ]
        );
    }
}
