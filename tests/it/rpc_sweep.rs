//! `bb-rpc --rate sweep` as a person runs it: the plan lists the six rows of each group
//! and counts the probe; a real sweep (against the spawned server, in a fork as by
//! default) probes the closed-loop maximum, prints it, and offers 10% to 100% of it in
//! rising rates, with the latency-against-throughput table after the run; bb-compare
//! draws the rows as latency against achieved rate on a log axis. `sweep` does not mix
//! with numbers. Behaviour only: no test asserts a speed, and the 100% row may saturate.

use crate::support::{estimated_seconds, run_bounded, TempDir};
use std::time::Duration;

const EXE: &str = env!("CARGO_BIN_EXE_bb-rpc");
const LOADS: [&str; 6] = ["10%", "25%", "50%", "75%", "90%", "100%"];
/// One small group: a spawned server over a Unix socket, raw, 16-byte echoes.
const GROUP: [&str; 6] = ["--transport", "unix", "--codec", "raw", "--payload", "16"];
/// Short iterations, in a fork as the default profile runs them.
const SHORT: [&str; 8] = [
    "--warmup",
    "0",
    "--iterations",
    "1",
    "--time",
    "200ms",
    "--forks",
    "1",
];

#[test]
fn the_plan_lists_each_groups_six_shares_and_counts_the_probe() {
    let plan = |rate: &str| {
        let args = [
            &["--rate", rate, "--transport", "unix,tcp", "--codec", "raw"][..],
            &[
                "--payload",
                "16",
                "--time",
                "400ms",
                "--forks",
                "1",
                "--dry-run",
            ],
        ]
        .concat();
        let run = run_bounded(EXE, &args, &[], Duration::from_secs(10));
        run.assert_ok();
        run.stdout
    };
    let sweep = plan("sweep");
    assert!(
        sweep.contains("\nfirst: probing the closed-loop maximum of 2 sweep groups  about "),
        "{sweep}"
    );
    for transport in ["unix", "tcp"] {
        for load in LOADS {
            let row = format!(
                "bb.rpc.open (transport={transport}, codec=raw, payload=16, depth=64, connections=1, placement={}, rate={load} of max, load={load})  ",
                main_placement()
            );
            assert_eq!(sweep.matches(&row).count(), 1, "{row}\n{sweep}");
        }
    }
    // The same twelve rows at fixed rates cost as much: the difference is the two probes,
    // each its 400 ms, a quarter of it to warm up, and the server's start.
    let fixed = plan("1k,2k,3k,4k,5k,6k");
    assert!(!fixed.contains("probing"), "{fixed}");
    let probes = estimated_seconds(&sweep) - estimated_seconds(&fixed);
    assert!(
        (probes - 2.0 * 0.54).abs() < 0.06,
        "{probes} s\n{sweep}\n{fixed}"
    );
}

