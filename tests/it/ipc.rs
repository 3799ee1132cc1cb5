//! Integration tests of bb-ipc: the real binary and its real server child. Every call on
//! every transport is checked by the binary itself (a wrong answer is exit 1, shown here
//! with an injected fault); reports parse; faults end with a clear error and exit 1; and
//! after a normal run, a failed one, and a parent killed by SIGINT, SIGTERM or SIGKILL,
//! no socket file is left in the run's TMPDIR and no child process survives.

use crate::support::{
    alive, carrying, children_of, entry, run_bounded, run_with, wait_for, Run, TempDir,
};
use std::time::Duration;

const EXE: &str = env!("CARGO_BIN_EXE_bb-ipc");
const CALLS: [&str; 8] = [
    "method_no_args",
    "method_default",
    "method_a1",
    "method_a2",
    "method_a3",
    "method_args",
    "method_keywords",
    "method_block",
];
const TRANSPORTS: [&str; 7] = [
    "unix",
    "seqpacket",
    "socketpair",
    "pipes",
    "tcp",
    "shm",
    "shm-spin",
];
const SHORT: &[&str] = &[
    "--quick",
    "--warmup",
    "0",
    "--iterations",
    "2",
    "--time",
    "20ms",
];

/// How long a run here may take before it counts as stuck and fails its test: every one
/// ends in seconds, so this bounds a hang, not a speed.
const STUCK: Duration = Duration::from_secs(300);

/// Runs bb-ipc with a TMPDIR of its own, and checks it left nothing in it; a run past
/// [`STUCK`] fails the test.
fn bb_ipc(extra: &[&str], env: &[(&str, &str)]) -> Run {
    let tmp = TempDir::new("ipc");
    let mut args = SHORT.to_vec();
    args.extend_from_slice(extra);
    let mut env = env.to_vec();
    let dir = tmp.path().to_str().unwrap().to_string();
    env.push(("TMPDIR", &dir));
    let run = run_bounded(EXE, &args, &env, STUCK);
    assert_eq!(leftovers(&tmp), Vec::<String>::new(), "{}", run.stderr);
    assert_eq!(shm_leftovers(), Vec::<String>::new(), "{}", run.stderr);
    run
}

/// bb-ipc's files in /dev/shm: there are never any (the shm transport's memory is a
/// memfd, with no name), whatever the run's end.
fn shm_leftovers() -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| name.contains("bb-ipc"))
                .collect()
        })
        .unwrap_or_default()
}

