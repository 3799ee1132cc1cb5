//! Integration tests of `--output` on the real binaries: a path that cannot be written is
//! refused at once with exit code 2, before anything is measured; a full device fails the
//! run with exit code 1 and stays a device; a symlink is followed and kept; stdout given
//! as a path gets the report alone.

use crate::support::{run_with, Run, TempDir};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const ZSTD: &str = env!("CARGO_BIN_EXE_bb-zstd");
const COMPARE: &str = env!("CARGO_BIN_EXE_bb-compare");
/// A short run in this process, about a second and a half.
const SHORT: &[&str] = &[
    "--quick",
    "--size",
    "100k",
    "--jobs",
    "4",
    "--threads",
    "1",
    "--op",
    "compress",
    "--forks",
    "0",
    "--warmup-time",
    "500ms",
    "--iterations",
    "2",
];

fn bb_zstd(extra: &[&str]) -> Run {
    run_with(ZSTD, &[SHORT, &["--time", "500ms"], extra].concat(), &[])
}

/// A run that would measure for at least four seconds, so that measuring before refusing
/// its output would show in the time it took.
fn long_bb_zstd(extra: &[&str]) -> (Run, Duration) {
    let start = Instant::now();
    let run = run_with(ZSTD, &[SHORT, &["--time", "2s"], extra].concat(), &[]);
    (run, start.elapsed())
}

fn text(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Asserts that a run refused `flag path` at once: exit code 2, one line on stderr
/// naming the flag and the path, nothing measured or printed.
fn assert_refused_at_once(run: &Run, took: Duration, flag: &str, path: &str) {
    assert_eq!(run.code, 2, "stderr: {}", run.stderr);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {}", run.stderr);
    assert!(
        lines[0].contains(flag) && lines[0].contains(path),
        "{}",
        lines[0]
    );
    assert!(run.stdout.is_empty(), "nothing on stdout: {}", run.stdout);
    assert!(took < Duration::from_secs(3), "refused at once: {took:?}");
}

/// A character device that fails every write with ENOSPC: a node of /dev/full's numbers
/// in `dir` where the tests may make one (a writer that replaced devices then breaks
/// only this copy), else /dev/full itself.
fn full_device(dir: &TempDir) -> PathBuf {
    let node = dir.join("full");
    let made = run_with("mknod", &["-m", "666", text(&node), "c", "1", "7"], &[]);
    if made.code == 0 && std::fs::OpenOptions::new().write(true).open(&node).is_ok() {
        node
    } else {
        PathBuf::from("/dev/full")
    }
}

#[test]
fn a_full_device_fails_the_run_with_exit_1_and_stays_a_device() {
    let dir = TempDir::new("out-full");
    let full = full_device(&dir);
    let run = bb_zstd(&["--output", text(&full), "--format", "json"]);
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    let last = run.stderr.lines().last().unwrap_or("");
    assert!(
        last.contains(text(&full)) && last.contains("No space left on device"),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout.starts_with("Benchmark"),
        "the table is not lost: {}",
        run.stdout
    );
    let kind = std::fs::symlink_metadata(&full).unwrap().file_type();
    assert!(
        kind.is_char_device(),
        "{} is still a device",
        full.display()
    );
    if full.starts_with(dir.path()) {
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}

#[test]
fn an_output_symlink_is_followed_and_kept() {
    let dir = TempDir::new("out-symlink");
    std::os::unix::fs::symlink("real.json", dir.join("link.json")).unwrap();
    std::fs::write(dir.join("real.json"), "old").unwrap();
    let run = bb_zstd(&["--output", text(&dir.join("link.json"))]);
    run.assert_ok();
    let link = std::fs::symlink_metadata(dir.join("link.json")).unwrap();
    assert!(link.file_type().is_symlink(), "the link is still a link");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("real.json")).unwrap()).unwrap();
    assert_eq!(report[0]["benchmark"], "bb.zstd.compress");
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["link.json", "real.json"], "no temporary left");
}

#[test]
fn stdout_as_the_output_gets_the_report_alone() {
    // /dev/stdout is this same link; one of the test's own keeps a writer that replaced
    // what it names from replacing the machine's /dev/stdout.
    let dir = TempDir::new("out-stdout");
    let stdout = dir.join("stdout");
    std::os::unix::fs::symlink("/proc/self/fd/1", &stdout).unwrap();
    let run = bb_zstd(&["--output", text(&stdout), "--format", "json"]);
    run.assert_ok();
    assert_eq!(run.json()[0]["benchmark"], "bb.zstd.compress");
    assert!(std::fs::symlink_metadata(&stdout)
        .unwrap()
        .file_type()
        .is_symlink());
}

/// The tests of outputs whose pass depends on this machine's speed (a deadline, a time
/// bound or a ratio of two timings): retried, one at a time ([`crate::support::timing`]).
mod timing {
    use super::*;
    use crate::support::timing::retry;

