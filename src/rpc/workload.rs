//! bb-rpc's measured operation for the harness: a local server process spawned for the
//! benchmark (or a remote one), C connections each driven by one client style, and the
//! accounting around them: the server's CPU from its `stats()`, CPU µs per call on both
//! sides, and a final check that the server answered exactly the calls that were made.

use super::addr::{Addr, RpcStream};
use super::client::{ClientConfig, Pipeline, ReplyTimes, Requests, SyncClient};
use super::open_loop::{Latencies, OpenLoop, Recorder};
use super::protocol::ServerStats;
use crate::util::error::{Error, Result};
use crate::harness::fork::Purpose;
use crate::stats::histogram::Histogram;
use crate::system::cpu::CpuTime;
use crate::{Metric, Workload};
use crossbeam_channel::{unbounded, Receiver, Sender};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How calls are made on each connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A blocking stub: one call in flight.
    Sync,
    /// Pipelined, completed by the reader thread.
    Async,
    /// Pipelined, a handle per call that the caller waits on.
    Future,
    /// No RPC layer: length-prefixed messages written and read back from a plain echo
    /// server, up to `--depth` in flight.
    Floor,
}

impl Style {
    pub const NAMES: [&'static str; 4] = ["sync", "async", "future", "floor"];

    pub fn parse(s: &str) -> Option<Style> {
        Some(match s {
            "sync" => Style::Sync,
            "async" => Style::Async,
            "future" => Style::Future,
            "floor" => Style::Floor,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        Style::NAMES[self as usize]
    }

    /// Whether `--depth` applies.
    pub fn pipelined(self) -> bool {
        matches!(self, Style::Async | Style::Future)
    }
}

/// Where the server is: spawned for the benchmark on this transport, or given.
#[derive(Debug, Clone)]
pub enum Target {
    Local { transport: &'static str },
    Remote(Addr),
}

/// Everything one benchmark needs to set itself up in the process that measures it.
#[derive(Debug, Clone)]
pub struct Plan {
    pub target: Target,
    pub style: Style,
    pub client: ClientConfig,
    pub payload: usize,
    pub depth: usize,
    pub connections: usize,
    pub seed: u64,
    /// `--pin`: the client runs on the first CPU, a spawned server on the last.
    pub pin: Option<Vec<usize>>,
    /// `--rate`: calls per second per connection, sent on a schedule (an open loop, over
    /// the pipelined client); None: a closed loop.
    pub rate: Option<f64>,
}

impl Plan {
    /// The floor this plan's calls are compared with: the raw echo at the same depth,
    /// over the same transport, payload, connections and pinning.
    pub fn floor(&self) -> Plan {
        Plan {
            style: Style::Floor,
            ..self.clone()
        }
    }
}

/// A server process spawned for one benchmark, stopped (and its socket directory
/// removed) when the benchmark finishes or the process exits abnormally.
struct LocalServer {
    child: Option<Child>,
    pub addr: Addr,
    dir: Option<PathBuf>,
    /// The exit hooks that kill and reap the server, and that remove its directory.
    hooks: Vec<u64>,
}

impl LocalServer {
    /// Starts `bb-rpc serve` (this binary, through `BB_FORK_RUNNER` if set) on a fresh
    /// unix socket or on 127.0.0.1 with an ephemeral port.
    pub fn start(
        transport: &str,
        floor: bool,
        max_frame: u32,
        cpu: Option<usize>,
    ) -> Result<LocalServer> {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let mut hooks = Vec::new();
        let (listen, dir) = if transport == "unix" {
            static SWEEP: std::sync::Once = std::sync::Once::new();
            SWEEP.call_once(|| remove_stale_dirs(&std::env::temp_dir()));
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let dir = std::env::temp_dir().join(format!("bb-rpc-{}-{n}", std::process::id()));
            // Registered first, so it runs after the server is killed.
            let for_hook = dir.clone();
            hooks.push(crate::harness::watchdog::add_exit_hook(move || {
                let _ = std::fs::remove_dir_all(&for_hook);
            }));
            std::fs::create_dir_all(&dir)
                .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
            (
                format!("unix:{}", dir.join("rpc.sock").display()),
                Some(dir),
            )
        } else {
            ("tcp:127.0.0.1:0".to_string(), None)
        };
        let mut server = LocalServer {
            child: None,
            addr: Addr::Unix(PathBuf::new()),
            dir,
            hooks,
        };
        let (mut command, exe) = crate::harness::fork::command_for_self(Purpose::Server)?;
        if let Some(cpu) = cpu {
            command.args(["--pin", &cpu.to_string()]);
        }
        command
            .args(serve_args(&listen, floor, max_frame))
            .stdin(Stdio::null())
            .stdout(Stdio::piped());
        // A client killed outright (SIGKILL) does not leave its server behind either.
        let (mut child, hook) =
            crate::harness::fork::spawn(&mut command, &exe, "the server", Purpose::Server)?;
        server.hooks.push(hook);
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout is piped");
        server.child = Some(child);
        BufReader::new(stdout)
            .read_line(&mut line)
            .map_err(|e| Error::io("reading the server's address", e))?;
        let addr = line.trim().strip_prefix("listening on ").ok_or_else(|| {
            Error::failed(format!(
                "the server on {listen} did not start (it said '{}')",
                line.trim()
            ))
        })?;
        server.addr = Addr::parse(addr).map_err(Error::failed)?;
        Ok(server)
    }

    /// The server's process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Stops the server with SIGTERM and checks it exits cleanly within 10 s.
    pub fn stop(mut self) -> Result<()> {
        let mut child = self.child.take().expect("the server is running");
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            match child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(status)) => {
                    return Err(Error::failed(format!(
                        "the server on {} exited with {status}",
                        self.addr
                    )))
                }
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(10)),
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(Error::failed(format!(
                        "the server on {} did not stop within 10s of SIGTERM",
                        self.addr
                    )));
                }
            }
        }
    }
}

