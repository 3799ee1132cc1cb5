//! bb-rpc's measured operation for the harness: a local server process spawned for the
//! benchmark (or a remote one), C connections each driven by one client style, and the
//! accounting around them: the server's CPU from its `stats()`, CPU µs per call on both
//! sides, and a final check that the server answered exactly the calls that were made.

use super::addr::{Addr, RpcStream};
use super::client::{ClientConfig, Pipeline, Requests, SyncClient};
use super::protocol::ServerStats;
use crate::error::{Error, Result};
use crate::harness::benchmark::{Metric, Workload};
use crate::harness::child::{Child, SelfCommand};
use crate::system::cpu::CpuTime;
use crossbeam_channel::{unbounded, Receiver, Sender};
use nix::sys::signal::Signal;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

/// How calls are made on each connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A blocking stub: one call in flight.
    Sync,
    /// Pipelined, completed by the reader thread.
    Async,
    /// Pipelined, a handle per call that the caller waits on.
    Future,
    /// No RPC layer: bytes written and read back from a plain echo server.
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
}

/// A server process spawned for one benchmark, stopped (and its socket directory
/// removed) when the benchmark finishes or the process exits abnormally.
struct LocalServer {
    child: Option<Child>,
    pub addr: Addr,
    dir: Option<PathBuf>,
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
        let (listen, dir) = if transport == "unix" {
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let dir = std::env::temp_dir().join(format!("bb-rpc-{}-{n}", std::process::id()));
            std::fs::create_dir_all(&dir)
                .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
            (
                format!("unix:{}", dir.join("rpc.sock").display()),
                Some(dir),
            )
        } else {
            ("tcp:127.0.0.1:0".to_string(), None)
        };
        // A client killed outright (SIGKILL) must not leave its server behind: the child
        // dies with it.
        let mut command = SelfCommand::new()?;
        if let Some(cpu) = cpu {
            command.command.args(["--pin", &cpu.to_string()]);
        }
        command
            .command
            .args([
                "serve",
                "--listen",
                &listen,
                "--quiet",
                "--max-frame",
                &max_frame.to_string(),
            ])
            .args(floor.then_some("--floor"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped());
        let hook_dir = dir.clone();
        let mut child = command.spawn("starting the server", Signal::SIGKILL, move || {
            if let Some(d) = &hook_dir {
                let _ = std::fs::remove_dir_all(d);
            }
        })?;
        let stdout = child.take_stdout().expect("stdout is piped");
        let mut server = LocalServer {
            child: Some(child),
            addr: Addr::Unix(PathBuf::new()),
            dir,
        };
        let mut line = String::new();
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
        child.signal(Signal::SIGTERM);
        match child.wait_for(Duration::from_secs(10), Duration::from_millis(10)) {
            Some(status) if status.success() => Ok(()),
            Some(status) => Err(Error::failed(format!(
                "the server on {} exited with {status}",
                self.addr
            ))),
            None => {
                child.reap();
                Err(Error::failed(format!(
                    "the server on {} did not stop within 10s of SIGTERM",
                    self.addr
                )))
            }
        }
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        // Killed and reaped before its directory goes.
        drop(self.child.take());
        if let Some(d) = &self.dir {
            let _ = std::fs::remove_dir_all(d);
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

impl Driver for FutureDriver {
    fn calls(&mut self, n: u64) -> Result<()> {
        self.0.calls_future(&self.1, n, self.2)
    }
}

/// The floor: the payload written and read back whole, checked, without frames.
struct FloorDriver {
    stream: RpcStream,
    addr: Addr,
    payload: Vec<u8>,
    back: Vec<u8>,
}

impl Driver for FloorDriver {
    fn calls(&mut self, n: u64) -> Result<()> {
        let fail = |e: std::io::Error| Error::failed(format!("echo floor on {}: {e}", self.addr));
        for _ in 0..n {
            self.stream.write_all(&self.payload).map_err(fail)?;
            self.stream.read_exact(&mut self.back).map_err(fail)?;
            if self.back != self.payload {
                return Err(Error::failed(format!(
                    "echo floor on {}: the bytes came back changed",
                    self.addr
                )));
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
    server: Option<LocalServer>,
    /// Connections driven, so server threads `bb-rpc-conn-1` to `-N` serve them.
    connections: usize,
    calls: u64,
    /// The server's stats when the benchmark was set up.
    baseline: Option<ServerStats>,
    /// Client CPU, server stats and calls at the end of the last iteration.
    last: (CpuTime, Option<ServerStats>, u64),
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
        for _ in 0..plan.connections {
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
                    crate::rng::Rng::new(plan.seed).fill(&mut payload);
                    Box::new(FloorDriver {
                        stream,
                        addr: addr.clone(),
                        back: vec![0u8; plan.payload],
                        payload,
                    })
                }
            });
        }
        let mut control = if floor { None } else { Some(config.connect()?) };
        let baseline = control.as_mut().map(|c| c.stats()).transpose()?;
        Ok(RpcWorkload {
            fanout: Some(Fanout::new(drivers)?),
            control,
            server,
            connections: plan.connections,
            calls: 0,
            baseline,
            last: (CpuTime::of_self(), baseline, 0),
        })
    }

    fn server_stats(&mut self) -> Result<Option<ServerStats>> {
        self.control.as_mut().map(|c| c.stats()).transpose()
    }
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
        let stats = self.server_stats().ok().flatten();
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
        self.last = (cpu, stats, self.calls);
        metrics
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
            let answered = after.work_calls() - before.work_calls();
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
