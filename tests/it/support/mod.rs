//! Helpers for the integration tests: run a real binary, capture its output, make and
//! remove temporary directories.
#![allow(dead_code)]

pub mod boards;
pub mod moto;
pub mod nginx;
pub mod rpc_server;
pub mod seek;
pub mod timing;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// bb-zstd made small and short, so each run takes about a second; the behaviour is
/// the same as the defaults'.
pub const ZSTD_SMALL: &[&str] = &[
    "--quick",
    "--size",
    "100k",
    "--jobs",
    "4",
    "--warmup-time",
    "50ms",
    "--iterations",
    "2",
    "--time",
    "100ms",
];

/// With [`ZSTD_SMALL`], bb-zstd's one row: compress on one thread, without the lock.
pub const ZSTD_ONE_ROW: &[&str] = &["--op", "compress", "--threads", "1", "--lock", "none"];

/// The output of a finished run.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    pub fn assert_ok(&self) -> &Run {
        assert_eq!(
            self.code, 0,
            "exit code {}\nstdout:\n{}\nstderr:\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// Runs `exe` with `args` and extra environment variables (after a timed attempt of
/// another test, should one be running: [`timing::shared`]; as for the other runs here).
pub fn run_with(exe: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let _gate = timing::shared();
    let mut c = Command::new(exe);
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output()
        .unwrap_or_else(|e| panic!("running {exe}: {e}"))
        .into()
}

/// Runs `exe` with `args` in the directory `cwd`.
pub fn run_in(cwd: &Path, exe: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let _gate = timing::shared();
    let mut c = Command::new(exe);
    c.args(args).current_dir(cwd);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output()
        .unwrap_or_else(|e| panic!("running {exe} in {}: {e}", cwd.display()))
        .into()
}

/// The seconds of a plan's last line, `estimated duration: ... (N s)`.
pub fn estimated_seconds(plan: &str) -> f64 {
    let last = plan.lines().last().unwrap_or("");
    let inner = last
        .rsplit_once('(')
        .and_then(|(_, s)| s.strip_suffix(" s)"))
        .unwrap_or_else(|| panic!("no estimate on the last line:\n{plan}"));
    inner.parse().unwrap()
}

/// The benchmarks of a `--dry-run` plan, one per line, as `name (k=v, ...)` with the
/// params sorted (as [`reported_labels`] writes them).
pub fn planned_labels(plan: &str) -> Vec<String> {
    plan.lines()
        .filter(|l| l.starts_with("bb."))
        .map(|l| {
            let label = &l[..l
                .find(")  ")
                .map_or_else(|| l.find("  ").unwrap(), |i| i + 1)];
            match label.split_once(" (") {
                None => label.to_string(),
                Some((name, params)) => {
                    let mut params: Vec<&str> = params.trim_end_matches(')').split(", ").collect();
                    params.sort();
                    format!("{name} ({})", params.join(", "))
                }
            }
        })
        .collect()
}

/// The benchmarks of a JMH-layout JSON report, as `name (k=v, ...)` with sorted params.
pub fn reported_labels(json: &serde_json::Value) -> Vec<String> {
    json.as_array()
        .expect("a JSON array")
        .iter()
        .map(|e| {
            let params: Vec<String> = e["params"]
                .as_object()
                .map(|p| {
                    p.iter()
                        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap()))
                        .collect()
                })
                .unwrap_or_default();
            let name = e["benchmark"].as_str().unwrap();
            if params.is_empty() {
                name.to_string()
            } else {
                format!("{name} ({})", params.join(", "))
            }
        })
        .collect()
}

/// Like [`run_with`], but a run still going after `limit` is killed and fails the test
/// (a bug that makes it wait forever must not hang the suite).
pub fn run_bounded(
    exe: &str,
    args: &[&str],
    env: &[(&str, &str)],
    limit: std::time::Duration,
) -> Run {
    let mut c = Command::new(exe);
    c.args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let _gate = timing::shared();
    let child = c.spawn().unwrap_or_else(|e| panic!("running {exe}: {e}"));
    finish_within(child, limit, &format!("{exe} {args:?}"))
}

