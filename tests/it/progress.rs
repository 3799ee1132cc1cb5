//! The progress of a run on stderr: off a terminal (a pipe, run-all, its logs) a line of
//! at most 80 columns when each benchmark starts and when it ends, shown by run-all as
//! it comes and kept in the binary's `.log`; on a terminal (a pty of 80 columns here) one
//! live line that never wraps and leaves nothing behind.

use crate::support::{run_in, Run, TempDir};
use std::process::Command;

const REPO: &str = env!("CARGO_MANIFEST_DIR");
const ZSTD: &str = env!("CARGO_BIN_EXE_bb-zstd");
const SEEK: &str = env!("CARGO_BIN_EXE_bb-seek");
/// bb-zstd's two benchmarks of one thread, each well under a second.
const SHORT_ZSTD: [&str; 14] = [
    "--precision",
    "off",
    "--warmup",
    "0",
    "--iterations",
    "1",
    "--time",
    "100ms",
    "--forks",
    "1",
    "--threads",
    "1",
    "--size",
    "64k",
];

/// The progress lines among `stderr`: those starting `[i/n] `.
fn progress_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with('[') && l.contains("] bb."))
        .collect()
}

/// Checks that every benchmark of `stderr` has its start and its end line, of at most 80
/// columns, each end right after its start (the benchmarks in the order the forks'
/// interleaving gives them); returns how many benchmarks.
fn assert_a_line_per_start_and_end(stderr: &str) -> usize {
    let lines = progress_lines(stderr);
    let count = stderr
        .lines()
        .find_map(|l| {
            l.strip_prefix("# ")?
                .split_once(" benchmarks, ")?
                .0
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no header line:\n{stderr}"));
    assert!(count > 0, "{stderr}");
    assert_eq!(lines.len(), 2 * count, "a start and an end each:\n{stderr}");
    let mut tags: Vec<String> = lines
        .chunks(2)
        .map(|pair| pair[0].split_inclusive("] ").next().unwrap().to_string())
        .collect();
    tags.sort();
    let mut every: Vec<String> = (1..=count).map(|i| format!("[{i}/{count}] ")).collect();
    every.sort();
    assert_eq!(tags, every, "each benchmark once:\n{stderr}");
    for pair in lines.chunks(2) {
        let tag = pair[0].split_inclusive("] ").next().unwrap();
        assert!(
            pair[0].starts_with(tag) && pair[0].contains(": about "),
            "{pair:?}"
        );
        assert!(
            pair[1].starts_with(tag) && pair[1].contains(": done in "),
            "{pair:?}"
        );
        assert!(pair.iter().all(|l| l.contains(", ETA ")), "{pair:?}");
    }
    for line in &lines {
        assert!(
            line.chars().count() <= 80,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    count
}

#[test]
fn off_a_terminal_each_benchmark_has_a_line_as_it_starts_and_one_as_it_ends() {
    let dir = TempDir::new("progress-pipe");
    let run = run_in(dir.path(), ZSTD, &SHORT_ZSTD, &[]);
    run.assert_ok();
    assert_a_line_per_start_and_end(&run.stderr);
    // A label names what tells the benchmark from the others of the run: bb-seek's
    // client and read size, not its object, source and cache, the same in every row.
    run_in(dir.path(), SEEK, &["gen", "--sizes", "64k"], &[]).assert_ok();
    let args = [
        "--sizes",
        "64k",
        "--pattern",
        "sequential",
        "--warmup",
        "0",
        "--iterations",
        "1",
        "--forks",
        "1",
        "--precision",
        "off",
    ];
    let run = run_in(dir.path(), SEEK, &args, &[]);
    run.assert_ok();
    assert_a_line_per_start_and_end(&run.stderr);
    let lines = progress_lines(&run.stderr);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("[1/4] bb.seek.sequential (client=plain, read-size=4k): ")),
        "{lines:?}"
    );
}

#[test]
fn run_all_shows_each_binary_progress_as_it_comes_and_keeps_it_in_the_log() {
    let dir = TempDir::new("progress-run-all");
    let bin = std::path::Path::new(ZSTD)
        .parent()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let run_all = |env: &[(&str, &str)]| -> Run {
        let env = [&[("BB_BIN_DIR", bin.as_str())][..], env].concat();
        run_in(
            dir.path(),
            "sh",
            &[
                &format!("{REPO}/scripts/run-all.sh"),
                "--quick",
                "--only",
                "zstd",
            ],
            &env,
        )
    };
    let flags = SHORT_ZSTD.join(" ");
    let run = run_all(&[("BB_FLAGS", &flags)]);
    run.assert_ok();
    assert_a_line_per_start_and_end(&run.stderr);
    assert!(run.stdout.contains("bb-zstd: ok in "), "{}", run.stdout);
    let results = run
        .stdout
        .lines()
        .last()
        .unwrap()
        .strip_prefix("results: ")
        .unwrap();
    let log = std::fs::read_to_string(format!("{results}/bb-zstd.log")).unwrap();
    assert_eq!(
        progress_lines(&log),
        progress_lines(&run.stderr),
        "the log keeps them"
    );
    // The binary's exit code still counts: a bad flag fails it with 2, and run-all with 1.
    let bad = run_all(&[("BB_FLAGS", &flags), ("BB_FLAGS_zstd", "--no-such-flag")]);
    assert_eq!(bad.code, 1, "{}\n{}", bad.stdout, bad.stderr);
    assert!(
        bad.stdout.contains("bb-zstd: FAILED with exit code 2"),
        "{}",
        bad.stdout
    );
    assert!(
        bad.stderr.contains("--no-such-flag"),
        "shown as it came:\n{}",
        bad.stderr
    );
}

/// Runs `args` under a pty of 80 columns (Python's pty module) and returns all it wrote.
fn under_a_pty(dir: &TempDir, args: &[&str]) -> String {
    const PTY: &str = r#"
import fcntl, os, pty, struct, subprocess, sys, termios
master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
child = subprocess.Popen(sys.argv[1:], stdin=slave, stdout=slave, stderr=slave)
os.close(slave)
out = b""
while True:
    try:
        data = os.read(master, 65536)
    except OSError:
        break
    if not data:
        break
    out += data
sys.stdout.buffer.write(out)
sys.exit(child.wait())
"#;
    let out = Command::new("python3")
        .args([&["-c", PTY][..], args].concat())
        .current_dir(dir.path())
        .output()
        .expect("running python3");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{:?}:\n{text}", out.status);
    text
}

/// The rows a terminal of `columns` shows after `bytes` (carriage returns, newlines,
/// erase-to-the-end and wrapping at the last column), and how many times a row that
/// starts with a progress tag wrapped.
fn screen(bytes: &str, columns: usize) -> (Vec<String>, usize) {
    let mut rows: Vec<Vec<char>> = vec![vec![]];
    let (mut col, mut wraps) = (0, 0);
    let mut chars = bytes.chars().peekable();
    while let Some(c) = chars.next() {
        let row = rows.len() - 1;
        match c {
            '\r' => col = 0,
            '\n' => rows.push(vec![]),
            '\x1b' => {
                let mut sequence = String::new();
                for c in chars.by_ref() {
                    sequence.push(c);
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
                if sequence == "[K" {
                    rows[row].truncate(col);
                }
            }
            c => {
                if col == columns {
                    if rows[row].first() == Some(&'[') {
                        wraps += 1;
                    }
                    rows.push(vec![]);
                    col = 0;
                }
                let row = rows.len() - 1;
                if rows[row].len() <= col {
                    rows[row].resize(col + 1, ' ');
                }
                rows[row][col] = c;
                col += 1;
            }
        }
    }
    (
        rows.into_iter().map(|r| r.into_iter().collect()).collect(),
        wraps,
    )
}

#[test]
fn the_screen_emulation_wraps_and_erases() {
    // A line wider than the screen wraps, and erasing it leaves its first rows behind.
    let (rows, wraps) = screen("[1/2] abcdef\r\x1b[Kxy\r\nlast", 4);
    assert_eq!(rows, ["[1/2", "] ab", "xy", "last"]);
    assert_eq!(wraps, 1);
}

#[test]
fn on_a_terminal_of_80_columns_the_live_line_never_wraps_and_leaves_nothing() {
    let dir = TempDir::new("progress-pty");
    run_in(dir.path(), SEEK, &["gen", "--sizes", "64k"], &[]).assert_ok();
    // Timed iterations of over a second: the line is redrawn while each runs.
    let out = dir.join("report.json");
    let args = [
        SEEK,
        "--sizes",
        "64k",
        "--pattern",
        "sequential",
        "--mode",
        "avgt",
        "--warmup",
        "0",
        "--iterations",
        "1",
        "--time",
        "1200ms",
        "--forks",
        "1",
        "--format",
        "json",
        "--output",
        out.to_str().unwrap(),
    ];
    let text = under_a_pty(&dir, &args);
    let draws: Vec<&str> = text
        .split("\r\x1b[K")
        .filter(|d| d.starts_with('['))
        .collect();
    assert!(
        draws.len() >= 8,
        "drawn at each start and redrawn each second:\n{text:?}"
    );
    for draw in &draws {
        assert!(
            draw.chars().count() < 80,
            "{} columns: {draw}",
            draw.chars().count()
        );
        assert!(!draw.contains('\n'), "{draw:?}");
    }
    let (rows, wraps) = screen(&text, 80);
    assert_eq!(wraps, 0, "{rows:#?}");
    assert!(
        rows.iter()
            .all(|r| !r.contains("ETA") && !r.contains("] bb.")),
        "nothing of the live line stays:\n{rows:#?}"
    );
}
