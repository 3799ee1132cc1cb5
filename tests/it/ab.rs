//! `--against`: two builds in one run, fork by fork in pairs. The refusals before anything
//! runs; an A/A run's answer, table and JSON (both sides, read back by bb-compare, by
//! JMH's strict reader and the visualizer's); and a machine that slows down through the
//! run (the fault-injection feature's drift), which calls two sequential runs of one
//! build different and the pairs of an A/B run a tie; a build made slower by a known
//! share (the same compile, a wrapper that sets the fault) called slower, its two forks
//! of a pair taking turns and never working at once.

use crate::support::{run_with, Run, TempDir, ZSTD_ONE_ROW, ZSTD_SMALL};
use serde_json::Value;

const ZSTD: &str = env!("CARGO_BIN_EXE_bb-zstd");
const IPC: &str = env!("CARGO_BIN_EXE_bb-ipc");
const COMPARE: &str = env!("CARGO_BIN_EXE_bb-compare");

/// bb-zstd small and short, one row (compress, one thread, no lock), with `extra`.
fn zstd(extra: &[&str], env: &[(&str, &str)]) -> Run {
    let mut args = [ZSTD_SMALL, ZSTD_ONE_ROW].concat();
    args.extend(extra);
    run_with(ZSTD, &args, env)
}

/// A copy of bb-zstd in `dir`: another build at another path, the same bytes.
fn copy_of_zstd(dir: &TempDir) -> String {
    let copy = dir.join("old-bb-zstd");
    std::fs::copy(ZSTD, &copy).unwrap();
    copy.to_string_lossy().into_owned()
}

/// An executable shell script in `dir`.
fn script(dir: &TempDir, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn another_build_that_cannot_be_run_against_is_refused_in_one_line() {
    let d = TempDir::new("ab-refusals");
    let plain = d.join("plain");
    std::fs::write(&plain, "not a program").unwrap();
    // An ELF header for RISC-V: the kernel refuses it, and no qemu is on PATH.
    let mut elf = vec![0u8; 64];
    elf[..4].copy_from_slice(b"\x7fELF");
    (elf[4], elf[5], elf[18]) = (2, 1, 243);
    let foreign = d.join("riscv-bb-zstd");
    std::fs::write(&foreign, &elf).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&foreign, std::fs::Permissions::from_mode(0o755)).unwrap();
    let silent = script(&d, "old", "exit 0");
    let older = script(&d, "older", "echo boardbench-fork 1; echo end");
    let picky = script(
        &d,
        "picky",
        "echo 'Unrecognized argument: --lock' >&2; exit 2",
    );
    let empty = script(
        &d,
        "empty",
        "printf 'boardbench-fork 3\\nprogram bb-zstd\\nend\\n'",
    );
    let endless = script(
        &d,
        "endless",
        "echo boardbench-fork 3; yes 'bench bb.zstd.x' | head -c 1100000",
    );
    let missing = d.join("none").to_string_lossy().into_owned();
    // A name with a line break and a terminal escape in it reaches the screen escaped.
    let hostile = d.join("a\nb\x1b[31m").to_string_lossy().into_owned();
    let hostile_shown = format!("{}/a\\nb\\u{{1b}}[31m", d.path().display());
    let dir = d.path().to_string_lossy().into_owned();
    let no_qemu = [("PATH", "/nonexistent")];
    /// A run's extra arguments, its environment, and what its error must say.
    type Case<'a> = (Vec<&'a str>, &'a [(&'a str, &'a str)], String);
    let cases: Vec<Case> = vec![
        (
            vec!["--against", &missing],
            &[],
            format!("--against {missing}: no such file"),
        ),
        (
            vec!["--against", &hostile],
            &[],
            format!("--against {hostile_shown}: no such file"),
        ),
        (
            vec!["--against", &dir],
            &[],
            format!("--against {dir}: not a file"),
        ),
        (
            vec!["--against", plain.to_str().unwrap()],
            &[],
            "not executable (chmod +x it)".into(),
        ),
        (
            vec!["--against", foreign.to_str().unwrap()],
            &no_qemu,
            "this machine cannot execute it (exec format error".into(),
        ),
        (
            vec!["--against", IPC],
            &[],
            "it is bb-ipc, not bb-zstd: --against takes another build of the same binary".into(),
        ),
        (
            vec!["--against", &silent],
            &[],
            "it speaks no fork protocol version; this build needs version 3".into(),
        ),
        (
            vec!["--against", &older],
            &[],
            "it speaks fork protocol version 1; this build needs version 3".into(),
        ),
        (
            vec!["--against", &empty],
            &[],
            "it describes no rows (bb-zstd has none to pair with this run's)".into(),
        ),
        (
            vec!["--against", &endless],
            &[],
            "its self-description is over 1 MiB".into(),
        ),
        (
            vec!["--against", &picky],
            &[],
            "it refused this run's flags: Unrecognized argument: --lock".into(),
        ),
        (
            vec!["--against", ZSTD, "--forks", "0"],
            &[],
            "--against runs both builds in forks: it takes --forks 1 or more".into(),
        ),
    ];
    for (args, env, expected) in cases {
        let run = zstd(&args, env);
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert_eq!(lines.len(), 1, "{args:?}: one line: {}", run.stderr);
        assert!(
            lines[0].starts_with("bb-zstd: error: --against"),
            "{}",
            lines[0]
        );
        assert!(lines[0].contains(&expected), "{args:?}: {}", lines[0]);
        assert!(run.stdout.is_empty(), "nothing measured: {}", run.stdout);
    }
}

