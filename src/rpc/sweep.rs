//! `--rate sweep`: the open loop at fixed shares of what the same client reaches in a
//! closed loop. The maximum of each group of rows (one transport, payload, codec, depth
//! and connection count) is probed once, in the parent before any fork, by a short closed
//! loop of the pipelined client the open loop drives; the forks get the maxima from the
//! parent through the environment, so every fork of a row offers the same rate.

use super::workload::{Plan, RpcWorkload, Style};
use crate::util::error::{Error, Result};
use crate::harness::benchmark::Workload;
use std::time::{Duration, Instant};

/// The shares of the closed-loop maximum a sweep offers, one row each.
pub const LOADS: [f64; 6] = [0.10, 0.25, 0.50, 0.75, 0.90, 1.00];

/// Where a parent leaves the probed maxima for its forks: calls per second, over all
/// connections, one per group in the order the rows name them, comma-separated.
const MAXIMA_ENV: &str = "BB_RPC_SWEEP_MAXIMA";

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

/// The probe's measured time is split in this many windows, and its rate is their median:
/// a burst of other work on a shared machine slows one window, not the maximum.
const WINDOWS: u32 = 3;

/// Calls per second over all of `plan`'s connections that the pipelined client reaches
/// in a closed loop (each connection as many calls in flight as `plan.depth`): the median
/// of [`WINDOWS`] windows over `time`, after a warm-up of a quarter of it; the server's
/// count of the calls is checked as in any benchmark. It runs on a thread of its own, so
/// that `--pin` pins that thread, not the parent that starts the forks after it.
pub fn closed_loop_max(plan: &Plan, time: Duration) -> Result<f64> {
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
    let batch = (64 * plan.depth * plan.connections) as u64;
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

/// Leaves `maxima` in the environment for the forks this process starts next.
pub fn pass_to_forks(maxima: &[f64]) {
    let text: Vec<String> = maxima.iter().map(|m| m.to_string()).collect();
    // Set once, in the parent, between the probes and the first fork: no other thread
    // reads the environment then.
    std::env::set_var(MAXIMA_ENV, text.join(","));
}

/// In a fork: the maxima its parent probed, one per group (`groups` of them).
pub fn from_parent(groups: usize) -> Result<Vec<f64>> {
    let text = std::env::var(MAXIMA_ENV).map_err(|_| {
        Error::failed(format!(
            "{MAXIMA_ENV} is not set: a sweep's fork needs its parent's closed-loop maxima"
        ))
    })?;
    parse_maxima(&text, groups)
}

fn parse_maxima(text: &str, groups: usize) -> Result<Vec<f64>> {
    let maxima: Vec<f64> = text
        .split(',')
        .map(|m| m.parse::<f64>())
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| Error::failed(format!("{MAXIMA_ENV}: not a list of numbers: '{text}'")))?;
    if maxima.len() != groups || maxima.iter().any(|m| !(m.is_finite() && *m > 0.0)) {
        return Err(Error::failed(format!(
            "{MAXIMA_ENV}: expected {groups} positive rates, found '{text}'"
        )));
    }
    Ok(maxima)
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

    #[test]
    fn forks_read_back_exactly_the_maxima_their_parent_probed() {
        let maxima = [123456.789, 0.5];
        let text: Vec<String> = maxima.iter().map(|m| m.to_string()).collect();
        assert_eq!(parse_maxima(&text.join(","), 2).unwrap(), maxima);
        for bad in ["", "1,x", "1,0", "1,NaN", "1"] {
            assert!(parse_maxima(bad, 2).is_err(), "{bad}");
        }
    }
}
