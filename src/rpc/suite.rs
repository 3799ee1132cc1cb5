//! bb-rpc's suite: the benchmark matrix built from the checked options axis by axis (a
//! [`Row`] per combination), each row's benchmark (its plan, parameters, paired floor and
//! offered rate), the sweep's groups and the prelude that probes them, and the profiles.

use super::open_loop::{calls_per_invocation, rate_param, MAX_RATE};
use super::options::{Offered, Options};
use super::plan::{bytes_time, closed_loop_calls, in_flight, Plan, Style, Target, WINDOW};
use super::protocol::Codec;
use super::sweep::{self, Group};
use super::workload::RpcWorkload;
use super::Row;
use crate::harness::benchmark::{Benchmark, PairedBaseline, Settings, TimeUnit, Workload};
use crate::harness::{Prelude, Profiles, Suite};
use crate::model::answer::with_rows;
use crate::model::modes::Mode;
use crate::model::params;
use crate::system::pinning::Pinning;
use crate::util::error::{Error, Result};
use std::time::Duration;

/// The suite `options` ask for; with `--rate sweep`, a prelude probes each group's
/// closed-loop maximum and the rows are rebuilt with their rates.
pub(crate) fn suite(options: &Options) -> Result<Suite> {
    let (matrix, groups) = benchmarks(options, None)?;
    let mut suite = Suite::new(TimeUnit::Micros, profiles(), matrix);
    // Each benchmark pins its client and its server itself.
    suite.pin_process = false;
    suite.notes = window_notes(options);
    suite.answer = Some(with_rows(rows(options), super::answer::answer));
    if !groups.is_empty() {
        let common = &options.common;
        // The probe runs as long as an iteration of the rows it sizes.
        let time = suite.profiles.pick(common.profile).with_flags(common).time;
        let options = options.clone();
        suite.prelude = Some(Prelude {
            what: format!(
                "probing the closed-loop maximum of {} sweep group{}",
                groups.len(),
                if groups.len() == 1 { "" } else { "s" }
            ),
            estimate: sweep::probe_estimate(groups.len(), time),
            measure: Box::new(move || sweep::probe_maxima(&groups, time)),
            rebuild: Box::new(move |maxima| Ok(benchmarks(&options, Some(maxima))?.0)),
        });
    }
    Ok(suite)
}

/// A default, for a board with no noise profile of its own (`run-all.sh --calibrate`):
/// measured on the 2-core x86 VM, and said so wherever it is used. One fork's noise
/// band: between quick A/A runs of one fork each, bb-rpc's rows moved by up to x1.63 (future, depth 64); ±35% holds
/// 99% of them in quadrature (BENCHMARKS.md, "A/A").
const NOISE_BAND: f64 = 0.35;

fn profiles() -> Profiles {
    Profiles {
        quick: Settings {
            warmup_time: Duration::from_millis(200),
            time: Duration::from_millis(300),
            ..Settings::quick()
        }
        .with_band(NOISE_BAND),
        // Five forks: the fork is the unit of replication (docs/method.md).
        standard: Settings {
            warmup_iterations: 1,
            warmup_time: Duration::from_millis(200),
            iterations: 3,
            time: Duration::from_millis(200),
            forks: 5,
            ..Settings::full()
        }
        .with_band(NOISE_BAND)
        .with_precision(),
        full: Settings::full().with_band(NOISE_BAND),
    }
}

/// An open-loop invocation's length where its rate is not known yet (a sweep's plan):
/// the slice of the schedule each holds, at rates above 100 calls/s.
const OPEN_LOOP_INVOCATION: Duration = Duration::from_millis(10);

