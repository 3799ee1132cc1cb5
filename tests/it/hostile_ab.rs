//! Hostile other builds of an A/B run (`--against`, round five): a build whose forks
//! linger after their report or say `alive` for ever, whose description leaves a
//! process behind, that is a bash wrapper, or that is removed or replaced mid-run. Each
//! ends in a clear line and an exit code within a bound, leaving nothing running.

use crate::support::{run_bounded, TempDir, ZSTD_ONE_ROW, ZSTD_SMALL};
use std::time::Duration;

const ZSTD: &str = env!("CARGO_BIN_EXE_bb-zstd");

/// A bash script in `dir` standing for another build: asked to describe itself, it is
/// bb-zstd; as a fork it runs `fork`, with `$fd` its report pipe.
fn other_build(dir: &TempDir, name: &str, fork: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    let text = format!(
        "#!/bin/bash\n\
         if [ -n \"${{BB_FORK_DESCRIBE+set}}\" ]; then exec '{ZSTD}' \"$@\"; fi\n\
         fd=${{BB_FORK_CHILD#*:}}; fd=${{fd%%:*}}\n\
         {fork}\n"
    );
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_string_lossy().into_owned()
}

/// bb-zstd small and short, one row, one pair against `other`, with `extra`.
fn against(other: &str, extra: &[&str]) -> crate::support::Run {
    let mut args = [ZSTD_SMALL, ZSTD_ONE_ROW].concat();
    args.extend(["--forks", "1", "--against", other]);
    args.extend(extra);
    run_bounded(ZSTD, &args, &[], Duration::from_secs(120))
}

#[test]
fn a_fork_that_does_not_exit_after_its_report_is_killed_after_a_grace() {
    let d = TempDir::new("ab-lingers");
    let report = "printf 'score 1\\ncpu 0 0 0 0 0\\nops 1\\nend\\n' >&$fd";
    for (name, fork) in [
        ("reports", format!("{report}; exec sleep 300")),
        ("closes", "eval \"exec $fd>&-\"; exec sleep 300".to_string()),
    ] {
        let other = other_build(&d, name, &fork);
        let run = against(&other, &[]);
        assert_eq!(run.code, 1, "{name}: {}", run.stderr);
        let expected = "fork 1 did not exit within 5s of its report's end; it was killed";
        assert!(run.stderr.contains(expected), "{name}: {}", run.stderr);
    }
}

#[test]
fn a_fork_that_says_alive_for_ever_is_stopped_at_its_limit() {
    let d = TempDir::new("ab-alive");
    let other = other_build(&d, "alive", "while :; do echo alive >&$fd; sleep 0.5; done");
    let run = against(&other, &["--timeout", "1s"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("fork 1 ran past its limit of ")
            && run
                .stderr
                .contains("though it said it was alive; it was killed"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_description_that_leaves_a_process_holding_its_output_is_bounded_and_cleaned() {
    let d = TempDir::new("ab-leftover");
    let left = d.join("left");
    let other = other_build(&d, "leaves", &format!("exec '{ZSTD}' \"$@\""));
    // Asked to describe itself, it starts a process that holds its stdout, then describes.
    let text = std::fs::read_to_string(&other).unwrap().replacen(
        "then exec",
        &format!("then sleep 300 & echo $! >> '{}'; exec", left.display()),
        1,
    );
    std::fs::write(&other, text).unwrap();
    let run = against(&other, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let pids = std::fs::read_to_string(&left).unwrap();
    assert!(!pids.is_empty());
    for pid in pids.lines() {
        let pid: u32 = pid.parse().unwrap();
        assert!(
            gone_within(pid, Duration::from_secs(10)),
            "{pid} left running"
        );
    }
}

/// Whether process `pid` is gone (or a zombie) within `limit`.
fn gone_within(pid: u32, limit: Duration) -> bool {
    let until = std::time::Instant::now() + limit;
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit(')').next().unwrap_or("").trim_start();
        if stat.is_empty() || state.starts_with('Z') {
            return true;
        }
        if std::time::Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The processes whose environment holds `mark`.
fn marked(mark: &str) -> Vec<u32> {
    let needle = format!("BB_TEST_MARK={mark}\0");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let found = env.windows(needle.len()).any(|w| w == needle.as_bytes());
            found && !gone_within(*pid, Duration::ZERO)
        })
        .collect()
}

#[test]
fn the_forks_of_a_bash_wrapper_die_with_the_run_however_it_ends() {
    let d = TempDir::new("ab-wrapper");
    let forks = d.join("forks");
    // Not exec: bash stays, the build its child (bash leaves an inherited mask as it is).
    let wrapper = other_build(
        &d,
        "wrapper",
        &format!("echo $$ >> '{}'; '{ZSTD}' \"$@\"", forks.display()),
    );
    let args = [
        "--quick",
        "--size",
        "100k",
        "--warmup",
        "1",
        "--warmup-time",
        "60s",
        "--iterations",
        "1",
        "--time",
        "60s",
        "--op",
        "compress",
        "--threads",
        "1",
        "--lock",
        "none",
        "--forks",
        "1",
        "--against",
        &wrapper,
        "--seed",
    ];
    // Either build may take the first long step (the seed's choice): both are tried.
    for (seed, signal) in [
        ("1", libc::SIGKILL),
        ("2", libc::SIGKILL),
        ("1", libc::SIGTERM),
        ("2", libc::SIGTERM),
    ] {
        let _ = std::fs::remove_file(&forks);
        let mark = format!("{}-{seed}-{signal}", std::process::id());
        // Its output to a file: a process left holding a pipe would keep a reader waiting.
        let log = d.join(&format!("log-{seed}-{signal}"));
        let mut run = std::process::Command::new(ZSTD);
        run.args(args)
            .arg(seed)
            .env("BB_TEST_MARK", &mark)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap());
        let mut child = run.spawn().unwrap();
        let pid = child.id() as i32;
        let until = std::time::Instant::now() + Duration::from_secs(60);
        while !forks.exists() && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50));
        }
        // Both forks set up, one of them in its minute-long warm-up.
        std::thread::sleep(Duration::from_secs(2));
        // SAFETY: kill(2) on a child not yet reaped.
        unsafe { libc::kill(pid, signal) };
        let until = std::time::Instant::now() + Duration::from_secs(60);
        while child.try_wait().unwrap().is_none() && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        let stderr = std::fs::read_to_string(&log).unwrap_or_default();
        let mut left = marked(&mark);
        let until = std::time::Instant::now() + Duration::from_secs(10);
        while !left.is_empty() && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(100));
            left = marked(&mark);
        }
        for pid in &left {
            // SAFETY: kill(2) of what this test started, so that a failure leaves nothing.
            unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
        }
        assert!(forks.exists(), "seed {seed}: no fork started: {}", stderr);
        assert!(
            left.is_empty(),
            "seed {seed}, signal {signal}: {left:?} left running"
        );
    }
}