fn leftovers(tmp: &TempDir) -> Vec<String> {
    std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn every_call_on_every_transport_returns_the_checked_result() {
    let run = bb_ipc(
        &[
            "--transport",
            &TRANSPORTS.join(","),
            "--mode",
            "avgt",
            "--pin",
            "none",
            "--format",
            "json",
        ],
        &[],
    );
    run.assert_ok();
    let json = run.json();
    assert_eq!(json.as_array().unwrap().len(), 8 + TRANSPORTS.len() * 9);
    for call in CALLS {
        let local = entry(&json, "bb.ipc.local", &[("call", call)]);
        assert_eq!(local["primaryMetric"]["scoreUnit"], "ns/op");
        for t in TRANSPORTS {
            let e = entry(&json, "bb.ipc.remote", &[("call", call), ("transport", t)]);
            assert_eq!(e["mode"], "avgt");
            assert_eq!(e["primaryMetric"]["scoreUnit"], "us/op");
            let us = e["primaryMetric"]["score"].as_f64().unwrap();
            let rate = e["secondaryMetrics"]["calls/s"]["score"].as_f64().unwrap();
            assert!(us > 0.0 && rate > 0.0, "{e}");
            // vs floor from the pairs measured in this benchmark's fork; vs local a ratio
            // of the two benchmarks' means.
            assert!(
                crate::support::paired_vs_floor(e).iter().all(|r| *r > 0.0),
                "{e:#}"
            );
            let local_ns = local["primaryMetric"]["score"].as_f64().unwrap();
            let vs_local = e["secondaryMetrics"]["vs local"]["score"].as_f64().unwrap();
            assert!((vs_local - us * 1000.0 / local_ns).abs() < 1e-6 * vs_local);
            let floor = entry(&json, "bb.ipc.floor", &[("transport", t)]);
            assert!(floor["secondaryMetrics"]["vs floor"].is_null(), "{floor:#}");
            assert!(floor["boardbench"]["pairing"].is_null(), "{floor:#}");
            // The server's CPU counts: its report over the socket adds to the children's.
            let cpu = &e["boardbench"]["cpu"];
            let server_cpu =
                cpu["childrenUser"].as_f64().unwrap() + cpu["childrenSys"].as_f64().unwrap();
            assert!(server_cpu > 0.0, "{cpu}");
        }
    }
}

#[test]
fn default_modes_add_sample_percentiles_and_bm_puts_local_calls_first() {
    let run = bb_ipc(
        &[
            "--calls",
            "method_a3,method_block",
            "--transport",
            "unix",
            "--pin",
            "none",
            "--format",
            "json",
        ],
        &[],
    );
    run.assert_ok();
    let json = run.json();
    let sample: Vec<&serde_json::Value> = json
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["mode"] == "sample")
        .collect();
    assert_eq!(sample.len(), 3, "floor and two calls in sample mode too");
    for e in sample {
        let p = &e["primaryMetric"]["scorePercentiles"];
        for key in ["50.0", "99.0", "99.9", "100.0"] {
            assert!(p[key].as_f64().unwrap() > 0.0, "{key} in {e}");
        }
        assert!(p["50.0"].as_f64() <= p["100.0"].as_f64());
    }
    let bm = bb_ipc(
        &[
            "--calls",
            "method_a3,method_block",
            "--transport",
            "unix",
            "--pin",
            "none",
            "--format",
            "bm",
        ],
        &[],
    );
    bm.assert_ok();
    let rows: Vec<&str> = bm.stdout.lines().collect();
    let header: Vec<&str> = rows[0].split_whitespace().collect();
    assert_eq!(
        header,
        ["user", "system", "total", "real"],
        "Ruby's caption"
    );
    let labels: Vec<&str> = rows[1..]
        .iter()
        .map(|r| r.split("  ").next().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "bb.ipc.local (call=method_a3) [avgt]",
            "bb.ipc.local (call=method_block) [avgt]",
            "bb.ipc.floor (transport=unix, placement=none) [avgt]",
            "bb.ipc.remote (call=method_a3, transport=unix, placement=none) [avgt]",
            "bb.ipc.remote (call=method_block, transport=unix, placement=none) [avgt]",
            "bb.ipc.floor (transport=unix, placement=none) [sample]",
            "bb.ipc.remote (call=method_a3, transport=unix, placement=none) [sample]",
            "bb.ipc.remote (call=method_block, transport=unix, placement=none) [sample]",
        ]
    );
    for (r, label) in rows[1..].iter().zip(&labels) {
        // user system total (real), each a number.
        let numbers: Vec<f64> = r[label.len()..]
            .replace(['(', ')'], " ")
            .split_whitespace()
            .map(|n| n.parse().unwrap())
            .collect();
        assert_eq!(numbers.len(), 4, "{r}");
        assert!(
            (numbers[0] + numbers[1] - numbers[2]).abs() < 2e-6,
            "total = user + system: {r}"
        );
        assert!(numbers[3] > 0.0, "{r}");
    }
}

/// The faults are injected through `BB_IPC_FAULT`, which only a build with the
/// `fault-injection` feature reads (`make test` turns it on).
#[cfg(not(feature = "fault-injection"))]
#[test]
#[ignore = "injecting faults needs --features fault-injection (make test turns it on)"]
fn faults_end_with_a_clear_error_and_exit_1() {}

