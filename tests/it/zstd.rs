//! Integration tests of bb-zstd: the real binary, run in quick mode on small inputs;
//! its reports parsed and checked, its bad input answered with exit code 2.

use crate::support::{entry, run_with, Run, TempDir};

const EXE: &str = env!("CARGO_BIN_EXE_bb-zstd");
const SMALL: &[&str] = crate::support::ZSTD_SMALL;

fn bb_zstd(extra: &[&str], env: &[(&str, &str)]) -> Run {
    let mut args = SMALL.to_vec();
    args.extend_from_slice(extra);
    run_with(EXE, &args, env)
}

#[test]
fn json_report_has_jmh_layout_and_real_measurements() {
    let run = bb_zstd(
        &[
            "--threads",
            "1,2",
            "--lock",
            "none",
            "--forks",
            "2",
            "--format",
            "json",
        ],
        &[],
    );
    run.assert_ok();
    let json = run.json();
    assert_eq!(
        json.as_array().unwrap().len(),
        4,
        "compress and decompress at 1 and 2 threads"
    );
    for op in ["compress", "decompress"] {
        for threads in ["1", "2"] {
            let e = entry(
                &json,
                &format!("bb.zstd.{op}"),
                &[("threads", threads), ("level", "3"), ("context", "job")],
            );
            assert_eq!(e["mode"], "thrpt");
            assert_eq!(e["forks"], 2);
            assert_eq!(e["threads"].as_u64().unwrap().to_string(), threads);
            let pm = &e["primaryMetric"];
            assert_eq!(pm["scoreUnit"], "ops/s");
            let raw = pm["rawData"].as_array().unwrap();
            assert_eq!(raw.len(), 2, "one list per fork");
            assert!(
                raw.iter().all(|f| f.as_array().unwrap().len() == 2),
                "two iterations each"
            );
            let score = pm["score"].as_f64().unwrap();
            let all: Vec<f64> = raw
                .iter()
                .flat_map(|f| f.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()))
                .collect();
            let mean = all.iter().sum::<f64>() / all.len() as f64;
            assert!(
                (score - mean).abs() < 1e-9 * mean,
                "score is the mean of all iterations"
            );
            assert!(
                pm["scoreError"].as_f64().unwrap() >= 0.0,
                "four iterations give a finite error"
            );
            // MB/s is jobs/s times the bytes a job processes: the input (just under
            // 100 KiB, whole records) twice.
            let mbs = e["secondaryMetrics"]["MB/s"]["score"].as_f64().unwrap();
            let input_bytes = mbs / score * 1e6 / 2.0;
            assert!(
                (101_000.0..=102_400.0).contains(&input_bytes),
                "{mbs} MB/s at {score} jobs/s"
            );
            assert!(
                e["secondaryMetrics"]["ratio"]["score"].as_f64().unwrap() > 2.0,
                "JSON compresses"
            );
            let bb = &e["boardbench"];
            assert!(bb["cpu"]["user"].as_f64().unwrap() > 0.0);
            assert!(bb["peakRssKiB"].as_u64().unwrap() > 0);
            assert_eq!(bb["throttled"], false);
            assert!(
                bb["operations"].as_u64().unwrap() >= 4 * 4,
                "at least one 4-job invocation per iteration"
            );
            assert_eq!(
                e["environment"]["coresOnline"].as_u64().unwrap() as usize,
                std::thread::available_parallelism().unwrap().get()
            );
        }
        let two = entry(&json, &format!("bb.zstd.{op}"), &[("threads", "2")]);
        assert!(
            two["secondaryMetrics"]["speedup"]["score"]
                .as_f64()
                .unwrap()
                > 0.0
        );
        assert!(two["secondaryMetrics"]["efficiency"]["score"].is_number());
    }
}