/// Waits for `child`, reading its output as it runs (a report larger than a pipe's
/// buffer would otherwise block it before it exits); one still going after `limit` is
/// killed and fails the test with what it wrote. `what` names it in that message.
pub fn finish_within(child: std::process::Child, limit: std::time::Duration, what: &str) -> Run {
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(limit) {
        Ok(out) => out.unwrap().into(),
        Err(_) => {
            // SAFETY: kill(2) on the pid of a child not yet reaped (its waiter still waits).
            unsafe { libc::kill(pid, libc::SIGKILL) };
            let run: Run = rx.recv().unwrap().unwrap().into();
            panic!(
                "{what} still ran after {limit:?}\nstdout:\n{}\nstderr:\n{}",
                run.stdout, run.stderr
            );
        }
    }
}

/// A port on 127.0.0.1 that nothing listens on just now (a server started on it may
/// still lose it to another; the servers here retry).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A fresh temporary directory, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let unique = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir =
            std::env::temp_dir().join(format!("bb-test-{name}-{}-{unique}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, p: &str) -> PathBuf {
        self.0.join(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The entry of a JMH-layout JSON array with this benchmark name and params.
pub fn entry<'a>(
    json: &'a serde_json::Value,
    name: &str,
    params: &[(&str, &str)],
) -> &'a serde_json::Value {
    json.as_array()
        .expect("a JSON array")
        .iter()
        .find(|e| e["benchmark"] == name && params.iter().all(|(k, v)| e["params"][k] == *v))
        .unwrap_or_else(|| panic!("no entry {name} {params:?} in {json:#}"))
}

/// The pids of the live (not zombie) children of `pid`, from /proc.
pub fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // Fields after the ")" that ends the command name: state, ppid, ...
        let mut rest = stat[stat.rfind(')').unwrap() + 2..].split(' ');
        let state = rest.next().unwrap_or("");
        if rest.next().and_then(|p| p.parse::<u32>().ok()) == Some(pid) && state != "Z" {
            out.push(child);
        }
    }
    out
}

/// Whether process `pid` still exists and is not a zombie.
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| !s[s.rfind(')').unwrap() + 2..].starts_with('Z'))
}