/// The arguments of a spawned server. No idle timeout: its connections, the control
/// connection above all, wait through calibration and warm-up however long they take,
/// and the server dies with this process anyway.
fn serve_args(listen: &str, floor: bool, max_frame: u32) -> Vec<String> {
    let mut args: Vec<String> = [
        "serve",
        "--listen",
        listen,
        "--quiet",
        "--idle-timeout",
        "0",
        "--max-frame",
        &max_frame.to_string(),
    ]
    .map(String::from)
    .into();
    if floor {
        args.push("--floor".into());
    }
    args
}

/// Removes the socket directories (`bb-rpc-PID-N`) that runs killed outright left in
/// `tmp` (SIGKILL gives no time to clean up): only those whose PID is gone, and of what
/// is inside only the socket, so that a directory holding anything else stays.
fn remove_stale_dirs(tmp: &std::path::Path) {
    use std::os::unix::fs::FileTypeExt;
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((pid, n)) = name
            .to_str()
            .and_then(|n| n.strip_prefix("bb-rpc-"))
            .and_then(|rest| rest.split_once('-'))
        else {
            continue;
        };
        let (Ok(pid), Ok(_)) = (pid.parse::<i32>(), n.parse::<u32>()) else {
            continue;
        };
        // ESRCH: no such process. A live one, or one not ours to signal (EPERM), stays.
        let gone = pid > 0
            && nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None)
                == Err(nix::errno::Errno::ESRCH);
        if !gone || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let socket = entry.path().join("rpc.sock");
        if std::fs::symlink_metadata(&socket).is_ok_and(|m| m.file_type().is_socket()) {
            let _ = std::fs::remove_file(&socket);
        }
        let _ = std::fs::remove_dir(entry.path());
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(d) = &self.dir {
            let _ = std::fs::remove_dir_all(d);
        }
        for &hook in &self.hooks {
            crate::harness::watchdog::remove_exit_hook(hook);
        }
    }
}

/// One connection's way of making calls.
trait Driver: Send {
    fn calls(&mut self, n: u64) -> Result<()>;
}

struct SyncDriver(SyncClient, Arc<Requests>);
struct AsyncDriver(Pipeline, Arc<Requests>, usize);
struct FutureDriver(Pipeline, Arc<Requests>, usize);

impl Driver for SyncDriver {
    fn calls(&mut self, n: u64) -> Result<()> {
        self.0.calls(&self.1, n)
    }
}

impl Driver for AsyncDriver {
    fn calls(&mut self, n: u64) -> Result<()> {
        self.0.calls_async(&self.1, n, self.2)
    }
}

impl Driver for OpenLoop {
    fn calls(&mut self, n: u64) -> Result<()> {
        OpenLoop::calls(self, n)
    }
}

impl Driver for FutureDriver {
    fn calls(&mut self, n: u64) -> Result<()> {
        self.0.calls_future(&self.1, n, self.2)
    }
}