#[test]
fn both_locks_in_one_run_each_a_row_with_its_param_and_every_job_verified() {
    let run = bb_zstd(
        &[
            "--lock",
            "none,global",
            "--threads",
            "2",
            "--forks",
            "0",
            "--format",
            "json",
        ],
        &[],
    );
    // A job whose output failed its check would end the run with exit 1.
    run.assert_ok();
    let json = run.json();
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), 4, "two ops under two locks");
    for op in ["compress", "decompress"] {
        for lock in ["none", "global"] {
            let e = entry(
                &json,
                &format!("bb.zstd.{op}"),
                &[("threads", "2"), ("lock", lock)],
            );
            assert!(e["boardbench"]["operations"].as_u64().unwrap() > 0);
        }
    }
    // The answer says what releasing the lock gains, at the threads both ran.
    let answer = json[0]["boardbench"]["answer"]["lines"].as_array().unwrap();
    for op in ["compress", "decompress"] {
        let at = answer
            .iter()
            .position(|l| l.as_str().unwrap().starts_with(&format!("{op}: ")))
            .unwrap_or_else(|| panic!("no {op} line in {answer:?}"));
        let lock_line = answer[at + 1..]
            .iter()
            .map(|l| l.as_str().unwrap())
            .take_while(|l| l.starts_with("  "))
            .find(|l| l.starts_with("  a global lock at 2 threads: "));
        assert!(
            lock_line.is_some_and(|l| l.contains("releasing it gains")),
            "{op}: {answer:?}"
        );
    }
    // The params as JMH writes them: sorted by name (its TreeMap), lock among them.
    for params in run.stdout.split("\"params\"").skip(1) {
        let params = &params[..params.find('}').unwrap()];
        // A missing key sorts first, out of order.
        let mut written = ["lock", "threads", "context", "level", "input"];
        written.sort_by_key(|k| params.find(&format!("\"{k}\"")));
        assert_eq!(
            written,
            ["context", "input", "level", "lock", "threads"],
            "{params}"
        );
    }
    // A default run's labels name its lock too, last.
    let default = bb_zstd(&["--threads", "1", "--forks", "0", "--op", "compress"], &[]);
    default.assert_ok();
    assert!(
        default.stdout.contains(
            "bb.zstd.compress (input=generated-102400, level=3, context=job, threads=1, lock=none)"
        ),
        "{}",
        default.stdout
    );
}

#[test]
fn text_report_has_table_and_time_line() {
    let run = bb_zstd(&["--threads", "1", "--forks", "0", "--op", "compress"], &[]);
    run.assert_ok();
    let first = run.stdout.lines().next().unwrap();
    assert!(
        first.starts_with("Benchmark") && first.contains("Mode  Cnt") && first.ends_with("Units"),
        "{first}"
    );
    assert!(run.stdout.contains("bb.zstd.compress:MB/s"));
    assert!(
        !run.stdout.contains("bb.zstd.decompress"),
        "--op compress runs compress only"
    );
    let time_line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("bb.zstd.compress ("))
        .unwrap();
    for part in ["user ", "sys ", "cpu ", "total ", "peak RSS "] {
        assert!(time_line.contains(part), "{time_line}");
    }
    assert!(
        run.stderr.contains("# bb-zstd") && run.stderr.contains("mode thrpt"),
        "header on stderr: {}",
        run.stderr
    );
}

#[test]
fn csv_report_and_atomic_output_file() {
    let dir = TempDir::new("zstd-csv");
    let out = dir.join("result.csv");
    let run = bb_zstd(
        &[
            "--threads",
            "1",
            "--forks",
            "0",
            "--output",
            out.to_str().unwrap(),
        ],
        &[],
    );
    run.assert_ok();
    assert!(
        run.stdout.starts_with("Benchmark"),
        "text still goes to stdout"
    );
    let csv = std::fs::read_to_string(&out).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    // JMH's columns, the params sorted by name as JMH sorts them.
    assert!(header.starts_with("\"Benchmark\",\"Mode\",\"Threads\",\"Samples\",\"Score\",\"Score Error (99.9%)\",\"Unit\",\"Param: context\",\"Param: input\",\"Param: level\",\"Param: lock\",\"Param: threads\",\"User (s)\""), "{header}");
    let rows: Vec<&str> = lines.collect();
    assert!(
        rows.iter()
            .any(|r| r.starts_with("\"bb.zstd.compress\",\"thrpt\",1,2,")),
        "{csv}"
    );
    assert!(
        rows.iter()
            .any(|r| r.starts_with("\"bb.zstd.decompress:MB/s\"")),
        "{csv}"
    );
    let columns = header.split(',').count();
    assert!(rows.iter().all(|r| r.split(',').count() == columns));
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names,
        vec![std::ffi::OsString::from("result.csv")],
        "no temporary file left"
    );
}