/// Every combination of the options' axes, in the order of the loops it replaces: target,
/// payload, style, codec, depth, connections, offered load (the last varies fastest).
fn rows(o: &Options) -> Vec<Row> {
    let rows = o.targets.iter().map(Row::at).collect();
    let rows = along(rows, |_| o.payloads.clone(), |r, p| r.payload = p);
    let rows = along(rows, |_| o.styles.clone(), |r, s| r.style = s);
    let rows = along(rows, |r| codecs(o, r.style), |r, c| r.codec = c);
    let rows = along(rows, |r| depths(o, r.style), |r, d| r.depth = d);
    let rows = along(rows, |_| o.connections.clone(), |r, c| r.connections = c);
    let rows = along(rows, |_| o.offered.clone(), |r, x| r.offered = x);
    along(rows, |r| placements(o, r), |r, p| r.placement = p)
}

/// The placements `row` runs in: a given server's is not ours to pin (the client follows
/// `--pin` alone); every spawned row runs in the main placement, and the headline rows
/// (sync and the floor at depth 1, one connection, closed loop, the first codec, the
/// smallest payload) in the others too.
fn placements(o: &Options, row: &Row) -> Vec<Option<Pinning>> {
    if matches!(row.target, Target::Remote(_)) {
        return vec![None];
    }
    let smallest = o.payloads.iter().min() == Some(&row.payload);
    let headline = matches!(row.style, Style::Sync | Style::Floor)
        && row.depth == 1
        && row.connections == 1
        && row.offered == Offered::Closed
        && row.codec.is_none_or(|c| o.codecs.first() == Some(&c))
        && smallest;
    let count = if headline { o.placements.len() } else { 1 };
    o.placements.iter().take(count).cloned().map(Some).collect()
}

/// Each of `rows` once for every value `values` gives it on one more axis, set by `set`.
fn along<T>(
    rows: Vec<Row>,
    values: impl Fn(&Row) -> Vec<T>,
    set: impl Fn(&mut Row, T),
) -> Vec<Row> {
    let mut out = Vec::new();
    for row in rows {
        for value in values(&row) {
            let mut next = row.clone();
            set(&mut next, value);
            out.push(next);
        }
    }
    out
}

/// The codecs `style` runs with: none for the floor.
fn codecs(o: &Options, style: Style) -> Vec<Option<Codec>> {
    match style {
        Style::Floor => vec![None],
        _ => o.codecs.iter().map(|&c| Some(c)).collect(),
    }
}

/// The depths `style` runs at: sync one call in flight.
fn depths(o: &Options, style: Style) -> Vec<usize> {
    match style {
        Style::Floor => o.floor_depths.clone(),
        s if s.pipelined() => o.depths.clone(),
        _ => vec![1],
    }
}

/// Operations per invocation where the workload fixes them: timed pipelines (and many
/// connections) drain at each invocation's end, so it is long enough that this is noise
/// ([`closed_loop_calls`]: 64 rounds of the calls in flight, at most 64 MiB of
/// requests).
fn ops_per_invocation(o: &Options, style: Style, row: &Row) -> Option<u64> {
    let depth = in_flight(row.depth, row.payload);
    (o.timed && (style.pipelined() || depth > 1 || row.connections > 1))
        .then(|| closed_loop_calls(depth, row.payload, row.connections))
}

/// The notes of the suite: each `--depth` and `--payload` whose calls would pass the
/// flow-control window, with the calls it keeps in flight.
fn window_notes(o: &Options) -> Vec<String> {
    let deep = o.styles.iter().any(|s| s.pipelined() || *s == Style::Floor);
    let mut notes = Vec::new();
    for &payload in o.payloads.iter().filter(|_| deep) {
        for &depth in &o.depths {
            let calls = in_flight(depth, payload);
            if calls < depth {
                notes.push(format!(
                    "--depth {depth} with --payload {payload}: {calls} call{} in flight per connection, the {} MiB flow-control window's worth (docs/bb-rpc.md)",
                    if calls == 1 { "" } else { "s" },
                    WINDOW >> 20
                ));
            }
        }
    }
    notes
}

