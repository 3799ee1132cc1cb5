//! Integration tests of the board's health around each benchmark, run through the real
//! bb-zstd on a made-up board (`BB_SYSROOT`): `--cooldown` waiting for the SoC to cool
//! (and giving up, and doing without a sensor), and the clock and temperatures in every
//! report format; the busy warning from other processes' activity, and a Pi Zero named.

use crate::support::{run_with, Run, TempDir};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_bb-zstd");
/// With crate::support::ZSTD_SMALL: one benchmark, in this process, in about a second.
const SMALL: &[&str] = &["--threads", "1", "--forks", "0"];

/// Writes `text` to `path` whole: a temporary file renamed over it, so that the binary
/// never reads a half-written sysfs file.
fn replace(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// A made-up board under `dir/root`: one thermal zone at `millidegrees`. Returns the
/// root and the zone's temp file.
fn fake_board(dir: &TempDir, millidegrees: u32) -> (PathBuf, PathBuf) {
    let root = dir.join("root");
    let zone = root.join("sys/class/thermal/thermal_zone0");
    std::fs::create_dir_all(&zone).unwrap();
    let temp = zone.join("temp");
    replace(&temp, &format!("{millidegrees}\n"));
    (root, temp)
}

fn args(extra: &[&str]) -> Vec<String> {
    crate::support::ZSTD_SMALL
        .iter()
        .chain(SMALL)
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
}

#[test]
fn cooldown_waits_until_the_soc_is_cooler_then_runs() {
    let dir = TempDir::new("health-cool");
    let (root, temp) = fake_board(&dir, 70_000);
    let mut child = std::process::Command::new(EXE)
        .args(args(&[
            "--op",
            "compress",
            "--cooldown",
            "60C",
            "--cooldown-max",
            "30s",
            "--format",
            "json",
        ]))
        .env("BB_SYSROOT", &root)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Cool the board down about a second after the binary says it waits (30s bounds
    // the test should it never say so).
    let stderr = child.stderr.take().unwrap();
    let cooling = std::thread::spawn(move || {
        let mut lines = Vec::new();
        for line in BufReader::new(stderr).lines() {
            let line = line.unwrap();
            if line.contains("for the SoC to cool") {
                std::thread::sleep(Duration::from_millis(1000));
                replace(&temp, "50000\n");
            }
            lines.push(line);
        }
        lines.join("\n")
    });
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = child.wait().unwrap();
    let stderr = cooling.join().unwrap();
    assert!(status.success(), "{status}\n{stderr}");
    assert!(
        stderr.contains(
            "70.0°C: waiting up to 30s for the SoC to cool below 60.0°C before bb.zstd.compress"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("cooled down from 70.0°C to 50.0°C in "),
        "{stderr}"
    );
    // The wait it reports covers the second the board took to cool: the test cooled it a
    // second after the binary said it waits, and the binary's clock starts before it says
    // so (a wait timed from the wrong moment, or not at all, reads less).
    let waited: f64 = stderr
        .split("cooled down from 70.0°C to 50.0°C in ")
        .nth(1)
        .and_then(|rest| rest.split('s').next())
        .and_then(|secs| secs.parse().ok())
        .unwrap_or_else(|| panic!("no wait in {stderr}"));
    assert!(waited >= 1.0, "it waited {waited}s:\n{stderr}");
    // The benchmark started cool, and its health says so.
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let health = &json[0]["boardbench"]["health"];
    assert_eq!(health["tempBeforeC"], 50.0, "{health}");
    assert_eq!(health["tempAfterC"], 50.0, "{health}");
}

#[test]
fn cooldown_gives_up_after_cooldown_max_and_runs_anyway() {
    let dir = TempDir::new("health-hot");
    let (root, _) = fake_board(&dir, 90_000);
    let root = root.display().to_string();
    let start = Instant::now();
    let run = run_with(
        EXE,
        &args(&[
            "--op",
            "compress",
            "--cooldown",
            "60",
            "--cooldown-max",
            "1500ms",
        ])
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>(),
        &[("BB_SYSROOT", &root)],
    );
    run.assert_ok();
    assert!(start.elapsed() >= Duration::from_millis(1500), "it waited");
    assert!(
        run.stderr
            .contains("warning: --cooldown: still 90.0°C after waiting 1.")
            && run
                .stderr
                .contains("(--cooldown-max 1.5s) for below 60.0°C: running bb.zstd.compress (",)
            && run.stderr.contains("threads=1, lock=none) anyway"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("bb.zstd.compress"), "{}", run.stdout);
}

#[test]
fn cooldown_without_a_sensor_warns_once_and_does_not_wait() {
    let dir = TempDir::new("health-nosensor");
    std::fs::create_dir_all(dir.join("root")).unwrap();
    let root = dir.join("root").display().to_string();
    let run = run_with(
        EXE,
        &args(&["--cooldown", "60C", "--lock", "none", "--format", "json"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        &[("BB_SYSROOT", &root)],
    );
    run.assert_ok();
    assert_eq!(
        run.stderr
            .matches("--cooldown: no temperature sensor")
            .count(),
        1,
        "once for both benchmarks: {}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("for the SoC to cool"),
        "{}",
        run.stderr
    );
    // Without a sensor or cpufreq, the health is all null.
    let json = run.json();
    assert_eq!(json.as_array().unwrap().len(), 2);
    let health = json[0]["boardbench"]["health"].as_object().unwrap();
    assert!(health.values().all(|v| v.is_null()), "{health:?}");
}

#[test]
fn a_bad_cooldown_is_one_line_and_exit_2() {
    for (flags, says) in [
        (&["--cooldown", "hot"][..], "invalid temperature 'hot'"),
        (&["--cooldown", "60F"][..], "invalid temperature '60F'"),
        (&["--cooldown-max", "1m"][..], "give --cooldown TEMP too"),
        (
            &["--cooldown", "60", "--cooldown-max", "5"][..],
            "invalid duration '5'",
        ),
    ] {
        let run = run_with(
            EXE,
            &args(flags).iter().map(String::as_str).collect::<Vec<_>>(),
            &[],
        );
        assert_eq!(run.code, 2, "{flags:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{flags:?}: {}", run.stderr);
        assert_eq!(run.stderr.trim_end().lines().count(), 1, "{}", run.stderr);
        assert!(run.stdout.is_empty());
    }
}

/// Runs bb-zstd with `extra` flags on a board whose cpu0 time_in_state moves on every
/// 10 ms (a quarter of the time at 600 MHz, the rest at 1500 MHz) and whose SoC is at
/// 52.5°C.
fn run_on_a_ticking_board(dir: &TempDir, extra: &[&str]) -> Run {
    let (root, _) = fake_board(dir, 52_500);
    let states = root.join("sys/devices/system/cpu/cpu0/cpufreq/stats/time_in_state");
    std::fs::create_dir_all(states.parent().unwrap()).unwrap();
    replace(&states, "600000 100\n1500000 1000\n");
    let ticks = |n: u64| format!("600000 {}\n1500000 {}\n", 100 + n, 1000 + 3 * n);
    run_ticking(&root, states, ticks, extra)
}

/// Runs bb-zstd with `extra` flags on the board under `root` while `file` is rewritten
/// every 10 ms with `ticks(n)`, n counting from 1.
fn run_ticking(
    root: &Path,
    file: PathBuf,
    ticks: impl Fn(u64) -> String + Send + 'static,
    extra: &[&str],
) -> Run {
    let stop = Arc::new(AtomicBool::new(false));
    let ticker = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                replace(&file, &ticks(n));
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    let root = root.display().to_string();
    let args = args(extra);
    let run = run_with(
        EXE,
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        &[("BB_SYSROOT", &root)],
    );
    stop.store(true, Ordering::Relaxed);
    ticker.join().unwrap();
    run
}

#[test]
fn health_is_in_json_csv_and_text() {
    let dir = TempDir::new("health-formats");
    let json_out = dir.join("r.json");
    let run = run_on_a_ticking_board(
        &dir,
        &["--op", "compress", "--output", json_out.to_str().unwrap()],
    );
    run.assert_ok();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_out).unwrap()).unwrap();
    let health = &json[0]["boardbench"]["health"];
    assert_eq!(health["clockMHz"], 1275.0, "{health}");
    assert_eq!(health["clockMaxMHz"], 1500.0, "{health}");
    assert_eq!(health["clockBelowMaxPercent"], 25.0, "{health}");
    assert_eq!(health["clockSource"], "time_in_state", "{health}");
    assert_eq!(health["tempBeforeC"], 52.5, "{health}");
    assert_eq!(health["tempAfterC"], 52.5, "{health}");
    assert!(
        run.stdout
            .contains("  clock 1275/1500 MHz (25% below max)  52.5→52.5°C"),
        "{}",
        run.stdout
    );

    let csv = run_on_a_ticking_board(&dir, &["--op", "compress", "--format", "csv"]);
    csv.assert_ok();
    let mut lines = csv.stdout.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let cell = |name: &str| {
        let i = header.iter().position(|c| *c == format!("\"{name}\""));
        row[i.unwrap_or_else(|| panic!("no column {name}: {header:?}"))]
    };
    assert_eq!(cell("Clock (MHz)"), "1275");
    assert_eq!(cell("Clock Max (MHz)"), "1500");
    assert_eq!(cell("Clock Below Max (%)"), "25");
    assert_eq!(cell("Temp Before (°C)"), "52.5");
    assert_eq!(cell("Temp After (°C)"), "52.5");
    assert_eq!(
        header.iter().position(|c| *c == "\"Throttled\"").unwrap() + 1,
        header.iter().position(|c| *c == "\"Clock (MHz)\"").unwrap(),
        "after the existing extra columns"
    );
}

#[test]
fn a_pi_without_cpufreq_statistics_reports_vcgencmd_clock() {
    let dir = TempDir::new("health-vcgencmd");
    let (root, _) = fake_board(&dir, 48_000);
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let vcgencmd = bin.join("vcgencmd");
    std::fs::write(
        &vcgencmd,
        "#!/bin/sh\ncase \"$1\" in\n  measure_clock) echo 'frequency(48)=1200000000' ;;\n  get_throttled) echo throttled=0x0 ;;\n  *) exit 1 ;;\nesac\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&vcgencmd, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let root = root.display().to_string();
    let run = run_with(
        EXE,
        &args(&["--op", "compress", "--format", "json"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        &[("BB_SYSROOT", &root), ("PATH", &path)],
    );
    let health = &run.assert_ok().json()[0]["boardbench"]["health"];
    assert_eq!(health["clockMHz"], 1200.0, "{health}");
    assert_eq!(health["clockSource"], "vcgencmd", "{health}");
    assert!(health["clockBelowMaxPercent"].is_null(), "{health}");
    assert_eq!(health["tempBeforeC"], 48.0, "{health}");
}

/// Runs bb-zstd on a made-up Pi Zero (an ARM1176, one core) whose previous binary left
/// a load average of 1.49, while its /proc/stat ticks every 10 ms: busy ticks when
/// `busy` (something else keeps the core busy), idle ones otherwise.
fn run_on_a_pi_zero(dir: &TempDir, busy: bool) -> Run {
    let (root, _) = fake_board(dir, 45_000);
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        replace(&path, text);
    };
    write("proc/device-tree/model", "Raspberry Pi Zero Rev 1.3\0");
    write(
        "proc/cpuinfo",
        "processor\t: 0\nmodel name\t: ARMv6-compatible processor rev 7 (v6l)\n\
         CPU implementer\t: 0x41\nCPU part\t: 0xb76\nHardware\t: BCM2835\n",
    );
    write("sys/devices/system/cpu/online", "0\n");
    write("proc/loadavg", "1.49 0.89 0.38 1/60 321\n");
    let stat = root.join("proc/stat");
    let ticks = move |n: u64| {
        let (used, idle) = if busy {
            (1000 + n, 5000)
        } else {
            (1000, 5000 + n)
        };
        format!("cpu  {used} 0 0 {idle} 0 0 0 0 0 0\ncpu0 {used} 0 0 {idle} 0 0 0 0 0 0\n")
    };
    replace(&stat, &ticks(0));
    run_ticking(
        &root,
        stat,
        ticks,
        &["--op", "compress", "--format", "json"],
    )
}

/// The boards' false "machine is busy": a load average left by the previous binary is
/// not other processes' activity; CPU time over the window before the run is. And the
/// Pi Zero's core has its name, with one core in the singular.
#[test]
fn busy_is_what_other_processes_ran_just_before_not_the_load_average() {
    let dir = TempDir::new("health-pi-zero");
    let quiet = run_on_a_pi_zero(&dir, false);
    quiet.assert_ok();
    assert!(
        quiet
            .stderr
            .contains(", Raspberry Pi Zero Rev 1.3, ARM1176, 1 core, "),
        "{}",
        quiet.stderr
    );
    assert!(!quiet.stderr.contains("busy"), "{}", quiet.stderr);
    let env = &quiet.json()[0]["environment"];
    assert_eq!(env["cpuModel"], "ARM1176", "{env}");
    assert_eq!(env["background"]["cores"], 0.0, "{env}");
    assert!(
        env["background"]["windowS"].as_f64().unwrap() >= 0.25,
        "{env}"
    );

    let busy = run_on_a_pi_zero(&dir, true);
    busy.assert_ok();
    assert!(
        busy.stderr
            .contains("warning: the machine is busy: other processes used 1.00 of 1 core over 0.2"),
        "{}",
        busy.stderr
    );
    assert_eq!(busy.json()[0]["environment"]["background"]["cores"], 1.0);
}
