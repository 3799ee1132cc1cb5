//! Forks as JMH has them: the binary re-executes itself for each fork of a benchmark, the
//! child runs that one benchmark and sends its results back over a pipe, and the parent
//! only collects. The child is started as `harness::child` starts every child (through
//! `BB_FORK_RUNNER` where one is set).

use super::child::SelfCommand;
use super::runner::ForkResult;
use crate::error::{Error, Result};
use crate::stats::histogram::Histogram;
use crate::system::cpu::{CpuTime, CpuUsage};
use crate::system::placement::PairPlacement;
use nix::sys::signal::Signal;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const CHILD_ENV: &str = "BB_FORK_CHILD";

/// Whether this process is a fork child, which should skip what its parent already did
/// once (generating inputs, warning about them). True until `child_request` runs.
pub fn is_child() -> bool {
    std::env::var_os(CHILD_ENV).is_some()
}

/// In a fork child: the index of the benchmark to run and the pipe to report on.
pub(crate) fn child_request() -> Option<(usize, std::fs::File)> {
    let value = std::env::var(CHILD_ENV).ok()?;
    std::env::remove_var(CHILD_ENV);
    let (index, fd) = value.split_once(':')?;
    let fd: i32 = fd.parse().ok()?;
    // SAFETY: the parent passed this descriptor, the write end of a pipe it made for
    // this child alone; nothing else in this process owns it.
    let file = unsafe { std::fs::File::from_raw_fd(fd) };
    set_cloexec(file.as_raw_fd());
    Some((index.parse().ok()?, file))
}

fn set_cloexec(fd: i32) {
    use nix::fcntl::{fcntl, FcntlArg, FdFlag};
    let _ = fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC));
}

/// Runs fork `fork` (1-based) of benchmark `index` in a fresh copy of this binary with the
/// same arguments.
pub(crate) fn run_child(index: usize, fork: u32, label: &str) -> Result<ForkResult> {
    // Errno is named, not kept as the cause: its Debug (every errno's name) would double
    // the binaries' error tables.
    let (read_end, write_end) = nix::unistd::pipe()
        .map_err(|e| Error::failed(format!("creating a pipe for a fork: {e}")))?;
    set_cloexec(read_end.as_raw_fd());
    let mut command = SelfCommand::new()?;
    command
        .command
        .args(std::env::args_os().skip(1))
        .env(CHILD_ENV, format!("{index}:{}", write_end.as_raw_fd()))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null());
    // If this process is stopped by a signal or a timeout, the fork must not outlive it;
    // SIGTERM lets it stop what it started in turn.
    let mut child = command.spawn(
        &format!("starting fork {fork} of {label}"),
        Signal::SIGTERM,
        || {},
    )?;
    drop(write_end);
    let parsed = read_report(
        read_end,
        &format!("fork {fork} of {label} sent a bad report"),
    );
    let status = child
        .wait()
        .map_err(|e| Error::io(format!("waiting for fork {fork} of {label}"), e))?;
    if !status.success() {
        return Err(Error::failed(format!(
            "fork {fork} of {label} failed ({status})"
        )));
    }
    parsed
}

/// Reads the report a fork sends; an error starts with `bad`.
fn read_report(read_end: OwnedFd, bad: &str) -> Result<ForkResult> {
    let mut lines = Vec::new();
    // Stop at "end": a grandchild (a forked server) may hold the pipe open longer.
    for line in BufReader::new(std::fs::File::from(read_end)).lines() {
        let line = line.map_err(|e| Error::caused(bad, e))?;
        if line == "end" {
            return decode(&lines.join("\n")).map_err(|e| Error::failed(format!("{bad}: {e}")));
        }
        lines.push(line);
    }
    Err(Error::failed(format!(
        "{bad}: no report (the fork ended early)"
    )))
}

/// Sends a fork's result to the parent.
pub(crate) fn send(mut pipe: std::fs::File, result: &ForkResult) -> Result<()> {
    let text = encode(result);
    pipe.write_all(text.as_bytes())
        .and_then(|_| pipe.write_all(b"end\n"))
        .map_err(|e| Error::io("sending results to the parent process", e))
}

