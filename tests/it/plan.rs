//! How long a run takes is known before it starts: `--dry-run` measures nothing, returns
//! at once, and plans exactly the benchmarks that run; the estimate is within 25% of the
//! wall time of a real run; bb-zstd's timed iterations last `--time` whatever `--jobs`
//! says. The tests that time whole runs are in `plan::timing`: one at a time, retried
//! (`support::timing`).

use crate::support::{estimated_seconds, planned_labels, reported_labels, run_in, Run, TempDir};
use std::time::{Duration, Instant};

const REPO: &str = env!("CARGO_MANIFEST_DIR");
/// Short settings every binary takes: a real run of a few seconds, of exactly its forks
/// (with a precision to reach, the estimate is a bound, not a forecast).
const SHORT: [&str; 12] = [
    "--warmup",
    "1",
    "--warmup-time",
    "200ms",
    "--iterations",
    "3",
    "--time",
    "300ms",
    "--forks",
    "1",
    "--precision",
    "off",
];

/// Plans, then runs `exe` with `args` in `dir`; checks the plan against the run: the same
/// benchmarks always, and the estimate within 25% of the wall time, in one of
/// [`crate::support::timing::TRIES`] tries (the shared retry of the timing tests).
pub(crate) fn plan_and_run(dir: &TempDir, exe: &str, args: &[&str]) -> (Run, f64) {
    plan_and_run_with(dir, exe, args, &[])
}

/// [`plan_and_run`] with `env` added to the environment of both runs.
pub(crate) fn plan_and_run_with(
    dir: &TempDir,
    exe: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Run, f64) {
    crate::support::timing::retry(&format!("the plan of {exe} {args:?}"), || {
        let dry = [args, &["--dry-run"]].concat();
        let started = Instant::now();
        let plan = run_in(dir.path(), exe, &dry, env);
        let planning = started.elapsed();
        plan.assert_ok();
        assert!(
            planning < Duration::from_secs(1),
            "--dry-run measures nothing: {planning:?}"
        );
        let out = dir.join("report.json");
        let real = [
            args,
            &["--format", "json", "--output", out.to_str().unwrap()],
        ]
        .concat();
        let started = Instant::now();
        let run = run_in(dir.path(), exe, &real, env);
        let wall = started.elapsed().as_secs_f64();
        run.assert_ok();
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        let mut planned = planned_labels(&plan.stdout);
        let mut ran = reported_labels(&report);
        planned.sort();
        ran.sort();
        assert_eq!(planned, ran, "the plan lists what runs");
        let estimate = estimated_seconds(&plan.stdout);
        // Within 25%, and half a second: a run of a second or two is mostly processes
        // starting, which a machine under load (make test's builds beside it) stretches
        // by more than a quarter.
        assert!(
            (estimate - wall).abs() <= 0.25 * wall + 0.5,
            "estimate {estimate:.1} s against a real run of {wall:.1} s:\n{}",
            plan.stdout
        );
        (run, wall)
    })
}

#[test]
fn run_all_dry_run_plans_the_default_suite_within_fifteen_minutes() {
    let dir = TempDir::new("plan-run-all");
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_bb-zstd"))
        .parent()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let run = run_in(
        dir.path(),
        "sh",
        &[&format!("{REPO}/scripts/run-all.sh"), "--dry-run"],
        &[("BB_BIN_DIR", &bin)],
    );
    run.assert_ok();
    let last = run.stdout.lines().last().unwrap();
    assert!(
        last.starts_with("run-all: 4 binaries, profile standard"),
        "{last}"
    );
    let total = estimated_seconds(last);
    assert!(total > 60.0 && total <= 15.0 * 60.0, "{last}");
    // Each binary's plan is printed, and the total is their sum.
    let sum: f64 = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("estimated duration: "))
        .map(estimated_seconds)
        .sum();
    assert!((sum - total).abs() <= 4.0, "{sum} against {total}");
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "no results directory"
    );
}

/// The tests of plan whose pass depends on this machine's speed (a deadline, a time
/// bound or a ratio of two timings): retried, one at a time ([`crate::support::timing`]).
mod timing {
    use super::*;
    use crate::support::timing::retry;

    #[test]
    fn bb_zstd_plan_and_estimate_hold() {
        let dir = TempDir::new("plan-zstd");
        let args = [&SHORT[..], &["--threads", "1,2", "--size", "256k"]].concat();
        plan_and_run(&dir, env!("CARGO_BIN_EXE_bb-zstd"), &args);
    }