/// The floor: each call a message (the payload's length as a u32, then the payload)
/// written and read back from a plain echo server, checked, without ids or a codec. Up
/// to `depth` are in flight: the room freed by each read is refilled in one write, and
/// each read parses every message it completed, as a pipelined client at its best would.
/// At depth 1 it is a blocking round trip per call.
struct FloorDriver {
    stream: RpcStream,
    addr: Addr,
    /// `depth` messages back to back: a write of any number of calls is a slice of it.
    messages: Vec<u8>,
    message_len: usize,
    depth: usize,
    /// Bytes read; `buffered` of them not yet parsed, a partial message at most.
    back: Vec<u8>,
    buffered: usize,
}

impl FloorDriver {
    fn new(stream: RpcStream, addr: Addr, payload: &[u8], depth: usize) -> FloorDriver {
        let mut message = (payload.len() as u32).to_le_bytes().to_vec();
        message.extend_from_slice(payload);
        FloorDriver {
            stream,
            addr,
            messages: message.repeat(depth),
            message_len: message.len(),
            depth,
            back: vec![0u8; message.len().max(FLOOR_READ)],
            buffered: 0,
        }
    }

    fn fail(&self, what: impl std::fmt::Display) -> Error {
        Error::failed(format!("echo floor on {}: {what}", self.addr))
    }

    /// Parses the whole messages buffered, checking each; returns how many there were.
    fn parse(&mut self) -> Result<usize> {
        let message = &self.messages[..self.message_len];
        let mut at = 0;
        while self.buffered - at >= self.message_len {
            if self.back[at..at + self.message_len] != *message {
                return Err(self.fail("the bytes came back changed"));
            }
            at += self.message_len;
        }
        self.back.copy_within(at..self.buffered, 0);
        self.buffered -= at;
        Ok(at / self.message_len)
    }
}

/// The floor's reads: many messages at a time, as the RPC client's reader reads.
const FLOOR_READ: usize = 64 << 10;

impl Driver for FloorDriver {
    fn calls(&mut self, n: u64) -> Result<()> {
        let (mut sent, mut done) = (0u64, 0u64);
        while done < n {
            let room = (self.depth as u64 - (sent - done)).min(n - sent) as usize;
            if room > 0 {
                let calls = &self.messages[..room * self.message_len];
                self.stream.write_all(calls).map_err(|e| self.fail(e))?;
                sent += room as u64;
            }
            let got = match self.stream.read(&mut self.back[self.buffered..]) {
                Ok(0) => return Err(self.fail("the server closed the connection")),
                Ok(got) => got,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.fail(e)),
            };
            self.buffered += got;
            done += self.parse()? as u64;
            if done > sent {
                return Err(self.fail("more bytes came back than were sent"));
            }
        }
        Ok(())
    }
}

/// Connections driven together: the calling thread drives the first, a thread each the
/// others; a run's calls are split evenly between them.
struct Fanout {
    first: Box<dyn Driver>,
    others: Vec<(Sender<u64>, std::thread::JoinHandle<()>)>,
    done: Receiver<Result<()>>,
}

impl Fanout {
    fn new(mut drivers: Vec<Box<dyn Driver>>) -> Result<Fanout> {
        let first = drivers.remove(0);
        let (done_tx, done) = unbounded();
        let mut others = Vec::new();
        for (i, mut driver) in drivers.into_iter().enumerate() {
            let (tx, rx) = unbounded::<u64>();
            let done_tx = done_tx.clone();
            let thread = std::thread::Builder::new()
                .name(format!("bb-rpc-client-{}", i + 1))
                .spawn(move || {
                    while let Ok(n) = rx.recv() {
                        if done_tx.send(driver.calls(n)).is_err() {
                            return;
                        }
                    }
                })
                .map_err(|e| Error::failed(format!("starting client thread {}: {e}", i + 1)))?;
            others.push((tx, thread));
        }
        Ok(Fanout {
            first,
            others,
            done,
        })
    }

    fn run(&mut self, n: u64) -> Result<()> {
        let parts = 1 + self.others.len() as u64;
        let mut sent = 0;
        for (i, (tx, _)) in self.others.iter().enumerate() {
            let share = n / parts + u64::from((i as u64 + 1) < n % parts);
            if share > 0 {
                tx.send(share)
                    .map_err(|_| Error::failed("a client thread died"))?;
                sent += 1;
            }
        }
        let mut result = self
            .first
            .calls(n / parts + u64::from(!n.is_multiple_of(parts)));
        for _ in 0..sent {
            let r = self
                .done
                .recv()
                .map_err(|_| Error::failed("a client thread died"))?;
            result = result.and(r);
        }
        result
    }
}

