//! Every measurement binary ends its text report with its answer: the block is there,
//! last, each line at most 80 columns, the same lines are in the JSON report, and the
//! numbers it quotes are the JSON's own (a real run of each binary, made short).

use crate::support::{entry, run_with, TempDir};
use serde_json::Value;

const TINY: &[&str] = &[
    "--quick",
    "--warmup",
    "0",
    "--iterations",
    "3",
    "--time",
    "100ms",
];

/// Runs `exe` with `args` writing JSON to a file and the text table to stdout (as
/// `--output` does); returns the answer's lines from the text and the JSON document.
fn run_both(exe: &str, args: &[&str]) -> (Vec<String>, Value) {
    let dir = TempDir::new("answers");
    let json = dir.join("r.json");
    let mut all: Vec<&str> = TINY.to_vec();
    all.extend_from_slice(args);
    all.extend(["--output", json.to_str().unwrap()]);
    let run = run_with(exe, &all, &[]);
    run.assert_ok();
    let program = std::path::Path::new(exe)
        .file_name()
        .unwrap()
        .to_str()
        .unwrap();
    let marker = format!("== {program}: the answer ==");
    let at = run
        .stdout
        .find(&marker)
        .unwrap_or_else(|| panic!("no answer block in:\n{}", run.stdout));
    let block: Vec<String> = run.stdout[at..].lines().skip(1).map(String::from).collect();
    assert!(!block.is_empty(), "an empty answer:\n{}", run.stdout);
    assert!(block.len() <= 8, "{block:#?}");
    for line in &block {
        assert!(line.chars().count() <= 80, "wider than 80 columns: {line}");
    }
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let answer = &doc[0]["boardbench"]["answer"];
    assert_eq!(answer["program"], program);
    let lines: Vec<String> = answer["lines"]
        .as_array()
        .expect("the answer's lines in the first entry's boardbench object")
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect();
    assert_eq!(lines, block, "the JSON's answer is the text's");
    (block, doc)
}

/// The number before `unit` in `line` (`344 MB/s` → 344; `101k calls/s` → 101000).
fn number_before(line: &str, unit: &str) -> f64 {
    let end = line
        .find(unit)
        .unwrap_or_else(|| panic!("no '{unit}' in {line}"));
    let word = line[..end].trim_end().rsplit(' ').next().unwrap();
    let (digits, scale) = match word.chars().last() {
        Some('k') => (&word[..word.len() - 1], 1e3),
        Some('M') => (&word[..word.len() - 1], 1e6),
        Some('G') => (&word[..word.len() - 1], 1e9),
        _ => (word, 1.0),
    };
    digits
        .parse::<f64>()
        .unwrap_or_else(|_| panic!("'{word}' in {line}"))
        * scale
}

/// Whether `shown` is `value` as three significant figures show it.
fn shows(shown: f64, value: f64) -> bool {
    (shown - value).abs() <= value.abs() * 0.005 + 1e-9
}

#[test]
fn bb_zstd_answers_with_its_one_thread_rate_and_the_speedup() {
    let (lines, doc) = run_both(
        env!("CARGO_BIN_EXE_bb-zstd"),
        &["--size", "64k", "--threads", "1,2", "--op", "compress"],
    );
    let one = entry(&doc, "bb.zstd.compress", &[("threads", "1")]);
    let mbs = one["secondaryMetrics"]["MB/s"]["score"].as_f64().unwrap();
    assert!(lines[0].starts_with("compress: "), "{lines:?}");
    assert!(
        shows(number_before(&lines[0], "MB/s"), mbs),
        "{lines:?} against {mbs}"
    );
    let two = entry(&doc, "bb.zstd.compress", &[("threads", "2")]);
    let speedup = two["secondaryMetrics"]["MB/s"]["score"].as_f64().unwrap() / mbs;
    assert!(lines[1].starts_with("  2 threads: "), "{lines:?}");
    assert!(
        shows(number_before(&lines[1], "x ("), speedup),
        "{lines:?} against {speedup}"
    );
}