#[test]
fn a_build_replaced_or_removed_mid_run_is_the_one_checked_to_the_end() {
    let d = TempDir::new("ab-redeploy");
    let marker = d.join("replaced-ran");
    for how in ["replaces", "removes"] {
        let path = d.join(how);
        let new = d.join("new");
        // Its first fork redeploys it: a new file that fails loudly, or none at all.
        let redeploy = match how {
            "replaces" => format!(
                "printf '#!/bin/sh\\necho ran >> {}\\nexit 3\\n' > '{}'; chmod +x '{}'; mv '{}' '{}'",
                marker.display(),
                new.display(),
                new.display(),
                new.display(),
                path.display()
            ),
            _ => format!("rm -f '{}'", path.display()),
        };
        let other = other_build(&d, how, &format!("{redeploy}; exec '{ZSTD}' \"$@\""));
        let checked = std::fs::read(&other).unwrap();
        let out = d.join(&format!("{how}.json"));
        let run = against(&other, &["--forks", "3", "--output", out.to_str().unwrap()]);
        assert_eq!(run.code, 0, "{how}: {}", run.stderr);
        assert!(!marker.exists(), "{how}: a fork ran the new file");
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        let sha1 = json[1]["boardbench"]["build"]["sha1"].as_str().unwrap();
        assert_eq!(sha1, sha1_hex(&checked), "{how}: the checked file's hash");
        assert_eq!(json[0]["boardbench"]["against"]["pairs"], 3, "{how}");
    }
}

/// The hex SHA-1 of `bytes`, by sha1sum.
fn sha1_hex(bytes: &[u8]) -> String {
    use std::io::Write;
    let mut sum = std::process::Command::new("sha1sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    sum.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = sum.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout)[..40].to_string()
}

#[test]
fn bb_seek_against_itself_with_bucket_set_describes_with_the_runs_source() {
    let seek = std::path::Path::new(ZSTD).with_file_name("bb-seek");
    let seek = seek.to_str().unwrap();
    let (home, data) = (TempDir::new("ab-seek-home"), TempDir::new("ab-seek-data"));
    let source = format!("file:{}", data.path().display());
    // BUCKET set, no credentials anywhere: only S3 would need them, and this run reads files.
    let mut c = std::process::Command::new(seek);
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("BUCKET", "bench")
        .args(["--source", &source, "--dry-run", "--against", seek])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let run = crate::support::finish_within(c.spawn().unwrap(), Duration::from_secs(120), seek);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("source=file:"), "{}", run.stdout);
}

#[test]
fn a_fork_of_the_other_build_that_cannot_start_fails_its_row_and_the_report_is_written() {
    let d = TempDir::new("ab-no-start");
    // Its interpreter, removed by its first fork (not by the probe that tells whether
    // this machine executes it): the next cannot be started at all.
    let shell = d.join("bash");
    std::fs::copy("/bin/bash", &shell).unwrap();
    let other = other_build(
        &d,
        "gone",
        &format!(
            "[ -n \"$BB_FORK_CHILD\" ] && rm -f '{}'; exec '{ZSTD}' \"$@\"",
            shell.display()
        ),
    );
    let text = std::fs::read_to_string(&other).unwrap();
    let text = text.replacen("#!/bin/bash", &format!("#!{}", shell.display()), 1);
    std::fs::write(&other, text).unwrap();
    let out = d.join("ab.json");
    let run = against(&other, &["--forks", "2", "--output", out.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("--against ") && run.stderr.contains("starting fork 2 of"),
        "{}",
        run.stderr
    );
    assert!(out.exists(), "no report: {}", run.stderr);
}