#[test]
fn every_mode_reports_its_unit() {
    for (mode, unit) in [
        ("avgt", "ms/op"),
        ("ss", "ms/op"),
        ("sample", "ms/op"),
        ("thrpt", "ops/s"),
    ] {
        let run = bb_zstd(
            &[
                "--mode",
                mode,
                "--threads",
                "1",
                "--forks",
                "0",
                "--op",
                "decompress",
                "--format",
                "json",
            ],
            &[],
        );
        run.assert_ok();
        let e = &run.json()[0];
        assert_eq!(e["mode"], mode);
        assert_eq!(e["primaryMetric"]["scoreUnit"], unit);
        if mode == "sample" {
            let p = &e["primaryMetric"]["scorePercentiles"];
            assert!(p["99.0"].as_f64().unwrap() >= p["50.0"].as_f64().unwrap());
            assert!(e["boardbench"]["samples"].as_u64().unwrap() >= 2);
        }
        if mode == "ss" {
            assert_eq!(
                e["boardbench"]["operations"], 8,
                "one 4-job invocation per iteration, two iterations"
            );
        }
    }
}

#[test]
fn input_file_and_environment_variables_of_the_original() {
    let dir = TempDir::new("zstd-input");
    let input = dir.join("sample.json");
    std::fs::write(&input, "{\"k\": \"value\"}\n".repeat(3000)).unwrap();
    let run = run_with(
        EXE,
        &[
            "--input",
            input.to_str().unwrap(),
            "--quick",
            "--warmup",
            "0",
            "--iterations",
            "1",
            "--mode",
            "ss",
            "--forks",
            "0",
            "--format",
            "json",
            "--reuse-context",
        ],
        &[("THREADS", "2"), ("GUESSES", "7")],
    );
    run.assert_ok();
    let json = run.json();
    let e = entry(
        &json,
        "bb.zstd.compress",
        &[
            ("input", "sample.json"),
            ("threads", "2"),
            ("context", "thread"),
        ],
    );
    assert_eq!(e["threads"], 2);
    assert_eq!(
        e["boardbench"]["operations"].as_u64().unwrap(),
        7,
        "GUESSES sets the jobs of the single shot"
    );
}

