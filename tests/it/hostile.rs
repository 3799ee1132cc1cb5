//! Hostile conditions the run meets at process level (round four): a fork that never
//! reports, a system that refuses threads. Each ends in a clear line and an exit code
//! within a bound, never a hang or a panic.

use crate::support::{run_bounded, TempDir, ZSTD_ONE_ROW, ZSTD_SMALL};
use std::time::{Duration, Instant};

const ZSTD: &str = env!("CARGO_BIN_EXE_bb-zstd");

#[test]
fn a_fork_that_never_reports_is_ended_by_the_parent_after_the_timeout() {
    use std::os::unix::fs::PermissionsExt;
    let d = TempDir::new("silent-fork");
    // A runner that never starts the fork it is given: it only waits.
    let runner = d.join("never-starts");
    std::fs::write(&runner, "#!/bin/sh\nexec sleep 300\n").unwrap();
    std::fs::set_permissions(&runner, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut args = [ZSTD_SMALL, ZSTD_ONE_ROW].concat();
    args.extend(["--forks", "1", "--timeout", "1s"]);
    let started = Instant::now();
    let run = run_bounded(
        ZSTD,
        &args,
        &[("BB_FORK_RUNNER", runner.to_str().unwrap())],
        Duration::from_secs(90),
    );
    let took = started.elapsed();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("fork 1 said nothing for 11s (--timeout and 10s to start)"),
        "{}",
        run.stderr
    );
    // The start probe waits 5 s for its copy, the fork 11 s: well inside the bound.
    assert!(took < Duration::from_secs(60), "took {took:?}");
}

#[test]
fn no_binary_panics_where_the_system_refuses_a_thread() {
    // Address-space limits from one the loader cannot work in, up past where every
    // thread starts: at each, a binary loads and fails with one line (exit 1), or runs;
    // never a panic. bb-zstd measures a small input; the others plan.
    let zstd_args = [
        "--quick",
        "--size",
        "100k",
        "--forks",
        "0",
        "--iterations",
        "1",
        "--time",
        "100ms",
        "--warmup",
        "0",
    ];
    for name in ["bb-zstd", "bb-ipc", "bb-rpc", "bb-seek", "bb-compare"] {
        let exe = std::path::Path::new(ZSTD).with_file_name(name);
        let exe = exe.to_str().unwrap();
        let mut refused = 0;
        for mb in 8..=24 {
            let limit = format!("--as={}", mb * 1_000_000);
            let mut args = vec![limit.as_str(), exe];
            match name {
                "bb-zstd" => args.extend(zstd_args),
                _ => args.extend(["--quick", "--dry-run"]),
            }
            let run = run_bounded("prlimit", &args, &[], Duration::from_secs(60));
            // Rust's allocator aborts where memory itself is refused, and its runtime
            // panics where it cannot guard the main thread's stack before main runs:
            // neither is boardbench's code, and no message could be printed without
            // memory. A panic of boardbench's own is at src/.
            let ours = run.stderr.contains("panicked at src/");
            assert!(
                !ours,
                "{name} under {limit}: exit {}\n{}",
                run.code, run.stderr
            );
            let line = run
                .stderr
                .lines()
                .find(|l| l.contains("error: starting the "));
            if let Some(line) = line {
                assert_eq!(run.code, 1, "{name} under {limit}: {}", run.stderr);
                assert!(
                    line.ends_with("thread: Resource temporarily unavailable (os error 11)"),
                    "{line}"
                );
                refused += 1;
            }
        }
        if name == "bb-zstd" {
            assert!(refused > 0, "no limit made {name} refuse a thread");
        }
    }
}