#[test]
fn an_aa_run_answers_a_tie_and_writes_both_sides_as_two_runs() {
    let d = TempDir::new("ab-aa");
    let old = copy_of_zstd(&d);
    let out = d.join("ab.json");
    let out = out.to_str().unwrap();
    let run = zstd(&["--forks", "3", "--against", &old, "--output", out], &[]);
    run.assert_ok();
    // The text report: both builds' rows in JMH's table, the pairs' table, the answer
    // ending with the A/B line.
    let table_row = |build: &str| {
        run.stdout.lines().any(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            cells.first() == Some(&"bb.zstd.compress") && cells.get(1) == Some(&build)
        })
    };
    assert!(table_row("this") && table_row("against"), "{}", run.stdout);
    assert!(run
        .stdout
        .contains(&format!("This build against {old} (sha1 ")));
    // Identical bytes: a tie (at 99%, three pairs), saying what it could have seen.
    assert!(
        run.stdout.contains("old-bb-zstd:\n  compress: a tie ("),
        "{}",
        run.stdout
    );
    let last = run.stdout.trim_end().lines().last().unwrap();
    assert!(last.starts_with("  compress: a tie ("), "{}", run.stdout);
    assert!(
        run.stderr.contains(&format!("against {old} (sha1 ")),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("fork 2/3, paired bb.zstd.compress"),
        "progress names the pair"
    );
    let json: Value = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    let entries = json.as_array().unwrap();
    assert_eq!(entries.len(), 2, "one entry a build");
    let sides: Vec<&str> = entries
        .iter()
        .map(|e| e["boardbench"]["build"]["side"].as_str().unwrap())
        .collect();
    assert_eq!(sides, ["this", "against"]);
    assert_eq!(entries[1]["boardbench"]["build"]["path"], old.as_str());
    let sha1 = entries[1]["boardbench"]["build"]["sha1"].as_str().unwrap();
    assert_eq!(
        sha1, entries[0]["boardbench"]["build"]["sha1"],
        "the same bytes"
    );
    assert_eq!(sha1.len(), 40);
    let against = &entries[0]["boardbench"]["against"];
    assert_eq!(against["pairs"], 3);
    assert_eq!(against["basis"], "forks 3");
    assert_eq!(against["level"], 0.99);
    assert!(against["smallestChange"].as_f64().unwrap() > 0.0);
    assert!(against["pairSpread"].as_f64().unwrap() >= 0.0);
    assert!(
        run.stdout.contains("; this run could see "),
        "{}",
        run.stdout
    );
    let (low, high) = (
        against["low"].as_f64().unwrap(),
        against["high"].as_f64().unwrap(),
    );
    assert!(low < against["ratio"].as_f64().unwrap() && low < high);
    for e in entries {
        assert_eq!(e["primaryMetric"]["rawData"].as_array().unwrap().len(), 3);
    }
    // bb-compare reads the file as its two runs, the other build first.
    let compared = run_with(COMPARE, &[out], &[]);
    assert!(
        compared.code == 0 || compared.code == 1,
        "{}",
        compared.stderr
    );
    assert!(
        compared.stdout.contains(&format!("({old})")),
        "{}",
        compared.stdout
    );
    assert!(
        compared.stdout.contains("this build"),
        "{}",
        compared.stdout
    );
    // JMH's own JSON: both builds' entries, told apart by a build param, no key a strict
    // reader refuses; the visualizer's reader opens it.
    let strict = zstd(&["--forks", "1", "--against", &old, "--format", "jmh"], &[]);
    strict.assert_ok();
    let doc = strict.json();
    assert_eq!(crate::jmh::unknown_keys(&doc), Vec::<String>::new());
    let builds: Vec<&Value> = doc
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["params"]["build"])
        .collect();
    assert_eq!(builds, ["this", "against"]);
    crate::jmh::visualizer_extract(&doc).unwrap();
}

/// Milliseconds since the Unix epoch: when a drifting "run" began.
fn now_ms() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    now.unwrap().as_millis().to_string()
}

/// The tests of `--against` whose pass depends on this machine's speed: retried, one at
/// a time ([`crate::support::timing`]).
mod timing {
    use super::*;
    use crate::support::timing::retry;

