//! bb-rpc's measured operation for the harness: a local server process spawned for the
//! benchmark (or a remote one), C connections each driven by one client style, and the
//! accounting around them: the server's CPU from its `stats()`, CPU µs per call on both
//! sides, and a final check that the server answered exactly the calls that were made.

use super::client::SyncClient;
use super::config::ClientConfig;
use super::drivers;
use super::fan_out::Fanout;
use super::open_loop::{Latencies, Recorder};
use super::plan::{Plan, Style, Target};
use super::protocol::ServerStats;
use super::requests::Requests;
use super::spawned::LocalServer;
use crate::harness::benchmark::{Metric, Workload};
use crate::stats::histogram::Histogram;
use crate::system::cpu::CpuTime;
use crate::util::error::{Error, Result};
use std::sync::Arc;

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
        let mut drivers = Vec::new();
        let mut recorders = Vec::new();
        for _ in 0..plan.connections {
            let (driver, recorder) = drivers::connect(plan, &config, &requests)?;
            drivers.push(driver);
            recorders.extend(recorder);
        }
        let mut control = if floor {
            None
        } else {
            Some(SyncClient::connect(&config)?)
        };
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
                let again = SyncClient::connect(&self.config).and_then(|mut c| {
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
            crate::util::terminal::warn(&format!("server-cpu is missing from an iteration: {e}"));
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