#[test]
fn bb_ipc_answers_with_a_call_against_its_floor_and_a_local_call() {
    let (lines, doc) = run_both(
        env!("CARGO_BIN_EXE_bb-ipc"),
        &[
            "--transport",
            "unix",
            "--calls",
            "method_no_args,method_block",
            "--mode",
            "avgt",
        ],
    );
    // The main placement is where every call ran: the block's.
    let block = entry(&doc, "bb.ipc.remote", &[("call", "method_block")]);
    let main = block["params"]["placement"].as_str().unwrap();
    let remote = entry(
        &doc,
        "bb.ipc.remote",
        &[
            ("call", "method_no_args"),
            ("transport", "unix"),
            ("placement", main),
        ],
    );
    let us = remote["primaryMetric"]["score"].as_f64().unwrap();
    let head = "unix: method_no_args costs ";
    assert!(lines[0].starts_with(head), "{lines:?}");
    let said: Vec<&str> = lines[0][head.len()..].split(' ').take(2).collect();
    let scale = match said[1] {
        "ns" => 1e-3,
        "us" => 1.0,
        "ms" => 1e3,
        _ => 1e6,
    };
    let shown = said[0].parse::<f64>().unwrap() * scale;
    // Nanoseconds are shown whole, the rest in three figures.
    assert!(
        shows(shown, us) || (shown - us).abs() < 1e-3,
        "{lines:?} against {us} us"
    );
    assert!(
        lines.iter().any(|l| l.contains("a local call")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("a block (the server calls back)")),
        "{lines:?}"
    );
}

#[test]
fn bb_rpc_answers_with_sync_against_async() {
    let (lines, doc) = run_both(
        env!("CARGO_BIN_EXE_bb-rpc"),
        &[
            "--transport",
            "unix",
            "--payload",
            "16",
            "--codec",
            "raw",
            "--client",
            "sync,async",
            "--depth",
            "1,8",
        ],
    );
    // The main placement is where every row ran: the async rows'.
    let deep = entry(&doc, "bb.rpc.async", &[("depth", "8")]);
    let main = deep["params"]["placement"].as_str().unwrap();
    let sync = entry(
        &doc,
        "bb.rpc.sync",
        &[("transport", "unix"), ("placement", main)],
    );
    let calls = sync["primaryMetric"]["score"].as_f64().unwrap();
    assert!(lines[0].starts_with("unix, 16 B, raw"), "{lines:?}");
    assert!(lines[0].contains(": sync "), "{lines:?}");
    assert!(
        shows(number_before(&lines[0], "calls/s"), calls),
        "{lines:?} against {calls}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("  async (8 in flight) ")),
        "{lines:?}"
    );
}

#[test]
fn bb_seek_answers_with_the_stream_against_plain() {
    let data = TempDir::new("answers-seek");
    let (lines, doc) = run_both(
        env!("CARGO_BIN_EXE_bb-seek"),
        &[
            "--sizes",
            "64k",
            "--source",
            data.path().to_str().unwrap(),
            "--read-size",
            "4k",
        ],
    );
    let plain = entry(
        &doc,
        "bb.seek.sequential",
        &[("client", "plain"), ("read-size", "4k")],
    );
    let stream = entry(
        &doc,
        "bb.seek.sequential",
        &[("client", "stream"), ("read-size", "4k")],
    );
    let requests = |e: &Value| e["secondaryMetrics"]["requests"]["score"].as_f64().unwrap();
    assert!(
        lines[0].starts_with("random-64kb.txt, sequential 4k: stream "),
        "{lines:?}"
    );
    let (s, p) = (requests(stream), requests(plain));
    let said = format!(
        "  {s:.0} request{} against {p:.0}",
        if s == 1.0 { "" } else { "s" }
    );
    assert!(lines[1].starts_with(&said), "{lines:?} against {said}");
}
