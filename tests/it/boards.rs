//! Emulated Raspberry Pi boards: a Pi Zero (raspi0, the armv6 build), a Pi 2 (raspi2b,
//! armv7) and a Pi 3 (raspi3b, aarch64) under qemu-system, each booting Debian's own
//! ARM kernel with a busybox initramfs that holds the board's static binaries in the
//! dist layout (scripts/board.sh). On each board tests/boards/checks.sh runs every
//! binary's --help, --dry-run and --quick in text, JSON, CSV and bm, run-all.sh --quick,
//! bb-compare on two of its results, and SIGINT and SIGTERM against a run with a server
//! child; a 512 MB Pi 2 runs the standard profile's matrices, shortened
//! (tests/boards/standard.sh); a networked `-M virt` board with dropbear is where
//! `make deploy`, scripts/fleet.sh and the playbook reach a real ARM kernel over ssh. The board
//! prints each check's output between markers on
//! its serial console; these tests parse that and assert on the host, behaviour only:
//! under emulation a timing means nothing, no clock scales and no sensor reads
//! (docs/boards.md). Run by `make test-boards` and by `make test`'s release pass.

use crate::support::boards::{check_default_suite, read_json, REPO};
use crate::support::{planned_labels, reported_labels, run_bounded, TempDir};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// An emulated board, as scripts/board.sh names it, and what it reports of itself.
struct Board {
    name: &'static str,
    /// /proc/device-tree/model, as the device tree of the real board has it.
    model: &'static str,
    /// uname -m, and so the `arch` of every report.
    arch: &'static str,
    cores: u32,
    /// The core qemu emulates, as /proc/cpuinfo's `CPU part` names it.
    core: &'static str,
}

const PI0: Board = Board {
    name: "pi0",
    model: "Raspberry Pi Zero",
    arch: "armv6l",
    cores: 1,
    core: "ARM1176",
};
const PI2: Board = Board {
    name: "pi2",
    model: "Raspberry Pi 2 Model B",
    arch: "armv7l",
    cores: 4,
    core: "Cortex-A7",
};
const PI3: Board = Board {
    name: "pi3",
    model: "Raspberry Pi 3 Model B",
    arch: "aarch64",
    cores: 4,
    core: "Cortex-A53",
};

const MEASUREMENTS: [&str; 4] = ["bb-zstd", "bb-ipc", "bb-rpc", "bb-seek"];

/// One check's output on the console: what it printed and its exit code.
struct Section {
    text: String,
    rc: i32,
}

/// The console of a board that ran a script to its end, cut into its sections.
struct Console {
    full: String,
    sections: BTreeMap<String, Section>,
}

impl Console {
    fn get(&self, id: &str) -> &Section {
        self.sections
            .get(id)
            .unwrap_or_else(|| panic!("no section {id} on the console:\n{}", self.full))
    }

    /// A section that exited 0, with its stderr in the message when it did not.
    fn ok(&self, id: &str) -> &str {
        let s = self.get(id);
        let err = self.sections.get(&format!("{id}.err"));
        assert_eq!(
            s.rc,
            0,
            "{id}: exit code {}\n{}\nstderr:\n{}",
            s.rc,
            s.text,
            err.map_or("", |e| &e.text)
        );
        &s.text
    }

    fn json(&self, id: &str) -> Value {
        let text = &self.get(id).text;
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{id} is not JSON ({e}):\n{text}"))
    }
}

/// Cuts a console into the `==BB== begin ID` ... `==BB== end ID rc=N` sections.
fn sections(console: &str) -> BTreeMap<String, Section> {
    let mut out = BTreeMap::new();
    let mut open: Option<(String, Vec<&str>)> = None;
    for line in console.lines() {
        if let Some(id) = line.strip_prefix("==BB== begin ") {
            open = Some((id.to_string(), Vec::new()));
        } else if let Some(rest) = line.strip_prefix("==BB== end ") {
            let (id, rc) = rest.rsplit_once(" rc=").expect("an end marker with rc=");
            let (open_id, lines) = open.take().unwrap_or_else(|| panic!("{line}: no begin"));
            assert_eq!(open_id, id, "sections interleaved");
            let section = Section {
                text: lines.join("\n"),
                rc: rc.parse().unwrap(),
            };
            out.insert(id.to_string(), section);
        } else if let Some((_, lines)) = open.as_mut() {
            lines.push(line);
        }
    }
    out
}