impl Drop for Fanout {
    fn drop(&mut self) {
        for (tx, thread) in self.others.drain(..) {
            drop(tx);
            let _ = thread.join();
        }
    }
}

/// What the harness measures.
pub struct RpcWorkload {
    // Declared before the server: connections close before it is stopped.
    fanout: Option<Fanout>,
    control: Option<SyncClient>,
    /// How to open the control connection again.
    config: ClientConfig,
    server: Option<LocalServer>,
    /// Connections driven, so server threads `bb-rpc-conn-1` to `-N` serve them.
    connections: usize,
    calls: u64,
    /// The server's stats when the benchmark was set up.
    baseline: Option<ServerStats>,
    /// SyncClient CPU, server stats and calls at the end of the last iteration (the stats
    /// of the one before where they could not be had).
    last: (CpuTime, Option<ServerStats>, u64),
    /// An open loop's latencies, one recorder per connection.
    recorders: Vec<Arc<Recorder>>,
    /// The latencies of the iteration that just ended, for its metrics.
    open: Option<Latencies>,
}

impl RpcWorkload {
    pub fn setup(plan: &Plan) -> Result<RpcWorkload> {
        if let Some(cpu) = plan.pin.as_ref().and_then(|p| p.first()) {
            crate::harness::pin_process(&[*cpu])?;
        }
        let floor = plan.style == Style::Floor;
        let (server, addr) = match &plan.target {
            Target::Local { transport } => {
                let cpu = plan.pin.as_ref().and_then(|p| p.last()).copied();
                let s = LocalServer::start(transport, floor, plan.client.max_frame, cpu)?;
                let a = s.addr.clone();
                (Some(s), a)
            }
            Target::Remote(a) => (None, a.clone()),
        };
        let config = ClientConfig {
            addr: addr.clone(),
            ..plan.client.clone()
        };
        let requests = Arc::new(Requests::echo(plan.payload, plan.seed));
        let mut drivers: Vec<Box<dyn Driver>> = Vec::new();
        let mut recorders = Vec::new();
        for _ in 0..plan.connections {
            if let Some(rate) = plan.rate {
                let recorder = Arc::new(Recorder::default());
                let times = recorder.clone() as Arc<dyn ReplyTimes>;
                let pipeline = config.timed_pipeline(requests.clone(), Some(times))?;
                let open = OpenLoop::new(
                    pipeline,
                    requests.clone(),
                    plan.depth,
                    rate,
                    recorder.clone(),
                );
                recorders.push(recorder);
                drivers.push(Box::new(open));
                continue;
            }
            drivers.push(match plan.style {
                Style::Sync => Box::new(SyncDriver(config.connect()?, requests.clone())),
                Style::Async => Box::new(AsyncDriver(
                    config.pipeline(requests.clone())?,
                    requests.clone(),
                    plan.depth,
                )),
                Style::Future => Box::new(FutureDriver(
                    config.pipeline(requests.clone())?,
                    requests.clone(),
                    plan.depth,
                )),
                Style::Floor => {
                    let stream = addr
                        .connect(config.timeout)
                        .and_then(|s| s.set_timeouts(Some(config.timeout)).map(|_| s))
                        .map_err(|e| {
                            Error::failed(format!("echo floor on {addr}: connecting: {e}"))
                        })?;
                    let mut payload = vec![0u8; plan.payload];
                    crate::util::rng::Rng::new(plan.seed).fill(&mut payload);
                    Box::new(FloorDriver::new(stream, addr.clone(), &payload, plan.depth))
                }
            });
        }
        let mut control = if floor { None } else { Some(config.connect()?) };
        let baseline = control.as_mut().map(|c| c.stats()).transpose()?;
        Ok(RpcWorkload {
            fanout: Some(Fanout::new(drivers)?),
            control,
            config,
            server,
            connections: plan.connections,
            calls: 0,
            baseline,
            last: (CpuTime::of_self(), baseline, 0),
            recorders,
            open: None,
        })
    }