/// The sweep groups among `rows`, in the order the rows first name them, and each row's
/// group (None for a row outside the sweep).
fn groups(o: &Options, rows: &[Row]) -> (Vec<Group>, Vec<Option<usize>>) {
    let mut groups: Vec<Group> = Vec::new();
    let of_row = rows
        .iter()
        .map(|row| {
            if !matches!(row.offered, Offered::Share(_)) {
                return None;
            }
            let label = params::label("bb.rpc.open", &row.params());
            Some(match groups.iter().position(|g| g.label == label) {
                Some(i) => i,
                None => {
                    groups.push(Group {
                        label,
                        plan: row.plan(o),
                    });
                    groups.len() - 1
                }
            })
        })
        .collect();
    (groups, of_row)
}

/// The rows of `o`, and the groups of its sweep rows; without `maxima` (one per group),
/// a sweep row's rate shows as its share (`rate=50% of max`).
fn benchmarks(o: &Options, maxima: Option<&[f64]>) -> Result<(Vec<Benchmark>, Vec<Group>)> {
    let rows = rows(o);
    let (groups, of_row) = groups(o, &rows);
    if let Some(maxima) = maxima.filter(|m| m.len() != groups.len()) {
        return Err(Error::failed(format!(
            "{} closed-loop maxima for {} sweep groups",
            maxima.len(),
            groups.len()
        )));
    }
    let benchmarks = rows
        .iter()
        .zip(of_row)
        .map(|(row, group)| {
            // A share's rate per connection, once its group's maximum is known.
            let rate = match (row.offered, group, maxima) {
                (Offered::Rate(rate), _, _) => Some(rate),
                (Offered::Share(share), Some(g), Some(all)) => Some(
                    (share * all[g] / row.connections as f64)
                        .round()
                        .clamp(1.0, MAX_RATE),
                ),
                _ => None,
            };
            row_benchmark(o, row, rate)
        })
        .collect();
    Ok((benchmarks, groups))
}

/// Whether the answer quotes `row`: a closed loop of one connection at the smallest
/// payload, sync or the floor, or pipelined at the deepest depth.
fn headline(o: &Options, row: &Row) -> bool {
    let deepest = o.depths.iter().max() == Some(&row.depth);
    o.payloads.iter().min() == Some(&row.payload)
        && row.connections == 1
        && row.offered == Offered::Closed
        && match row.style {
            Style::Sync | Style::Floor => row.depth == 1,
            _ => deepest,
        }
}

/// The benchmark of `row`, offering `rate` calls per second per connection where known.
fn row_benchmark(o: &Options, row: &Row, rate: Option<f64>) -> Benchmark {
    let plan = row.plan(o);
    let paired = paired_floor(o, row, &plan);
    let plan = Plan { rate, ..plan };
    let mut b = Benchmark::new(
        row.name(),
        Box::new(move || Ok(Box::new(RpcWorkload::setup(&plan)?) as Box<dyn Workload>)),
    );
    b.params = row.params();
    b.headline = headline(o, row);
    b.threads = row.connections;
    b.ops_per_invocation = ops_per_invocation(o, row.style, row);
    // Large calls take their bytes' time: the plan counts an invocation's.
    b.invocation_estimate = b
        .ops_per_invocation
        .map(|calls| bytes_time(calls, row.payload));
    b.paired = paired;
    match row.offered {
        Offered::Closed => b,
        _ => open_loop(b, row, rate),
    }
}

/// With the floor asked for, every RPC row also measures it in interleaved iterations,
/// on a floor server of its own with the same transport, payload, depth, connections and
/// pinning.
fn paired_floor(o: &Options, row: &Row, plan: &Plan) -> Option<PairedBaseline> {
    if !o.styles.contains(&Style::Floor) || row.style == Style::Floor {
        return None;
    }
    let floor = plan.floor();
    Some(PairedBaseline {
        metric: "vs floor".into(),
        setup: Box::new(move || Ok(Box::new(RpcWorkload::setup(&floor)?) as Box<dyn Workload>)),
        ops_per_invocation: ops_per_invocation(o, Style::Floor, row),
    })
}

