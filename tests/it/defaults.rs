//! Every default path, run as a person first runs it: each binary with no flags but
//! shorter timings (the standard profile's whole matrix, iterations and forks, each
//! iteration shorter: the rule's "shortening only timings"), and with `--quick`; bb-seek
//! in a directory without data/ (it generates the objects), and `--dry-run`, whose plan
//! must name exactly the benchmarks that run. No default path warns about a choice the
//! default made: only the machine's own state (busy, throttled, governor) may be warned
//! of. The measurements run at once here, so this file takes as long as the longest.

use crate::support::{planned_labels, run_in, Run, TempDir};

/// The standard profile's iterations, each shorter (timed modes only; single shots have
/// no time).
const SHORTER: [&str; 4] = ["--warmup-time", "20ms", "--time", "50ms"];

/// Runs `exe` with no flags but [`SHORTER`] in a fresh directory, and its `--dry-run`
/// there first.
fn run_with_no_flags(name: &str, exe: &str) -> (Run, Vec<String>, TempDir) {
    let dir = TempDir::new(&format!("defaults-{name}"));
    let dry = [&SHORTER[..], &["--dry-run"]].concat();
    let plan = run_in(dir.path(), exe, &dry, &[]);
    plan.assert_ok();
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "--dry-run writes nothing (no data/, no results)"
    );
    let planned = planned_labels(&plan.stdout);
    assert!(!planned.is_empty(), "{}", plan.stdout);
    let run = run_in(dir.path(), exe, &SHORTER, &[]);
    run.assert_ok();
    // Forks are added to headline rows until their ± reaches 2%: the estimate is a bound.
    assert!(
        run.stderr.contains("profile standard: at most "),
        "the header names the profile and the estimate:\n{}",
        run.stderr
    );
    assert_warns_of_the_machine_alone(&run.stderr);
    (run, planned, dir)
}

/// Every warning on `stderr` is about the machine's own state (another process busy,
/// the board throttled, the governor), never about a choice a default made.
pub(crate) fn assert_warns_of_the_machine_alone(stderr: &str) {
    let machine = ["the machine is busy", "throttled", "cpufreq governor"];
    for line in stderr.lines().filter(|l| l.contains("warning: ")) {
        assert!(
            machine.iter().any(|m| line.contains(m)),
            "a default warned: {line}\n{stderr}"
        );
    }
}

#[test]
fn every_binary_with_quick_warns_of_nothing_but_the_machine() {
    let dir = TempDir::new("defaults-quick");
    let quick = ["--quick", "--warmup-time", "20ms", "--time", "50ms"];
    let binaries = [
        env!("CARGO_BIN_EXE_bb-zstd"),
        env!("CARGO_BIN_EXE_bb-ipc"),
        env!("CARGO_BIN_EXE_bb-rpc"),
        env!("CARGO_BIN_EXE_bb-seek"),
    ];
    for exe in binaries {
        let run = run_in(dir.path(), exe, &quick, &[]);
        run.assert_ok();
        assert!(
            run.stdout.contains(": the answer =="),
            "{exe}: {}",
            run.stdout
        );
        assert_warns_of_the_machine_alone(&run.stderr);
    }
}

/// The benchmark names of a text table (the first column of rows starting `bb.`, up to
/// the blank line before the time lines), without secondary-metric rows.
fn table_names(table: &str) -> Vec<String> {
    table
        .lines()
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("bb.") && !l.split_whitespace().next().unwrap().contains(':'))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

/// Every benchmark of the plan is in the table, as many times as planned.
fn check_table_matches_plan(run: &Run, planned: &[String]) {
    let mut names = table_names(&run.stdout);
    let mut planned_names: Vec<String> = planned
        .iter()
        .map(|l| l.split(' ').next().unwrap().to_string())
        .collect();
    names.sort();
    planned_names.sort();
    assert_eq!(names, planned_names, "{}", run.stdout);
}

#[test]
fn bb_zstd_with_no_flags() {
    let (run, planned, _dir) = run_with_no_flags("zstd", env!("CARGO_BIN_EXE_bb-zstd"));
    check_table_matches_plan(&run, &planned);
    assert!(
        run.stdout.contains("bb.zstd.compress:ratio"),
        "{}",
        run.stdout
    );
    // It asks its question: one thread and every CPU, with and without the lock.
    for lock in ["lock=none", "lock=global"] {
        assert!(planned.iter().any(|l| l.contains(lock)), "{planned:?}");
    }
    assert!(
        planned.iter().any(|l| l.contains("threads=1")),
        "{planned:?}"
    );
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus > 1 {
        let most = format!("threads={cpus}");
        assert!(planned.iter().any(|l| l.contains(&most)), "{planned:?}");
        // The answer: scaling and what releasing the lock gains.
        assert!(
            run.stdout.contains(&format!("  {cpus} threads: ")),
            "{}",
            run.stdout
        );
        assert!(run.stdout.contains("releasing it gains"), "{}", run.stdout);
    }
}

#[test]
fn bb_ipc_with_no_flags() {
    let (run, planned, _dir) = run_with_no_flags("ipc", env!("CARGO_BIN_EXE_bb-ipc"));
    check_table_matches_plan(&run, &planned);
    // Every two-sided row pinned in a named placement; the answer gives each.
    let two_sided = planned.iter().filter(|l| !l.starts_with("bb.ipc.local"));
    assert!(
        two_sided.clone().all(|l| l.contains("placement=")),
        "{planned:?}"
    );
    assert!(
        !two_sided.clone().any(|l| l.contains("placement=none")),
        "{planned:?}"
    );
    assert!(
        run.stdout.contains("unix: method_no_args costs "),
        "{}",
        run.stdout
    );
    if std::thread::available_parallelism().map_or(1, |n| n.get()) > 1 {
        assert!(run.stdout.contains(" on 2 cores, "), "{}", run.stdout);
        assert!(run.stdout.contains(" on 1 core"), "{}", run.stdout);
    }
}

#[test]
fn bb_rpc_with_no_flags() {
    let (run, planned, _dir) = run_with_no_flags("rpc", env!("CARGO_BIN_EXE_bb-rpc"));
    check_table_matches_plan(&run, &planned);
    // The standard matrix keeps the original's questions.
    for (what, needle) in [
        ("sync", "bb.rpc.sync"),
        ("async", "bb.rpc.async"),
        ("future", "bb.rpc.future"),
        ("msgpack", "codec=msgpack"),
        ("raw", "codec=raw"),
        ("depth 64", "depth=64"),
        ("1 KiB", "payload=1024"),
        ("tcp", "transport=tcp"),
        ("unix", "transport=unix"),
    ] {
        assert!(
            planned.iter().any(|l| l.contains(needle)),
            "no {what} in the plan: {planned:?}"
        );
    }
}

#[test]
fn bb_seek_with_no_flags_generates_its_data() {
    let (run, planned, dir) = run_with_no_flags("seek", env!("CARGO_BIN_EXE_bb-seek"));
    check_table_matches_plan(&run, &planned);
    for object in [
        "random-1mb.txt",
        "random-4mb.txt",
        "random-16mb.txt",
        "manifest.json",
    ] {
        assert!(dir.join("data").join(object).is_file(), "data/{object}");
    }
}

#[test]
fn bb_compare_with_no_arguments_says_what_it_needs() {
    let dir = TempDir::new("defaults-compare");
    let run = run_in(dir.path(), env!("CARGO_BIN_EXE_bb-compare"), &[], &[]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}
