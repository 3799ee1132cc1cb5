//! Hostile conditions the run meets at process level (round four): a fork that never
//! reports, a system that refuses threads. Each ends in a clear line and an exit code
//! within a bound, never a hang or a panic.

use crate::support::{run_bounded, TempDir, ZSTD_SMALL};
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
    let mut args = ZSTD_SMALL.to_vec();
    args.extend([
        "--op",
        "compress",
        "--threads",
        "1",
        "--lock",
        "none",
        "--forks",
        "1",
        "--timeout",
        "1s",
    ]);
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
            // Rust's allocator aborts where memory itself is refused: that is not a
            // thread, and no message could be printed without memory.
            let allocation = run.stderr.contains("memory allocation of");
            assert!(
                allocation || (!run.stderr.contains("panicked") && run.code != 101),
                "{name} under {limit}: exit {}\n{}",
                run.code,
                run.stderr
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
