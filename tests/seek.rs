//! Integration tests of bb-seek: the real binary generating its objects, reading every
//! pattern with both clients from files and from a real nginx started here on 127.0.0.1
//! (uploads with PUT, a server ignoring Range, a redirect, a missing object), its bytes
//! checked, its bad input answered with exit code 2; and the cross-built binaries under
//! qemu-user (ignored: run by make test after make cross).

mod common;
use common::{entry, run_with, Run, TempDir};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_bb-seek");
/// One shot of each after one warm-up, in this process: the behaviour is the same.
const SHORT: &[&str] = &[
    "--quick",
    "--warmup",
    "1",
    "--iterations",
    "2",
    "--forks",
    "0",
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

fn metric(e: &serde_json::Value, name: &str) -> f64 {
    e["secondaryMetrics"][name]["score"]
        .as_f64()
        .unwrap_or_else(|| panic!("no {name} in {e:#}"))
}

/// FNV-1a 64, written again here so the manifest is checked independently.
fn fnv(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Checks the requests and amplification of every pattern × client of a report over
/// objects of 64 KiB and 1 MiB, and that every read was a real read (MB/s > 0).
fn check_all_patterns(json: &serde_json::Value, source: &str) {
    assert_eq!(
        json.as_array().unwrap().len(),
        20,
        "2 sizes × (2 sequential + 3) × 2 clients"
    );
    for e in json.as_array().unwrap() {
        assert_eq!(e["mode"], "ss");
        assert_eq!(e["params"]["source"], source);
        assert_eq!(e["primaryMetric"]["scoreUnit"], "ms/op");
        assert!(metric(e, "MB/s") > 0.0);
        if e["params"]["client"] == "plain" {
            assert_eq!(metric(e, "amplification"), 1.0, "{e:#}");
        }
    }
    let key = |size: &str| format!("random-{size}.txt");
    let seq = |size: &str, client: &str, rs: &str| {
        entry(
            json,
            "bb.seek.sequential",
            &[("key", &key(size)), ("client", client), ("read-size", rs)],
        )
    };
    assert_eq!(metric(seq("1mb", "plain", "4k"), "requests"), 256.0);
    assert_eq!(metric(seq("1mb", "plain", "1m"), "requests"), 1.0);
    // Over HTTP: a block, then read-ahead of 128k, 256k, 512k, and the last 64k: five
    // requests. From a file, with the small cache: a block, then 64k, then 128k at most:
    // nine.
    let expected = if source.starts_with("http") { 5.0 } else { 9.0 };
    assert_eq!(metric(seq("1mb", "stream", "4k"), "requests"), expected);
    assert_eq!(metric(seq("1mb", "stream", "4k"), "amplification"), 1.0);
    for pattern in ["sequential", "forward", "backward", "parquet"] {
        // 64 KiB is small: the stream fetches it whole, once.
        let e = entry(
            json,
            &format!("bb.seek.{pattern}"),
            &[("key", &key("64kb")), ("client", "stream")],
        );
        assert_eq!(metric(e, "requests"), 1.0, "{pattern}");
    }
    for (pattern, plain, stream) in [
        ("forward", 5.0, 5.0),
        ("backward", 5.0, 5.0),
        ("parquet", 4.0, 3.0),
    ] {
        let p = entry(
            json,
            &format!("bb.seek.{pattern}"),
            &[("key", &key("1mb")), ("client", "plain")],
        );
        let s = entry(
            json,
            &format!("bb.seek.{pattern}"),
            &[("key", &key("1mb")), ("client", "stream")],
        );
        assert_eq!(
            (metric(p, "requests"), metric(s, "requests")),
            (plain, stream),
            "{pattern}"
        );
    }
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
fn bad_flags_are_one_line_and_exit_2() {
    let dir = TempDir::new("seek-bad");
    let bad_pattern = dir.join("bad.txt");
    std::fs::write(&bad_pattern, "0,10\nten,10\n").unwrap();
    let source = format!("file:{}", dir.join("data").display());
    for (args, needle) in [
        (vec!["--pattern", "zigzag"], "zigzag"),
        (vec!["--client", "fast"], "fast"),
        (vec!["--sizes", "0"], "--sizes"),
        (
            vec!["--sizes", "100g"],
            "--sizes 107374182400: the run would need",
        ),
        (vec!["--cache-size", "16k"], "--cache-size"),
        (vec!["--readahead-max", "16m"], "--readahead-max"),
        (vec!["--cold", "--mode", "thrpt"], "--cold"),
        (vec!["--source", "https://127.0.0.1/x/"], "https"),
        (
            vec!["--pattern-file", bad_pattern.to_str().unwrap()],
            "line 2",
        ),
        (
            vec!["--pattern-file", "/nonexistent/p.txt"],
            "/nonexistent/p.txt",
        ),
    ] {
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
}

/// An nginx on 127.0.0.1 with a temporary configuration, stopped when dropped.
struct Nginx {
    child: Child,
    port: u16,
    dir: TempDir,
}

fn nginx_binary() -> String {
    for candidate in ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"] {
        if Path::new(candidate).exists() {
            return candidate.to_string();
        }
    }
    panic!("nginx is missing: scripts/setup.sh test installs it (apt-get install nginx)");
}

impl Nginx {
    /// Serves `www/` with PUT under /objects/, Range ignored under /norange/, a redirect
    /// under /moved/, and every request logged with its connection.
    fn start() -> Nginx {
        let dir = TempDir::new("seek-nginx");
        let root = dir.join("www");
        std::fs::create_dir_all(root.join("objects")).unwrap();
        for attempt in 0..5 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let d = dir.path().display();
            let conf = format!(
                "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
                 events {{ worker_connections 64; }}\n\
                 http {{\n  log_format conn '$connection $request_method $uri $status';\n  access_log {d}/access.log conn;\n\
                 client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fastcgi;\n\
                 uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;\n  client_max_body_size 64m;\n\
                 server {{\n    listen 127.0.0.1:{port};\n    root {d}/www;\n\
                 location /objects/ {{ dav_methods PUT; create_full_put_path on; }}\n\
                 location /norange/ {{ max_ranges 0; alias {d}/www/objects/; }}\n\
                 location /moved/ {{ return 301 /objects/; }}\n  }}\n}}\n"
            );
            std::fs::write(dir.join("nginx.conf"), conf).unwrap();
            let mut child = Command::new(nginx_binary())
                .args([
                    "-p",
                    dir.path().to_str().unwrap(),
                    "-c",
                    dir.join("nginx.conf").to_str().unwrap(),
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("starting nginx");
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    break; // the port was taken meanwhile: try another
                }
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Nginx { child, port, dir };
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
            eprintln!(
                "nginx attempt {attempt} failed: {}",
                std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
            );
        }
        panic!("nginx did not start on 127.0.0.1");
    }

    fn url(&self, prefix: &str) -> String {
        format!("http://127.0.0.1:{}/{prefix}/", self.port)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("access.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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

    let run = short(&objects, &["--sizes", "64k,1m"]);
    run.assert_ok();
    check_all_patterns(&run.json(), &objects);
    // Ranged GETs answered 206, over one keep-alive connection per benchmark.
    let log = nginx.log();
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
    assert!(
        connections.len() <= 20,
        "{} connections for {} GETs",
        connections.len(),
        gets.len()
    );

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

#[test]
fn a_dead_server_is_a_clear_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
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

#[test]
#[ignore = "needs make cross and qemu-user; run by make test"]
fn bb_seek_runs_correctly_under_qemu() {
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
            exe,
            "--source",
            &source,
            "--sizes",
            "64k,1m",
            "--quick",
            "--warmup",
            "0",
            "--iterations",
            "1",
            "--forks",
            "1",
            "--format",
            "json",
        ];
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
    }
}