    #[test]
    fn an_output_that_cannot_be_written_is_refused_before_measuring() {
        retry(
            "outputs::timing::an_output_that_cannot_be_written_is_refused_before_measuring",
            || {
                let dir = TempDir::new("out-refused");
                let missing = dir.join("missing/x.json");
                for path in [text(&missing), "/", text(dir.path())] {
                    let (run, took) = long_bb_zstd(&["--output", path]);
                    assert_refused_at_once(&run, took, "--output", path);
                }
                assert!(!dir.join("missing").exists(), "nothing created");
            },
        );
    }

    #[test]
    fn an_output_in_an_unwritable_directory_is_refused_before_measuring() {
        retry(
            "outputs::timing::an_output_in_an_unwritable_directory_is_refused_before_measuring",
            || {
                // Root may write anywhere: run the binary as nobody, where setpriv can.
                let as_nobody = ["--reuid=65534", "--regid=65534", "--clear-groups", ZSTD];
                let usable = run_with("setpriv", &[&as_nobody[..], &["--help"]].concat(), &[]);
                if usable.code != 0 {
                    eprintln!("skipped: cannot run {ZSTD} as nobody with setpriv");
                    return;
                }
                let dir = TempDir::new("out-unwritable");
                let path = dir.join("x.json");
                let start = Instant::now();
                let run = run_with(
                    "setpriv",
                    &[
                        &as_nobody[..],
                        SHORT,
                        &["--time", "2s", "--output", text(&path)],
                    ]
                    .concat(),
                    &[],
                );
                assert_refused_at_once(&run, start.elapsed(), "--output", text(&path));
                assert!(run.stderr.contains("Permission denied"), "{}", run.stderr);
            },
        );
    }

    #[test]
    fn bb_compare_refuses_a_directory_or_a_missing_one_before_comparing() {
        retry(
            "outputs::timing::bb_compare_refuses_a_directory_or_a_missing_one_before_comparing",
            || {
                let dir = TempDir::new("out-compare");
                // Files bb-compare would fail to load: refusing the output comes first.
                let base = text(&dir.join("absent-base.json")).to_string();
                for (flag, path) in [
                    ("--output", text(dir.path()).to_string()),
                    ("--svg", text(dir.path()).to_string()),
                    ("--output", text(&dir.join("missing/r.json")).to_string()),
                ] {
                    let start = Instant::now();
                    let run = run_with(COMPARE, &[flag, &path, &base, &base], &[]);
                    assert_refused_at_once(&run, start.elapsed(), flag, &path);
                }
            },
        );
    }
}

/// Issue 26: SIGINT or SIGTERM while `--output`'s file is written or synced left its
/// `.NAME.tmp.PID`. The exit's clean-up removes it now (bb-zstd's, and bb-compare's,
/// which handles the signals for that); and a write removes what runs killed outright
/// (SIGKILL) left of the same file, when their process is gone.
#[cfg(feature = "fault-injection")]
#[test]
fn a_signal_while_the_output_is_written_leaves_no_temporary_file() {
    use nix::sys::signal::Signal;
    use std::process::{Command, Stdio};
    let dir = TempDir::new("out-signal");
    let results = dir.join("results.json");
    bb_zstd(&["--output", text(&results), "--format", "json"]).assert_ok();
    let out = dir.join("out.json");
    let mut dead = Command::new("true").spawn().unwrap();
    dead.wait().unwrap();
    let stale = dir.join(&format!(".out.json.tmp.{}", dead.id()));
    let zstd: Vec<&str> = [SHORT, &["--time", "500ms", "--output", text(&out)]].concat();
    let compare = vec![text(&results), text(&results), "--output", text(&out)];
    for (exe, args) in [(ZSTD, zstd), (COMPARE, compare)] {
        for signal in [Signal::SIGINT, Signal::SIGTERM] {
            std::fs::write(&stale, "left by a killed run").unwrap();
            // Every replaced file is held 30 s between its write and its fsync.
            let child = Command::new(exe)
                .args(&args)
                .env("BB_FAULT_OUTPUT_STALL", "30")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let pid = child.id();
            let tmp = dir.join(&format!(".out.json.tmp.{pid}"));
            let what = format!("{exe} {signal}");
            let writing = crate::support::wait_for(Duration::from_secs(60), || tmp.exists());
            assert!(writing, "{what}: never wrote {}", tmp.display());
            assert!(
                !stale.exists(),
                "{what}: the dead run's temporary file is kept"
            );
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal).unwrap();
            let run = crate::support::finish_within(child, Duration::from_secs(30), &what);
            assert_eq!(run.code, 128 + signal as i32, "{what}: {}", run.stderr);
            let left: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains(".tmp."))
                .collect();
            assert!(left.is_empty(), "{what} left {left:?}");
            assert!(!out.exists(), "{what}: a half-written output");
        }
    }
}
