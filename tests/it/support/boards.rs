//! The suite on boards: OpenSSH servers on 127.0.0.1 playing boards (each with its own
//! home), and the checks of what run-all.sh leaves in a results directory, shared by the
//! tests of deploy.sh, fleet.sh and the Ansible playbook.

use super::{free_port, run_with, Run, TempDir};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The repository: its scripts, its target/ and the playbook.
pub const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// Appended after the profile, these shorten any profile's timing and change nothing
/// else: the default paths run whole, only faster (one fork, none added for precision).
pub const SHORT_TIMING: &str =
    "--warmup 0 --iterations 1 --time 100ms --forks 1 --precision off --idle-wait 0";
/// bb-zstd's quick profile made smaller and shorter: the behaviour is the same.
pub const ZSTD_FLAGS: &str =
    "--size 64k --jobs 2 --threads 1,2 --warmup-time 50ms --iterations 2 --time 100ms";

/// The results directory named on run-all's (or deploy's) last stdout line.
pub fn results_dir(run: &Run) -> PathBuf {
    let line = run.stdout.lines().last().unwrap_or("");
    PathBuf::from(
        line.strip_prefix("results: ")
            .unwrap_or_else(|| panic!("no results line:\n{}\n{}", run.stdout, run.stderr)),
    )
}