#[test]
fn generated_corpus_is_deterministic_per_seed() {
    let ratio = |seed: &str| {
        let run = bb_zstd(
            &[
                "--seed",
                seed,
                "--threads",
                "1",
                "--forks",
                "0",
                "--op",
                "compress",
                "--format",
                "json",
            ],
            &[],
        );
        run.assert_ok();
        run.json()[0]["secondaryMetrics"]["ratio"]["score"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(ratio("7"), ratio("7"));
    assert_ne!(ratio("7"), ratio("8"));
}

#[test]
fn bad_flags_get_one_line_and_exit_2() {
    for (args, env, needle) in [
        (vec!["--bogus"], vec![], "--bogus"),
        (vec!["--threads", "0"], vec![], "--threads"),
        (vec!["--threads", "two"], vec![], "--threads"),
        (vec!["--level", "99"], vec![], "--level 99"),
        (vec!["--time", "3"], vec![], "--time"),
        (vec!["--mode", "fast"], vec![], "fast"),
        (
            vec!["--format", "yaml"],
            vec![],
            "unknown format 'yaml' (expected text, csv, json, jmh or bm)",
        ),
        (vec!["--op", "zip"], vec![], "--op"),
        (
            vec!["--lock", "gvl"],
            vec![],
            "--lock gvl: unknown value 'gvl'",
        ),
        (vec!["--jobs", "0"], vec![], "--jobs"),
        (vec!["--iterations", "0"], vec![], "--iterations"),
        (
            vec!["--input", "/nonexistent/city.json"],
            vec![],
            "/nonexistent/city.json",
        ),
        (vec![], vec![("THREADS", "many")], "THREADS"),
        (vec!["--pin", "4096"], vec![], "--pin"),
        // Absurd resources: refused before anything is allocated or started.
        (
            vec!["--threads", "100000"],
            vec![],
            "--threads 100000: at most",
        ),
        (
            vec!["--threads", "18446744073709551615"],
            vec![],
            "--threads 18446744073709551615: at most",
        ),
        (
            vec!["--oversubscribe", "--threads", "1000000000"],
            vec![],
            "--threads 1000000000: at most 65536",
        ),
        (vec![], vec![("THREADS", "100000")], "--threads 100000"),
        (
            vec!["--size", "100g"],
            vec![],
            "--size 107374182400: the run would need",
        ),
    ] {
        let run = run_with(EXE, &args, &env);
        assert_eq!(run.code, 2, "{args:?} {env:?}: {}", run.stderr);
        assert_eq!(
            run.stderr.lines().count(),
            1,
            "{args:?}: one line, got {:?}",
            run.stderr
        );
        assert!(
            run.stderr.starts_with("bb-zstd: ") && run.stderr.contains(needle),
            "{args:?}: {}",
            run.stderr
        );
        assert!(run.stdout.is_empty());
    }
}

#[test]
fn help_shows_an_example_and_exits_0() {
    let run = run_with(EXE, &["--help"], &[]);
    run.assert_ok();
    assert!(
        run.stdout.contains("Examples:")
            && run.stdout.contains("--warmup-time")
            && run.stdout.contains("--reuse-context")
            && run.stdout.contains("--lock")
    );
    // Every --format value is listed (argh wraps the description).
    let format: String = run
        .stdout
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("--format"))
        .take_while(|l| !l.trim_start().starts_with("--output"))
        .collect();
    for value in ["text", "csv", "json", "jmh", "bm"] {
        assert!(format.contains(value), "{value}: {format}");
    }
}

/// A run that would take hours: a million jobs per invocation.
/// A single shot of a million jobs: one invocation that outlasts any test.
const STUCK: &[&str] = &[
    "--quick",
    "--mode",
    "ss",
    "--size",
    "100k",
    "--jobs",
    "1000000",
    "--threads",
    "1",
];

#[test]
fn a_stuck_iteration_fails_on_the_timeout() {
    let run = run_with(
        EXE,
        &[STUCK, &["--forks", "0", "--timeout", "300ms"]].concat(),
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("ran past the timeout of 300ms"),
        "{}",
        run.stderr
    );
}

/// A made-up Raspberry Pi: sysfs under BB_SYSROOT and a vcgencmd on PATH that reports
/// throttling.
fn fake_throttling_pi(dir: &TempDir) -> Vec<(String, String)> {
    let root = dir.join("root");
    let cpufreq = root.join("sys/devices/system/cpu/cpu0/cpufreq");
    std::fs::create_dir_all(&cpufreq).unwrap();
    std::fs::write(cpufreq.join("scaling_governor"), "ondemand\n").unwrap();
    std::fs::create_dir_all(root.join("proc/device-tree")).unwrap();
    std::fs::write(
        root.join("proc/device-tree/model"),
        "Raspberry Pi 4 Model B Rev 1.4\0",
    )
    .unwrap();
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let vcgencmd = bin.join("vcgencmd");
    std::fs::write(&vcgencmd, "#!/bin/sh\necho throttled=0x50004\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&vcgencmd, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    vec![
        ("BB_SYSROOT".into(), root.display().to_string()),
        ("PATH".into(), path),
    ]
}

#[test]
fn throttling_is_flagged_in_every_format_and_warned_about() {
    let dir = TempDir::new("zstd-throttle");
    let env = fake_throttling_pi(&dir);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let json_out = dir.join("r.json");
    let common = ["--threads", "1", "--forks", "0", "--op", "compress"];
    let run = bb_zstd(
        &[&common[..], &["--output", json_out.to_str().unwrap()]].concat(),
        &env,
    );
    run.assert_ok();
    assert!(
        run.stderr.contains("warning: bb.zstd.compress") && run.stderr.contains("throttled"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("governor is 'ondemand'"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("THROTTLED"), "{}", run.stdout);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_out).unwrap()).unwrap();
    assert_eq!(json[0]["boardbench"]["throttled"], true);
    assert_eq!(
        json[0]["environment"]["boardModel"],
        "Raspberry Pi 4 Model B Rev 1.4"
    );
    assert_eq!(json[0]["environment"]["governor"], "ondemand");
    let csv = bb_zstd(&[&common[..], &["--format", "csv"]].concat(), &env);
    csv.assert_ok();
    let mut lines = csv.stdout.lines();
    let (header, row) = (lines.next().unwrap(), lines.next().unwrap());
    let throttled = header.split(',').position(|c| c == "\"Throttled\"");
    assert_eq!(
        throttled.map(|i| row.split(',').nth(i).unwrap()),
        Some("true"),
        "{}",
        csv.stdout
    );
}

/// Starts a run that would take hours in a fork, and waits until the fork exists:
/// returns the parent and the fork's pids.
fn start_stuck_run(extra: &[&str]) -> (std::process::Child, Vec<u32>) {
    let parent = std::process::Command::new(EXE)
        .args(STUCK.iter().chain(&["--forks", "1"]).chain(extra))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut forks = Vec::new();
    let started = crate::support::wait_for(std::time::Duration::from_secs(10), || {
        forks = crate::support::children_of(parent.id());
        !forks.is_empty()
    });
    assert!(started, "the fork started");
    (parent, forks)
}

/// Whether every one of `pids` is gone within five seconds.
fn all_gone(pids: &[u32]) -> bool {
    crate::support::wait_for(std::time::Duration::from_secs(5), || {
        pids.iter().all(|&p| !crate::support::alive(p))
    })
}

#[test]
fn sigterm_ends_the_run_and_its_fork() {
    use std::os::unix::process::ExitStatusExt;
    let (mut parent, forks) = start_stuck_run(&[]);
    let pid = nix::unistd::Pid::from_raw(parent.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = parent.wait().unwrap();
    assert_eq!(
        status.code().or(status.signal().map(|s| 128 + s)),
        Some(143),
        "{status:?}"
    );
    assert!(all_gone(&forks), "the fork was stopped too");
}

/// A shell starts a background job (`bb-zstd … &` in a script) with SIGINT and SIGQUIT
/// ignored; a `kill -INT` from the script must still end the run and its fork, as the
/// emulated boards' checks send it. (Ignored from the start, SIGHUP stays ignored: nohup.)
#[test]
fn sigint_ends_a_run_a_shell_started_with_it_ignored() {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let mut command = std::process::Command::new(EXE);
    command
        .args(STUCK.iter().chain(&["--forks", "1"]))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: signal(2) is async-signal-safe, as pre_exec requires.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            Ok(())
        });
    }
    let mut parent = command.spawn().unwrap();
    let mut forks = Vec::new();
    let started = crate::support::wait_for(std::time::Duration::from_secs(10), || {
        forks = crate::support::children_of(parent.id());
        !forks.is_empty()
    });
    assert!(started, "the fork started");
    let pid = nix::unistd::Pid::from_raw(parent.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let mut status = None;
    let ended = crate::support::wait_for(std::time::Duration::from_secs(20), || {
        status = parent.try_wait().unwrap();
        status.is_some()
    });
    if !ended {
        let _ = parent.kill();
        let _ = parent.wait();
        panic!("SIGINT did not end a run started with it ignored");
    }
    let status = status.unwrap();
    assert_eq!(
        status.code().or(status.signal().map(|s| 128 + s)),
        Some(130),
        "{status:?}"
    );
    assert!(all_gone(&forks), "the fork was stopped too");
}