/// Boots `board` (with `mem` on the kernel's command line), runs `script` there and
/// returns its console: the board must reach the script's end within `limit`. The
/// console is kept in target/boards/<board>[-<mem>].console for a person to read; with
/// BB_BOARDS_REPLAY=1 in the environment, that file is checked again without a boot.
fn boot(board: &Board, script: &str, mem: Option<&str>, limit: Duration) -> Console {
    let kept = Path::new(REPO).join("target/boards").join(match mem {
        Some(mem) => format!("{}-{mem}.console", board.name),
        None => format!("{}.console", board.name),
    });
    if std::env::var_os("BB_BOARDS_REPLAY").is_some() {
        let bytes = std::fs::read(&kept)
            .unwrap_or_else(|e| panic!("BB_BOARDS_REPLAY: {}: {e}", kept.display()));
        // The Pi 3's mini-UART says a byte or two of noise as it starts.
        let full = String::from_utf8_lossy(&bytes).into_owned();
        return Console {
            sections: sections(&full),
            full,
        };
    }
    let path = Path::new(REPO).join("tests/boards").join(script);
    let secs = limit.as_secs().to_string();
    let mut args = vec![board.name, "--timeout", &secs];
    if let Some(mem) = mem {
        args.extend(["--mem", mem]);
    }
    let script_path = path.to_str().unwrap();
    args.push(script_path);
    let exe = format!("{REPO}/scripts/board.sh");
    let started = std::time::Instant::now();
    let run = run_bounded(&exe, &args, &[], limit + Duration::from_secs(60));
    // For make test-boards's log (--nocapture): how long this board took here.
    eprintln!(
        "board {} ({script}{}): {:.0} s",
        board.name,
        mem.map_or(String::new(), |m| format!(", {m}")),
        started.elapsed().as_secs_f64()
    );
    let _ = std::fs::write(&kept, &run.stdout);
    assert_eq!(
        run.code, 0,
        "{}: the board did not reach the script's end (exit code {}):\n{}\n{}",
        board.name, run.code, run.stdout, run.stderr
    );
    assert!(
        run.stdout
            .contains(&format!("== {}: checks done ==", board.name)),
        "{}",
        run.stdout
    );
    Console {
        sections: sections(&run.stdout),
        full: run.stdout,
    }
}

/// The board is the one it says it is: model, architecture, cores, memory in kB.
fn check_board(console: &Console, board: &Board, mem_kb: std::ops::Range<u64>) {
    let facts: Vec<&str> = console.ok("board").lines().collect();
    assert_eq!(facts[0].trim(), board.model, "{facts:?}");
    assert_eq!(facts[1], board.arch, "{facts:?}");
    assert_eq!(facts[2], board.cores.to_string(), "{facts:?}");
    let kb: u64 = facts[3].parse().unwrap();
    assert!(mem_kb.contains(&kb), "MemTotal {kb} kB: {facts:?}");
}

