//! The board under test, read from real boards' /proc and /sys layouts
//! (`tests/data/boards/`, through `BB_SYSROOT`): every cluster with its cores and clocks,
//! the environment record's memory, distribution and kernel; `--cluster`; the idle wait;
//! rows flagged as they ran, and bb-compare respecting those flags.

use crate::support::{run_bounded, run_with, TempDir, ZSTD_ONE_ROW, ZSTD_SMALL};
use serde_json::Value;
use std::time::Duration;

const ZSTD: &str = env!("CARGO_BIN_EXE_bb-zstd");
const COMPARE: &str = env!("CARGO_BIN_EXE_bb-compare");

fn board(name: &str) -> String {
    format!("{}/tests/data/boards/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// `bb-compare --env` on the fixture `name`: the environment record.
fn record(name: &str) -> Value {
    let root = board(name);
    let run = run_with(COMPARE, &["--env"], &[("BB_SYSROOT", &root)]);
    run.assert_ok();
    assert!(!run.stdout.contains("deadbeef"), "a serial: {}", run.stdout);
    run.json()
}

/// (cpus, core, max MHz) of each cluster, slowest first.
fn clusters(env: &Value) -> Vec<(Vec<u64>, String, u64)> {
    env["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let cpus = c["cpus"].as_array().unwrap().iter();
            (
                cpus.map(|n| n.as_u64().unwrap()).collect(),
                c["core"].as_str().unwrap().to_string(),
                c["maxFreqMHz"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn every_board_reads_its_clusters_types_and_clocks() {
    let cl = |cpus: &[u64], core: &str, mhz: u64| (cpus.to_vec(), core.to_string(), mhz);
    let boards = [
        (
            "pi0",
            vec![cl(&[0], "ARM1176", 1000)],
            "Raspberry Pi Zero W",
        ),
        (
            "pi3",
            vec![cl(&[0, 1, 2, 3], "Cortex-A53", 1200)],
            "Raspberry Pi 3",
        ),
        (
            "pi4",
            vec![cl(&[0, 1, 2, 3], "Cortex-A72", 1800)],
            "Raspberry Pi 4",
        ),
        (
            "pi5",
            vec![cl(&[0, 1, 2, 3], "Cortex-A76", 2400)],
            "Raspberry Pi 5",
        ),
        (
            "rk3588",
            vec![
                cl(&[0, 1, 2, 3], "Cortex-A55", 1800),
                cl(&[4, 5], "Cortex-A76", 2352),
                cl(&[6, 7], "Cortex-A76", 2352),
            ],
            "ROCK 5B",
        ),
        (
            "s922x",
            vec![
                cl(&[0, 1], "Cortex-A53", 1800),
                cl(&[2, 3, 4, 5], "Cortex-A73", 2208),
            ],
            "ODROID-N2",
        ),
    ];
    for (name, expected, model) in boards {
        let env = record(name);
        assert_eq!(clusters(&env), expected, "{name}: {env:#}");
        let board_model = env["boardModel"].as_str().unwrap_or_default();
        assert!(board_model.contains(model), "{name}: {board_model}");
        assert!(env["memTotalKiB"].as_u64().unwrap() > 100_000, "{name}");
        assert!(env["distribution"].is_string(), "{name}: {env:#}");
        assert!(env["preemption"].is_string(), "{name}: {env:#}");
        // The record's one-line fields are the fastest cluster's.
        assert_eq!(
            env["maxFreqMHz"].as_u64(),
            expected.iter().map(|c| c.2).max(),
            "{name}"
        );
    }
    // The big.LITTLE boards name both core types, the big one first.
    assert_eq!(record("rk3588")["cpuModel"], "Cortex-A76 + Cortex-A55");
    assert_eq!(record("s922x")["cpuModel"], "Cortex-A73 + Cortex-A53");
}

/// bb-zstd's one row on the fixture `name`, run on CPUs 0 and 1 alone (the fixtures'
/// first two cores; on a machine of more, the others would be reachable too), with
/// `extra` flags and `env`.
fn zstd_on_with(name: &str, extra: &[&str], env: &[(&str, &str)]) -> crate::support::Run {
    zstd_at(&board(name), extra, env)
}

/// [`zstd_on_with`] on the tree at `root` (a fixture's writable copy, say).
fn zstd_at(root: &str, extra: &[&str], env: &[(&str, &str)]) -> crate::support::Run {
    use std::os::unix::process::CommandExt;
    let mut c = std::process::Command::new(ZSTD);
    c.args(ZSTD_SMALL)
        .args(ZSTD_ONE_ROW)
        .args(["--format", "json"])
        .args(extra)
        .env("BB_SYSROOT", root)
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // SAFETY: sched_setaffinity only, between fork and exec.
    unsafe {
        c.pre_exec(|| {
            let mut set = nix::sched::CpuSet::new();
            set.set(0).map_err(std::io::Error::from)?;
            set.set(1).map_err(std::io::Error::from)?;
            nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)
                .map_err(std::io::Error::from)
        });
    }
    let child = c.spawn().unwrap();
    crate::support::finish_within(child, Duration::from_secs(120), "bb-zstd on a fixture")
}

fn zstd_on(name: &str, extra: &[&str]) -> crate::support::Run {
    zstd_on_with(name, extra, &[])
}

/// The answer's lines of a JSON report.
fn answer_lines(entries: &Value) -> Vec<String> {
    entries[0]["boardbench"]["answer"]["lines"]
        .as_array()
        .map(|l| l.iter().map(|x| x.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

#[test]
fn cluster_little_pins_the_run_and_the_answer_names_it() {
    // A clock played 100 times what this machine runs at: far from the fixture's 1800 MHz.
    let run = zstd_on_with(
        "s922x",
        &["--cluster", "little"],
        &[("BB_FAULT_CLOCK_SCALE", "100")],
    );
    run.assert_ok();
    let entries = run.json();
    assert!(
        answer_lines(&entries)
            .contains(&"on the little cluster: 2 × Cortex-A53 (cpu0-1, 100-1800 MHz)".into()),
        "{:?}",
        answer_lines(&entries)
    );
    let e = &entries[0];
    assert_eq!(
        e["environment"]["runCluster"]["cpus"],
        serde_json::json!([0, 1])
    );
    assert_eq!(e["environment"]["runClusterChosenBy"], "--cluster");
    assert!(
        run.stderr.contains("pinned to cpu0-1 (--cluster)"),
        "{}",
        run.stderr
    );
    let flags = &e["boardbench"]["flags"];
    assert!(
        flags.as_array().unwrap().contains(&"clock-mismatch".into()),
        "{flags}"
    );
    // Measured at the start or the end: one the core was not the run's for (this
    // machine under make test's load) is recorded as not measured, null.
    let clocks = &e["environment"]["measuredClocks"][0];
    let when = ["start", "end"]
        .into_iter()
        .find(|when| {
            clocks[format!("{when}MHz")]
                .as_f64()
                .is_some_and(|m| m > 0.0)
        })
        .unwrap_or_else(|| panic!("never measured: {clocks}"));
    assert_eq!(clocks[format!("{when}ReportedMHz")], 1800, "{clocks}");

    // Cores this process may not run on, another policy, and --pin beside it: refused.
    let run = zstd_on("rk3588", &["--cluster", "big"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("--cluster big: none of its cores (cpu4-7)"),
        "{}",
        run.stderr
    );
    let run = zstd_on("rk3588", &["--cluster", "2"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("no policy2"), "{}", run.stderr);
    let run = zstd_on("pi4", &["--cluster", "0", "--pin", "0"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
}

#[test]
fn a_big_little_board_names_the_cluster_its_run_was_on() {
    // This machine's cores are the RK3588's first two, A55s: the default's big cluster
    // is out of reach, so the run stays where it may and the answer says where that is,
    // and why it is not the big one.
    let run = zstd_on("rk3588", &["--format", "text"]);
    run.assert_ok();
    assert!(
        run.stdout.lines().any(|l| l
            == "on the little cluster: 4 × Cortex-A55 (cpu0-3, 408-1800 MHz); big out of reach"),
        "{}",
        run.stdout
    );
    // The governor the board runs (schedutil) flags the rows, and the table says why.
    assert!(
        run.stdout
            .contains("governor schedutil on cpu0-3, not performance"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("  FLAGGED"), "{}", run.stdout);
}

#[test]
fn an_idle_wait_that_times_out_says_so_flags_busy_and_runs() {
    // Another process keeps a core busy for the whole run, bounded in time.
    let mut busy = std::process::Command::new("sh")
        .args([
            "-c",
            "end=$(($(date +%s) + 30)); while [ $(date +%s) -lt $end ]; do :; done",
        ])
        .spawn()
        .unwrap();
    let mut args: Vec<&str> = ZSTD_SMALL.to_vec();
    args.extend(ZSTD_ONE_ROW);
    args.extend(["--format", "json", "--idle-wait", "2s"]);
    let run = run_bounded(ZSTD, &args, &[], Duration::from_secs(120));
    let _ = busy.kill();
    let _ = busy.wait();
    run.assert_ok();
    assert!(
        run.stderr
            .contains("waiting up to 2s for the board to go idle"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("never went idle in 2"),
        "{}",
        run.stderr
    );
    let e = &run.json()[0];
    assert_eq!(e["environment"]["idleWait"]["idle"], false, "{e:#}");
    assert!(
        e["boardbench"]["flags"]
            .as_array()
            .unwrap()
            .contains(&"busy".into()),
        "{e:#}"
    );
}

#[test]
fn bb_compare_gives_a_flagged_row_no_verdict_unless_told() {
    let dir = TempDir::new("board-compare");
    let mut args: Vec<&str> = ZSTD_SMALL.to_vec();
    args.extend(ZSTD_ONE_ROW);
    args.extend(["--format", "json", "--forks", "3"]);
    let run = run_bounded(ZSTD, &args, &[], Duration::from_secs(120));
    run.assert_ok();
    // The run's own entries, their scores set to a steady 100 a fork (the machine's noise
    // is not what this tests), and the same a fifth of it, flagged throttled.
    let steady = |entries: &Value, level: f64, flags: Value| {
        let mut out = entries.clone();
        for e in out.as_array_mut().unwrap() {
            let m = &mut e["primaryMetric"];
            m["score"] = level.into();
            for (i, fork) in m["rawData"].as_array_mut().unwrap().iter_mut().enumerate() {
                for v in fork.as_array_mut().unwrap() {
                    *v = (level * (1.0 + 0.001 * i as f64)).into();
                }
            }
            e["boardbench"]["flags"] = flags.clone();
        }
        out
    };
    let base = steady(&run.json(), 100.0, serde_json::json!([]));
    let slow = steady(&run.json(), 20.0, serde_json::json!(["throttled"]));
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&a, base.to_string()).unwrap();
    std::fs::write(&b, slow.to_string()).unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let run = run_with(COMPARE, &[a, b], &[]);
    assert_eq!(run.code, 0, "flagged is not slower: {}", run.stdout);
    assert!(run.stdout.contains("flagged"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("1 row flagged as they ran (throttled): no verdict"),
        "{}",
        run.stdout
    );
    let run = run_with(COMPARE, &[a, b, "--accept-invalid"], &[]);
    assert_eq!(run.code, 1, "judged slower: {}", run.stdout);
    assert!(!run.stdout.contains("no verdict"), "{}", run.stdout);
}

/// A writable copy of the fixture `name`, in `dir`.
fn writable_board(dir: &TempDir, name: &str) -> std::path::PathBuf {
    let copy = dir.path().join(name);
    let status = std::process::Command::new("cp")
        .args(["-a", &board(name)])
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    copy
}

fn governor_of(root: &std::path::Path) -> String {
    let file = root.join("sys/devices/system/cpu/cpufreq/policy0/scaling_governor");
    std::fs::read_to_string(file).unwrap().trim().to_string()
}

#[test]
fn governor_is_set_for_the_run_and_set_back_on_every_way_out() {
    use nix::sys::signal::Signal;
    let dir = TempDir::new("board-governor");
    let root = writable_board(&dir, "pi4");
    assert_eq!(governor_of(&root), "ondemand");
    let root_s = root.to_str().unwrap();

    // A run to its end: performance while it ran (no governor flag), ondemand after.
    let run = zstd_at(root_s, &["--governor", "performance"], &[]);
    run.assert_ok();
    let e = &run.json()[0];
    assert_eq!(
        e["environment"]["governorSet"],
        serde_json::json!({"to": "performance", "before": ["policy0 ondemand"]})
    );
    assert_eq!(e["environment"]["governor"], "performance");
    assert!(
        !e["boardbench"]["flags"]
            .as_array()
            .unwrap()
            .contains(&"governor".into()),
        "{e:#}"
    );
    assert_eq!(governor_of(&root), "ondemand");

    // A signal in the middle of the run: set back by the exit hooks.
    // Every signal whose default would end the run, not only the documented two.
    let signals = [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGQUIT,
        Signal::SIGUSR1,
        Signal::SIGUSR2,
        Signal::SIGALRM,
        Signal::SIGVTALRM,
        Signal::SIGPROF,
        Signal::SIGXCPU,
        Signal::SIGXFSZ,
    ];
    for signal in signals {
        let mut long: Vec<&str> = ZSTD_SMALL.to_vec();
        long.extend(["--time", "20s", "--governor", "performance"]);
        let mut child = std::process::Command::new(ZSTD)
            .args(&long)
            .env("BB_SYSROOT", root_s)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let set = crate::support::wait_for(Duration::from_secs(30), || {
            governor_of(&root) == "performance"
        });
        assert!(set, "{signal}: never set");
        std::thread::sleep(Duration::from_millis(500));
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        nix::sys::signal::kill(pid, signal).unwrap();
        let status = child.wait().unwrap();
        assert!(!status.success(), "{signal}: {status}");
        assert_eq!(governor_of(&root), "ondemand", "{signal}");
    }

    // A governor the board does not offer: said once, nothing changed, the run goes on.
    let run = zstd_at(root_s, &["--governor", "turbo"], &[]);
    run.assert_ok();
    assert_eq!(
        run.stderr
            .matches("--governor turbo: could not set it")
            .count(),
        1,
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("does not offer it"), "{}", run.stderr);
    assert_eq!(governor_of(&root), "ondemand");
}

/// Waits up to `limit` for `child`, killing it past that: its status.
fn wait_or_kill(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let until = std::time::Instant::now() + limit;
    while std::time::Instant::now() < until {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    child.wait().unwrap()
}

#[test]
fn a_signal_while_the_governor_is_being_set_sets_back_what_was_written() {
    use nix::sys::signal::Signal;
    let dir = TempDir::new("board-governor-midway");
    let root = writable_board(&dir, "pi4");
    let cpufreq = root.join("sys/devices/system/cpu/cpufreq");
    // Thousands of policies: the writes take long enough for a signal to land among them.
    let policies: Vec<std::path::PathBuf> = (1000..4000)
        .map(|i| cpufreq.join(format!("policy{i}")))
        .chain([cpufreq.join("policy0")])
        .collect();
    for p in &policies[..policies.len() - 1] {
        std::fs::create_dir(p).unwrap();
        std::fs::write(p.join("scaling_governor"), "ondemand\n").unwrap();
        std::fs::write(
            p.join("scaling_available_governors"),
            "ondemand performance\n",
        )
        .unwrap();
    }
    let mut long: Vec<&str> = ZSTD_SMALL.to_vec();
    long.extend(["--time", "20s", "--governor", "performance"]);
    let mut child = std::process::Command::new(ZSTD)
        .args(&long)
        .env("BB_SYSROOT", &root)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The signal as soon as the first policy (policy0) is written, no later.
    let until = std::time::Instant::now() + Duration::from_secs(60);
    while governor_of(&root) != "performance" && std::time::Instant::now() < until {}
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, Signal::SIGINT).unwrap();
    let status = wait_or_kill(&mut child, Duration::from_secs(60));
    assert!(!status.success(), "{status}");
    let left: Vec<String> = policies
        .iter()
        .filter(|p| {
            let g = std::fs::read_to_string(p.join("scaling_governor")).unwrap();
            g.trim() != "ondemand"
        })
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        left.is_empty(),
        "{} left set, such as {:?}",
        left.len(),
        left.first()
    );
}

#[test]
fn a_failed_run_sets_the_governor_back() {
    let dir = TempDir::new("board-governor-failed");
    let root = writable_board(&dir, "pi4");
    let rpc = env!("CARGO_BIN_EXE_bb-rpc");
    // Nothing listens on port 1: every row fails, the run exits 1.
    let run = run_bounded(
        rpc,
        &[
            "--quick",
            "--connect",
            "tcp:127.0.0.1:1",
            "--governor",
            "performance",
        ],
        &[("BB_SYSROOT", root.to_str().unwrap())],
        Duration::from_secs(120),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    // The rows ran (and failed) with the governor set: past where it is set.
    assert!(run.stderr.contains("error: bb.rpc."), "{}", run.stderr);
    assert!(!run.stderr.contains("could not set it"), "{}", run.stderr);
    assert_eq!(governor_of(&root), "ondemand");
}

#[test]
fn the_monitor_reads_the_sensors_through_each_rows_forks() {
    let run = zstd_on("pi4", &["--monitor", "100ms", "--forks", "2"]);
    run.assert_ok();
    let entries = run.json();
    let e = &entries[0];
    let monitor = &e["environment"]["monitor"];
    assert_eq!(
        monitor["zones"],
        serde_json::json!(["cpu-thermal"]),
        "{monitor}"
    );
    assert_eq!(monitor["policies"], serde_json::json!([0]), "{monitor}");
    let readings = e["boardbench"]["monitor"].as_array().unwrap();
    assert!(readings.len() >= 2, "{readings:?}");
    let temp: f64 = std::fs::read_to_string(format!(
        "{}/sys/class/thermal/thermal_zone0/temp",
        board("pi4")
    ))
    .unwrap()
    .trim()
    .parse()
    .unwrap();
    for r in readings {
        assert_eq!(r[1][0].as_f64(), Some(temp / 1000.0), "{r}");
        assert!(r[2][0].as_u64().is_some(), "the cluster's clock: {r}");
    }
    // Readings are in time order.
    let times: Vec<f64> = readings.iter().map(|r| r[0].as_f64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");

    // With no forks the measurement runs in this process: no monitor beside it.
    let run = zstd_on("pi4", &["--monitor", "100ms", "--forks", "0"]);
    run.assert_ok();
    let e = &run.json()[0];
    assert_eq!(e["environment"]["monitor"], Value::Null);
    assert_eq!(e["boardbench"]["monitor"], serde_json::json!([]));
}

#[test]
fn counters_where_the_pmu_refuses_are_one_line_and_no_failed_run() {
    let mut args: Vec<&str> = ZSTD_SMALL.to_vec();
    args.extend(ZSTD_ONE_ROW);
    args.extend(["--format", "json", "--counters"]);
    // Refused by force (perf_event_paranoid, say), and as this machine answers.
    let forced = run_bounded(
        ZSTD,
        &args,
        &[("BB_FAULT_NO_COUNTERS", "1")],
        Duration::from_secs(120),
    );
    let here = run_bounded(ZSTD, &args, &[], Duration::from_secs(120));
    for (run, what) in [(&forced, "forced"), (&here, "this machine")] {
        run.assert_ok();
        let e = &run.json()[0];
        let counted = e["secondaryMetrics"].get("cycles/byte").is_some();
        let refusals: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.contains("--counters: "))
            .collect();
        match counted {
            // Counted: cycles per byte and per operation, IPC; no refusal.
            true => {
                assert!(refusals.is_empty(), "{what}: {}", run.stderr);
                assert!(e["secondaryMetrics"]["IPC"]["score"].as_f64().unwrap() > 0.0);
            }
            // Refused: one line saying why, the run measured all the same.
            false => {
                assert_eq!(refusals.len(), 1, "{what}: {}", run.stderr);
                assert!(
                    refusals[0].ends_with("measuring without them"),
                    "{}",
                    refusals[0]
                );
                assert!(e["primaryMetric"]["score"].as_f64().unwrap() > 0.0);
            }
        }
    }
    assert!(forced.stderr.contains("not permitted"), "{}", forced.stderr);
    assert!(forced.json()[0]["secondaryMetrics"].get("IPC").is_none());
}

/// The counted path end to end, in the forks, on a machine with or without a PMU: the
/// kernel's software events count in the hardware's place (the task clock's nanoseconds
/// as cycles), and every metric reaches the report and the answer.
#[test]
fn counters_that_count_reach_the_report_and_the_answer() {
    let mut args: Vec<&str> = ZSTD_SMALL.to_vec();
    args.extend(ZSTD_ONE_ROW);
    args.extend(["--format", "json", "--counters", "--forks", "2"]);
    let run = run_bounded(
        ZSTD,
        &args,
        &[("BB_FAULT_SOFTWARE_COUNTERS", "1")],
        Duration::from_secs(120),
    );
    run.assert_ok();
    if run.stderr.contains("--counters: ") {
        // No perf events at all here (a seccomp filter, a kernel without them).
        assert!(
            run.stderr.contains("measuring without them"),
            "{}",
            run.stderr
        );
        return;
    }
    let e = &run.json()[0];
    let metrics = &e["secondaryMetrics"];
    for name in ["cycles/op", "instructions/op", "IPC", "cycles/byte"] {
        let score = metrics[name]["score"].as_f64();
        assert!(score.is_some_and(|s| s > 0.0), "{name}: {metrics:#}");
        // One figure per iteration of each fork, as the primary metric has.
        assert_eq!(
            metrics[name]["rawData"].as_array().map(Vec::len),
            Some(2),
            "{name}: {metrics:#}"
        );
    }
    assert!(
        metrics["cache-misses/op"]["score"].as_f64().is_some(),
        "{metrics:#}"
    );
    // The task clock of a compress is its CPU time: a few nanoseconds a byte at least.
    let per_byte = metrics["cycles/byte"]["score"].as_f64().unwrap();
    let per_op = metrics["cycles/op"]["score"].as_f64().unwrap();
    assert!(per_op > per_byte, "{per_op} {per_byte}");
    let answer = answer_lines(&run.json());
    assert!(
        answer
            .iter()
            .any(|l| l.starts_with("cycles/byte: ") && l.contains(" compress; IPC ")),
        "{answer:?}"
    );
}

#[test]
fn the_standard_profile_waits_for_an_idle_board_and_the_plan_says_so() {
    let plan = |args: &[&str], idle: Option<&str>| {
        let mut c = std::process::Command::new(ZSTD);
        c.args(args).arg("--dry-run").env_remove("BB_IDLE_WAIT");
        if let Some(v) = idle {
            c.env("BB_IDLE_WAIT", v);
        }
        crate::support::Run::from(c.output().unwrap())
    };
    let standard = plan(&[], None);
    standard.assert_ok();
    assert!(
        standard
            .stdout
            .contains("first: wait for the board to go idle  at most 1 min"),
        "{}",
        standard.stdout
    );
    for (args, idle) in [
        (&["--quick"][..], None),
        (&[][..], Some("0")),
        (&["--idle-wait", "0"][..], Some("5m")),
    ] {
        let run = plan(args, idle);
        run.assert_ok();
        assert!(
            !run.stdout.contains("go idle"),
            "{args:?} {idle:?}: {}",
            run.stdout
        );
    }
    let bad = plan(&[], Some("soon"));
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(
        bad.stderr.contains("BB_IDLE_WAIT: invalid duration"),
        "{}",
        bad.stderr
    );
    // A day at most, from the flag or the variable: more is a unit mistyped.
    let day = plan(&["--idle-wait", "24h"], None);
    day.assert_ok();
    assert!(
        day.stdout.contains("go idle  at most 24 h"),
        "{}",
        day.stdout
    );
    for (args, idle, says) in [
        (
            &["--idle-wait", "60h"][..],
            None,
            "'--idle-wait' with value '60h'",
        ),
        (&[][..], Some("25h"), "BB_IDLE_WAIT: "),
    ] {
        let run = plan(args, idle);
        assert_eq!(run.code, 2, "{args:?} {idle:?}: {}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(run.stderr.contains(says), "{}", run.stderr);
        assert!(
            run.stderr.contains("expected at most 24h"),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn under_voltage_that_appears_mid_run_flags_exactly_the_row_it_overlapped() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("board-mid-run");
    // A Pi's vcgencmd that counts its calls: the fourth (after the second fork: each fork
    // is read before and after, the monitor off) reports under-voltage now, and every
    // later one the bit that stays set since boot.
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let count = dir.path().join("calls");
    let script = format!(
        "#!/bin/sh\necho x >> {c}\nn=$(wc -l < {c})\n\
         if [ \"$n\" -eq 4 ]; then echo throttled=0x50001\n\
         elif [ \"$n\" -gt 4 ]; then echo throttled=0x50000\n\
         else echo throttled=0x0; fi\n",
        c = count.display()
    );
    std::fs::write(bin.join("vcgencmd"), script).unwrap();
    std::fs::set_permissions(bin.join("vcgencmd"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let root = board("pi4");
    let mut args: Vec<&str> = ZSTD_SMALL.to_vec();
    args.extend(["--threads", "1", "--lock", "none", "--format", "json"]);
    args.extend(["--forks", "1", "--precision", "off", "--monitor", "0"]);
    let run = run_bounded(
        ZSTD,
        &args,
        &[("BB_SYSROOT", &root), ("PATH", &path)],
        Duration::from_secs(120),
    );
    run.assert_ok();
    // The rows in the order their forks ran, from the progress lines.
    let ran: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains(": done in"))
        .map(|l| l.split(": done in").next().unwrap())
        .collect();
    assert_eq!(ran.len(), 2, "{}", run.stderr);
    let second_op = if ran[1].contains("compress") && !ran[1].contains("decompress") {
        "bb.zstd.compress"
    } else {
        "bb.zstd.decompress"
    };
    for e in run.json().as_array().unwrap() {
        let flags = e["boardbench"]["flags"].as_array().unwrap();
        let under = flags.contains(&"under-voltage".into());
        assert_eq!(
            under,
            e["benchmark"] == second_op,
            "{}: {flags:?}",
            e["benchmark"]
        );
    }
}
