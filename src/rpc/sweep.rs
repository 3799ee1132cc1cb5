//! `--rate sweep`: the open loop at fixed shares of what the same client reaches in a
//! closed loop. The maximum of each group of rows (one transport, payload, codec, depth
//! and connection count) is probed once, in the parent before any fork, by a short closed
//! loop of the pipelined client the open loop drives (the harness's prelude); the forks
//! get the maxima from the parent in their fork request, so every fork of a row offers
//! the same rate.

use super::plan::{closed_loop_calls, Plan, Style};
use super::workload::RpcWorkload;
use crate::harness::benchmark::Workload;
use crate::util::error::{Error, Result};
use std::time::{Duration, Instant};

/// The shares of the closed-loop maximum a sweep offers, one row each.
pub const LOADS: [f64; 6] = [0.10, 0.25, 0.50, 0.75, 0.90, 1.00];

/// A share of the maximum as the `load` parameter shows it: `10%`.
pub fn load_param(load: f64) -> String {
    format!("{}%", (load * 100.0).round())
}

/// The probe's warm-up, a share of its measured time: the connections are open and the
/// server's threads running before the calls are counted.
const WARMUP_SHARE: u32 = 4;
/// Starting a spawned server and connecting, per probe: as the harness's own fork start.
const PROBE_START: Duration = Duration::from_millis(40);

/// How long probing `groups` groups for `time` each should take.
pub fn probe_estimate(groups: usize, time: Duration) -> Duration {
    (time + time / WARMUP_SHARE + PROBE_START) * groups as u32
}

/// The rows of a sweep that share one closed-loop maximum, and how to probe it.
pub(crate) struct Group {
    /// The open loop's label without its rate and load: `bb.rpc.open (transport=unix, ...)`.
    pub label: String,
    pub plan: Plan,
}

/// Each group's closed-loop maximum, calls per second over its connections, each printed
/// on stderr as it is found; every probe runs for `time`.
pub(crate) fn probe_maxima(groups: &[Group], time: Duration) -> Result<Vec<f64>> {
    let mut maxima = Vec::new();
    for g in groups {
        let max = closed_loop_max(&g.plan, time)?;
        crate::stderr!(
            "bb-rpc: closed-loop maximum {max:.0} calls/s for {}; the sweep offers {} to {} of it",
            g.label,
            load_param(LOADS[0]),
            load_param(LOADS[LOADS.len() - 1]),
        );
        maxima.push(max);
    }
    Ok(maxima)
}

/// The probe's measured time is split in this many windows, and its rate is their median:
/// a burst of other work on a shared machine slows one window, not the maximum.
const WINDOWS: u32 = 3;

/// Calls per second over all of `plan`'s connections that the pipelined client reaches
/// in a closed loop (each connection as many calls in flight as `plan.depth`): the median
/// of [`WINDOWS`] windows over `time`, after a warm-up of a quarter of it; the server's
/// count of the calls is checked as in any benchmark. It runs on a thread of its own, so
/// that `--pin` pins that thread, not the parent that starts the forks after it.
fn closed_loop_max(plan: &Plan, time: Duration) -> Result<f64> {
    std::thread::scope(|s| {
        s.spawn(|| probe(plan, time))
            .join()
            .unwrap_or_else(|_| Err(Error::failed("the closed-loop probe panicked")))
    })
}

fn probe(plan: &Plan, time: Duration) -> Result<f64> {
    let plan = Plan {
        style: Style::Async,
        rate: None,
        ..plan.clone()
    };
    let mut workload = RpcWorkload::setup(&plan)?;
    // As the closed-loop rows' invocations: long enough that draining the pipeline at
    // each end is noise.
    let batch = closed_loop_calls(plan.depth, plan.payload as u64, plan.connections);
    calls_for(&mut workload, batch, time / WARMUP_SHARE)?;
    let mut rates = Vec::new();
    for _ in 0..WINDOWS {
        let (calls, elapsed) = calls_for(&mut workload, batch, time / WINDOWS)?;
        rates.push(calls as f64 / elapsed.as_secs_f64());
    }
    workload.finish()?;
    rates.sort_by(f64::total_cmp);
    Ok(rates[rates.len() / 2])
}

/// Runs `batch` calls at a time until `time` has passed: the calls made and the time taken.
fn calls_for(workload: &mut RpcWorkload, batch: u64, time: Duration) -> Result<(u64, Duration)> {
    let start = Instant::now();
    let mut calls = 0;
    loop {
        workload.run(batch)?;
        calls += batch;
        if start.elapsed() >= time {
            return Ok((calls, start.elapsed()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_show_as_percentages_and_the_estimate_counts_every_probe() {
        let shown: Vec<String> = LOADS.iter().map(|&l| load_param(l)).collect();
        assert_eq!(shown, ["10%", "25%", "50%", "75%", "90%", "100%"]);
        assert_eq!(
            probe_estimate(2, Duration::from_millis(400)),
            Duration::from_millis(2 * (400 + 100 + 40))
        );
    }
}
