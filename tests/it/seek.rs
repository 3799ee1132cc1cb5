//! Integration tests of bb-seek: the real binary generating its objects, reading every
//! pattern with both clients from files and from a real nginx started here on 127.0.0.1
//! (uploads with PUT, a server ignoring Range, a redirect, a missing object), its bytes
//! checked, its bad input answered with exit code 2; with the `tls` feature, the same
//! over HTTPS with certificates made by the openssl CLI (a private CA given with
//! `--ca-file` or `SSL_CERT_FILE`; an unknown CA, a wrong name, an expired certificate and
//! a silent handshake are each one clear error); a 256 MiB object generated and read
//! in bounded memory; hostile HTTP servers scripted here (silent, dripping, endless
//! trailers) ended by the request's deadline; and the cross-built binaries under
//! qemu-user (ignored: run by make test after make cross).

use crate::support::nginx::{Certificates, Nginx};
use crate::support::seek::{check_all_patterns, metric, SHORT};
use crate::support::{entry, run_with, Run, TempDir};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_bb-seek");
/// One measured shot and no warm-up, JSON: for the slow cases (a large object, qemu).
const ONE_SHOT: &[&str] = &[
    "--quick",
    "--warmup",
    "0",
    "--iterations",
    "1",
    "--format",
    "json",
];

fn bb_seek(args: &[&str]) -> Run {
    run_with(EXE, args, &[])
}

fn short(source: &str, extra: &[&str]) -> Run {
    let mut args = SHORT.to_vec();
    args.extend_from_slice(&["--source", source]);
    args.extend_from_slice(extra);
    bb_seek(&args)
}

/// FNV-1a 64, written again here so the manifest is checked independently.
fn fnv(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[test]
fn gen_writes_objects_and_manifest_and_keeps_valid_ones() {
    let dir = TempDir::new("seek-gen");
    let d = dir.path().to_str().unwrap();
    let run = bb_seek(&["gen", "--dir", d, "--sizes", "64k,1m", "--seed", "7"]);
    run.assert_ok();
    assert_eq!(run.stdout.matches("written").count(), 2, "{}", run.stdout);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["seed"], "7");
    for (name, size) in [("random-64kb.txt", 65536), ("random-1mb.txt", 1 << 20)] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        assert_eq!(bytes.len(), size);
        let listed = manifest["objects"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["name"] == name)
            .unwrap();
        assert_eq!(listed["size"], size);
        assert_eq!(listed["fnv1a64"], fnv(&bytes));
        assert!(
            bytes
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || b" .\n".contains(b)),
            "text"
        );
    }
    let again = bb_seek(&["gen", "--dir", d, "--sizes", "64k,1m", "--seed", "7"]);
    assert_eq!(again.assert_ok().stdout.matches("kept").count(), 2);
    // A damaged object is rewritten; another seed gives other bytes.
    let path = dir.join("random-64kb.txt");
    let good = std::fs::read(&path).unwrap();
    let mut bad = good.clone();
    bad[1000] ^= 0x20;
    std::fs::write(&path, &bad).unwrap();
    let fixed = bb_seek(&["gen", "--dir", d, "--sizes", "64k", "--seed", "7"]);
    assert!(fixed.assert_ok().stdout.contains("written"));
    assert_eq!(std::fs::read(&path).unwrap(), good);
    bb_seek(&["gen", "--dir", d, "--sizes", "64k", "--seed", "8"]).assert_ok();
    assert_ne!(std::fs::read(&path).unwrap(), good);
}

#[test]
fn every_pattern_and_client_over_files_generating_missing_data() {
    let dir = TempDir::new("seek-file");
    let source = format!("file:{}", dir.join("data").display());
    let run = short(&source, &["--sizes", "64k,1m"]);
    run.assert_ok();
    assert!(
        run.stderr.contains("generated"),
        "a run with no data makes it: {}",
        run.stderr
    );
    check_all_patterns(&run.json(), &source);
    let again = short(&source, &["--sizes", "64k,1m", "--pattern", "forward"]);
    assert!(
        !again.assert_ok().stderr.contains("generated"),
        "{}",
        again.stderr
    );
}

