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

/// Runs `exe` with `args` in the directory `cwd`.
pub fn run_in(cwd: &Path, exe: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut c = Command::new(exe);
    c.args(args).current_dir(cwd);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output()
        .unwrap_or_else(|e| panic!("running {exe} in {}: {e}", cwd.display()))
        .into()
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