#[cfg(not(feature = "fault-injection"))]
#[test]
#[ignore = "injecting faults needs --features fault-injection (make test turns it on)"]
fn a_failing_benchmark_is_named_and_the_others_still_reported() {}

/// A remote call refused on both transports (the client's `bad-args`): the local call and
/// the floors are still measured and reported, each refused row is named on stderr, in
/// the text report and in the JSON's `boardbench.failed`, and the run exits 1; in a fork
/// (the reason comes back over the fork's pipe) as in the process. `--fail-on-error`
/// stops at the first: the unix rows never run.
#[cfg(feature = "fault-injection")]
#[test]
fn a_failing_benchmark_is_named_and_the_others_still_reported() {
    // Unpinned: one row per transport (the default adds each in a second placement).
    let remote = |t: &str| format!("bb.ipc.remote (call=method_a3, transport={t}, placement=none)");
    let refused = "the server refused the call (bad arguments)";
    for forks in ["0", "1"] {
        let args = [
            "--calls",
            "method_a3",
            "--transport",
            "pipes,unix",
            "--mode",
            "avgt",
            "--pin",
            "none",
        ];
        let text = bb_ipc(
            &[&args[..], &["--forks", forks]].concat(),
            &[("BB_IPC_FAULT", "bad-args")],
        );
        assert_eq!(text.code, 1, "forks {forks}: {}", text.stderr);
        for t in ["pipes", "unix"] {
            let named = format!(
                "bb-ipc: error: {}: method_a3 over {t}: {refused}",
                remote(t)
            );
            assert!(
                text.stderr.contains(&named),
                "forks {forks}: {}",
                text.stderr
            );
            let failed = format!("\nFAILED: {}: method_a3 over {t}: {refused}", remote(t));
            assert!(
                text.stdout.contains(&failed),
                "forks {forks}: {}",
                text.stdout
            );
        }
        assert!(
            text.stderr
                .ends_with("bb-ipc: error: 2 of 5 benchmarks failed\n"),
            "{}",
            text.stderr
        );
        assert!(text.stdout.starts_with("Benchmark "), "{}", text.stdout);
        let json = bb_ipc(
            &[&args[..], &["--forks", forks, "--format", "json"]].concat(),
            &[("BB_IPC_FAULT", "bad-args")],
        );
        assert_eq!(json.code, 1, "{}", json.stderr);
        let v = json.json();
        let rows: Vec<(&str, Option<&str>)> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["benchmark"].as_str().unwrap(),
                    e["params"]["transport"].as_str(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("bb.ipc.local", None),
                ("bb.ipc.floor", Some("pipes")),
                ("bb.ipc.floor", Some("unix"))
            ]
        );
        let failed: Vec<&str> = v[0]["boardbench"]["failed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["benchmark"].as_str().unwrap())
            .collect();
        assert_eq!(failed, [remote("pipes"), remote("unix")]);
        assert!(v[0]["boardbench"]["failed"][0]["error"]
            .as_str()
            .unwrap()
            .contains(refused));
    }
    let stop = bb_ipc(
        &[
            "--calls",
            "method_a3",
            "--transport",
            "pipes,unix",
            "--mode",
            "avgt",
            "--pin",
            "none",
            // In this process, in the suite's order: forks run in a shuffled one.
            "--forks",
            "0",
            "--fail-on-error",
            "--format",
            "json",
        ],
        &[("BB_IPC_FAULT", "bad-args")],
    );
    assert_eq!(stop.code, 1, "{}", stop.stderr);
    assert!(
        stop.stderr
            .ends_with(&format!("{} failed\n", "1 of 5 benchmarks")),
        "{}",
        stop.stderr
    );
    assert!(!stop.stderr.contains("transport=unix"), "{}", stop.stderr);
    let v = stop.json();
    let entries = v.as_array().unwrap();
    assert_eq!(entries.len(), 2, "the local call and the pipes floor: {v}");
    assert_eq!(
        v[0]["boardbench"]["failed"][0]["benchmark"],
        remote("pipes").as_str()
    );
}