#[test]
fn pinned_to_one_cpu_two_threads_use_one_core() {
    let run = bb_zstd(
        &[
            "--threads",
            "2",
            "--pin",
            "0",
            "--forks",
            "1",
            "--format",
            "json",
        ],
        &[],
    );
    run.assert_ok();
    for e in run.json().as_array().unwrap() {
        let cpu = e["boardbench"]["cpu"]["cpuPercent"].as_f64().unwrap();
        // One CPU cannot give more than 100% however many threads run; how much less it
        // gives depends on the machine's load, so only the ceiling is asserted.
        assert!(
            cpu > 0.0 && cpu < 110.0,
            "two threads on one pinned CPU: {cpu}%"
        );
    }
}

#[test]
fn the_timeout_ends_the_run_even_when_stderr_is_closed() {
    // A reader that went away (a test that failed, `| head`) must not keep a stuck run alive.
    let (mut parent, forks) = start_stuck_run(&["--timeout", "1s"]);
    drop(parent.stderr.take());
    let ended = crate::support::wait_for(std::time::Duration::from_secs(20), || {
        matches!(parent.try_wait(), Ok(Some(_)))
    });
    if !ended {
        let _ = parent.kill();
    }
    assert!(ended, "the run outlived its timeout");
    assert_eq!(parent.wait().unwrap().code(), Some(1));
    assert!(all_gone(&forks), "the fork was stopped too");
}

