//! bb-rpc's open loop (`--rate`) as a person runs it: a real `bb-rpc serve` stopped with
//! SIGSTOP in the middle of a run, whose stall must count for every call scheduled during
//! it in the corrected latencies and for few in the uncorrected ones (and for one call
//! under the closed loop); a rate far beyond the machine, reported SATURATED; a modest
//! rate held within 1%, its row JMH's sample mode with `rate` as a param, which
//! bb-compare reads. Behaviour only: no test asserts a speed.

use crate::support::rpc_server::Server;
use crate::support::TempDir;
use boardbench::rpc::client::SyncClient;
use boardbench::rpc::protocol::Codec;
use std::process::{Command, Stdio};
use std::time::Duration;

const EXE: &str = env!("CARGO_BIN_EXE_bb-rpc");

/// One measured iteration, no warm-up, in this process.
fn once(time: &str) -> [&str; 8] {
    [
        "--warmup",
        "0",
        "--iterations",
        "1",
        "--time",
        time,
        "--forks",
        "0",
    ]
}

/// Calls `server` has answered so far.
fn work_calls(server: &Server) -> u64 {
    let mut client = SyncClient::connect(&server.config(Codec::Raw)).unwrap();
    client.stats().unwrap().work_calls()
}

/// Runs bb-rpc against `server` with `args` and stops the server for `stall` once the
/// measured calls have begun, 300 ms into them; the report, in JSON.
fn run_with_a_stall(server: &Server, args: &[&str], stall: Duration) -> serde_json::Value {
    let addr = server.addr.to_string();
    // The server may have served an earlier run: its calls are counted from here.
    let before = work_calls(server);
    let client = Command::new(EXE)
        .args(["--connect", &addr, "--format", "json"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Past the few calls a benchmark's set-up makes: its measured calls have begun.
    let began =
        crate::support::wait_for(Duration::from_secs(30), || work_calls(server) > before + 20);
    assert!(began, "no call reached the server");
    std::thread::sleep(Duration::from_millis(300));
    server.signal(nix::sys::signal::Signal::SIGSTOP);
    std::thread::sleep(stall);
    server.signal(nix::sys::signal::Signal::SIGCONT);
    let run = crate::support::finish_within(client, Duration::from_secs(60), "the stalled run");
    run.assert_ok();
    run.json()
}

/// Samples of a sample-mode entry at or above `us` microseconds, from its
/// `rawDataHistogram` (`[value, count]` pairs per fork and iteration).
fn samples_at_least(e: &serde_json::Value, us: f64) -> u64 {
    let forks = e["primaryMetric"]["rawDataHistogram"].as_array().unwrap();
    forks
        .iter()
        .flat_map(|f| f.as_array().unwrap())
        .flat_map(|i| i.as_array().unwrap())
        .map(|pair| (pair[0].as_f64().unwrap(), pair[1].as_u64().unwrap()))
        .filter(|&(v, _)| v >= us)
        .map(|(_, n)| n)
        .sum()
}

fn score(e: &serde_json::Value, metric: &str) -> f64 {
    e["secondaryMetrics"][metric]["score"]
        .as_f64()
        .unwrap_or_else(|| panic!("no {metric} in {e:#}"))
}

#[test]
fn a_stall_counts_for_every_call_it_held_back_only_in_the_corrected_latencies() {
    const RATE: f64 = 500.0;
    const DEPTH: &str = "4";
    let stall = Duration::from_millis(400);
    let server = Server::start("unix", &["--quiet"]);
    let args = [
        &["--rate", "500", "--depth", DEPTH, "--codec", "raw"][..],
        &once("2s"),
    ]
    .concat();
    let json = run_with_a_stall(&server, &args, stall);
    let e = crate::support::entry(&json, "bb.rpc.open", &[("rate", "500"), ("depth", DEPTH)]);
    assert_eq!(e["mode"], "sample");
    let corrected_max = e["primaryMetric"]["scorePercentiles"]["100.0"]
        .as_f64()
        .unwrap();
    assert!(
        corrected_max >= 350_000.0,
        "corrected max {corrected_max} us"
    );
    // Every call due in the stall's first 300 ms waited 100 ms or more for its reply.
    let held = samples_at_least(e, 100_000.0);
    let due = RATE * 0.3;
    assert!(
        held as f64 >= 0.8 * due,
        "{held} corrected samples ≥ 100 ms, {due} calls due"
    );
    // Only calls already written when the server stopped (at most the depth, and the one
    // the server was reading) saw it from their write: the uncorrected p99 of ~1000
    // calls is below it, though the uncorrected max shows the stall.
    let uncorrected_p99 = score(e, "uncorrected-p0.99");
    assert!(
        uncorrected_p99 < 100_000.0,
        "uncorrected p99 {uncorrected_p99} us"
    );
    assert!(score(e, "uncorrected-max") >= 300_000.0, "{e:#}");

    // The same stall under the closed loop: one call waits, the others were never sent.
    let args = [
        &["--client", "sync", "--mode", "sample", "--codec", "raw"][..],
        &once("2s"),
    ]
    .concat();
    let json = run_with_a_stall(&server, &args, stall);
    let e = crate::support::entry(&json, "bb.rpc.sync", &[]);
    let max = e["primaryMetric"]["scorePercentiles"]["100.0"]
        .as_f64()
        .unwrap();
    assert!(max >= 350_000.0, "closed-loop max {max} us");
    let slow = samples_at_least(e, 100_000.0);
    assert!(
        slow <= 2,
        "{slow} closed-loop samples ≥ 100 ms: the stall hides in one"
    );
}

/// Runs bb-rpc with `flags` for one iteration of `time`, its report written to
/// `report.json` in `dir` too; returns the run (the text table on stdout) and the report.
fn run_reported(
    dir: &TempDir,
    flags: &[&str],
    time: &str,
) -> (crate::support::Run, serde_json::Value) {
    let out = dir.join("report.json");
    let args = [flags, &["--output", out.to_str().unwrap()], &once(time)].concat();
    let run = crate::support::run_bounded(EXE, &args, &[], Duration::from_secs(60));
    run.assert_ok();
    let json = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    (run, json)
}

#[test]
fn a_rate_far_beyond_the_machine_is_saturated_not_a_latency() {
    let dir = TempDir::new("rpc-open-saturated");
    let flags = [
        "--rate",
        "5M",
        "--transport",
        "unix",
        "--codec",
        "raw",
        "--payload",
        "16",
    ];
    let (run, json) = run_reported(&dir, &flags, "300ms");
    let row = run
        .stdout
        .lines()
        .find(|l| l.starts_with("bb.rpc.open "))
        .unwrap();
    assert!(row.contains(" SATURATED "), "{}", run.stdout);
    assert!(
        !run.stdout.contains("bb.rpc.open:p0.99"),
        "no corrected latency for a load not held:\n{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("SATURATED: bb.rpc.open ("),
        "{}",
        run.stdout
    );
    let load = &json[0]["boardbench"]["offeredLoad"];
    assert_eq!(load["saturated"], true, "{load}");
    assert_eq!(load["targetRate"], 5e6);
    assert!(
        load["achievedRate"].as_f64().unwrap() < 0.99 * 5e6,
        "{load}"
    );
}

#[test]
fn a_modest_rate_is_held_and_reported_as_jmh_sample_mode_that_bb_compare_reads() {
    let dir = TempDir::new("rpc-open-modest");
    // A spawned server over TCP with MessagePack, two connections at 100 calls/s each.
    let flags = [
        "--rate",
        "100",
        "--connections",
        "2",
        "--transport",
        "tcp",
        "--codec",
        "msgpack",
        "--payload",
        "16",
    ];
    let (_, json) = run_reported(&dir, &flags, "1s");
    let e = crate::support::entry(
        &json,
        "bb.rpc.open",
        &[("rate", "100"), ("connections", "2"), ("codec", "msgpack")],
    );
    let load = &e["boardbench"]["offeredLoad"];
    assert_eq!(load["saturated"], false, "{load}");
    assert_eq!(
        load["targetRate"], 200.0,
        "100 calls/s on each of 2 connections"
    );
    let achieved = load["achievedRate"].as_f64().unwrap();
    assert!((achieved / 200.0 - 1.0).abs() <= 0.01, "{load}");
    let per_iteration = score(e, "calls/s");
    assert!((per_iteration / 200.0 - 1.0).abs() <= 0.01, "{e:#}");
    // JMH's sample mode: a histogram per fork and iteration, no rawData, the percentile
    // metrics, the score a latency.
    assert_eq!(e["mode"], "sample");
    assert_eq!(e["threads"], 2);
    let pm = &e["primaryMetric"];
    assert_eq!(pm["scoreUnit"], "us/op");
    assert!(pm.get("rawData").is_none(), "{pm:#}");
    let samples: u64 = pm["rawDataHistogram"][0][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[1].as_u64().unwrap())
        .sum();
    assert_eq!(samples, e["boardbench"]["samples"].as_u64().unwrap());
    assert!(
        (190..=210).contains(&samples),
        "a call every 5 ms for 1 s: {samples}"
    );
    let (p50, p99) = (score(e, "p0.50"), score(e, "p0.99"));
    assert!(p50 > 0.0 && p99 >= p50, "{e:#}");
    // Each call counted from its due time includes its send's lag: corrected ≥ uncorrected.
    assert!(p50 >= score(e, "uncorrected-p0.50") * 0.99, "{e:#}");
    let lag = (score(e, "lag-p0.50"), score(e, "lag-max"));
    assert!(
        lag.0 >= 0.0 && lag.0 <= lag.1 && lag.1 < 1e6,
        "lag {lag:?} us"
    );

    // bb-compare reads it and matches the row with itself, rate and all.
    let report = dir.join("report.json").to_str().unwrap().to_string();
    let compare = crate::support::run_bounded(
        env!("CARGO_BIN_EXE_bb-compare"),
        &[&report, &report],
        &[],
        Duration::from_secs(30),
    );
    compare.assert_ok();
    let header = compare.stdout.lines().next().unwrap_or("");
    let row = compare
        .stdout
        .lines()
        .find(|l| l.starts_with("bb.rpc.open "));
    // The rate is a column, or, the same in every row, named once above the table.
    let rate_shown = header.contains("rate=100")
        || (header.contains("(rate)") && row.is_some_and(|r| r.contains(" 100 ")));
    assert!(row.is_some() && rate_shown, "{}", compare.stdout);
}