/// The line protocol between a fork and its parent; floats use Rust's shortest
/// round-trip form, so nothing is lost.
pub(crate) fn encode(r: &ForkResult) -> String {
    let mut out = String::new();
    for s in &r.scores {
        out.push_str(&format!("score {s}\n"));
    }
    for (name, unit, values) in &r.metrics {
        let v: Vec<String> = values.iter().map(|x| x.to_string()).collect();
        out.push_str(&format!("metric {name}\t{unit}\t{}\n", v.join(" ")));
    }
    if let (Some(h), Some(min), Some(max)) = (
        &r.histogram,
        r.histogram.as_ref().and_then(|h| h.min()),
        r.histogram.as_ref().and_then(|h| h.max()),
    ) {
        let b: Vec<String> = h.nonzero().map(|(i, c)| format!("{i}:{c}")).collect();
        out.push_str(&format!("hist {min} {max} {}\n", b.join(" ")));
    } else if r.histogram.is_some() {
        out.push_str("hist empty\n");
    }
    let c = &r.cpu;
    out.push_str(&format!(
        "cpu {} {} {} {} {}\n",
        c.wall, c.process.user, c.process.sys, c.children.user, c.children.sys
    ));
    if let Some(rss) = r.peak_rss_kib {
        out.push_str(&format!("rss {rss}\n"));
    }
    out.push_str(&format!("ops {}\n", r.ops));
    for p in &r.pairs {
        out.push_str(&format!("pair {}\n", p.encode()));
    }
    out
}

pub(crate) fn decode(text: &str) -> std::result::Result<ForkResult, String> {
    let mut r = ForkResult::default();
    for line in text.lines() {
        let (key, rest) = line
            .split_once(' ')
            .ok_or_else(|| format!("bad line '{line}'"))?;
        let bad = || format!("bad line '{line}'");
        let num = |s: &str| s.parse::<f64>().map_err(|_| bad());
        match key {
            "score" => r.scores.push(num(rest)?),
            "metric" => {
                let mut parts = rest.splitn(3, '\t');
                let (name, unit, values) = (
                    parts.next().ok_or_else(bad)?,
                    parts.next().ok_or_else(bad)?,
                    parts.next().ok_or_else(bad)?,
                );
                let values = values
                    .split(' ')
                    .map(num)
                    .collect::<std::result::Result<_, _>>()?;
                r.metrics.push((name.to_string(), unit.to_string(), values));
            }
            "hist" if rest == "empty" => r.histogram = Some(Histogram::new()),
            "hist" => {
                let mut parts = rest.split(' ');
                let min = parts.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
                let max = parts.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
                let buckets = parts
                    .filter(|p| !p.is_empty())
                    .map(|p| {
                        let (i, c) = p.split_once(':')?;
                        Some((i.parse().ok()?, c.parse().ok()?))
                    })
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(bad)?;
                r.histogram = Some(Histogram::from_buckets(&buckets, min, max).ok_or_else(bad)?);
            }
            "cpu" => {
                let v = rest
                    .split(' ')
                    .map(num)
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                if v.len() != 5 {
                    return Err(bad());
                }
                r.cpu = CpuUsage {
                    wall: v[0],
                    process: CpuTime {
                        user: v[1],
                        sys: v[2],
                    },
                    children: CpuTime {
                        user: v[3],
                        sys: v[4],
                    },
                };
            }
            "rss" => r.peak_rss_kib = Some(rest.parse().map_err(|_| bad())?),
            "ops" => r.ops = rest.parse().map_err(|_| bad())?,
            "pair" => r.pairs.push(PairPlacement::decode(rest).ok_or_else(bad)?),
            _ => return Err(bad()),
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_round_trip_exactly() {
        let mut h = Histogram::new();
        h.record(1234);
        h.record_n(99_999, 5);
        let r = ForkResult {
            scores: vec![1.0 / 3.0, 2e-9, f64::NAN],
            metrics: vec![
                ("MB/s".into(), "MB/s".into(), vec![10.5, 11.25]),
                ("cpu per call".into(), "us".into(), vec![0.1]),
            ],
            histogram: Some(h),
            cpu: CpuUsage {
                wall: 1.5,
                process: CpuTime {
                    user: 1.25,
                    sys: 0.125,
                },
                children: CpuTime {
                    user: 0.5,
                    sys: 0.0,
                },
            },
            peak_rss_kib: Some(4096),
            ops: 123,
            pairs: vec![
                PairPlacement::decode("0/0 0/0").unwrap(),
                PairPlacement::decode("0,1/- 1/-").unwrap(),
            ],
        };
        let back = decode(&encode(&r)).unwrap();
        assert_eq!(back.scores[..2], r.scores[..2]);
        assert!(back.scores[2].is_nan());
        assert_eq!(
            (
                back.metrics,
                back.histogram,
                back.cpu,
                back.peak_rss_kib,
                back.ops,
                back.pairs
            ),
            (
                r.metrics,
                r.histogram,
                r.cpu,
                r.peak_rss_kib,
                r.ops,
                r.pairs
            )
        );
    }

    #[test]
    fn garbage_is_rejected() {
        assert!(decode("score x").is_err());
        assert!(decode("cpu 1 2").is_err());
        assert!(decode("hist 1 2 99999:1").is_err());
        assert!(decode("what 1").is_err());
        assert!(decode("pair 0/0").is_err());
    }
}