/// Waits up to `limit` for `cond`, checking every 20 ms.
pub fn wait_for(limit: std::time::Duration, mut cond: impl FnMut() -> bool) -> bool {
    let until = std::time::Instant::now() + limit;
    while std::time::Instant::now() < until {
        if cond() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    cond()
}

/// The first CPU this process may run on, for `--pin`.
pub fn first_cpu() -> usize {
    let allowed = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
    (0..nix::sched::CpuSet::count())
        .find(|&c| allowed.is_set(c).unwrap_or(false))
        .expect("a CPU to run on")
}

/// The raw values of a JSON entry's `vs floor`, checked to come from interleaved pairs:
/// one list per fork, as many values as measurement iterations, the score their mean, and
/// the entry's `boardbench.pairing` with one placement per pair. Returns every value.
pub fn paired_vs_floor(e: &serde_json::Value) -> Vec<f64> {
    let m = &e["secondaryMetrics"]["vs floor"];
    assert_eq!(m["scoreUnit"], "x", "{e:#}");
    let raw = m["rawData"].as_array().expect("rawData");
    let forks = e["forks"].as_u64().unwrap().max(1) as usize;
    let iterations = e["measurementIterations"].as_u64().unwrap() as usize;
    assert_eq!(raw.len(), forks, "one list per fork: {m:#}");
    let mut values = Vec::new();
    for fork in raw {
        let fork = fork.as_array().unwrap();
        assert_eq!(fork.len(), iterations, "one ratio per iteration: {m:#}");
        values.extend(fork.iter().map(|v| v.as_f64().unwrap()));
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let score = m["score"].as_f64().unwrap();
    assert!(
        (score - mean).abs() <= 1e-9 * mean,
        "{score} is the mean of {values:?}"
    );
    let pairing = &e["boardbench"]["pairing"];
    assert_eq!(pairing["metric"], "vs floor");
    assert_eq!(pairing["pairs"].as_u64(), Some(values.len() as u64));
    let placements = pairing["placements"].as_array().unwrap();
    assert_eq!(placements.len(), forks);
    assert!(placements
        .iter()
        .all(|f| f.as_array().unwrap().len() == iterations));
    values
}

/// Checks that every pair of a `vs floor` ran with both sides, floor and call, client and
/// server, on `cpu` alone.
pub fn all_on_one_cpu(e: &serde_json::Value, cpu: usize) {
    let pairing = &e["boardbench"]["pairing"];
    assert_eq!(pairing["placementDiffers"].as_u64(), Some(0), "{pairing:#}");
    for pair in pairing["placements"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f.as_array().unwrap())
    {
        for side in ["baseline", "measured"] {
            for end in ["client", "server"] {
                assert_eq!(pair[side][end], serde_json::json!([cpu]), "{pairing:#}");
            }
        }
    }
}

/// One process as /proc shows it: (pid, state, parent, start time in clock ticks).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Proc {
    pub pid: u32,
    pub state: char,
    pub ppid: u32,
    pub start: u64,
    /// The command name (at most 15 bytes).
    pub comm: String,
}

/// Every process on the machine, zombies included.
pub fn processes() -> Vec<Proc> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Some(p) = process(pid) {
            out.push(p);
        }
    }
    out
}

/// Process `pid`, if it exists (a zombie does).
pub fn process(pid: u32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the ")" that ends the command name: state (3), ppid (4), ...,
    // starttime (22).
    let rest: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
    Some(Proc {
        pid,
        state: rest.first()?.chars().next()?,
        ppid: rest.get(1)?.parse().ok()?,
        start: rest.get(19)?.parse().ok()?,
        comm: stat[stat.find('(')? + 1..stat.rfind(')')?].to_string(),
    })
}

/// Every descendant of `pid`, zombies included.
pub fn all_descendants(pid: u32) -> Vec<Proc> {
    let all = processes();
    let mut out = Vec::new();
    let mut queue = vec![pid];
    while let Some(parent) = queue.pop() {
        for p in all.iter().filter(|p| p.ppid == parent) {
            out.push(p.clone());
            queue.push(p.pid);
        }
    }
    out
}

/// Makes this test process the reaper of every orphan below it, so that a child a
/// benchmark leaves behind, dead or alive, stays visible here (as its own or as a zombie
/// nobody waits for) instead of being reaped by init out of sight.
pub fn become_subreaper() {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag on this process.
    let r = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    assert_eq!(r, 0, "PR_SET_CHILD_SUBREAPER");
}