/// Every entry of a report measured on the board carries the board's environment.
fn check_environment(report: &Value, board: &Board, what: &str) {
    let entries = report
        .as_array()
        .unwrap_or_else(|| panic!("{what}: {report}"));
    assert!(!entries.is_empty(), "{what}: no entries");
    for e in entries {
        let env = &e["environment"];
        assert_eq!(env["arch"], board.arch, "{what}: {env}");
        assert_eq!(env["boardModel"], board.model, "{what}: {env}");
        assert_eq!(env["coresOnline"], board.cores, "{what}: {env}");
        assert_eq!(env["hostname"], board.name, "{what}: {env}");
        // What emulation cannot show (docs/boards.md): no cpufreq (no governor, no
        // clock), no throttling, and a temperature that is constant where there is one.
        assert!(
            env["governor"].is_null() && env["curFreqMHz"].is_null(),
            "{what}: {env}"
        );
        assert_eq!(e["boardbench"]["throttled"], false, "{what}");
        // The board under test: one cluster of its cores, their type; the clock measured
        // at the start (a figure of the emulation, never claimed as the board's).
        let clusters = env["clusters"]
            .as_array()
            .unwrap_or_else(|| panic!("{what}: {env}"));
        assert_eq!(clusters.len(), 1, "{what}: {env}");
        assert_eq!(clusters[0]["core"], board.core, "{what}: {env}");
        let cpus = clusters[0]["cpus"].as_array().map_or(0, |c| c.len());
        assert_eq!(cpus, board.cores as usize, "{what}: {env}");
        assert_eq!(env["cpuModel"], board.core, "{what}: {env}");
        let clocks = env["measuredClocks"]
            .as_array()
            .unwrap_or_else(|| panic!("{what}: {env}"));
        // At the start or the end: an emulated Pi Zero busy starting the run once read
        // 0 MHz at its start under load. A reading taken while the core was not the
        // run's is recorded as not measured (null), never as 0.
        let measured = |c: &serde_json::Value, key: &str| c[key].as_f64().is_some_and(|m| m > 0.0);
        assert!(
            clocks
                .iter()
                .any(|c| measured(c, "startMHz") || measured(c, "endMHz")),
            "{what}: {env}"
        );
        for key in ["startMHz", "endMHz"] {
            assert!(
                clocks.iter().all(|c| c[key].is_null() || measured(c, key)),
                "{what}: {env}"
            );
        }
        assert!(
            env["memTotalKiB"].as_u64().is_some_and(|k| k > 0),
            "{what}: {env}"
        );
        assert_eq!(
            env["temperatureC"], entries[0]["environment"]["temperatureC"],
            "{what}"
        );
    }
}

/// The answer block at the end of a text report: there, and at most 80 columns.
fn check_answer(text: &str, name: &str) {
    let header = format!("== {name}: the answer ==");
    let block = &text[text
        .find(&header)
        .unwrap_or_else(|| panic!("{name}: no answer block:\n{text}"))..];
    let lines: Vec<&str> = block.lines().collect();
    assert!(lines.len() >= 2, "{name}: an empty answer:\n{block}");
    for l in &lines {
        assert!(l.chars().count() <= 80, "{name}: over 80 columns: {l:?}");
    }
}

/// The benchmarks of a text, CSV or bm report, each once: its rows whose first column
/// has no `:` (the secondary metrics' rows, `bb.x.op:MB/s`, have).
fn primary_rows(report: &str, sep: char) -> usize {
    report
        .lines()
        .filter(|l| l.starts_with("bb.") || l.starts_with("\"bb."))
        .filter(|l| !l.split(sep).next().unwrap_or("").contains(':'))
        .count()
}