#[test]
fn a_sweep_offers_rising_shares_of_the_probed_maximum() {
    let dir = TempDir::new("rpc-sweep");
    let report = dir.join("sweep.json");
    let report = report.to_str().unwrap();
    let args = [&["--rate", "sweep", "--output", report][..], &GROUP, &SHORT].concat();
    let run = run_bounded(EXE, &args, &[], Duration::from_secs(120));
    run.assert_ok();
    // The maximum on stderr, once, before the rows that use it.
    let said: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("bb-rpc: closed-loop maximum "))
        .collect();
    assert_eq!(said.len(), 1, "{}", run.stderr);
    let max: f64 = said[0]["bb-rpc: closed-loop maximum ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        said[0].ends_with(&format!(" calls/s for bb.rpc.open (transport=unix, codec=raw, payload=16, depth=64, connections=1, placement={}); the sweep offers 10% to 100% of it", main_placement())),
        "{}",
        said[0]
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), 6, "{json:#}");
    let mut last = 0.0;
    for (e, load) in rows.iter().zip(LOADS) {
        assert_eq!(e["benchmark"], "bb.rpc.open");
        assert_eq!(e["mode"], "sample");
        assert_eq!(e["params"]["load"], load, "in order of load");
        let rate: f64 = e["params"]["rate"].as_str().unwrap().parse().unwrap();
        let share: f64 = load.trim_end_matches('%').parse::<f64>().unwrap() / 100.0;
        // The probed maximum (printed rounded) times the share, to the whole call.
        assert!(
            (rate - share * max).abs() <= 1.0,
            "{rate} at {load} of {max}"
        );
        assert!(rate > last, "rates rise: {rate} after {last}");
        last = rate;
        assert_eq!(e["boardbench"]["offeredLoad"]["targetRate"], rate);
    }
    // The latency-against-throughput table: a row per load, latencies or SATURATED.
    let table = run
        .stdout
        .split("\nLatency against throughput (us):\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no load table:\n{}", run.stdout));
    let lines: Vec<&str> = table.lines().take_while(|l| !l.is_empty()).collect();
    assert!(
        lines[0].starts_with("Benchmark ")
            && lines[0].contains(" (load)  Offered/s  Achieved/s ")
            && lines[0].ends_with(" p0.999"),
        "{table}"
    );
    assert_eq!(lines.len(), 1 + 6, "{table}");
    for (line, (e, load)) in lines[1..].iter().zip(rows.iter().zip(LOADS)) {
        let saturated = e["boardbench"]["offeredLoad"]["saturated"] == true;
        assert!(line.contains(&format!(" {load} ")), "{line}");
        assert_eq!(line.ends_with("SATURATED"), saturated, "{line}");
        assert_eq!(
            line.split_whitespace().count(),
            // The placement is a column too.
            if saturated { 11 } else { 13 },
            "{line}"
        );
    }

    // bb-compare draws the rows as latency against achieved rate on a log time axis:
    // a polyline per percentile through the loads that were held, a line at the rate
    // achieved for each that was not.
    let svg = dir.join("sweep.svg");
    let compare = run_bounded(
        env!("CARGO_BIN_EXE_bb-compare"),
        &[report, "--svg", svg.to_str().unwrap()],
        &[],
        Duration::from_secs(30),
    );
    compare.assert_ok();
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.contains(">bb.rpc.open latency vs load</text>"), "{svg}");
    let held = rows
        .iter()
        .filter(|e| e["boardbench"]["offeredLoad"]["saturated"] == false)
        .count();
    let polylines = svg.matches("<polyline").count();
    assert_eq!(
        polylines,
        if held > 0 { 3 } else { 0 },
        "{held} held: {svg}"
    );
    assert_eq!(svg.matches("saturated at").count(), 6 - held, "{svg}");
    // Tick labels a decade apart, each a time.
    let ticks: Vec<&str> = svg
        .split(r#"text-anchor="end">"#)
        .skip(1)
        .map(|t| t.split('<').next().unwrap())
        .filter(|t| t.ends_with('s'))
        .collect();
    if held > 0 {
        assert!(ticks.len() >= 2, "{ticks:?}");
        for t in &ticks {
            let digits = t.trim_end_matches(|c: char| c.is_alphabetic() || c == 'µ');
            assert!(["1", "10", "100"].contains(&digits), "{t} in {ticks:?}");
        }
    }
}

#[test]
fn sweep_stands_alone_in_rate() {
    for rate in ["sweep,5k", "5k,sweep"] {
        let run = run_bounded(EXE, &["--rate", rate], &[], Duration::from_secs(10));
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(run.stderr.contains("--rate sweep"), "{}", run.stderr);
    }
}

/// The placement every row of a default run has: across two cores where there are two.
fn main_placement() -> &'static str {
    match std::thread::available_parallelism().map_or(1, |n| n.get()) {
        1 => "one-core",
        _ => "two-cores",
    }
}