    #[test]
    fn a_drift_through_the_run_shows_between_sequential_runs_and_cancels_in_pairs() {
        // Under load, the sequential runs' difference has been called noise (p = 0.010
        // against 0.01): a try on a quieter moment, not a longer run, settles it.
        retry(
            "ab::timing::a_drift_through_the_run_shows_between_sequential_runs_and_cancels_in_pairs",
            || {
    let d = TempDir::new("ab-drift");
    let old = copy_of_zstd(&d);
    // Every invocation 3 ms slower for each second since the start: a SoC heating up.
    // Six forks a run: a drift spreads each run's own forks too.
    let drift = format!("{}:3000", now_ms());
    let env = [("BB_FAULT_DRIFT", drift.as_str())];
    let (a, b) = (d.join("a.json"), d.join("b.json"));
    for out in [&a, &b] {
        zstd(&["--forks", "6", "--output", out.to_str().unwrap()], &env).assert_ok();
        // The moments between two runs by hand (the second build copied, started).
        std::thread::sleep(std::time::Duration::from_secs(3));
    }
    // Run A, then the same build again as B: B is slower, beyond noise and the floor.
    let sequential = run_with(COMPARE, &[a.to_str().unwrap(), b.to_str().unwrap()], &[]);
    assert_eq!(
        sequential.code, 1,
        "{}{}",
        sequential.stdout, sequential.stderr
    );
    assert!(
        sequential.stdout.contains("slower"),
        "{}",
        sequential.stdout
    );
    // The same drift, the two builds interleaved in ABBA pairs: a tie.
    let drift = format!("{}:3000", now_ms());
    let env = [("BB_FAULT_DRIFT", drift.as_str())];
    let ab = d.join("ab.json");
    let run = zstd(
        &[
            "--forks",
            "6",
            "--against",
            &old,
            "--output",
            ab.to_str().unwrap(),
        ],
        &env,
    );
    run.assert_ok();
    assert!(
        run.stdout.contains("old-bb-zstd:\n  compress: a tie ("),
        "{}",
        run.stdout
    );
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&ab).unwrap()).unwrap();
    assert_eq!(json[0]["boardbench"]["against"]["verdict"], "tie");
            },
        );
    }

    #[test]
    fn a_known_slowdown_is_called_and_the_pair_takes_turns() {
        // Its verdict is a timing's: a try whose pairs met a neighbour's burst is retried.
        retry(
            "ab::timing::a_known_slowdown_is_called_and_the_pair_takes_turns",
            || {
                let d = TempDir::new("ab-slower");
                // The other build: this very binary, every invocation three times as long
                // (spinning): far past what six pairs of a debug build on a loaded machine can miss.
                let slower = script(
                    &d,
                    "slower-bb-zstd",
                    &format!("BB_FAULT_SLOWER=200 exec '{ZSTD}' \"$@\""),
                );
                let trace = d.join("trace");
                let trace_env = trace.to_string_lossy().into_owned();
                let out = d.join("ab.json");
                let run = zstd(
                    &[
                        "--forks",
                        "6",
                        "--against",
                        &slower,
                        "--output",
                        out.to_str().unwrap(),
                    ],
                    &[("BB_FAULT_TRACE", trace_env.as_str())],
                );
                run.assert_ok();
                assert!(
                    run.stdout.contains("\n  compress: ") && run.stdout.contains("x faster ("),
                    "{}",
                    run.stdout
                );
                let json: Value =
                    serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
                let against = &json[0]["boardbench"]["against"];
                assert_eq!(against["verdict"], "faster");
                let ratio = against["ratio"].as_f64().unwrap();
                assert!(
                    (2.0..4.5).contains(&ratio),
                    "three times as slow measured as {ratio}"
                );
                // The trace: each invocation of each fork, by pid. Two forks of a pair never work
                // at once, and they alternate: each hands over to the other many times.
                let text = std::fs::read_to_string(&trace).unwrap();
                let mut spans: Vec<(u32, u128, u128)> = text
                    .lines()
                    .map(|l| {
                        let f: Vec<&str> = l.split(' ').collect();
                        (
                            f[0].parse().unwrap(),
                            f[1].parse().unwrap(),
                            f[2].parse().unwrap(),
                        )
                    })
                    .collect();
                spans.sort_by_key(|s| s.1);
                let pids: std::collections::BTreeSet<u32> = spans.iter().map(|s| s.0).collect();
                assert_eq!(pids.len(), 12, "six pairs, two forks each");
                for w in spans.windows(2) {
                    assert!(w[0].2 <= w[1].1, "two invocations at once: {w:?}");
                }
                let handovers = spans.windows(2).filter(|w| w[0].0 != w[1].0).count();
                // Each pair's two forks hand over at every step (set-up, warm-up, iterations).
                assert!(
                    handovers >= 6 * 4,
                    "{handovers} handovers in {} spans",
                    spans.len()
                );
            },
        );
    }
}
