//! Helpers for the integration tests: run a real binary, capture its output, make and
//! remove temporary directories.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

/// Runs `exe` with `args` and extra environment variables.
pub fn run_with(exe: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut c = Command::new(exe);
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output()
        .unwrap_or_else(|e| panic!("running {exe}: {e}"))
        .into()
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
    let mut child = c.spawn().unwrap_or_else(|e| panic!("running {exe}: {e}"));
    let until = std::time::Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > until {
            let _ = child.kill();
            let run: Run = child.wait_with_output().unwrap().into();
            panic!(
                "{exe} {args:?} still ran after {limit:?}\nstdout:\n{}\nstderr:\n{}",
                run.stdout, run.stderr
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.wait_with_output().unwrap().into()
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