pub fn read_json(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// Checks a run-all results directory holding bb-zstd's results.
pub fn check_zstd_results(res: &Path) {
    let name = res.file_name().unwrap().to_str().unwrap();
    let host = String::from_utf8(Command::new("uname").arg("-n").output().unwrap().stdout).unwrap();
    assert!(name.starts_with(&format!("{}-", host.trim())), "{name}");
    assert!(
        name.ends_with('Z') || name.contains("Z-"),
        "UTC date-time: {name}"
    );
    let zstd = read_json(&res.join("bb-zstd.json"));
    let entries = zstd.as_array().unwrap();
    assert_eq!(
        entries.len(),
        8,
        "compress and decompress at 1 and 2 threads, with and without the lock"
    );
    for e in entries {
        assert_eq!(
            e["primaryMetric"]["rawData"][0].as_array().unwrap().len(),
            2
        );
        assert!(e["primaryMetric"]["score"].as_f64().unwrap() > 0.0);
    }
    let env = read_json(&res.join("env.json"));
    assert_eq!(env["arch"], std::env::consts::ARCH);
    assert_eq!(env["hostname"], host.trim());
    let summary = std::fs::read_to_string(res.join("summary.txt")).unwrap();
    assert!(summary.contains("== bb-zstd: ok in "), "{summary}");
    assert!(summary.contains("bb.zstd.decompress"), "{summary}");
}

/// Checks a results directory of the whole default suite: every measurement ran in the
/// standard profile (the timing shortened) and wrote its report.
pub fn check_default_suite(res: &Path) {
    let summary = std::fs::read_to_string(res.join("summary.txt")).unwrap();
    assert!(summary.contains("run-all standard on"), "{summary}");
    for name in ["bb-zstd", "bb-ipc", "bb-rpc", "bb-seek"] {
        assert!(summary.contains(&format!("== {name}: ok in ")), "{summary}");
        let report = read_json(&res.join(format!("{name}.json")));
        assert!(!report.as_array().unwrap().is_empty(), "{name}");
        let log = std::fs::read_to_string(res.join(format!("{name}.log"))).unwrap();
        assert!(log.contains("profile standard: about "), "{name}: {log}");
    }
    // The standard rpc matrix, whatever the shortened timing: its 40 rows across two
    // cores (on one core where the board has one), and sync and the floor on one core too.
    let rpc = read_json(&res.join("bb-rpc.json"));
    let placed = |p: &str| {
        rpc.as_array()
            .unwrap()
            .iter()
            .filter(|e| e["params"]["placement"] == p)
            .count()
    };
    let (two, one) = (placed("two-cores"), placed("one-core"));
    assert!(
        (two, one) == (40, 2) || (two, one) == (0, 40),
        "{two} rows on two cores, {one} on one: {rpc:#}"
    );
}

/// An OpenSSH server on 127.0.0.1, stopped by its pid when dropped.
pub struct Sshd {
    child: Child,
    pub port: u16,
}

impl Sshd {
    pub fn start(dir: &Path, name: &str) -> Sshd {
        Sshd::start_with(dir, name, "")
    }

    /// A server whose sessions also get the variables `env` (`NAME=VALUE ...`): sshd
    /// takes only its first SetEnv line.
    pub fn start_with(dir: &Path, name: &str, env: &str) -> Sshd {
        let port = free_port();
        let config = dir.join(format!("{name}.conf"));
        std::fs::write(
            &config,
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/{name}.pid\n\
                 AuthorizedKeysFile {d}/authorized_keys\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\n\
                 Subsystem sftp internal-sftp\nLogLevel ERROR\nSetEnv HOME={d}/home-{name} {env}\n",
                d = dir.display()
            ),
        )
        .unwrap();
        // Debian's sshd wants its privilege separation directory.
        let _ = std::fs::create_dir_all("/run/sshd");
        // The board's home, so that ~ on the board is not this machine's own.
        std::fs::create_dir_all(dir.join(format!("home-{name}"))).unwrap();
        let log = std::fs::File::create(dir.join(format!("{name}.log"))).unwrap();
        let child = Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("starting /usr/sbin/sshd (openssh-server, scripts/setup.sh test)");
        let sshd = Sshd { child, port };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "sshd did not start: {}",
                std::fs::read_to_string(dir.join(format!("{name}.log"))).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        sshd
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn user() -> String {
    let out = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The repository's dist/ and results/, which make deploy, make fleet, fleet.sh and the
/// playbook write and the tests read back: one test at a time there, whatever the
/// harness's threads (make test runs these tests in a run of their own, one at a time).
static REPOSITORY: Mutex<()> = Mutex::new(());

/// Holds the repository's dist/ and results/ for one test (see [`REPOSITORY`]).
pub fn repository() -> MutexGuard<'static, ()> {
    REPOSITORY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Throwaway host and user keys, two servers, and an ssh config naming the first `board1`;
/// the repository held (see [`repository`]) until they are gone.
pub struct Boards {
    pub dir: TempDir,
    pub servers: Vec<Sshd>,
    pub ssh_opts: String,
    _repository: MutexGuard<'static, ()>,
}

pub fn start_boards() -> Boards {
    let repository = repository();
    let dir = TempDir::new("boards");
    let d = dir.path();
    for key in ["host_key", "id_ed25519"] {
        let keygen = run_with(
            "ssh-keygen",
            &[
                "-q",
                "-t",
                "ed25519",
                "-N",
                "",
                "-f",
                d.join(key).to_str().unwrap(),
            ],
            &[],
        );
        keygen.assert_ok();
    }
    std::fs::copy(d.join("id_ed25519.pub"), d.join("authorized_keys")).unwrap();
    let servers = vec![Sshd::start(d, "sshd1"), Sshd::start(d, "sshd2")];
    let config = d.join("ssh_config");
    std::fs::write(
        &config,
        format!(
            "Host board1\n  HostName 127.0.0.1\n  Port {}\nHost *\n  User {}\n  IdentityFile {}/id_ed25519\n  IdentitiesOnly yes\n  \
             UserKnownHostsFile /dev/null\n  StrictHostKeyChecking no\n  BatchMode yes\n  LogLevel ERROR\n  ConnectTimeout 10\n",
            servers[0].port,
            user(),
            d.display()
        ),
    )
    .unwrap();
    Boards {
        ssh_opts: format!("-F {}", config.display()),
        dir,
        servers,
        _repository: repository,
    }
}

pub fn x86_musl_bb_zstd() {
    let p = Path::new(REPO).join("target/x86_64-unknown-linux-musl/release/bb-zstd");
    assert!(
        p.exists(),
        "{} is missing: run make cross first",
        p.display()
    );
}