/// Runs `exe args` with TMPDIR set to a fresh directory, sends it `signal` after `delay`,
/// and checks that it exits with 128 + the signal, says nothing about an error, leaves
/// nothing in TMPDIR, and leaves no process behind: every descendant seen while it ran
/// must be gone (reaped, not a zombie) when it has exited, and no live process may carry
/// the run's marker in its environment. Call [`become_subreaper`] first. Returns the
/// problems found.
pub fn signal_after(
    exe: &str,
    signal: nix::sys::signal::Signal,
    args: &[&str],
    delay: std::time::Duration,
) -> Vec<String> {
    use std::time::{Duration, Instant};
    let tmp = TempDir::new("signal");
    let marker = format!("{}", tmp.path().display());
    let mut child = Command::new(exe)
        .args(args)
        .env("TMPDIR", tmp.path())
        .env("BB_TEST_RUN", &marker)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    // By (pid, start time): a pid is a process only with its start time.
    let mut seen = std::collections::BTreeMap::new();
    let signal_at = Instant::now() + delay;
    let give_up = signal_at + Duration::from_secs(30);
    let mut signalled = false;
    let status = loop {
        seen.extend(
            all_descendants(pid)
                .into_iter()
                .map(|p| ((p.pid, p.start), p)),
        );
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if !signalled && Instant::now() >= signal_at {
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal).unwrap();
            signalled = true;
        }
        if Instant::now() > give_up {
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let stderr = reader.join().unwrap();
    let mut problems = Vec::new();
    let what = format!(
        "{} {args:?} (pid {pid}): {signal} after {delay:?}",
        exe.rsplit('/').next().unwrap()
    );
    use std::os::unix::process::ExitStatusExt;
    let code = status.code().or(status.signal().map(|s| 128 + s));
    if !signalled {
        problems.push(format!("{what}: ended ({status}) before the signal"));
    } else if code != Some(128 + signal as i32) {
        problems.push(format!("{what}: {status}; stderr:\n{stderr}"));
    }
    if stderr.contains("error:") {
        problems.push(format!("{what}: reported an error:\n{stderr}"));
    }
    // What the run did not reap is now this process's (the subreaper's): still there.
    for p in seen.values() {
        if let Some(now) = process(p.pid).filter(|now| now.start == p.start) {
            problems.push(format!(
                "{what}: child {} ({}, child of {}) outlived the run (state {}, parent {})",
                p.pid, p.comm, p.ppid, now.state, now.ppid
            ));
            if now.state == 'Z' && now.ppid == std::process::id() {
                let _ = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(p.pid as i32), None);
            }
        }
    }
    for pid in carrying(&marker) {
        problems.push(format!("{what}: process {pid} of the run survives"));
    }
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    if !left.is_empty() {
        problems.push(format!("{what}: left {left:?} in TMPDIR"));
    }
    problems
}

/// The live processes whose environment carries `BB_TEST_RUN=marker`: a run started with
/// it, and every descendant of it that kept its environment, however briefly it lived (a
/// zombie's environment is gone: only the live ones).
pub fn carrying(marker: &str) -> Vec<u32> {
    let needle = format!("BB_TEST_RUN={marker}\0");
    processes()
        .into_iter()
        .filter(|p| {
            let environ = std::fs::read(format!("/proc/{}/environ", p.pid)).unwrap_or_default();
            environ
                .windows(needle.len())
                .any(|w| w == needle.as_bytes())
        })
        .map(|p| p.pid)
        .collect()
}

/// `n` delays spread over `0..max`, each at a random-ish point of its own slice of it.
/// Runs `exe args` eight times, each signalled at a spread moment within 2 s, alternating
/// `--forks 0` and `--forks 1`, mostly SIGTERM and SIGINT (Ctrl-C) now and then; what
/// went wrong in any run (see [`signal_after`]). The caller makes itself a subreaper.
pub fn signal_at_spread_moments(exe: &str, args: &[&str]) -> Vec<String> {
    use nix::sys::signal::Signal;
    let mut problems = Vec::new();
    for (i, delay) in spread_delays(8, std::time::Duration::from_millis(2000))
        .into_iter()
        .enumerate()
    {
        let forks = if i % 2 == 0 { "0" } else { "1" };
        let signal = if i % 3 == 2 {
            Signal::SIGINT
        } else {
            Signal::SIGTERM
        };
        let all = [args, &["--forks", forks]].concat();
        problems.extend(signal_after(exe, signal, &all, delay));
    }
    problems
}

pub fn spread_delays(n: u32, max: std::time::Duration) -> Vec<std::time::Duration> {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64;
    let slice = max / n;
    (0..n)
        .map(|i| {
            let jitter = (seed.wrapping_mul(2654435761).wrapping_add(i as u64 * 40503)) % 1000;
            slice * i + slice.mul_f64(jitter as f64 / 1000.0)
        })
        .collect()
}