/// An open-loop row: sample mode, the achieved rate beside the latencies, and its offered
/// rate (a sweep's share of the maximum before the probe).
fn open_loop(mut b: Benchmark, row: &Row, rate: Option<f64>) -> Benchmark {
    b.mode = Some(Mode::Sample);
    // The achieved rate, over all connections, beside the latencies.
    b.rate = Some("calls".into());
    let connections = row.connections as u64;
    match (rate, row.offered) {
        (Some(rate), _) => {
            let per_connection = calls_per_invocation(rate);
            b = b.param("rate", rate_param(rate));
            b.ops_per_invocation = Some(per_connection * connections);
            b.offered_rate = Some(rate * connections as f64);
            b.invocation_estimate = Some(Duration::from_secs_f64(per_connection as f64 / rate));
        }
        // Before the probe: the plan shows the share.
        (None, Offered::Share(share)) => {
            b = b.param("rate", format!("{} of max", sweep::load_param(share)));
            b.invocation_estimate = Some(OPEN_LOOP_INVOCATION);
        }
        (None, _) => {}
    }
    if let Offered::Share(share) = row.offered {
        b = b.param("load", sweep::load_param(share));
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::aggregate::answer_over;
    use crate::harness::cli;
    use crate::harness::runner::ForkResult;
    use crate::stats::histogram::Histogram;
    use crate::system::cpu::CpuUsage;

    /// The options of a command line's flags, `--depth 8 --quick`, on a machine of two
    /// CPUs (its default placements) whatever this one has.
    fn options(line: &str) -> Options {
        let argv: Vec<&str> = line.split_whitespace().collect();
        let mut o = Options::from_args(&cli::parse_from(&argv).unwrap()).unwrap();
        if !o.common.unpinned && o.common.pin.is_none() {
            o.placements = vec![Pinning::TwoCores(0, 1), Pinning::OneCore(0)];
        }
        o
    }

    fn labels(benchmarks: &[Benchmark]) -> Vec<String> {
        benchmarks.iter().map(Benchmark::label).collect()
    }

    #[test]
    fn the_default_matrix_runs_every_style_codec_depth_payload_and_transport() {
        let (b, groups) = benchmarks(&options(""), None).unwrap();
        // 2 transports × 2 payloads × (sync × 2 codecs + (async, future) × 2 codecs × 2 depths),
        // across two cores; and on one core, each transport's sync row at 16 B in raw.
        assert_eq!(b.len(), 42);
        assert!(groups.is_empty());
        assert_eq!(
            labels(&b[..4]),
            [
                "bb.rpc.sync (transport=unix, codec=raw, payload=16, depth=1, connections=1, placement=two-cores)",
                "bb.rpc.sync (transport=unix, codec=raw, payload=16, depth=1, connections=1, placement=one-core)",
                "bb.rpc.sync (transport=unix, codec=msgpack, payload=16, depth=1, connections=1, placement=two-cores)",
                "bb.rpc.async (transport=unix, codec=raw, payload=16, depth=1, connections=1, placement=two-cores)",
            ]
        );
        assert_eq!(
            b[41].label(),
            "bb.rpc.future (transport=tcp, codec=msgpack, payload=1024, depth=64, connections=1, placement=two-cores)"
        );
        // Sync at depth 1 with one connection is timed call by call; pipelines in batches.
        assert_eq!(b[0].ops_per_invocation, None);
        assert_eq!(b[3].ops_per_invocation, Some(64));
        assert_eq!(b[4].ops_per_invocation, Some(64 * 64));
        // Unpinned, as asked: one placement, named.
        let (b, _) = benchmarks(&options("--pin none"), None).unwrap();
        assert_eq!(b.len(), 40);
        assert!(
            b[0].label().ends_with("placement=none)"),
            "{}",
            b[0].label()
        );
        assert!(b.iter().all(|b| b.paired.is_none() && b.mode.is_none()));
        let suite = suite(&options("")).unwrap();
        assert!(!suite.pin_process && suite.prelude.is_none());
    }

    #[test]
    fn with_the_floor_each_rpc_row_is_paired_with_it_at_its_own_depth() {
        let o = options(
            "--client sync,async,floor --depth 8 --transport unix --codec raw --payload 16 --connections 1,2",
        );
        let (b, _) = benchmarks(&o, None).unwrap();
        let shown: Vec<String> = b
            .iter()
            .map(|b| format!("{} {}", b.name, params::params_text(&b.params[1..])))
            .collect();
        assert_eq!(
            shown,
            [
                "bb.rpc.sync codec=raw, payload=16, depth=1, connections=1, placement=two-cores",
                "bb.rpc.sync codec=raw, payload=16, depth=1, connections=1, placement=one-core",
                "bb.rpc.sync codec=raw, payload=16, depth=1, connections=2, placement=two-cores",
                "bb.rpc.async codec=raw, payload=16, depth=8, connections=1, placement=two-cores",
                "bb.rpc.async codec=raw, payload=16, depth=8, connections=2, placement=two-cores",
                "bb.rpc.floor codec=none, payload=16, depth=1, connections=1, placement=two-cores",
                "bb.rpc.floor codec=none, payload=16, depth=1, connections=1, placement=one-core",
                "bb.rpc.floor codec=none, payload=16, depth=1, connections=2, placement=two-cores",
                "bb.rpc.floor codec=none, payload=16, depth=8, connections=1, placement=two-cores",
                "bb.rpc.floor codec=none, payload=16, depth=8, connections=2, placement=two-cores",
            ]
        );
        let paired: Vec<Option<u64>> = b
            .iter()
            .map(|b| b.paired.as_ref().map(|p| p.ops_per_invocation.unwrap_or(0)))
            .collect();
        assert_eq!(
            paired,
            [
                Some(0),
                Some(0),
                Some(128),
                Some(512),
                Some(1024),
                None,
                None,
                None,
                None,
                None
            ]
        );
        assert_eq!(b[4].threads, 2);
    }

    #[test]
    fn deep_pipelines_of_large_calls_keep_a_window_of_them_in_flight() {
        let o = options(
            "--client async,floor --depth 8,4096 --payload 1m --transport unix --codec raw --quick",
        );
        let rows = rows(&o);
        let deep = |style| {
            rows.iter()
                .find(|r| r.style == style && r.depth == 4096)
                .expect("a row at depth 4096")
        };
        // The row keeps the depth asked; its process keeps the window's calls in flight,
        // and so does its floor.
        assert_eq!(deep(Style::Async).plan(&o).depth, 15);
        assert_eq!(deep(Style::Async).plan(&o).floor().depth, 15);
        assert_eq!(deep(Style::Floor).plan(&o).depth, 15);
        let (b, _) = benchmarks(&o, None).unwrap();
        let row = b
            .iter()
            .find(|b| b.name == "bb.rpc.async" && b.label().contains("depth=4096"))
            .unwrap();
        // 63 calls of 1 MiB an invocation (64 MiB), not 64 × 4096 (256 GiB), and the
        // plan counts their bytes.
        assert_eq!(row.ops_per_invocation, Some(63));
        assert_eq!(row.paired.as_ref().unwrap().ops_per_invocation, Some(63));
        let took = row.invocation_estimate.unwrap();
        assert!(
            took > Duration::from_millis(60) && took < Duration::from_millis(70),
            "{took:?}"
        );
        // Depth 8 of 1 MiB fits the window: 64 rounds would be 512 MiB, so 63 calls too.
        let shallow = b.iter().find(|b| b.label().contains("depth=8")).unwrap();
        assert_eq!(shallow.ops_per_invocation, Some(63));
        assert_eq!(
            suite(&o).unwrap().notes,
            ["--depth 4096 with --payload 1048576: 15 calls in flight per connection, the 16 MiB flow-control window's worth (docs/bb-rpc.md)"]
        );
        // Small calls: nothing changes, and their bytes take no time worth counting.
        let (b, _) = benchmarks(&options("--client async --depth 4096 --quick"), None).unwrap();
        assert_eq!(b[0].ops_per_invocation, Some(64 * 4096));
        assert!(b[0].invocation_estimate.unwrap() < Duration::from_millis(5));
        assert!(suite(&options("--depth 4096 --quick"))
            .unwrap()
            .notes
            .is_empty());
    }

    #[test]
    fn fixed_rates_run_the_open_loop_in_sample_mode() {
        let o = options("--rate 1k,2.5k --transport tcp --codec raw --quick --connections 2");
        let (b, groups) = benchmarks(&o, None).unwrap();
        assert!(groups.is_empty());
        assert_eq!(
            labels(&b),
            [
                "bb.rpc.open (transport=tcp, codec=raw, payload=16, depth=64, connections=2, placement=two-cores, rate=1000)",
                "bb.rpc.open (transport=tcp, codec=raw, payload=16, depth=64, connections=2, placement=two-cores, rate=2500)",
            ]
        );
        assert_eq!(b[0].mode, Some(Mode::Sample));
        assert_eq!(b[0].rate.as_deref(), Some("calls"));
        assert_eq!(b[0].offered_rate, Some(2000.0));
        assert_eq!(
            b[0].ops_per_invocation,
            Some(2 * calls_per_invocation(1000.0))
        );
    }

    #[test]
    fn a_sweep_shows_its_shares_until_the_maxima_give_its_rates() {
        let o = options("--rate sweep --transport unix --codec raw --quick --connections 1,2");
        let (before, groups) = benchmarks(&o, None).unwrap();
        assert_eq!(before.len(), 2 * sweep::LOADS.len());
        assert_eq!(
            groups.iter().map(|g| g.label.as_str()).collect::<Vec<_>>(),
            [
                "bb.rpc.open (transport=unix, codec=raw, payload=16, depth=64, connections=1, placement=two-cores)",
                "bb.rpc.open (transport=unix, codec=raw, payload=16, depth=64, connections=2, placement=two-cores)",
            ]
        );
        assert_eq!(
            before[2].label(),
            "bb.rpc.open (transport=unix, codec=raw, payload=16, depth=64, connections=1, placement=two-cores, rate=50% of max, load=50%)"
        );
        assert_eq!(before[2].invocation_estimate, Some(OPEN_LOOP_INVOCATION));
        let (after, _) = benchmarks(&o, Some(&[1000.0, 3000.0])).unwrap();
        assert_eq!(after.len(), before.len());
        let rate = |b: &Benchmark| params::param_value(&b.params, "rate").unwrap().to_string();
        // 50% of 1000 on one connection; 50% of 3000 over two.
        assert_eq!(
            (rate(&after[2]), rate(&after[8])),
            ("500".into(), "750".into())
        );
        assert_eq!(after[8].offered_rate, Some(1500.0));
        assert_eq!(params::param_value(&after[8].params, "load"), Some("50%"));
        assert!(benchmarks(&o, Some(&[1000.0])).is_err());
        let suite = suite(&o).unwrap();
        let prelude = suite.prelude.expect("a sweep probes first");
        assert_eq!(
            prelude.what,
            "probing the closed-loop maximum of 2 sweep groups"
        );
        assert_eq!(
            labels(&(prelude.rebuild)(&[1000.0, 3000.0]).unwrap()),
            labels(&after)
        );
    }

    /// A recorded run's figures: three forks of three iterations a row, in calls per
    /// second by style, depth, transport, codec and placement, each call against its
    /// floor; an open loop holding up to 30k calls/s, its latencies 20 to 80 us.
    fn recorded(b: &Benchmark) -> Vec<ForkResult> {
        let label = b.label();
        let has = |p: &str| label.contains(p);
        let deep = has("depth=64");
        let mut calls = match b.name.as_str() {
            "bb.rpc.sync" => 100e3,
            "bb.rpc.async" if deep => 1.17e6,
            "bb.rpc.async" => 90e3,
            "bb.rpc.future" if deep => 0.87e6,
            "bb.rpc.future" => 85e3,
            "bb.rpc.floor" if deep => 1.3e6,
            "bb.rpc.floor" => 150e3,
            _ => 0.0,
        };
        let floor = if deep { 1.3e6 } else { 150e3 };
        for (p, times) in [
            ("transport=tcp", 0.88),
            ("codec=msgpack", 0.92),
            ("placement=one-core", 3.4),
        ] {
            if has(p) {
                calls *= times;
            }
        }
        let offered = b.offered_rate.unwrap_or(0.0);
        let held = offered.min(30e3);
        let mut latencies = Histogram::new();
        for us in 20..=80 {
            latencies.record(us * 1000);
        }
        [1.0, 1.01, 0.99]
            .iter()
            .map(|f| match b.offered_rate {
                Some(_) => ForkResult {
                    scores: vec![50.0 * f; 3],
                    histogram: Some(latencies.clone()),
                    cpu: CpuUsage {
                        wall: 1.0,
                        ..Default::default()
                    },
                    ops: held as u64,
                    ..Default::default()
                },
                None => ForkResult {
                    scores: vec![calls * f, calls * f * 1.005, calls * f * 0.995],
                    metrics: match b.paired {
                        Some(_) => {
                            vec![("vs floor".into(), "x".into(), vec![calls * f / floor; 3])]
                        }
                        None => vec![],
                    },
                    ops: 1000,
                    ..Default::default()
                },
            })
            .collect()
    }

    /// The answer the suite of a command line's flags gives over the recorded figures
    /// of its rows (a sweep's at these maxima), but those `failed`.
    fn answered(line: &str, maxima: &[f64], failed: &[usize]) -> Vec<String> {
        let mut s = suite(&options(line)).unwrap();
        if let Some(prelude) = s.prelude.take() {
            s.benchmarks = (prelude.rebuild)(maxima).unwrap();
        }
        answer_over(&s, failed, recorded)
    }

    #[test]
    fn the_answer_over_recorded_results() {
        let all = "--transport unix,tcp --client sync,async,future,floor --codec raw,msgpack --depth 1,64 --payload 16";
        assert_eq!(
            answered(all, &[], &[]),
            [
                "unix, 16 B, raw on 2 cores: sync 100k calls/s ±3.5%, 0.667x its floor",
                "  on 1 core: sync 340k calls/s ±3.5%, 3.40x on 2 cores",
                "  async (64 in flight) 1.17M/s = 11.7x sync",
                "  future at the same depth 870k/s = 0.744x async",
                "  msgpack costs 9% per call over raw (sync)",
                "tcp: sync 88.0k calls/s, 0.880x unix's; async 0.880x",
            ]
        );
        // Without sync on a Unix socket there is nothing to say of the closed loop.
        assert!(answered(all, &[], &[0]).is_empty());
        // Without sync on one core or in msgpack, no line of either.
        assert_eq!(
            answered(all, &[], &[1, 2]),
            [
                "unix, 16 B, raw on 2 cores: sync 100k calls/s ±3.5%, 0.667x its floor",
                "  async (64 in flight) 1.17M/s = 11.7x sync",
                "  future at the same depth 870k/s = 0.744x async",
                "tcp: sync 88.0k calls/s, 0.880x unix's; async 0.880x",
            ]
        );
        let sweep = "--rate sweep --transport unix --codec raw --payload 16";
        assert_eq!(
            answered(sweep, &[40e3], &[]),
            ["open loop: held 30.0k calls/s (75% of max), p99 80.0 us there"]
        );
        // The loads up to 75% failed.
        assert_eq!(
            answered(sweep, &[40e3], &[0, 1, 2, 3]),
            ["open loop: no load held, down to 36.0k calls/s offered"]
        );
    }
}