/// run-all.sh --quick from the dist layout: every binary ok, every result file there,
/// each binary's answer shown, each report the whole of its quick plan and of this
/// board; bb-compare over two of the board's results directories.
fn check_suite(console: &Console, board: &Board) {
    let out = console.ok("run-all");
    assert!(out.contains("every binary succeeded (4)"), "{out}");
    for name in MEASUREMENTS {
        assert!(out.contains(&format!("{name}: ok in ")), "{out}");
        check_answer(out, name);
    }
    let files: Vec<&str> = console.ok("run-all.files").lines().collect();
    let mut expected = vec!["env.json", "summary.txt"];
    let names: Vec<String> = MEASUREMENTS
        .iter()
        .flat_map(|n| [format!("{n}.json"), format!("{n}.log")])
        .collect();
    expected.extend(names.iter().map(String::as_str));
    let mut files_sorted = files.clone();
    files_sorted.sort();
    expected.sort();
    assert_eq!(
        files_sorted, expected,
        "every result file, and nothing else"
    );
    let env = console.json("run-all.env");
    assert_eq!(env["arch"], board.arch, "{env}");
    assert_eq!(env["boardModel"], board.model, "{env}");
    assert_eq!(env["hostname"], board.name, "{env}");
    let summary = console.ok("run-all.summary");
    assert!(
        summary.starts_with(&format!(
            "boardbench run-all quick on {} ({}",
            board.name, board.arch
        )),
        "{summary}"
    );
    for name in MEASUREMENTS {
        assert!(summary.contains(&format!("== {name}: ok in ")), "{summary}");
        let report = console.json(&format!("run-all.{name}.json"));
        check_environment(&report, board, name);
        for e in report.as_array().unwrap() {
            assert!(
                e["primaryMetric"]["score"]
                    .as_f64()
                    .is_some_and(|s| s > 0.0),
                "{name}: {e}"
            );
        }
        // The whole quick plan measured (the plan of run-all's own flags).
        let plan = console.ok(&format!("{name}.dry-run"));
        let mut planned = planned_labels(plan);
        let mut reported = reported_labels(&report);
        planned.sort();
        reported.sort();
        assert!(!planned.is_empty(), "{name}: {plan}");
        assert_eq!(planned, reported, "{name}: the plan and the report differ");
    }
    console.ok("run-all-zstd");
    // Two runs on one board: bb-zstd's rows matched; the verdict is noise's business
    // (exit 1 means a significant slowdown, which emulation may well show).
    let compare = console.get("compare");
    assert!(
        compare.rc == 0 || compare.rc == 1,
        "bb-compare: exit code {}\n{}",
        compare.rc,
        compare.text
    );
    assert!(
        compare.text.contains("bb.zstd.compress"),
        "{}",
        compare.text
    );
    let json = console.json("compare.json");
    let rows = json["rows"].as_array().expect("rows");
    // Every row of the first run; the second (bb-zstd alone) matched in bb-zstd's eight
    // (two thread counts, two operations, with and without the lock).
    let first: usize = MEASUREMENTS
        .iter()
        .map(|n| {
            console
                .json(&format!("run-all.{n}.json"))
                .as_array()
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(rows.len(), first, "{json:#}");
    let both: Vec<&Value> = rows.iter().filter(|r| !r["results"][1].is_null()).collect();
    assert_eq!(both.len(), 8, "bb-zstd's eight rows, in both: {json:#}");
    for row in both {
        assert_eq!(
            row["benchmark"].as_str().map(|b| &b[..8]),
            Some("bb.zstd."),
            "{row}"
        );
        assert!(row["results"][1]["verdict"].is_string(), "{row}");
    }
    let answer = json["answer"]["lines"]
        .as_array()
        .expect("the answer's lines");
    // Its family named, whichever way the two runs went ("bb.zstd.*: nothing beyond noise …"
    // or "<run> is faster at bb.zstd.* …").
    assert!(
        answer
            .iter()
            .any(|l| l.as_str().unwrap().contains("bb.zstd.*")),
        "{json:#}"
    );
}

/// Each measurement's help and plans, and a smaller matrix in CSV, bm and text.
fn check_binaries(console: &Console) {
    for name in MEASUREMENTS {
        let help = console.ok(&format!("{name}.help"));
        assert!(help.starts_with(&format!("Usage: {name} ")), "{help}");
        for (id, profile) in [
            ("dry-run", "quick"),
            ("dry-run-standard", "standard"),
            ("dry-run-small", "quick"),
        ] {
            let plan = console.ok(&format!("{name}.{id}"));
            assert!(
                plan.contains(&format!("profile {profile}")),
                "{name}: {plan}"
            );
            let last = plan.lines().last().unwrap_or("");
            assert!(last.starts_with("estimated duration: "), "{name}: {plan}");
        }
        let planned = planned_labels(console.ok(&format!("{name}.dry-run-small"))).len();
        assert!(planned > 0, "{name}");
        // CSV: JMH's header, then each benchmark (and rows for its secondary metrics).
        let csv = console.ok(&format!("{name}.csv"));
        assert!(csv.starts_with("\"Benchmark\",\"Mode\","), "{name}: {csv}");
        assert_eq!(primary_rows(csv, ','), planned, "{name}: {csv}");
        // bm: Ruby's Benchmark.bm header, then a line per benchmark.
        let bm = console.ok(&format!("{name}.bm"));
        let head = bm.lines().next().unwrap_or("");
        assert_eq!(
            head.trim_start(),
            "user     system      total        real",
            "{name}: {bm}"
        );
        assert_eq!(
            bm.lines().filter(|l| l.starts_with("bb.")).count(),
            planned,
            "{name}: {bm}"
        );
        // text: JMH's table, then the answer block.
        let text = console.ok(&format!("{name}.text"));
        let header = text.lines().next().unwrap_or("");
        for column in ["Benchmark", "Mode", "Cnt", "Score", "Error", "Units"] {
            assert!(header.contains(column), "{name}: {header}");
        }
        // The table ends at the first blank line (the time-like lines follow).
        let table = text.split("\n\n").next().unwrap();
        assert_eq!(primary_rows(table, ' '), planned, "{name}: {text}");
        check_answer(text, name);
    }
    let help = console.ok("bb-compare.help");
    assert!(help.starts_with("Usage: bb-compare "), "{help}");
}

/// SIGINT and SIGTERM stop a run with a server child: 130 and 143, no bb- process
/// survives, no socket file is left. Signalled once every process of the run was up:
/// bb-ipc's parent and fork, bb-rpc's parent, fork and server.
fn check_signals(console: &Console) {
    for (sig, code, name, running) in [("INT", 130, "bb-ipc", 2), ("TERM", 143, "bb-rpc", 3)] {
        let before = &console.get(&format!("signal.{sig}.before")).text;
        assert!(
            before.lines().filter(|l| l.contains(name)).count() >= running,
            "SIG{sig}: {name}'s {running} processes were not all running:\n{before}"
        );
        let err = console.get(&format!("signal.{sig}.err"));
        assert_eq!(err.rc, code, "SIG{sig} to {name}:\n{}", err.text);
        let after = &console.get(&format!("signal.{sig}.after")).text;
        assert!(after.trim().is_empty(), "SIG{sig}: survivors:\n{after}");
        let left = &console.get(&format!("signal.{sig}.left")).text;
        assert!(left.trim().is_empty(), "SIG{sig}: left behind:\n{left}");
    }
}

/// bb-zstd `--against` another build: on the Pi 3 its armv7 build (the 64-bit kernel
/// runs both), elsewhere the same build at another path; the run completes and its
/// answer ends by naming the other build (correctness only: no timing is claimed).
fn check_against(console: &Console, board: &Board) {
    let other = match board.name {
        "pi3" => "/opt/boardbench/armv7/bb-zstd",
        _ => "/tmp/checks/old-bb-zstd",
    };
    let out = console.ok("against");
    // The answer ends with the A/B lines: the other build, then each operation's row.
    let tail: Vec<&str> = out.trim_end().lines().rev().take(3).collect();
    assert_eq!(tail[2], format!("this build against {other}:"), "{out}");
    assert!(tail[1].starts_with("  compress: "), "{out}");
    assert!(tail[0].starts_with("  decompress: "), "{out}");
    assert!(
        out.contains(&format!("This build against {other} (sha1 ")),
        "the pairs' table: {out}"
    );
    let err = &console.get("against.err").text;
    assert!(err.contains(", paired "), "the pairs of forks: {err}");
}

fn check_quick_board(board: &Board, mem_kb: std::ops::Range<u64>, limit: Duration) {
    let console = boot(board, "checks.sh", None, limit);
    check_board(&console, board, mem_kb);
    check_suite(&console, board);
    check_binaries(&console);
    check_against(&console, board);
    check_signals(&console);
}

#[test]
#[ignore = "needs make cross-armv7 and scripts/setup.sh boards; run by make test and make test-boards"]
fn a_pi_2_runs_every_binary_and_the_suite() {
    check_quick_board(&PI2, 900_000..1_048_576, Duration::from_secs(600));
}

#[test]
#[ignore = "needs make cross-aarch64 and scripts/setup.sh boards; run by make test and make test-boards"]
fn a_pi_3_runs_every_binary_and_the_suite() {
    check_quick_board(&PI3, 900_000..1_048_576, Duration::from_secs(600));
}

#[test]
#[ignore = "needs make cross-armv6 and scripts/setup.sh boards; run by make test and make test-boards"]
fn a_pi_zero_runs_every_binary_and_the_suite() {
    check_quick_board(&PI0, 400_000..524_288, Duration::from_secs(600));
}

#[test]
#[ignore = "needs make cross-armv7 and scripts/setup.sh boards; run by make test and make test-boards"]
fn a_512_mb_pi_2_runs_the_standard_matrices() {
    let console = boot(&PI2, "standard.sh", Some("512M"), Duration::from_secs(600));
    check_board(&console, &PI2, 400_000..524_288);
    // The results directory, as the board left it, rebuilt here for the suite's checks.
    let dir = TempDir::new("board-standard");
    let files = console.ok("files");
    for file in files.lines() {
        let section = console.get(&format!("file:{file}"));
        std::fs::write(dir.join(file), format!("{}\n", section.text)).unwrap();
    }
    check_default_suite(dir.path());
    for name in MEASUREMENTS {
        let report = read_json(&dir.join(&format!("{name}.json")));
        check_environment(&report, &PI2, name);
        // The standard profile waited for the board to go idle (bounded by the flags)
        // and read its sensors through the run.
        let env = &report[0]["environment"];
        assert!(env["idleWait"]["waitedS"].is_number(), "{name}: {env}");
        assert!(env["monitor"]["intervalS"].is_number(), "{name}: {env}");
        assert!(report[0]["boardbench"]["monitor"].is_array(), "{name}");
    }
    console.ok("run-all");
}

/// The networked board (scripts/board.sh virt) while it runs: stopped by SIGTERM when
/// dropped, so that board.sh stops its qemu (a test that fails leaves no board behind).
struct NetBoard(Option<std::process::Child>);

impl Drop for NetBoard {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            // SAFETY: kill(2) on the pid of our own child, not yet reaped.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            let _ = child.wait();
        }
    }
}