#[test]
fn a_corrupt_object_fails_the_run() {
    let dir = TempDir::new("seek-corrupt");
    let d = dir.path().to_str().unwrap();
    bb_seek(&["gen", "--dir", d, "--sizes", "1m"]).assert_ok();
    let path = dir.join("random-1mb.txt");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[600_000] = b'#';
    std::fs::write(&path, &bytes).unwrap();
    for client in ["plain", "stream"] {
        let run = short(
            &format!("file:{d}"),
            &["--sizes", "1m", "--pattern", "parquet", "--client", client],
        );
        assert_eq!(run.code, 1, "{}", run.stderr);
        assert!(
            run.stderr
                .contains("verification mismatch: byte 600000 of random-1mb.txt"),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn pattern_files_and_cold_runs() {
    let dir = TempDir::new("seek-custom");
    let pattern = dir.join("footer.txt");
    std::fs::write(&pattern, "# a footer, then the head\n-8,8\n0,4096\n").unwrap();
    let source = format!("file:{}", dir.join("data").display());
    let run = short(
        &source,
        &[
            "--sizes",
            "64k,1m",
            "--pattern-file",
            pattern.to_str().unwrap(),
            "--cold",
        ],
    );
    run.assert_ok();
    let json = run.json();
    assert_eq!(json.as_array().unwrap().len(), 4);
    let e = entry(
        &json,
        "bb.seek.custom",
        &[("key", "random-1mb.txt"), ("client", "plain")],
    );
    assert_eq!(e["params"]["cache"], "cold");
    assert_eq!(metric(e, "requests"), 2.0);
    assert_eq!(metric(e, "fetched"), 4104.0 / 1024.0);
    // On tmpfs the pages cannot be dropped: the run says so.
    if Path::new("/dev/shm").is_dir() {
        let shm = PathBuf::from(format!("/dev/shm/bb-test-seek-{}", std::process::id()));
        let run = short(
            &format!("file:{}", shm.display()),
            &["--sizes", "64k", "--pattern", "forward", "--cold"],
        );
        let _ = std::fs::remove_dir_all(&shm);
        run.assert_ok();
        assert!(
            run.stderr
                .contains("stay cached after posix_fadvise DONTNEED"),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn bad_flags_get_one_line_and_exit_2() {
    let dir = TempDir::new("seek-bad");
    let bad_pattern = dir.join("bad.txt");
    std::fs::write(&bad_pattern, "0,10\nten,10\n").unwrap();
    // 20 GiB asked of a 16 MiB object: 1280 whole reads of it, or one read of 20 GiB.
    let twenty_gib = dir.join("20g.txt");
    std::fs::write(&twenty_gib, "0,16777216\n".repeat(1280)).unwrap();
    let huge_read = dir.join("huge.txt");
    std::fs::write(&huge_read, "0,21474836480\n").unwrap();
    let source = format!("file:{}", dir.join("data").display());
    let mut cases = vec![
        (vec!["--pattern", "zigzag"], "zigzag"),
        (vec!["--client", "fast"], "fast"),
        (vec!["--sizes", "0"], "--sizes"),
        (
            vec!["--sizes", "100000g"],
            "--sizes: the objects to generate need 102400000 MiB in",
        ),
        (vec!["--request-timeout", "0"], "--request-timeout"),
        (
            vec!["--sizes", "16m", "--pattern-file", twenty_gib.to_str().unwrap()],
            "the reads ask for 21474836480 bytes per shot, more than 16 times the 16777216-byte object",
        ),
        (
            vec!["--sizes", "16m", "--pattern-file", huge_read.to_str().unwrap()],
            "line 1: the read is empty or falls outside the 16777216-byte object",
        ),
        (vec!["--cache-size", "16k"], "--cache-size"),
        // A forgotten scheme: refused with the URL meant, no local data generated.
        (
            vec!["--source", "nas.local:8080"],
            "did you mean http://nas.local:8080?",
        ),
        (vec!["--readahead-max", "16m"], "--readahead-max"),
        (vec!["--cold", "--mode", "thrpt"], "--cold"),
        (
            vec!["--pattern-file", bad_pattern.to_str().unwrap()],
            "line 2",
        ),
        (
            vec!["--pattern-file", "/nonexistent/p.txt"],
            "/nonexistent/p.txt",
        ),
    ];
    // TLS: a CA file that cannot serve, or in a build without TLS, https at all.
    if cfg!(feature = "tls") {
        cases.push((
            vec!["--ca-file", "/nonexistent/ca.pem"],
            "--ca-file /nonexistent/ca.pem: No such file",
        ));
        cases.push((
            vec!["--ca-file", bad_pattern.to_str().unwrap()],
            "no PEM certificate",
        ));
    } else {
        let without = "this bb-seek was built without TLS: rebuild it with `cargo build --release --features tls`";
        cases.push((vec!["--source", "https://127.0.0.1/x/"], without));
        cases.push((vec!["--ca-file", "/etc/hostname"], without));
    }
    for (args, needle) in cases {
        let mut all = vec!["--source", source.as_str()];
        all.extend(args.iter());
        let run = bb_seek(&all);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert_eq!(
            run.stderr.trim().lines().count(),
            1,
            "{args:?}: {}",
            run.stderr
        );
        assert!(run.stderr.contains(needle), "{args:?}: {}", run.stderr);
    }
    let run = bb_seek(&["gen", "--dir", "x", "--dest", "http://127.0.0.1:1/"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let gen_dir = dir.join("gen");
    let run = bb_seek(&[
        "gen",
        "--dir",
        gen_dir.to_str().unwrap(),
        "--sizes",
        "100000g",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("MiB are free there"), "{}", run.stderr);
    assert!(
        !dir.join("data").exists() && !gen_dir.join("random-100000gb.txt").exists(),
        "nothing generated"
    );
}

/// Runs bb-seek with `args`; returns its output and its peak RSS in KiB: the child's own
/// ru_maxrss, from wait4 (the whole run, in one process with --forks 0).
fn bb_seek_with_peak_rss(args: &[&str]) -> (Run, u64) {
    // The peak of bb-seek alone. A child spawned from this test process starts in its
    // memory (vfork), and Linux keeps the high-water mark of the memory a process had
    // before its exec: a wait4 here would count whatever the tests running beside this
    // one held. A small Python forks bb-seek instead and reports the child's peak.
    const WRAPPER: &str = "import os, sys\n\
        pid = os.fork()\n\
        if pid == 0:\n    os.execv(sys.argv[1], sys.argv[1:])\n\
        _, status, usage = os.wait4(pid, 0)\n\
        sys.stderr.write('\\npeak-rss-kib=%d\\n' % usage.ru_maxrss)\n\
        sys.exit(os.waitstatus_to_exitcode(status))\n";
    let mut run: Run = Command::new("python3")
        .args(["-c", WRAPPER, EXE])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("running python3")
        .into();
    let (stderr, peak) = run
        .stderr
        .rsplit_once("\npeak-rss-kib=")
        .unwrap_or_else(|| panic!("no peak reported: {}", run.stderr));
    let peak = peak.trim().parse().expect("a peak in KiB");
    run.stderr = stderr.to_string();
    (run, peak)
}

#[test]
fn a_256_mib_object_is_generated_and_read_in_bounded_memory() {
    let dir = TempDir::new("seek-large");
    let d = dir.path().to_str().unwrap();
    let (gen, rss) = bb_seek_with_peak_rss(&["gen", "--dir", d, "--sizes", "256m"]);
    gen.assert_ok();
    eprintln!("gen of 256 MiB: peak RSS {rss} KiB");
    assert_eq!(
        std::fs::metadata(dir.join("random-256mb.txt"))
            .unwrap()
            .len(),
        256 << 20
    );
    assert!(rss < 32 << 10, "gen peaked at {rss} KiB");
    // Every pattern with both clients, one shot each: the files' stream cache is 256k.
    let cache_kib = 256;
    let source = format!("file:{d}");
    let (run, rss) = bb_seek_with_peak_rss(
        &[
            ONE_SHOT,
            &["--forks", "0", "--source", &source, "--sizes", "256m"],
        ]
        .concat(),
    );
    run.assert_ok();
    assert!(
        !run.stderr.contains("generated"),
        "the object gen wrote is used: {}",
        run.stderr
    );
    let json = run.json();
    let entries = json.as_array().unwrap();
    assert_eq!(entries.len(), 10, "(2 sequential + 3) × 2 clients");
    for e in entries {
        let peak = e["boardbench"]["peakRssKiB"].as_u64().expect("peakRssKiB");
        eprintln!(
            "{} {} {} {}: peak RSS {peak} KiB",
            e["benchmark"], e["params"]["client"], e["params"]["read-size"], e["params"]["key"]
        );
        assert!(peak < (64 << 10) + cache_kib, "{e:#}");
        assert!(metric(e, "MB/s") > 0.0);
    }
    eprintln!("run over 256 MiB: peak RSS {rss} KiB");
    assert!(rss < (64 << 10) + cache_kib, "the run peaked at {rss} KiB");
    // A byte corrupted deep in the object, past what the ring keeps of a sequential shot,
    // is still found (by the untimed pass over every byte), with its offset.
    let path = dir.join("random-256mb.txt");
    let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(100_000_000)).unwrap();
    file.write_all(b"#").unwrap();
    drop(file);
    let run = short(
        &source,
        &[
            "--sizes",
            "256m",
            "--pattern",
            "sequential",
            "--read-size",
            "1m",
            "--client",
            "stream",
        ],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("verification mismatch: byte 100000000 of random-256mb.txt"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_upload_larger_than_an_s3_part_streams_to_nginx_in_bounded_memory() {
    // 40 MiB: more than the 8 MiB part S3 uploads use, sent as one PUT whose body is
    // generated in chunks as it goes: gen's peak stays well under the object's size.
    let nginx = Nginx::start();
    let objects = nginx.url("objects");
    let (up, rss) = bb_seek_with_peak_rss(&["gen", "--dest", &objects, "--sizes", "40m"]);
    up.assert_ok();
    assert!(
        up.stdout.contains("41943040 bytes  uploaded"),
        "{}",
        up.stdout
    );
    eprintln!("gen peaked at {rss} KiB uploading 40 MiB");
    assert!(rss < 24 << 10, "gen peaked at {rss} KiB uploading 40 MiB");
    let local = TempDir::new("seek-http-large");
    let dir = local.path().to_str().unwrap();
    bb_seek(&["gen", "--dir", dir, "--sizes", "40m"]).assert_ok();
    assert!(
        std::fs::read(nginx.dir.join("www/objects/random-40mb.txt")).unwrap()
            == std::fs::read(local.join("random-40mb.txt")).unwrap(),
        "uploaded byte for byte"
    );
}

#[test]
fn over_http_from_a_real_nginx() {
    let nginx = Nginx::start();
    let objects = nginx.url("objects");
    // Upload with PUT, then again: nothing is sent twice.
    let up = bb_seek(&["gen", "--dest", &objects, "--sizes", "64k,1m"]);
    assert_eq!(
        up.assert_ok().stdout.matches("uploaded").count(),
        2,
        "{}",
        up.stdout
    );
    let local = TempDir::new("seek-http-local");
    bb_seek(&[
        "gen",
        "--dir",
        local.path().to_str().unwrap(),
        "--sizes",
        "64k,1m",
    ])
    .assert_ok();
    for name in ["random-64kb.txt", "random-1mb.txt"] {
        assert_eq!(
            std::fs::read(nginx.dir.join("www/objects").join(name)).unwrap(),
            std::fs::read(local.join(name)).unwrap(),
            "{name} uploaded byte for byte"
        );
    }
    let manifest = std::fs::read_to_string(nginx.dir.join("www/objects/manifest.json")).unwrap();
    assert!(manifest.contains("random-1mb.txt"), "{manifest}");
    let again = bb_seek(&["gen", "--dest", &objects, "--sizes", "64k,1m"]);
    assert_eq!(
        again.assert_ok().stdout.matches("kept").count(),
        2,
        "{}",
        again.stdout
    );

    let before = nginx.log().len();
    let run = short(&objects, &["--sizes", "64k,1m"]);
    run.assert_ok();
    check_all_patterns(&run.json(), &objects);
    // The probe before the plan names the object it read: the largest.
    assert!(
        run.stderr.contains(&format!(
            "bb-seek: random-1mb.txt at {objects}: round trip "
        )),
        "{}",
        run.stderr
    );
    // Ranged GETs answered 206, over one keep-alive connection per benchmark.
    let log = nginx.log()[before..].to_string();
    let gets: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(" GET /objects/"))
        .collect();
    assert!(gets.iter().all(|l| l.ends_with(" 206")), "{log}");
    let connections: std::collections::HashSet<&str> =
        gets.iter().map(|l| l.split(' ').next().unwrap()).collect();
    assert!(
        gets.len() > 3 * 256,
        "three shots of 256 reads, and more: {}",
        gets.len()
    );
    // One a benchmark (its untimed check pass too: nginx keeps a connection alive for
    // 100000 requests here, not its default 1000), and the probe's before the plan.
    assert!(
        connections.len() <= 21,
        "{} connections for {} GETs",
        connections.len(),
        gets.len()
    );

    // An object of many chunks (and more than an S3 part of 8 MiB), streamed with its
    // Content-Length, arrives byte for byte.
    bb_seek(&["gen", "--dest", &objects, "--sizes", "9m"]).assert_ok();
    let local_dir = local.path().to_str().unwrap();
    bb_seek(&["gen", "--dir", local_dir, "--sizes", "9m"]).assert_ok();
    let uploaded = std::fs::read(nginx.dir.join("www/objects/random-9mb.txt")).unwrap();
    assert_eq!(uploaded.len(), 9 << 20);
    assert!(uploaded == std::fs::read(local.join("random-9mb.txt")).unwrap());

    // A server that ignores Range, a redirect, and a missing object: clear errors, exit 1.
    for (prefix, needle) in [
        ("norange", "ignores Range"),
        ("moved", "redirected (301 Moved Permanently) to"),
        (
            "nothing",
            "is not there (404); upload the objects first: bb-seek gen --dest",
        ),
    ] {
        let run = short(
            &nginx.url(prefix),
            &[
                "--sizes",
                "64k",
                "--pattern",
                "forward",
                "--client",
                "plain",
            ],
        );
        assert_eq!(run.code, 1, "{prefix}: {}", run.stderr);
        assert!(run.stderr.contains(needle), "{prefix}: {}", run.stderr);
    }
}

/// Bytes bb-seek did not make: a run of seeded xorshift, so no generator's.
fn foreign_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[test]
fn existing_objects_in_a_file_and_on_a_real_nginx_are_measured_without_a_manifest() {
    let nginx = Nginx::start();
    let dir = TempDir::new("seek-existing");
    // 17 MiB and a byte: past the 16 MiB a shot keeps, so its sequential reads are also
    // checked whole once more; a Parquet-like table on the server, read over HTTP.
    let disk = dir.join("disk.img");
    std::fs::write(&disk, foreign_bytes((17 << 20) + 1, 1)).unwrap();
    let table = foreign_bytes(300_000, 2);
    std::fs::write(nginx.dir.join("www/objects/table.parquet"), &table).unwrap();
    let url = format!("{}table.parquet", nginx.url("objects"));
    let disk_path = disk.to_str().unwrap();
    let objects = format!("{disk_path},{url}");
    let mut args = SHORT.to_vec();
    args.extend(["--object", &objects, "--pattern", "sequential,parquet"]);
    args.extend(["--read-size", "1m"]);
    let run = bb_seek(&args);
    run.assert_ok();
    let json = run.json();
    assert_eq!(json.as_array().unwrap().len(), 2 * 2 * 2, "{json:#}");
    // The probe names the object by its URL, not the directory it is in.
    assert!(
        run.stderr.contains(&format!("bb-seek: {url}: round trip ")),
        "{}",
        run.stderr
    );
    for (source, key, size) in [
        (format!("file:{disk_path}"), "disk.img", (17 << 20) + 1),
        (url.clone(), "table.parquet", 300_000),
    ] {
        let size = size.to_string();
        for (pattern, client) in [("sequential", "plain"), ("parquet", "stream")] {
            let e = entry(
                &json,
                &format!("bb.seek.{pattern}"),
                &[("source", &source), ("client", client)],
            );
            assert_eq!(e["params"]["key"], key, "{e:#}");
            assert_eq!(e["params"]["size"], size.as_str(), "{e:#}");
            assert_eq!(e["params"]["check"], "clients-agree", "{e:#}");
            assert!(metric(e, "MB/s") > 0.0);
        }
        assert!(
            run.stderr
                .contains(&format!("{source}: {size} bytes read whole, untimed, in ")),
            "{}",
            run.stderr
        );
    }
    // The Parquet-like pattern scaled to the object: its footer, then 30% and 20% of it.
    let e = entry(
        &json,
        "bb.seek.parquet",
        &[("key", "table.parquet"), ("client", "plain")],
    );
    assert_eq!(metric(e, "requests"), 4.0);
    assert!(
        run.stderr.contains("a plain HTTP server gives no checksum"),
        "{}",
        run.stderr
    );

    // Bad objects: one line each, exit 2 before anything is read, naming --object; a
    // missing one on the server is its refusal, exit 1.
    let empty = dir.join("empty.log");
    std::fs::write(&empty, b"").unwrap();
    for (object, code, needle) in [
        (nginx.url("objects"), 2, "not an object"),
        ("/nonexistent/disk.img".to_string(), 2, "No such file"),
        (
            empty.to_str().unwrap().to_string(),
            2,
            "the object is empty (0 bytes)",
        ),
        (
            dir.path().to_str().unwrap().to_string(),
            2,
            "not a regular file",
        ),
        (format!("{url}.gone"), 1, "the object is not there (404)"),
    ] {
        let run = bb_seek(&["--object", &object, "--quick"]);
        assert_eq!(run.code, code, "{object}: {}", run.stderr);
        assert_eq!(
            run.stderr.trim().lines().count(),
            1,
            "{object}: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains(needle) && run.stderr.contains("--object"),
            "{object}: {}",
            run.stderr
        );
    }
    let run = bb_seek(&["--object", disk_path, "--sizes", "1m"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
}

#[test]
fn gen_to_nginx_replaces_foreign_bytes_and_keeps_other_sizes_listed() {
    let nginx = Nginx::start();
    let objects = nginx.url("objects");
    let www = nginx.dir.join("www/objects");
    // Of the right size, but not these bytes: read back, found out, uploaded again.
    std::fs::write(www.join("random-64kb.txt"), foreign_bytes(65536, 3)).unwrap();
    let up = bb_seek(&["gen", "--dest", &objects, "--sizes", "64k,1m"]);
    up.assert_ok();
    assert!(
        up.stdout
            .contains("random-64kb.txt  65536 bytes  uploaded again (its byte 0 differed)"),
        "{}",
        up.stdout
    );
    let local = TempDir::new("seek-gen-foreign");
    bb_seek(&[
        "gen",
        "--dir",
        local.path().to_str().unwrap(),
        "--sizes",
        "64k",
    ])
    .assert_ok();
    assert!(
        std::fs::read(www.join("random-64kb.txt")).unwrap()
            == std::fs::read(local.join("random-64kb.txt")).unwrap()
    );
    // Another seed's bytes are not kept either.
    let up = bb_seek(&["--seed", "9", "gen", "--dest", &objects, "--sizes", "64k"]);
    assert!(
        up.assert_ok().stdout.contains("uploaded again"),
        "{}",
        up.stdout
    );
    let listed = || -> Vec<String> {
        let text = std::fs::read_to_string(www.join("manifest.json")).unwrap();
        let m: serde_json::Value = serde_json::from_str(&text).unwrap();
        m["objects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["name"].as_str().unwrap().to_string())
            .collect()
    };
    // Seed 9's manifest names only seed 9's object; seed 42's 1m is another seed's.
    assert_eq!(listed(), ["random-64kb.txt"]);
    bb_seek(&["gen", "--dest", &objects, "--sizes", "64k,1m"]).assert_ok();
    // gen --sizes 64k keeps 1m listed while it is there, and drops it once it is gone.
    let again = bb_seek(&["gen", "--dest", &objects, "--sizes", "64k"]);
    assert!(
        again
            .assert_ok()
            .stdout
            .contains("kept (read back: these bytes)"),
        "{}",
        again.stdout
    );
    assert_eq!(listed(), ["random-64kb.txt", "random-1mb.txt"]);
    std::fs::remove_file(www.join("random-1mb.txt")).unwrap();
    bb_seek(&["gen", "--dest", &objects, "--sizes", "64k"]).assert_ok();
    assert_eq!(listed(), ["random-64kb.txt"]);
}

#[test]
fn a_dead_server_is_a_clear_error() {
    let port = crate::support::free_port();
    let run = short(
        &format!("http://127.0.0.1:{port}/x/"),
        &["--sizes", "64k", "--pattern", "forward"],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("connecting to 127.0.0.1:{port}")),
        "{}",
        run.stderr
    );
}

/// The line of `run`'s stderr about TLS, after checking that the run failed with exit 1.
#[cfg(feature = "tls")]
fn tls_failure(run: &Run, what: &str) -> String {
    assert_eq!(run.code, 1, "{what}: {}", run.stderr);
    let line = run.stderr.lines().find(|l| l.contains("TLS with "));
    line.unwrap_or_else(|| panic!("{what}: no TLS error in {}", run.stderr))
        .to_string()
}

#[cfg(feature = "tls")]
#[test]
fn over_https_from_a_real_nginx_with_a_private_ca() {
    let certs = Certificates::make();
    let nginx = certs.nginx("server.pem");
    let objects = format!("https://localhost:{}/objects/", nginx.port);
    let ca = certs.path("ca.pem");
    // Uploads over TLS arrive byte for byte.
    let up = bb_seek(&[
        "--ca-file",
        &ca,
        "gen",
        "--dest",
        &objects,
        "--sizes",
        "64k,1m",
    ]);
    assert_eq!(
        up.assert_ok().stdout.matches("uploaded").count(),
        2,
        "{}",
        up.stdout
    );
    let local = TempDir::new("seek-https-local");
    let local_dir = local.path().to_str().unwrap();
    bb_seek(&["gen", "--dir", local_dir, "--sizes", "64k,1m"]).assert_ok();
    for name in ["random-64kb.txt", "random-1mb.txt"] {
        assert!(
            std::fs::read(nginx.dir.join("www/objects").join(name)).unwrap()
                == std::fs::read(local.join(name)).unwrap(),
            "{name} uploaded byte for byte"
        );
    }
    // Every pattern and client, over kept-alive TLS connections.
    let run = short(&objects, &["--sizes", "64k,1m", "--ca-file", &ca]);
    run.assert_ok();
    check_all_patterns(&run.json(), &objects);
    let log = nginx.log();
    let gets = log.lines().filter(|l| l.contains(" GET /objects/")).count();
    assert!(gets > 3 * 256, "three shots of 256 reads, and more: {gets}");

    // Without --ca-file, the system's roots: SSL_CERT_FILE names them.
    let one = [
        "--sizes",
        "64k",
        "--pattern",
        "forward",
        "--client",
        "plain",
    ];
    let empty = certs.path("empty");
    let system = |roots: &str, source: &str| {
        let mut args = SHORT.to_vec();
        args.extend(["--source", source]);
        args.extend(one);
        run_with(
            EXE,
            &args,
            &[("SSL_CERT_FILE", roots), ("SSL_CERT_DIR", &empty)],
        )
    };
    system(&ca, &objects).assert_ok();

    // An unknown authority, a name the certificate lacks, an expired certificate: one
    // clear line naming the host and rustls's reason, exit 1.
    let other = certs.path("other-ca.pem");
    let unknown = "TLS with localhost: invalid peer certificate: UnknownIssuer: the certificate's issuer is not trusted here (give its CA with --ca-file)";
    let line = tls_failure(
        &short(&objects, &[&one[..], &["--ca-file", &other]].concat()),
        "other CA",
    );
    assert!(line.contains(unknown), "{line}");
    let line = tls_failure(&system(&other, &objects), "system roots without the CA");
    assert!(line.contains(unknown), "{line}");
    let by_ip = format!("https://127.0.0.1:{}/objects/", nginx.port);
    let line = tls_failure(
        &short(&by_ip, &[&one[..], &["--ca-file", &ca]].concat()),
        "name",
    );
    assert!(
        line.contains("TLS with 127.0.0.1: invalid peer certificate: certificate not valid for name \"127.0.0.1\"; certificate is only valid for DnsName(\"localhost\")"),
        "{line}"
    );
    drop(nginx);
    let expired = certs.nginx("expired.pem");
    let objects = format!("https://localhost:{}/objects/", expired.port);
    let line = tls_failure(
        &short(&objects, &[&one[..], &["--ca-file", &ca]].concat()),
        "expired",
    );
    assert!(
        line.contains("TLS with localhost: invalid peer certificate: certificate expired"),
        "{line}"
    );
}

/// Issue 26: a self-signed server certificate given as --ca-file, as `curl --cacert`
/// takes it (webpki alone refused it, CaUsedAsEndEntity), with its name and dates still
/// checked.
#[cfg(feature = "tls")]
#[test]
fn a_self_signed_server_certificate_given_as_the_ca_file_is_trusted_as_curl_trusts_it() {
    let certs = Certificates::make();
    let own = certs.path("self-signed.pem");
    let one = [
        "--sizes",
        "64k",
        "--pattern",
        "forward",
        "--client",
        "plain",
        "--ca-file",
        &own,
    ];
    let nginx = certs.nginx("self-signed.pem");
    let objects = format!("https://localhost:{}/objects/", nginx.port);
    bb_seek(&[
        "--ca-file",
        &own,
        "gen",
        "--dest",
        &objects,
        "--sizes",
        "64k",
    ])
    .assert_ok();
    short(&objects, &one).assert_ok();
    // As the system's roots (SSL_CERT_FILE) too, as curl takes it from its bundle.
    let mut args = SHORT.to_vec();
    args.extend(["--source", &objects]);
    args.extend(&one[..one.len() - 2]);
    let empty = certs.path("empty");
    run_with(
        EXE,
        &args,
        &[("SSL_CERT_FILE", &own), ("SSL_CERT_DIR", &empty)],
    )
    .assert_ok();
    // Its name is still checked.
    let by_ip = format!("https://127.0.0.1:{}/objects/", nginx.port);
    let line = tls_failure(&short(&by_ip, &one), "name");
    assert!(
        line.contains(
            "TLS with 127.0.0.1: invalid peer certificate: certificate not valid for name"
        ),
        "{line}"
    );
    // Another CA's file does not make it trusted.
    let other = certs.path("other-ca.pem");
    let mut args = one.to_vec();
    args.pop();
    args.push(&other);
    let line = tls_failure(&short(&objects, &args), "other CA");
    assert!(line.contains("invalid peer certificate"), "{line}");
    drop(nginx);
    // Nor its dates: an expired one given as its own CA is refused.
    let expired = certs.nginx("self-signed-expired.pem");
    let objects = format!("https://localhost:{}/objects/", expired.port);
    let own_expired = certs.path("self-signed-expired.pem");
    args.pop();
    args.push(&own_expired);
    let line = tls_failure(&short(&objects, &args), "expired");
    assert!(
        line.contains("TLS with localhost: invalid peer certificate: certificate expired"),
        "{line}"
    );
}

/// How a scripted server misbehaves once a GET comes.
#[derive(Clone, Copy, Debug)]
enum Hostile {
    /// Never answers.
    Silent,
    /// Answers 206 with the range's length, then drips the body, a byte every 0.5 s.
    Drip,
    /// Sends the body chunked, then trailers, a short line every 0.1 s, without end.
    EndlessTrailers,
    /// Closes each connection a HEAD came on (as an idle keep-alive one may be); the
    /// fresh one the GET is retried on is silent.
    CloseThenSilent,
}

/// A server on 127.0.0.1 that answers HEAD with `size` bytes and misbehaves as `how` on
/// GET; its threads end within 30 s, or as soon as the client goes away.
fn hostile_server(size: u64, how: Hostile) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let until = Instant::now() + Duration::from_secs(30);
    std::thread::spawn(move || {
        while Instant::now() < until {
            match listener.accept() {
                Ok((stream, _)) => {
                    std::thread::spawn(move || serve_hostile(stream, size, how, until));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    });
    port
}

fn serve_hostile(stream: TcpStream, size: u64, how: Hostile, until: Instant) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(100)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let mut out = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    // Whether the client is gone, waiting up to `wait` for it to say so.
    let gone = |reader: &mut BufReader<TcpStream>, wait: Duration| {
        let end = Instant::now() + wait;
        while Instant::now() < end.min(until) {
            match reader.read(&mut [0; 64]) {
                Ok(0) => return true,
                Err(e)
                    if e.kind() != std::io::ErrorKind::WouldBlock
                        && e.kind() != std::io::ErrorKind::TimedOut =>
                {
                    return true
                }
                _ => {}
            }
        }
        Instant::now() >= until
    };
    loop {
        let mut head = Vec::new();
        // A line survives the read timeouts it waits through.
        let mut line = String::new();
        loop {
            match reader.read_line(&mut line) {
                Ok(0) => return,
                Ok(_) if line == "\r\n" => break,
                Ok(_) => head.push(std::mem::take(&mut line)),
                Err(_) if Instant::now() < until => continue,
                Err(_) => return,
            }
        }
        if head[0].starts_with("HEAD") {
            let _ = write!(out, "HTTP/1.1 200 OK\r\nContent-Length: {size}\r\n\r\n");
            if let Hostile::CloseThenSilent = how {
                // Closed after it answered, as an idle keep-alive connection is (every
                // one: bb-seek's probe before the plan opens one too).
                std::thread::sleep(Duration::from_millis(100));
                return;
            }
            continue;
        }
        let range = head
            .iter()
            .find_map(|l| l.strip_prefix("Range: bytes="))
            .unwrap()
            .trim()
            .to_string();
        let (a, b) = range.split_once('-').unwrap();
        let (a, b): (u64, u64) = (a.parse().unwrap(), b.parse().unwrap());
        let len = b - a + 1;
        match how {
            Hostile::Silent | Hostile::CloseThenSilent => {
                gone(&mut reader, Duration::from_secs(30));
            }
            Hostile::Drip => {
                let _ = write!(
                    out,
                    "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {a}-{b}/{size}\r\nContent-Length: {len}\r\n\r\n"
                );
                while out.write_all(b"x").is_ok() && !gone(&mut reader, Duration::from_millis(500))
                {
                }
            }
            Hostile::EndlessTrailers => {
                let _ = write!(
                    out,
                    "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {a}-{b}/{size}\r\nTransfer-Encoding: chunked\r\n\r\n{len:x}\r\n{}\r\n0\r\n",
                    "x".repeat(len as usize)
                );
                while out.write_all(b"X-T: y\r\n").is_ok()
                    && !gone(&mut reader, Duration::from_millis(100))
                {}
            }
        }
        return;
    }
}

#[test]
#[ignore = "needs make cross and qemu-user; run by make test"]
fn bb_seek_runs_correctly_under_qemu() {
    // HTTPS too: the cross builds have the tls feature (ring's ARM code, under qemu).
    let certs = Certificates::make();
    let nginx = certs.nginx("server.pem");
    let objects = nginx.dir.join("www/objects");
    bb_seek(&["gen", "--dir", objects.to_str().unwrap(), "--sizes", "64k"]).assert_ok();
    let https = format!("https://localhost:{}/objects/", nginx.port);
    let ca = certs.path("ca.pem");
    for (target, qemu, arch) in [
        ("armv7-unknown-linux-gnueabihf", "qemu-arm-static", "armv7l"),
        (
            "aarch64-unknown-linux-musl",
            "qemu-aarch64-static",
            "aarch64",
        ),
    ] {
        let exe = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("target")
            .join(target)
            .join("release/bb-seek");
        assert!(
            exe.exists(),
            "{} is missing: run make cross first",
            exe.display()
        );
        let exe = exe.to_str().unwrap();
        let dir = TempDir::new(&format!("seek-qemu-{arch}"));
        let source = format!("file:{}", dir.join("data").display());
        let args = [
            &[
                exe, "--source", &source, "--sizes", "64k,1m", "--forks", "1",
            ],
            ONE_SHOT,
        ]
        .concat();
        let run = run_with(qemu, &args, &[("BB_FORK_RUNNER", qemu)]);
        run.assert_ok();
        let json = run.json();
        assert_eq!(json[0]["environment"]["arch"], arch);
        check_all_patterns(&json, &source);
        // The bytes it generated are the same as on this machine.
        let here = TempDir::new("seek-qemu-here");
        bb_seek(&[
            "gen",
            "--dir",
            here.path().to_str().unwrap(),
            "--sizes",
            "1m",
        ])
        .assert_ok();
        assert_eq!(
            std::fs::read(dir.join("data/random-1mb.txt")).unwrap(),
            std::fs::read(here.join("random-1mb.txt")).unwrap(),
            "{target}"
        );
        let bad = run_with(qemu, &[exe, "--client", "fast"], &[]);
        assert_eq!(bad.code, 2, "{target}: {}", bad.stderr);
        let args = [
            &[
                exe,
                "--source",
                &https,
                "--ca-file",
                &ca,
                "--sizes",
                "64k",
                "--pattern",
                "parquet",
                "--forks",
                "0",
            ],
            ONE_SHOT,
        ]
        .concat();
        let run = run_with(qemu, &args, &[]);
        run.assert_ok();
        let json = run.json();
        assert_eq!(json.as_array().unwrap().len(), 2, "{target}: plain, stream");
        for e in json.as_array().unwrap() {
            assert_eq!(e["params"]["source"], https.as_str());
            assert!(metric(e, "MB/s") > 0.0, "{target}: {e:#}");
        }
    }
}

/// The tests of seek whose pass depends on this machine's speed (a deadline, a time
/// bound or a ratio of two timings): retried, one at a time ([`crate::support::timing`]).
mod timing {
    use super::*;
    use crate::support::timing::retry;

    #[cfg(feature = "tls")]
    #[test]
    fn a_silent_https_server_is_ended_by_the_request_deadline() {
        retry(
            "seek::timing::a_silent_https_server_is_ended_by_the_request_deadline",
            || {
                let certs = Certificates::make();
                // Never accepted: the kernel completes the TCP handshake, nobody answers TLS's.
                let listener = TcpListener::bind("127.0.0.1:0").unwrap();
                let port = listener.local_addr().unwrap().port();
                let start = Instant::now();
                let run = short(
                    &format!("https://127.0.0.1:{port}/x/"),
                    &[
                        "--sizes",
                        "64k",
                        "--pattern",
                        "forward",
                        "--client",
                        "plain",
                        "--request-timeout",
                        "1s",
                        "--ca-file",
                        &certs.path("ca.pem"),
                    ],
                );
                let took = start.elapsed();
                let line = tls_failure(&run, "silent");
                assert!(
        line.contains("TLS with 127.0.0.1: the request was not done within 1s (--request-timeout)"),
        "{line}"
    );
                assert!(
                    took >= Duration::from_secs(1) && took < Duration::from_secs(6),
                    "ended after {took:?}, the deadline is 1s"
                );
                drop(listener);
            },
        );
    }

    #[test]
    fn hostile_http_servers_are_ended_by_the_request_deadline() {
        retry(
            "seek::timing::hostile_http_servers_are_ended_by_the_request_deadline",
            || {
                for how in [
                    Hostile::Silent,
                    Hostile::Drip,
                    Hostile::EndlessTrailers,
                    Hostile::CloseThenSilent,
                ] {
                    let port = hostile_server(64 << 10, how);
                    let start = Instant::now();
                    let run = short(
                        &format!("http://127.0.0.1:{port}/x/"),
                        &[
                            "--sizes",
                            "64k",
                            "--pattern",
                            "forward",
                            "--client",
                            "plain",
                            "--request-timeout",
                            "1s",
                        ],
                    );
                    let took = start.elapsed();
                    assert_eq!(run.code, 1, "{how:?}: {}", run.stderr);
                    assert!(
                        took >= Duration::from_secs(1) && took < Duration::from_secs(6),
                        "{how:?}: ended after {took:?}, the deadline is 1s: {}",
                        run.stderr
                    );
                    let line = run
                        .stderr
                        .lines()
                        // The run's error, not the probe's warning before the plan.
                        .find(|l| l.contains("GET ") && !l.contains(": warning: "))
                        .unwrap_or("");
                    assert!(
                        line.contains("bytes 0+6553")
                            && line.contains("was not done within 1s (--request-timeout)"),
                        "{how:?}: {}",
                        run.stderr
                    );
                    if let Hostile::CloseThenSilent = how {
                        assert!(
                            line.contains("on a retry on a fresh connection, after: "),
                            "{line}"
                        );
                    }
                }
            },
        );
    }
}

/// The temporary files (`.NAME.tmp.PID`) in `dir`.
fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp."))
        .collect()
}

/// A signal while gen writes a large object leaves no temporary file: the exit hook
/// removes it before the process exits with 128 + the signal.
#[test]
fn a_signal_while_gen_writes_leaves_no_temporary_file() {
    use nix::sys::signal::Signal;
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        let dir = TempDir::new("seek-gen-signal");
        let child = Command::new(EXE)
            .args([
                "gen",
                "--dir",
                dir.path().to_str().unwrap(),
                "--sizes",
                "1g",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let tmp = dir.join(&format!(".random-1gb.txt.tmp.{pid}"));
        let writing = crate::support::wait_for(Duration::from_secs(30), || {
            std::fs::metadata(&tmp).is_ok_and(|m| m.len() > 0)
        });
        assert!(
            writing,
            "{signal}: gen never started writing {}",
            tmp.display()
        );
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal).unwrap();
        let run = crate::support::finish_within(child, Duration::from_secs(30), "gen");
        assert_eq!(run.code, 128 + signal as i32, "{signal}: {}", run.stderr);
        assert_eq!(temp_files(dir.path()), Vec::<String>::new(), "{signal}");
    }
}

/// What a run killed outright left (SIGKILL: no hook runs) is removed by the next gen,
/// when its process is gone; a live process's is left alone.
#[test]
fn gen_removes_the_temporary_files_of_dead_runs_only() {
    let dir = TempDir::new("seek-gen-stale");
    let mut dead = Command::new("true").spawn().unwrap();
    dead.wait().unwrap();
    let dead_tmp = format!(".random-1mb.txt.tmp.{}", dead.id());
    let live_tmp = format!(".random-1kb.txt.tmp.{}", std::process::id());
    let other = format!(".notes.txt.tmp.{}", dead.id());
    for name in [&dead_tmp, &live_tmp, &other] {
        std::fs::write(dir.join(name), b"partial").unwrap();
    }
    bb_seek(&[
        "gen",
        "--dir",
        dir.path().to_str().unwrap(),
        "--sizes",
        "1k",
    ])
    .assert_ok();
    let mut left = temp_files(dir.path());
    left.sort();
    let mut want = vec![live_tmp, other];
    want.sort();
    assert_eq!(left, want);
}

/// Hostile objects and places, round four: an object too small for a pattern, an
/// `--object` URL it cannot take, and a `--source` naming an object are each one line
/// naming the flag and what it takes, exit 2, before anything is read or measured; a tiny
/// object read with the patterns that fit it gives a result.
#[test]
fn tiny_objects_and_urls_it_cannot_take_are_one_line_and_exit_2() {
    let dir = TempDir::new("seek-tiny");
    for len in [1, 5] {
        let path = dir.join(&format!("tiny-{len}.bin"));
        std::fs::write(&path, &b"abcde"[..len]).unwrap();
        let p = path.to_str().unwrap();
        // Every pattern by default: forward and backward read tenths of it, so nothing.
        let run = bb_seek(&["--object", p, "--quick"]);
        assert_eq!(run.code, 2, "{len} bytes: {}", run.stderr);
        assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "--object file:{p}: {len} byte{}, too small for forward and backward",
                if len == 1 { "" } else { "s" }
            )),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("10 bytes or more"), "{}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
        // The patterns that read it give a result, every byte checked.
        let mut args = SHORT.to_vec();
        args.extend(["--object", p, "--pattern", "sequential,parquet"]);
        let run = bb_seek(&args);
        run.assert_ok();
        let json = run.json();
        assert_eq!(json.as_array().unwrap().len(), 3 * 2, "{json:#}");
        for e in json.as_array().unwrap() {
            assert_eq!(e["params"]["size"], len.to_string());
            assert!(metric(e, "requests") >= 1.0, "{e:#}");
        }
    }
    let file = dir.join("disk.img");
    std::fs::write(&file, [7u8; 4096]).unwrap();
    let path = file.to_str().unwrap();
    let (listener, endpoint) = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.set_nonblocking(true).unwrap();
        let e = format!("http://{}", l.local_addr().unwrap());
        (l, e)
    };
    let presigned =
        format!("{endpoint}/bench/k.parquet?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=abc");
    let file_url = format!("file://{path}");
    let file_instead = format!("did you mean file:{path}?");
    let s3_object = "s3://bench/tables/orders.parquet";
    let s3_instead = format!("give --object {s3_object}");
    let http_object = format!("{endpoint}/logs/app.log");
    let http_instead = format!("give --object {http_object}");
    for (args, needle) in [
        (
            vec!["--object", presigned.as_str()],
            "has a query string or a fragment (a pre-signed URL?)",
        ),
        (vec!["--object", file_url.as_str()], file_instead.as_str()),
        (vec!["--source", s3_object], s3_instead.as_str()),
        (
            vec!["--source", http_object.as_str()],
            http_instead.as_str(),
        ),
    ] {
        let run = run_with(
            EXE,
            &[&args[..], &["--quick"]].concat(),
            &[
                ("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE"),
                ("AWS_SECRET_ACCESS_KEY", "secret"),
                ("AWS_ENDPOINT_URL", &endpoint),
            ],
        );
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert_eq!(
            run.stderr.trim().lines().count(),
            1,
            "{args:?}: {}",
            run.stderr
        );
        assert!(run.stderr.contains(needle), "{args:?}: {}", run.stderr);
        if args[0] == "--object" {
            // --object's own forms, not --source's.
            assert!(
                run.stderr.contains(
                    "(expected s3://BUCKET/KEY, http(s)://HOST:PORT/PATH/NAME or file:PATH)"
                ),
                "{args:?}: {}",
                run.stderr
            );
            assert!(!run.stderr.contains("PREFIX"), "{args:?}: {}", run.stderr);
        }
        assert!(!run.stderr.contains("benchmarks failed"), "{}", run.stderr);
    }
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("a refused run sent a request: {other:?}"),
    }
}

/// A file cut short while a run reads it (through the stream's mapping, where a read past
/// its new end raises SIGBUS, or with pread) ends its benchmark with exit 1 and the reason,
/// never a death by signal without a word; the next benchmark's fork, finding it smaller
/// than when the run began, says so (never to rerun gen, which did not make it).
#[test]
fn a_file_truncated_under_the_run_is_exit_1_with_its_reason() {
    let dir = TempDir::new("seek-truncated");
    let path = dir.join("big.bin");
    let size: u64 = 32 << 20;
    std::fs::write(&path, foreign_bytes(size as usize, 3)).unwrap();
    let p = path.to_str().unwrap();
    let mut child = Command::new(EXE)
        .args([
            "--object",
            p,
            "--pattern",
            "sequential",
            "--read-size",
            "4k,8k",
            "--client",
            "stream",
            "--quick",
            "--warmup",
            "0",
            "--iterations",
            "1000",
            "--forks",
            "1",
            "--format",
            "json",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first fork under way (the check before the run has read the file whole): cut
    // the file to 1 MiB a moment into its shots.
    let stderr = child.stderr.take().unwrap();
    let (started, fork) = std::sync::mpsc::channel();
    let lines = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(|l| l.ok()) {
            let benchmark = line.starts_with("[1/2] ") || line.starts_with("[2/2] ");
            if benchmark && line.contains(": about ") {
                let _ = started.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let first = fork.recv_timeout(Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(500));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let run = crate::support::finish_within(child, Duration::from_secs(60), "bb-seek");
    let stderr = lines.join().unwrap();
    assert!(first.is_ok(), "no fork started: {stderr}");
    assert_eq!(run.code, 1, "{stderr}");
    // The fork cut short says why, whichever way it read: one line, exit 1.
    assert!(
        stderr.contains(&format!(
            "{p} ended at 1048576, before the {size} bytes it should hold (it changed under the run?)"
        )),
        "{stderr}"
    );
    assert!(
        !stderr.contains("SIGBUS") && !stderr.contains("signal"),
        "{stderr}"
    );
    // The other benchmark's fork finds it changed since the run began.
    assert!(
        stderr.contains(&format!(
            "{p} has 1048576 bytes, not the {size} it had when the run began: it changed since"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("rerun bb-seek gen"), "{stderr}");
    assert!(stderr.contains("2 of 2 benchmarks failed"), "{stderr}");
}