    /// The server's stats over the control connection. That connection idles through
    /// calibration, warm-up and each iteration, and a server given --idle-timeout closes
    /// it meanwhile: then it is opened again, once (the stats are the server's, not the
    /// connection's, so the counts go on).
    fn server_stats(&mut self) -> Result<Option<ServerStats>> {
        let Some(control) = self.control.as_mut() else {
            return Ok(None);
        };
        match control.stats() {
            Ok(stats) => Ok(Some(stats)),
            Err(first) => {
                self.control = None;
                let again = self.config.connect().and_then(|mut c| {
                    let stats = c.stats()?;
                    Ok((c, stats))
                });
                let (control, stats) = again.map_err(|e| {
                    Error::failed(format!(
                        "{first}; connecting again for the server's stats: {e}"
                    ))
                })?;
                self.control = Some(control);
                Ok(Some(stats))
            }
        }
    }
}

/// An open loop's iteration beside its corrected latencies (the histogram): the
/// uncorrected ones from each write, and how late the sends were, in µs.
fn open_loop_metrics(l: &Latencies) -> Vec<Metric> {
    let uncorrected = [
        ("p0.50", 50.0),
        ("p0.90", 90.0),
        ("p0.99", 99.0),
        ("p0.999", 99.9),
        ("p0.9999", 99.99),
        ("max", 100.0),
    ];
    let lag = [("p0.50", 50.0), ("p0.99", 99.0), ("max", 100.0)];
    let metric = |prefix: &str, h: &Histogram, (name, p): (&str, f64)| Metric {
        name: format!("{prefix}-{name}"),
        unit: "us".into(),
        value: h.percentile(p).unwrap_or(f64::NAN) / 1e3,
    };
    let mut out: Vec<Metric> = uncorrected
        .into_iter()
        .map(|p| metric("uncorrected", &l.uncorrected, p))
        .collect();
    out.extend(lag.into_iter().map(|p| metric("lag", &l.lag, p)));
    out
}

fn cpu_of(s: &ServerStats) -> CpuTime {
    CpuTime {
        user: s.user_us as f64 / 1e6,
        sys: s.sys_us as f64 / 1e6,
    }
}

impl Workload for RpcWorkload {
    fn run(&mut self, ops: u64) -> Result<()> {
        self.fanout.as_mut().expect("running").run(ops)?;
        self.calls += ops;
        Ok(())
    }

    fn iteration_metrics(&mut self) -> Vec<Metric> {
        let cpu = CpuTime::of_self();
        let stats = self.server_stats().unwrap_or_else(|e| {
            crate::util::terminal::warn(&format!(
                "server-cpu is missing from an iteration: {e}"
            ));
            None
        });
        let calls = (self.calls - self.last.2).max(1) as f64;
        let mut metrics = vec![Metric {
            name: "client-cpu".into(),
            unit: "us/call".into(),
            value: (cpu - self.last.0).total() * 1e6 / calls,
        }];
        if let (Some(now), Some(before)) = (stats, self.last.1) {
            let server_calls = now.work_calls().saturating_sub(before.work_calls()).max(1) as f64;
            metrics.push(Metric {
                name: "server-cpu".into(),
                unit: "us/call".into(),
                value: (cpu_of(&now) - cpu_of(&before)).total() * 1e6 / server_calls,
            });
        }
        if let Some(open) = self.open.take() {
            metrics.extend(open_loop_metrics(&open));
        }
        // Without stats now, the next iteration's server-cpu spans both iterations.
        self.last = (cpu, stats.or(self.last.1), self.calls);
        metrics
    }

    /// An open loop's calls, each from when it was due (the uncorrected latencies and the
    /// lag are kept for the iteration's metrics).
    fn latencies(&mut self) -> Option<Histogram> {
        if self.recorders.is_empty() {
            return None;
        }
        let mut all = Latencies::default();
        for r in &self.recorders {
            all.merge(&r.take());
        }
        let corrected = all.corrected.clone();
        self.open = Some(all);
        Some(corrected)
    }

    fn peer_cpu(&mut self) -> Result<CpuTime> {
        Ok(self.server_stats()?.map(|s| cpu_of(&s)).unwrap_or_default())
    }

    /// The CPUs the spawned server's threads for the measured connections last ran on
    /// (the control connection for `stats()` connects after them and is left out);
    /// unknown for a server elsewhere.
    fn peer_placement(&mut self) -> Vec<usize> {
        let Some(pid) = self.server.as_ref().and_then(LocalServer::pid) else {
            return Vec::new();
        };
        let measured = 1..=self.connections;
        crate::system::placement::last_cpus(pid, |_, name| {
            name.strip_prefix("bb-rpc-conn-")
                .and_then(|n| n.parse().ok())
                .is_some_and(|n| measured.contains(&n))
        })
    }