#[test]
#[ignore = "needs make cross-armv7 and scripts/setup.sh boards; run by make test and make test-boards"]
fn make_deploy_fleet_and_the_playbook_reach_a_real_arm_kernel_over_ssh() {
    use crate::support::boards::{repository, results_dir, SHORT_TIMING, ZSTD_FLAGS};
    use crate::support::{finish_within, free_port, run_with, wait_for};
    // make deploy writes the repository's dist/ and results/.
    let _repository = repository();
    let dir = TempDir::new("board-net");
    let key = dir.join("id_ed25519");
    let key_s = key.to_str().unwrap();
    run_with(
        "ssh-keygen",
        &["-q", "-t", "ed25519", "-N", "", "-f", key_s],
        &[],
    )
    .assert_ok();
    let port = free_port().to_string();
    let child = std::process::Command::new(format!("{REPO}/scripts/board.sh"))
        .args(["virt", "--timeout", "600"])
        .arg(Path::new(REPO).join("tests/boards/serve.sh"))
        .env("BOARD_SSH_PORT", &port)
        .env("BOARD_SSH_KEY", dir.join("id_ed25519.pub"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut board = NetBoard(Some(child));
    let opts = format!(
        "-i {key_s} -p {port} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
         -o BatchMode=yes -o LogLevel=ERROR -o ConnectTimeout=5"
    );
    let ssh = |command: &str| {
        let mut args: Vec<&str> = opts.split(' ').collect();
        args.extend(["root@127.0.0.1", command]);
        run_with("ssh", &args, &[])
    };
    assert!(
        wait_for(Duration::from_secs(180), || ssh("true").code == 0),
        "the board's dropbear never answered"
    );
    let uname = ssh("uname -m; cat /proc/device-tree/model");
    uname.assert_ok();
    assert!(
        uname.stdout.starts_with("armv7l\nlinux,dummy-virt"),
        "{}",
        uname.stdout
    );

    // make deploy: the dist built for the board's uname -m, the suite run there.
    let run = run_bounded(
        "make",
        &[
            "-s",
            "-C",
            REPO,
            "deploy",
            "HOST=root@127.0.0.1",
            "PROFILE=quick",
        ],
        &[
            ("SSH_OPTS", opts.as_str()),
            ("BB_FLAGS", SHORT_TIMING),
            ("BB_FLAGS_zstd", ZSTD_FLAGS),
        ],
        Duration::from_secs(400),
    );
    run.assert_ok();
    assert!(
        run.stdout.contains("every binary succeeded (4)"),
        "{}",
        run.stdout
    );
    let res = results_dir(&run);
    let _cleanup = TempDir(res.clone());
    let env = read_json(&res.join("env.json"));
    assert_eq!(env["arch"], "armv7l", "{env}");
    assert_eq!(env["hostname"], "virt", "{env}");
    for name in MEASUREMENTS {
        let report = read_json(&res.join(format!("{name}.json")));
        assert_eq!(report[0]["environment"]["arch"], "armv7l", "{name}");
    }

    // scripts/fleet.sh: the same board from a hosts file, its own ssh options there.
    let hosts = dir.join("boards.txt");
    std::fs::write(
        &hosts,
        format!(
            "root@127.0.0.1 armv7 dir=/root/fleet {}\n",
            opts.replace(" -p ", " -o Port=")
        ),
    )
    .unwrap();
    let fleet = run_bounded(
        &format!("{REPO}/scripts/fleet.sh"),
        &[
            hosts.to_str().unwrap(),
            "--quick",
            "--only",
            "zstd",
            "--no-build",
            "--results",
            dir.join("fleet").to_str().unwrap(),
        ],
        &[("BB_FLAGS", SHORT_TIMING), ("BB_FLAGS_zstd", ZSTD_FLAGS)],
        Duration::from_secs(300),
    );
    fleet.assert_ok();
    let said = format!("{}{}", fleet.stdout, fleet.stderr);
    assert!(said.contains("root_127.0.0.1: ok"), "{said}");

    // The playbook: a board with no Python takes the raw path (bb_python=false, deploy.sh
    // from the controller), the dist built for target=armv7 by the play's build step.
    let venv = Path::new(REPO).join("target/tools-venv/bin");
    let inventory = dir.join("inventory.ini");
    std::fs::write(
        &inventory,
        format!(
            "[boards]\n\
             virt ansible_host=127.0.0.1 ansible_port={port} ansible_user=root \
             ansible_ssh_private_key_file={key_s} target=armv7 bb_python=false \
             remote_dir=/root/ansible\n\
             [all:vars]\n\
             ansible_ssh_common_args='-o IdentitiesOnly=yes -o UserKnownHostsFile=/dev/null \
             -o StrictHostKeyChecking=no -o ConnectTimeout=5'\n\
             bb_flags='{SHORT_TIMING}'\nbb_flags_zstd='{ZSTD_FLAGS}'\n"
        ),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        venv.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let ansible_home = dir.join("ansible-home");
    let play = run_bounded(
        &venv.join("ansible-playbook").display().to_string(),
        &[
            "-i",
            inventory.to_str().unwrap(),
            &format!("{REPO}/ansible/boardbench.yml"),
            "-e",
            "profile=quick",
            "-e",
            "only=zstd",
            "-e",
            &format!("results_dir={}", dir.join("ansible").display()),
        ],
        &[
            ("PATH", path.as_str()),
            ("ANSIBLE_HOME", ansible_home.to_str().unwrap()),
            ("ANSIBLE_CONFIG", &format!("{REPO}/ansible/ansible.cfg")),
            ("ANSIBLE_SSH_ARGS", "-o ControlMaster=no"),
            ("ANSIBLE_NOCOLOR", "1"),
            ("ANSIBLE_HOST_KEY_CHECKING", "False"),
        ],
        Duration::from_secs(300),
    );
    play.assert_ok();
    assert!(
        play.stdout.contains("virt ") && play.stdout.contains(" failed=0 "),
        "{}",
        play.stdout
    );
    // results_dir/ansible-<time>/virt/<the board's run-all directory>/env.json
    let only = |d: &Path| {
        let all: Vec<_> = std::fs::read_dir(d)
            .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .collect();
        assert_eq!(all.len(), 1, "{all:?}");
        all[0].clone()
    };
    let board_run = only(&only(&dir.join("ansible")).join("virt"));
    let env = read_json(&board_run.join("env.json"));
    assert_eq!(env["arch"], "armv7l", "{env}");

    ssh("touch /tmp/stop").assert_ok();
    let child = board.0.take().unwrap();
    let console = finish_within(child, Duration::from_secs(120), "the networked board");
    assert_eq!(console.code, 0, "{}\n{}", console.stdout, console.stderr);
    assert!(
        console.stdout.contains("== virt: checks done =="),
        "{}",
        console.stdout
    );
}