#[cfg(feature = "fault-injection")]
#[test]
fn faults_end_with_a_clear_error_and_exit_1() {
    let wrong = "verification mismatch: method_a3 returned Int(124), expected 123";
    let refused = "the server refused the call (bad arguments)";
    let closed = "closed the connection without answering";
    for (fault, transport, message) in [
        (
            "unknown-method",
            "unix",
            "the server refused the call (unknown method): unknown method 999",
        ),
        ("bad-args", "pipes", refused),
        ("wrong-answer", "socketpair", wrong),
        ("truncate", "seqpacket", "truncated frame"),
        ("truncate", "tcp", "truncated frame"),
        ("vanish", "unix", closed),
        ("wrong-answer", "shm", wrong),
        ("bad-args", "shm-spin", refused),
        // A server gone mid-frame or mid-call: no socket to see it close, the futex
        // wait's deadline looks whether it is still there.
        ("truncate", "shm", "truncated frame"),
        ("vanish", "shm", closed),
        ("vanish", "shm-spin", closed),
    ] {
        let run = bb_ipc(
            &[
                "--calls",
                "method_a3",
                "--transport",
                transport,
                "--mode",
                "avgt",
                "--forks",
                "0",
            ],
            &[("BB_IPC_FAULT", fault)],
        );
        assert_eq!(run.code, 1, "{fault}: {}", run.stderr);
        assert!(run.stderr.contains(message), "{fault}: {}", run.stderr);
        assert!(run.stderr.contains("method_a3"), "{fault}: {}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    }
    // A server that sends half a frame and hangs: the timeout ends the run (its message
    // says so; a run that hung instead would fail by bb_ipc's bound).
    for transport in ["unix", "shm"] {
        let args: Vec<&str> = "--calls method_no_args --mode avgt --timeout 1s --transport"
            .split(' ')
            .chain([transport])
            .collect();
        let run = bb_ipc(&args, &[("BB_IPC_FAULT", "stall")]);
        assert_eq!(run.code, 1, "{transport}: {}", run.stderr);
        assert!(
            run.stderr.contains("ran past the timeout of 1s"),
            "{transport}: {}",
            run.stderr
        );
    }
}

#[test]
fn bad_flags_get_one_line_and_exit_2() {
    for (args, names) in [
        (&["--transport", "udp"][..], "udp"),
        (&["--calls", "method_x"][..], "method_x"),
        (&["--pin", "0,0,0"][..], "--pin"),
        (&["--pin", "4095"][..], "CPU 4095"),
    ] {
        let run = run_with(EXE, args, &[]);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(run.stderr.contains(names), "{}", run.stderr);
    }
}

/// Every live descendant of `pid`.
fn descendants(pid: u32) -> Vec<u32> {
    let mut all = Vec::new();
    let mut queue = vec![pid];
    while let Some(p) = queue.pop() {
        for c in children_of(p) {
            all.push(c);
            queue.push(c);
        }
    }
    all
}

/// The descendants of `pid` that are bb-ipc's server children (started with their role
/// in `BB_IPC_SERVER`, past their exec).
fn server_children(pid: u32) -> Vec<u32> {
    descendants(pid)
        .into_iter()
        .filter(|p| {
            let environ = std::fs::read(format!("/proc/{p}/environ")).unwrap_or_default();
            environ
                .split(|&b| b == 0)
                .any(|var| var.starts_with(b"BB_IPC_SERVER="))
        })
        .collect()
}

fn cpus_allowed(pid: u32) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap_or("")
        .trim()
        .to_string()
}

#[test]
fn a_parent_killed_before_its_server_child_handles_signals_leaves_nothing_behind() {
    use nix::sys::signal::{kill, Signal};
    // The server child sleeps a second before it handles signals; the parent is killed
    // meanwhile, so the child's death signal comes in that window.
    let tmp = TempDir::new("ipc-kill-early");
    let mut child = std::process::Command::new(EXE)
        .args([
            "--calls",
            "method_no_args",
            "--no-local",
            "--mode",
            "avgt",
            "--transport",
            "unix",
            "--warmup",
            "0",
            "--iterations",
            "1",
            "--forks",
            "0",
        ])
        .env("TMPDIR", tmp.path())
        .env("BB_IPC_FAULT", "slow-start")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut seen = Vec::new();
    let started = wait_for(Duration::from_secs(20), || {
        seen = descendants(pid);
        !server_children(pid).is_empty()
    });
    assert!(started, "the server child never started");
    kill(nix::unistd::Pid::from_raw(pid as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    assert!(
        wait_for(Duration::from_secs(10), || seen.iter().all(|&p| !alive(p))),
        "children {seen:?} survive"
    );
    assert!(
        wait_for(Duration::from_secs(10), || leftovers(&tmp).is_empty()),
        "left {:?}",
        leftovers(&tmp)
    );
}

#[test]
fn no_socket_file_and_no_child_survive_a_signal_to_the_parent() {
    use nix::sys::signal::{kill, Signal};
    let two_cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2;
    for (signal, forks, transport) in [
        (Signal::SIGINT, "1", "unix"),
        (Signal::SIGKILL, "0", "unix"),
        (Signal::SIGKILL, "1", "unix"),
        (Signal::SIGTERM, "0", "unix"),
        (Signal::SIGINT, "0", "shm"),
        (Signal::SIGKILL, "1", "shm"),
        (Signal::SIGTERM, "0", "shm-spin"),
    ] {
        let tmp = TempDir::new("ipc-kill");
        let mut args = vec![
            "--calls",
            "method_no_args",
            "--no-local",
            "--mode",
            "avgt",
            "--warmup",
            "0",
            "--time",
            "20s",
            "--iterations",
            "1",
            "--forks",
            forks,
            "--transport",
            transport,
        ];
        let pin = if two_cpus { "0,1" } else { "0,0" };
        if signal == Signal::SIGTERM {
            args.extend(["--pin", pin]);
        }
        let mut child = std::process::Command::new(EXE)
            .args(&args)
            .env("TMPDIR", tmp.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        // Wait until the remote benchmark runs: its server child exists.
        let mut seen = Vec::new();
        let mut servers = Vec::new();
        let running = wait_for(Duration::from_secs(20), || {
            seen = descendants(pid);
            servers = server_children(pid);
            !servers.is_empty()
        });
        assert!(running, "{signal}: the remote benchmark never started");
        if signal == Signal::SIGTERM {
            // The server pins itself once started.
            let server = servers[0];
            assert!(
                wait_for(Duration::from_secs(10), || cpus_allowed(server) == pin[2..]),
                "the server runs on the second CPU: {}",
                cpus_allowed(server)
            );
            assert_eq!(
                cpus_allowed(pid),
                &pin[..1],
                "the client runs on the first CPU"
            );
        }
        kill(nix::unistd::Pid::from_raw(pid as i32), signal).unwrap();
        let status = child.wait().unwrap();
        assert!(!status.success(), "{signal}");
        assert!(
            wait_for(Duration::from_secs(10), || seen.iter().all(|&p| !alive(p))),
            "{signal} (forks {forks}, {transport}): children {seen:?} survive"
        );
        assert!(
            wait_for(Duration::from_secs(10), || leftovers(&tmp).is_empty()),
            "{signal} (forks {forks}, {transport}): left {:?}",
            leftovers(&tmp)
        );
        assert_eq!(
            shm_leftovers(),
            Vec::<String>::new(),
            "{signal} {transport}"
        );
    }
}

#[test]
fn a_normal_run_reaps_its_children_and_removes_its_socket_files() {
    let tmp = TempDir::new("ipc-normal");
    // Every process of the run (its forks, their servers) inherits the marker, so what
    // outlives the run is found after it, however briefly each lived: nothing here has
    // to catch a process while it runs.
    let marker = tmp.path().to_str().unwrap().to_string();
    let args = [
        SHORT,
        &[
            "--calls",
            "method_no_args,method_block",
            "--transport",
            "unix,seqpacket,shm",
            "--format",
            "json",
        ],
    ]
    .concat();
    let env = [
        ("TMPDIR", marker.as_str()),
        ("BB_TEST_RUN", marker.as_str()),
    ];
    let run = run_bounded(EXE, &args, &env, STUCK);
    run.assert_ok();
    // There were children to reap: each benchmark ran in a fork, and each remote one
    // against a server of its own.
    let json = run.json();
    let entries = json.as_array().unwrap();
    assert!(
        entries.iter().all(|e| e["forks"] == 1),
        "a fork each: {json:#}"
    );
    for transport in ["unix", "seqpacket", "shm"] {
        assert!(
            entries
                .iter()
                .any(|e| e["params"]["transport"] == transport),
            "{transport}: {json:#}"
        );
    }
    assert_eq!(carrying(&marker), Vec::<u32>::new(), "outlived the run");
    // A socket file lives from bind to the client's connect: what counts is that none is
    // left.
    assert!(leftovers(&tmp).is_empty(), "{:?}", leftovers(&tmp));
}

#[test]
fn a_signal_at_any_moment_exits_128_plus_it_quietly_and_reaps_every_child() {
    crate::support::become_subreaper();
    // Each run lasts some 5 s unsignalled: every signal lands inside one.
    let problems = crate::support::signal_at_spread_moments(
        EXE,
        &[
            "--quick",
            "--calls",
            "method_no_args,method_block",
            "--transport",
            "unix,tcp,shm",
            "--warmup",
            "1",
            "--warmup-time",
            "50ms",
            "--iterations",
            "6",
            "--time",
            "50ms",
        ],
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The tests of ipc whose pass depends on this machine's speed (a deadline, a time
/// bound or a ratio of two timings): retried, one at a time ([`crate::support::timing`]).
mod timing {
    use super::*;
    use crate::support::timing::retry;

    #[test]
    fn vs_floor_is_the_mean_of_interleaved_pairs_and_a_pinned_call_costs_at_least_its_floor() {
        retry("ipc::timing::vs_floor_is_the_mean_of_interleaved_pairs_and_a_pinned_call_costs_at_least_its_floor", || {
    let cpu = crate::support::first_cpu();
    let pin = cpu.to_string();
    // Both sides on one CPU, in adjacent iterations, so the load of the moment weighs on
    // both: method_a3 (one round trip, three arguments marshalled) costs more than the
    // 1-byte round trip beside it, method_block (two round trips) about twice as much
    // (2.3 here). Asserted of the mean of the pairs, not of each: a 20 ms iteration on a
    // CPU shared with other tests may stray far (a method_block pair of 0.36 seen with
    // three runs pinned to one CPU, when its mean was still 1.7).
    let run = bb_ipc(
        &[
            "--calls",
            "method_a3,method_block",
            "--no-local",
            "--forks",
            "2",
            "--pin",
            &pin,
            "--format",
            "json",
        ],
        &[],
    );
    run.assert_ok();
    assert!(!run.stderr.contains("iteration pairs"), "{}", run.stderr);
    let json = run.json();
    for mode in ["avgt", "sample"] {
        for call in ["method_a3", "method_block"] {
            let e = json
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["mode"] == mode && e["params"]["call"] == call)
                .unwrap();
            let ratios = crate::support::paired_vs_floor(e);
            assert_eq!(ratios.len(), 4, "2 forks × 2 iterations: {e:#}");
            let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
            let least = if call == "method_block" { 1.3 } else { 1.0 };
            assert!(
                mean >= least,
                "{call} {mode}: under {least}× the floor: {ratios:?}"
            );
            crate::support::all_on_one_cpu(e, cpu);
        }
    }
    });
    }
}