#[test]
fn a_plan_past_a_year_is_refused_in_one_line_not_overflowed() {
    for name in ["bb-zstd", "bb-ipc", "bb-rpc", "bb-seek"] {
        let exe = std::path::Path::new(ZSTD).with_file_name(name);
        let huge = [
            "--iterations",
            "4000000000",
            "--forks",
            "4000000000",
            "--time",
            "100000h",
        ];
        for extra in [
            &["--dry-run"][..],
            &[],
            &["--warmup-time", "10000h", "--warmup", "9000000"],
        ] {
            let mut args = huge.to_vec();
            args.extend(extra);
            let run = run_bounded(exe.to_str().unwrap(), &args, &[], Duration::from_secs(60));
            assert_eq!(run.code, 2, "{name} {args:?}: {}", run.stderr);
            assert_eq!(run.stderr.lines().count(), 1, "{name}: {}", run.stderr);
            assert!(
                run.stderr.contains("plan a run") && run.stderr.contains("more than a year"),
                "{name}: {}",
                run.stderr
            );
        }
    }
    // Seven months a build, both builds of each pair counted.
    let run = run_bounded(
        ZSTD,
        &[
            "--op",
            "compress",
            "--threads",
            "1",
            "--lock",
            "none",
            "--forks",
            "1",
            "--warmup",
            "0",
            "--iterations",
            "5",
            "--time",
            "1000h",
            "--against",
            ZSTD,
        ],
        &[],
        Duration::from_secs(60),
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("more than a year"), "{}", run.stderr);
    // A plan of a few days is a plan.
    let run = run_bounded(
        ZSTD,
        &["--time", "1h", "--dry-run"],
        &[],
        Duration::from_secs(60),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn a_sysroot_of_fifos_and_devices_neither_hangs_nor_floods_a_run() {
    let d = TempDir::new("sysroot");
    let root = d.path();
    std::fs::create_dir_all(root.join("proc")).unwrap();
    std::fs::create_dir_all(root.join("sys/class/thermal/thermal_zone0")).unwrap();
    let mode = nix::sys::stat::Mode::S_IRWXU;
    nix::unistd::mkfifo(&root.join("proc/cpuinfo"), mode).unwrap();
    nix::unistd::mkfifo(&root.join("sys/class/thermal/thermal_zone0/temp"), mode).unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join("proc/loadavg")).unwrap();
    let mut args = [ZSTD_SMALL, ZSTD_ONE_ROW].concat();
    args.extend(["--forks", "0"]);
    let run = run_bounded(
        ZSTD,
        &args,
        &[("BB_SYSROOT", root.to_str().unwrap())],
        Duration::from_secs(60),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Set and empty is unset: the real /proc, not the current directory's.
    std::fs::create_dir_all(root.join("proc/device-tree")).unwrap();
    std::fs::write(root.join("proc/device-tree/model"), "Fake Board\n").unwrap();
    let run = crate::support::run_in(root, ZSTD, &args, &[("BB_SYSROOT", "")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("Fake Board"), "{}", run.stderr);
}

#[test]
fn control_characters_in_a_result_file_reach_neither_the_terminal_nor_the_svg_raw() {
    let d = TempDir::new("compare-escapes");
    let entry = |score: f64| {
        serde_json::json!({
            "benchmark": "bb.x.evil\u{1b}[2J\nFORGED: line", "mode": "thrpt", "threads": 1,
            "params": {"k\u{1b}]0;title\u{7}": "v\r\nFAILED"},
            "primaryMetric": {"score": score, "scoreError": "NaN", "scoreUnit": "ops/s\u{1b}[31m",
                              "rawData": [[score], [score], [score]]},
            "secondaryMetrics": {}
        })
    };
    let (a, b) = (d.join("a.json"), d.join("b.json"));
    std::fs::write(&a, serde_json::json!([entry(100.0)]).to_string()).unwrap();
    std::fs::write(&b, serde_json::json!([entry(50.0)]).to_string()).unwrap();
    let svg = d.join("c.svg");
    let compare = std::path::Path::new(ZSTD).with_file_name("bb-compare");
    let run = run_bounded(
        compare.to_str().unwrap(),
        &[
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--svg",
            svg.to_str().unwrap(),
        ],
        &[],
        Duration::from_secs(60),
    );
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    for text in [&run.stdout, &run.stderr] {
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text}"
        );
        assert!(
            !text
                .lines()
                .any(|l| l.starts_with("FORGED") || l.starts_with("FAILED")),
            "{text}"
        );
    }
    assert!(
        run.stdout.contains("evil\\u{1b}[2J\\nFORGED"),
        "{}",
        run.stdout
    );
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(
        !chart
            .chars()
            .any(|c| c < ' ' && !matches!(c, '\t' | '\n' | '\r')),
        "a character XML 1.0 forbids"
    );
    assert!(chart.contains("evil\\u{1b}[2J"), "the name, escaped");
}

#[test]
fn a_missing_fork_runner_is_named_not_the_binary() {
    let mut args = [ZSTD_SMALL, ZSTD_ONE_ROW].concat();
    args.extend(["--forks", "1"]);
    let run = run_bounded(
        ZSTD,
        &args,
        &[("BB_FORK_RUNNER", "/nonexistent/qemu-arm-static")],
        Duration::from_secs(60),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let last = run.stderr.lines().last().unwrap();
    assert!(
        last.starts_with(
            "bb-zstd: error: cannot run BB_FORK_RUNNER=/nonexistent/qemu-arm-static (No such file"
        ),
        "{last}"
    );
    assert!(
        !last.contains("target/debug/bb-zstd"),
        "the binary is not to blame: {last}"
    );
}

#[test]
fn bb_compare_refuses_a_noise_field_past_its_range_and_names_an_unnamed_flag() {
    let d = TempDir::new("compare-ranges");
    let entry = |score: f64, ours: serde_json::Value| {
        serde_json::json!({
            "benchmark": "bb.x.y", "mode": "thrpt", "threads": 1,
            "primaryMetric": {"score": score, "scoreError": "NaN", "scoreUnit": "ops/s",
                              "rawData": [[score], [score], [score]]},
            "secondaryMetrics": {}, "boardbench": ours
        })
    };
    let compare = std::path::Path::new(ZSTD).with_file_name("bb-compare");
    let compare = compare.to_str().unwrap();
    let a = d.join("a.json");
    std::fs::write(
        &a,
        serde_json::json!([entry(100.0, serde_json::json!({}))]).to_string(),
    )
    .unwrap();
    // A run floor of 1e308 would have made every change noise, with no note.
    for (ours, named) in [
        (
            serde_json::json!({"runFloor": 1e308}),
            "boardbench.runFloor",
        ),
        (serde_json::json!({"noiseBand": 50}), "boardbench.noiseBand"),
        (serde_json::json!({"runFloor": -1}), "boardbench.runFloor"),
        (
            serde_json::json!({"against": {"ratio": 1.0, "low": 0.9, "high": 1.1, "pairs": 5,
                                           "level": 2}}),
            "level",
        ),
    ] {
        let b = d.join("b.json");
        std::fs::write(
            &b,
            serde_json::json!([entry(50.0, ours.clone())]).to_string(),
        )
        .unwrap();
        let run = run_bounded(
            compare,
            &[a.to_str().unwrap(), b.to_str().unwrap()],
            &[],
            Duration::from_secs(60),
        );
        assert_eq!(run.code, 2, "{ours}: {}{}", run.stdout, run.stderr);
        assert!(run.stderr.contains(named), "{ours}: {}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    }
    // An empty flag's name: the row is still flagged, and the answer says by what.
    let b = d.join("b.json");
    let flagged = serde_json::json!({"flags": [""]});
    std::fs::write(&b, serde_json::json!([entry(50.0, flagged)]).to_string()).unwrap();
    let run = run_bounded(
        compare,
        &[a.to_str().unwrap(), b.to_str().unwrap()],
        &[],
        Duration::from_secs(60),
    );
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    assert!(!run.stdout.contains("()"), "{}", run.stdout);
    assert!(
        run.stdout.contains("flagged as they ran (unnamed)"),
        "{}",
        run.stdout
    );
}