    fn finish(&mut self) -> Result<()> {
        if let (Some(after), Some(before)) = (self.server_stats()?, self.baseline) {
            // A count that went backwards (a restarted server, another one behind the
            // address) must not wrap round to a huge number that passes the check.
            let answered = after
                .work_calls()
                .checked_sub(before.work_calls())
                .ok_or_else(|| {
                    Error::failed(format!(
                        "the server's call count went backwards, from {} to {}: it restarted, or another server answers at {}",
                        before.work_calls(),
                        after.work_calls(),
                        self.config.addr
                    ))
                })?;
            // A remote server may serve others too; a local one served only these calls.
            let exact = self.server.is_some();
            if answered < self.calls || (exact && answered != self.calls) {
                return Err(Error::failed(format!(
                    "the server counted {answered} calls, the clients made {}",
                    self.calls
                )));
            }
        }
        self.fanout = None;
        self.control = None;
        match self.server.take() {
            Some(s) => s.stop(),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(style: Style, depth: usize) -> Plan {
        Plan {
            target: Target::Local { transport: "unix" },
            style,
            client: ClientConfig {
                addr: Addr::Unix(PathBuf::new()),
                codec: super::super::protocol::Codec::Raw,
                max_frame: 1024,
                timeout: Duration::from_secs(5),
            },
            payload: 16,
            depth,
            connections: 2,
            seed: 1,
            pin: Some(vec![0]),
            rate: None,
        }
    }

    #[test]
    fn a_plan_is_compared_with_the_floor_at_its_own_depth() {
        for (style, depth) in [(Style::Sync, 1), (Style::Async, 64), (Style::Future, 8)] {
            let floor = plan(style, depth).floor();
            assert_eq!(floor.style, Style::Floor);
            assert_eq!(
                (floor.depth, floor.payload, floor.connections, floor.pin),
                (depth, 16, 2, Some(vec![0]))
            );
        }
    }

    /// A floor driver on one end of a socket pair whose other end answers through
    /// `serve`; the driver's result for `n` calls, and the bytes the server read.
    fn floor_against(
        depth: usize,
        n: u64,
        serve: fn(&mut [u8]),
    ) -> (Result<()>, std::thread::JoinHandle<usize>) {
        let (mine, mut theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let server = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            let mut total = 0;
            loop {
                match theirs.read(&mut buf) {
                    Ok(0) | Err(_) => return total,
                    Ok(got) => {
                        total += got;
                        serve(&mut buf[..got]);
                        if theirs.write_all(&buf[..got]).is_err() {
                            return total;
                        }
                    }
                }
            }
        });
        let stream = RpcStream::Unix(mine);
        stream.set_timeouts(Some(Duration::from_secs(5))).unwrap();
        let addr = Addr::Unix(PathBuf::from("pair"));
        let mut driver = FloorDriver::new(stream, addr, b"0123456789abcdef", depth);
        let result = driver.calls(n);
        drop(driver);
        (result, server)
    }

    #[test]
    fn the_floor_pipelines_length_prefixed_messages_and_checks_each() {
        for depth in [1, 4, 64] {
            let (result, server) = floor_against(depth, 100, |_| {});
            result.unwrap();
            assert_eq!(server.join().unwrap(), 100 * (4 + 16), "depth {depth}");
        }
        let (result, server) = floor_against(8, 100, |b| b[b.len() - 1] ^= 1);
        let e = result.unwrap_err().to_string();
        assert!(
            e.contains("echo floor on unix:pair: the bytes came back changed"),
            "{e}"
        );
        server.join().unwrap();
        let (result, server) = floor_against(8, 100, |b| b.fill(0));
        assert!(result.is_err());
        server.join().unwrap();
    }

    #[test]
    fn a_spawned_server_closes_no_connection_for_idling() {
        let args = serve_args("unix:/tmp/x/rpc.sock", true, 1024);
        let timeout = args.iter().position(|a| a == "--idle-timeout");
        assert_eq!(timeout.map(|i| args[i + 1].as_str()), Some("0"), "{args:?}");
        assert!(args.ends_with(&["--floor".to_string()]), "{args:?}");
    }
}