#[test]
fn ratio_is_the_inputs_compression_ratio_reported_once_for_both_ops() {
    let dir = TempDir::new("zstd-ratio");
    let input = dir.join("input.json");
    let data = "{\"name\": \"Sapporo\", \"population\": 1973395}\n".repeat(4000);
    std::fs::write(&input, &data).unwrap();
    let run = bb_zstd(
        &["--input", input.to_str().unwrap(), "--format", "json"],
        &[],
    );
    run.assert_ok();
    let json = run.json();
    let expected =
        data.len() as f64 / zstd::bulk::compress(data.as_bytes(), 3).unwrap().len() as f64;
    for op in ["bb.zstd.compress", "bb.zstd.decompress"] {
        let ratio = &entry(&json, op, &[])["secondaryMetrics"]["ratio"];
        assert!(
            (ratio["score"].as_f64().unwrap() - expected).abs() < 1e-9,
            "{op}: {ratio:#}"
        );
        // A property of the input, not a measurement: one value, no error.
        assert_eq!(ratio["rawData"], serde_json::json!([[expected]]), "{op}");
        assert_eq!(ratio["scoreError"], "NaN", "{op}");
    }
    let text = bb_zstd(&["--input", input.to_str().unwrap()], &[]);
    let row = text
        .stdout
        .lines()
        .find(|l| l.starts_with("bb.zstd.compress:ratio"))
        .unwrap();
    assert!(!row.contains('±'), "{row}");
}

#[test]
fn a_fork_runner_the_kernel_cannot_execute_is_named_not_run_as_a_script() {
    // What qemu-user without binfmt_misc meets: a binary for another machine. glibc's
    // execvp would hand it to /bin/sh ("Syntax error: word unexpected").
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("runner");
    let mut elf = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0];
    elf.resize(16, 0);
    elf.extend_from_slice(&2u16.to_le_bytes());
    elf.extend_from_slice(&0xbeefu16.to_le_bytes());
    elf.resize(64, 0);
    let runner = dir.join("qemu-elsewhere");
    std::fs::write(&runner, elf).unwrap();
    std::fs::set_permissions(&runner, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = bb_zstd(
        &["--forks", "1"],
        &[("BB_FORK_RUNNER", runner.to_str().unwrap())],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let errors: Vec<&str> = run.stderr.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(
        errors,
        [format!(
            "bb-zstd: error: cannot run BB_FORK_RUNNER={} (exec format error): it must be a program this machine executes, such as qemu-arm-static",
            runner.display()
        )],
        "{}",
        run.stderr
    );
}

#[test]
fn precision_adds_forks_to_headline_rows_up_to_the_budget_and_says_where_it_fell_short() {
    // A precision no run reaches (0.0001% at 99.9%): every row runs its budget, four forks
    // against its two, and the answer ends saying so; with it off, the two forks alone.
    // The percentage as given, not a float's tail (±0.00009999999999999999%).
    let short = [
        "--threads",
        "1",
        "--lock",
        "none",
        "--forks",
        "2",
        "--max-forks",
        "4",
        "--format",
        "json",
    ];
    let run = bb_zstd(&[&short[..], &["--precision", "0.0001%"]].concat(), &[]);
    run.assert_ok();
    assert!(
        run.stderr.contains("2-4 forks to ±0.0001%"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(": at most "), "{}", run.stderr);
    let json = run.json();
    for e in json.as_array().unwrap() {
        assert_eq!(
            e["primaryMetric"]["rawData"].as_array().unwrap().len(),
            4,
            "{e}"
        );
        let p = &e["boardbench"]["precision"];
        assert_eq!(
            (p["target"].as_f64(), p["reached"].as_bool()),
            (Some(1e-6), Some(false))
        );
        assert!(p["seconds"].as_f64().unwrap() > 0.0);
        assert_eq!(e["boardbench"]["errorBasis"], "forks 4");
    }
    let answer = json[0]["boardbench"]["answer"]["lines"].as_array().unwrap();
    assert!(
        answer
            .iter()
            .filter_map(|l| l.as_str())
            .any(|l| l.starts_with(
                "precision: ±0.0001% reached in 0 of 2 headline rows; not in 2 (widest ±"
            )),
        "{answer:?}"
    );
    let off = bb_zstd(&[&short[..], &["--precision", "off"]].concat(), &[]);
    off.assert_ok();
    let json = off.json();
    for e in json.as_array().unwrap() {
        assert_eq!(
            e["primaryMetric"]["rawData"].as_array().unwrap().len(),
            2,
            "{e}"
        );
        assert_eq!(e["boardbench"]["precision"], serde_json::Value::Null);
    }
    let bad = bb_zstd(&["--precision", "150%"], &[]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("--precision"), "{}", bad.stderr);
}