    #[test]
    fn bb_zstd_single_shots_are_estimated_from_a_calibration() {
        let dir = TempDir::new("plan-zstd-ss");
        let args = [
            &SHORT[..],
            &[
                "--mode",
                "ss",
                "--jobs",
                "100",
                "--threads",
                "1",
                "--size",
                "256k",
            ],
        ]
        .concat();
        plan_and_run(&dir, env!("CARGO_BIN_EXE_bb-zstd"), &args);
    }

    #[test]
    fn bb_ipc_plan_and_estimate_hold() {
        let dir = TempDir::new("plan-ipc");
        let args = [&SHORT[..], &["--calls", "method_no_args,method_block"]].concat();
        plan_and_run(&dir, env!("CARGO_BIN_EXE_bb-ipc"), &args);
    }

    #[test]
    fn bb_rpc_plan_and_estimate_hold() {
        let dir = TempDir::new("plan-rpc");
        let args = [&SHORT[..], &["--transport", "unix", "--payload", "16"]].concat();
        plan_and_run(&dir, env!("CARGO_BIN_EXE_bb-rpc"), &args);
    }

    #[test]
    fn bb_rpc_rate_rows_plan_and_estimate_hold() {
        let dir = TempDir::new("plan-rpc-rate");
        let args = [
            &SHORT[..],
            &[
                "--rate",
                "500,2k",
                "--transport",
                "unix",
                "--codec",
                "raw",
                "--payload",
                "16",
            ],
        ]
        .concat();
        let (run, _) = plan_and_run(&dir, env!("CARGO_BIN_EXE_bb-rpc"), &args);
        assert!(
            run.stderr.contains("2 benchmarks, mode sample"),
            "{}",
            run.stderr
        );
    }

    #[test]
    fn bb_seek_plan_and_estimate_hold() {
        let dir = TempDir::new("plan-seek");
        // Its default mode, single shots, each estimated from the bytes it reads.
        let args = [&SHORT[..], &["--sizes", "1m,4m"]].concat();
        // The objects first: generating them is set-up, not part of the plan.
        run_in(
            dir.path(),
            env!("CARGO_BIN_EXE_bb-seek"),
            &["gen", "--sizes", "1m,4m"],
            &[],
        )
        .assert_ok();
        plan_and_run(&dir, env!("CARGO_BIN_EXE_bb-seek"), &args);
    }

    #[test]
    fn a_slow_fork_start_is_timed_into_the_estimate() {
        // A fork runner that takes 0.3 s to start each fork, as qemu-user on a slow
        // board might: the plan times a start before it estimates, instead of assuming
        // a fast machine's (the estimate was 0.6 s against a run of 3.4 s).
        let dir = TempDir::new("plan-slow-start");
        let runner = dir.join("slow-runner");
        std::fs::write(&runner, "#!/bin/sh\nsleep 0.3\nexec \"$@\"\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&runner, std::fs::Permissions::from_mode(0o755)).unwrap();
        let exe = env!("CARGO_BIN_EXE_bb-seek");
        run_in(dir.path(), exe, &["gen", "--sizes", "1m"], &[]).assert_ok();
        let args = [&SHORT[..], &["--sizes", "1m"]].concat();
        let env = [("BB_FORK_RUNNER", runner.to_str().unwrap())];
        let (_, wall) = plan_and_run_with(&dir, exe, &args, &env);
        assert!(
            wall >= 10.0 * 0.3,
            "ten forks, each 0.3 s to start: {wall:.1} s"
        );
    }

    #[test]
    fn bb_zstd_timed_iterations_last_their_time_whatever_the_jobs() {
        retry(
            "plan::timing::bb_zstd_timed_iterations_last_their_time_whatever_the_jobs",
            || {
                for jobs in ["1", "100000"] {
                    let dir = TempDir::new("plan-zstd-jobs");
                    let args = [
                        "--warmup",
                        "0",
                        "--iterations",
                        "2",
                        "--time",
                        "1s",
                        "--forks",
                        "0",
                        "--op",
                        "compress",
                        "--threads",
                        "1",
                        "--jobs",
                        jobs,
                        "--format",
                        "json",
                    ];
                    let started = Instant::now();
                    let run = run_in(dir.path(), env!("CARGO_BIN_EXE_bb-zstd"), &args, &[]);
                    let wall = started.elapsed();
                    run.assert_ok();
                    let json = run.json();
                    let raw = &json[0]["primaryMetric"]["rawData"][0];
                    assert_eq!(raw.as_array().unwrap().len(), 2, "{json:#}");
                    // 100000 jobs of 1.7 MB would take minutes: two iterations of 1 s do not.
                    assert!(
                        wall < Duration::from_secs(15),
                        "--jobs {jobs}: two 1 s iterations took {wall:?}"
                    );
                    assert!(wall >= Duration::from_secs(2), "{wall:?}");
                }
            },
        );
    }
}
